/* fs_events.c - event -> record encoding; ids; per-thread serials and index. */
#include "fs_events.h"

#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "fs_clock.h"
#include "fs_sampling.h"

fs_ring_t* fs_events_ring;
uint32_t fs_events_mask;
#define FS_SERIAL_BLOCK 4096u

typedef struct {
    uint64_t serial_next;
    uint64_t serial_end;
    uint32_t thread_plus1; /* 0 = no index yet */
    uint32_t lane_owned;   /* 1: `lane` of `lane_ring` is this thread's alone */
    uint32_t lane;
    fs_ring_t* lane_ring;                 /* the ring `lane` belongs to; NULL = none taken yet */
} __attribute__((aligned(128))) fs_tls_t; /* a line pair of its own: see fs_tls */

/* Written per event. A library loaded by dlopen gets each thread's TLS block
 * from malloc, where two threads' blocks can sit side by side (threads share
 * malloc arenas once there are more than 8 per core): aligned and 128 bytes
 * long, this one shares no line with another thread's. */
static __thread fs_tls_t fs_tls;

/* This thread's &fs_tls, computed once per callback. In a library loaded by
 * dlopen the address comes from a call through a TLS descriptor, which the
 * compiler would rather repeat at every use than keep in a register (3-4 calls
 * a callback, per the disassembly); the empty asm makes the address opaque so
 * the one computed here is the one used. */
static inline __attribute__((always_inline)) fs_tls_t* fs_tls_self(void) {
    fs_tls_t* t = &fs_tls;
    __asm__("" : "+r"(t));
    return t;
}
/* Written rarely (a serial block per 4096 events, a thread index per thread),
 * but kept off the cache lines the hot path reads (fs_events_mask/_ring). */
static struct {
    uint64_t serial; /* serial 0 is never handed out */
    uint32_t thread;
    char pad[116];
} fs_counters __attribute__((aligned(128)));
#define fs_serial_counter fs_counters.serial
#define fs_thread_counter fs_counters.thread

/* Blocks are FS_SERIAL_BLOCK-aligned and the block size divides 2^48, so the
 * only serial that masks to 0 is the first of a block: skip it. */
static __attribute__((noinline)) uint64_t fs_serial_refill(fs_tls_t* t) {
    uint64_t b = __atomic_fetch_add(&fs_serial_counter, FS_SERIAL_BLOCK, __ATOMIC_RELAXED);
    t->serial_next = b;
    t->serial_end = b + FS_SERIAL_BLOCK;
    if ((b & FS_ID_SERIAL_MASK) == 0) t->serial_next++;
    return t->serial_next++ & FS_ID_SERIAL_MASK;
}

static inline uint64_t fs_next_serial(fs_tls_t* t) {
    if (FS_LIKELY(t->serial_next < t->serial_end)) return t->serial_next++ & FS_ID_SERIAL_MASK;
    return fs_serial_refill(t);
}

static __attribute__((noinline)) uint32_t fs_thread_assign(fs_tls_t* t) {
    t->thread_plus1 = __atomic_fetch_add(&fs_thread_counter, 1, __ATOMIC_RELAXED) + 1;
    return t->thread_plus1;
}

/* Owned lanes (RING.md): a thread gives its lane back when it exits, through
 * this key's destructor (its value: the lane's owner word), or when it moves
 * to a newer ring. A forked child owns nothing: its copies of the owner words
 * describe the parent's threads, which write the same file. */
static pthread_key_t fs_lane_key;
static int fs_lane_key_ok;
static int fs_lanes_forked;

static void fs_lane_give_back_at_exit(void* owner_word) {
    fs_ring_lane_give_back(owner_word);
}

static void fs_lanes_after_fork_child(void) {
    fs_lanes_forked = 1;
    fs_tls.lane_ring = NULL; /* the forking thread: take a shared lane at its next record */
    fs_tls.lane_owned = 0;
}

/* At load, before any ring exists: a fork at any later time finds the handler. */
__attribute__((constructor)) static void fs_events_load(void) {
    fs_lane_key_ok = pthread_key_create(&fs_lane_key, fs_lane_give_back_at_exit) == 0;
    if (pthread_atfork(NULL, NULL, fs_lanes_after_fork_child) != 0) fs_lanes_forked = 1; /* never own */
}

void fs_events_unload(void) {
    /* the destructor's code goes with the library: no thread may run it later */
    if (__atomic_exchange_n(&fs_lane_key_ok, 0, __ATOMIC_RELAXED)) pthread_key_delete(fs_lane_key);
}

