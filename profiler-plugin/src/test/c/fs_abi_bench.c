/*
 * fs_abi_bench.c - what one NCCL profiler callback costs, through the ABI, from
 * 1..8 threads on ONE communicator (issue #17, item 4).
 *
 * Loads each plugin given (`--plugin NAME=PATH`, e.g. flowscope before and
 * after a change) and a no-op plugin (`--noop PATH`, fs_noop_plugin.c) into one
 * process, calls init once per plugin (one communicator each) and drives the
 * ncclProfiler_v5 table from a pool of threads with NCCL's roles:
 *
 *   worker 0      proxy progress thread: ProxyOp start, 4 x (ProxyStep start,
 *                 states 8, 20, 9 with transSize, stop), ProxyOp state 19, stop
 *   worker 1      application thread: Group start, Coll start (AllReduce,
 *                 strings interned), P2p start, stops
 *   worker 2      CUDA-callback thread: KernelCh start, state 22, stop when the
 *                 mask has KernelCh; else the Coll/P2p stops it would see
 *   worker 3..    socket helper threads: NetPlugin start (socket descriptor),
 *                 state 21, stop
 *
 * Only kinds in the mask flowscope's init returned are called (as NCCL does),
 * for every plugin alike. Runs are interleaved: for each thread count, each
 * repetition runs every plugin once, in an order that alternates. Each call is
 * bracketed by rdtscp (the bracket and the call through the table are in the
 * no-op figures too: the cost of a plugin is its figure minus the no-op's of
 * the same run); a second, unbracketed pass gives the mean.
 *
 * With `--consumer drain` (default) a consumer thread drains the running
 * plugin's ring (RING.md protocol, 100 us sleep when idle, like the Java
 * reader); `--consumer none` leaves the ring to fill, so what is measured
 * after the first lap is the drop path (every record counted in dropped_full).
 *
 * `dropped` is read from the ring header per run: a full lane adds its drops to
 * the header in batches (RING.md), so a run's figure may include up to 255 per
 * lane of the run before.
 *
 * Also measured: the clock reads the plugin could use (rdtsc, rdtscp,
 * clock_gettime(CLOCK_MONOTONIC), the plugin's TSC-scaled fs_clock_now_ns)
 * from 1 and from N threads at once. The host is recorded first (CPU model,
 * CPUs, clocksource).
 *
 *   fs_abi_bench --noop PATH --plugin NAME=PATH [--plugin NAME=PATH ...]
 *                [--threads 1,2,4,8] [--reps 5] [--calls N per thread per run]
 *                [--consumer drain|none] [--ring-size 64M] [--lanes 8]
 *                [--pin CPU,CPU,...] [--consumer-cpu CPU] [--ring-dir DIR]
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#define FS_PROGRAM "fs_abi_bench"
#include "fs_clock.h"
#include "fs_ring_consumer.h"
#include "fs_ring_layout.h"
#include "fs_test_util.h"

#define MAX_PLUGINS  6
#define MAX_THREADS  64
#define STEPS_PER_OP 4

typedef struct {
    char name[32];
    const char* path;
    const fs_nccl_profiler_v5_t* prof;
    void* lib;
    void* ctx;
    int is_noop;
    char ring_dir[300];
    char ring_path[600];
    fs_consumer_t consumer; /* flowscope plugins only */
    int has_ring;
    uint64_t drops_before; /* header counters before a run */
} plugin_t;

typedef struct {
    pthread_t th;
    int index;
    int cpu; /* -1: not pinned */
    uint32_t* samples;
    uint64_t n;        /* calls made in the timed pass */
    uint64_t batch_ns; /* the unbracketed pass: wall time of `batch_n` calls */
    uint64_t batch_n;
    char pad[64];
} worker_t;

static plugin_t plugins[MAX_PLUGINS];
static int nplugins;
static int event_mask; /* what flowscope's init asked NCCL for */
static uint64_t calls_per_run = 200000;
static worker_t workers[MAX_THREADS];

/* the run the workers execute (written by main before bumping go_gen) */
static const fs_nccl_profiler_v5_t* run_prof;
static void* run_ctx;
static int run_threads;
static volatile uint64_t go_gen;
static volatile int done_count;
static volatile int ready_count;
static volatile int quit;

static volatile int consumer_quit;
static fs_consumer_t* volatile consumer_target; /* NULL: nothing to drain */
static volatile uint64_t consumed;
static int consumer_cpu = -1;
static int consumer_drain = 1;

