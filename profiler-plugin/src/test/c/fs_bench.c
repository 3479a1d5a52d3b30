/*
 * fs_bench.c - cost of one recorded event through the real plugin.
 *
 * dlopens the .so, takes ncclProfiler_v5, and for each thread count N runs N
 * producer threads doing a ProxyStep-shaped pattern (start, state 8, state 20,
 * state 9 with transSize, stop) while a consumer thread drains every lane of
 * the ring round-robin (so it never fills). Every call is bracketed by
 * rdtscp; the empty-bracket cost is measured and subtracted; ticks become ns
 * with the calibrated TSC.
 *
 * The plugin numbers threads in the order of their first record and a thread
 * writes lane `thread % lanes`; the workers of one configuration make their
 * first record one after the other, so they get consecutive thread indexes:
 * distinct lanes whenever lanes >= N (reported as lanes_used).
 *
 *   fs_bench [--plugin PATH] [--threads 1,2,4] [--events N per thread] [--ring-size SPEC]
 *            [--lanes N] [--consumer-idle-us US] [--ring-dir DIR]
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "fs_clock.h"
#include "fs_nccl_abi.h"
#include "fs_ring_consumer.h"
#include "fs_ring_layout.h"

static const fs_nccl_profiler_v5_t* prof;
static uint64_t events_per_thread = 1000000;
static double ns_per_tick;
static uint32_t bracket_ticks;

typedef struct {
    pthread_t th;
    int index;
    void* ctx;
    uint32_t* samples;
    uint64_t n;
    uint64_t t_start, t_end;
    uint64_t batch_ns; /* second pass, no per-call brackets: wall time of n calls */
} worker_t;

static volatile int go;
static volatile int consumer_stop;
static volatile int first_turn; /* workers make their first record in turn: consecutive thread indexes */

static inline uint64_t tick(void) {
    unsigned aux;
    return __rdtscp(&aux);
}

#define TIMED(i, call)                                                                                       \
    do {                                                                                                     \
        uint64_t t0_ = tick();                                                                               \
        call;                                                                                                \
        uint64_t t1_ = tick();                                                                               \
        w->samples[i] = (uint32_t)(t1_ - t0_ > 0xFFFFFFFFu ? 0xFFFFFFFFu : t1_ - t0_);                       \
    } while (0)

static void* worker(void* arg) {
    worker_t* w = arg;
    fs_nccl_descr_v5_t d;
    memset(&d, 0, sizeof d);
    d.type = FS_EV_PROXY_STEP;
    d.parentObj = (void*)(uintptr_t)(3ULL << 60 | 12345);
    fs_nccl_state_args_t a = {.proxyStep = {.transSize = 131072}};
    /* one untimed record each, in worker order: this fixes the thread index (and lane) */
    while (__atomic_load_n(&first_turn, __ATOMIC_ACQUIRE) != w->index) sched_yield();
    void* h0;
    prof->startEvent(w->ctx, &h0, &d);
    prof->stopEvent(h0);
    __atomic_store_n(&first_turn, w->index + 1, __ATOMIC_RELEASE);
    while (!go) __builtin_ia32_pause();
    w->t_start = fs_clock_monotonic_ns();
    uint64_t i = 0;
    for (int step = 0; i + 5 <= w->n; step++) {
        void* h;
        d.proxyStep.step = step;
        TIMED(i++, prof->startEvent(w->ctx, &h, &d));
        TIMED(i++, prof->recordEventState(h, FS_ST_PROXY_STEP_SEND_GPU_WAIT, &a));
        TIMED(i++, prof->recordEventState(h, FS_ST_PROXY_STEP_SEND_PEER_WAIT, &a));
        TIMED(i++, prof->recordEventState(h, FS_ST_PROXY_STEP_SEND_WAIT, &a));
        TIMED(i++, prof->stopEvent(h));
    }
    w->n = i;
    w->t_end = fs_clock_monotonic_ns();
    /* the same calls without brackets: the mean cost, free of rdtscp overhead and granularity */
    uint64_t b0 = fs_clock_monotonic_ns();
    for (uint64_t j = 0, step = 0; j + 5 <= w->n; j += 5, step++) {
        void* h;
        d.proxyStep.step = (int)step;
        prof->startEvent(w->ctx, &h, &d);
        prof->recordEventState(h, FS_ST_PROXY_STEP_SEND_GPU_WAIT, &a);
        prof->recordEventState(h, FS_ST_PROXY_STEP_SEND_PEER_WAIT, &a);
        prof->recordEventState(h, FS_ST_PROXY_STEP_SEND_WAIT, &a);
        prof->stopEvent(h);
    }
    w->batch_ns = fs_clock_monotonic_ns() - b0;
    return NULL;
}

static fs_consumer_t consumer;
static unsigned consumer_idle_us = 100;
static uint64_t consumed;

