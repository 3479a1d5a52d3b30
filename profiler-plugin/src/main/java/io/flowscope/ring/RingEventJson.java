package io.flowscope.ring;

import com.fasterxml.jackson.core.JsonGenerator;
import java.io.IOException;
import java.lang.reflect.RecordComponent;

/**
 * Writes a {@link RingEvent} as one flat JSON object: the common fields, then the payload's fields, with
 * the names of the record components ({@code RING.md}'s names). {@code long} values are u64 and written
 * unsigned; {@code kind} and {@code op} are written as their labels ({@code "ProxyStep"}, {@code "START"});
 * STATE records add {@code stateName}.
 */
public final class RingEventJson {
    private RingEventJson() {}

    public static void write(final JsonGenerator json, final RingEvent event) throws IOException {
        json.writeStartObject();
        json.writeNumberField("producerPid", event.producerPid());
        json.writeStringField("host", event.host());
        json.writeNumberField("thread", event.thread());
        writeUnsigned(json, "timeNs", event.timeNs());
        writeUnsigned(json, "wallTimeNs", event.wallTimeNs());
        json.writeNumberField("lane", event.lane());
        writeUnsigned(json, "position", event.position());
        writeUnsigned(json, "id", event.id());
        writeUnsigned(json, "parent", event.parent());
        json.writeStringField("kind", event.kind().label());
        json.writeStringField("op", event.op().name());
        json.writeNumberField("commIndex", event.commIndex());
        writeUnsigned(json, "commHash", event.commHash());
        json.writeNumberField("rank", event.rank());
        final RingEvent.Payload payload = event.payload();
        for (final RecordComponent component : payload.getClass().getRecordComponents()) {
            final Object value;
            try {
                value = component.getAccessor().invoke(payload);
            } catch (final ReflectiveOperationException ex) {
                throw new IllegalStateException(ex);
            }
            final String name = component.getName();
            if (value instanceof Long) {
                writeUnsigned(json, name, (Long) value);
            } else if (value instanceof Integer) {
                json.writeNumberField(name, (Integer) value);
            } else if (value instanceof Boolean) {
                json.writeBooleanField(name, (Boolean) value);
            } else if (value == null) {
                json.writeNullField(name);
            } else {
                json.writeStringField(name, value.toString());
            }
        }
        if (payload instanceof RingEvent.State) {
            json.writeStringField("stateName", ((RingEvent.State) payload).stateName());
        }
        json.writeEndObject();
    }

    private static void writeUnsigned(final JsonGenerator json, final String name, final long value)
            throws IOException {
        json.writeFieldName(name);
        if (value >= 0) {
            json.writeNumber(value);
        } else {
            json.writeNumber(Long.toUnsignedString(value));
        }
    }
}
