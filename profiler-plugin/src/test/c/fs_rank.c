/*
 * fs_rank.c - one rank of a simulated NCCL job, driving the real plugin in real
 * time with the callback sequence NCCL 2.28 emits over sockets (issue #15,
 * acceptance 5). Start N of these, one per rank, each in its own UTS
 * namespace (`unshare --uts`: its own hostname, so its own host id and clock
 * domain for the engines), with the same --start-ns and options: every
 * process computes the whole job's schedule from the shared start time and the
 * operation index, and plays its own rank's part of it, so the waits of
 * different processes agree (a receive's data arrives when its sender's send
 * leaves, a send posts when its receiver's slot is free).
 *
 * The job: ring all-reduces of one communicator of N ranks, back to back at a
 * fixed period (--period-us). Per operation and rank: Group and Coll (start,
 * stop) when its CPU calls; per channel one send ProxyOp to the right
 * neighbour and one receive ProxyOp from the left, each with --steps ProxyStep
 * events (`step` = index within the op); 8 slots per connection.
 *
 *   send step: start, 8 (SendGPUWait) at once; 20 (SendPeerWait) when its GPU
 *              filled the slot; 9 (SendWait, transSize) when the receiver's
 *              slot is free (credit) too; stop when the data arrived + latency
 *   recv step: start, 10 (RecvWait) at once; 11 (RecvFlushWait, transSize) when
 *              the data arrives; 12 (RecvGPUWait) after the flush; stop when
 *              its GPU consumed it (in order)
 *
 * The data of send step s > 0 is what receive step s - 1 brought (ring
 * forwarding). Times: per-step transfer = chunk x ns per byte (x noise), GPU
 * work per step (x noise), a latency per message, start jitter per rank and op;
 * all noise is a hash of (seed, op, rank, channel, step), the same in every
 * process.
 *
 * Faults:
 *   --late-rank R --late-us X --late-from A --late-to B [--late-mode cpu|gpu]
 *       ops [A, B): rank R's CPU calls X late (cpu: its ProxyOps start late) or
 *       its GPU is busy X before the op (gpu: ops on time, first data late)
 *   --slow-rank R --slow-factor F --slow-from A --slow-to B
 *       ops [A, B): the network time of R's sends (R -> R+1) x F
 *   --hang-rank R --hang-at H --hang-ms S
 *       rank R stops calling NCCL for S ms before op H: it emits nothing, the
 *       others post op H and wait (their receives from it stay outstanding,
 *       nothing new for those steps); every later op starts S ms later
 *   --congest-host H --congest-nic D --congest-factor F --congest-from A --congest-to B
 *       ops [A, B): NIC D of host H congested (incast, a congested switch port):
 *       the network time of every send through it x F, so the sends of all the
 *       host's ranks on that NIC slow together, their work requests take longer
 *       and their steps queue in SendWait (9) behind each other on the wire
 *
 * Net plugin events (--net ib): what NCCL built with NET_PROFILER=1 emits over
 * its IB transport, NetPlugin events (plugin id 0x10001, QP descriptor) whose
 * parent is the ProxyStep: per send step and QP one send work request (device
 * = the rank's NIC, its QP, RDMA_WRITE_WITH_IMM, length = the step's bytes / QPs)
 * started just before SendWait (9) (`isend` posts it) and stopped just before
 * the step stops (its completion: the data arrived and was acknowledged); per
 * receive step and QP one receive work request (device and QP set; opcode and
 * length left 0: NCCL leaves them stale) started just before RecvWait (10)
 * (`irecv` posts it) and stopped just before RecvFlushWait (11) (the data
 * arrived). Topology: --ranks-per-host G ranks per host (host = rank / G; the
 * caller gives the G processes of a host one hostname), --nics N NICs per host,
 * rank r on NIC (r % G) x N / G (so G / N ranks share a NIC, as GPUs share the
 * NIC of their PCIe switch), --qps Q QPs per connection (NCCL_IB_QPS_PER_CONNECTION);
 * QP numbers unique per host: 0x100 + ((local rank x 32 + channel) x 2 + dir) x Q + q.
 * Every hop of the ring is a network hop (as the cluster simulator's, or NCCL with
 * NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1): a host's ranks all send through its NICs.
 * --local-ranks L: this process plays ranks --rank .. --rank + L - 1 (of one host),
 * one communicator (plugin init) each, their records in one ring in time order
 * (NCCL's one process driving several GPUs); default 1.
 *
 * Output (stdout, one line at the end): rank (the first played), hostname, pid,
 * ranks played, records emitted (each recorded plugin call; qp_records: those of
 * work requests), emission lateness against the schedule (how far the
 * real call came after its scheduled instant: scheduling noise of this
 * machine), the ring file.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fs_nccl_abi.h"
#define FS_PROGRAM "fs_rank"
#include "fs_test_util.h"

#define SLOTS                      8 /* NCCL_STEPS: buffer slots per connection */
#define MAX_RANKS                  64
#define MAX_CH                     32
#define MAX_STEPS                  128
#define LIVE_OPS                   64 /* ops in flight at once in this process */
#define MAX_QPS                    8  /* NCCL's MAX_QPS_PER_REQ: work-request events per request */
#define MAX_LOCAL                  8  /* ranks one process plays (--local-ranks) */
#define IBV_WR_RDMA_WRITE_WITH_IMM 1  /* libibverbs' enum ibv_wr_opcode */

