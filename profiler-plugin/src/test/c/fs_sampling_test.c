/*
 * fs_sampling_test.c - KernelCh sampling (FLOWSCOPE_KERNEL_SAMPLING = N > 1)
 * against an emulation of what NCCL 2.28.9 does around its process-global
 * event mask (facts: profiler-plugin/README.md, "KernelCh sampling"):
 *
 *   - every enqueue call (ncclAllReduce, ncclSend, ...) copies the mask into its
 *     task before any callback of that call; the GroupApi event starts at the
 *     first task of a group and stops when NCCL's profiler depth count reaches
 *     0, which, with groups nested as torch nests them around each send and
 *     receive, is before the outermost group ends;
 *   - the outermost ncclGroupEnd launches one plan per communicator
 *     (KernelLaunch, Group, Coll/P2p events);
 *   - the i-th send and the i-th receive of a plan form one p2p work item whose
 *     GPU profiler counter is written only when the *receive's* copy has
 *     KernelCh; a task whose copy has KernelCh gets a profiler proxy op that
 *     waits for that counter: written -> KernelCh start with the task's handle
 *     as parent; never written -> the op waits forever (counted as "stuck":
 *     NCCL would hang in ncclCommDestroy).
 *
 * Each case runs in a child process with its own copy of the plugin:
 *   torch-like groups, N = 2, 3, 7, 100: no group split between two values,
 *      nothing stuck, KernelCh recorded for exactly the groups k % N == 0;
 *   two ranks whose processes drive other communicators in between: the same
 *      groups of the shared communicator sampled on both;
 *   a second thread making NCCL calls, a graph-captured operation: sampling
 *      freezes with one WARN and the bit never changes again.
 * Exit status 0 when every case passes.
 *   fs_sampling_test --plugin build/libnccl-profiler-flowscope.so [--quick]
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fs_nccl_abi.h"
#define FS_PROGRAM "sampling_test"
#include "fs_test_util.h"

#define MAX_GROUPS 8192
#define MAX_TASKS  64

static const char* plugin_path;
static const fs_nccl_profiler_v6_t* P;
static int nccl_mask; /* NCCL's ncclProfilerEventMask */
static int warns, freeze_warns;
static int stuck, split_groups, bit_changes_after_freeze;
static int frozen_seen; /* the emulation saw the plugin freeze (its WARN) */

typedef struct {
    void* ctx;
    uint64_t hash;
    uint64_t groups; /* launches that carried a task of it */
    unsigned char sampled[MAX_GROUPS];
    unsigned char partial[MAX_GROUPS];
} comm_t;

typedef struct {
    comm_t* c;
    int p2p, send, mask;
    void* api;
    void* op;
    int kernel; /* KernelCh recorded */
} task_t;

/* NCCL's per-thread enqueue state */
static __thread int group_depth, prof_depth;
static __thread void* group_api;
static __thread task_t tasks[MAX_TASKS];
static __thread int ntasks;

static void count_warn(int level, unsigned long flags, const char* file, int line, const char* fmt, ...) {
    (void)flags, (void)file, (void)line;
    if (level != FS_NCCL_LOG_WARN) return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "  (WARN %s)\n", msg);
    __atomic_add_fetch(&warns, 1, __ATOMIC_RELAXED);
    if (strstr(msg, "FLOWSCOPE_KERNEL_SAMPLING=") && strstr(msg, " stopped: ")) {
        __atomic_add_fetch(&freeze_warns, 1, __ATOMIC_RELAXED);
        __atomic_store_n(&frozen_seen, 1, __ATOMIC_RELAXED);
    }
}

static void* start(comm_t* c, uint64_t type, void* parent, int captured) {
    fs_nccl_descr_v6_t d;
    memset(&d, 0, sizeof d);
    d.type = type;
    d.parentObj = parent;
    if (type == FS_EV_GROUP_API) d.groupApi.graphCaptured = captured, d.groupApi.groupDepth = group_depth;
    if (type == FS_EV_COLL_API) d.collApi.func = "AllReduce", d.collApi.graphCaptured = captured;
    if (type == FS_EV_P2P_API) d.p2pApi.func = "Send", d.p2pApi.graphCaptured = captured;
    if (type == FS_EV_KERNEL_CH) d.kernelCh.pTimer = 1;
    void* h = (void*)1;
    P->startEvent(c->ctx, &h, &d);
    return h;
}

static void stop(void* h) {
    if (h) P->stopEvent(h);
}

/* One plan per communicator, as doLaunches: KernelLaunch, Group, the task events, then the GPU and
 * the proxy thread's profiler ops. */
