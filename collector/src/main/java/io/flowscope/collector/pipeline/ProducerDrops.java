package io.flowscope.collector.pipeline;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One producer's dropped records, as its ring header counts them (profiler-plugin/RING.md, "producer counters"): a
 * full ring ({@code dropped_full}), a slot the consumer reclaimed before the producer published it
 * ({@code dropped_abandoned}), a claim that gave up after its retries ({@code dropped_contended}). What
 * {@code /metrics} ({@code flowscope_producer_dropped_total{host, pid, reason}}) and {@code /api/health}
 * ({@code producers}; DEGRADED while one is dropping) say of each producer, so that a ring that fills up is never
 * silent.
 * <p>
 * Cardinality: one entry per attached ring (one per process using the plugin on the hosts whose rings this service
 * reads), at most {@link #MAX_ATTACHED}, plus the last {@link #MAX_DETACHED} detached rings that had dropped records;
 * the unlabelled {@code flowscope_ring_producer_dropped_total} counts every ring's drops, listed or not.
 *
 * @param host             the ring's hostname
 * @param pid              the producer's pid
 * @param ring             the ring file's name
 * @param attached         whether the ring is still attached (false: its final counters)
 * @param droppedFull      records dropped because the ring was full
 * @param droppedAbandoned records whose slot the consumer reclaimed before they were published
 * @param droppedContended records whose claim gave up under contention
 * @param lastDropWallMs   when the service last saw the drops grow (wall ms; 0: never)
 */
public record ProducerDrops(
        String host,
        int pid,
        String ring,
        boolean attached,
        long droppedFull,
        long droppedAbandoned,
        long droppedContended,
        long lastDropWallMs) {
    /** A producer is "dropping" while its drops grew less than this long ago. */
    public static final long DROPPING_MS = 10_000;
    /** Attached rings listed at most (the rest still count in the unlabelled total). */
    public static final int MAX_ATTACHED = 256;
    /** Detached rings with drops kept listed, the latest ones. */
    public static final int MAX_DETACHED = 32;
    /** Producers named in a health reason. */
    private static final int NAMED = 3;

    public long dropped() {
        return droppedFull + droppedAbandoned + droppedContended;
    }

    /** Whether its drops grew within {@link #DROPPING_MS} of {@code nowWallMs}. */
    public boolean dropping(final long nowWallMs) {
        return lastDropWallMs > 0 && nowWallMs - lastDropWallMs < DROPPING_MS;
    }

    /** "host pid N" for a reason line. */
    public String name() {
        return host + " pid " + pid;
    }

    /**
     * The health reason while producers are dropping, else null: one line that stays the same while the same
     * producers drop (the console says a change of reasons once).
     */
    public static String reason(final List<ProducerDrops> producers, final long nowWallMs) {
        final List<String> names = new ArrayList<>();
        int dropping = 0;
        for (final ProducerDrops p : producers) {
            if (p.dropping(nowWallMs)) {
                if (dropping++ < NAMED) {
                    names.add(p.name());
                }
            }
        }
        if (dropping == 0) {
            return null;
        }
        return "rings dropping records: " + String.join(", ", names)
                + (dropping > NAMED ? " and " + (dropping - NAMED) + " more" : "")
                + " (ring full: the service does not drain as fast as they write; " + "see producers)";
    }

    /** The {@code producers} section of {@code /api/health}. */
    public static List<Map<String, Object>> health(final List<ProducerDrops> producers, final long nowWallMs) {
        final List<Map<String, Object>> out = new ArrayList<>(producers.size());
        for (final ProducerDrops p : producers) {
            final Map<String, Object> m = new LinkedHashMap<>();
            m.put("host", p.host());
            m.put("pid", p.pid());
            m.put("ring", p.ring());
            m.put("attached", p.attached());
            m.put("dropped", p.dropped());
            m.put("droppedFull", p.droppedFull());
            m.put("droppedAbandoned", p.droppedAbandoned());
            m.put("droppedContended", p.droppedContended());
            m.put("dropping", p.dropping(nowWallMs));
            m.put("lastDropWallMs", p.lastDropWallMs() == 0 ? null : p.lastDropWallMs());
            out.add(m);
        }
        return out;
    }
}