static struct {
    const char* plugin;
    int abi;
    int rank, nranks;
    uint64_t start_ns;
    int ops;
    double period_us;
    int channels;
    int steps;
    long chunk;
    double ns_per_byte; /* per channel connection */
    double gpu_us;      /* GPU work per step */
    double lat_us;      /* per message (data and its ack) */
    double flush_us;
    double jitter_us;  /* start jitter per rank and op, uniform [0, jitter) */
    double noise;      /* relative noise on transfers and GPU work, uniform [-noise, +noise] */
    double coll_us;    /* Coll host span (enqueue) */
    double quantum_us; /* events due within this are emitted without sleeping */
    unsigned long long seed;
    uint64_t comm;
    const char* expect_host;
    int rt_priority; /* SCHED_FIFO priority, 0 = normal scheduling */
    /* faults */
    int late_rank, late_from, late_to, late_gpu;
    double late_us;
    int slow_rank, slow_from, slow_to;
    double slow_factor;
    int hang_rank, hang_at;
    double hang_ms;
    int congest_host, congest_nic, congest_from, congest_to;
    double congest_factor;
    /* net plugin events and topology */
    int net_ib;
    int ranks_per_host, nics, qps;
    int local_ranks; /* this process plays ranks rank .. rank + local_ranks - 1 */
} opt = {.abi = 5,
         .rank = -1,
         .nranks = 0,
         .ops = 1000,
         .period_us = 2500,
         .channels = 2,
         .steps = 0,
         .chunk = 524288,
         .ns_per_byte = 0.4,
         .gpu_us = 20,
         .lat_us = 5,
         .flush_us = 2,
         .jitter_us = 30,
         .noise = 0.1,
         .coll_us = 20,
         .quantum_us = 30,
         .seed = 1,
         .comm = 0xF1035C09E0000015ULL,
         .late_rank = -1,
         .late_from = 0,
         .late_to = 0,
         .late_us = 0,
         .slow_rank = -1,
         .slow_factor = 1,
         .hang_rank = -1,
         .hang_at = -1,
         .hang_ms = 0,
         .congest_host = -1,
         .congest_nic = 0,
         .congest_from = 0,
         .congest_to = 0,
         .congest_factor = 1,
         .net_ib = 0,
         .ranks_per_host = 1,
         .nics = 1,
         .qps = 1,
         .local_ranks = 1};

static const fs_nccl_profiler_v5_t* p5;
static const fs_nccl_profiler_v6_t* p6;
static void* ctx[MAX_LOCAL]; /* one communicator (plugin context) per rank played */
static int cur;              /* the local rank whose event is being emitted */
static int nccl_mask;
static uint64_t records, group_records, qp_records;

static uint64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ---- deterministic noise: the same in every process ---- */

static uint64_t mix(uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

/* uniform [0, 1) from (what, op, rank, channel, step) */
static double u01(int what, int op, int rank, int ch, int step) {
    uint64_t h = mix(opt.seed ^ mix((uint64_t)what << 56 ^ (uint64_t)(uint32_t)op << 24 ^
                                    (uint64_t)rank << 16 ^ (uint64_t)ch << 12 ^ (uint64_t)step));
    return (double)(h >> 11) * (1.0 / 9007199254740992.0);
}

static double noisy(double v, int what, int op, int rank, int ch, int step) {
    return v * (1 + opt.noise * (2 * u01(what, op, rank, ch, step) - 1));
}

/* ---- the plugin ---- */

static void* start_ev(uint64_t type, void* parent, fs_nccl_descr_v6_t* d) {
    void* h = NULL;
    d->type = type;
    d->parentObj = parent;
    d->rank = opt.rank + cur;
    if (opt.abi == 5)
        p5->startEvent(ctx[cur], &h, (fs_nccl_descr_v5_t*)d);
    else
        p6->startEvent(ctx[cur], &h, d);
    if (h) records++;
    return h;
}

static void stop_ev(void* h) {
    if (!h) return;
    if (opt.abi == 5)
        p5->stopEvent(h);
    else
        p6->stopEvent(h);
    records++;
}

static void state_ev(void* h, int st, size_t trans) {
    if (!h) return;
    fs_nccl_state_args_t a = {.proxyStep = {.transSize = trans}};
    if (opt.abi == 5)
        p5->recordEventState(h, st, &a);
    else
        p6->recordEventState(h, st, &a);
    records++;
}

/* ---- the schedule ---- */

enum {
    A_COLL_START,
    A_COLL_STOP,
    A_STEP_START,
    A_SEND_READY,
    A_SEND_POST,
    A_STEP_STOP,
    A_RECV_ARRIVE,
    A_RECV_FLUSH
};

typedef struct {
    uint64_t t;
    uint64_t seq;
    int op;
    uint8_t act, ch, dir, lr; /* dir 0 send, 1 recv; lr: the local rank (rank - opt.rank) */
    uint16_t step;
} ev_t;

static ev_t* heap;
static size_t nheap, capheap;
static uint64_t seqno;

static int ev_less(const ev_t* a, const ev_t* b) {
    return a->t != b->t ? a->t < b->t : a->seq < b->seq;
}

static void push(uint64_t t, int op, int act, int ch, int dir, int step, int lr) {
    if (nheap == capheap) {
        capheap = capheap ? 2 * capheap : 4096;
        heap = realloc(heap, capheap * sizeof *heap);
        if (!heap) die("out of memory");
    }
    ev_t e = {.t = t,
              .seq = seqno++,
              .op = op,
              .act = (uint8_t)act,
              .ch = (uint8_t)ch,
              .dir = (uint8_t)dir,
              .lr = (uint8_t)lr,
              .step = (uint16_t)step};
    size_t i = nheap++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!ev_less(&e, &heap[p])) break;
        heap[i] = heap[p];
        i = p;
    }
    heap[i] = e;
}

