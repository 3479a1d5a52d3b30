/*
 * fs_harness.c - drives the plugin the way NCCL does, and writes the records
 * the plugin is expected to produce (--expect), for the C checks and the Java
 * tests (contract: profiler-plugin/README.md, "The C harness").
 *
 * Threads (harness thread numbers): 0..K-1 application thread per
 * communicator, K proxy progress thread, K+1 IB net helper, K+2 socket net
 * helper, K+3 abuse thread (--abuse). Handles cross threads through queues as
 * in NCCL (Coll handle -> ProxyOp parent on the proxy thread, ProxyStep
 * handle -> NetPlugin parent on a net helper).
 *
 * CUDA devices: with --fake-cuda PATH (the stand-in driver of fs_fake_cuda.h)
 * each init thread makes a device current first, as NCCL's comm init does
 * (communicator i: device i; the --abuse communicators: no context), and
 * --verify checks each communicator entry's cuda_dev and pci_bus_id; without
 * it, every entry must say unknown (-1, "").
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fs_fake_cuda.h"
#include "fs_nccl_abi.h"
#define FS_PROGRAM "harness"
#include "fs_ring_layout.h"
#include "fs_test_util.h"

#define MAX_COMMS   64
#define ABUSE_COMMS 16

static const char* kind_names[FS_KIND_COUNT] = {
    "Group",    "Coll",    "P2p",    "ProxyOp",      "ProxyStep", "ProxyCtrl", "KernelCh", "NetPlugin",
    "GroupApi", "CollApi", "P2pApi", "KernelLaunch", "CeColl",    "CeSync",    "CeBatch",
};

/* ---- options and global state ---- */

static struct {
    const char* plugin;
    int abi;
    int comms;
    int ops;
    const char* ring_dir;
    const char* expect;
    int abuse;
    unsigned seed;
    double live_s;
    double rate;
    int verify;
    const char* fake_cuda;
} opt = {.abi = 5, .comms = 2, .ops = 200, .seed = 1, .rate = 100000};

static const fs_nccl_profiler_v4_t* p4;
static const fs_nccl_profiler_v5_t* p5;
static const fs_nccl_profiler_v6_t* p6;
static uint32_t mask; /* what init handed back in *eActivationMask */
/* NCCL's process-global ncclProfilerEventMask: every init gets its address and
 * the plugin may change it at any time (KernelCh sampling). Like NCCL, each
 * task copies it when appended, before any callback of its call (here one task
 * per group), and KernelCh is emitted only when that copy has it. */
static int nccl_event_mask;
static uint64_t kernel_groups, all_groups;
static int ncomms_total;
static fs_fake_cuda_set_device_t fake_set_device; /* --fake-cuda: the stand-in driver's */

typedef struct {
    uint64_t hash;
    int rank;
    int nranks;
    void* ctx;
    char name[32];
    int device; /* the CUDA device its init thread makes current (--fake-cuda), -1: none */
} comm_t;
static comm_t comms[MAX_COMMS + ABUSE_COMMS];

/* An event as the harness knows it: the plugin's handle and the START line. */
typedef struct {
    void* h;
    int ht; /* harness thread of the START line, -1 = not recorded */
    int n;
} ev_t;

typedef struct {
    int id;
    int n; /* next line number */
    char* buf;
    size_t len;
    FILE* out;
} hthread_t;

static hthread_t* hthreads;
static int nhthreads;
static long invalid_expected;

/* live mode: rate limiter and deadline */
static volatile int live_stop;
static uint64_t live_events;
static uint64_t live_t0;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t realtime_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void live_tick(void) {
    if (opt.live_s <= 0) return;
    uint64_t e = __atomic_add_fetch(&live_events, 1, __ATOMIC_RELAXED);
    for (;;) {
        double el = (double)(now_ns() - live_t0) / 1e9;
        if (el >= opt.live_s) live_stop = 1;
        if ((double)e <= opt.rate * el || live_stop) return;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

/* ---- calling the plugin through the chosen ABI ---- */

static void* call_start(comm_t* c, fs_nccl_descr_v6_t* d) {
    void* h = (void*)0x1; /* the plugin must overwrite it */
    void* ctx = c ? c->ctx : NULL;
    if (opt.abi == 4) {
        fs_nccl_descr_v4_t d4;
        memset(&d4, 0, sizeof d4);
        d4.type = (uint8_t)d->type;
        d4.parentObj = d->parentObj;
        d4.rank = d->rank;
        memcpy((char*)&d4 + 24, (char*)d + 24, sizeof d4 - 24);
        p4->startEvent(ctx, &h, &d4);
    } else if (opt.abi == 5) {
        fs_nccl_descr_v5_t d5;
        memcpy(&d5, d, sizeof d5);
        p5->startEvent(ctx, &h, &d5);
    } else {
        p6->startEvent(ctx, &h, d);
    }
    live_tick();
    return h;
}

static void call_stop(void* h) {
    if (opt.abi == 4)
        p4->stopEvent(h);
    else if (opt.abi == 5)
        p5->stopEvent(h);
    else
        p6->stopEvent(h);
    live_tick();
}

static void call_state(void* h, int st, fs_nccl_state_args_t* a) {
    if (opt.abi == 4)
        p4->recordEventState(h, st, a);
    else if (opt.abi == 5)
        p5->recordEventState(h, st, a);
    else
        p6->recordEventState(h, st, a);
    live_tick();
}

/* ---- expected lines ---- */

/* KernelCh is emitted only when the group's snapshot of NCCL's mask had it,
 * which the plugin sets only when it records KernelCh. */
static int recorded(int kind) {
    return opt.live_s <= 0 && (kind == FS_KIND_KERNEL_CH || (mask >> kind & 1u));
}

static void line_head(hthread_t* t, int kind, const char* op, comm_t* c) {
    fprintf(t->out, "%d %d %s %s comm=0x%" PRIx64 " rank=%d", t->id, t->n, kind_names[kind], op, c->hash,
            c->rank);
}

/* Starts an event and writes its START line (when it is recorded). payload:
 * "key=value ..." or "". parent: NULL = none; raw != 0: parent=raw:<raw>. */
static ev_t ev_start(hthread_t* t, comm_t* c, int kind, const ev_t* parent, uint64_t raw,
                     fs_nccl_descr_v6_t* d, const char* payload) {
    d->type = 1ULL << kind;
    d->rank = c->rank;
    d->parentObj = raw ? (void*)(uintptr_t)raw : parent ? parent->h : NULL;
    ev_t e = {call_start(c, d), -1, -1};
    if (e.h && recorded(kind)) {
        line_head(t, kind, "START", c);
        if (raw)
            fprintf(t->out, " parent=raw:%" PRIu64, raw);
        else if (!parent || !parent->h)
            fprintf(t->out, " parent=none");
        else if (parent->ht >= 0)
            fprintf(t->out, " parent=%d:%d", parent->ht, parent->n);
        else
            fprintf(t->out, " parent=raw:%" PRIu64, (uint64_t)(uintptr_t)parent->h);
        fprintf(t->out, "%s%s\n", *payload ? " " : "", payload);
        e.ht = t->id;
        e.n = t->n++;
    }
    return e;
}

static void ev_stop(hthread_t* t, comm_t* c, int kind, const ev_t* e) {
    if (!e->h) return; /* NCCL makes no call for a NULL handle */
    call_stop(e->h);
    if (e->h && e->ht >= 0) {
        line_head(t, kind, "STOP", c);
        fprintf(t->out, " of=%d:%d\n", e->ht, e->n);
        t->n++;
    }
    (void)kind;
}

/* arg: what RING.md says the plugin records for this state and these args */
static void ev_state(hthread_t* t, comm_t* c, int kind, const ev_t* e, int st, fs_nccl_state_args_t* a,
                     uint64_t arg) {
    if (!e->h) return;
    call_state(e->h, st, a);
    if (e->h && e->ht >= 0) {
        line_head(t, kind, "STATE", c);
        fprintf(t->out, " of=%d:%d state=%d arg=%" PRIu64 "\n", e->ht, e->n, st, a ? arg : 0);
        t->n++;
    }
}

static const char* S(const char* s) {
    return s ? s : "-";
}

/* ---- a tiny blocking queue ---- */

typedef struct {
    int comm;
    int q;               /* item number */
    int kind;            /* parent kind */
    ev_t ev;             /* parent event */
    int extra;           /* step number etc. */
    uint32_t group_mask; /* NCCL's mask as the group snapshot it */
} item_t;

static size_t queue_limit = 4096; /* producers wait beyond this (the harness is not the hot path) */

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_cond_t space;
    item_t* items;
    size_t head, tail, cap;
    int producers; /* still running */
} queue_t;

static void q_init(queue_t* q, int producers) {
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->cv, NULL);
    pthread_cond_init(&q->space, NULL);
    q->cap = 1024;
    q->items = malloc(q->cap * sizeof(item_t));
    q->head = q->tail = 0;
    q->producers = producers;
}

