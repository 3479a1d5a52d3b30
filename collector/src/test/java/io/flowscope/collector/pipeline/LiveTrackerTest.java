package io.flowscope.collector.pipeline;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalyKind;
import io.flowscope.api.anomaly.Culprit;
import io.flowscope.api.anomaly.Severity;
import io.flowscope.collector.config.CollectorConfig;
import io.flowscope.collector.http.LivePage;
import io.flowscope.collector.ingest.SimulatorSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * What the live page reads beyond the latest period: links against their own baselines, ranks' waits, series
 * ({@link LiveTracker}, through the real window engine and simulator), and the anomaly timeline with flaps folded
 * and culprits by name ({@link LivePage}).
 */
public class LiveTrackerTest {
    private static final CollectorConfig CONFIG = CollectorConfig.load(null, Map.of(), Map.of());

    /** The demo's scenario (a slow link 3 → 4 at half its bandwidth from 100 ms) up to {@code untilNs}. */
    private static Pipeline demo(final long untilNs) {
        final Pipeline p = new Pipeline(Pipeline.windowConfig(CONFIG), AnomalyStages::create, e -> {});
        final SimulatorSource source = new SimulatorSource(SimulatorSource.DEFAULT, 1e12, 0);
        while (p.lastEventNs() < untilNs) {
            source.poll(p);
            p.endBatch(0);
        }
        return p;
    }

    private static LiveTracker.CommView comm(final Pipeline p) {
        final List<LiveTracker.CommView> comms =
                p.snapshot(0, Stats.ZERO).live().comms();
        assertThat(comms).hasSize(1);
        return comms.get(0);
    }

    @Test
    void shouldShowEachLinkAgainstItsOwnBaselineSoThatOnlyTheSlowLinkFallsBelow() throws Exception {
        final Pipeline before = demo(95_000_000L);
        for (final LiveTracker.LinkView l : comm(before).links()) {
            assertThat(l.fractionOfNormal()).as("before the fault: " + l).isBetween(0.8, 1.25);
            assertThat(l.baselineBytesPerSecond()).isPositive();
        }
        final Pipeline during = demo(1_000_000_000L);
        final LiveTracker.CommView c = comm(during);
        assertThat(c.links()).hasSize(8);
        for (final LiveTracker.LinkView l : c.links()) {
            if (l.rank() == 3) {
                // half the bandwidth, and the queue it builds: the detector's 12 %
                assertThat(l.peer()).isEqualTo(4);
                assertThat(l.fractionOfNormal()).as("the slow link").isLessThan(0.3);
            } else {
                // every other link moves less data too (the ring waits for its slowest), but at its normal rate
                assertThat(l.fractionOfNormal()).as(l.toString()).isGreaterThan(0.8);
            }
        }
        // its series: normal first, then slow; a sample per 100 ms of its host's clock, the last one still open
        final LiveTracker.Series s = c.series().get("3:4");
        assertThat(s.stepNs()).isEqualTo(LiveTracker.SAMPLE_NS);
        final float[] f = s.fractionOfNormal();
        assertThat(f.length).isBetween(10, 11);
        assertThat(f[f.length - 2]).isLessThan(0.3f);
        assertThat(s.bandwidthBytesPerSecond()[f.length - 2]).isPositive();
        assertThat(s.endNs()).isEqualTo(c.links().get(3).lastNs());
        // the slow link's sender waits on the network, its peers on it
        final LiveTracker.RankView r3 = c.ranks().get(3);
        for (final LiveTracker.RankView r : c.ranks()) {
            final double share = r.networkNs() / (r.ownGpuNs() + r.peerNs() + r.networkNs());
            if (r != r3) {
                assertThat(share).as("rank " + r.rank()).isLessThan(0.2);
            } else {
                assertThat(share).as("rank 3").isGreaterThan(0.35);
            }
        }
    }

    @Test
    void shouldForgetLinksAndRanksThatWentQuiet() {
        final Pipeline p = demo(200_000_000L);
        p.expireBefore(p.lastEventNs() - 1_000_000_000L);
        assertThat(comm(p).links()).hasSize(8);
        p.expireBefore(p.lastEventNs() + 1);
        assertThat(p.snapshot(0, Stats.ZERO).live().comms()).isEmpty();
    }

    private static Anomaly anomaly(
            final long id, final AnomalyKind kind, final Culprit c, final long start, final long resolved) {
        final SortedMap<String, Double> ev = new TreeMap<>(Map.of("fractionOfBaseline", 0.4));
        return new Anomaly(
                id, kind, c, Severity.WARNING, start, start + 1_000_000, resolved, ev, start, start, kind + " " + id);
    }

