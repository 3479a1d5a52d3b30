package io.flowscope.sim;

import io.flowscope.api.anomaly.AnomalyKind;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What the {@link ClusterSimulator} runs: cluster shape, workload, link and GPU speeds, noise and faults.
 * Immutable; build with {@link #builder()}, {@link #parse(String)} (compact CLI spec) or
 * {@link #builtIn(String)} (the labelled suite).
 * <p>
 * Spec syntax: comma-separated {@code key=value}; {@code fault=KIND} starts a fault and the fault keys after it
 * belong to it (several faults allowed). Sizes take K/M/G (binary) suffixes, times ns/us/ms/s.
 * <pre>
 *   nodes=4,gpus=8,channels=4,size=8M,seed=1,algo=ring,duration=400ms,fault=slow-link,rank=3,peer=4,fraction=0.5,at=200ms
 * </pre>
 * Scenario keys: name, nodes, gpus, channels, size, seed, duration, algo (ring | tree | sendrecv | mixed),
 * bw (bytes/s per link direction, default 25e9), gpubw (bytes/s of a GPU's copy, default 200e9), latency, step
 * (classic: max step bytes; nccl: NCCL's buffer step, a ring slice is at most 2 of them; default 512K), nics (NIC
 * devices per node, default = gpus), gap (mean idle gap between collectives), jitter (relative timing noise),
 * bursty (true: message sizes vary ×¼..×2), offsets (true: hosts get unrelated clock offsets), epoch (every host's
 * clock reads this at the simulation's start, default 0: a host up for days), failover (NIC
 * failover delay), hosts (the simulated hosts' name prefix, default sim: hosts are named {@code <hosts>-node-<n>};
 * another prefix gives other host ids, so that two simulated clusters can feed one aggregator without their
 * hosts mixing), model (classic, the default and the labelled suite's, or nccl: calibrated on real NCCL, see
 * {@link ClusterSimulator}); for the nccl model also transport (ib, the default, or socket), ahead (collectives a
 * CPU may call ahead of its GPU, default 4), sync (every this many collectives the CPUs wait for all GPUs, default
 * 0 = never), cpu (CPU time per call, default 25us), netnoise (sigma of a slow log-normal rate factor per link,
 * default 0). Fault kinds: slow-link (rank, peer, fraction), slow-gpu (rank, fraction = remaining speed; nccl
 * model: delay = GPU busy that long more before each collective), late-cpu (rank, delay: the rank calls each
 * collective that long after its GPU finished the previous one; nccl model), congestion (node, device, fraction,
 * for), nic-down (node, device, for), hang (rank); each with at and optional for (duration).
 * {@link #REAL_SOCKET_PAIR} is the real traces' shape (two ranks over sockets) for the nccl model.
 */
public final class Scenario {
    /** The simulated hosts' default name prefix. */
    public static final String DEFAULT_HOSTS = "sim";

    public static final String ALGO_RING = "ring";
    public static final String ALGO_TREE = "tree";
    public static final String ALGO_SENDRECV = "sendrecv";
    public static final String ALGO_MIXED = "mixed";
    /** Transports: IB verbs (credits, QP work requests; the default) or NCCL's socket transport (real traces). */
    public static final String TRANSPORT_IB = "ib";

    public static final String TRANSPORT_SOCKET = "socket";
    /** Simulator models: the first one, the labelled suite's (default), and the one calibrated on real NCCL. */
    public static final String MODEL_CLASSIC = "classic";

    public static final String MODEL_NCCL = "nccl";
    /**
     * The real traces' machine and job as the nccl model sees it (docs/simulator-calibration.md): two ranks on one
     * host over NCCL's socket transport, two channels, back-to-back collectives, the CPU up to 10 ahead and a
     * synchronize every 10; add {@code size=} (and a fault). Bandwidths and delays calibrated on the traces.
     */
    public static final String REAL_SOCKET_PAIR = "nodes=1,gpus=2,channels=2,model=nccl,transport=socket,bw=10e9,"
            + "gpubw=7e9,latency=5us,gap=20us,ahead=10,sync=10,cpu=25us,netnoise=0.15";

    private final String name;
    private final String hosts;
    private final int nodes;
    private final int gpus;
    private final int channels;
    private final long sizeBytes;
    private final long seed;
    private final long durationNs;
    private final String algo;
    private final double linkBytesPerSecond;
    private final long latencyNs;
    private final long stepBytes;
    private final int nicsPerNode;
    private final long gapNs;
    private final double jitter;
    private final boolean bursty;
    private final boolean clockOffsets;
    private final long epochNs;
    private final long failoverNs;
    private final double gpuBytesPerSecond;
    private final String model;
    private final String transport;
    private final int ahead;
    private final int syncEvery;
    private final long cpuNs;
    private final double netNoise;
    private final List<Fault> faults;

    private Scenario(final Builder b) {
        name = b.name;
        hosts = b.hosts;
        nodes = b.nodes;
        gpus = b.gpus;
        channels = b.channels;
        sizeBytes = b.sizeBytes;
        seed = b.seed;
        durationNs = b.durationNs;
        algo = b.algo;
        linkBytesPerSecond = b.linkBytesPerSecond;
        latencyNs = b.latencyNs;
        stepBytes = b.stepBytes;
        nicsPerNode = b.nicsPerNode <= 0 ? b.gpus : b.nicsPerNode;
        gapNs = b.gapNs;
        jitter = b.jitter;
        bursty = b.bursty;
        clockOffsets = b.clockOffsets;
        epochNs = b.epochNs;
        failoverNs = b.failoverNs;
        gpuBytesPerSecond = b.gpuBytesPerSecond;
        model = b.model;
        transport = b.transport;
        ahead = b.ahead;
        syncEvery = b.syncEvery;
        cpuNs = b.cpuNs;
        netNoise = b.netNoise;
        faults = Collections.unmodifiableList(new ArrayList<>(b.faults));
        validate();
    }

    private void validate() {
        if (nodes < 1 || gpus < 1 || nodes * gpus < 2) {
            throw new IllegalArgumentException("need at least 2 ranks: nodes=" + nodes + ", gpus=" + gpus);
        }
        if (channels < 1 || channels > 64) {
            throw new IllegalArgumentException("channels must be 1..64, was " + channels);
        }
        if (sizeBytes < 1024) {
            throw new IllegalArgumentException("size must be >= 1K, was " + sizeBytes);
        }
        if (!List.of(ALGO_RING, ALGO_TREE, ALGO_SENDRECV, ALGO_MIXED).contains(algo)) {
            throw new IllegalArgumentException("algo must be ring, tree, sendrecv or mixed, was " + algo);
        }
        if (!List.of(MODEL_CLASSIC, MODEL_NCCL).contains(model)) {
            throw new IllegalArgumentException("model must be classic or nccl, was " + model);
        }
        if (!List.of(TRANSPORT_IB, TRANSPORT_SOCKET).contains(transport)) {
            throw new IllegalArgumentException("transport must be ib or socket, was " + transport);
        }
        if (ahead < 1 || syncEvery < 0 || cpuNs < 0 || netNoise < 0 || netNoise > 2) {
            throw new IllegalArgumentException("need ahead >= 1, sync >= 0, cpu >= 0, 0 <= netnoise <= 2: ahead="
                    + ahead + ", sync=" + syncEvery + ", cpu=" + cpuNs + ", netnoise=" + netNoise);
        }
        if (nicsPerNode > gpus) {
            throw new IllegalArgumentException("nics must be <= gpus, was " + nicsPerNode);
        }
        final int ranks = nodes * gpus;
        for (final Fault f : faults) {
            if (f.fraction() <= 0 || f.fraction() > 1) {
                throw new IllegalArgumentException("fault fraction must be in (0, 1]: " + f);
            }
            if (f.delayNs() < 0 || (f.cpu() && f.delayNs() <= 0)) {
                throw new IllegalArgumentException("fault delay must be >= 0 (late-cpu: > 0): " + f);
            }
            if (f.delayNs() > 0 && !MODEL_NCCL.equals(model)) {
                throw new IllegalArgumentException("a fault delay (late-cpu, slow-gpu delay=) needs model=nccl: " + f);
            }
            switch (f.kind()) {
                case SLOW_LINK:
                    if (f.peer() < 0 || f.peer() >= ranks || f.peer() == f.rank()) {
                        throw new IllegalArgumentException("slow-link needs a peer rank other than rank: " + f);
                    }
                // fall through
                case SLOW_NODE:
                case HANG:
                    if (f.rank() < 0 || f.rank() >= ranks) {
                        throw new IllegalArgumentException("fault rank must be 0.." + (ranks - 1) + ": " + f);
                    }
                    break;
                default:
                    if (f.node() < 0 || f.node() >= nodes || f.device() < 0 || f.device() >= nicsPerNode) {
                        throw new IllegalArgumentException("fault needs node 0.." + (nodes - 1) + " and device 0.."
                                + (nicsPerNode - 1) + ": " + f);
                    }
            }
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        final Builder b = new Builder();
        b.name = name;
        b.hosts = hosts;
        b.nodes = nodes;
        b.gpus = gpus;
        b.channels = channels;
        b.sizeBytes = sizeBytes;
        b.seed = seed;
        b.durationNs = durationNs;
        b.algo = algo;
        b.linkBytesPerSecond = linkBytesPerSecond;
        b.latencyNs = latencyNs;
        b.stepBytes = stepBytes;
        b.nicsPerNode = nicsPerNode;
        b.gapNs = gapNs;
        b.jitter = jitter;
        b.bursty = bursty;
        b.clockOffsets = clockOffsets;
        b.epochNs = epochNs;
        b.failoverNs = failoverNs;
        b.gpuBytesPerSecond = gpuBytesPerSecond;
        b.model = model;
        b.transport = transport;
        b.ahead = ahead;
        b.syncEvery = syncEvery;
        b.cpuNs = cpuNs;
        b.netNoise = netNoise;
        b.faults.addAll(faults);
        return b;
    }

    public String name() {
        return name;
    }

    public int nodes() {
        return nodes;
    }

    public int gpusPerNode() {
        return gpus;
    }

    public int ranks() {
        return nodes * gpus;
    }

    public int channels() {
        return channels;
    }

    public long sizeBytes() {
        return sizeBytes;
    }

    /** The simulated hosts' name prefix ({@code <hosts>-node-<n>}). */
    public String hosts() {
        return hosts;
    }

    public long seed() {
        return seed;
    }

    public long durationNs() {
        return durationNs;
    }

    public String algo() {
        return algo;
    }

    public double linkBytesPerSecond() {
        return linkBytesPerSecond;
    }

    public long latencyNs() {
        return latencyNs;
    }

    public long stepBytes() {
        return stepBytes;
    }

    public int nicsPerNode() {
        return nicsPerNode;
    }

    public long gapNs() {
        return gapNs;
    }

    public double jitter() {
        return jitter;
    }

    public boolean bursty() {
        return bursty;
    }

    public boolean clockOffsets() {
        return clockOffsets;
    }

    /** What every host's clock reads at the simulation's start (0 unless given). */
    public long epochNs() {
        return epochNs;
    }

    public long failoverNs() {
        return failoverNs;
    }

    public double gpuBytesPerSecond() {
        return gpuBytesPerSecond;
    }

    /** {@link #MODEL_CLASSIC} or {@link #MODEL_NCCL} (see {@link ClusterSimulator}). */
    public String model() {
        return model;
    }

    /** {@link #TRANSPORT_IB} or {@link #TRANSPORT_SOCKET} (model nccl). */
    public String transport() {
        return transport;
    }

    public boolean socket() {
        return TRANSPORT_SOCKET.equals(transport);
    }

    /** How many collectives a rank's CPU may call ahead of its GPU (the ops it posts ahead), at least 1. */
    public int ahead() {
        return ahead;
    }

    /** Every this many collectives the CPUs wait for every GPU (a synchronize and barrier); 0 = never. */
    public int syncEvery() {
        return syncEvery;
    }

    /** CPU time between two collective calls of a rank (host enqueue). */
    public long cpuNs() {
        return cpuNs;
    }

    /**
     * Slow network-rate noise: every link's rate is scaled by a log-normal factor of this sigma that changes every
     * few ms (real socket links vary ±10–40 % between 25 ms windows); 0 = none.
     */
    public double netNoise() {
        return netNoise;
    }

    public List<Fault> faults() {
        return faults;
    }

    /** The node of a rank (ranks are node-major: rank = node × gpus + local GPU). */
    public int nodeOf(final int rank) {
        return rank / gpus;
    }

    /** The spec that {@link #parse} reads back to an equal scenario. */
    public String toSpec() {
        final StringBuilder sb = new StringBuilder();
        sb.append("name=")
                .append(name)
                .append(",nodes=")
                .append(nodes)
                .append(",gpus=")
                .append(gpus)
                .append(",channels=")
                .append(channels)
                .append(",size=")
                .append(sizeBytes)
                .append(",seed=")
                .append(seed)
                .append(",duration=")
                .append(durationNs)
                .append(",algo=")
                .append(algo)
                .append(",bw=")
                .append((long) linkBytesPerSecond)
                .append(",latency=")
                .append(latencyNs)
                .append(",step=")
                .append(stepBytes)
                .append(",nics=")
                .append(nicsPerNode)
                .append(",gap=")
                .append(gapNs)
                .append(",jitter=")
                .append(jitter)
                .append(",bursty=")
                .append(bursty)
                .append(",offsets=")
                .append(clockOffsets)
                .append(",failover=")
                .append(failoverNs)
                .append(",gpubw=")
                .append((long) gpuBytesPerSecond)
                .append(",model=")
                .append(model)
                .append(",transport=")
                .append(transport)
                .append(",ahead=")
                .append(ahead)
                .append(",sync=")
                .append(syncEvery)
                .append(",cpu=")
                .append(cpuNs)
                .append(",netnoise=")
                .append(netNoise);
        if (epochNs != 0) {
            sb.append(",epoch=").append(epochNs);
        }
        if (!DEFAULT_HOSTS.equals(hosts)) {
            sb.append(",hosts=").append(hosts);
        }
        for (final Fault f : faults) {
            sb.append(",fault=").append(f.cpu() ? "late-cpu" : faultName(f.kind()));
            if (f.rank() >= 0) {
                sb.append(",rank=").append(f.rank());
            }
            if (f.peer() >= 0) {
                sb.append(",peer=").append(f.peer());
            }
            if (f.node() >= 0) {
                sb.append(",node=").append(f.node()).append(",device=").append(f.device());
            }
            sb.append(",fraction=").append(f.fraction()).append(",at=").append(f.atNs());
            if (f.delayNs() > 0) {
                sb.append(",delay=").append(f.delayNs());
            }
            if (f.durationNs() >= 0) {
                sb.append(",for=").append(f.durationNs());
            }
        }
        return sb.toString();
    }

    @Override
    public String toString() {
        return toSpec();
    }

    static String faultName(final AnomalyKind kind) {
        switch (kind) {
            case SLOW_LINK:
                return "slow-link";
            case SLOW_NODE:
                return "slow-gpu";
            case CONGESTION:
                return "congestion";
            case NIC_STALL:
                return "nic-down";
            default:
                return "hang";
        }
    }

    static AnomalyKind faultKind(final String name) {
        switch (name.toLowerCase(Locale.ROOT)) {
            case "slow-link":
                return AnomalyKind.SLOW_LINK;
            case "slow-gpu":
            case "slow-node":
            case "late-cpu":
                return AnomalyKind.SLOW_NODE;
            case "congestion":
                return AnomalyKind.CONGESTION;
            case "nic-down":
            case "nic-stall":
                return AnomalyKind.NIC_STALL;
            case "hang":
                return AnomalyKind.HANG;
            default:
                throw new IllegalArgumentException(
                        "unknown fault '" + name + "' (slow-link, slow-gpu, late-cpu, congestion, nic-down, hang)");
        }
    }

    /** Reads the compact spec (see the class comment); unknown keys are errors. */
    public static Scenario parse(final String spec) {
        final Builder b = builder();
        FaultBuilder fault = null;
        for (final String part : spec.split(",")) {
            final String item = part.trim();
            if (item.isEmpty()) {
                continue;
            }
            final int eq = item.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("expected key=value, got '" + item + "' in: " + spec);
            }
            final String key = item.substring(0, eq).trim().toLowerCase(Locale.ROOT);
            final String value = item.substring(eq + 1).trim();
            try {
                if ("fault".equals(key)) {
                    if (fault != null) {
                        b.fault(fault.build());
                    }
                    fault = new FaultBuilder(faultKind(value), "late-cpu".equalsIgnoreCase(value));
                    continue;
                }
                if (fault != null && fault.set(key, value)) {
                    continue;
                }
                b.set(key, value);
            } catch (final NumberFormatException e) {
                throw new IllegalArgumentException("bad value for " + key + ": '" + value + "' in: " + spec, e);
            }
        }
        if (fault != null) {
            b.fault(fault.build());
        }
        return b.build();
    }

    /** Bytes with an optional binary K/M/G suffix. */
    static long parseSize(final String v) {
        final String s = v.toUpperCase(Locale.ROOT).replace("IB", "").replace("B", "");
        final char last = s.charAt(s.length() - 1);
        final long mul = last == 'K' ? 1L << 10 : last == 'M' ? 1L << 20 : last == 'G' ? 1L << 30 : 1;
        final String num = mul == 1 ? s : s.substring(0, s.length() - 1);
        return (long) (Double.parseDouble(num) * mul);
    }

    /** Nanoseconds with an optional ns / us / ms / s suffix (plain numbers are ns). */
    static long parseTime(final String v) {
        final String s = v.toLowerCase(Locale.ROOT);
        final long mul;
        final String num;
        if (s.endsWith("ns")) {
            mul = 1;
            num = s.substring(0, s.length() - 2);
        } else if (s.endsWith("us")) {
            mul = 1_000;
            num = s.substring(0, s.length() - 2);
        } else if (s.endsWith("ms")) {
            mul = 1_000_000;
            num = s.substring(0, s.length() - 2);
        } else if (s.endsWith("s")) {
            mul = 1_000_000_000;
            num = s.substring(0, s.length() - 1);
        } else {
            mul = 1;
            num = s;
        }
        return Math.round(Double.parseDouble(num) * mul);
    }

    private static final class FaultBuilder {
        final AnomalyKind kind;
        int rank = -1;
        int peer = -1;
        int node = -1;
        int device = -1;
        double fraction = 1.0;
        long atNs;
        long durationNs = -1;
        long delayNs;
        final boolean cpu;

        FaultBuilder(final AnomalyKind kind, final boolean cpu) {
            this.kind = kind;
            this.cpu = cpu;
            if (kind == AnomalyKind.SLOW_LINK || kind == AnomalyKind.CONGESTION) {
                fraction = 0.5;
            } else if (kind == AnomalyKind.SLOW_NODE && !cpu) {
                fraction = 0.5;
            }
        }

        boolean set(final String key, final String value) {
            switch (key) {
                case "rank":
                    rank = Integer.parseInt(value);
                    return true;
                case "peer":
                    peer = Integer.parseInt(value);
                    return true;
                case "node":
                    node = Integer.parseInt(value);
                    return true;
                case "device":
                    device = Integer.parseInt(value);
                    return true;
                case "fraction":
                    fraction = Double.parseDouble(value);
                    return true;
                case "at":
                    atNs = parseTime(value);
                    return true;
                case "for":
                    durationNs = parseTime(value);
                    return true;
                case "delay":
                    delayNs = parseTime(value);
                    return true;
                default:
                    return false;
            }
        }

        Fault build() {
            int p = peer;
            int d = device;
            if (kind == AnomalyKind.SLOW_LINK && p < 0) {
                p = rank + 1;
            }
            if ((kind == AnomalyKind.CONGESTION || kind == AnomalyKind.NIC_STALL) && d < 0) {
                d = 0;
            }
            return new Fault(kind, rank, p, node, d, fraction, atNs, durationNs, delayNs, cpu);
        }
    }

    /** Builds a {@link Scenario}; defaults: 2 nodes × 4 GPUs, 2 channels, 8 MiB ring AllReduce, 300 ms. */
    public static final class Builder {
        String name = "custom";
        String hosts = DEFAULT_HOSTS;
        int nodes = 2;
        int gpus = 4;
        int channels = 2;
        long sizeBytes = 8L << 20;
        long seed = 1;
        long durationNs = 300_000_000L;
        String algo = ALGO_RING;
        double linkBytesPerSecond = 25e9;
        long latencyNs = 2_000;
        long stepBytes = 512L << 10;
        int nicsPerNode = -1;
        long gapNs = 200_000;
        double jitter = 0.05;
        boolean bursty;
        boolean clockOffsets;
        long epochNs;
        long failoverNs = 10_000_000L;
        double gpuBytesPerSecond = 200e9;
        String model = MODEL_CLASSIC;
        String transport = TRANSPORT_IB;
        int ahead = 4;
        int syncEvery;
        long cpuNs = 25_000;
        double netNoise;
        final List<Fault> faults = new ArrayList<>();

        private Builder() {}

        void set(final String key, final String value) {
            switch (key) {
                case "name":
                    name = value;
                    break;
                case "hosts":
                    if (!value.matches("[A-Za-z0-9][A-Za-z0-9._-]*")) {
                        throw new IllegalArgumentException("hosts must be a host name prefix (letters, digits, . _ -)");
                    }
                    hosts = value;
                    break;
                case "nodes":
                    nodes = Integer.parseInt(value);
                    break;
                case "gpus":
                    gpus = Integer.parseInt(value);
                    break;
                case "channels":
                    channels = Integer.parseInt(value);
                    break;
                case "size":
                    sizeBytes = parseSize(value);
                    break;
                case "seed":
                    seed = Long.parseLong(value);
                    break;
                case "duration":
                    durationNs = parseTime(value);
                    break;
                case "algo":
                    algo = value.toLowerCase(Locale.ROOT);
                    break;
                case "bw":
                    linkBytesPerSecond = Double.parseDouble(value);
                    break;
                case "gpubw":
                    gpuBytesPerSecond = Double.parseDouble(value);
                    break;
                case "latency":
                    latencyNs = parseTime(value);
                    break;
                case "step":
                    stepBytes = parseSize(value);
                    break;
                case "nics":
                    nicsPerNode = Integer.parseInt(value);
                    break;
                case "gap":
                    gapNs = parseTime(value);
                    break;
                case "jitter":
                    jitter = Double.parseDouble(value);
                    break;
                case "bursty":
                    bursty = Boolean.parseBoolean(value);
                    break;
                case "offsets":
                    clockOffsets = Boolean.parseBoolean(value);
                    break;
                case "epoch":
                    epochNs = parseTime(value);
                    break;
                case "failover":
                    failoverNs = parseTime(value);
                    break;
                case "model":
                    model = value.toLowerCase(Locale.ROOT);
                    break;
                case "transport":
                    transport = value.toLowerCase(Locale.ROOT);
                    break;
                case "ahead":
                    ahead = Integer.parseInt(value);
                    break;
                case "sync":
                    syncEvery = Integer.parseInt(value);
                    break;
                case "cpu":
                    cpuNs = parseTime(value);
                    break;
                case "netnoise":
                    netNoise = Double.parseDouble(value);
                    break;
                default:
                    throw new IllegalArgumentException("unknown scenario key '" + key + "'");
            }
        }

        public Builder name(final String v) {
            name = v;
            return this;
        }

        public Builder nodes(final int v) {
            nodes = v;
            return this;
        }

        public Builder gpusPerNode(final int v) {
            gpus = v;
            return this;
        }

        public Builder channels(final int v) {
            channels = v;
            return this;
        }

        public Builder sizeBytes(final long v) {
            sizeBytes = v;
            return this;
        }

        public Builder seed(final long v) {
            seed = v;
            return this;
        }

        public Builder durationNs(final long v) {
            durationNs = v;
            return this;
        }

        public Builder algo(final String v) {
            algo = v;
            return this;
        }

        public Builder linkBytesPerSecond(final double v) {
            linkBytesPerSecond = v;
            return this;
        }

        public Builder gpuBytesPerSecond(final double v) {
            gpuBytesPerSecond = v;
            return this;
        }

        public Builder latencyNs(final long v) {
            latencyNs = v;
            return this;
        }

        public Builder stepBytes(final long v) {
            stepBytes = v;
            return this;
        }

        public Builder nicsPerNode(final int v) {
            nicsPerNode = v;
            return this;
        }

        public Builder gapNs(final long v) {
            gapNs = v;
            return this;
        }

        public Builder jitter(final double v) {
            jitter = v;
            return this;
        }

        public Builder bursty(final boolean v) {
            bursty = v;
            return this;
        }

        public Builder clockOffsets(final boolean v) {
            clockOffsets = v;
            return this;
        }

        public Builder epochNs(final long v) {
            epochNs = v;
            return this;
        }

        public Builder failoverNs(final long v) {
            failoverNs = v;
            return this;
        }

        public Builder model(final String v) {
            model = v;
            return this;
        }

        public Builder transport(final String v) {
            transport = v;
            return this;
        }

        public Builder ahead(final int v) {
            ahead = v;
            return this;
        }

        public Builder syncEvery(final int v) {
            syncEvery = v;
            return this;
        }

        public Builder cpuNs(final long v) {
            cpuNs = v;
            return this;
        }

        public Builder netNoise(final double v) {
            netNoise = v;
            return this;
        }

        public Builder fault(final Fault f) {
            faults.add(f);
            return this;
        }

        public Scenario build() {
            return new Scenario(this);
        }
    }

    // The labelled suite.

    private static final Map<String, String> BUILT_IN = new LinkedHashMap<>();

    static {
        // Fault-free, with noise (jitter, idle gaps, bursty sizes, clock offsets).
        put("clean-ring-2x4", "nodes=2,gpus=4,channels=2,size=8M,seed=101");
        put("clean-tree-2x4", "nodes=2,gpus=4,channels=2,size=8M,seed=102,algo=tree");
        put("clean-sendrecv-2x4", "nodes=2,gpus=4,channels=2,size=4M,seed=103,algo=sendrecv");
        put("clean-mixed-4x4-bursty", "nodes=4,gpus=4,channels=2,size=4M,seed=104,algo=mixed,bursty=true");
        put("clean-ring-4x8-1M", "nodes=4,gpus=8,channels=2,size=1M,seed=105");
        put("clean-ring-2x8-offsets", "nodes=2,gpus=8,channels=4,size=16M,seed=106,offsets=true");
        put("clean-tree-4x2-bursty", "nodes=4,gpus=2,channels=2,size=2M,seed=107,algo=tree,bursty=true");
        put(
                "clean-mixed-2x4-noisy",
                "nodes=2,gpus=4,channels=2,size=8M,seed=108,algo=mixed,jitter=0.15," + "bursty=true");
        // Slow link: one direction at 70 %, 50 %, 30 % of its bandwidth.
        put(
                "slow-link-ring-2x4-70",
                "nodes=2,gpus=4,channels=2,size=8M,seed=111," + "fault=slow-link,rank=3,peer=4,fraction=0.7,at=100ms");
        put(
                "slow-link-ring-2x4-50",
                "nodes=2,gpus=4,channels=2,size=8M,seed=12," + "fault=slow-link,rank=3,peer=4,fraction=0.5,at=100ms");
        put(
                "slow-link-ring-2x4-50-1M",
                "nodes=2,gpus=4,channels=2,size=1M,seed=112," + "fault=slow-link,rank=6,peer=7,fraction=0.5,at=90ms");
        put(
                "slow-link-ring-4x8-30",
                "nodes=4,gpus=8,channels=2,size=4M,seed=113,"
                        + "fault=slow-link,rank=13,peer=14,fraction=0.3,at=100ms");
        put(
                "slow-link-tree-2x4-70",
                "nodes=2,gpus=4,channels=2,size=8M,seed=114,algo=tree,"
                        + "fault=slow-link,rank=2,peer=0,fraction=0.7,at=100ms");
        put(
                "slow-link-sendrecv-2x4-60",
                "nodes=2,gpus=4,channels=2,size=4M,seed=115,algo=sendrecv,"
                        + "fault=slow-link,rank=1,peer=5,fraction=0.6,at=100ms");
        put(
                "slow-link-tree-4x4-50",
                "nodes=4,gpus=4,channels=2,size=8M,seed=116,algo=tree,"
                        + "fault=slow-link,rank=11,peer=5,fraction=0.5,at=100ms");
        put(
                "slow-link-ring-2x4-offsets-70",
                "nodes=2,gpus=4,channels=2,size=8M,seed=117,offsets=true,"
                        + "fault=slow-link,rank=5,peer=6,fraction=0.7,at=120ms,for=60ms");
        // Slow GPU (compute straggler) at 1/2, 1/3, 1/4 of its speed.
        put(
                "slow-gpu-ring-2x4-50",
                "nodes=2,gpus=4,channels=2,size=8M,seed=121," + "fault=slow-gpu,rank=2,fraction=0.5,at=100ms");
        put(
                "slow-gpu-ring-4x4-33",
                "nodes=4,gpus=4,channels=2,size=4M,seed=122," + "fault=slow-gpu,rank=9,fraction=0.33,at=100ms");
        put(
                "slow-gpu-tree-2x4-50",
                "nodes=2,gpus=4,channels=2,size=8M,seed=123,algo=tree,"
                        + "fault=slow-gpu,rank=5,fraction=0.5,at=100ms");
        put(
                "slow-gpu-sendrecv-2x4-25",
                "nodes=2,gpus=4,channels=2,size=4M,seed=124,algo=sendrecv,"
                        + "fault=slow-gpu,rank=6,fraction=0.25,at=100ms");
        put(
                "slow-gpu-mixed-2x8-33",
                "nodes=2,gpus=8,channels=2,size=4M,seed=125,algo=mixed,"
                        + "fault=slow-gpu,rank=10,fraction=0.33,at=100ms");
        // Congestion on one NIC (two GPUs per NIC), ramping in, lasting 60 ms, at 70 %, 50 %, 30 %.
        put(
                "congestion-ring-2x4-70",
                "nodes=2,gpus=4,nics=2,channels=2,size=8M,seed=131,"
                        + "fault=congestion,node=1,device=0,fraction=0.7,at=100ms,for=60ms");
        put(
                "congestion-ring-2x4-50",
                "nodes=2,gpus=4,nics=2,channels=2,size=8M,seed=132,"
                        + "fault=congestion,node=0,device=1,fraction=0.5,at=100ms,for=60ms");
        put(
                "congestion-tree-2x8-50",
                "nodes=2,gpus=8,nics=4,channels=2,size=8M,seed=133,algo=tree,"
                        + "fault=congestion,node=1,device=2,fraction=0.5,at=100ms,for=60ms");
        put(
                "congestion-sendrecv-4x4-30",
                "nodes=4,gpus=4,nics=2,channels=2,size=4M,seed=134,algo=sendrecv,"
                        + "fault=congestion,node=2,device=1,fraction=0.3,at=100ms,for=60ms");
        put(
                "congestion-ring-4x8-50",
                "nodes=4,gpus=8,nics=4,channels=2,size=8M,seed=135,"
                        + "fault=congestion,node=3,device=1,fraction=0.5,at=100ms,for=60ms");
        // NIC port down: its QPs stall for the failover delay, then move to the next device.
        put(
                "nic-down-ring-2x4",
                "nodes=2,gpus=4,channels=2,size=8M,seed=141," + "fault=nic-down,node=0,device=1,at=100ms,for=80ms");
        put(
                "nic-down-tree-2x4",
                "nodes=2,gpus=4,channels=2,size=8M,seed=142,algo=tree,"
                        + "fault=nic-down,node=1,device=2,at=100ms,for=80ms");
        put(
                "nic-down-sendrecv-4x4",
                "nodes=4,gpus=4,channels=2,size=4M,seed=143,algo=sendrecv,"
                        + "fault=nic-down,node=3,device=0,at=100ms,for=80ms");
        put(
                "nic-down-ring-2x8-nics4",
                "nodes=2,gpus=8,nics=4,channels=2,size=8M,seed=144,"
                        + "fault=nic-down,node=1,device=3,at=100ms,for=80ms");
        // Hang: one rank stops progressing.
        put("hang-ring-2x4", "nodes=2,gpus=4,channels=2,size=8M,seed=151,fault=hang,rank=5,at=100ms");
        put("hang-tree-2x4", "nodes=2,gpus=4,channels=2,size=8M,seed=152,algo=tree,fault=hang,rank=3,at=100ms");
        put(
                "hang-sendrecv-2x4",
                "nodes=2,gpus=4,channels=2,size=4M,seed=153,algo=sendrecv," + "fault=hang,rank=2,at=100ms");
        put("hang-ring-4x8-1M", "nodes=4,gpus=8,channels=2,size=1M,seed=154,fault=hang,rank=17,at=100ms");
        put(
                "hang-mixed-2x4-offsets",
                "nodes=2,gpus=4,channels=2,size=8M,seed=155,algo=mixed,offsets=true," + "fault=hang,rank=6,at=110ms");
    }

    private static void put(final String name, final String spec) {
        BUILT_IN.put(name, "duration=200ms," + spec);
    }

    /** The names of the labelled suite, in a stable order. */
    public static List<String> builtInNames() {
        return List.copyOf(BUILT_IN.keySet());
    }

    /** One scenario of the labelled suite by name. */
    public static Scenario builtIn(final String name) {
        final String spec = BUILT_IN.get(name);
        if (spec == null) {
            throw new IllegalArgumentException("no built-in scenario '" + name + "'; known: " + BUILT_IN.keySet());
        }
        return parse("name=" + name + "," + spec);
    }
}