static __attribute__((noinline)) void fs_lane_assign(fs_tls_t* t, fs_ring_t* r, uint32_t thread) {
    if (t->lane_owned) fs_ring_lane_give_back(&t->lane_ring->lane_local[t->lane].owned);
    uint32_t owned = 0;
    /* without the key a lane could never be given back: share instead */
    int key_ok = __atomic_load_n(&fs_lane_key_ok, __ATOMIC_RELAXED);
    t->lane = fs_ring_lane_take(r, thread, key_ok && !fs_lanes_forked, &owned);
    t->lane_owned = owned;
    t->lane_ring = r;
    if (key_ok) pthread_setspecific(fs_lane_key, owned ? (void*)&r->lane_local[t->lane].owned : NULL);
}

static inline fs_ring_t* fs_current_ring(void) {
    return __atomic_load_n(&fs_events_ring, __ATOMIC_ACQUIRE);
}

void fs_events_invalid(void) {
    fs_ring_t* r = fs_current_ring();
    if (r) fs_ring_count(r, FS_CNT_INVALID_CALLS);
}

/* Claims, writes and publishes one record; `t` is fs_tls_self(). `now` was read
 * by the caller as early as it knew the record would be written: `rdtsc` takes
 * 16-20 ns on the GPU hosts' vCPUs, and it is not serialising, so read before
 * the TLS call, the event id and the claim its latency runs beside theirs
 * instead of after them. Two threads of a shared lane may then claim in the
 * other order than they read the clock, by a few ns (as they could already
 * between claim and write); the reader's host merge allows 50 us of skew. */
static inline __attribute__((always_inline)) void fs_emit(fs_tls_t* t, fs_ring_t* r, uint64_t now,
                                                          uint32_t kind, uint32_t op, uint64_t id,
                                                          uint64_t parent, uint64_t p0, uint64_t p1,
                                                          uint64_t p2) {
    uint32_t th = t->thread_plus1;
    if (FS_UNLIKELY(th == 0)) th = fs_thread_assign(t);
    if (FS_UNLIKELY(t->lane_ring != r)) fs_lane_assign(t, r, th - 1);
    uint64_t pos;
    uint64_t w1 = fs_record_w1(kind, op, th - 1);
    if (FS_LIKELY(t->lane_owned)) {
        fs_record_t* slot = fs_ring_try_claim_owned(r, t->lane, &pos);
        if (FS_UNLIKELY(!slot)) return;
        fs_ring_write(slot, pos, w1, now, id, parent, p0, p1, p2);
        fs_ring_publish_owned(slot, pos);
        return;
    }
    fs_record_t* slot = fs_ring_try_claim(r, t->lane, &pos);
    if (FS_UNLIKELY(!slot)) return;
    fs_ring_write(slot, pos, w1, now, id, parent, p0, p1, p2);
    fs_ring_publish(r, slot, pos);
}

/* payload builder: 24 bytes at record offset 40 */
typedef union {
    uint8_t b[24];
    uint64_t w[3];
} fs_payload_t;

#define PL_U8(p, off, v) ((p).b[(off)-FS_REC_PAYLOAD_OFFSET] = (uint8_t)(v))
#define PL_U16(p, off, v)                                                                                    \
    do {                                                                                                     \
        uint16_t v_ = (uint16_t)(v);                                                                         \
        memcpy(&(p).b[(off)-FS_REC_PAYLOAD_OFFSET], &v_, 2);                                                 \
    } while (0)
#define PL_U32(p, off, v)                                                                                    \
    do {                                                                                                     \
        uint32_t v_ = (uint32_t)(v);                                                                         \
        memcpy(&(p).b[(off)-FS_REC_PAYLOAD_OFFSET], &v_, 4);                                                 \
    } while (0)
#define PL_U64(p, off, v)                                                                                    \
    do {                                                                                                     \
        uint64_t v_ = (uint64_t)(v);                                                                         \
        memcpy(&(p).b[(off)-FS_REC_PAYLOAD_OFFSET], &v_, 8);                                                 \
    } while (0)