    /** A snapshot holding these anomalies (host 0x77's time at {@code nowNs}) and the culprits' names. */
    public static Snapshot snapshot(
            final List<Anomaly> anomalies, final Map<Long, RankIdentity> culprits, final long nowNs) {
        return new Snapshot(
                0,
                nowNs,
                List.of(),
                List.of(),
                List.of(),
                List.of(),
                List.of(),
                anomalies,
                Stats.ZERO,
                culprits,
                LiveTracker.View.EMPTY,
                Map.of(0x77L, nowNs));
    }

    /** A link flapping 40 times, a NIC stall and a hang: three rows, open first, the flaps in one. */
    public static List<Anomaly> flapping() {
        final List<Anomaly> out = new ArrayList<>();
        final long s = 1_000_000_000L;
        for (int i = 0; i < 40; i++) {
            final long start = s + i * 500_000_000L;
            out.add(anomaly(
                    100 + i,
                    AnomalyKind.SLOW_LINK,
                    Culprit.link(0x77, 0xc0ffee, 1, 2),
                    start,
                    i == 39 ? -1 : start + 200_000_000L));
        }
        out.add(anomaly(7, AnomalyKind.NIC_STALL, Culprit.nic(0x77, 2), s + 2_000_000_000L, s + 2_100_000_000L));
        out.add(anomaly(
                8,
                AnomalyKind.HANG,
                new Culprit(0x77, 0xc0ffee, 3, 0, 1, -1, -1),
                s + 5_000_000_000L,
                s + 9_000_000_000L));
        out.add(anomaly(
                9,
                AnomalyKind.HANG,
                new Culprit(0x77, 0xc0ffee, 3, 1, 0, -1, -1),
                s + 12_000_000_000L,
                s + 13_000_000_000L));
        return out;
    }

    @Test
    void shouldFoldRepeatsOfAKindAndCulpritIntoOneTimelineRowOpenFirst() {
        final Map<Long, RankIdentity> names = Map.of(7L, RankIdentity.host(0x77, "gpu-node-7"));
        final long now = 21_000_000_000L;
        final List<Map<String, Object>> rows = LivePage.timeline(snapshot(flapping(), names, now), id -> null);
        assertThat(rows).hasSize(3);
        final Map<String, Object> link = rows.get(0);
        assertThat(link.get("kind")).isEqualTo("SLOW_LINK");
        assertThat(link.get("open")).isEqualTo(true);
        assertThat(link.get("episodes")).isEqualTo(40);
        assertThat((List<?>) link.get("spans")).hasSize(40);
        assertThat(link.get("firstStartNs")).isEqualTo(1_000_000_000L);
        assertThat(link.get("hostNowNs")).isEqualTo(now);
        // a hang is one row whichever waiting rank its peer names; resolved rows by their latest start
        assertThat(rows.get(1).get("kind")).isEqualTo("HANG");
        assertThat(rows.get(1).get("episodes")).isEqualTo(2);
        final Map<?, ?> nic = (Map<?, ?>) rows.get(2).get("culprit");
        assertThat(nic.get("hostname")).isEqualTo("gpu-node-7");
        assertThat(nic.get("device")).isEqualTo(2);
        // a host named by the source only (a simulated node) is named too
        final Map<?, ?> named = (Map<?, ?>)
                LivePage.timeline(snapshot(flapping(), Map.of(), now), id -> id == 0x77 ? "sim-node-0" : null)
                        .get(0)
                        .get("culprit");
        assertThat(named.get("hostname")).isEqualTo("sim-node-0");
    }

    @Test
    void shouldListAtMostTheLatestEpisodesOfARow() {
        final List<Anomaly> many = new ArrayList<>();
        for (int i = 0; i < 120; i++) {
            many.add(anomaly(
                    i,
                    AnomalyKind.SLOW_NODE,
                    Culprit.rank(0x77, 0xc0ffee, 5),
                    i * 1_000_000L,
                    i * 1_000_000L + 500_000L));
        }
        final Map<String, Object> row = LivePage.timeline(snapshot(many, Map.of(), 200_000_000L), id -> null)
                .get(0);
        assertThat(row.get("episodes")).isEqualTo(120);
        final List<?> spans = (List<?>) row.get("spans");
        assertThat(spans).hasSize(LivePage.EPISODES);
        assertThat(((Object[]) spans.get(spans.size() - 1))[0]).isEqualTo(119_000_000L);
    }
}