static inline uint64_t tick(void) {
    unsigned aux;
    return __rdtscp(&aux);
}

static uint64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void pin_self(int cpu) {
    if (cpu < 0) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof set, &set) != 0)
        die("cannot pin a thread to CPU %d", cpu);
}

/* ---- the callback patterns ---- */

typedef struct {
    const fs_nccl_profiler_v5_t* p;
    void* ctx;
    uint32_t* samples; /* NULL: unbracketed */
    uint64_t i;
    uint64_t limit;
} pass_t;

/* One callback, bracketed when timing. Returns 0 once the pass has made its calls. */
#define CALL(ps, call)                                                                                       \
    do {                                                                                                     \
        if ((ps)->samples) {                                                                                 \
            uint64_t t0_ = tick();                                                                           \
            call;                                                                                            \
            uint64_t t1_ = tick();                                                                           \
            uint64_t d_ = t1_ - t0_;                                                                         \
            (ps)->samples[(ps)->i] = d_ > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)d_;                          \
        } else {                                                                                             \
            call;                                                                                            \
        }                                                                                                    \
        (ps)->i++;                                                                                           \
    } while (0)
#define ROOM(ps, k) ((ps)->i + (k) <= (ps)->limit)
#define HAS(kind)   (event_mask & (kind))

static void role_proxy(pass_t* ps, uint64_t* op) {
    fs_nccl_descr_v5_t d;
    memset(&d, 0, sizeof d);
    fs_nccl_state_args_t a = {.proxyStep = {.transSize = 131072}};
    void *hop = NULL, *hs;
    if (HAS(FS_EV_PROXY_OP) && ROOM(ps, 1)) {
        d.type = FS_EV_PROXY_OP;
        d.parentObj = (void*)(uintptr_t)(1ULL << 60 | (*op + 1));
        d.proxyOp.pid = 4242;
        d.proxyOp.channelId = (uint8_t)(*op & 7);
        d.proxyOp.peer = 1;
        d.proxyOp.nSteps = STEPS_PER_OP;
        d.proxyOp.chunkSize = 131072;
        d.proxyOp.isSend = 1;
        CALL(ps, ps->p->startEvent(ps->ctx, &hop, &d));
    }
    for (int s = 0; s < STEPS_PER_OP && HAS(FS_EV_PROXY_STEP) && ROOM(ps, 5); s++) {
        memset(&d, 0, sizeof d);
        d.type = FS_EV_PROXY_STEP;
        d.parentObj = hop;
        d.proxyStep.step = (int)(*op * STEPS_PER_OP + (uint64_t)s);
        CALL(ps, ps->p->startEvent(ps->ctx, &hs, &d));
        CALL(ps, ps->p->recordEventState(hs, FS_ST_PROXY_STEP_SEND_GPU_WAIT, &a));
        CALL(ps, ps->p->recordEventState(hs, FS_ST_PROXY_STEP_SEND_PEER_WAIT, &a));
        CALL(ps, ps->p->recordEventState(hs, FS_ST_PROXY_STEP_SEND_WAIT, &a));
        CALL(ps, ps->p->stopEvent(hs));
    }
    if (hop && ROOM(ps, 2)) {
        CALL(ps, ps->p->recordEventState(hop, FS_ST_PROXY_OP_IN_PROGRESS, NULL));
        CALL(ps, ps->p->stopEvent(hop));
    }
    (*op)++;
}

