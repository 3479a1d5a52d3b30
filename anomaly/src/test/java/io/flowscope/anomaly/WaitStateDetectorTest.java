package io.flowscope.anomaly;

import static org.assertj.core.api.Assertions.assertThat;

import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalyKind;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The wait-state detectors on proxy-step traffic shaped like real NCCL's ({@link RingTraffic}): a straggler is
 * named from the op entry waits on a 2-rank communicator, sustained lateness only; a slow link from the sender's
 * network time per byte, never when its sender straggles.
 */
class WaitStateDetectorTest {
    private static final int OPS = 600;
    /** Ops 200..400 (360 ms .. 720 ms at 1.8 ms an op). */
    private static final int FROM = 200;

    private static final int TO = 400;

    @Test
    void aFaultFreeTwoRankRingRaisesNothing() {
        final RingTraffic t = new RingTraffic();
        assertThat(t.run(OPS, new AnomalyConfig())).isEmpty();
    }

    @Test
    void aRankWhoseCpuArrivesLateIsNamedOnATwoRankCommunicatorAndResolvedAfter() {
        final RingTraffic t = new RingTraffic();
        t.lateNs = RingTraffic.between(FROM, TO, 1, 1_000_000, 0);
        final List<Anomaly> opened = t.run(OPS, new AnomalyConfig());

        assertThat(opened).hasSize(1);
        final Anomaly a = opened.get(0);
        assertThat(a.kind()).isEqualTo(AnomalyKind.SLOW_NODE);
        assertThat(a.culprit().rank()).isEqualTo(1);
        assertThat(a.culprit().commHash()).isEqualTo(RingTraffic.COMM);
        final long onset = 1_000_000_000L + FROM * t.opPeriodNs;
        assertThat(a.detectedNs() - onset).isBetween(0L, 100_000_000L);
        assertThat(a.evidence().get("latenessNsPerOp")).isBetween(900_000.0, 1_600_000.0);
        assertThat(a.summary()).contains("arrives late");
        assertThat(t.resolved).extracting(Anomaly::id).containsExactly(a.id());
        assertThat(t.resolved.get(0).resolvedNs() - (1_000_000_000L + TO * t.opPeriodNs))
                .isBetween(0L, 150_000_000L);
    }

    @Test
    void aStragglerStaysNamedThroughAStallOfTheWholeCommunicator() {
        // Rank 1 1 ms late throughout; in the middle, for ~110 ms, the ranks in turn arrive late (rank 0 3 ms,
        // rank 1 1.5 ms more: a host's hiccup), so each waits long on the other (~1.2 and ~1.5 ms a window, its
        // usual 0.45 ms) and no window shows who is late. A real 9 s straggler was resolved across such a stall
        // and named again.
        final RingTraffic t = new RingTraffic();
        final int stallFrom = FROM + 60;
        t.lateNs = (op, r) -> {
            long late = r == 1 && op >= FROM && op < TO ? 1_000_000 : 0;
            if (op >= stallFrom && op < stallFrom + 60 && op % 2 == r) {
                late += r == 0 ? 3_000_000 : 1_500_000;
            }
            return late;
        };
        final List<Anomaly> opened = t.run(OPS, new AnomalyConfig());

        assertThat(opened).extracting(Anomaly::kind).containsExactly(AnomalyKind.SLOW_NODE);
        assertThat(opened.get(0).culprit().rank()).isEqualTo(1);
        assertThat(t.resolved).hasSize(1);
        assertThat(t.resolved.get(0).resolvedNs()).isGreaterThan(1_000_000_000L + TO * t.opPeriodNs);
    }

    @Test
    void aRankWhoseGpuIsBusyIsNamedWithItsGpuAsTheCause() {
        final RingTraffic t = new RingTraffic();
        t.ranks = 4;
        t.gpu = true;
        t.lateNs = RingTraffic.between(FROM, TO, 2, 600_000, 0);
        final List<Anomaly> opened = t.run(OPS, new AnomalyConfig());

        assertThat(opened).extracting(Anomaly::kind).containsExactly(AnomalyKind.SLOW_NODE);
        assertThat(opened.get(0).culprit().rank())
                .as("the late rank, not the ones behind it")
                .isEqualTo(2);
        assertThat(opened.get(0).summary()).contains("its own GPU");
    }

