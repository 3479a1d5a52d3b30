/*
 * fs_lane_test.c - lanes owned by one thread, through the plugin's ABI
 * (RING.md, "Lanes owned by one thread"): a thread owns a lane while it lives
 * and gives it back when it exits; threads beyond the ownable lanes share the
 * others; a forked child never owns a lane its parent's threads may write.
 *
 *   fs_lane_test --plugin build/libnccl-profiler-flowscope.so
 *
 * 8 lanes: lanes 0..5 ownable, 6..7 shared.
 */
#define FS_PROGRAM "fs_lane_test"
#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fs_ring_consumer.h"
#include "fs_test_util.h"

#define LANES   8
#define OWNABLE 6
#define MAXT    64

static const fs_nccl_profiler_v5_t* prof;
static void* ctx;
static int failures;

#define CHECK(cond, ...)                                                                                     \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "  FAILED %s:%d: ", __FILE__, __LINE__);                                         \
            fprintf(stderr, __VA_ARGS__);                                                                    \
            fprintf(stderr, "\n");                                                                           \
            failures++;                                                                                      \
        }                                                                                                    \
    } while (0)

/* one Group event: a START and a STOP record of the calling thread */
static void group_event(void) {
    fs_nccl_descr_v5_t d;
    memset(&d, 0, sizeof d);
    d.type = FS_EV_GROUP;
    void* h = NULL;
    if (prof->startEvent(ctx, &h, &d) != 0 || !h) die("startEvent failed");
    if (prof->stopEvent(h) != 0) die("stopEvent failed");
}

/* what the ring holds, per thread index: its lane (-1 none) and record count */
typedef struct {
    int lane[MAXT];
    int records[MAXT];
    int lanes_of_thread_differ;
} seen_t;

static fs_consumer_t consumer;

static void drain(seen_t* s) {
    memset(s, 0, sizeof *s);
    for (int i = 0; i < MAXT; i++) s->lane[i] = -1;
    fs_record_t rec;
    while (fs_consumer_poll(&consumer, &rec, NULL) == 1) {
        if (rec.thread >= MAXT) die("thread index %u out of range", rec.thread);
        if (s->lane[rec.thread] >= 0 && s->lane[rec.thread] != (int)consumer.last_lane)
            s->lanes_of_thread_differ++;
        s->lane[rec.thread] = (int)consumer.last_lane;
        s->records[rec.thread]++;
    }
}

static void* one_event_thread(void* arg) {
    (void)arg;
    group_event();
    return NULL; /* exits: the pthread key's destructor gives the lane back */
}

static pthread_barrier_t all_alive;
static void* event_wait_event_thread(void* arg) {
    (void)arg;
    group_event();
    pthread_barrier_wait(&all_alive); /* every thread holds its lane now */
    group_event();
    return NULL;
}

static void should_give_a_lane_back_when_its_thread_exits(void) {
    /* 3 x OWNABLE threads one after another: each finds a free lane, as the one before gave it back */
    for (int i = 0; i < 3 * OWNABLE; i++) {
        pthread_t t;
        pthread_create(&t, NULL, one_event_thread, NULL);
        pthread_join(t, NULL);
    }
    seen_t s;
    drain(&s);
    int threads = 0;
    for (int th = 0; th < MAXT; th++) {
        if (s.lane[th] < 0) continue;
        threads++;
        CHECK(s.lane[th] < OWNABLE, "thread %d wrote shared lane %d: a lane was not given back", th,
              s.lane[th]);
        CHECK(s.records[th] == 2, "thread %d: %d records", th, s.records[th]);
    }
    CHECK(threads == 3 * OWNABLE, "%d threads in the ring", threads);
    CHECK(s.lanes_of_thread_differ == 0, "a thread wrote two lanes");
}