static void role_app(pass_t* ps, uint64_t* op) {
    fs_nccl_descr_v5_t d;
    void *hg = NULL, *hc = NULL, *hp = NULL;
    if (HAS(FS_EV_GROUP) && ROOM(ps, 1)) {
        memset(&d, 0, sizeof d);
        d.type = FS_EV_GROUP;
        CALL(ps, ps->p->startEvent(ps->ctx, &hg, &d));
    }
    if (HAS(FS_EV_COLL) && ROOM(ps, 1)) {
        memset(&d, 0, sizeof d);
        d.type = FS_EV_COLL;
        d.parentObj = hg;
        d.coll.seqNumber = *op;
        d.coll.func = "AllReduce";
        d.coll.count = 1 << 20;
        d.coll.datatype = "ncclFloat32";
        d.coll.nChannels = 8;
        d.coll.nWarps = 16;
        d.coll.algo = "RING";
        d.coll.proto = "SIMPLE";
        CALL(ps, ps->p->startEvent(ps->ctx, &hc, &d));
    }
    if (HAS(FS_EV_P2P) && ROOM(ps, 1)) {
        memset(&d, 0, sizeof d);
        d.type = FS_EV_P2P;
        d.parentObj = hg;
        d.p2p.func = "Send";
        d.p2p.datatype = "ncclInt8";
        d.p2p.count = 4096;
        d.p2p.peer = 1;
        d.p2p.nChannels = 2;
        CALL(ps, ps->p->startEvent(ps->ctx, &hp, &d));
    }
    if (hc && ROOM(ps, 1)) CALL(ps, ps->p->stopEvent(hc));
    if (hp && ROOM(ps, 1)) CALL(ps, ps->p->stopEvent(hp));
    if (hg && ROOM(ps, 1)) CALL(ps, ps->p->stopEvent(hg));
    (*op)++;
}

static void role_cuda_callback(pass_t* ps, uint64_t* op) {
    fs_nccl_descr_v5_t d;
    memset(&d, 0, sizeof d);
    void* h = NULL;
    if (HAS(FS_EV_KERNEL_CH) && ROOM(ps, 3)) {
        d.type = FS_EV_KERNEL_CH;
        d.parentObj = (void*)(uintptr_t)(1ULL << 60 | (*op + 1));
        d.kernelCh.channelId = (uint8_t)(*op & 31);
        d.kernelCh.pTimer = 1000000000ULL + *op * 1000;
        fs_nccl_state_args_t a = {.kernelCh = {.pTimer = d.kernelCh.pTimer + 500}};
        CALL(ps, ps->p->startEvent(ps->ctx, &h, &d));
        CALL(ps, ps->p->recordEventState(h, FS_ST_KERNEL_CH_STOP, &a));
        CALL(ps, ps->p->stopEvent(h));
    } else if (HAS(FS_EV_COLL) && ROOM(ps, 2)) {
        d.type = FS_EV_COLL;
        d.coll.seqNumber = *op;
        d.coll.func = "AllGather";
        d.coll.count = 1 << 16;
        d.coll.datatype = "ncclBfloat16";
        d.coll.nChannels = 4;
        d.coll.nWarps = 8;
        d.coll.algo = "RING";
        d.coll.proto = "LL128";
        CALL(ps, ps->p->startEvent(ps->ctx, &h, &d));
        CALL(ps, ps->p->stopEvent(h));
    } else {
        ps->i = ps->limit; /* nothing this role may call with this mask */
    }
    (*op)++;
}

static void role_socket(pass_t* ps, uint64_t* op, int fd) {
    if (!HAS(FS_EV_NET_PLUGIN) || !ROOM(ps, 3)) {
        ps->i = ps->limit;
        return;
    }
    fs_nccl_net_sock_descr_v1_t so;
    memset(&so, 0, sizeof so);
    so.type = FS_NET_SOCK_EVENT_SOCKET;
    so.sock.fd = fd;
    so.sock.op = (int)(*op & 1);
    so.sock.length = 65536;
    fs_nccl_descr_v5_t d;
    memset(&d, 0, sizeof d);
    d.type = FS_EV_NET_PLUGIN;
    d.parentObj = (void*)(uintptr_t)(4ULL << 60 | (*op + 1));
    d.netPlugin.id = FS_NET_PLUGIN_ID_SOCK_V1;
    d.netPlugin.data = &so;
    void* h = NULL;
    fs_nccl_state_args_t a = {.netPlugin = {.data = &so}};
    CALL(ps, ps->p->startEvent(ps->ctx, &h, &d));
    CALL(ps, ps->p->recordEventState(h, FS_ST_NET_PLUGIN_UPDATE, &a));
    CALL(ps, ps->p->stopEvent(h));
    (*op)++;
}

static const char* role_name(int index) {
    switch (index) {
    case 0:
        return "proxy";
    case 1:
        return "app";
    case 2:
        return "cuda-cb";
    default:
        return "socket";
    }
}

static void run_pass(worker_t* w, pass_t* ps) {
    uint64_t op = 0;
    while (ps->i < ps->limit) {
        uint64_t before = ps->i;
        switch (w->index) {
        case 0:
            role_proxy(ps, &op);
            break;
        case 1:
            role_app(ps, &op);
            break;
        case 2:
            role_cuda_callback(ps, &op);
            break;
        default:
            role_socket(ps, &op, 40 + w->index);
            break;
        }
        if (ps->i == before) break; /* no room for this role's next group of calls */
    }
}

