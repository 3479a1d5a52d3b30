package io.flowscope.api.summary;

/**
 * Codes of collective functions, algorithms and protocols (the names NCCL hands the profiler mapped to small
 * ints, without allocation), datatype sizes, and nccl-tests' bus-bandwidth factors.
 */
public final class Collectives {
    public static final int UNKNOWN = -1;

    public static final int ALL_REDUCE = 0;
    public static final int ALL_GATHER = 1;
    public static final int REDUCE_SCATTER = 2;
    public static final int BROADCAST = 3;
    public static final int REDUCE = 4;
    public static final int SEND = 5;
    public static final int RECV = 6;
    public static final int SEND_RECV = 7;

    public static final int ALGO_TREE = 0;
    public static final int ALGO_RING = 1;
    public static final int ALGO_COLLNET_DIRECT = 2;
    public static final int ALGO_COLLNET_CHAIN = 3;
    public static final int ALGO_NVLS = 4;
    public static final int ALGO_NVLS_TREE = 5;
    public static final int ALGO_PAT = 6;

    public static final int PROTO_LL = 0;
    public static final int PROTO_LL128 = 1;
    public static final int PROTO_SIMPLE = 2;

    private Collectives() {}

    /** "AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce", "Send", "Recv", "SendRecv"; else UNKNOWN. */
    public static int funcCode(final String name) {
        if (name == null) {
            return UNKNOWN;
        }
        switch (name) {
            case "AllReduce":
                return ALL_REDUCE;
            case "AllGather":
                return ALL_GATHER;
            case "ReduceScatter":
                return REDUCE_SCATTER;
            case "Broadcast":
                return BROADCAST;
            case "Reduce":
                return REDUCE;
            case "Send":
                return SEND;
            case "Recv":
                return RECV;
            case "SendRecv":
                return SEND_RECV;
            default:
                return UNKNOWN;
        }
    }

    public static int algoCode(final String name) {
        if (name == null) {
            return UNKNOWN;
        }
        if ("Tree".equalsIgnoreCase(name)) {
            return ALGO_TREE;
        }
        if ("Ring".equalsIgnoreCase(name)) {
            return ALGO_RING;
        }
        if ("CollNetDirect".equalsIgnoreCase(name) || "COLLNET_DIRECT".equalsIgnoreCase(name)) {
            return ALGO_COLLNET_DIRECT;
        }
        if ("CollNetChain".equalsIgnoreCase(name) || "COLLNET_CHAIN".equalsIgnoreCase(name)) {
            return ALGO_COLLNET_CHAIN;
        }
        if ("NVLS".equalsIgnoreCase(name)) {
            return ALGO_NVLS;
        }
        if ("NVLSTree".equalsIgnoreCase(name) || "NVLS_TREE".equalsIgnoreCase(name)) {
            return ALGO_NVLS_TREE;
        }
        return "PAT".equalsIgnoreCase(name) ? ALGO_PAT : UNKNOWN;
    }

    public static int protoCode(final String name) {
        if (name == null) {
            return UNKNOWN;
        }
        if ("LL".equalsIgnoreCase(name)) {
            return PROTO_LL;
        }
        if ("LL128".equalsIgnoreCase(name)) {
            return PROTO_LL128;
        }
        return "Simple".equalsIgnoreCase(name) ? PROTO_SIMPLE : UNKNOWN;
    }

    /** Bytes of an NCCL datatype name ("ncclFloat32", "ncclBfloat16", ...); 0 when unknown. */
    public static int datatypeSize(final String name) {
        if (name == null) {
            return 0;
        }
        switch (name) {
            case "ncclInt8":
            case "ncclChar":
            case "ncclUint8":
            case "ncclFloat8e4m3":
            case "ncclFloat8e5m2":
                return 1;
            case "ncclFloat16":
            case "ncclHalf":
            case "ncclBfloat16":
                return 2;
            case "ncclInt32":
            case "ncclInt":
            case "ncclUint32":
            case "ncclFloat32":
            case "ncclFloat":
                return 4;
            case "ncclInt64":
            case "ncclUint64":
            case "ncclFloat64":
            case "ncclDouble":
                return 8;
            default:
                return 0;
        }
    }

    /**
     * The bytes nccl-tests divides by the time for algorithm bandwidth: count × size, and for AllGather and
     * ReduceScatter (whose NCCL count is the per-rank count) count × size × nranks, the whole buffer.
     */
    public static long algorithmBytes(final int func, final long count, final int datatypeSize, final int nranks) {
        final long bytes = count * datatypeSize;
        return func == ALL_GATHER || func == REDUCE_SCATTER ? bytes * Math.max(1, nranks) : bytes;
    }

    /**
     * nccl-tests' bus-bandwidth factor: AllReduce 2(n−1)/n, AllGather and ReduceScatter (n−1)/n, Broadcast,
     * Reduce, Send, Recv, SendRecv 1; 0 for an unknown function or n &lt; 1.
     */
    public static double busFactor(final int func, final int nranks) {
        if (nranks < 1) {
            return 0;
        }
        switch (func) {
            case ALL_REDUCE:
                return 2.0 * (nranks - 1) / nranks;
            case ALL_GATHER:
            case REDUCE_SCATTER:
                return (double) (nranks - 1) / nranks;
            case BROADCAST:
            case REDUCE:
            case SEND:
            case RECV:
            case SEND_RECV:
                return 1.0;
            default:
                return 0;
        }
    }
}
