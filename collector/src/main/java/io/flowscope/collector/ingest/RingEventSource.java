package io.flowscope.collector.ingest;

import io.flowscope.api.input.HostIds;
import io.flowscope.api.input.TelemetryListener;
import io.flowscope.api.summary.Collectives;
import io.flowscope.ring.EventKind;
import io.flowscope.ring.RecordHandler;
import io.flowscope.ring.RecordLayout;
import io.flowscope.ring.RecordView;
import io.flowscope.ring.RingHeader;
import io.flowscope.ring.RingLayout;

/**
 * Adapts the ring reader to the window engine: a {@link RecordHandler} that turns ProxyOp and ProxyStep
 * records, and NetPlugin IB QP
 * records (START with netType 1 = work request posted, STOP = completed), Coll / P2p START and STOP, KernelCh
 * START (pTimer) and STATE 22 (stop pTimer) into {@link TelemetryListener} calls. Function, algorithm, protocol
 * and datatype names are mapped to {@link Collectives} codes once per string-table entry. No allocation (the communicator is resolved through the
 * view's cached tables). Other kinds are ignored for now.
 * <p>
 * Host: the ring's hostname, hashed once per ring ({@link #hostId(String)}, a stable 64-bit FNV-1a), is handed
 * to {@link TelemetryListener#onHost} whenever the record comes from another ring than the previous one.
 * <p>
 * Ranks: each communicator entry of a ring (its process's rank, the rank's CUDA device) is handed to
 * {@link TelemetryListener#onRingComm} once, before the first record handed on after the entry was published: the
 * entries published so far when a ring's records start or resume, and any newer one as soon as a record names it.
 * One int comparison per record; a header lookup per change of ring.
 * <p>
 * Keys: a record id is unique within its producer process; the key is the id XORed with salts of the host id
 * and the producer pid ({@link #key}), so the rings of several processes and hosts can feed one engine (a
 * collision of two live keys is possible in principle, with probability ~ live² / 2^64) and a process's
 * consecutive ids stay neighbours.
 */
public final class RingEventSource implements RecordHandler {
    private static final int PROXY_OP = EventKind.PROXY_OP.code();
    private static final int PROXY_STEP = EventKind.PROXY_STEP.code();
    private static final int NET_PLUGIN = EventKind.NET_PLUGIN.code();
    private static final int COLL = EventKind.COLL.code();
    private static final int P2P = EventKind.P2P.code();
    private static final int KERNEL_CH = EventKind.KERNEL_CH.code();
    private static final int KERNEL_CH_STOP = 22;
    private static final int UNRESOLVED = Integer.MIN_VALUE;

    private final TelemetryListener listener;
    private long records;
    private RingHeader lastHeader;
    private long hostId;
    private long keySalt;
    /** Per ring: how many of its communicator entries were handed on (entries are claimed in index order). */
    private final java.util.Map<RingHeader, int[]> commsHandedOn = new java.util.WeakHashMap<>();
    /** {@link #commsHandedOn} of the current ring. */
    private int[] commsOfRing;
    // Per ring, string-table index -> code (UNRESOLVED until the entry is published and looked up once).
    private final int[] funcCodes = new int[256];
    private final int[] algoCodes = new int[256];
    private final int[] protoCodes = new int[256];
    private final int[] datatypeSizes = new int[256];

    public RingEventSource(final TelemetryListener listener) {
        this.listener = listener;
    }