static void* consumer_thread(void* arg) {
    (void)arg;
    fs_record_t rec;
    for (;;) {
        int got = fs_consumer_poll(&consumer, &rec, NULL);
        if (got) {
            consumed++;
            continue;
        }
        if (consumer_stop) {
            while (fs_consumer_poll(&consumer, &rec, NULL)) consumed++;
            return NULL;
        }
        if (consumer_idle_us)
            usleep((useconds_t)consumer_idle_us); /* like the Java reader's idle strategy */
        else
            __builtin_ia32_pause();
    }
}

static int cmp_u32(const void* a, const void* b) {
    uint32_t x = *(const uint32_t*)a, y = *(const uint32_t*)b;
    return x < y ? -1 : x > y;
}

static uint32_t measure_bracket(void) {
    enum { N = 200000 };
    uint32_t* s = malloc(N * sizeof *s);
    for (int i = 0; i < N; i++) {
        uint64_t t0 = tick();
        uint64_t t1 = tick();
        s[i] = (uint32_t)(t1 - t0);
    }
    qsort(s, N, sizeof *s, cmp_u32);
    uint32_t med = s[N / 2];
    free(s);
    return med;
}

static int newest_ring(const char* dir, char* out, size_t len) {
    char prefix[64];
    snprintf(prefix, sizeof prefix, "flowscope-%d-", (int)getpid());
    DIR* d = opendir(dir);
    if (!d) return -1;
    int best = -1;
    struct dirent* e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, prefix, strlen(prefix))) continue;
        int k = atoi(e->d_name + strlen(prefix));
        if (k > best) {
            best = k;
            snprintf(out, len, "%s/%s", dir, e->d_name);
        }
    }
    closedir(d);
    return best >= 0 ? 0 : -1;
}

static double pct(const uint32_t* s, uint64_t n, double p) {
    uint64_t i = (uint64_t)(p * (double)(n - 1));
    double t = (double)s[i] - (double)bracket_ticks;
    return (t < 0 ? 0 : t) * ns_per_tick;
}

static void run(int nthreads, const char* ring_dir) {
    void* ctx = NULL;
    int mask = 0;
    if (prof->init(&ctx, 0xbe4c400000000001ULL + (uint64_t)nthreads, &mask, "bench", 1, 1, 0, NULL) != 0 ||
        !ctx) {
        fprintf(stderr, "bench: init failed\n");
        exit(1);
    }
    char path[1024];
    if (newest_ring(ring_dir, path, sizeof path) != 0 || fs_consumer_open(&consumer, path) != 0) {
        fprintf(stderr, "bench: cannot open the ring in %s\n", ring_dir);
        exit(1);
    }
    consumed = 0;
    consumer_stop = 0;
    go = 0;
    first_turn = 0;
    pthread_t ct;
    pthread_create(&ct, NULL, consumer_thread, NULL);
    worker_t* w = calloc((size_t)nthreads, sizeof *w);
    for (int i = 0; i < nthreads; i++) {
        w[i].index = i;
        w[i].ctx = ctx;
        w[i].n = events_per_thread;
        w[i].samples = malloc(events_per_thread * sizeof(uint32_t));
        memset(w[i].samples, 0, events_per_thread * sizeof(uint32_t)); /* fault the pages in now */
        pthread_create(&w[i].th, NULL, worker, &w[i]);
    }
    while (__atomic_load_n(&first_turn, __ATOMIC_ACQUIRE) != nthreads) usleep(1000);
    usleep(10000);
    go = 1;
    for (int i = 0; i < nthreads; i++) pthread_join(w[i].th, NULL);
    consumer_stop = 1;
    pthread_join(ct, NULL);
    prof->finalize(ctx); /* closes the ring (the lanes' pending drops reach the header); the next init opens a
                            fresh one */
    uint8_t* b = consumer.base;
    uint64_t drops = *(uint64_t*)(b + FS_HDR_DROPPED_FULL_OFFSET) +
                     *(uint64_t*)(b + FS_HDR_DROPPED_CONTENDED_OFFSET) +
                     *(uint64_t*)(b + FS_HDR_DROPPED_ABANDONED_OFFSET);
    uint64_t total = 0, t0 = UINT64_MAX, t1 = 0;
    double batch_mean = 0;
    for (int i = 0; i < nthreads; i++) {
        total += w[i].n;
        batch_mean += (double)w[i].batch_ns / (double)w[i].n / nthreads;
    }
    uint32_t* all = malloc(total * sizeof *all);
    uint64_t k = 0;
    for (int i = 0; i < nthreads; i++) {
        memcpy(all + k, w[i].samples, w[i].n * sizeof *all);
        k += w[i].n;
        if (w[i].t_start < t0) t0 = w[i].t_start;
        if (w[i].t_end > t1) t1 = w[i].t_end;
    }
    qsort(all, total, sizeof *all, cmp_u32);
    double eps = (double)total / ((double)(t1 - t0) / 1e9); /* bracketed pass */
    double med = pct(all, total, 0.5), p90 = pct(all, total, 0.9), p99 = pct(all, total, 0.99),
           p999 = pct(all, total, 0.999);
    uint32_t lanes_used = 0;
    for (uint32_t l = 0; l < consumer.lane_count; l++) lanes_used += consumer.lanes[l].received > 0;
    printf("%7d %5u %5u %12" PRIu64 " %9.1f %9.1f %9.1f %9.1f %10.1f %13.0f %8" PRIu64 " %10" PRIu64 "\n",
           nthreads, consumer.lane_count, lanes_used, total, med, p90, p99, p999, batch_mean, eps, drops,
           consumed);
    printf("BENCH threads=%d lanes=%u lanes_used=%u events=%" PRIu64
           " median_ns=%.1f p90_ns=%.1f p99_ns=%.1f "
           "p999_ns=%.1f batch_mean_ns=%.1f events_per_s=%.0f dropped=%" PRIu64 " consumed=%" PRIu64
           " bracket_ns=%.1f\n",
           nthreads, consumer.lane_count, lanes_used, total, med, p90, p99, p999, batch_mean, eps, drops,
           consumed, bracket_ticks * ns_per_tick);
    fflush(stdout);
    unlink(path);
    fs_consumer_close(&consumer);
    for (int i = 0; i < nthreads; i++) free(w[i].samples);
    free(w);
    free(all);
}