static void* worker_main(void* arg) {
    worker_t* w = arg;
    pin_self(w->cpu);
    uint64_t seen = 0;
    for (;;) {
        /* between runs, sleep: a spinning idle worker would take a CPU (or a core's
         * sibling) from the workers of the run */
        while (go_gen == seen && !quit) usleep(50);
        if (quit) return NULL;
        seen = go_gen;
        if (w->index < run_threads) {
            /* the run's workers start together */
            __atomic_fetch_add(&ready_count, 1, __ATOMIC_ACQ_REL);
            while (__atomic_load_n(&ready_count, __ATOMIC_ACQUIRE) < run_threads) __builtin_ia32_pause();
            pass_t timed = {.p = run_prof, .ctx = run_ctx, .samples = w->samples, .limit = calls_per_run};
            run_pass(w, &timed);
            w->n = timed.i;
            pass_t batch = {.p = run_prof, .ctx = run_ctx, .samples = NULL, .limit = calls_per_run};
            uint64_t b0 = mono_ns();
            run_pass(w, &batch);
            w->batch_ns = mono_ns() - b0;
            w->batch_n = batch.i;
        }
        __atomic_fetch_add(&done_count, 1, __ATOMIC_RELEASE);
    }
}

static void* consumer_main(void* arg) {
    (void)arg;
    pin_self(consumer_cpu);
    fs_record_t rec;
    uint64_t n = 0;
    while (!consumer_quit) {
        fs_consumer_t* c = consumer_target;
        if (c && fs_consumer_poll(c, &rec, NULL)) {
            n++;
            continue;
        }
        consumed = n;
        usleep(100); /* the Java reader's idle back-off */
    }
    consumed = n;
    return NULL;
}

/* ---- plugins ---- */

static uint64_t ring_drops(const plugin_t* p) {
    if (!p->has_ring) return 0;
    const uint8_t* b = p->consumer.base;
    return __atomic_load_n((const uint64_t*)(b + FS_HDR_DROPPED_FULL_OFFSET), __ATOMIC_RELAXED) +
           __atomic_load_n((const uint64_t*)(b + FS_HDR_DROPPED_CONTENDED_OFFSET), __ATOMIC_RELAXED) +
           __atomic_load_n((const uint64_t*)(b + FS_HDR_DROPPED_ABANDONED_OFFSET), __ATOMIC_RELAXED);
}

static void open_ring(plugin_t* p) {
    DIR* d = opendir(p->ring_dir);
    if (!d) die("no ring directory %s after %s's init", p->ring_dir, p->name);
    struct dirent* e;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".ring") && strlen(e->d_name) < 256)
            snprintf(p->ring_path, sizeof p->ring_path, "%s/%.256s", p->ring_dir, e->d_name);
    closedir(d);
    if (!p->ring_path[0] || fs_consumer_open(&p->consumer, p->ring_path) != 0)
        die("cannot open %s's ring in %s", p->name, p->ring_dir);
    p->has_ring = 1;
}

static void init_plugin(plugin_t* p, const char* base_dir, int index) {
    p->prof = load_plugin(p->path, 5, &p->lib);
    snprintf(p->ring_dir, sizeof p->ring_dir, "%s/p%d", base_dir, index);
    setenv("FLOWSCOPE_RING_DIR", p->ring_dir, 1); /* read at the plugin's first init */
    int mask = 0;
    if (p->prof->init(&p->ctx, 0xab1bE4c400000000ULL + (uint64_t)index, &mask, "abi-bench", 1, 2, 0,
                      logger) != 0 ||
        !p->ctx)
        die("%s: init failed", p->name);
    if (!p->is_noop) {
        if (!event_mask)
            event_mask = mask;
        else if (mask != event_mask)
            die("%s asked for event mask 0x%x, the first plugin for 0x%x", p->name, mask, event_mask);
        open_ring(p);
    }
}

/* ---- statistics ---- */

static int cmp_u32(const void* a, const void* b) {
    uint32_t x = *(const uint32_t*)a, y = *(const uint32_t*)b;
    return x < y ? -1 : x > y;
}

static double ns_per_tick;

static double pct_ns(const uint32_t* sorted, uint64_t n, double p) {
    return n ? (double)sorted[(uint64_t)(p * (double)(n - 1))] * ns_per_tick : 0;
}