    @Override
    public void onRecord(final RecordView r) {
        final int kind = r.kindCode();
        if (kind != PROXY_OP
                && kind != PROXY_STEP
                && kind != NET_PLUGIN
                && kind != COLL
                && kind != P2P
                && kind != KERNEL_CH) {
            return;
        }
        records++;
        final RingHeader header = r.header();
        if (header != lastHeader) {
            lastHeader = header;
            hostId = hostId(header.hostname());
            keySalt = hostId * 0xC2B2AE3D27D4EB4FL;
            java.util.Arrays.fill(funcCodes, UNRESOLVED);
            java.util.Arrays.fill(algoCodes, UNRESOLVED);
            java.util.Arrays.fill(protoCodes, UNRESOLVED);
            java.util.Arrays.fill(datatypeSizes, UNRESOLVED);
            commsOfRing = commsHandedOn.computeIfAbsent(header, h -> new int[1]);
            handOnComms(header);
        }
        final int commIndex = r.commIndex();
        if (commIndex >= commsOfRing[0] && commIndex != RingLayout.UNKNOWN_COMM_INDEX) {
            handOnComms(header);
        }
        listener.onHost(hostId);
        final int pid = r.producerPid();
        final long key = key(pid, r.id() ^ keySalt);
        if (kind == KERNEL_CH) {
            if (r.isStart()) {
                listener.onKernelChStart(key, key(pid, r.parent() ^ keySalt), r.channel(), r.pTimer(), r.timeNs());
            } else if (r.isState() && r.state() == KERNEL_CH_STOP) {
                listener.onKernelChStop(key, r.stateArg(), r.timeNs());
            }
        } else if (kind == COLL || kind == P2P) {
            if (r.isStart()) {
                final boolean coll = kind == COLL;
                final int func = code(funcCodes, r, r.funcIndex(), 0);
                listener.onCollStart(
                        key,
                        r.commHash(),
                        r.rank(),
                        r.nranks(),
                        func,
                        coll ? code(algoCodes, r, r.algoIndex(), 1) : Collectives.UNKNOWN,
                        coll ? code(protoCodes, r, r.protoIndex(), 2) : Collectives.UNKNOWN,
                        r.count(),
                        code(datatypeSizes, r, r.datatypeIndex(), 3),
                        r.nChannels(),
                        coll ? r.seqNumber() : 0,
                        r.timeNs());
            } else if (r.isStop()) {
                listener.onCollStop(key, r.timeNs());
            }
        } else if (kind == NET_PLUGIN) {
            if (r.isStart()) {
                if (r.netType() == RecordLayout.NET_TYPE_IB) {
                    listener.onQpStart(key, r.device(), r.qpNum(), r.opcode(), r.length(), r.timeNs());
                }
            } else if (r.isStop()) {
                // A stop has no payload: a socket or unknown-plugin event's stop is an unknown key to the engine.
                listener.onQpStop(key, r.timeNs());
            }
        } else if (kind == PROXY_STEP) {
            if (r.isState()) {
                listener.onProxyStepState(key, r.state(), r.stateArg(), r.timeNs());
            } else if (r.isStart()) {
                listener.onProxyStepStart(key, key(pid, r.parent() ^ keySalt), r.step(), r.timeNs());
            } else if (r.isStop()) {
                listener.onProxyStepStop(key, r.timeNs());
            }
        } else if (r.isStart()) {
            listener.onProxyOpStart(key, r.commHash(), r.rank(), r.peer(), r.channel(), r.isSend(), r.timeNs());
        } else if (r.isStop()) {
            listener.onProxyOpStop(key, r.timeNs());
        }
    }

    /** Hands on the ring's communicator entries published since the last time, in index order. */
    private void handOnComms(final RingHeader header) {
        final int count = Math.min(header.commCount(), header.commCapacity());
        int i = commsOfRing[0];
        for (; i < count; i++) {
            final RingHeader.CommInfo c = header.comm(i);
            if (c == null) {
                break; // claimed, not yet published: handed on with a later record
            }
            listener.onRingComm(
                    hostId,
                    header.hostname(),
                    header.producerPid(),
                    c.commHash(),
                    c.rank(),
                    c.nranks(),
                    c.cudaDevice(),
                    c.pciBusId());
            if (!c.gpuUuid().isEmpty()) {
                listener.onRingGpuUuid(hostId, header.producerPid(), c.commHash(), c.rank(), c.gpuUuid());
            }
        }
        commsOfRing[0] = i;
    }

    /** The code of string-table entry {@code index}: which = 0 func, 1 algo, 2 proto, 3 datatype size. */
    private static int code(final int[] cache, final RecordView r, final int index, final int which) {
        final int cached = cache[index];
        if (cached != UNRESOLVED) {
            return cached;
        }
        final String name = r.string(index);
        final int code;
        switch (which) {
            case 0:
                code = Collectives.funcCode(name);
                break;
            case 1:
                code = Collectives.algoCode(name);
                break;
            case 2:
                code = Collectives.protoCode(name);
                break;
            default:
                code = Collectives.datatypeSize(name);
                break;
        }
        if (name != null) {
            cache[index] = code;
        }
        return code;
    }

    /** Records handed on so far. */
    public long records() {
        return records;
    }

    /** The host id of a hostname ({@link HostIds#of}: 64-bit FNV-1a of its chars, stable across runs and JVMs). */
    public static long hostId(final String hostname) {
        return HostIds.of(hostname);
    }

    /**
     * The engine key of record id {@code id} (already XORed with the host's salt) of process {@code pid}: the id
     * XORed with a mix of the pid. Keys of different processes and hosts stay apart (two live keys collide only
     * if their ids differ by exactly the XOR of their salts: probability ~ live² / 2^64), and the ids a process
     * numbers in order (per thread, in blocks) keep their order in the low bits, which the step table's direct
     * slots rely on for locality.
     */
    public static long key(final int pid, final long id) {
        long z = ((long) pid << 32 | pid & 0xFFFFFFFFL) * 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 31)) * 0xBF58476D1CE4E5B9L;
        return id ^ z ^ (z >>> 29);
    }
}