static void q_push(queue_t* q, item_t it) {
    pthread_mutex_lock(&q->mu);
    while (q->tail - q->head >= queue_limit) pthread_cond_wait(&q->space, &q->mu);
    if (q->tail - q->head == q->cap) {
        item_t* n = malloc(2 * q->cap * sizeof(item_t));
        for (size_t i = q->head; i < q->tail; i++) n[i - q->head] = q->items[i % q->cap];
        q->tail -= q->head;
        q->head = 0;
        free(q->items);
        q->items = n;
        q->cap *= 2;
    }
    q->items[q->tail++ % q->cap] = it;
    pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

static void q_done(queue_t* q) {
    pthread_mutex_lock(&q->mu);
    q->producers--;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

static int q_pop(queue_t* q, item_t* out) {
    pthread_mutex_lock(&q->mu);
    while (q->head == q->tail && q->producers > 0) pthread_cond_wait(&q->cv, &q->mu);
    int ok = q->head != q->tail;
    if (ok) *out = q->items[q->head++ % q->cap];
    pthread_cond_signal(&q->space);
    pthread_mutex_unlock(&q->mu);
    return ok;
}

static queue_t proxy_q, ib_q, sock_q;

/* ---- application thread: one per communicator ---- */

static void* app_thread(void* arg) {
    hthread_t* t = arg;
    comm_t* c = &comms[t->id];
    char pl[512];
    for (int j = 0; opt.live_s > 0 ? !live_stop : j < opt.ops; j++) {
        fs_nccl_descr_v6_t d;
        ev_t ga = {NULL, -1, -1};
        uint64_t stream = 0x7f0000001000ULL + (uint64_t)t->id * 0x100;
        uint32_t group_mask = (uint32_t)__atomic_load_n(&nccl_event_mask, __ATOMIC_RELAXED);
        __atomic_add_fetch(&all_groups, 1, __ATOMIC_RELAXED);
        if (group_mask & FS_EV_KERNEL_CH) __atomic_add_fetch(&kernel_groups, 1, __ATOMIC_RELAXED);
        if (opt.abi >= 5) {
            memset(&d, 0, sizeof d);
            int depth = j % 3 == 0 ? 2 : 1;
            d.groupApi.graphCaptured = false;
            d.groupApi.groupDepth = depth;
            snprintf(pl, sizeof pl, "graphCaptured=0 groupDepth=%d", depth);
            ga = ev_start(t, c, FS_KIND_GROUP_API, NULL, 0, &d, pl);
            ev_state(t, c, FS_KIND_GROUP_API, &ga, FS_ST_GROUP_START_API_STOP, NULL, 0);
            ev_state(t, c, FS_KIND_GROUP_API, &ga, FS_ST_GROUP_END_API_START, NULL, 0);
        }
        int is_coll = opt.live_s > 0 || j % 2 == 0;
        size_t count = 1024u * (size_t)(j % 64 + 1);
        ev_t api = {NULL, -1, -1};
        if (is_coll) {
            const char* func = "AllReduce";
            const char* dt = "ncclFloat32";
            if (opt.abi >= 5) {
                memset(&d, 0, sizeof d);
                d.collApi.func = func;
                d.collApi.count = count;
                d.collApi.datatype = dt;
                d.collApi.root = 0;
                d.collApi.stream = (void*)(uintptr_t)stream;
                snprintf(pl, sizeof pl,
                         "count=%zu root=0 func=%s datatype=%s graphCaptured=0 stream=%" PRIu64, count, func,
                         dt, stream);
                api = ev_start(t, c, FS_KIND_COLL_API, &ga, 0, &d, pl);
            }
        } else if (opt.abi >= 5) {
            memset(&d, 0, sizeof d);
            d.p2pApi.func = "Send";
            d.p2pApi.count = count;
            d.p2pApi.datatype = "ncclInt8";
            d.p2pApi.stream = (void*)(uintptr_t)stream;
            snprintf(pl, sizeof pl, "count=%zu func=Send datatype=ncclInt8 graphCaptured=0 stream=%" PRIu64,
                     count, stream);
            api = ev_start(t, c, FS_KIND_P2P_API, &ga, 0, &d, pl);
        }
        if (opt.abi >= 5) {
            memset(&d, 0, sizeof d);
            d.kernelLaunch.stream = (void*)(uintptr_t)stream;
            snprintf(pl, sizeof pl, "stream=%" PRIu64, stream);
            ev_t kl = ev_start(t, c, FS_KIND_KERNEL_LAUNCH, &ga, 0, &d, pl);
            ev_stop(t, c, FS_KIND_KERNEL_LAUNCH, &kl);
        }
        memset(&d, 0, sizeof d);
        ev_t g = ev_start(t, c, FS_KIND_GROUP, opt.abi >= 5 ? &ga : NULL, 0, &d, "");
        const ev_t* op_parent = opt.abi >= 5 ? &api : &g;
        ev_t op;
        int op_kind;
        if (is_coll) {
            uint64_t seq = (uint64_t)j / 2;
            int nch = opt.live_s > 0 ? 4 : 2;
            memset(&d, 0, sizeof d);
            d.coll.seqNumber = seq;
            d.coll.func = "AllReduce";
            d.coll.count = count;
            d.coll.root = 0;
            d.coll.datatype = "ncclFloat32";
            d.coll.nChannels = (uint8_t)nch;
            d.coll.nWarps = 8;
            d.coll.algo = "RING";
            d.coll.proto = j % 4 == 0 ? "SIMPLE" : "LL128";
            d.coll.parentGroup = g.h;
            snprintf(pl, sizeof pl,
                     "seqNumber=%" PRIu64 " nChannels=%d nWarps=8 count=%zu root=0 func=AllReduce "
                     "datatype=ncclFloat32 algo=RING proto=%s",
                     seq, nch, count, d.coll.proto);
            op = ev_start(t, c, FS_KIND_COLL, op_parent, 0, &d, pl);
            op_kind = FS_KIND_COLL;
            if (opt.abi == 6 && j % 4 == 0) {
                memset(&d, 0, sizeof d);
                d.ceColl.seqNumber = seq;
                d.ceColl.func = "AllGather";
                d.ceColl.count = count;
                d.ceColl.root = 0;
                d.ceColl.datatype = "ncclBfloat16";
                d.ceColl.syncStrategy = "MC";
                d.ceColl.intraBatchSync = true;
                d.ceColl.batchSize = 4;
                d.ceColl.numBatches = 2;
                snprintf(pl, sizeof pl,
                         "seqNumber=%" PRIu64 " count=%zu root=0 func=AllGather datatype=ncclBfloat16 "
                         "syncStrategy=MC intraBatchSync=1",
                         seq, count);
                ev_t ce = ev_start(t, c, FS_KIND_CE_COLL, &api, 0, &d, pl);
                memset(&d, 0, sizeof d);
                d.ceCollSync.isComplete = true;
                d.ceCollSync.nRanks = c->nranks;
                snprintf(pl, sizeof pl, "isComplete=1 nRanks=%d", c->nranks);
                ev_t cs = ev_start(t, c, FS_KIND_CE_SYNC, &ce, 0, &d, pl);
                ev_stop(t, c, FS_KIND_CE_SYNC, &cs);
                memset(&d, 0, sizeof d);
                d.ceCollBatch.numOps = 3;
                d.ceCollBatch.totalBytes = count * 2;
                d.ceCollBatch.useIntraSync = false;
                snprintf(pl, sizeof pl, "numOps=3 useIntraSync=0 totalBytes=%zu", count * 2);
                ev_t cb = ev_start(t, c, FS_KIND_CE_BATCH, &ce, 0, &d, pl);
                ev_stop(t, c, FS_KIND_CE_BATCH, &cb);
                ev_stop(t, c, FS_KIND_CE_COLL, &ce);
            }
        } else {
            int peer = (c->rank + 1) % c->nranks;
            memset(&d, 0, sizeof d);
            d.p2p.func = "Send";
            d.p2p.count = count;
            d.p2p.datatype = "ncclInt8";
            d.p2p.peer = peer;
            d.p2p.nChannels = 1;
            d.p2p.parentGroup = g.h;
            snprintf(pl, sizeof pl, "count=%zu peer=%d func=Send datatype=ncclInt8 nChannels=1", count, peer);
            op = ev_start(t, c, FS_KIND_P2P, op_parent, 0, &d, pl);
            op_kind = FS_KIND_P2P;
        }
        ev_stop(t, c, op_kind, &op);
        ev_stop(t, c, FS_KIND_GROUP, &g);
        if (opt.abi >= 5) ev_stop(t, c, is_coll ? FS_KIND_COLL_API : FS_KIND_P2P_API, &api);
        if (opt.abi >= 5) ev_stop(t, c, FS_KIND_GROUP_API, &ga);
        item_t it = {.comm = t->id, .q = j, .kind = op_kind, .ev = op, .group_mask = group_mask};
        q_push(&proxy_q, it);
    }
    q_done(&proxy_q);
    return NULL;
}

/* ---- proxy progress thread ---- */

static void proxy_op(hthread_t* t, comm_t* c, const item_t* it, int channel, int peer, int is_send,
                     int nsteps) {
    char pl[256];
    fs_nccl_descr_v6_t d;
    memset(&d, 0, sizeof d);
    int chunk = 131072;
    d.proxyOp.pid = getpid();
    d.proxyOp.channelId = (uint8_t)channel;
    d.proxyOp.peer = peer;
    d.proxyOp.nSteps = nsteps;
    d.proxyOp.chunkSize = chunk;
    d.proxyOp.isSend = is_send;
    snprintf(pl, sizeof pl, "pid=%d peer=%d nSteps=%d chunkSize=%d channel=%d isSend=%d", (int)getpid(), peer,
             nsteps, chunk, channel, is_send);
    ev_t po = ev_start(t, c, FS_KIND_PROXY_OP, &it->ev, 0, &d, pl);
    ev_state(t, c, FS_KIND_PROXY_OP, &po, FS_ST_PROXY_OP_IN_PROGRESS, NULL, 0);
    for (int s = 0; s < nsteps; s++) {
        memset(&d, 0, sizeof d);
        d.proxyStep.step = s;
        snprintf(pl, sizeof pl, "step=%d", s);
        ev_t st = ev_start(t, c, FS_KIND_PROXY_STEP, &po, 0, &d, pl);
        fs_nccl_state_args_t a = {.proxyStep = {.transSize = (size_t)chunk - (size_t)s}};
        uint64_t ts = a.proxyStep.transSize;
        if (is_send) {
            ev_state(t, c, FS_KIND_PROXY_STEP, &st, FS_ST_PROXY_STEP_SEND_GPU_WAIT, &a, ts);
            for (int k = 0; k < s % 3; k++)
                ev_state(t, c, FS_KIND_PROXY_STEP, &st, FS_ST_PROXY_STEP_SEND_PEER_WAIT, &a, ts);
            ev_state(t, c, FS_KIND_PROXY_STEP, &st, FS_ST_PROXY_STEP_SEND_WAIT, &a, ts);
        } else {
            ev_state(t, c, FS_KIND_PROXY_STEP, &st, FS_ST_PROXY_STEP_RECV_WAIT, &a, ts);
            ev_state(t, c, FS_KIND_PROXY_STEP, &st, FS_ST_PROXY_STEP_RECV_FLUSH_WAIT, &a, ts);
            ev_state(t, c, FS_KIND_PROXY_STEP, &st, FS_ST_PROXY_STEP_RECV_GPU_WAIT, &a, ts);
        }
        item_t net = {.comm = (int)(c - comms), .q = it->q, .kind = FS_KIND_PROXY_STEP, .ev = st, .extra = s};
        q_push(&ib_q, net);
        if (s == 0) q_push(&sock_q, net);
        ev_stop(t, c, FS_KIND_PROXY_STEP, &st);
    }
    ev_stop(t, c, FS_KIND_PROXY_OP, &po);
}

static void* proxy_thread(void* arg) {
    hthread_t* t = arg;
    item_t it;
    char pl[256];
    int pxn_done = 0;
    while (q_pop(&proxy_q, &it)) {
        comm_t* c = &comms[it.comm];
        fs_nccl_descr_v6_t d;
        if (live_stop) continue; /* live mode is over: drain without emitting */
        if (it.q % 16 == 0) {
            memset(&d, 0, sizeof d);
            ev_t pc = ev_start(t, c, FS_KIND_PROXY_CTRL, NULL, 0, &d, "");
            fs_nccl_state_args_t a = {.proxyCtrl = {.appendedProxyOps = 2 + it.q % 5}};
            ev_state(t, c, FS_KIND_PROXY_CTRL, &pc, FS_ST_PROXY_CTRL_WAKEUP, &a, 0);
            ev_state(t, c, FS_KIND_PROXY_CTRL, &pc, FS_ST_PROXY_CTRL_APPEND, &a, 0);
            ev_state(t, c, FS_KIND_PROXY_CTRL, &pc, FS_ST_PROXY_CTRL_APPEND_END, &a,
                     (uint64_t)a.proxyCtrl.appendedProxyOps);
            ev_state(t, c, FS_KIND_PROXY_CTRL, &pc, FS_ST_PROXY_CTRL_ACTIVE, &a, 0);
            ev_state(t, c, FS_KIND_PROXY_CTRL, &pc, FS_ST_PROXY_CTRL_IDLE, NULL, 0);
            ev_stop(t, c, FS_KIND_PROXY_CTRL, &pc);
        }
        int nranks = c->nranks;
        int next = (c->rank + 1) % nranks, prev = (c->rank + nranks - 1) % nranks;
        int nch = opt.live_s > 0 ? 4 : 1;
        for (int ch = 0; ch < nch; ch++) {
            int nsteps = opt.live_s > 0 ? 2 * (nranks > 1 ? nranks - 1 : 1) : 2 + it.q % 3;
            proxy_op(t, c, &it, ch, next, 1, nsteps);
            if (it.kind == FS_KIND_COLL) proxy_op(t, c, &it, ch, prev, 0, nsteps);
            if (!(it.group_mask & FS_EV_KERNEL_CH)) continue;
            memset(&d, 0, sizeof d);
            uint64_t p0 =
                opt.live_s > 0 ? realtime_ns() - 20000 : 1756000000000000000ULL + (uint64_t)it.q * 1000;
            d.kernelCh.channelId = (uint8_t)ch;
            d.kernelCh.pTimer = p0;
            snprintf(pl, sizeof pl, "channel=%d pTimer=%" PRIu64, ch, p0);
            ev_t kc = ev_start(t, c, FS_KIND_KERNEL_CH, &it.ev, 0, &d, pl);
            fs_nccl_state_args_t a = {.kernelCh = {.pTimer = p0 + 5000 + (uint64_t)(it.q % 7) * 100}};
            ev_state(t, c, FS_KIND_KERNEL_CH, &kc, FS_ST_KERNEL_CH_STOP, &a, a.kernelCh.pTimer);
            ev_stop(t, c, FS_KIND_KERNEL_CH, &kc);
        }
        if (!pxn_done && opt.live_s <= 0) { /* one PXN op: foreign pid, foreign parent */
            pxn_done = 1;
            memset(&d, 0, sizeof d);
            int pid = (int)getpid() + 100000;
            uint64_t raw = 0x00007f5eed000040ULL;
            d.proxyOp.pid = pid;
            d.proxyOp.channelId = 3;
            d.proxyOp.peer = next;
            d.proxyOp.nSteps = 1;
            d.proxyOp.chunkSize = 65536;
            d.proxyOp.isSend = 1;
            snprintf(pl, sizeof pl, "pid=%d peer=%d nSteps=1 chunkSize=65536 channel=3 isSend=1", pid, next);
            ev_t po = ev_start(t, c, FS_KIND_PROXY_OP, NULL, raw, &d, pl);
            ev_state(t, c, FS_KIND_PROXY_OP, &po, FS_ST_PROXY_OP_IN_PROGRESS, NULL, 0);
            ev_stop(t, c, FS_KIND_PROXY_OP, &po);
        }
    }
    q_done(&ib_q);
    q_done(&sock_q);
    return NULL;
}

/* ---- net helper threads ---- */

static void* ib_thread(void* arg) {
    hthread_t* t = arg;
    item_t it;
    char pl[256];
    fs_nccl_net_ib_descr_v1_t ib; /* reused, as NCCL does: the plugin must copy it */
    uint64_t wr = 1;
    while (q_pop(&ib_q, &it)) {
        comm_t* c = &comms[it.comm];
        if (live_stop) continue;
        int nqp = 1 + it.extra % 2;
        for (int k = 0; k < nqp; k++) {
            memset(&ib, 0, sizeof ib);
            ib.type = FS_NET_IB_EVENT_QP;
            ib.qp.device = it.q % 2;
            ib.qp.wr_id = wr++;
            ib.qp.opcode = 4; /* IBV_WR_RDMA_WRITE_WITH_IMM */
            ib.qp.qpNum = 0x100 + k + 2 * (it.q % 4);
            ib.qp.length = 65536 - (size_t)k;
            fs_nccl_descr_v6_t d;
            memset(&d, 0, sizeof d);
            d.netPlugin.id = FS_NET_PLUGIN_ID_IB_V1;
            d.netPlugin.data = &ib;
            snprintf(
                pl, sizeof pl, "pluginId=%u netType=1 opcode=%d device=%d qpNum=%d length=%zu wrId=%" PRIu64,
                FS_NET_PLUGIN_ID_IB_V1, ib.qp.opcode, ib.qp.device, ib.qp.qpNum, ib.qp.length, ib.qp.wr_id);
            ev_t e = ev_start(t, c, FS_KIND_NET_PLUGIN, &it.ev, 0, &d, pl);
            memset(&ib, 0xAB, sizeof ib); /* NCCL reuses the descriptor */
            fs_nccl_state_args_t a = {.netPlugin = {.data = &ib}};
            ev_state(t, c, FS_KIND_NET_PLUGIN, &e, FS_ST_NET_PLUGIN_UPDATE, &a, 0);
            ev_stop(t, c, FS_KIND_NET_PLUGIN, &e);
        }
    }
    return NULL;
}

static void* sock_thread(void* arg) {
    hthread_t* t = arg;
    item_t it;
    char pl[256];
    fs_nccl_net_sock_descr_v1_t so;
    while (q_pop(&sock_q, &it)) {
        comm_t* c = &comms[it.comm];
        if (live_stop) continue;
        fs_nccl_descr_v6_t d;
        memset(&d, 0, sizeof d);
        if (it.q % 10 == 9) { /* a plugin flowscope does not know: netType 0 */
            d.netPlugin.id = 0x30001;
            d.netPlugin.data = &so;
            snprintf(pl, sizeof pl, "pluginId=%u netType=0", 0x30001u);
        } else {
            memset(&so, 0, sizeof so);
            so.type = FS_NET_SOCK_EVENT_SOCKET;
            so.sock.fd = 40 + it.q % 8;
            so.sock.op = it.q % 2;
            so.sock.length = 4096 * (size_t)(it.q % 16 + 1);
            d.netPlugin.id = FS_NET_PLUGIN_ID_SOCK_V1;
            d.netPlugin.data = &so;
            snprintf(pl, sizeof pl, "pluginId=%u netType=2 sockOp=%d fd=%d length=%zu",
                     FS_NET_PLUGIN_ID_SOCK_V1, so.sock.op, so.sock.fd, so.sock.length);
        }
        ev_t e = ev_start(t, c, FS_KIND_NET_PLUGIN, &it.ev, 0, &d, pl);
        memset(&so, 0xCD, sizeof so);
        ev_stop(t, c, FS_KIND_NET_PLUGIN, &e);
    }
    return NULL;
}

/* ---- abuse thread: the calls a broken NCCL might make ---- */

static void* abuse_thread(void* arg) {
    hthread_t* t = arg;
    comm_t* c = &comms[0];
    fs_nccl_descr_v6_t d;
    void* h;
    long inv = 0;
    uint32_t all = opt.abi == 4 ? FS_EV_ALL_V4 : opt.abi == 5 ? FS_EV_ALL_V5 : FS_EV_ALL_V6;
    for (int round = 0; round < 10; round++) {
        /* NULL context (as after a failed init) */
        memset(&d, 0, sizeof d);
        d.type = FS_EV_PROXY_STEP;
        h = call_start(NULL, &d);
        inv++;
        if (h) die("abuse: NULL context gave a handle");
        /* NULL eDescr */
        h = (void*)1;
        if (opt.abi == 4)
            p4->startEvent(c->ctx, &h, NULL);
        else if (opt.abi == 5)
            p5->startEvent(c->ctx, &h, NULL);
        else
            p6->startEvent(c->ctx, &h, NULL);
        inv++;
        if (h) die("abuse: NULL eDescr gave a handle");
        /* NULL eHandle pointer */
        if (opt.abi == 4) {
            fs_nccl_descr_v4_t d4 = {.type = FS_EV_PROXY_STEP};
            p4->startEvent(c->ctx, NULL, &d4);
        } else if (opt.abi == 5) {
            fs_nccl_descr_v5_t d5 = {.type = FS_EV_PROXY_STEP};
            p5->startEvent(c->ctx, NULL, &d5);
        } else {
            fs_nccl_descr_v6_t d6 = {.type = FS_EV_PROXY_STEP};
            p6->startEvent(c->ctx, NULL, &d6);
        }
        inv++;
        /* NULL handle to stop / record */
        call_stop(NULL);
        inv++;
        fs_nccl_state_args_t a = {.proxyStep = {.transSize = 5}};
        call_state(NULL, FS_ST_PROXY_STEP_SEND_WAIT, &a);
        inv++;
        /* a handle that is no flowscope id (kind 15) */
        call_state((void*)(uintptr_t)0xF000000000000001ULL, FS_ST_PROXY_STEP_SEND_WAIT, &a);
        inv++;
        /* unknown event types: 1<<20, two bits, a bit beyond this ABI, 0 */
        uint64_t bad[4] = {1ULL << 20, FS_EV_COLL | FS_EV_P2P, (uint64_t)all + 1, 0};
        for (int k = 0; k < 4; k++) {
            memset(&d, 0, sizeof d);
            d.type = bad[k];
            d.rank = c->rank;
            h = call_start(c, &d);
            inv++;
            if (h) die("abuse: unknown type 0x%" PRIx64 " gave a handle", bad[k]);
        }
        /* recorded: NULL parentObj, NULL eStateArgs, an unknown state */
        memset(&d, 0, sizeof d);
        d.proxyStep.step = 1000 + round;
        char pl[256];
        snprintf(pl, sizeof pl, "step=%d", 1000 + round);
        ev_t st = ev_start(t, c, FS_KIND_PROXY_STEP, NULL, 0, &d, pl);
        ev_state(t, c, FS_KIND_PROXY_STEP, &st, FS_ST_PROXY_STEP_SEND_WAIT, NULL, 0);
        ev_state(t, c, FS_KIND_PROXY_STEP, &st, 99, &a, 0);
        ev_state(t, c, FS_KIND_PROXY_STEP, &st, FS_ST_KERNEL_CH_STOP, NULL, 0);
        ev_stop(t, c, FS_KIND_PROXY_STEP, &st);
        /* NULL strings */
        memset(&d, 0, sizeof d);
        d.coll.seqNumber = 7;
        d.coll.count = 1;
        snprintf(pl, sizeof pl,
                 "seqNumber=7 nChannels=0 nWarps=0 count=1 root=0 func=%s datatype=%s algo=%s proto=%s",
                 S(NULL), S(NULL), S(NULL), S(NULL));
        ev_t co = ev_start(t, c, FS_KIND_COLL, NULL, 0, &d, pl);
        ev_stop(t, c, FS_KIND_COLL, &co);
        /* finalize of nothing */
        if (round < 2) {
            if (opt.abi == 4)
                p4->finalize(NULL);
            else if (opt.abi == 5)
                p5->finalize(NULL);
            else
                p6->finalize(NULL);
            inv++;
        }
    }
    invalid_expected += inv;
    return NULL;
}

/* ---- init / finalize ---- */

static void* init_thread(void* arg) {
    comm_t* c = arg;
    int* m = &nccl_event_mask;
    int rc;
    if (fake_set_device) fake_set_device(c->device); /* cudaSetDevice, as NCCL's comm init does first */
    if (opt.abi == 4)
        rc = p4->init(&c->ctx, m, c->name, c->hash, 1, c->nranks, c->rank, logger);
    else if (opt.abi == 5)
        rc = p5->init(&c->ctx, c->hash, m, c->name, 1, c->nranks, c->rank, logger);
    else
        rc = p6->init(&c->ctx, c->hash, m, c->name, 1, c->nranks, c->rank, logger);
    if (rc != 0 || !c->ctx) die("init of communicator %s failed (rc=%d)", c->name, rc);
    __atomic_store_n(&mask, (uint32_t)__atomic_load_n(m, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
    return NULL;
}

static void finalize_comm(comm_t* c) {
    if (opt.abi == 4)
        p4->finalize(c->ctx);
    else if (opt.abi == 5)
        p5->finalize(c->ctx);
    else
        p6->finalize(c->ctx);
}

/* ---- ring lookup and verification ---- */

static const char* ring_dir(void) {
    const char* d = getenv("FLOWSCOPE_RING_DIR");
    return d && *d ? d : "/dev/shm/flowscope";
}

static int count_rings(char* newest, size_t len) {
    char prefix[64];
    snprintf(prefix, sizeof prefix, "flowscope-%d-", (int)getpid());
    DIR* dir = opendir(ring_dir());
    if (!dir) return 0;
    int n = 0, best = -1;
    struct dirent* e;
    while ((e = readdir(dir))) {
        size_t pl = strlen(prefix), l = strlen(e->d_name);
        if (strncmp(e->d_name, prefix, pl) || l < pl + 6 || strcmp(e->d_name + l - 5, ".ring")) continue;
        int k = atoi(e->d_name + pl);
        n++;
        if (k > best) {
            best = k;
            if (newest) snprintf(newest, len, "%s/%s", ring_dir(), e->d_name);
        }
    }
    closedir(dir);
    return n;
}

static long total_lines(void) {
    long n = 0;
    for (int i = 0; i < nhthreads; i++) n += hthreads[i].n;
    return n;
}

static int verify_ring(const char* path, long records, int nrings_before, int nrings_after) {
    int fails = 0;
#define CHECK(cond, ...)                                                                                     \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "harness: verify: " __VA_ARGS__);                                                \
            fprintf(stderr, "\n");                                                                           \
            fails++;                                                                                         \
        }                                                                                                    \
    } while (0)
    CHECK(nrings_after - nrings_before == 1, "expected 1 new ring file, found %d",
          nrings_after - nrings_before);
    int fd = open(path, O_RDONLY);
    if (fd < 0) die("verify: open %s: %s", path, strerror(errno));
    struct stat st;
    fstat(fd, &st);
    uint8_t* b = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (b == MAP_FAILED) die("verify: mmap failed");
#define U32(o) (*(const uint32_t*)(b + (o)))
#define U64(o) (*(const uint64_t*)(b + (o)))
    CHECK(U64(FS_HDR_MAGIC_OFFSET) == FS_RING_MAGIC, "bad magic");
    CHECK(U32(FS_HDR_LAYOUT_VERSION_OFFSET) == FS_RING_LAYOUT_VERSION, "layout_version %x",
          U32(FS_HDR_LAYOUT_VERSION_OFFSET));
    CHECK(U32(FS_HDR_ABI_VERSION_OFFSET) == (uint32_t)opt.abi, "abi_version %u",
          U32(FS_HDR_ABI_VERSION_OFFSET));
    CHECK(U32(FS_HDR_PRODUCER_STATE_OFFSET) == FS_PRODUCER_STATE_CLOSED, "producer_state %u",
          U32(FS_HDR_PRODUCER_STATE_OFFSET));
    CHECK(U32(FS_HDR_PRODUCER_PID_OFFSET) == (uint32_t)getpid(), "producer_pid");
    CHECK(U32(FS_HDR_COMM_COUNT_OFFSET) == (uint32_t)ncomms_total, "comm_count %u != %d",
          U32(FS_HDR_COMM_COUNT_OFFSET), ncomms_total);
    uint64_t cap = U64(FS_HDR_CAPACITY_OFFSET);
    uint32_t lanes = U32(FS_HDR_LANE_COUNT_OFFSET);
    uint64_t lane_cap = U64(FS_HDR_LANE_CAPACITY_OFFSET);
    uint64_t hsize = U64(FS_HDR_HEADER_SIZE_OFFSET);
    CHECK(lanes >= 1 && lanes <= FS_LANE_MAX && !(lanes & (lanes - 1)), "lane_count %u", lanes);
    CHECK(lane_cap >= 16 && !(lane_cap & (lane_cap - 1)), "lane_capacity %" PRIu64, lane_cap);
    CHECK(cap == (uint64_t)lanes * lane_cap, "capacity %" PRIu64 " != %u x %" PRIu64, cap, lanes, lane_cap);
    CHECK((uint64_t)st.st_size == FS_RING_HEADER_SIZE + cap * 64, "file size");
    const char* want_lanes = getenv("FLOWSCOPE_RING_LANES");
    int wl = want_lanes ? atoi(want_lanes) : 0;
    if (wl >= 1 && wl <= (int)FS_LANE_MAX && !(wl & (wl - 1))) /* a valid setting is taken as is */
        CHECK(lanes == (uint32_t)wl, "lane_count %u != %s", lanes, want_lanes);
    if (fails) {
        munmap(b, (size_t)st.st_size);
        return fails;
    }
    for (size_t o = 512; o < 768; o += 8) CHECK(U64(o) == 0, "reserved header word at %zu not zero", o);
    uint64_t dropped_full = U64(FS_HDR_DROPPED_FULL_OFFSET);
    CHECK(U64(FS_HDR_DROPPED_ABANDONED_OFFSET) == 0, "dropped_abandoned");
    CHECK(U64(FS_HDR_DROPPED_CONTENDED_OFFSET) == 0, "dropped_contended %" PRIu64,
          U64(FS_HDR_DROPPED_CONTENDED_OFFSET));
    CHECK(U64(FS_HDR_INVALID_CALLS_OFFSET) == (uint64_t)invalid_expected, "invalid_calls %" PRIu64 " != %ld",
          U64(FS_HDR_INVALID_CALLS_OFFSET), invalid_expected);
    CHECK(U64(FS_HDR_STRINGS_OVERFLOW_OFFSET) == 0, "strings_overflow");
    /* each communicator entry (claimed in any order): its rank's CUDA device */
    for (int i = 0; i < ncomms_total; i++) {
        const uint8_t* e = b + FS_COMM_TABLE_OFFSET + (size_t)i * FS_COMM_ENTRY_SIZE;
        const comm_t* c = NULL;
        for (int j = 0; j < ncomms_total && !c; j++)
            if (comms[j].hash == *(const uint64_t*)(e + FS_COMM_HASH_OFFSET)) c = &comms[j];
        CHECK(c != NULL, "comm entry %d: a hash no init gave", i);
        if (!c) continue;
        int want_dev = fake_set_device && c->device >= 0 ? c->device : -1;
        char want_bus[FS_COMM_PCI_BUS_ID_LENGTH] = "";
        if (want_dev >= 0) fs_fake_cuda_bus_id(want_dev, want_bus, sizeof want_bus);
        int dev = *(const int32_t*)(e + FS_COMM_CUDA_DEV_OFFSET);
        const char* bus = (const char*)e + FS_COMM_PCI_BUS_ID_OFFSET;
        CHECK(dev == want_dev && strncmp(bus, want_bus, FS_COMM_PCI_BUS_ID_LENGTH) == 0,
              "comm %s: cuda_dev %d pci_bus_id '%.27s', expected %d '%s'", c->name, dev, bus, want_dev,
              want_bus);
        unsigned char want_uuid[FS_GPU_UUID_SIZE] = {0};
        if (want_dev >= 0) fs_fake_cuda_uuid(want_dev, want_uuid);
        const uint8_t* uuid = b + FS_GPU_UUID_TABLE_OFFSET + (size_t)i * FS_GPU_UUID_SIZE;
        CHECK(memcmp(uuid, want_uuid, FS_GPU_UUID_SIZE) == 0, "comm %s: gpu uuid ..%02x, expected ..%02x",
              c->name, uuid[FS_GPU_UUID_SIZE - 1], want_uuid[FS_GPU_UUID_SIZE - 1]);
        CHECK(strncmp((const char*)e + FS_COMM_NAME_OFFSET, c->name, FS_COMM_NAME_LENGTH) == 0,
              "comm %s: name '%.55s'", c->name, (const char*)e + FS_COMM_NAME_OFFSET);
    }

    /* The expected (kind, op) sequence of every harness thread, from its expect lines. */
    uint16_t** want_seq = calloc((size_t)nhthreads, sizeof *want_seq);
    long* want_len = calloc((size_t)nhthreads, sizeof *want_len);
    int* used = calloc((size_t)nhthreads, sizeof *used);
    long want[FS_KIND_COUNT][4] = {{0}};
    for (int i = 0; i < nhthreads; i++) {
        hthread_t* t = &hthreads[i];
        want_seq[i] = malloc(((size_t)t->n + 1) * sizeof(uint16_t));
        char* p = t->buf;
        while (p && *p) {
            char kind[32], op[16];
            int a, n;
            if (sscanf(p, "%d %d %31s %15s", &a, &n, kind, op) == 4)
                for (int k = 0; k < FS_KIND_COUNT; k++)
                    if (!strcmp(kind, kind_names[k])) {
                        int o = !strcmp(op, "START") ? 1 : !strcmp(op, "STOP") ? 2 : 3;
                        want[k][o]++;
                        if (want_len[i] < t->n) want_seq[i][want_len[i]++] = (uint16_t)(k << 2 | o);
                    }
            p = strchr(p, '\n');
            if (p) p++;
        }
    }

    /* Every lane: kept records published with the right checksum (pos = position
     * in the lane); each plugin thread only in one lane, its records in the order
     * one harness thread made them (a prefix of that order when records were
     * dropped: with no consumer, a full lane drops everything after). */
    long counts[FS_KIND_COUNT][4] = {{0}};
    uint64_t readable = 0;
    uint32_t full_lanes = 0;
    enum { MAXT = 256 };
    int lane_of_thread[MAXT]; /* a thread writes one lane (owned or shared, RING.md) */
    for (int i = 0; i < MAXT; i++) lane_of_thread[i] = -1;
    for (uint32_t l = 0; l < lanes && !fails; l++) {
        const uint8_t* lt = b + FS_LANE_TABLE_OFFSET + (size_t)l * FS_LANE_ENTRY_SIZE;
        uint64_t tail = *(const uint64_t*)(lt + FS_LANE_TAIL_OFFSET);
        CHECK(*(const uint64_t*)(lt + FS_LANE_HEAD_OFFSET) == 0, "lane %u head moved without a consumer", l);
        CHECK(tail <= lane_cap, "lane %u tail %" PRIu64 " > lane capacity %" PRIu64, l, tail, lane_cap);
        if (tail > lane_cap) break;
        readable += tail;
        full_lanes += tail == lane_cap;
        uint16_t* seq[MAXT] = {0};
        long len[MAXT] = {0};
        for (uint64_t pos = 0; pos < tail; pos++) {
            const uint64_t* w = (const uint64_t*)(b + fs_slot_offset(hsize, lane_cap, l, pos));
            if (w[0] != pos + 1) {
                CHECK(0, "lane %u slot %" PRIu64 " seq %" PRIu64, l, pos, w[0]);
                break;
            }
            uint32_t ck = fs_record_checksum(pos, w[1], w[2], w[3], w[4], w[5], w[6], w[7]);
            if (ck != (uint32_t)(w[1] >> 32)) {
                CHECK(0, "checksum of lane %u record %" PRIu64, l, pos);
                break;
            }
            uint32_t kind = (uint32_t)(w[1] & 0xFF), op = (uint32_t)(w[1] >> 8 & 0xFF);
            uint32_t th = (uint32_t)(w[1] >> 16 & 0xFFFF);
            if (kind < FS_KIND_COUNT && op >= 1 && op <= 3) counts[kind][op]++;
            CHECK(w[3] >> 60 == kind, "id kind");
            if (th >= MAXT || (lane_of_thread[th] >= 0 && lane_of_thread[th] != (int)l)) {
                CHECK(0, "lane %u holds a record of thread %u, which wrote lane %d", l, th,
                      th < MAXT ? lane_of_thread[th] : -1);
                break;
            }
            lane_of_thread[th] = (int)l;
            if (!seq[th]) seq[th] = malloc((size_t)(tail + 1) * sizeof(uint16_t));
            seq[th][len[th]++] = (uint16_t)(kind << 2 | op);
        }
        for (uint32_t th = 0; th < MAXT; th++) {
            if (!seq[th]) continue;
            int match = -1;
            for (int pass = 0; pass < 2 && match < 0; pass++) /* an exact match first, then a prefix */
                for (int i = 0; i < nhthreads && match < 0; i++)
                    if (!used[i] && (pass ? len[th] <= want_len[i] : len[th] == want_len[i]) &&
                        !memcmp(seq[th], want_seq[i], (size_t)len[th] * sizeof(uint16_t)))
                        match = i;
            CHECK(match >= 0,
                  "lane %u: the %ld records of thread %u are not (a prefix of) one harness "
                  "thread's records in order",
                  l, len[th], th);
            if (match >= 0) {
                used[match] = 1;
                CHECK(dropped_full > 0 || len[th] == want_len[match],
                      "lane %u: thread %u has %ld records, expected %ld", l, th, len[th], want_len[match]);
            }
            free(seq[th]);
        }
    }
    for (int i = 0; i < nhthreads; i++) free(want_seq[i]);
    free(want_seq);
    free(want_len);
    free(used);
    CHECK(readable + dropped_full == (uint64_t)records,
          "readable %" PRIu64 " + dropped_full %" PRIu64 " != records %ld", readable, dropped_full, records);
    CHECK(dropped_full == 0 || full_lanes > 0, "dropped_full %" PRIu64 " with no full lane", dropped_full);
    if (lanes == 1) {
        uint64_t expect_kept = (uint64_t)records < cap ? (uint64_t)records : cap;
        CHECK(readable == expect_kept, "readable %" PRIu64 " != %" PRIu64, readable, expect_kept);
    }
    if (dropped_full == 0)
        for (int k = 0; k < FS_KIND_COUNT; k++)
            for (int o = 1; o <= 3; o++)
                CHECK(counts[k][o] == want[k][o], "%s op %d: ring has %ld, expected %ld", kind_names[k], o,
                      counts[k][o], want[k][o]);
    fprintf(stderr,
            "harness: verify: lanes=%u lane_capacity=%" PRIu64 " readable=%" PRIu64 " dropped_full=%" PRIu64
            " records=%ld\n",
            lanes, lane_cap, readable, dropped_full, records);
    munmap(b, (size_t)st.st_size);
    return fails;
}

/* ---- main ---- */

static void usage(void) {
    fprintf(stderr,
            "usage: fs_harness --plugin PATH [--abi 4|5|6] [--comms K] [--ops N] [--ring-dir DIR]\n"
            "                  [--ring-size SPEC] [--ring-lanes N] [--mask SPEC] [--expect FILE] [--abuse] "
            "[--seed S]\n"
            "                  [--kernel-sampling N] [--live SECONDS [--rate EVENTS_PER_SEC]] [--verify]\n"
            "                  [--fake-cuda PATH]\n");
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
        else if (!strcmp(a, "--comms"))
            opt.comms = atoi(ARG());
        else if (!strcmp(a, "--ops"))
            opt.ops = atoi(ARG());
        else if (!strcmp(a, "--ring-dir"))
            setenv("FLOWSCOPE_RING_DIR", ARG(), 1);
        else if (!strcmp(a, "--ring-size"))
            setenv("FLOWSCOPE_RING_SIZE", ARG(), 1);
        else if (!strcmp(a, "--ring-lanes"))
            setenv("FLOWSCOPE_RING_LANES", ARG(), 1);
        else if (!strcmp(a, "--mask"))
            setenv("FLOWSCOPE_EVENT_MASK", ARG(), 1);
        else if (!strcmp(a, "--kernel-sampling"))
            setenv("FLOWSCOPE_KERNEL_SAMPLING", ARG(), 1);
        else if (!strcmp(a, "--expect"))
            opt.expect = ARG();
        else if (!strcmp(a, "--abuse"))
            opt.abuse = 1;
        else if (!strcmp(a, "--seed"))
            opt.seed = (unsigned)strtoul(ARG(), NULL, 0);
        else if (!strcmp(a, "--live"))
            opt.live_s = atof(ARG());
        else if (!strcmp(a, "--rate"))
            opt.rate = atof(ARG());
        else if (!strcmp(a, "--verify"))
            opt.verify = 1;
        else if (!strcmp(a, "--fake-cuda"))
            opt.fake_cuda = ARG();
        else
            usage();
    }
    if (!opt.plugin || opt.abi < 4 || opt.abi > 6 || opt.comms < 1 || opt.comms > MAX_COMMS || opt.ops < 0)
        usage();
    if (opt.live_s > 0) {
        queue_limit = 64;
        opt.comms = 2;
        opt.abuse = 0;
        opt.expect = NULL;
    }
    /* Every operation gets KernelCh unless a sampling is asked for, so the
     * expectations cover each kind on every run. */
    setenv("FLOWSCOPE_KERNEL_SAMPLING", "1", 0);
    void* fake = NULL;
    if (opt.fake_cuda) { /* the driver is loaded before NCCL loads its profiler, as libcudart loads it */
        fake = dlopen(opt.fake_cuda, RTLD_NOW | RTLD_GLOBAL);
        if (!fake) die("dlopen %s: %s", opt.fake_cuda, dlerror());
        fake_set_device = (fs_fake_cuda_set_device_t)dlsym(fake, "fs_fake_cuda_set_device");
        if (!fake_set_device) die("%s: no fs_fake_cuda_set_device", opt.fake_cuda);
    }
    void* lib;
    void* s = load_plugin(opt.plugin, opt.abi, &lib);
    p4 = s;
    p5 = s;
    p6 = s;
    int rings_before = count_rings(NULL, 0);

    /* communicators, initialised concurrently */
    srand(opt.seed);
    ncomms_total = opt.comms + (opt.abuse ? ABUSE_COMMS : 0);
    for (int i = 0; i < ncomms_total; i++) {
        comm_t* c = &comms[i];
        c->hash = 0xf10a5c0900000000ULL ^ ((uint64_t)opt.seed << 20) ^ (uint64_t)(i + 1) * 0x9e3779b1ULL;
        c->rank = i < opt.comms ? i : 0;
        c->nranks = i < opt.comms ? opt.comms : 1;
        snprintf(c->name, sizeof c->name, "harness-comm-%d", i);
        c->device = i < opt.comms ? i : -1;
    }
    pthread_t th[MAX_COMMS + ABUSE_COMMS + 8];
    for (int i = 0; i < ncomms_total; i++) pthread_create(&th[i], NULL, init_thread, &comms[i]);
    for (int i = 0; i < ncomms_total; i++) pthread_join(th[i], NULL);

    /* harness threads */
    nhthreads = opt.comms + 3 + (opt.abuse ? 1 : 0);
    hthreads = calloc((size_t)nhthreads, sizeof(hthread_t));
    for (int i = 0; i < nhthreads; i++) {
        hthreads[i].id = i;
        hthreads[i].out = open_memstream(&hthreads[i].buf, &hthreads[i].len);
    }
    q_init(&proxy_q, opt.comms);
    q_init(&ib_q, 1);
    q_init(&sock_q, 1);
    live_t0 = now_ns();
    int K = opt.comms;
    for (int i = 0; i < K; i++) pthread_create(&th[i], NULL, app_thread, &hthreads[i]);
    pthread_create(&th[K], NULL, proxy_thread, &hthreads[K]);
    pthread_create(&th[K + 1], NULL, ib_thread, &hthreads[K + 1]);
    pthread_create(&th[K + 2], NULL, sock_thread, &hthreads[K + 2]);
    if (opt.abuse) pthread_create(&th[K + 3], NULL, abuse_thread, &hthreads[K + 3]);
    for (int i = 0; i < nhthreads; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < nhthreads; i++) fclose(hthreads[i].out);

    char ring[1024] = "";
    int rings_after = count_rings(ring, sizeof ring);
    for (int i = 0; i < ncomms_total; i++) finalize_comm(&comms[i]);

    if (opt.expect) {
        FILE* f = fopen(opt.expect, "w");
        if (!f) die("cannot write %s: %s", opt.expect, strerror(errno));
        for (int i = 0; i < nhthreads; i++) fwrite(hthreads[i].buf, 1, hthreads[i].len, f);
        if (fclose(f) != 0) die("write %s failed", opt.expect);
    }
    long records = total_lines();
    int rc = 0;
    if (opt.verify && opt.live_s <= 0) rc = verify_ring(ring, records, rings_before, rings_after) ? 1 : 0;
    if (opt.live_s > 0)
        printf("harness: abi=%d live=%.1fs events=%" PRIu64 " ring=%s\n", opt.abi, opt.live_s, live_events,
               ring);
    else
        printf("harness: abi=%d records=%ld invalid=%ld ring=%s kernelGroups=%" PRIu64 "/%" PRIu64 "\n",
               opt.abi, records, invalid_expected, ring, kernel_groups, all_groups);
    fflush(stdout);
    for (int i = 0; i < nhthreads; i++) free(hthreads[i].buf);
    free(hthreads);
    free(proxy_q.items);
    free(ib_q.items);
    free(sock_q.items);
    dlclose(lib);
    if (fake) dlclose(fake);
    return rc;
}