static ev_t pop(void) {
    ev_t top = heap[0], last = heap[--nheap];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= nheap) break;
        if (c + 1 < nheap && ev_less(&heap[c + 1], &heap[c])) c++;
        if (!ev_less(&heap[c], &last)) break;
        heap[i] = heap[c];
        i = c;
    }
    if (nheap) heap[i] = last;
    return top;
}

/* An op in flight in this process: its handles. */
typedef struct {
    int op; /* -1 free */
    int pending;
    void* group;
    void* coll;
    void* pop[MAX_CH][2];
    void* step[MAX_CH][2][MAX_STEPS];
} live_t;
static live_t* live; /* [local rank][LIVE_OPS] */
static live_t* live_of(int lr, int op) {
    return &live[(size_t)lr * LIVE_OPS + (size_t)(op % LIVE_OPS)];
}

/* Topology: rank r's host and its NIC on that host. */
static int host_of(int r) {
    return r / opt.ranks_per_host;
}
static int nic_of(int r) {
    return (r % opt.ranks_per_host) * opt.nics / opt.ranks_per_host;
}
/* Work-request handles of each live op (--net ib), [channel][dir][step][qp], apart from live_t (cleared per
 * op) */
static void** wr_handles[MAX_LOCAL][LIVE_OPS];

static void** wr_slot(int op, int ch, int dir, int step) {
    return wr_handles[cur][op % LIVE_OPS] +
           (((size_t)ch * 2 + (size_t)dir) * (size_t)opt.steps + (size_t)step) * (size_t)opt.qps;
}

/* The net plugin posts a step's work requests, one per QP (the descriptor reused, as NCCL does). */
static void wr_post(int op, int ch, int dir, int step, void* step_handle) {
    static fs_nccl_net_ib_descr_v1_t ib;
    static uint64_t wr_id;
    if (!opt.net_ib || !(nccl_mask & FS_EV_NET_PLUGIN) || !step_handle) return;
    void** h = wr_slot(op, ch, dir, step);
    const size_t chunk = (size_t)opt.chunk;
    for (int q = 0; q < opt.qps; q++) {
        memset(&ib, 0, sizeof ib);
        ib.type = FS_NET_IB_EVENT_QP;
        const int me = opt.rank + cur;
        ib.qp.device = nic_of(me);
        ib.qp.wr_id = ++wr_id;
        ib.qp.qpNum = 0x100 + (((me % opt.ranks_per_host) * MAX_CH + ch) * 2 + dir) * opt.qps + q;
        if (dir == 0) {
            ib.qp.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
            ib.qp.length = chunk / (size_t)opt.qps + (q == opt.qps - 1 ? chunk % (size_t)opt.qps : 0);
        }
        fs_nccl_descr_v6_t d;
        memset(&d, 0, sizeof d);
        d.netPlugin.id = FS_NET_PLUGIN_ID_IB_V1;
        d.netPlugin.data = &ib;
        h[q] = start_ev(FS_EV_NET_PLUGIN, step_handle, &d);
        if (h[q]) qp_records++;
    }
}

/* Their completions. */
static void wr_complete(int op, int ch, int dir, int step) {
    if (!opt.net_ib) return;
    void** h = wr_slot(op, ch, dir, step);
    for (int q = 0; q < opt.qps; q++) {
        if (h[q]) qp_records++;
        stop_ev(h[q]);
        h[q] = NULL;
    }
}