static void should_share_the_last_lanes_beyond_the_owned_ones(void) {
    enum { N = OWNABLE + 4 };
    pthread_t t[N];
    pthread_barrier_init(&all_alive, NULL, N);
    for (int i = 0; i < N; i++) pthread_create(&t[i], NULL, event_wait_event_thread, NULL);
    for (int i = 0; i < N; i++) pthread_join(t[i], NULL);
    pthread_barrier_destroy(&all_alive);
    seen_t s;
    drain(&s);
    int per_lane[LANES] = {0}, threads = 0;
    for (int th = 0; th < MAXT; th++) {
        if (s.lane[th] < 0) continue;
        threads++;
        per_lane[s.lane[th]]++;
        CHECK(s.records[th] == 4, "thread %d: %d records", th, s.records[th]);
    }
    CHECK(threads == N, "%d threads in the ring", threads);
    for (int l = 0; l < OWNABLE; l++)
        CHECK(per_lane[l] == 1, "ownable lane %d written by %d threads", l, per_lane[l]);
    CHECK(per_lane[6] + per_lane[7] == N - OWNABLE, "shared lanes: %d + %d threads", per_lane[6],
          per_lane[7]);
    CHECK(s.lanes_of_thread_differ == 0, "a thread wrote two lanes");
}

static void should_not_own_a_lane_in_a_forked_child(void) {
    group_event(); /* the main thread owns a lane */
    seen_t before;
    drain(&before);
    int main_thread = -1;
    for (int th = 0; th < MAXT; th++)
        if (before.lane[th] >= 0) main_thread = th;
    CHECK(main_thread >= 0 && before.lane[main_thread] < OWNABLE, "main thread not on an owned lane");
    fflush(stdout); /* the child must not print what the parent has buffered */
    pid_t child = fork();
    if (child == 0) { /* the parent's owner of that lane may write it at this moment */
        group_event();
        _exit(0);
    }
    int st;
    waitpid(child, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child failed");
    group_event(); /* the parent: still its own lane */
    fs_record_t rec;
    int child_lane = -1, parent_records = 0;
    while (fs_consumer_poll(&consumer, &rec, NULL) == 1) {
        CHECK(rec.thread == (uint32_t)main_thread, "record of thread %u", rec.thread);
        if ((int)consumer.last_lane == before.lane[main_thread])
            parent_records++;
        else
            child_lane = (int)consumer.last_lane;
    }
    CHECK(parent_records == 2, "parent: %d records in its lane", parent_records);
    CHECK(child_lane >= OWNABLE, "child wrote lane %d, not a shared one", child_lane);
}

int main(int argc, char** argv) {
    const char* plugin = NULL;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--plugin") && i + 1 < argc) plugin = argv[++i];
    if (!plugin) die("usage: fs_lane_test --plugin PATH");
    char dir[] = "/tmp/fs-lane-test.XXXXXX";
    if (!mkdtemp(dir)) die("mkdtemp failed");
    setenv("FLOWSCOPE_RING_DIR", dir, 1);
    setenv("FLOWSCOPE_RING_LANES", "8", 1);
    setenv("FLOWSCOPE_RING_SIZE", "1M", 1);
    setenv("FLOWSCOPE_EVENT_MASK", "default", 1);
    void* lib;
    prof = load_plugin(plugin, 5, &lib);
    int mask = 0;
    if (prof->init(&ctx, 0x1a2e5ULL, &mask, "lane-test", 1, 1, 0, logger) != 0 || !ctx) die("init failed");
    char path[512] = "";
    DIR* d = opendir(dir);
    struct dirent* e;
    while (d && (e = readdir(d)))
        if (strstr(e->d_name, ".ring")) snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    if (d) closedir(d);
    if (!path[0] || fs_consumer_open(&consumer, path) != 0) die("no ring in %s", dir);

    should_give_a_lane_back_when_its_thread_exits();
    printf("%s should_give_a_lane_back_when_its_thread_exits\n", failures ? "FAIL" : "ok  ");
    int f = failures;
    should_share_the_last_lanes_beyond_the_owned_ones();
    printf("%s should_share_the_last_lanes_beyond_the_owned_ones\n", failures > f ? "FAIL" : "ok  ");
    f = failures;
    should_not_own_a_lane_in_a_forked_child();
    printf("%s should_not_own_a_lane_in_a_forked_child\n", failures > f ? "FAIL" : "ok  ");

    prof->finalize(ctx);
    fs_consumer_close(&consumer);
    unlink(path);
    rmdir(dir);
    printf(failures ? "FAILED: %d failure(s)\n" : "PASSED: %d failure(s)\n", failures);
    return failures ? 1 : 0;
}