static void fs_encode_net(fs_payload_t* p, const fs_nccl_net_plugin_t* np) {
    uint32_t plugin_id = (uint32_t)np->id;
    PL_U32(*p, FS_PL_NET_PLUGIN_ID, plugin_id);
    if (plugin_id == FS_NET_PLUGIN_ID_IB_V1 && np->data) {
        fs_nccl_net_ib_descr_v1_t ib;
        memcpy(&ib, np->data, sizeof ib); /* NCCL reuses the descriptor: copy now */
        if (ib.type != FS_NET_IB_EVENT_QP) return;
        PL_U8(*p, FS_PL_NET_TYPE, FS_NET_TYPE_IB_QP);
        PL_U8(*p, FS_PL_NET_IB_OPCODE, ib.qp.opcode);
        PL_U16(*p, FS_PL_NET_IB_DEVICE, ib.qp.device);
        PL_U32(*p, FS_PL_NET_IB_QPNUM, ib.qp.qpNum);
        PL_U32(*p, FS_PL_NET_IB_LENGTH, ib.qp.length);
        PL_U64(*p, FS_PL_NET_IB_WRID, ib.qp.wr_id);
    } else if (plugin_id == FS_NET_PLUGIN_ID_SOCK_V1 && np->data) {
        fs_nccl_net_sock_descr_v1_t so;
        memcpy(&so, np->data, sizeof so);
        if (so.type != FS_NET_SOCK_EVENT_SOCKET) return;
        PL_U8(*p, FS_PL_NET_TYPE, FS_NET_TYPE_SOCKET);
        PL_U8(*p, FS_PL_NET_SOCK_OP, so.sock.op);
        PL_U32(*p, FS_PL_NET_SOCK_FD, so.sock.fd);
        PL_U64(*p, FS_PL_NET_SOCK_LENGTH, so.sock.length);
    }
}

static inline void fs_encode_start(fs_ring_t* r, fs_payload_t* p, uint32_t kind,
                                   const fs_nccl_descr_v6_t* d) {
    switch (kind) {
    case FS_KIND_COLL:
        PL_U64(*p, FS_PL_COLL_SEQ48_CH8_WARPS8,
               (d->coll.seqNumber & FS_ID_SERIAL_MASK) | (uint64_t)d->coll.nChannels << 48 |
                   (uint64_t)d->coll.nWarps << 56);
        PL_U64(*p, FS_PL_COLL_COUNT, d->coll.count);
        PL_U32(*p, FS_PL_COLL_ROOT, d->coll.root);
        PL_U8(*p, FS_PL_COLL_FUNC, fs_ring_intern(r, d->coll.func));
        PL_U8(*p, FS_PL_COLL_DATATYPE, fs_ring_intern(r, d->coll.datatype));
        PL_U8(*p, FS_PL_COLL_ALGO, fs_ring_intern(r, d->coll.algo));
        PL_U8(*p, FS_PL_COLL_PROTO, fs_ring_intern(r, d->coll.proto));
        break;
    case FS_KIND_P2P:
        PL_U64(*p, FS_PL_P2P_COUNT, d->p2p.count);
        PL_U32(*p, FS_PL_P2P_PEER, d->p2p.peer);
        PL_U8(*p, FS_PL_P2P_FUNC, fs_ring_intern(r, d->p2p.func));
        PL_U8(*p, FS_PL_P2P_DATATYPE, fs_ring_intern(r, d->p2p.datatype));
        PL_U8(*p, FS_PL_P2P_NCHANNELS, d->p2p.nChannels);
        break;
    case FS_KIND_PROXY_OP:
        PL_U32(*p, FS_PL_PROXY_OP_PID, d->proxyOp.pid);
        PL_U32(*p, FS_PL_PROXY_OP_PEER, d->proxyOp.peer);
        PL_U32(*p, FS_PL_PROXY_OP_NSTEPS, d->proxyOp.nSteps);
        PL_U32(*p, FS_PL_PROXY_OP_CHUNK_SIZE, d->proxyOp.chunkSize);
        PL_U8(*p, FS_PL_PROXY_OP_CHANNEL, d->proxyOp.channelId);
        PL_U8(*p, FS_PL_PROXY_OP_IS_SEND, d->proxyOp.isSend);
        break;
    case FS_KIND_PROXY_STEP:
        PL_U32(*p, FS_PL_PROXY_STEP_STEP, d->proxyStep.step);
        break;
    case FS_KIND_KERNEL_CH:
        PL_U8(*p, FS_PL_KERNEL_CH_CHANNEL, d->kernelCh.channelId);
        PL_U64(*p, FS_PL_KERNEL_CH_PTIMER, d->kernelCh.pTimer);
        break;
    case FS_KIND_NET_PLUGIN:
        fs_encode_net(p, &d->netPlugin);
        break;
    case FS_KIND_GROUP_API:
        PL_U8(*p, FS_PL_GROUP_API_GRAPH_CAPTURED, d->groupApi.graphCaptured);
        PL_U32(*p, FS_PL_GROUP_API_GROUP_DEPTH, d->groupApi.groupDepth);
        break;
    case FS_KIND_COLL_API:
        PL_U64(*p, FS_PL_COLL_API_COUNT, d->collApi.count);
        PL_U32(*p, FS_PL_COLL_API_ROOT, d->collApi.root);
        PL_U8(*p, FS_PL_COLL_API_FUNC, fs_ring_intern(r, d->collApi.func));
        PL_U8(*p, FS_PL_COLL_API_DATATYPE, fs_ring_intern(r, d->collApi.datatype));
        PL_U8(*p, FS_PL_COLL_API_GRAPH_CAPTURED, d->collApi.graphCaptured);
        PL_U64(*p, FS_PL_COLL_API_STREAM, (uintptr_t)d->collApi.stream);
        break;
    case FS_KIND_P2P_API:
        PL_U64(*p, FS_PL_P2P_API_COUNT, d->p2pApi.count);
        PL_U8(*p, FS_PL_P2P_API_FUNC, fs_ring_intern(r, d->p2pApi.func));
        PL_U8(*p, FS_PL_P2P_API_DATATYPE, fs_ring_intern(r, d->p2pApi.datatype));
        PL_U8(*p, FS_PL_P2P_API_GRAPH_CAPTURED, d->p2pApi.graphCaptured);
        PL_U64(*p, FS_PL_P2P_API_STREAM, (uintptr_t)d->p2pApi.stream);
        break;
    case FS_KIND_KERNEL_LAUNCH:
        PL_U64(*p, FS_PL_KERNEL_LAUNCH_STREAM, (uintptr_t)d->kernelLaunch.stream);
        break;
    case FS_KIND_CE_COLL:
        PL_U64(*p, FS_PL_CE_COLL_SEQ_NUMBER, d->ceColl.seqNumber);
        PL_U64(*p, FS_PL_CE_COLL_COUNT, d->ceColl.count);
        PL_U32(*p, FS_PL_CE_COLL_ROOT, d->ceColl.root);
        PL_U8(*p, FS_PL_CE_COLL_FUNC, fs_ring_intern(r, d->ceColl.func));
        PL_U8(*p, FS_PL_CE_COLL_DATATYPE, fs_ring_intern(r, d->ceColl.datatype));
        PL_U8(*p, FS_PL_CE_COLL_SYNC_STRATEGY, fs_ring_intern(r, d->ceColl.syncStrategy));
        PL_U8(*p, FS_PL_CE_COLL_INTRA_BATCH_SYNC, d->ceColl.intraBatchSync);
        break;
    case FS_KIND_CE_SYNC:
        PL_U8(*p, FS_PL_CE_SYNC_IS_COMPLETE, d->ceCollSync.isComplete);
        PL_U32(*p, FS_PL_CE_SYNC_NRANKS, d->ceCollSync.nRanks);
        break;
    case FS_KIND_CE_BATCH:
        PL_U32(*p, FS_PL_CE_BATCH_NUM_OPS, d->ceCollBatch.numOps);
        PL_U8(*p, FS_PL_CE_BATCH_USE_INTRA_SYNC, d->ceCollBatch.useIntraSync);
        PL_U64(*p, FS_PL_CE_BATCH_TOTAL_BYTES, d->ceCollBatch.totalBytes);
        break;
    default: /* Group, ProxyCtrl: no payload */
        break;
    }
}