typedef struct {
    uint32_t* all; /* every bracketed sample of this plugin at this thread count */
    uint64_t n, cap;
    double batch_sum; /* sum over runs of the mean unbracketed ns per call */
    int runs;
    double rep_median[64];
    uint64_t drops;
    double med, p90, p99, p999, batch_mean;
    double role_med[4];
} agg_t;

static void agg_add_run(agg_t* a, int nthreads, uint64_t drops) {
    uint64_t k = 0;
    for (int i = 0; i < nthreads; i++) k += workers[i].n;
    if (a->n + k > a->cap) {
        a->cap = (a->n + k) * 2;
        a->all = realloc(a->all, a->cap * sizeof *a->all);
        if (!a->all) die("out of memory");
    }
    uint32_t* run = a->all + a->n;
    uint64_t off = 0, bn = 0;
    double bns = 0;
    for (int i = 0; i < nthreads; i++) {
        memcpy(run + off, workers[i].samples, workers[i].n * sizeof *run);
        off += workers[i].n;
        bns += (double)workers[i].batch_ns;
        bn += workers[i].batch_n;
    }
    a->n += k;
    a->batch_sum += bn ? bns / (double)bn : 0;
    /* this run's median, for the spread between repetitions */
    uint32_t* copy = malloc(k * sizeof *copy);
    memcpy(copy, run, k * sizeof *copy);
    qsort(copy, k, sizeof *copy, cmp_u32);
    if (a->runs < 64) a->rep_median[a->runs] = pct_ns(copy, k, 0.5);
    free(copy);
    a->runs++;
    a->drops += drops;
}

static void agg_finish(agg_t* a) {
    qsort(a->all, a->n, sizeof *a->all, cmp_u32);
    a->med = pct_ns(a->all, a->n, 0.5);
    a->p90 = pct_ns(a->all, a->n, 0.9);
    a->p99 = pct_ns(a->all, a->n, 0.99);
    a->p999 = pct_ns(a->all, a->n, 0.999);
    a->batch_mean = a->runs ? a->batch_sum / a->runs : 0;
}

static void rep_spread(const agg_t* a, double* lo, double* hi) {
    *lo = 1e18, *hi = 0;
    for (int i = 0; i < a->runs && i < 64; i++) {
        if (a->rep_median[i] < *lo) *lo = a->rep_median[i];
        if (a->rep_median[i] > *hi) *hi = a->rep_median[i];
    }
}

/* ---- the host and its clocks ---- */

static void read_line(const char* path, char* out, size_t len) {
    out[0] = '\0';
    FILE* f = fopen(path, "r");
    if (!f) {
        snprintf(out, len, "(unreadable)");
        return;
    }
    if (fgets(out, (int)len, f)) out[strcspn(out, "\n")] = '\0';
    fclose(f);
}

static void cpu_model(char* out, size_t len) {
    snprintf(out, len, "(unknown)");
    FILE* f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "model name", 10)) {
            char* c = strchr(line, ':');
            if (c) {
                c += 2;
                c[strcspn(c, "\n")] = '\0';
                snprintf(out, len, "%s", c);
            }
            break;
        }
    }
    fclose(f);
}

static void calibrate(void) {
    uint64_t t0 = tick(), n0 = mono_ns();
    usleep(200000);
    uint64_t t1 = tick(), n1 = mono_ns();
    ns_per_tick = (double)(n1 - n0) / (double)(t1 - t0);
}

typedef enum { CLK_RDTSC, CLK_RDTSCP, CLK_GETTIME, CLK_PLUGIN, CLK_COUNT } clk_t;
static const char* clk_names[CLK_COUNT] = {"rdtsc", "rdtscp", "clock_gettime(CLOCK_MONOTONIC)",
                                           "fs_clock_now_ns (plugin: TSC scaled to MONOTONIC)"};
static volatile int clk_go;
static volatile uint64_t clk_sink;

typedef struct {
    pthread_t th;
    clk_t which;
    int cpu;
    double ns;
} clk_job_t;

static double clock_loop(clk_t which) {
    enum { N = 2000000 };
    uint64_t acc = 0, t0 = mono_ns();
    for (int i = 0; i < N; i++) {
        switch (which) {
        case CLK_RDTSC:
            acc += __rdtsc();
            break;
        case CLK_RDTSCP:
            acc += tick();
            break;
        case CLK_GETTIME:
            acc += mono_ns();
            break;
        default:
            acc += fs_clock_now_ns();
            break;
        }
    }
    clk_sink = acc;
    return (double)(mono_ns() - t0) / N;
}