static void launch(void) {
    int done[MAX_TASKS] = {0};
    for (int i = 0; i < ntasks; i++) {
        if (done[i]) continue;
        comm_t* c = tasks[i].c;
        task_t* mine[MAX_TASKS];
        int n = 0, bit = tasks[i].mask & FS_EV_KERNEL_CH;
        for (int j = i; j < ntasks; j++)
            if (!done[j] && tasks[j].c == c) mine[n++] = &tasks[j], done[j] = 1;
        for (int j = 0; j < n; j++)
            if ((mine[j]->mask & FS_EV_KERNEL_CH) != bit)
                __atomic_add_fetch(&split_groups, 1, __ATOMIC_RELAXED);
        if (tasks[i].mask & FS_EV_KERNEL_LAUNCH) stop(start(c, FS_EV_KERNEL_LAUNCH, NULL, 0));
        void* g = start(c, FS_EV_GROUP, NULL, 0);
        for (int j = 0; j < n; j++)
            mine[j]->op = start(c, mine[j]->p2p ? FS_EV_P2P : FS_EV_COLL, mine[j]->api, 0);
        for (int j = 0; j < n; j++) stop(mine[j]->op);
        stop(g);
        /* the GPU writes a task's counter when its work item is profiler-enabled */
        task_t *sends[MAX_TASKS], *recvs[MAX_TASKS];
        int ns = 0, nr = 0;
        for (int j = 0; j < n; j++) {
            task_t* t = mine[j];
            if (!t->p2p) {
                if (t->mask & FS_EV_KERNEL_CH) { /* written: the same copy decides both */
                    void* k = start(c, FS_EV_KERNEL_CH, t->op, 0);
                    t->kernel = k != NULL;
                    stop(k);
                }
            } else if (t->send)
                sends[ns++] = t;
            else
                recvs[nr++] = t;
        }
        for (int p = 0; p < ns || p < nr; p++) {
            task_t* s = p < ns ? sends[p] : NULL;
            task_t* r = p < nr ? recvs[p] : NULL;
            int written = ((r ? r : s)->mask & FS_EV_KERNEL_CH) != 0;
            task_t* both[2] = {s, r};
            for (int q = 0; q < 2; q++) {
                task_t* t = both[q];
                if (!t || !(t->mask & FS_EV_KERNEL_CH)) continue;
                if (!written) {
                    __atomic_add_fetch(&stuck, 1, __ATOMIC_RELAXED);
                    continue;
                }
                void* k = start(c, FS_EV_KERNEL_CH, t->op, 0);
                t->kernel = k != NULL;
                stop(k);
            }
        }
        uint64_t k = c->groups++;
        if (k < MAX_GROUPS) {
            int any = 0, all = 1;
            for (int j = 0; j < n; j++) any |= mine[j]->kernel, all &= mine[j]->kernel;
            c->sampled[k] = (unsigned char)any;
            c->partial[k] = (unsigned char)(any && !all);
        }
    }
    ntasks = 0;
}

static void group_start(void) {
    group_depth++;
}

static void group_end(void) {
    if (prof_depth > 0) prof_depth--;
    if (--group_depth > 0) goto out;
    launch();
out:
    if (prof_depth == 0 && group_api) {
        stop(group_api);
        group_api = NULL;
    }
}

static int last_bit = -1;

/* ncclEnqueueCheck + taskAppend */
static void enqueue(comm_t* c, int p2p, int send, int captured) {
    if (prof_depth > 0) prof_depth++;
    group_depth++;
    int mask = __atomic_load_n(&nccl_mask, __ATOMIC_RELAXED);
    int bit = (mask & FS_EV_KERNEL_CH) != 0;
    if (__atomic_load_n(&frozen_seen, __ATOMIC_RELAXED) && last_bit >= 0 && bit != last_bit)
        __atomic_add_fetch(&bit_changes_after_freeze, 1, __ATOMIC_RELAXED);
    last_bit = bit;
    if (prof_depth == 0) {
        group_api = start(c, FS_EV_GROUP_API, NULL, captured);
        prof_depth = group_depth;
    }
    void* api = start(c, p2p ? FS_EV_P2P_API : FS_EV_COLL_API, group_api, captured);
    if (ntasks < MAX_TASKS) tasks[ntasks++] = (task_t){c, p2p, send, mask, api, NULL, 0};
    stop(api);
    group_end();
}

/* torch's batch_isend_irecv: an outer group, each send and receive in a group of its own */
static void p2p_wrapped(comm_t* c, int send) {
    group_start();
    enqueue(c, 1, send, 0);
    group_end();
}

