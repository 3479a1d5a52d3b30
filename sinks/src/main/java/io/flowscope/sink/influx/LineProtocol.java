package io.flowscope.sink.influx;

/**
 * Writes one InfluxDB line-protocol point into a caller-owned {@link StringBuilder}:
 * {@code measurement[,tag=value...] field=value[,field=value...] timestampNs}. Escaping follows the InfluxDB
 * 1.x rules: measurement commas and spaces; tag keys, tag values and field keys commas, equals signs and
 * spaces; string field values double quotes and backslashes. Integers get the {@code i} suffix. Call
 * {@link #measurement}, then tags (sorted by key for the server's sake), then fields, then {@link #end}.
 */
public final class LineProtocol
{
    private final StringBuilder out;
    private int seriesEnd = -1;
    private boolean firstField = true;
    private int start;

    public LineProtocol(final StringBuilder out)
    {
        this.out = out;
    }

    public LineProtocol measurement(final String name)
    {
        start = out.length();
        seriesEnd = -1;
        firstField = true;
        escape(name, false, true);
        return this;
    }

    public LineProtocol tag(final String key, final String value)
    {
        if (value == null || value.isEmpty())
        {
            return this;
        }
        out.append(',');
        escape(key, true, true);
        out.append('=');
        escape(value, true, true);
        return this;
    }

    public LineProtocol field(final String key, final long value)
    {
        fieldKey(key);
        out.append(value).append('i');
        return this;
    }

    /** NaN and infinities cannot be written: the field is left out. */
    public LineProtocol field(final String key, final double value)
    {
        if (Double.isNaN(value) || Double.isInfinite(value))
        {
            return this;
        }
        fieldKey(key);
        out.append(value);
        return this;
    }

    public LineProtocol field(final String key, final boolean value)
    {
        fieldKey(key);
        out.append(value ? 't' : 'f');
        return this;
    }

    public LineProtocol field(final String key, final String value)
    {
        fieldKey(key);
        out.append('"');
        for (int i = 0; i < value.length(); i++)
        {
            final char c = value.charAt(i);
            if (c == '"' || c == '\\')
            {
                out.append('\\');
            }
            out.append(c == '\n' ? ' ' : c);
        }
        out.append('"');
        return this;
    }

    /** Ends the point with its timestamp (ns); a point without fields is invalid and throws. */
    public LineProtocol end(final long timestampNs)
    {
        if (firstField)
        {
            throw new IllegalStateException("a point needs at least one field: " + out.substring(start));
        }
        out.append(' ').append(timestampNs);
        return this;
    }

    /** The measurement and tags of the point being written (its series key), valid once a field was added. */
    public String seriesKey()
    {
        return out.substring(start, seriesEnd);
    }

    private void fieldKey(final String key)
    {
        if (firstField)
        {
            seriesEnd = out.length();
            out.append(' ');
            firstField = false;
        }
        else
        {
            out.append(',');
        }
        escape(key, true, true);
        out.append('=');
    }

    private void escape(final String s, final boolean equalsSign, final boolean commaAndSpace)
    {
        for (int i = 0; i < s.length(); i++)
        {
            final char c = s.charAt(i);
            if ((commaAndSpace && (c == ',' || c == ' ')) || (equalsSign && c == '='))
            {
                out.append('\\');
            }
            out.append(c == '\n' ? ' ' : c);
        }
    }
}