static double ns(double us) {
    return us * 1000.0;
}

/* Collective k's nominal start (every rank's, before its own lateness). */
static uint64_t op_time(int k) {
    uint64_t t = opt.start_ns + (uint64_t)llround((double)k * ns(opt.period_us));
    if (opt.hang_rank >= 0 && k > opt.hang_at) t += (uint64_t)llround(opt.hang_ms * 1e6);
    return t;
}

static int in(int k, int from, int to) {
    return k >= from && k < to;
}

/* Where the job is, carried from op to op: each rank's end of its previous op (its last step stop), each
 * connection's (channel, sender) transfer queue. */
static double rank_end[MAX_RANKS];
static double link_free[MAX_CH][MAX_RANKS];
static int behind; /* ops of the ranks played here that started late: their previous op still ran */

/* Computes op k for every rank and channel; queues this rank's events. */
static void schedule(int k) {
    const int n = opt.nranks, S = opt.steps;
    static double start[MAX_RANKS], gpuFree[MAX_RANKS], recvGpuFree[MAX_RANKS], sendGpuFree[MAX_RANKS],
        end[MAX_RANKS];
    static double sendStart[MAX_RANKS][MAX_STEPS], sendStop[MAX_RANKS][MAX_STEPS];
    static double recvPost[MAX_RANKS][MAX_STEPS], recvFlush[MAX_RANKS][MAX_STEPS],
        recvStop[MAX_RANKS][MAX_STEPS];
    const double t0 = (double)op_time(k);
    const int me0 = opt.rank, me1 = opt.rank + opt.local_ranks; /* the ranks played here: [me0, me1) */
    for (int lr = 0; lr < opt.local_ranks; lr++) {
        live_t* L = live_of(lr, k);
        if (L->op >= 0) die("more than %d ops in flight: period too short for the op's duration", LIVE_OPS);
        memset(L, 0, sizeof *L);
        L->op = k;
    }
    for (int i = 0; i < n; i++) {
        start[i] = t0 + ns(opt.jitter_us) * u01(1, k, i, 0, 0);
        if (i == opt.late_rank && in(k, opt.late_from, opt.late_to) && !opt.late_gpu)
            start[i] += ns(opt.late_us);
        if (i == opt.hang_rank && k == opt.hang_at) start[i] += opt.hang_ms * 1e6;
        /* ops of a rank run in order: this one cannot start before the previous one ended */
        if (rank_end[i] > start[i]) {
            start[i] = rank_end[i];
            if (i >= me0 && i < me1) behind++;
        }
        gpuFree[i] = start[i];
        if (i == opt.late_rank && in(k, opt.late_from, opt.late_to) && opt.late_gpu)
            gpuFree[i] += ns(opt.late_us);
        end[i] = start[i];
    }
    /* the CPU's call: Group and Coll, then the proxy posts the ops */
    int pending[MAX_LOCAL]; /* per rank played: the Coll stop, then one per step */
    for (int me = me0; me < me1; me++) {
        push((uint64_t)start[me], k, A_COLL_START, 0, 0, 0, me - me0);
        push((uint64_t)(start[me] + noisy(ns(opt.coll_us), 2, k, me, 0, 0)), k, A_COLL_STOP, 0, 0, 0,
             me - me0);
        pending[me - me0] = 1;
    }
    for (int c = 0; c < opt.channels; c++) {
        for (int i = 0; i < n; i++) recvGpuFree[i] = sendGpuFree[i] = gpuFree[i];
        double* linkFree = link_free[c];
        for (int s = 0; s < S; s++) {
            for (int i = 0; i < n; i++) {
                const int j = (i + 1) % n; /* i sends to j */
                sendStart[i][s] = s < SLOTS ? start[i] : sendStop[i][s - SLOTS];
                recvPost[j][s] = s < SLOTS ? start[j] : recvStop[j][s - SLOTS];
                /* step 0 sends the rank's own data; step s > 0 forwards what receive s - 1 brought; the GPU
                 * fills the slots in order, once it is free */
                double dep = s == 0 ? gpuFree[i] : recvFlush[i][s - 1];
                if (sendGpuFree[i] > dep) dep = sendGpuFree[i];
                const double ready =
                    (sendStart[i][s] > dep ? sendStart[i][s] : dep) + noisy(ns(opt.gpu_us), 3, k, i, c, s);
                sendGpuFree[i] = ready;
                const double credit = recvPost[j][s] + ns(opt.lat_us);
                const double post = ready > credit ? ready : credit;
                double x = noisy((double)opt.chunk * opt.ns_per_byte, 4, k, i, c, s);
                if (i == opt.slow_rank && in(k, opt.slow_from, opt.slow_to)) x *= opt.slow_factor;
                if (host_of(i) == opt.congest_host && nic_of(i) == opt.congest_nic &&
                    in(k, opt.congest_from, opt.congest_to))
                    x *= opt.congest_factor;
                const double leave = post > linkFree[i] ? post : linkFree[i];
                const double arrive = leave + x + ns(opt.lat_us);
                linkFree[i] = leave + x;
                sendStop[i][s] = arrive + ns(opt.lat_us);
                recvFlush[j][s] = arrive + ns(opt.flush_us);
                const double consumed =
                    (recvFlush[j][s] > recvGpuFree[j] ? recvFlush[j][s] : recvGpuFree[j]) +
                    noisy(ns(opt.gpu_us), 5, k, j, c, s);
                recvStop[j][s] = consumed;
                recvGpuFree[j] = consumed;
                if (sendStop[i][s] > end[i]) end[i] = sendStop[i][s];
                if (recvStop[j][s] > end[j]) end[j] = recvStop[j][s];
                if (i >= me0 && i < me1) {
                    push((uint64_t)sendStart[i][s], k, A_STEP_START, c, 0, s, i - me0);
                    push((uint64_t)ready, k, A_SEND_READY, c, 0, s, i - me0);
                    push((uint64_t)post, k, A_SEND_POST, c, 0, s, i - me0);
                    push((uint64_t)sendStop[i][s], k, A_STEP_STOP, c, 0, s, i - me0);
                    pending[i - me0]++;
                }
                if (j >= me0 && j < me1) {
                    push((uint64_t)recvPost[j][s], k, A_STEP_START, c, 1, s, j - me0);
                    push((uint64_t)arrive, k, A_RECV_ARRIVE, c, 1, s, j - me0);
                    push((uint64_t)recvFlush[j][s], k, A_RECV_FLUSH, c, 1, s, j - me0);
                    push((uint64_t)recvStop[j][s], k, A_STEP_STOP, c, 1, s, j - me0);
                    pending[j - me0]++;
                }
            }
        }
    }
    for (int lr = 0; lr < opt.local_ranks; lr++) live_of(lr, k)->pending = pending[lr];
    for (int i = 0; i < n; i++) rank_end[i] = end[i];
}

