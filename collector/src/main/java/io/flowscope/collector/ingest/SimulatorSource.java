package io.flowscope.collector.ingest;

import io.flowscope.collector.pipeline.Pipeline;
import io.flowscope.sim.ClusterSimulator;
import io.flowscope.sim.Scenario;
import io.flowscope.sim.SimulatedRun;
import java.util.List;

/**
 * The cluster simulator as a source (issue #4's {@link ClusterSimulator}): its event time follows the wall clock
 * times {@code simulate.speed}, advanced 1 ms of simulated time per drain iteration. The scenario: a
 * built-in name ({@link Scenario#builtInNames()}), a built-in name followed by {@code ,key=value} overrides, or a
 * full spec ({@link Scenario#parse}); {@code default} is the demo scenario (a slow link).
 */
public final class SimulatorSource implements Source {
    /** The built-in scenario that {@code run --simulate} uses. */
    public static final String DEFAULT = "slow-link-ring-2x4-50";

    private final Scenario scenario;
    private final ClusterSimulator sim;
    private final double speed;
    private final long durationNs;
    private long startWallNs = Long.MIN_VALUE;
    private long startSimNs;
    /** The last checkpoint of the achieved speed (wall, simulated), about once a second. */
    private long checkWallNs = Long.MIN_VALUE;

    private long checkSimNs;
    /** Published for other threads: how far the simulation is behind its clock, its recent speed, the notice. */
    private volatile long behindNs;

    private volatile double achievedSpeed = Double.NaN;
    private volatile String behind;
    /** What {@link #behind} says while behind: one stable line (the console prints a change of health once). */
    private final String behindNotice;

    /** Behind its clock by more than this (simulated time): say so; back under {@link #CAUGHT_UP_NS}: recovered. */
    static final long BEHIND_NS = 250_000_000L;

    static final long CAUGHT_UP_NS = 50_000_000L;

    public SimulatorSource(final String spec, final double speed, final long durationSeconds) {
        final Scenario s = resolve(spec);
        // the simulated cluster runs for simulate.durationSeconds (0: until the service stops); a duration= in the
        // spec wins. The simulator emits nothing past its scenario's duration, so the source ends there too
        this.scenario = spec.contains("duration=")
                ? s
                : s.toBuilder()
                        .durationNs(durationSeconds > 0 ? durationSeconds * 1_000_000_000L : Long.MAX_VALUE / 4)
                        .build();
        this.sim = new ClusterSimulator(scenario);
        this.speed = speed;
        this.behindNotice = String.format(
                java.util.Locale.ROOT,
                "the simulator falls behind its clock (speed %.3g "
                        + "asked): its events and faults come late; a smaller scenario or a lower simulate.speed keeps up",
                speed);
        this.durationNs = scenario.durationNs();
    }

    /** The scenario of a spec (see the class comment); IllegalArgumentException with the reason otherwise. */
    public static Scenario resolve(final String spec) {
        String s = spec.trim();
        if (s.isEmpty() || s.equals("default")) {
            s = DEFAULT;
        } else if (s.startsWith("default,")) {
            s = DEFAULT + s.substring("default".length());
        }
        final String first = s.split(",", 2)[0];
        final List<String> names = Scenario.builtInNames();
        if (names.contains(first)) {
            final Scenario base = Scenario.builtIn(first);
            return s.equals(first) ? base : Scenario.parse(base.toSpec() + s.substring(first.length()));
        }
        return Scenario.parse(s);
    }

    public Scenario scenario() {
        return scenario;
    }

    @Override
    public int poll(final Pipeline out) {
        final long nowWall = System.nanoTime();
        if (startWallNs == Long.MIN_VALUE) {
            startWallNs = nowWall;
            startSimNs = sim.nowNs();
        }
        long target = startSimNs + (long) ((nowWall - startWallNs) * speed);
        target = Math.min(target, durationNs);
        keepTime(nowWall, target);
        // whole 1 ms steps, as the anomaly module's SimulatedRun drives it: after each, every host is told the time
        // (advanceTo), so a silent host still ends its periods; the pipeline journals it, so a replay is the same
        final long step = SimulatedRun.STEP_NS;
        final long next = sim.nowNs() + step;
        if (target < next) {
            return 0;
        }
        final long before = out.events();
        sim.advanceTo(next, out);
        final int nodes = scenario.nodes();
        for (int n = 0; n < nodes; n++) {
            out.advanceTo(sim.hostId(n), next + sim.clockOffsetNs(n));
        }
        return (int) Math.max(1, out.events() - before);
    }

    /**
     * How the simulation keeps up with its clock (wall time × speed): a scenario too big for this machine falls
     * behind (a 4 × 8 cluster made 0.16 s of events in 20 s here) and its faults come late; that is said, not
     * hidden.
     */
    private void keepTime(final long nowWall, final long target) {
        final long late = Math.max(0, target - sim.nowNs());
        behindNs = late;
        if (checkWallNs == Long.MIN_VALUE || nowWall - checkWallNs >= 1_000_000_000L) {
            if (checkWallNs != Long.MIN_VALUE) {
                achievedSpeed = (double) (sim.nowNs() - checkSimNs) / (nowWall - checkWallNs);
            }
            checkWallNs = nowWall;
            checkSimNs = sim.nowNs();
        }
        if (late > BEHIND_NS) {
            behind = behindNotice;
        } else if (late < CAUGHT_UP_NS) {
            behind = null;
        }
    }

    @Override
    public String behind() {
        return behind;
    }

    @Override
    public java.util.Map<String, Object> health() {
        final java.util.Map<String, Object> h = new java.util.LinkedHashMap<>();
        h.put("scenario", scenario.name());
        h.put("speed", speed);
        final double achieved = achievedSpeed;
        h.put("achievedSpeed", Double.isNaN(achieved) ? null : achieved);
        h.put("behindMs", behindNs / 1_000_000L);
        h.put("keepingUp", behind == null);
        return h;
    }

    /** Simulated nodes are named {@code <hosts>-node-<n>} (the scenario's host prefix, default sim). */
    @Override
    public String hostName(final long hostId) {
        final int node = sim.nodeOfHost(hostId);
        return node < 0 ? null : sim.hostName(node);
    }

    @Override
    public boolean finished() {
        return sim.nowNs() >= durationNs;
    }

    @Override
    public String describe() {
        return "simulator " + scenario.name() + " (" + scenario.nodes() + " nodes x " + scenario.gpusPerNode()
                + " GPUs, " + scenario.faults().size() + " fault(s))";
    }

    @Override
    public void close() {}
}