/* One iteration of deploy/gpu/sampling_workload.py: six groups. */
static void torch_iteration(comm_t* c) {
    enqueue(c, 0, 0, 0); /* all_reduce */
    enqueue(c, 0, 0, 0); /* all_gather */
    enqueue(c, 0, 0, 0); /* reduce_scatter */
    group_start();       /* send/recv */
    p2p_wrapped(c, 1);
    p2p_wrapped(c, 0);
    group_end();
    group_start(); /* grouped p2p: two sends, two receives */
    p2p_wrapped(c, 1);
    p2p_wrapped(c, 1);
    p2p_wrapped(c, 0);
    p2p_wrapped(c, 0);
    group_end();
    group_start(); /* three all_reduce, coalesced */
    group_start();
    for (int j = 0; j < 3; j++) enqueue(c, 0, 0, 0);
    group_end();
    group_end();
}

static void* lib;

static void load(unsigned every) {
    char v[32];
    snprintf(v, sizeof v, "%u", every);
    setenv("FLOWSCOPE_KERNEL_SAMPLING", v, 1);
    setenv("FLOWSCOPE_EVENT_MASK", "default,kernelch", 1);
    setenv("FLOWSCOPE_RING_SIZE", "1M", 1);
    P = load_plugin(plugin_path, 6, &lib);
}

static void init_comm(comm_t* c, uint64_t hash, int rank) {
    memset(c, 0, sizeof *c);
    c->hash = hash;
    if (P->init(&c->ctx, hash, &nccl_mask, "sampling-test", 1, 2, rank, count_warn) != 0 || !c->ctx)
        die("init failed");
}

static int check_due(const char* what, comm_t* c, unsigned every) {
    int bad = 0;
    uint64_t n = c->groups < MAX_GROUPS ? c->groups : MAX_GROUPS;
    for (uint64_t k = 0; k < n; k++) {
        int due = k % every == 0;
        if (c->sampled[k] != due || c->partial[k]) {
            if (bad++ < 3)
                fprintf(stderr, "  %s: group %" PRIu64 ": sampled %d partial %d, due %d\n", what, k,
                        c->sampled[k], c->partial[k], due);
        }
    }
    return bad;
}

static int report(const char* name, int bad) {
    bad += stuck + split_groups + bit_changes_after_freeze;
    printf("%s %s (stuck %d, split groups %d, bit changes after a freeze %d, WARN %d)\n",
           bad ? "FAIL" : "ok  ", name, stuck, split_groups, bit_changes_after_freeze, warns);
    fflush(stdout);
    return bad ? 1 : 0;
}

/* ---- cases (each in a child process) ---- */

static int case_torch_groups(unsigned every, int iters) {
    load(every);
    comm_t* c = calloc(1, sizeof *c);
    init_comm(c, 0xA11, 0);
    for (int i = 0; i < iters; i++) torch_iteration(c);
    int bad = check_due("comm", c, every) + (warns != 0);
    char name[96];
    snprintf(name, sizeof name, "shouldSampleEveryNthGroupOfTorchLikeNestedGroups N=%u (%" PRIu64 " groups)",
             every, c->groups);
    P->finalize(c->ctx);
    return report(name, bad);
}

/* rank r: communicator A shared with the other rank, and its own communicator, driven in between
 * with a different pattern (and once in the same group as A's operation on rank 0). */
static int rank_main(int rank, unsigned every, int iters, int fd) {
    load(every);
    comm_t* a = calloc(1, sizeof *a);
    comm_t* own = calloc(1, sizeof *own);
    init_comm(a, 0xA, rank);
    init_comm(own, rank ? 0xC : 0xB, 0);
    for (int i = 0; i < iters; i++) {
        if (rank == 0) {
            if (i % 3 == 0) enqueue(own, 0, 0, 0);
            if (i % 4 == 0) { /* A's all_reduce and B's in one group */
                group_start();
                enqueue(a, 0, 0, 0);
                enqueue(own, 0, 0, 0);
                group_end();
            } else
                enqueue(a, 0, 0, 0);
        } else {
            for (int j = 0; j < i % 5; j++) enqueue(own, 0, 0, 0);
            enqueue(a, 0, 0, 0);
        }
        group_start();
        p2p_wrapped(a, 1);
        p2p_wrapped(a, 0);
        group_end();
    }
    int bad = check_due("shared comm", a, every);
    if (write(fd, a->sampled, sizeof a->sampled) != (ssize_t)sizeof a->sampled) bad++;
    char name[96];
    snprintf(name, sizeof name, "rank %d: %" PRIu64 " groups of the shared communicator", rank, a->groups);
    return report(name, bad);
}