static void emit(const ev_t* e) {
    cur = e->lr;
    live_t* L = live_of(cur, e->op);
    if (L->op != e->op) die("internal: op %d not live", e->op);
    const int me = opt.rank + cur;
    fs_nccl_descr_v6_t d;
    const int n = opt.nranks;
    size_t chunk = (size_t)opt.chunk;
    switch (e->act) {
    case A_COLL_START:
        memset(&d, 0, sizeof d);
        L->group = start_ev(FS_EV_GROUP, NULL, &d);
        if (L->group) group_records += 2; /* its start and stop */
        memset(&d, 0, sizeof d);
        d.coll.seqNumber = (uint64_t)e->op;
        d.coll.func = "AllReduce";
        d.coll.count = (size_t)opt.chunk * (size_t)opt.steps / 2 * (size_t)opt.channels / 4;
        d.coll.datatype = "ncclFloat32";
        d.coll.nChannels = (uint8_t)opt.channels;
        d.coll.nWarps = 16;
        d.coll.algo = "RING";
        d.coll.proto = "SIMPLE";
        d.coll.parentGroup = L->group;
        L->coll = start_ev(FS_EV_COLL, L->group, &d);
        /* the proxy posts the ops of every channel (NCCL: send and receive per channel) */
        for (int c = 0; c < opt.channels; c++)
            for (int dir = 0; dir < 2; dir++) {
                memset(&d, 0, sizeof d);
                d.proxyOp.pid = getpid();
                d.proxyOp.channelId = (uint8_t)c;
                d.proxyOp.peer = dir == 0 ? (me + 1) % n : (me + n - 1) % n;
                d.proxyOp.nSteps = opt.steps;
                d.proxyOp.chunkSize = (int)opt.chunk;
                d.proxyOp.isSend = dir == 0;
                L->pop[c][dir] = start_ev(FS_EV_PROXY_OP, L->coll, &d);
                state_ev(L->pop[c][dir], FS_ST_PROXY_OP_IN_PROGRESS, 0);
            }
        break;
    case A_COLL_STOP:
        stop_ev(L->coll);
        stop_ev(L->group);
        L->pending--;
        break;
    case A_STEP_START:
        memset(&d, 0, sizeof d);
        d.proxyStep.step = e->step;
        L->step[e->ch][e->dir][e->step] = start_ev(FS_EV_PROXY_STEP, L->pop[e->ch][e->dir], &d);
        if (e->dir == 1) wr_post(e->op, e->ch, 1, e->step, L->step[e->ch][1][e->step]); /* irecv */
        state_ev(L->step[e->ch][e->dir][e->step],
                 e->dir == 0 ? FS_ST_PROXY_STEP_SEND_GPU_WAIT : FS_ST_PROXY_STEP_RECV_WAIT, chunk);
        break;
    case A_SEND_READY:
        state_ev(L->step[e->ch][0][e->step], FS_ST_PROXY_STEP_SEND_PEER_WAIT, chunk);
        break;
    case A_SEND_POST:
        wr_post(e->op, e->ch, 0, e->step, L->step[e->ch][0][e->step]); /* isend */
        state_ev(L->step[e->ch][0][e->step], FS_ST_PROXY_STEP_SEND_WAIT, chunk);
        break;
    case A_RECV_ARRIVE:
        wr_complete(e->op, e->ch, 1, e->step);
        state_ev(L->step[e->ch][1][e->step], FS_ST_PROXY_STEP_RECV_FLUSH_WAIT, chunk);
        break;
    case A_RECV_FLUSH:
        state_ev(L->step[e->ch][1][e->step], FS_ST_PROXY_STEP_RECV_GPU_WAIT, chunk);
        break;
    case A_STEP_STOP:
        if (e->dir == 0) wr_complete(e->op, e->ch, 0, e->step);
        stop_ev(L->step[e->ch][e->dir][e->step]);
        if (e->step == opt.steps - 1) stop_ev(L->pop[e->ch][e->dir]);
        L->pending--;
        break;
    default:
        die("internal: action %d", e->act);
    }
    if (L->pending == 0) L->op = -1;
}