    @Test
    void ranksOnHostsOfTheirOwnAreJudgedOnTheCulpritsClock() {
        final RingTraffic t = new RingTraffic();
        t.ranks = 4;
        t.hostPerRank = true;
        t.lateNs = RingTraffic.between(FROM, TO, 3, 1_000_000, 0);
        final List<Anomaly> opened = t.run(OPS, new AnomalyConfig());

        assertThat(opened).extracting(Anomaly::kind).containsExactly(AnomalyKind.SLOW_NODE);
        final Anomaly a = opened.get(0);
        assertThat(a.culprit().rank()).isEqualTo(3);
        assertThat(a.culprit().hostId()).isEqualTo(t.hostOf(3));
        // Host 3's clock runs 3 x 7.78 s ahead of host 0's: the onset is dated on host 3's.
        final long onsetOnCulpritClock = 1_000_000_000L + FROM * t.opPeriodNs + 3 * t.clockStepNs;
        assertThat(a.startNs() - onsetOnCulpritClock).isBetween(-30_000_000L, 30_000_000L);
        assertThat(a.detectedNs() - onsetOnCulpritClock).isBetween(0L, 100_000_000L);
    }

    @Test
    void hostTimesToldAfterEveryBatchDoNotTakeTheWindowsFromALiveAnchor() {
        // The drain loop tells every host's time after every batch, many times a period.
        final RingTraffic t = new RingTraffic();
        t.ranks = 8;
        t.hostPerRank = true;
        t.advanceEveryEvent = true;
        t.lateNs = RingTraffic.between(FROM, TO, 5, 1_000_000, 0);
        final List<Anomaly> opened = t.run(OPS, new AnomalyConfig());

        assertThat(opened).extracting(a -> a.kind() + " " + a.culprit().rank()).containsExactly("SLOW_NODE 5");
        assertThat(opened.get(0).detectedNs() - (1_000_000_000L + FROM * t.opPeriodNs + 5 * t.clockStepNs))
                .isBetween(0L, 100_000_000L);
        assertThat(t.anchorAfterWarmUp).isNotEqualTo(Long.MIN_VALUE);
        assertThat(t.stage.waitStates().anchorHostOf(RingTraffic.COMM))
                .as("never taken over")
                .isEqualTo(t.anchorAfterWarmUp);
    }

    @Test
    void whenTheAnchorHostFallsSilentAnotherHostJudgesTheCommunicator() {
        // The first host to report the communicator (rank 1's, by the window engine's order of period ends), whose
        // clock closes its windows, goes quiet after op 50: its rings are no longer drained. The other hosts go on,
        // and rank 2 becomes late.
        final RingTraffic t = new RingTraffic();
        t.ranks = 4;
        t.hostPerRank = true;
        t.silentRank = 1;
        t.silentFromOp = 50;
        t.lateNs = RingTraffic.between(FROM, TO, 2, 1_000_000, 0);
        final List<Anomaly> opened = t.run(OPS, new AnomalyConfig());

        assertThat(opened).extracting(a -> a.kind() + " " + a.culprit().rank()).containsExactly("SLOW_NODE 2");
        assertThat(t.stage.waitStates().anchorHostOf(RingTraffic.COMM))
                .as("taken over")
                .isNotEqualTo(t.hostOf(1));

        // The same traffic without the silence: rank 1's host anchors it throughout.
        final RingTraffic quiet = new RingTraffic();
        quiet.ranks = 4;
        quiet.hostPerRank = true;
        quiet.run(100, new AnomalyConfig());
        assertThat(quiet.stage.waitStates().anchorHostOf(RingTraffic.COMM)).isEqualTo(quiet.hostOf(1));
    }

    @Test
    void aStragglerOfOperationsLongerThanAWindowIsNamed() {
        // Operations of 30 ms (64 MiB over a slower network): at most one ends in a 25 ms window, 2 first steps each
        // way (4 needed): windows carry their entry waits over until there are enough.
        final RingTraffic t = new RingTraffic();
        t.opPeriodNs = 30_000_000;
        t.networkNs = 4_000_000;
        t.lateNs = RingTraffic.between(40, 80, 1, 6_000_000, 0);
        final List<Anomaly> opened = t.run(100, new AnomalyConfig());

        assertThat(opened).extracting(a -> a.kind() + " " + a.culprit().rank()).containsExactly("SLOW_NODE 1");
        assertThat(opened.get(0).detectedNs() - (1_000_000_000L + 40 * t.opPeriodNs))
                .isBetween(0L, 250_000_000L);
    }

