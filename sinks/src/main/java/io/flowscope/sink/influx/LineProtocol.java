package io.flowscope.sink.influx;

/**
 * Writes one InfluxDB line-protocol point into a caller-owned {@link StringBuilder}:
 * {@code measurement[,tag=value...] field=value[,field=value...] timestampNs}. Escaping follows the InfluxDB
 * 1.x rules: measurement commas and spaces; tag keys, tag values and field keys commas, equals signs and
 * spaces; string field values double quotes and backslashes. Integers get the {@code i} suffix. Call
 * {@link #measurement}, then tags (sorted by key for the server's sake), then fields, then {@link #end}.
 * <p>
 * Tag and field <b>keys</b> are written as given: they must be identifiers ({@code [A-Za-z0-9_]+}, checked by an
 * assertion), which every key of {@link InfluxSchema} is; pass any other name through {@link #escapeKey} first.
 * Tag values are escaped by {@link #tag}, or written as given by {@link #tagEscaped} (numbers, names escaped
 * once with {@link #escapeTagValue}): scanning every key and value of every point was the largest cost of
 * encoding on the caller's thread.
 */
public final class LineProtocol {
    private final StringBuilder out;
    private int seriesEnd = -1;
    private boolean firstField = true;
    private int start;

    public LineProtocol(final StringBuilder out) {
        this.out = out;
    }

    public LineProtocol measurement(final String name) {
        start = out.length();
        seriesEnd = -1;
        firstField = true;
        escape(name, false, true);
        return this;
    }

    /** A tag whose value is escaped here; a null or empty value leaves the tag out. */
    public LineProtocol tag(final String key, final String value) {
        if (value == null || value.isEmpty()) {
            return this;
        }
        assert identifier(key) : key;
        out.append(',').append(key).append('=');
        escape(value, true, true);
        return this;
    }

    /** A tag whose value needs no escaping or was escaped by {@link #escapeTagValue}; null or empty: left out. */
    public LineProtocol tagEscaped(final String key, final String value) {
        if (value == null || value.isEmpty()) {
            return this;
        }
        assert identifier(key) : key;
        out.append(',').append(key).append('=').append(value);
        return this;
    }

    /** {@code name} escaped for use as a tag or field key. */
    public static String escapeKey(final String name) {
        return escapeTagValue(name);
    }

    /** {@code value} with commas, spaces and equals signs escaped (newlines become spaces). */
    public static String escapeTagValue(final String value) {
        final StringBuilder sb = new StringBuilder(value.length() + 8);
        new LineProtocol(sb).escape(value, true, true);
        return sb.toString();
    }

    /** Every comma, space and equals sign of {@code key} is escaped (as {@link #escapeKey} leaves it). */
    private static boolean escaped(final String key) {
        for (int i = 0; i < key.length(); i++) {
            final char c = key.charAt(i);
            if ((c == ',' || c == ' ' || c == '=') && (i == 0 || key.charAt(i - 1) != '\\')) {
                return false;
            }
        }
        return !key.isEmpty();
    }

    private static boolean identifier(final String key) {
        if (key.isEmpty()) {
            return false;
        }
        for (int i = 0; i < key.length(); i++) {
            final char c = key.charAt(i);
            if (!(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_')) {
                return false;
            }
        }
        return true;
    }

    public LineProtocol field(final String key, final long value) {
        fieldKey(key);
        out.append(value).append('i');
        return this;
    }

    /** NaN and infinities cannot be written: the field is left out. */
    public LineProtocol field(final String key, final double value) {
        if (Double.isNaN(value) || Double.isInfinite(value)) {
            return this;
        }
        fieldKey(key);
        out.append(value);
        return this;
    }

    public LineProtocol field(final String key, final boolean value) {
        fieldKey(key);
        out.append(value ? 't' : 'f');
        return this;
    }

    public LineProtocol field(final String key, final String value) {
        fieldKey(key);
        out.append('"');
        for (int i = 0; i < value.length(); i++) {
            final char c = value.charAt(i);
            if (c == '"' || c == '\\') {
                out.append('\\');
            }
            out.append(c == '\n' ? ' ' : c);
        }
        out.append('"');
        return this;
    }

    /** Ends the point with its timestamp (ns); a point without fields is invalid and throws. */
    public LineProtocol end(final long timestampNs) {
        if (firstField) {
            throw new IllegalStateException("a point needs at least one field: " + out.substring(start));
        }
        out.append(' ').append(timestampNs);
        return this;
    }

    /** The measurement and tags of the point being written (its series key), valid once a field was added. */
    public String seriesKey() {
        return out.substring(start, seriesEnd);
    }

    private void fieldKey(final String key) {
        if (firstField) {
            seriesEnd = out.length();
            out.append(' ');
            firstField = false;
        } else {
            out.append(',');
        }
        assert identifier(key) || escaped(key) : key;
        out.append(key).append('=');
    }

    private void escape(final String s, final boolean equalsSign, final boolean commaAndSpace) {
        for (int i = 0; i < s.length(); i++) {
            final char c = s.charAt(i);
            if ((commaAndSpace && (c == ',' || c == ' ')) || (equalsSign && c == '=')) {
                out.append('\\');
            }
            out.append(c == '\n' ? ' ' : c);
        }
    }
}