/* ---- main ---- */

static void usage(void) {
    fprintf(
        stderr,
        "usage: fs_rank --plugin PATH --rank R --nranks N --start-ns T [--abi 5|6] [--ops K]\n"
        "         [--period-us P] [--channels C] [--steps S] [--chunk BYTES] [--ns-per-byte X]\n"
        "         [--gpu-us G] [--lat-us L] [--jitter-us J] [--noise F] [--seed S] [--comm HASH]\n"
        "         [--expect-hostname NAME] [--rt-priority P]\n"
        "         [--late-rank R --late-us X --late-from A --late-to B [--late-mode cpu|gpu]]\n"
        "         [--slow-rank R --slow-factor F --slow-from A --slow-to B]\n"
        "         [--hang-rank R --hang-at H --hang-ms S]\n"
        "         [--net socket|ib] [--ranks-per-host G] [--nics N] [--qps Q] [--local-ranks L]\n"
        "         [--congest-host H --congest-nic D --congest-factor F --congest-from A --congest-to B]\n");
    exit(2);
}

int main(int argc, char** argv) {
    for (int i = 1; i < argc; i++) {
        const char* a = argv[i];
#define ARG() (i + 1 < argc ? argv[++i] : (usage(), ""))
        if (!strcmp(a, "--plugin"))
            opt.plugin = ARG();
        else if (!strcmp(a, "--abi"))
            opt.abi = atoi(ARG());
        else if (!strcmp(a, "--rank"))
            opt.rank = atoi(ARG());
        else if (!strcmp(a, "--nranks"))
            opt.nranks = atoi(ARG());
        else if (!strcmp(a, "--start-ns"))
            opt.start_ns = strtoull(ARG(), NULL, 0);
        else if (!strcmp(a, "--ops"))
            opt.ops = atoi(ARG());
        else if (!strcmp(a, "--period-us"))
            opt.period_us = atof(ARG());
        else if (!strcmp(a, "--channels"))
            opt.channels = atoi(ARG());
        else if (!strcmp(a, "--steps"))
            opt.steps = atoi(ARG());
        else if (!strcmp(a, "--chunk"))
            opt.chunk = atol(ARG());
        else if (!strcmp(a, "--ns-per-byte"))
            opt.ns_per_byte = atof(ARG());
        else if (!strcmp(a, "--gpu-us"))
            opt.gpu_us = atof(ARG());
        else if (!strcmp(a, "--lat-us"))
            opt.lat_us = atof(ARG());
        else if (!strcmp(a, "--jitter-us"))
            opt.jitter_us = atof(ARG());
        else if (!strcmp(a, "--noise"))
            opt.noise = atof(ARG());
        else if (!strcmp(a, "--quantum-us"))
            opt.quantum_us = atof(ARG());
        else if (!strcmp(a, "--seed"))
            opt.seed = strtoull(ARG(), NULL, 0);
        else if (!strcmp(a, "--comm"))
            opt.comm = strtoull(ARG(), NULL, 0);
        else if (!strcmp(a, "--expect-hostname"))
            opt.expect_host = ARG();
        else if (!strcmp(a, "--rt-priority"))
            opt.rt_priority = atoi(ARG());
        else if (!strcmp(a, "--late-rank"))
            opt.late_rank = atoi(ARG());
        else if (!strcmp(a, "--late-us"))
            opt.late_us = atof(ARG());
        else if (!strcmp(a, "--late-from"))
            opt.late_from = atoi(ARG());
        else if (!strcmp(a, "--late-to"))
            opt.late_to = atoi(ARG());
        else if (!strcmp(a, "--late-mode")) {
            const char* m = ARG();
            if (!strcmp(m, "gpu"))
                opt.late_gpu = 1;
            else if (!strcmp(m, "cpu"))
                opt.late_gpu = 0;
            else
                usage();
        } else if (!strcmp(a, "--slow-rank"))
            opt.slow_rank = atoi(ARG());
        else if (!strcmp(a, "--slow-factor"))
            opt.slow_factor = atof(ARG());
        else if (!strcmp(a, "--slow-from"))
            opt.slow_from = atoi(ARG());
        else if (!strcmp(a, "--slow-to"))
            opt.slow_to = atoi(ARG());
        else if (!strcmp(a, "--hang-rank"))
            opt.hang_rank = atoi(ARG());
        else if (!strcmp(a, "--hang-at"))
            opt.hang_at = atoi(ARG());
        else if (!strcmp(a, "--hang-ms"))
            opt.hang_ms = atof(ARG());
        else if (!strcmp(a, "--congest-host"))
            opt.congest_host = atoi(ARG());
        else if (!strcmp(a, "--congest-nic"))
            opt.congest_nic = atoi(ARG());
        else if (!strcmp(a, "--congest-factor"))
            opt.congest_factor = atof(ARG());
        else if (!strcmp(a, "--congest-from"))
            opt.congest_from = atoi(ARG());
        else if (!strcmp(a, "--congest-to"))
            opt.congest_to = atoi(ARG());
        else if (!strcmp(a, "--net")) {
            const char* m = ARG();
            if (!strcmp(m, "ib"))
                opt.net_ib = 1;
            else if (!strcmp(m, "socket"))
                opt.net_ib = 0;
            else
                usage();
        } else if (!strcmp(a, "--ranks-per-host"))
            opt.ranks_per_host = atoi(ARG());
        else if (!strcmp(a, "--nics"))
            opt.nics = atoi(ARG());
        else if (!strcmp(a, "--qps"))
            opt.qps = atoi(ARG());
        else if (!strcmp(a, "--local-ranks"))
            opt.local_ranks = atoi(ARG());
        else
            usage();
    }
    if (!opt.plugin || (opt.abi != 5 && opt.abi != 6) || opt.nranks < 2 || opt.nranks > MAX_RANKS ||
        opt.rank < 0 || opt.rank >= opt.nranks || !opt.start_ns || opt.ops < 1 || opt.channels < 1 ||
        opt.channels > MAX_CH || opt.period_us <= 0 || opt.chunk < 1)
        usage();
    if (opt.steps == 0) opt.steps = 2 * (opt.nranks - 1); /* ring all-reduce, one loop */
    if (opt.steps < 1 || opt.steps > MAX_STEPS) usage();
    if (opt.hang_rank >= 0 && (opt.hang_at < 0 || opt.hang_at >= opt.ops || opt.hang_ms <= 0)) usage();
    if (opt.ranks_per_host < 1 || opt.ranks_per_host > opt.nranks || opt.nics < 1 ||
        opt.nics > opt.ranks_per_host || opt.qps < 1 || opt.qps > MAX_QPS)
        usage();
    if (opt.local_ranks < 1 || opt.local_ranks > MAX_LOCAL || opt.rank + opt.local_ranks > opt.nranks ||
        host_of(opt.rank) != host_of(opt.rank + opt.local_ranks - 1))
        usage(); /* the ranks a process plays are of one host */
    if (opt.congest_host >= 0 && (host_of(opt.nranks - 1) < opt.congest_host || opt.congest_nic < 0 ||
                                  opt.congest_nic >= opt.nics || opt.congest_factor <= 0))
        usage();

    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0) die("gethostname: %s", strerror(errno));
    if (opt.expect_host && strcmp(host, opt.expect_host))
        die("hostname is '%s', expected '%s' (not in its own UTS namespace?)", host, opt.expect_host);

    void* lib;
    void* s = load_plugin(opt.plugin, opt.abi, &lib);
    p5 = s;
    p6 = s;
    char name[64];
    snprintf(name, sizeof name, "fs-rank-comm");
    /* one communicator per rank played (NCCL: one per GPU, the same commHash) */
    for (int lr = 0; lr < opt.local_ranks; lr++) {
        const int r = opt.rank + lr;
        int rc = opt.abi == 5
                     ? p5->init(&ctx[lr], opt.comm, &nccl_mask, name, opt.nranks, opt.nranks, r, logger)
                     : p6->init(&ctx[lr], opt.comm, &nccl_mask, name, opt.nranks, opt.nranks, r, logger);
        if (rc != 0 || !ctx[lr]) die("plugin init failed for rank %d (rc=%d)", r, rc);
    }
    live = calloc((size_t)opt.local_ranks * LIVE_OPS, sizeof *live);
    if (!live) die("out of memory");
    for (int lr = 0; lr < opt.local_ranks; lr++)
        for (int i = 0; i < LIVE_OPS; i++) {
            live[(size_t)lr * LIVE_OPS + (size_t)i].op = -1;
            if (opt.net_ib) {
                wr_handles[lr][i] =
                    calloc((size_t)opt.channels * 2 * (size_t)opt.steps * (size_t)opt.qps, sizeof(void*));
                if (!wr_handles[lr][i]) die("out of memory");
            }
        }

    /* A rank stands for a host of its own: its calls keep their schedule even when the machine's cores are
     * busy (the service, other ranks). SCHED_FIFO wakes it on time; it sleeps between calls. */
    int rt = 0;
    if (opt.rt_priority > 0) {
        struct sched_param sp = {.sched_priority = opt.rt_priority};
        if (sched_setscheduler(0, SCHED_FIFO, &sp) == 0)
            rt = 1;
        else
            fprintf(stderr, "fs_rank: SCHED_FIFO %d not granted (%s): normal scheduling\n", opt.rt_priority,
                    strerror(errno));
    }
    uint64_t t_in = mono_ns();
    if (t_in > opt.start_ns)
        fprintf(stderr, "fs_rank: rank %d started %.1f ms after the start time\n", opt.rank,
                (double)(t_in - opt.start_ns) / 1e6);
    /* emission lateness histogram: 10 us buckets up to 100 ms */
    enum { NB = 10001 };
    static uint32_t hist[NB];
    uint64_t emitted = 0, late_max = 0, early_max = 0;
    enum { TL = 64 };
    static uint32_t timeline[TL]; /* actions > 1 ms late, per 250 ms of the run */
    const uint64_t quantum = (uint64_t)ns(opt.quantum_us);
    int next = 0;
    while (next < opt.ops || nheap) {
        while (next < opt.ops && (!nheap || op_time(next) <= heap[0].t)) schedule(next++);
        const uint64_t due = heap[0].t;
        uint64_t now = mono_ns();
        if (due > now + quantum) {
            struct timespec ts = {(time_t)(due / 1000000000ULL), (long)(due % 1000000000ULL)};
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
            }
            continue;
        }
        ev_t e = pop();
        emit(&e);
        emitted++;
        if (now >= e.t) {
            uint64_t late = now - e.t;
            if (late > late_max) late_max = late;
            uint64_t b = late / 10000;
            hist[b < NB ? b : NB - 1]++;
            if (late > 1000000) {
                uint64_t bin = (e.t - opt.start_ns) / 250000000ULL;
                timeline[bin < TL ? bin : TL - 1]++;
            }
        } else {
            if (e.t - now > early_max) early_max = e.t - now;
            hist[0]++;
        }
    }
    uint64_t t_end = mono_ns();
    /* the ring file before finalize (it stays; the consumer detaches it once drained) */
    for (int lr = opt.local_ranks - 1; lr >= 0; lr--) {
        if (opt.abi == 5)
            p5->finalize(ctx[lr]);
        else
            p6->finalize(ctx[lr]);
    }
    uint64_t c = 0, p50 = 0, p99 = 0, p999 = 0, over1ms = 0;
    for (int b = 0; b < NB; b++) {
        c += hist[b];
        if (!p50 && c * 2 >= emitted) p50 = (uint64_t)b * 10 + 10;
        if (!p99 && c * 100 >= emitted * 99) p99 = (uint64_t)b * 10 + 10;
        if (!p999 && c * 1000 >= emitted * 999) p999 = (uint64_t)b * 10 + 10;
        if (b >= 100) over1ms += hist[b];
    }
    char tl[TL * 12] = "";
    int last = -1;
    for (int b = 0; b < TL; b++)
        if (timeline[b]) last = b;
    for (int b = 0, o = 0; b <= last; b++)
        o += snprintf(tl + o, sizeof tl - (size_t)o, "%s%u", b ? "," : "", timeline[b]);
    printf("fs_rank: rank=%d host=%s pid=%d local_ranks=%d ops=%d records=%" PRIu64 " group_records=%" PRIu64
           " qp_records=%" PRIu64 " actions=%" PRIu64 " seconds=%.3f late_p50_us<=%" PRIu64
           " late_p99_us<=%" PRIu64 " late_p999_us<=%" PRIu64 " late_max_us=%.0f late_over_1ms=%" PRIu64
           " early_max_us=%.0f"
           " behind_schedule_ops=%d rt=%d late_over_1ms_per_250ms=[%s]\n",
           opt.rank, host, (int)getpid(), opt.local_ranks, opt.ops, records, group_records, qp_records,
           emitted, (double)(t_end - opt.start_ns) / 1e9, p50, p99, p999, (double)late_max / 1e3, over1ms,
           (double)early_max / 1e3, behind, rt, tl);
    fflush(stdout);
    free(heap);
    for (int lr = 0; lr < opt.local_ranks; lr++)
        for (int i = 0; i < LIVE_OPS; i++) free(wr_handles[lr][i]);
    free(live);
    dlclose(lib);
    return 0;
}
