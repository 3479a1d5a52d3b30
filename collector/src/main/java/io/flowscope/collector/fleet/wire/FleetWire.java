package io.flowscope.collector.fleet.wire;

import com.fasterxml.jackson.databind.JsonNode;
import io.flowscope.api.summary.CollectiveSummary;
import io.flowscope.api.summary.FlowSummary;
import io.flowscope.collector.fleet.FleetCodec;

/**
 * The summaries topic's two encodings side by side: {@code fleet.wire = binary} (this package, the default) and
 * {@code json} ({@code FleetCodec}, kept one release for debugging with Kafka's console tools). A reader
 * tells them apart per record, so a topic may hold both while agents are upgraded one by one.
 */
public final class FleetWire {
    private FleetWire() {}

    /**
     * Whether the aggregators' stage reads this summary (docs/fleet-wire.md, "The decision"): receive STEP flows
     * (the hang rule's wait-for graph) and LINK aggregates (the wait-state and link-rate rules). Send STEP flows are
     * read through their LINK aggregate, QP flows are judged by the agent's own stage, RANK and COMM aggregates by
     * no rule. What else stays on the node (node-local communicators, sampled-out collectives) is
     * {@code CentralSelection}'s to decide.
     */
    public static boolean judgedCentrally(final FlowSummary s) {
        return s.kind() == FlowSummary.KIND_LINK || s.kind() == FlowSummary.KIND_STEP && !s.isSend();
    }

    /**
     * A JSON record, by its first byte ({@code FleetCodec} writes <code>{"v":1,...</code>). A binary record never
     * starts so unless its block length is 123 modulo 256, which is why {@link WireSchema#isBinary} (the schema
     * id) is asked first.
     */
    public static boolean isJson(final byte[] value) {
        return value != null && value.length > 0 && value[0] == '{' && !WireSchema.isBinary(value);
    }

    /**
     * The summary records a summaries-topic value holds: a frame's, in order, or the value itself (for tests and
     * tools, not for the aggregator's loop).
     */
    public static java.util.List<byte[]> records(final byte[] value) {
        if (!WireSchema.isFrame(value)) {
            return java.util.List.of(value);
        }
        final FleetWireFrame.Reader r = new FleetWireFrame.Reader();
        final java.util.List<byte[]> out = new java.util.ArrayList<>(r.wrap(value));
        while (r.next()) {
            final byte[] one = new byte[r.length()];
            r.buffer().getBytes(r.offset(), one);
            out.add(one);
        }
        return out;
    }

    /**
     * Any summaries-topic record as the JSON tree of {@code FleetCodec} (a binary record is decoded and written
     * as JSON): for tests and for looking at a topic by hand, not for the aggregator's loop. A record neither
     * encoding reads throws the {@link IllegalArgumentException} of the encoding it resembles.
     */
    public static JsonNode readAny(final byte[] value) {
        if (value == null || isJson(value)) {
            return FleetCodec.read(value);
        }
        final FleetWireDecoder d = new FleetWireDecoder();
        return switch (d.wrap(value)) {
            case WireSchema.FLOW_TEMPLATE_ID ->
                FleetCodec.read(FleetCodec.flow(d.agent(), d.seq(), d.flowInto(new FlowSummary()), d.hostName()));
            case WireSchema.COLLECTIVE_TEMPLATE_ID ->
                FleetCodec.read(FleetCodec.collective(d.agent(), d.seq(), d.collectiveInto(new CollectiveSummary())));
            default -> throw new WireFormatException("fleet wire: template " + d.templateId() + " has no JSON form");
        };
    }
}