    @Test
    void oneLateOperationAmongHealthyOnesIsNotAStraggler() {
        final RingTraffic t = new RingTraffic();
        // Every 25th op of rank 0 is 3 ms late (a scheduling outlier, a GC pause): never two windows running.
        t.lateNs = (op, rank) -> rank == 0 && op % 25 == 0 ? 3_000_000 : 0;
        assertThat(t.run(OPS, new AnomalyConfig())).isEmpty();
    }

    @Test
    void aLatenessUnderTheThresholdIsNotNamed() {
        // 150 µs late: an entry-wait excess of 300 µs (the peer waits 150 µs more, the late rank 150 µs less).
        // Fault-free real runs hold one rank up to 220 µs over two windows (sendrecv: 176 µs throughout).
        final RingTraffic t = new RingTraffic();
        t.lateNs = RingTraffic.between(FROM, TO, 1, 150_000, 0);
        assertThat(t.run(OPS, new AnomalyConfig())).isEmpty();
    }

    @Test
    void aSlowLinkIsNamedBySenderAndReceiver() {
        final RingTraffic t = new RingTraffic();
        t.slowdownPercent = RingTraffic.between(FROM, TO, 1, 180, 100);
        final List<Anomaly> opened = t.run(OPS, new AnomalyConfig());

        assertThat(opened).extracting(Anomaly::kind).containsExactly(AnomalyKind.SLOW_LINK);
        final Anomaly a = opened.get(0);
        assertThat(a.culprit().rank()).isEqualTo(1);
        assertThat(a.culprit().peer()).isEqualTo(0);
        assertThat(a.detectedNs() - (1_000_000_000L + FROM * t.opPeriodNs)).isBetween(0L, 250_000_000L);
        assertThat(a.evidence().get("fractionOfBaseline")).isBetween(0.45, 0.65);
    }

    @Test
    void aSlowLinkReadingJustUnderTheThresholdForAWhileIsStillNamed() {
        // As a real socket link slowed for 7.5 s read: 1.6x for a few windows, then 1.3-1.4x for a while (under
        // the 1.4x threshold), then more again. The baseline must not learn the fault in between.
        final RingTraffic t = new RingTraffic();
        t.slowdownPercent = (op, r) -> {
            if (r != 1 || op < FROM) {
                return 100;
            }
            return op < FROM + 40 ? 160 : op < FROM + 600 ? 138 : op < FROM + 900 ? 150 : 100;
        };
        final List<Anomaly> opened = t.run(1_100, new AnomalyConfig());

        assertThat(opened).extracting(Anomaly::kind).containsExactly(AnomalyKind.SLOW_LINK);
        assertThat(opened.get(0).culprit().rank()).isEqualTo(1);
        assertThat(opened.get(0).detectedNs())
                .as("named in the 1.5x phase")
                .isGreaterThan(1_000_000_000L + (FROM + 600) * t.opPeriodNs);
    }

    @Test
    void anOpenSlowLinkStaysOpenUntilItIsHealthyAgain() {
        final RingTraffic t = new RingTraffic();
        // 1.8x, then 1.3x (still slow, under the threshold to open), then healthy
        t.slowdownPercent = (op, r) -> r != 1 || op < FROM ? 100 : op < TO ? 180 : op < TO + 200 ? 130 : 100;
        final List<Anomaly> opened = t.run(OPS + 200, new AnomalyConfig());

        assertThat(opened).extracting(Anomaly::kind).containsExactly(AnomalyKind.SLOW_LINK);
        assertThat(t.resolved).hasSize(1);
        assertThat(t.resolved.get(0).resolvedNs())
                .as("resolved once healthy, not while 1.3x")
                .isGreaterThan(1_000_000_000L + (TO + 200) * t.opPeriodNs);
    }

    @Test
    void aShortSlowdownOfOneDirectionIsNoSlowLink() {
        final RingTraffic t = new RingTraffic();
        // 100 ms at twice the network time: fault-free socket runs show such episodes (docs/detection.md).
        t.slowdownPercent = RingTraffic.between(FROM, FROM + 55, 1, 200, 100);
        assertThat(t.run(OPS, new AnomalyConfig())).isEmpty();
    }

    @Test
    void theSendsOfALateRankLookSlowButNameNoLink() {
        final RingTraffic t = new RingTraffic();
        t.lateNs = RingTraffic.between(FROM, TO, 1, 1_000_000, 0);
        // A late rank bursts its sends: they queue on the connection (real traces: 1.7x the network time).
        t.slowdownPercent = RingTraffic.between(FROM, TO, 1, 175, 100);
        assertThat(t.run(OPS, new AnomalyConfig())).extracting(Anomaly::kind).containsExactly(AnomalyKind.SLOW_NODE);
    }