#define FS_SAMPLING_KINDS                                                                                    \
    (FS_EV_COLL | FS_EV_P2P | FS_EV_KERNEL_CH | FS_EV_GROUP_API | FS_EV_COLL_API | FS_EV_P2P_API |           \
     FS_EV_KERNEL_LAUNCH)

/* KernelCh sampling's view of a start: 0 = give NCCL a NULL handle, record nothing. */
static __attribute__((noinline)) int fs_sampling_start(fs_comm_ctx_t* ctx, uint32_t kind, uint64_t id,
                                                       const fs_nccl_descr_v6_t* d) {
    switch (kind) {
    case FS_KIND_KERNEL_CH:
        return fs_sampling_keep_kernel((uint64_t)(uintptr_t)d->parentObj);
    case FS_KIND_COLL:
    case FS_KIND_P2P:
        fs_sampling_op_start(id, (uint64_t)(uintptr_t)d->parentObj);
        return 1;
    case FS_KIND_KERNEL_LAUNCH:
        fs_sampling_launch();
        return 1;
    default:
        fs_sampling_api_start(ctx, kind, id, d);
        return 1;
    }
}

fs_nccl_result_t fs_events_start(fs_comm_ctx_t* ctx, void** eHandle, uint64_t type,
                                 const fs_nccl_descr_v6_t* d, uint32_t abi_types) {
    if (FS_UNLIKELY(!eHandle)) {
        fs_events_invalid();
        return FS_NCCL_SUCCESS;
    }
    *eHandle = NULL;
    if (FS_UNLIKELY(!ctx || ctx->magic != FS_CTX_LIVE || !d || type == 0 || (type & (type - 1)) ||
                    (type & ~(uint64_t)abi_types))) {
        fs_events_invalid();
        return FS_NCCL_SUCCESS;
    }
    uint32_t recorded = __atomic_load_n(&fs_events_mask, __ATOMIC_RELAXED) & (uint32_t)type;
    uint64_t now = recorded ? fs_clock_now_ns() : 0; /* first: see fs_emit */
    fs_tls_t* t = fs_tls_self();
    uint32_t kind = (uint32_t)__builtin_ctzll(type);
    uint64_t id = (uint64_t)kind << FS_ID_KIND_SHIFT | ctx->comm_bits | fs_next_serial(t);
    *eHandle = (void*)(uintptr_t)id;
    if (FS_UNLIKELY((type & FS_SAMPLING_KINDS) && __atomic_load_n(&fs_sampling_on, __ATOMIC_RELAXED)) &&
        !fs_sampling_start(ctx, kind, id, d)) {
        *eHandle = NULL; /* a KernelCh of a group not due for its communicator: NCCL drops it */
        return FS_NCCL_SUCCESS;
    }
    if (!recorded) return FS_NCCL_SUCCESS;
    fs_ring_t* r = fs_current_ring();
    if (FS_UNLIKELY(!r)) return FS_NCCL_SUCCESS;
    fs_payload_t p = {.w = {0, 0, 0}};
    fs_encode_start(r, &p, kind, d);
    fs_emit(t, r, now, kind, FS_OP_START, id, (uint64_t)(uintptr_t)d->parentObj, p.w[0], p.w[1], p.w[2]);
    return FS_NCCL_SUCCESS;
}