static int case_two_ranks(unsigned every, int iters) {
    int fds[2][2];
    pid_t pid[2];
    for (int r = 0; r < 2; r++) {
        if (pipe(fds[r]) != 0) die("pipe");
        if ((pid[r] = fork()) == 0) {
            close(fds[r][0]);
            int rc = rank_main(r, every, iters, fds[r][1]);
            fflush(stdout);
            _exit(rc);
        }
        close(fds[r][1]);
    }
    static unsigned char s[2][MAX_GROUPS];
    int bad = 0;
    for (int r = 0; r < 2; r++) {
        size_t got = 0;
        while (got < sizeof s[r]) {
            ssize_t k = read(fds[r][0], s[r] + got, sizeof s[r] - got);
            if (k <= 0) break;
            got += (size_t)k;
        }
        if (got != sizeof s[r]) bad++;
        int st;
        waitpid(pid[r], &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st)) bad++;
    }
    if (memcmp(s[0], s[1], sizeof s[0])) bad++;
    printf("%s shouldSampleTheSameGroupsOnEveryRankWhateverElseTheProcessDrives N=%u\n",
           bad ? "FAIL" : "ok  ", every);
    return bad ? 1 : 0;
}

static comm_t* second_comm;
static void* second_thread(void* arg) {
    (void)arg;
    for (int i = 0; i < 20; i++) torch_iteration(second_comm);
    return NULL;
}

static int case_second_thread(unsigned every) {
    load(every);
    comm_t* a = calloc(1, sizeof *a);
    second_comm = calloc(1, sizeof *second_comm);
    init_comm(a, 0xA, 0);
    init_comm(second_comm, 0xD, 0);
    for (int i = 0; i < 20; i++) torch_iteration(a);
    pthread_t t;
    pthread_create(&t, NULL, second_thread, NULL);
    pthread_join(t, NULL);
    for (int i = 0; i < 20; i++) torch_iteration(a);
    int bad = freeze_warns != 1;
    return report("shouldFreezeWhenASecondThreadCallsNccl", bad);
}

static int case_graph_capture(unsigned every) {
    load(every);
    comm_t* a = calloc(1, sizeof *a);
    init_comm(a, 0xA, 0);
    for (int i = 0; i < 10; i++) torch_iteration(a);
    enqueue(a, 0, 0, 1); /* captured */
    for (int i = 0; i < 10; i++) torch_iteration(a);
    int bad = freeze_warns != 1;
    return report("shouldFreezeAtAGraphCapturedOperation", bad);
}

static int run_case(int (*fn)(unsigned, int), unsigned every, int iters) {
    fflush(stdout);
    pid_t p = fork();
    if (p == 0) {
        int rc = fn(every, iters);
        fflush(stdout);
        _exit(rc);
    }
    int st;
    waitpid(p, &st, 0);
    if (!WIFEXITED(st)) {
        printf("FAIL case N=%u: child died (status %d)\n", every, st);
        return 1;
    }
    return WEXITSTATUS(st) != 0;
}

static int second_thread_case(unsigned every, int iters) {
    (void)iters;
    return case_second_thread(every);
}
static int graph_case(unsigned every, int iters) {
    (void)iters;
    return case_graph_capture(every);
}

int main(int argc, char** argv) {
    int quick = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--plugin") && i + 1 < argc)
            plugin_path = argv[++i];
        else if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else
            die("usage: fs_sampling_test --plugin PATH [--quick]");
    }
    if (!plugin_path) die("usage: fs_sampling_test --plugin PATH [--quick]");
    char dir[] = "/tmp/flowscope-sampling.XXXXXX";
    if (!mkdtemp(dir)) die("mkdtemp");
    setenv("FLOWSCOPE_RING_DIR", dir, 1);
    int iters = quick ? 150 : 1300; /* 6 groups each: up to 7800 groups */
    int fails = 0;
    unsigned rates[] = {2, 3, 7, 100};
    for (int i = 0; i < 4; i++) fails += run_case(case_torch_groups, rates[i], iters);
    fails += run_case(case_two_ranks, 3, quick ? 300 : 3000);
    fails += run_case(case_two_ranks, 100, quick ? 1000 : 4000);
    fails += run_case(second_thread_case, 4, 0);
    fails += run_case(graph_case, 4, 0);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fails++;
    printf(fails ? "FAILED: %d case(s)\n" : "PASSED: %d failure(s)\n", fails);
    return fails ? 1 : 0;
}