int main(int argc, char** argv) {
    const char* plugin = "build/libnccl-profiler-flowscope.so";
    const char* threads = "1,2,4";
    const char* ring_size = "1G"; /* 8 lanes x 2M slots: a lane holds both passes of 1M calls */
    const char* lanes = NULL;     /* the plugin's default */
    char ring_dir[256];
    snprintf(ring_dir, sizeof ring_dir, "/dev/shm/flowscope-bench-%d", (int)getpid());
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--plugin") && i + 1 < argc)
            plugin = argv[++i];
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            threads = argv[++i];
        else if (!strcmp(argv[i], "--events") && i + 1 < argc)
            events_per_thread = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--ring-size") && i + 1 < argc)
            ring_size = argv[++i];
        else if (!strcmp(argv[i], "--lanes") && i + 1 < argc)
            lanes = argv[++i];
        else if (!strcmp(argv[i], "--consumer-idle-us") && i + 1 < argc)
            consumer_idle_us = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--ring-dir") && i + 1 < argc)
            snprintf(ring_dir, sizeof ring_dir, "%s", argv[++i]);
        else {
            fprintf(stderr,
                    "usage: fs_bench [--plugin PATH] [--threads 1,2,4] [--events N] [--ring-size SPEC] "
                    "[--lanes N] [--consumer-idle-us US] [--ring-dir DIR]\n");
            return 2;
        }
    }
    setenv("FLOWSCOPE_RING_DIR", ring_dir, 1);
    setenv("FLOWSCOPE_RING_SIZE", ring_size, 1);
    if (lanes) setenv("FLOWSCOPE_RING_LANES", lanes, 1);
    setenv("FLOWSCOPE_EVENT_MASK", "default", 1);
    void* lib = dlopen(plugin, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopen %s: %s\n", plugin, dlerror());
        return 1;
    }
    prof = dlsym(lib, "ncclProfiler_v5");
    if (!prof) {
        fprintf(stderr, "no ncclProfiler_v5 in %s\n", plugin);
        return 1;
    }
    if (fs_clock_init(1) != FS_CLOCK_SOURCE_TSC) {
        fprintf(stderr, "bench: needs an invariant TSC\n");
        return 1;
    }
    usleep(300000);
    (void)fs_clock_now_ns(); /* re-anchor over a longer baseline */
    usleep(300000);
    (void)fs_clock_now_ns();
    ns_per_tick = fs_clock_ns_per_tick();
    bracket_ticks = measure_bracket();
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    printf("fs_bench: %s, %ld CPUs, TSC %.3f GHz, empty rdtscp bracket %.1f ns (subtracted), %" PRIu64
           " calls per thread, ring %s, consumer draining\n",
           plugin, ncpu, 1.0 / ns_per_tick, bracket_ticks * ns_per_tick, events_per_thread, ring_size);
    printf("%7s %5s %5s %12s %9s %9s %9s %9s %10s %13s %8s %10s\n", "threads", "lanes", "used", "events",
           "median", "p90", "p99", "p99.9", "batchmean", "events/s", "dropped", "consumed");
    char* list = strdup(threads);
    for (char* tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) run(atoi(tok), ring_dir);
    free(list);
    rmdir(ring_dir);
    dlclose(lib);
    return 0;
}