/* The ring a STOP/STATE of handle `id` goes to, or NULL: invalid handle (counted),
 * kind not recorded, or no ring open. */
static inline fs_ring_t* fs_ring_for_handle(uint64_t id, uint32_t kind) {
    if (FS_UNLIKELY(id == 0 || kind >= FS_KIND_COUNT)) {
        fs_events_invalid();
        return NULL;
    }
    if (!(__atomic_load_n(&fs_events_mask, __ATOMIC_RELAXED) & (1u << kind))) return NULL;
    return fs_current_ring();
}

fs_nccl_result_t fs_events_stop(void* eHandle) {
    uint64_t id = (uint64_t)(uintptr_t)eHandle;
    uint32_t kind = (uint32_t)(id >> FS_ID_KIND_SHIFT);
    fs_ring_t* r = fs_ring_for_handle(id, kind);
    if (FS_UNLIKELY(!r)) return FS_NCCL_SUCCESS;
    uint64_t now = fs_clock_now_ns(); /* before the TLS call: see fs_emit */
    fs_emit(fs_tls_self(), r, now, kind, FS_OP_STOP, id, 0, 0, 0, 0);
    return FS_NCCL_SUCCESS;
}

uint64_t fs_events_state_arg(int state, const fs_nccl_state_args_t* args) {
    if (!args) return 0;
    switch (state) {
    case FS_ST_PROXY_STEP_SEND_GPU_WAIT:
    case FS_ST_PROXY_STEP_SEND_WAIT:
    case FS_ST_PROXY_STEP_RECV_WAIT:
    case FS_ST_PROXY_STEP_RECV_FLUSH_WAIT:
    case FS_ST_PROXY_STEP_RECV_GPU_WAIT:
    case FS_ST_PROXY_STEP_SEND_PEER_WAIT:
        return args->proxyStep.transSize;
    case FS_ST_KERNEL_CH_STOP:
        return args->kernelCh.pTimer;
    case FS_ST_PROXY_CTRL_APPEND_END:
        return (uint64_t)(int64_t)args->proxyCtrl.appendedProxyOps;
    default:
        return 0;
    }
}

fs_nccl_result_t fs_events_state(void* eHandle, int state, const fs_nccl_state_args_t* args) {
    uint64_t id = (uint64_t)(uintptr_t)eHandle;
    uint32_t kind = (uint32_t)(id >> FS_ID_KIND_SHIFT);
    fs_ring_t* r = fs_ring_for_handle(id, kind);
    if (FS_UNLIKELY(!r)) return FS_NCCL_SUCCESS;
    uint64_t now = fs_clock_now_ns(); /* before the TLS call: see fs_emit */
    fs_emit(fs_tls_self(), r, now, kind, FS_OP_STATE, id, 0, (uint32_t)state,
            fs_events_state_arg(state, args), 0);
    return FS_NCCL_SUCCESS;
}
