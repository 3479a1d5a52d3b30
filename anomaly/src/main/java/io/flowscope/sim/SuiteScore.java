package io.flowscope.sim;

import io.flowscope.anomaly.AnomalyConfig;
import io.flowscope.api.anomaly.Anomaly;
import io.flowscope.api.anomaly.AnomalyKind;
import io.flowscope.api.anomaly.Culprit;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * Scores the anomaly engine on labelled scenarios. A detection matches a fault when it has the fault's kind and
 * was decided between the onset and the end + {@link #GRACE_NS}; the fault's first matching detection is its
 * true positive (time to detect = detected − onset, event time of the culprit host); every other opened anomaly
 * is a false positive (all of them in fault-free runs). The culprit (of the anomaly's last publication) is right when host and rank (and peer for a
 * slow link) match, or host and device for congestion and NIC faults.
 */
public final class SuiteScore {
    public static final long GRACE_NS = 30_000_000L;

    /** One scenario's outcome. */
    public record Outcome(
            String scenario,
            List<GroundTruth> truth,
            List<Anomaly> opened,
            List<Anomaly> matched,
            List<Boolean> culpritRight,
            List<Anomaly> falsePositives,
            long events,
            long summaries,
            long wallNs) {
        public boolean clean() {
            return truth.isEmpty();
        }
    }

    /** Per kind totals. */
    public static final class KindScore {
        public int faults;
        public int detected;
        public int culpritRight;
        public int detections;
        public int falsePositives;
        public final List<Long> timeToDetectNs = new ArrayList<>();

        public double precision() {
            return detections + falsePositives == 0 ? Double.NaN : (double) detections / (detections + falsePositives);
        }

        public double recall() {
            return faults == 0 ? Double.NaN : (double) detected / faults;
        }

        public double culpritAccuracy() {
            return detected == 0 ? Double.NaN : (double) culpritRight / detected;
        }

        public long medianTtdNs() {
            if (timeToDetectNs.isEmpty()) {
                return -1;
            }
            final List<Long> s = new ArrayList<>(timeToDetectNs);
            s.sort(null);
            return s.get(s.size() / 2);
        }

        public long maxTtdNs() {
            long m = -1;
            for (final long t : timeToDetectNs) {
                m = Math.max(m, t);
            }
            return m;
        }
    }

    private SuiteScore() {}

    public static Outcome run(final Scenario scenario, final AnomalyConfig config) {
        final long t0 = System.nanoTime();
        final SimulatedRun run = new SimulatedRun(scenario, config).run();
        final long wall = System.nanoTime() - t0;
        final List<GroundTruth> truth = run.simulator().groundTruth();
        final List<Anomaly> opened = run.opened();
        final List<Anomaly> matched = new ArrayList<>();
        final List<Boolean> right = new ArrayList<>();
        final List<Anomaly> used = new ArrayList<>();
        for (final GroundTruth g : truth) {
            Anomaly hit = null;
            for (final Anomaly a : opened) {
                if (!used.contains(a) && matches(g, a) && (hit == null || a.detectedNs() < hit.detectedNs())) {
                    hit = a;
                }
            }
            matched.add(hit);
            right.add(hit != null && culpritRight(g, finalCulprit(run, hit)));
            if (hit != null) {
                used.add(hit);
            }
        }
        final List<Anomaly> fps = new ArrayList<>();
        for (final Anomaly a : opened) {
            boolean explained = used.contains(a);
            for (final GroundTruth g : truth) {
                // A repeat of a matched fault's anomaly (same kind and culprit, re-opened) is not a false alarm.
                explained |= matches(g, a) && culpritRight(g, a.culprit());
            }
            if (!explained) {
                fps.add(a);
            }
        }
        return new Outcome(
                scenario.name(),
                truth,
                opened,
                matched,
                right,
                fps,
                run.simulator().eventsEmitted(),
                run.engine().summaries(),
                wall);
    }

    /** The culprit of an anomaly's last publication (a NIC stall's is revised once the failover is seen). */
    static Culprit finalCulprit(final SimulatedRun run, final Anomaly a) {
        Culprit c = a.culprit();
        for (final SimulatedRun.Event e : run.events()) {
            if (e.anomaly().id() == a.id()) {
                c = e.anomaly().culprit();
            }
        }
        return c;
    }

    static boolean matches(final GroundTruth g, final Anomaly a) {
        final long end = g.endNs() == Long.MAX_VALUE ? Long.MAX_VALUE : g.endNs() + GRACE_NS;
        return a.kind() == g.kind() && a.detectedNs() >= g.onsetNs() && a.detectedNs() <= end;
    }

    static boolean culpritRight(final GroundTruth g, final Culprit c) {
        if (c.hostId() != g.hostId()) {
            return false;
        }
        switch (g.kind()) {
            case SLOW_LINK:
                return c.rank() == g.rank() && c.peer() == g.peer();
            case CONGESTION:
            case NIC_STALL:
                return c.device() == g.device();
            default:
                return c.rank() == g.rank();
        }
    }

    /** Totals per kind over outcomes. */
    public static Map<AnomalyKind, KindScore> byKind(final List<Outcome> outcomes) {
        final Map<AnomalyKind, KindScore> m = new EnumMap<>(AnomalyKind.class);
        for (final AnomalyKind k : AnomalyKind.values()) {
            m.put(k, new KindScore());
        }
        for (final Outcome o : outcomes) {
            for (int i = 0; i < o.truth().size(); i++) {
                final GroundTruth g = o.truth().get(i);
                final KindScore k = m.get(g.kind());
                k.faults++;
                final Anomaly a = o.matched().get(i);
                if (a != null) {
                    k.detected++;
                    k.detections++;
                    k.timeToDetectNs.add(a.detectedNs() - g.onsetNs());
                    if (o.culpritRight().get(i)) {
                        k.culpritRight++;
                    }
                }
            }
            for (final Anomaly a : o.falsePositives()) {
                m.get(a.kind()).falsePositives++;
            }
        }
        return m;
    }
}
