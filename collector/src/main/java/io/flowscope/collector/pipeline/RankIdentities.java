package io.flowscope.collector.pipeline;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.Culprit;
import io.flowscope.sink.RankNames;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongFunction;

/**
 * Every communicator rank the rings described ({@code TelemetryListener#onRingComm}: the ring adapter live, the
 * journal's {@code ringComm} entries in a replay), and anomalies named with them: the summary opens with the
 * culprit as an operator acts on it, {@code host gpu-node-17 pid 48213 rank 1 GPU 1 (0000:19:00.0): ...} (a link:
 * its sending rank, the culprit's rank; a NIC: {@code host gpu-node-17: ...}). The culprit's hex host id is left to
 * the structured fields: a summary that names the host by its id (the NIC detectors' "NIC 2 of host 0x...") gets
 * it by name. The same entries give the same names, so a replay of a journal names culprits as the live run did.
 * Written by one thread (the drain thread, or the replay); read by the sinks' threads too ({@link #rankNames}).
 */
final class RankIdentities {
    private record Key(long hostId, long commHash, int rank) {}

    private final Map<Key, RankIdentity> byHost = new ConcurrentHashMap<>();
    /** The same, by communicator and rank alone: a culprit keyed by another host than its ring's still gets named. */
    private final Map<Key, RankIdentity> byRank = new ConcurrentHashMap<>();
    /** Host names the communicator entries told (a NIC culprit's host has rings too). */
    private final Map<Long, String> hosts = new ConcurrentHashMap<>();

    void put(final RankIdentity r) {
        byHost.put(new Key(r.hostId(), r.commHash(), r.rank()), r);
        byRank.put(new Key(0, r.commHash(), r.rank()), r);
        if (!r.hostname().isEmpty()) {
            hosts.put(r.hostId(), r.hostname());
        }
    }

    /** The GPU UUID of a rank {@link #put} described (the same process's), else nothing. */
    void gpuUuid(final long hostId, final int pid, final long commHash, final int rank, final String uuid) {
        final RankIdentity r = byHost.get(new Key(hostId, commHash, rank));
        if (r != null && r.pid() == pid && !uuid.isEmpty()) {
            put(r.withGpuUuid(uuid));
        }
    }

    /** A host's name as the communicator entries told it, null when none did. */
    String hostname(final long hostId) {
        return hosts.get(hostId);
    }

    /** A rank's process and GPU for the sinks (InfluxDB tags and fields, alert annotations). */
    RankNames rankNames() {
        return (hostId, commHash, rank) -> {
            final RankIdentity r = rank(hostId, commHash, rank);
            return r == null || !r.isRank()
                    ? null
                    : new RankNames.Name(r.pid(), r.cudaDevice(), r.pciBusId(), r.gpuUuid());
        };
    }

    int size() {
        return byHost.size();
    }

    /** A communicator rank's identity (its ring's), or null when no ring described it. */
    RankIdentity rank(final long hostId, final long commHash, final int rank) {
        final RankIdentity r = byHost.get(new Key(hostId, commHash, rank));
        return r != null ? r : byRank.get(new Key(0, commHash, rank));
    }

    /**
     * The culprit as known: its rank's identity (rank culprits), else its host by name ({@code hostNames}: the
     * source's or the journal's ring attachments; else the communicator entries' hostnames), else null.
     */
    RankIdentity culprit(final Culprit c, final LongFunction<String> hostNames) {
        if (c.rank() >= 0 && c.commHash() != 0) {
            RankIdentity r = byHost.get(new Key(c.hostId(), c.commHash(), c.rank()));
            if (r == null) {
                r = byRank.get(new Key(0, c.commHash(), c.rank()));
            }
            if (r != null) {
                return r;
            }
        }
        String name = hostNames.apply(c.hostId());
        if (name == null || name.isEmpty()) {
            name = hosts.get(c.hostId());
        }
        return name == null || name.isEmpty() ? null : RankIdentity.host(c.hostId(), name);
    }

    /** The anomaly as operators read it (see the class comment); as it is when nothing is known of its culprit. */
    static Anomaly named(final Anomaly a, final RankIdentity who) {
        if (who == null) {
            return a;
        }
        final String words = who.words();
        if (words.isEmpty()) {
            return a;
        }
        String text = a.summary();
        if (!who.hostname().isEmpty()) {
            final String hex = "host " + FlowRow.hex(a.culprit().hostId()) + "(?![0-9a-fA-F])";
            text = text.replaceAll(" of " + hex, "")
                    .replaceAll(hex, java.util.regex.Matcher.quoteReplacement("host " + who.hostname()));
        }
        return a.withSummary(words + ": " + text);
    }
}
