package io.flowscope.api.summary;

/**
 * One finished collective (or P2p operation) of one rank: identity, size, GPU-timed duration and nccl-tests'
 * algorithm and bus bandwidth. A mutable record the engine fills and hands to a {@link CollectiveSink}.
 * <p>
 * GPU times are the KernelCh {@code pTimer}s ({@code %globaltimer} ns): start = the earliest channel start,
 * end = the latest channel stop (state 22). Without GPU times (no KernelCh children: sampling, mask) the
 * duration is the host span start → stop, and {@link #gpuTimed()} is false.
 */
public final class CollectiveSummary {
    private long hostId;
    private long collKey;
    private long commHash;
    private int rank;
    private int nranks;
    private long seqNumber;
    private int func;
    private int algo;
    private int proto;
    private long count;
    private int datatypeSize;
    private long bytes;
    private int nChannels;
    private int kernelChannels;
    private boolean complete;
    private boolean gpuTimed;
    private long hostStartNs;
    private long hostStopNs;
    private long gpuStartNs;
    private long gpuEndNs;
    private long gpuStartHostNs;
    private boolean gpuStartHostKnown;
    private long durationNs;
    private double algBandwidthBytesPerSecond;
    private double busBandwidthBytesPerSecond;

    /** A builder of a new summary (fields zero until set): for producers other than the engine, and for tests. */
    public static Builder builder() {
        return new Builder(new CollectiveSummary());
    }

    /** A builder that fills {@code reused} in place and builds that same record (the engine: no allocation). */
    public static Builder into(final CollectiveSummary reused) {
        return new Builder(reused);
    }

    /** Sets a summary's fields by name (see the getters for what each means); {@link #build} hands it out. */
    public static final class Builder {
        private final CollectiveSummary summary;

        private Builder(final CollectiveSummary summary) {
            this.summary = summary;
        }

        public Builder hostId(final long value) {
            summary.hostId = value;
            return this;
        }

        public Builder collKey(final long value) {
            summary.collKey = value;
            return this;
        }

        public Builder commHash(final long value) {
            summary.commHash = value;
            return this;
        }

        public Builder rank(final int value) {
            summary.rank = value;
            return this;
        }

        public Builder nranks(final int value) {
            summary.nranks = value;
            return this;
        }

        public Builder seqNumber(final long value) {
            summary.seqNumber = value;
            return this;
        }

        public Builder func(final int value) {
            summary.func = value;
            return this;
        }

        public Builder algo(final int value) {
            summary.algo = value;
            return this;
        }

        public Builder proto(final int value) {
            summary.proto = value;
            return this;
        }

        public Builder count(final long value) {
            summary.count = value;
            return this;
        }

        public Builder datatypeSize(final int value) {
            summary.datatypeSize = value;
            return this;
        }

        public Builder bytes(final long value) {
            summary.bytes = value;
            return this;
        }

        public Builder nChannels(final int value) {
            summary.nChannels = value;
            return this;
        }

        public Builder kernelChannels(final int value) {
            summary.kernelChannels = value;
            return this;
        }

        public Builder complete(final boolean value) {
            summary.complete = value;
            return this;
        }

        public Builder gpuTimed(final boolean value) {
            summary.gpuTimed = value;
            return this;
        }

        public Builder hostStartNs(final long value) {
            summary.hostStartNs = value;
            return this;
        }

        public Builder hostStopNs(final long value) {
            summary.hostStopNs = value;
            return this;
        }

        public Builder gpuStartNs(final long value) {
            summary.gpuStartNs = value;
            return this;
        }

        public Builder gpuEndNs(final long value) {
            summary.gpuEndNs = value;
            return this;
        }

        public Builder gpuStartHostNs(final long value) {
            summary.gpuStartHostNs = value;
            return this;
        }

        public Builder gpuStartHostKnown(final boolean value) {
            summary.gpuStartHostKnown = value;
            return this;
        }

        public Builder durationNs(final long value) {
            summary.durationNs = value;
            return this;
        }

        public Builder algBandwidthBytesPerSecond(final double value) {
            summary.algBandwidthBytesPerSecond = value;
            return this;
        }

        public Builder busBandwidthBytesPerSecond(final double value) {
            summary.busBandwidthBytesPerSecond = value;
            return this;
        }