    /** Senders 1 and 2 slowed together (×2.5 network time) over ops FROM..TO. */
    private static RingTraffic twoSendersSlowed(final boolean hostPerRank) {
        final RingTraffic t = new RingTraffic();
        t.ranks = 4;
        t.hostPerRank = hostPerRank;
        t.slowdownPercent = (op, r) -> (r == 1 || r == 2) && op >= FROM && op < TO ? 250 : 100;
        return t;
    }

    @Test
    void linksOfTwoSendersOfOneHostSlowingTogetherAreItsCongestionNotSlowLinks() {
        final RingTraffic t = twoSendersSlowed(false);
        final List<Anomaly> opened = t.run(OPS, new AnomalyConfig());

        assertThat(opened).extracting(Anomaly::kind).containsExactly(AnomalyKind.CONGESTION);
        final Anomaly a = opened.get(0);
        assertThat(a.culprit().hostId()).isEqualTo(RingTraffic.HOST);
        assertThat(a.culprit().device())
                .as("no QP events: the host's network, no NIC named")
                .isEqualTo(-1);
        assertThat(a.evidence().get("slowLinks")).isEqualTo(2.0);
        assertThat(a.summary()).contains("the network of host", "2 links of several of its ranks slowed together");
        assertThat(a.detectedNs() - (1_000_000_000L + FROM * t.opPeriodNs)).isBetween(0L, 250_000_000L);
        assertThat(t.resolved).extracting(Anomaly::kind).containsExactly(AnomalyKind.CONGESTION);
    }

    @Test
    void oneLinkOfACongestedHostSlowingAloneIsStillItsCongestion() {
        // Senders 1 and 2 slow together, then sender 1 alone until TO: a congested NIC's links need not all slow
        // in every window (MultiHostCongestionIT: a SLOW_LINK 0.8 s into a named congestion).
        final int alone = (FROM + TO) / 2;
        final RingTraffic t = new RingTraffic();
        t.ranks = 4;
        t.slowdownPercent =
                (op, r) -> (r == 1 && op >= FROM && op < TO) || (r == 2 && op >= FROM && op < alone) ? 250 : 100;
        final List<Anomaly> opened = t.run(OPS, new AnomalyConfig());

        assertThat(opened).extracting(Anomaly::kind).containsExactly(AnomalyKind.CONGESTION);
        assertThat(t.resolved).hasSize(1);
        assertThat(t.resolved.get(0).resolvedNs())
                .as("open while a link of the host stays slow")
                .isGreaterThan(1_000_000_000L + TO * t.opPeriodNs);
    }

    @Test
    void twoSendersOnHostsOfTheirOwnAreTwoSlowLinks() {
        final List<Anomaly> opened = twoSendersSlowed(true).run(OPS, new AnomalyConfig());

        assertThat(opened).extracting(Anomaly::kind).containsOnly(AnomalyKind.SLOW_LINK);
        assertThat(opened)
                .extracting(a -> a.culprit().rank() + "->" + a.culprit().peer())
                .containsExactlyInAnyOrder("1->2", "2->3");
    }

    @Test
    void aSlowNicOfTheHostIsNamedWhenQpEventsTellItsNics() {
        // What the engine's NIC judgement would say: NIC 3 of the host at 3.2x its latency, the others' at 1.0.
        final NicView nics = new NicView() {
            @Override
            public int worstNic(final long hostId) {
                return hostId == RingTraffic.HOST ? 3 : -1;
            }

            @Override
            public double latencyRatio(final long hostId, final int device) {
                return hostId == RingTraffic.HOST && device == 3 ? 3.2 : 0;
            }

            @Override
            public double othersMedianRatio(final long hostId) {
                return 1.0;
            }
        };
        final RingTraffic t = twoSendersSlowed(false);
        t.nics = nics;
        final List<Anomaly> opened = t.run(OPS, new AnomalyConfig());

        assertThat(opened).extracting(Anomaly::kind).containsExactly(AnomalyKind.CONGESTION);
        assertThat(opened.get(0).culprit().device()).isEqualTo(3);
        assertThat(opened.get(0).evidence().get("deviceLatencyRatio")).isEqualTo(3.2);
    }
}