static void* clock_thread(void* arg) {
    clk_job_t* j = arg;
    pin_self(j->cpu);
    while (!clk_go) __builtin_ia32_pause();
    j->ns = clock_loop(j->which);
    return NULL;
}

static int pins[MAX_THREADS];
static int npins;

static void measure_clocks(int max_threads) {
    printf("\nClock reads (ns per read, mean of 2M in a loop; 1 thread: best of 3; then %d threads at once: "
           "median of theirs)\n",
           max_threads);
    printf("| read | 1 thread | %d threads |\n|---|---|---|\n", max_threads);
    (void)clock_loop(CLK_RDTSC); /* warm-up: the first loop of a process reads high */
    for (int c = 0; c < CLK_COUNT; c++) {
        double one = 1e18;
        for (int k = 0; k < 3; k++) { /* the best of 3: a loop preempted once reads high */
            double v = clock_loop((clk_t)c);
            if (v < one) one = v;
        }
        clk_job_t jobs[MAX_THREADS];
        clk_go = 0;
        for (int i = 0; i < max_threads; i++) {
            jobs[i] = (clk_job_t){.which = (clk_t)c, .cpu = i < npins ? pins[i] : -1};
            pthread_create(&jobs[i].th, NULL, clock_thread, &jobs[i]);
        }
        clk_go = 1;
        double v[MAX_THREADS];
        for (int i = 0; i < max_threads; i++) {
            pthread_join(jobs[i].th, NULL);
            v[i] = jobs[i].ns;
        }
        for (int i = 1; i < max_threads; i++) /* insertion sort: a handful */
            for (int k = i; k > 0 && v[k] < v[k - 1]; k--) {
                double t = v[k];
                v[k] = v[k - 1];
                v[k - 1] = t;
            }
        printf("| %s | %.1f | %.1f |\n", clk_names[c], one, v[max_threads / 2]);
    }
}

/* ---- main ---- */

static char base_dir[256];

/* Ring files are 64 MiB each in /dev/shm: removed on every exit, die() included. */
static void remove_rings(void) {
    for (int k = 0; k < nplugins; k++) {
        if (plugins[k].ring_path[0]) unlink(plugins[k].ring_path);
        if (plugins[k].ring_dir[0]) rmdir(plugins[k].ring_dir);
    }
    if (base_dir[0]) rmdir(base_dir);
}

static void parse_list(const char* s, int* out, int* n, int max) {
    char* copy = strdup(s);
    *n = 0;
    for (char* tok = strtok(copy, ","); tok && *n < max; tok = strtok(NULL, ",")) out[(*n)++] = atoi(tok);
    free(copy);
}

static void usage(void) {
    fprintf(
        stderr,
        "usage: fs_abi_bench --noop PATH --plugin NAME=PATH [--plugin NAME=PATH ...] [--threads 1,2,4,8]\n"
        "                    [--reps 5] [--calls N] [--consumer drain|none] [--ring-size 64M] [--lanes 8]\n"
        "                    [--pin CPU,CPU,...] [--consumer-cpu CPU] [--ring-dir DIR]\n");
    exit(2);
}

