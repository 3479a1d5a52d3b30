package io.flowscope.collector.traces;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;

/**
 * A recorded trace's {@code truth.json}: the faulty rank, the fault's mode (gpu, cpu, net; cpu with
 * {@code slow_ms} ≥ 1000 is a stall), its strength, and its window on the rings' clock.
 */
public record GroundTruth(
        int rank,
        int world,
        long sizeBytes,
        String op,
        String mode,
        double slowMs,
        double slowUs,
        long faultStartNs,
        long faultEndNs,
        double[] usPerOp,
        String transport) {
    public enum Expect {
        NOTHING,
        SLOW_NODE,
        SLOW_LINK,
        HANG
    }

    public static GroundTruth read(final Path file) throws IOException {
        final JsonNode j = new ObjectMapper().readTree(file.toFile());
        final JsonNode us = j.path("us_per_op");
        final double[] usPerOp = new double[us.size()];
        for (int i = 0; i < usPerOp.length; i++) {
            usPerOp[i] = us.get(i).asDouble();
        }
        final String args = j.path("transport_args").asText("");
        return new GroundTruth(
                j.path("rank").asInt(),
                j.path("world").asInt(),
                j.path("size").asLong(),
                j.path("op").asText("all_reduce"),
                j.path("mode").asText(),
                j.path("slow_ms").asDouble(0),
                j.path("slow_us").isNumber() ? j.path("slow_us").asDouble() : 0,
                j.path("slow_start_mono_ns").asLong(),
                j.path("slow_end_mono_ns").asLong(),
                usPerOp,
                args.isEmpty() ? "?" : args.split(" ")[0]);
    }

    /** What a detector should name: nothing on a fault-free run, else the kind the fault is. */
    public Expect expect() {
        if ("none".equals(mode) || (slowMs == 0 && slowUs == 0)) {
            return Expect.NOTHING;
        }
        if ("hang".equals(mode) || ("cpu".equals(mode) && slowMs >= 1000)) {
            return Expect.HANG;
        }
        return "net".equals(mode) ? Expect.SLOW_LINK : Expect.SLOW_NODE;
    }

    /** The job's slowdown during the fault: time per op during / before − 1. */
    public double slowdown() {
        return usPerOp.length >= 2 && usPerOp[0] > 0 ? usPerOp[1] / usPerOp[0] - 1 : 0;
    }

    /** The fault in words: "GPU busy 2 ms", "CPU 1 ms late", "send() +100 µs", "stops 3.0 s", "none". */
    public String fault() {
        return switch (expect()) {
            case NOTHING -> "none";
            case HANG ->
                String.format(
                        "rank %d stops %.1f s",
                        rank, slowMs >= 1000 ? slowMs / 1000 : (faultEndNs - faultStartNs) / 1e9);
            case SLOW_LINK -> String.format("rank %d send() +%.0f µs", rank, slowUs > 0 ? slowUs : slowMs * 1000);
            case SLOW_NODE ->
                String.format(
                        "rank %d %s %s ms",
                        rank,
                        "cpu".equals(mode) ? "CPU late" : "GPU busy",
                        slowMs == Math.rint(slowMs) ? String.valueOf((long) slowMs) : String.valueOf(slowMs));
        };
    }

    /** The workload: transport, collective, size ("socket all_reduce 4 MiB"). */
    public String workload() {
        final String size = sizeBytes >= 1 << 20 ? (sizeBytes >> 20) + " MiB" : (sizeBytes >> 10) + " KiB";
        return transport + " " + op + " " + size;
    }

    /** The job's slowdown in words: "+95 %", "×4.3", "hang". */
    public String slowdownText() {
        if (expect() == Expect.HANG) {
            return "hang";
        }
        final double f = slowdown();
        return f >= 1 ? String.format("×%.1f", f + 1) : String.format("%+.0f %%", f * 100);
    }

    @Override
    public String toString() {
        return String.format("%s %s rank %d %s, %.0f%% slower", transport, op, rank, expect(), slowdown() * 100);
    }
}