        /** The summary (for {@link #into}, the reused record: valid until the builder sets it again). */
        public CollectiveSummary build() {
            return summary;
        }
    }

    public long hostId() {
        return hostId;
    }

    /** The producer's key of the Coll / P2p event. */
    public long collKey() {
        return collKey;
    }

    public long commHash() {
        return commHash;
    }

    public int rank() {
        return rank;
    }

    public int nranks() {
        return nranks;
    }

    public long seqNumber() {
        return seqNumber;
    }

    /** {@link Collectives} function code. */
    public int func() {
        return func;
    }

    public int algo() {
        return algo;
    }

    public int proto() {
        return proto;
    }

    public long count() {
        return count;
    }

    public int datatypeSize() {
        return datatypeSize;
    }

    /** {@link Collectives#algorithmBytes}: what the algorithm bandwidth divides. */
    public long bytes() {
        return bytes;
    }

    /** Channels the Coll event announced. */
    public int nChannels() {
        return nChannels;
    }

    /** KernelCh children that started and stopped. */
    public int kernelChannels() {
        return kernelChannels;
    }

    /** True when the Coll stopped and all its announced channels reported; false when emitted at the timeout. */
    public boolean complete() {
        return complete;
    }

    /** True when the duration is GPU time (KernelCh pTimers), false when it is the host span. */
    public boolean gpuTimed() {
        return gpuTimed;
    }

    public long hostStartNs() {
        return hostStartNs;
    }

    public long hostStopNs() {
        return hostStopNs;
    }

    /** Earliest KernelCh start pTimer (GPU clock); meaningful when {@link #gpuTimed()}. */
    public long gpuStartNs() {
        return gpuStartNs;
    }

    /** Latest KernelCh stop pTimer (GPU clock); meaningful when {@link #gpuTimed()}. */
    public long gpuEndNs() {
        return gpuEndNs;
    }

    /** {@link #gpuStartNs()} on the host clock (+ the host's GPU clock offset), when {@link #gpuStartHostKnown()}. */
    public long gpuStartHostNs() {
        return gpuStartHostNs;
    }

    public boolean gpuStartHostKnown() {
        return gpuStartHostKnown;
    }

    public long durationNs() {
        return durationNs;
    }

    /** bytes / duration (0 when the duration is not positive). */
    public double algBandwidthBytesPerSecond() {
        return algBandwidthBytesPerSecond;
    }

    /** algorithm bandwidth × {@link Collectives#busFactor}. */
    public double busBandwidthBytesPerSecond() {
        return busBandwidthBytesPerSecond;
    }

    public void copyFrom(final CollectiveSummary o) {
        hostId = o.hostId;
        collKey = o.collKey;
        commHash = o.commHash;
        rank = o.rank;
        nranks = o.nranks;
        seqNumber = o.seqNumber;
        func = o.func;
        algo = o.algo;
        proto = o.proto;
        count = o.count;
        datatypeSize = o.datatypeSize;
        bytes = o.bytes;
        nChannels = o.nChannels;
        kernelChannels = o.kernelChannels;
        complete = o.complete;
        gpuTimed = o.gpuTimed;
        hostStartNs = o.hostStartNs;
        hostStopNs = o.hostStopNs;
        gpuStartNs = o.gpuStartNs;
        gpuEndNs = o.gpuEndNs;
        gpuStartHostNs = o.gpuStartHostNs;
        gpuStartHostKnown = o.gpuStartHostKnown;
        durationNs = o.durationNs;
        algBandwidthBytesPerSecond = o.algBandwidthBytesPerSecond;
        busBandwidthBytesPerSecond = o.busBandwidthBytesPerSecond;
    }

    @Override
    public String toString() {
        return "CollectiveSummary{host=" + Long.toHexString(hostId) + " comm=" + Long.toHexString(commHash) + " rank="
                + rank + "/" + nranks + " seq=" + seqNumber + " func=" + func + " algo=" + algo + " proto=" + proto
                + " bytes=" + bytes + " ch=" + kernelChannels + "/" + nChannels + (complete ? "" : " incomplete")
                + (gpuTimed ? " gpu" : " host")
                + " duration=" + durationNs + "ns algBw=" + algBandwidthBytesPerSecond + " busBw="
                + busBandwidthBytesPerSecond + '}';
    }
}