int main(int argc, char** argv) {
    int threads[16], nthreads_list = 0, reps = 5;
    parse_list("1,2,4,8", threads, &nthreads_list, 16);
    const char* ring_size = NULL;
    const char* lanes = NULL;
    const char* noop = NULL;
    snprintf(base_dir, sizeof base_dir, "/dev/shm/flowscope-abi-bench-%d", (int)getpid());
    for (int i = 1; i < argc; i++) {
        const char* a = argv[i];
        const char* v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) usage();
        i++;
        if (!strcmp(a, "--plugin")) {
            const char* eq = strchr(v, '=');
            if (!eq || nplugins >= MAX_PLUGINS - 1) usage();
            plugin_t* p = &plugins[nplugins++];
            snprintf(p->name, sizeof p->name, "%.*s", (int)(eq - v), v);
            p->path = eq + 1;
        } else if (!strcmp(a, "--noop"))
            noop = v;
        else if (!strcmp(a, "--threads"))
            parse_list(v, threads, &nthreads_list, 16);
        else if (!strcmp(a, "--reps"))
            reps = atoi(v);
        else if (!strcmp(a, "--calls"))
            calls_per_run = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--consumer")) {
            if (!strcmp(v, "drain"))
                consumer_drain = 1;
            else if (!strcmp(v, "none"))
                consumer_drain = 0;
            else
                usage();
        } else if (!strcmp(a, "--ring-size"))
            ring_size = v;
        else if (!strcmp(a, "--lanes"))
            lanes = v;
        else if (!strcmp(a, "--pin"))
            parse_list(v, pins, &npins, MAX_THREADS);
        else if (!strcmp(a, "--consumer-cpu"))
            consumer_cpu = atoi(v);
        else if (!strcmp(a, "--ring-dir"))
            snprintf(base_dir, sizeof base_dir, "%s", v);
        else
            usage();
    }
    if (!noop || nplugins == 0 || reps < 1 || calls_per_run < 64) usage();
    int max_threads = 0;
    for (int i = 0; i < nthreads_list; i++) {
        if (threads[i] < 1 || threads[i] > MAX_THREADS) usage();
        if (threads[i] > max_threads) max_threads = threads[i];
    }
    plugin_t* np = &plugins[nplugins++];
    snprintf(np->name, sizeof np->name, "noop");
    np->path = noop;
    np->is_noop = 1;

    if (ring_size) setenv("FLOWSCOPE_RING_SIZE", ring_size, 1);
    if (lanes) setenv("FLOWSCOPE_RING_LANES", lanes, 1);
    if (!getenv("FLOWSCOPE_EVENT_MASK")) setenv("FLOWSCOPE_EVENT_MASK", "default", 1);

    /* the host */
    char model[256], clocksource[128], avail[256];
    struct utsname u;
    uname(&u);
    cpu_model(model, sizeof model);
    read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource", clocksource,
              sizeof clocksource);
    read_line("/sys/devices/system/clocksource/clocksource0/available_clocksource", avail, sizeof avail);
    calibrate();
    fs_clock_init(1);
    printf("Host: %s; %ld CPUs online; kernel %s; clocksource %s (available: %s); invariant TSC %s; TSC %.3f "
           "GHz\n",
           model, sysconf(_SC_NPROCESSORS_ONLN), u.release, clocksource, avail,
           fs_clock_has_invariant_tsc() ? "yes" : "no", 1.0 / ns_per_tick);
    printf("Run: threads %s", "");
    for (int i = 0; i < nthreads_list; i++) printf("%s%d", i ? "," : "", threads[i]);
    printf("; %d repetitions, interleaved; %" PRIu64
           " calls per thread per run (timed) + the same unbracketed; consumer %s; "
           "ring %s, lanes %s; event mask %s; pinning %s",
           reps, calls_per_run, consumer_drain ? "draining" : "none (the ring fills: drop path)",
           ring_size ? ring_size : "default", lanes ? lanes : "default", getenv("FLOWSCOPE_EVENT_MASK"),
           npins ? "workers on CPUs " : "none");
    for (int i = 0; i < npins; i++) printf("%s%d", i ? "," : "", pins[i]);
    if (consumer_cpu >= 0) printf(", consumer on CPU %d", consumer_cpu);
    printf("\n");

    measure_clocks(max_threads);

    mkdir(base_dir, 0777);
    atexit(remove_rings);
    for (int i = 0; i < nplugins; i++) init_plugin(&plugins[i], base_dir, i);
    printf("\nEvent mask from flowscope's init: 0x%x. Roles: worker 0 proxy, 1 app, 2 cuda-cb, 3+ socket.\n",
           event_mask);

    for (int i = 0; i < max_threads; i++) {
        workers[i].index = i;
        workers[i].cpu = i < npins ? pins[i] : -1;
        workers[i].samples = malloc(calls_per_run * sizeof(uint32_t));
        if (!workers[i].samples) die("out of memory");
        memset(workers[i].samples, 1, calls_per_run * sizeof(uint32_t)); /* fault the pages in now */
        pthread_create(&workers[i].th, NULL, worker_main, &workers[i]);
    }
    pthread_t ct;
    pthread_create(&ct, NULL, consumer_main, NULL);

    agg_t* aggs = calloc((size_t)nthreads_list * (size_t)nplugins, sizeof *aggs);
    uint64_t gen = 0;
    for (int t = 0; t < nthreads_list; t++) {
        int nt = threads[t];
        for (int rep = -1; rep < reps; rep++) { /* rep -1: warm-up, not counted */
            for (int k = 0; k < nplugins; k++) {
                int pi = (rep & 1) ? nplugins - 1 - k : k;
                plugin_t* p = &plugins[pi];
                consumer_target = (consumer_drain && p->has_ring) ? &p->consumer : NULL;
                uint64_t drops0 = ring_drops(p);
                run_prof = p->prof;
                run_ctx = p->ctx;
                run_threads = nt;
                done_count = 0;
                ready_count = 0;
                __atomic_store_n(&go_gen, ++gen, __ATOMIC_RELEASE);
                while (__atomic_load_n(&done_count, __ATOMIC_ACQUIRE) < max_threads) usleep(200);
                if (rep >= 0) agg_add_run(&aggs[t * nplugins + pi], nt, ring_drops(p) - drops0);
                usleep(20000); /* let the consumer catch up between runs */
            }
        }
        for (int k = 0; k < nplugins; k++) agg_finish(&aggs[t * nplugins + k]);
    }
    quit = 1;
    for (int i = 0; i < max_threads; i++) pthread_join(workers[i].th, NULL);
    consumer_quit = 1;
    pthread_join(ct, NULL);

    printf("\nPer callback, ns (bracketed by rdtscp, bracket included; pooled over %d repetitions; "
           "rep medians = the spread of the repetitions' medians; mean = unbracketed pass)\n\n",
           reps);
    printf("| threads | plugin | median | p90 | p99 | p99.9 | rep medians | mean | dropped |\n");
    printf("|---|---|---|---|---|---|---|---|---|\n");
    for (int t = 0; t < nthreads_list; t++)
        for (int k = 0; k < nplugins; k++) {
            agg_t* a = &aggs[t * nplugins + k];
            double lo, hi;
            rep_spread(a, &lo, &hi);
            printf("| %d | %s | %.1f | %.1f | %.1f | %.1f | %.1f–%.1f | %.1f | %" PRIu64 " |\n", threads[t],
                   plugins[k].name, a->med, a->p90, a->p99, a->p999, lo, hi, a->batch_mean, a->drops);
        }
    printf("\nCost per callback = plugin minus noop of the same run, ns (goal: median <= 25 at 1 thread, "
           "median <= 40 and p99 <= 100 at 4 and 8)\n\n");
    printf("| threads | plugin | median | p99 | p99.9 | mean |\n|---|---|---|---|---|---|\n");
    for (int t = 0; t < nthreads_list; t++) {
        agg_t* base = &aggs[t * nplugins + nplugins - 1];
        for (int k = 0; k < nplugins - 1; k++) {
            agg_t* a = &aggs[t * nplugins + k];
            printf("| %d | %s | %+.1f | %+.1f | %+.1f | %+.1f |\n", threads[t], plugins[k].name,
                   a->med - base->med, a->p99 - base->p99, a->p999 - base->p999,
                   a->batch_mean - base->batch_mean);
        }
    }
    printf("\n");
    for (int t = 0; t < nthreads_list; t++) {
        agg_t* base = &aggs[t * nplugins + nplugins - 1];
        for (int k = 0; k < nplugins - 1; k++) {
            agg_t* a = &aggs[t * nplugins + k];
            printf(
                "BENCH threads=%d plugin=%s median_ns=%.1f p99_ns=%.1f noop_median_ns=%.1f noop_p99_ns=%.1f "
                "cost_median_ns=%.1f cost_p99_ns=%.1f cost_mean_ns=%.1f dropped=%" PRIu64 "\n",
                threads[t], plugins[k].name, a->med, a->p99, base->med, base->p99, a->med - base->med,
                a->p99 - base->p99, a->batch_mean - base->batch_mean, a->drops);
        }
    }
    printf("\nroles: ");
    for (int i = 0; i < max_threads; i++) printf("%s%d=%s", i ? ", " : "", i, role_name(i));
    printf("; records consumed: %" PRIu64 "\n", consumed);

    for (int k = 0; k < nplugins; k++) {
        plugin_t* p = &plugins[k];
        p->prof->finalize(p->ctx);
        if (p->has_ring) fs_consumer_close(&p->consumer);
    }
    for (int t = 0; t < nthreads_list * nplugins; t++) free(aggs[t].all);
    free(aggs);
    return 0;
}
