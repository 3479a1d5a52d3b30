/*
 * fs_ring_test.c - unit tests of the ring (RING.md): layout, lanes,
 * claim/publish, drops per lane, checksum vector, killed and stalled
 * producers, garbage sequences, concurrent producers against the C consumer;
 * the communicator table and the CUDA device (fs_gpu, against the stand-in
 * driver of fs_fake_cuda.h); plus config and clock.
 *
 *   fs_ring_test [--quick] [--vectors PATH]   (run from profiler-plugin/)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fs_clock.h"
#include "fs_config.h"
#include "fs_fake_cuda.h"
#include "fs_gpu.h"
#include "fs_ring.h"
#include "fs_ring_consumer.h"

static int quick;
static const char* vectors_path = "src/test/resources/vectors/checksum.txt";
static char tmpdir[256];
static int failures;

#define CHECK(cond)                                                                                          \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "  FAILED %s:%d: %s\n", __FILE__, __LINE__, #cond);                              \
            failures++;                                                                                      \
            return;                                                                                          \
        }                                                                                                    \
    } while (0)

#define CHECK_EQ(a, b)                                                                                       \
    do {                                                                                                     \
        uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                                                     \
        if (a_ != b_) {                                                                                      \
            fprintf(stderr, "  FAILED %s:%d: %s == %s (%" PRIu64 " != %" PRIu64 ")\n", __FILE__, __LINE__,   \
                    #a, #b, a_, b_);                                                                         \
            failures++;                                                                                      \
            return;                                                                                          \
        }                                                                                                    \
    } while (0)

static fs_ring_t* new_ring_lanes(uint32_t lanes, uint64_t lane_capacity) {
    fs_ring_params_t p = {.abi_version = 5, .nccl_version = 22809, .event_mask = 0xDF, .clock_source = 2};
    char err[256];
    fs_ring_t* r = fs_ring_create(tmpdir, lanes, lane_capacity, &p, err, sizeof err);
    if (!r) {
        fprintf(stderr, "fs_ring_create: %s\n", err);
        exit(1);
    }
    return r;
}

static fs_ring_t* new_ring(uint64_t capacity) {
    return new_ring_lanes(1, capacity);
}

static uint64_t tail_of(fs_ring_t* r, uint32_t lane) {
    return __atomic_load_n(fs_ring_lane_tail(r, lane), __ATOMIC_RELAXED);
}
static fs_record_t* slot_of(fs_ring_t* r, uint32_t lane, uint64_t i) {
    return &fs_ring_lane_slots(r, lane)[i];
}

static void drop_ring(fs_ring_t* r) {
    unlink(r->path);
    fs_ring_unmap(r);
}

/* A header counter as a reader sees it once the lanes' pending drops are in (after close). */
static uint64_t cnt(fs_ring_t* r, int i) {
    fs_ring_flush_drops(r);
    return __atomic_load_n(&r->counters[i], __ATOMIC_RELAXED);
}
/* The header counter as it is now. */
static uint64_t hdr_cnt(fs_ring_t* r, int i) {
    return __atomic_load_n(&r->counters[i], __ATOMIC_RELAXED);
}

/* writes one record of `thread` into lane thread % lane_count, claimed by CAS
 * (the shared-lane protocol, on any lane): payload word 0 = value */
static int put(fs_ring_t* r, uint32_t thread, uint64_t value) {
    uint64_t pos;
    fs_record_t* s = fs_ring_try_claim(r, thread & (r->lane_count - 1), &pos);
    if (!s) return 0;
    fs_ring_write(s, pos, fs_record_w1(FS_KIND_PROXY_STEP, FS_OP_START, thread), 1000 + value,
                  (uint64_t)FS_KIND_PROXY_STEP << 60 | (value + 1), 0, value, 0, 0);
    fs_ring_publish(r, s, pos);
    return 1;
}

/* writes one record into a shared lane (CAS claim) */
static int put_shared(fs_ring_t* r, uint32_t lane, uint32_t thread, uint64_t value) {
    uint64_t pos;
    fs_record_t* s = fs_ring_try_claim(r, lane, &pos);
    if (!s) return 0;
    fs_ring_write(s, pos, fs_record_w1(FS_KIND_PROXY_STEP, FS_OP_START, thread), 1000 + value,
                  (uint64_t)FS_KIND_PROXY_STEP << 60 | (value + 1), 0, value, 0, 0);
    fs_ring_publish(r, s, pos);
    return 1;
}

static uint64_t payload0(const fs_record_t* rec) {
    uint64_t v;
    memcpy(&v, rec->payload, 8);
    return v;
}

static uint64_t now_ns(void) {
    return fs_clock_monotonic_ns();
}

/* ---- tests ---- */

static void should_initialise_header_and_slot_sequences(void) {
    fs_ring_t* r = new_ring_lanes(4, 16);
    uint8_t* b = r->base;
    CHECK_EQ(*(uint32_t*)(b + FS_HDR_LANE_COUNT_OFFSET), 4);
    CHECK_EQ(*(uint64_t*)(b + FS_HDR_LANE_CAPACITY_OFFSET), 16);
    for (uint32_t l = 0; l < FS_LANE_MAX; l++) {
        CHECK_EQ(*(uint64_t*)(b + FS_LANE_TABLE_OFFSET + 256 * l), 0);       /* tail */
        CHECK_EQ(*(uint64_t*)(b + FS_LANE_TABLE_OFFSET + 256 * l + 128), 0); /* head */
    }
    for (size_t o = 512; o < 768; o += 8) CHECK_EQ(*(uint64_t*)(b + o), 0); /* the old tail/head: reserved */
    CHECK((uint8_t*)fs_ring_lane_slots(r, 3) == b + 262144 + 64 * (3 * 16));
    CHECK((uint8_t*)fs_ring_lane_tail(r, 2) == b + 147456 + 512);
    CHECK_EQ(*(uint64_t*)(b + FS_HDR_MAGIC_OFFSET), FS_RING_MAGIC);
    CHECK_EQ(*(uint32_t*)(b + FS_HDR_LAYOUT_VERSION_OFFSET), 0x00010003u); /* 1.3 */
    CHECK_EQ(*(uint32_t*)(b + FS_HDR_RECORD_SIZE_OFFSET), 64);
    CHECK_EQ(*(uint64_t*)(b + FS_HDR_CAPACITY_OFFSET), 64);
    CHECK_EQ(*(uint64_t*)(b + FS_HDR_HEADER_SIZE_OFFSET), 262144);
    CHECK_EQ(*(int32_t*)(b + FS_HDR_PRODUCER_PID_OFFSET), getpid());
    CHECK_EQ(*(uint32_t*)(b + FS_HDR_ABI_VERSION_OFFSET), 5);
    CHECK_EQ(*(int32_t*)(b + FS_HDR_NCCL_VERSION_OFFSET), 22809);
    CHECK_EQ(*(uint32_t*)(b + FS_HDR_EVENT_MASK_OFFSET), 0xDF);
    CHECK_EQ(*(uint32_t*)(b + FS_HDR_PRODUCER_STATE_OFFSET), 1);
    CHECK_EQ(*(uint32_t*)(b + FS_HDR_STRING_CAPACITY_OFFSET), 256);
    CHECK_EQ(*(uint32_t*)(b + FS_HDR_STRING_COUNT_OFFSET), 1);
    CHECK_EQ(*(uint32_t*)(b + FS_HDR_COMM_CAPACITY_OFFSET), 1024);
    CHECK(*(uint64_t*)(b + FS_HDR_ANCHOR_REALTIME_NS_OFFSET) > 1500000000000000000ULL);
    CHECK(strncmp((char*)b + FS_HDR_PLUGIN_VERSION_OFFSET, "flowscope", 9) == 0);
    for (uint64_t i = 0; i < 64; i++)
        CHECK_EQ(r->slots[i].seq, i % 16); /* per lane: seq = index in the lane */
    CHECK(strstr(r->path, "/flowscope-") != NULL);
    fs_ring_close(r, 42);
    CHECK_EQ(*(uint32_t*)(b + FS_HDR_PRODUCER_STATE_OFFSET), 2);
    CHECK_EQ(*(uint64_t*)(b + FS_HDR_CLOSED_MONOTONIC_NS_OFFSET), 42);
    drop_ring(r);
}

static void should_create_a_fresh_file_per_ring(void) {
    fs_ring_t* a = new_ring(16);
    fs_ring_t* b = new_ring(16);
    CHECK(strcmp(a->path, b->path) != 0);
    char want[400];
    snprintf(want, sizeof want, "%s/flowscope-%d-1.ring", tmpdir, (int)getpid());
    CHECK(strcmp(b->path, want) == 0);
    drop_ring(a);
    drop_ring(b);
}

static void should_claim_and_publish_in_position_order(void) {
    fs_ring_t* r = new_ring(16);
    uint64_t p0, p1;
    fs_record_t* s0 = fs_ring_try_claim(r, 0, &p0);
    fs_record_t* s1 = fs_ring_try_claim(r, 0, &p1);
    CHECK(s0 && s1);
    CHECK_EQ(p0, 0);
    CHECK_EQ(p1, 1);
    CHECK_EQ(tail_of(r, 0), 2);
    /* claimed, unpublished: seq still == pos */
    CHECK_EQ(s0->seq, 0);
    fs_ring_write(s1, p1, fs_record_w1(1, 1, 0), 5, 6, 7, 8, 9, 10);
    fs_ring_publish(r, s1, p1);
    CHECK_EQ(s1->seq, 2);
    fs_consumer_t c;
    CHECK(fs_consumer_attach(&c, r->base) == 0);
    fs_record_t rec;
    /* slot 0 is claimed but unpublished: the consumer must wait, not skip ahead */
    CHECK(fs_consumer_poll(&c, &rec, NULL) == 0);
    fs_ring_write(s0, p0, fs_record_w1(1, 1, 0), 1, 2, 3, 4, 5, 6);
    fs_ring_publish(r, s0, p0);
    uint64_t pos;
    CHECK(fs_consumer_poll(&c, &rec, &pos) == 1);
    CHECK_EQ(pos, 0);
    CHECK_EQ(rec.time_ns, 1);
    CHECK(fs_consumer_poll(&c, &rec, &pos) == 1);
    CHECK_EQ(pos, 1);
    CHECK_EQ(rec.time_ns, 5);
    CHECK_EQ(r->slots[0].seq, 16); /* freed for the next lap */
    CHECK(fs_consumer_poll(&c, &rec, &pos) == 0);
    drop_ring(r);
}

static void should_count_drop_when_ring_full(void) {
    fs_ring_t* r = new_ring(16);
    int ok = 0;
    for (int i = 0; i < 20; i++) ok += put(r, 0, (uint64_t)i);
    CHECK_EQ(ok, 16);
    CHECK_EQ(cnt(r, FS_CNT_DROPPED_FULL), 4);
    CHECK_EQ(cnt(r, FS_CNT_DROPPED_CONTENDED), 0);
    CHECK_EQ(tail_of(r, 0), 16);
    /* the first 16 are kept, in order */
    fs_consumer_t c;
    fs_consumer_attach(&c, r->base);
    fs_record_t rec;
    for (uint64_t i = 0; i < 16; i++) {
        CHECK(fs_consumer_poll(&c, &rec, NULL) == 1);
        CHECK_EQ(payload0(&rec), i);
    }
    CHECK(fs_consumer_poll(&c, &rec, NULL) == 0);
    drop_ring(r);
}

static void should_wrap_around_and_keep_exact_counts(void) {
    fs_ring_t* r = new_ring(16);
    fs_consumer_t c;
    fs_consumer_attach(&c, r->base);
    fs_record_t rec;
    uint64_t written = 0, read = 0, attempted = 0;
    for (int round = 0; round < 100; round++) {
        int burst = 1 + round % 23; /* sometimes more than the capacity */
        for (int i = 0; i < burst; i++) {
            attempted++;
            written += (uint64_t)put(r, 0, attempted);
        }
        uint64_t pos, last = 0;
        while (fs_consumer_poll(&c, &rec, &pos)) {
            CHECK(payload0(&rec) > last);
            last = payload0(&rec);
            read++;
        }
    }
    CHECK_EQ(read, written);
    CHECK_EQ(written + cnt(r, FS_CNT_DROPPED_FULL), attempted);
    CHECK(cnt(r, FS_CNT_DROPPED_FULL) > 0);
    CHECK(tail_of(r, 0) > 16 * 10);
    drop_ring(r);
}

/* ---- concurrent producers + consumer ---- */

#define NPROD 4
typedef struct {
    fs_ring_t* r;
    uint32_t id;
    uint64_t n;
    uint64_t written;
} prod_t;

static volatile int producers_left;

static void* producer(void* arg) {
    prod_t* p = arg;
    for (uint64_t i = 1; i <= p->n; i++) p->written += (uint64_t)put(p->r, p->id, i);
    __atomic_fetch_sub(&producers_left, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* 4 lanes x 16, threads 0..3 and 4..7 (lanes 0..3 again): every lane fills alone */
static void should_count_exact_drops_per_lane(void) {
    fs_ring_t* r = new_ring_lanes(4, 16);
    int ok[8] = {0};
    for (uint32_t t = 0; t < 4; t++)
        for (int i = 0; i < 10 + 3 * (int)t; i++) ok[t] += put(r, t, (uint64_t)i); /* 10, 13, 16, 19 */
    CHECK_EQ(ok[0], 10);
    CHECK_EQ(ok[1], 13);
    CHECK_EQ(ok[2], 16);
    CHECK_EQ(ok[3], 16);
    CHECK_EQ(cnt(r, FS_CNT_DROPPED_FULL), 3);
    for (uint32_t t = 4; t < 8; t++)
        for (int i = 0; i < 8; i++) ok[t] += put(r, t, 100 + (uint64_t)i);
    CHECK_EQ(ok[4], 6); /* lane 0: 10 + 6 = 16 */
    CHECK_EQ(ok[5], 3); /* lane 1: 13 + 3 */
    CHECK_EQ(ok[6], 0);
    CHECK_EQ(ok[7], 0);
    CHECK_EQ(cnt(r, FS_CNT_DROPPED_FULL), 3 + 2 + 5 + 8 + 8);
    for (uint32_t l = 0; l < 4; l++) CHECK_EQ(tail_of(r, l), 16);
    /* a drained lane takes records again, the others stay full */
    fs_consumer_t c;
    CHECK(fs_consumer_attach(&c, r->base) == 0);
    CHECK_EQ(c.lane_count, 4);
    fs_record_t rec;
    uint64_t pos;
    for (uint64_t i = 0; i < 16; i++) {
        CHECK(fs_consumer_poll_lane(&c, 2, &rec, &pos) == 1);
        CHECK_EQ(pos, i);
        CHECK_EQ(rec.thread, 2);
        CHECK_EQ(payload0(&rec), i);
    }
    CHECK(put(r, 6, 7) == 1);
    CHECK(put(r, 5, 7) == 0);
    CHECK_EQ(tail_of(r, 2), 17);
    CHECK(fs_consumer_poll_lane(&c, 2, &rec, &pos) == 1);
    CHECK_EQ(pos, 16); /* positions are per lane: the checksum uses 16 */
    CHECK_EQ(rec.thread, 6);
    drop_ring(r);
}

static void should_write_different_lanes_from_threads_of_different_lanes(void) {
    fs_ring_t* r = new_ring_lanes(2, 16);
    CHECK(put(r, 0, 1) && put(r, 1, 2) && put(r, 1, 3));
    CHECK_EQ(tail_of(r, 0), 1);
    CHECK_EQ(tail_of(r, 1), 2);
    CHECK_EQ(slot_of(r, 0, 0)->seq, 1);
    CHECK_EQ(slot_of(r, 0, 1)->seq, 1); /* lane 0 slot 1: untouched */
    CHECK_EQ(slot_of(r, 1, 0)->seq, 1);
    CHECK_EQ(slot_of(r, 1, 1)->seq, 2);
    CHECK_EQ(slot_of(r, 0, 0)->thread, 0);
    CHECK_EQ(slot_of(r, 1, 0)->thread, 1);
    CHECK_EQ(slot_of(r, 1, 1)->thread, 1);
    /* the lane's tail and the other lane's tail are on different 128-byte blocks */
    CHECK((uintptr_t)fs_ring_lane_tail(r, 1) - (uintptr_t)fs_ring_lane_tail(r, 0) == 256);
    drop_ring(r);
    /* two threads at once: each lane holds only its thread's records, in order */
    r = new_ring_lanes(2, 256);
    prod_t p[2] = {{r, 0, 200, 0}, {r, 1, 200, 0}};
    pthread_t th[2];
    producers_left = 2;
    for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, producer, &p[i]);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    for (uint32_t l = 0; l < 2; l++) {
        CHECK_EQ(tail_of(r, l), 200);
        for (uint64_t i = 0; i < 200; i++) {
            CHECK_EQ(slot_of(r, l, i)->seq, i + 1);
            CHECK_EQ(slot_of(r, l, i)->thread, l);
            CHECK_EQ(payload0(slot_of(r, l, i)), i + 1);
        }
    }
    drop_ring(r);
}

/* The consumer reads a lane's tail only on the stale path, not on every empty poll. */
static void should_not_read_tail_on_an_empty_poll(void) {
    fs_ring_t* r = new_ring_lanes(2, 16);
    fs_consumer_t c;
    CHECK(fs_consumer_attach(&c, r->base) == 0);
    c.stale_timeout_ns = 50000000ULL;
    fs_record_t rec;
    for (int i = 0; i < 1000; i++) CHECK(fs_consumer_poll(&c, &rec, NULL) == 0);
    CHECK(put(r, 1, 5));
    CHECK(fs_consumer_poll(&c, &rec, NULL) == 1);
    CHECK_EQ(c.last_lane, 1);
    for (int i = 0; i < 1000; i++) CHECK(fs_consumer_poll(&c, &rec, NULL) == 0);
    CHECK_EQ(c.lanes[0].tail_reads + c.lanes[1].tail_reads, 0);
    /* past the timeout: one tail read per lane, the lane is empty, the timer restarts */
    usleep(60000);
    CHECK(fs_consumer_poll(&c, &rec, NULL) == 0);
    CHECK_EQ(c.lanes[0].tail_reads, 1);
    CHECK_EQ(c.lanes[1].tail_reads, 1);
    for (int i = 0; i < 100; i++) CHECK(fs_consumer_poll(&c, &rec, NULL) == 0);
    CHECK_EQ(c.lanes[0].tail_reads + c.lanes[1].tail_reads, 2);
    CHECK_EQ(c.skipped_stale, 0);
    drop_ring(r);
}

/* A claim made just before the consumer's one tail read (the lane had been empty
 * past the timeout) is young: it gets one more timeout, and its record arrives. */
static void should_not_skip_a_claim_first_seen_at_the_tail_read(void) {
    fs_ring_t* r = new_ring_lanes(1, 16);
    fs_consumer_t c;
    CHECK(fs_consumer_attach(&c, r->base) == 0);
    c.stale_timeout_ns = 20000000ULL;
    fs_record_t rec;
    CHECK(fs_consumer_poll(&c, &rec, NULL) == 0); /* starts the timer on an empty lane */
    usleep(30000);
    uint64_t pos;
    fs_record_t* s = fs_ring_try_claim(r, 0, &pos); /* claimed, not yet published */
    CHECK(s != NULL);
    CHECK(fs_consumer_poll(&c, &rec, NULL) == 0); /* tail > pos seen for the first time */
    CHECK_EQ(c.lanes[0].tail_reads, 1);
    CHECK_EQ(c.skipped_stale, 0);
    fs_ring_write(s, pos, fs_record_w1(4, 1, 0), 1, 2, 3, 4, 5, 6);
    fs_ring_publish(r, s, pos);
    CHECK(fs_consumer_poll(&c, &rec, NULL) == 1);
    CHECK_EQ(c.skipped_stale, 0);
    CHECK_EQ(cnt(r, FS_CNT_DROPPED_ABANDONED), 0);
    drop_ring(r);
}

/*
 * Checksum test vector (the Java side reads the same file):
 *   pos = 0x5, a ProxyStep STATE record (kind 4, op 3, thread 2),
 *   time_ns 1000000000123, id = 4<<60 | 1<<48 | 77, parent 0,
 *   payload state = 9, arg = 131072
 *   w1 = 0x0000000000020304 w2 = 0x000000e8d4a5107b w3 = 0x400100000000004d
 *   w4 = 0 w5 = 0x9 w6 = 0x20000 w7 = 0
 *   checksum = 0x7d050a49 (line 1 of src/test/resources/vectors/checksum.txt:
 *   "pos w1 w2 w3 w4 w5 w6 w7 checksum", hex; more vectors follow there).
 */
static const uint64_t VEC_POS = 5;
static const uint64_t VEC_W[7] = {
    0x0000000000020304ULL, 1000000000123ULL, 0x400100000000004dULL, 0, 9, 131072, 0};
#define FIXED_CHECKSUM 0x7d050a49u

static void should_compute_the_fixed_checksum_vector(void) {
    uint32_t ck =
        fs_record_checksum(VEC_POS, VEC_W[0], VEC_W[1], VEC_W[2], VEC_W[3], VEC_W[4], VEC_W[5], VEC_W[6]);
    CHECK_EQ(ck, FIXED_CHECKSUM);
    /* the checksum bytes of w1 do not take part */
    CHECK_EQ(fs_record_checksum(VEC_POS, VEC_W[0] | 0xFFFFFFFF00000000ULL, VEC_W[1], VEC_W[2], VEC_W[3],
                                VEC_W[4], VEC_W[5], VEC_W[6]),
             ck);
    /* every vector line of the shared file */
    FILE* f = fopen(vectors_path, "r");
    CHECK(f != NULL);
    unsigned long long v[9];
    int lines = 0;
    char buf[512];
    while (fgets(buf, sizeof buf, f)) {
        if (sscanf(buf, "%llx %llx %llx %llx %llx %llx %llx %llx %llx", &v[0], &v[1], &v[2], &v[3], &v[4],
                   &v[5], &v[6], &v[7], &v[8]) != 9)
            continue;
        lines++;
        if (fs_record_checksum(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]) != (uint32_t)v[8]) {
            fprintf(stderr, "  vector line %d mismatch\n", lines);
            failures++;
        }
    }
    fclose(f);
    CHECK(lines >= 3);
}

static void should_never_read_a_record_claimed_by_a_killed_producer(void) {
    fs_ring_t* r = new_ring_lanes(4, 16);
    put(r, 2, 1);
    pid_t child = fork();
    if (child == 0) { /* claims position 1 of lane 2, writes half a record, dies */
        uint64_t pos;
        fs_record_t* s = fs_ring_try_claim(r, 2, &pos);
        if (s) memset((uint8_t*)s + 8, 0x5A, 24);
        _exit(s && pos == 1 ? 0 : 1);
    }
    int st;
    waitpid(child, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    put(r, 6, 3); /* lane 2 position 2, published */
    fs_consumer_t c;
    fs_consumer_attach(&c, r->base);
    c.stale_timeout_ns = 20000000ULL;
    fs_record_t rec;
    CHECK(fs_consumer_poll(&c, &rec, NULL) == 1);
    CHECK_EQ(payload0(&rec), 1);
    uint64_t t0 = now_ns();
    int got = 0;
    uint64_t pos = 0;
    while (now_ns() - t0 < 500000000ULL && !(got = fs_consumer_poll(&c, &rec, &pos))) usleep(1000);
    CHECK(got == 1);
    CHECK_EQ(pos, 2); /* position 1 was skipped, never delivered */
    CHECK_EQ(c.last_lane, 2);
    CHECK_EQ(payload0(&rec), 3);
    CHECK(now_ns() - t0 >= 20000000ULL);
    CHECK_EQ(c.skipped_stale, 1);
    CHECK_EQ(*(uint64_t*)(r->base + FS_HDR_CONSUMER_SKIPPED_STALE_OFFSET), 1);
    CHECK_EQ(c.received, 2);
    drop_ring(r);
}

/* A full lane counts its drops on its own line: the header gets them in batches,
 * when the lane takes a record again, and at close. */
static void should_add_a_full_lanes_drops_to_the_header_in_batches(void) {
    fs_ring_t* r = new_ring_lanes(2, 16);
    for (int i = 0; i < 16; i++) CHECK(put(r, 1, (uint64_t)i) == 1);
    for (uint32_t i = 0; i < FS_RING_DROP_BATCH - 1; i++) CHECK(put(r, 1, 99) == 0);
    CHECK_EQ(hdr_cnt(r, FS_CNT_DROPPED_FULL), 0); /* pending on the lane */
    CHECK(put(r, 1, 99) == 0);
    CHECK_EQ(hdr_cnt(r, FS_CNT_DROPPED_FULL), FS_RING_DROP_BATCH);
    for (int i = 0; i < 10; i++) CHECK(put(r, 1, 99) == 0);
    CHECK(put(r, 0, 5) == 1); /* another lane's record flushes nothing of lane 1 */
    CHECK_EQ(hdr_cnt(r, FS_CNT_DROPPED_FULL), FS_RING_DROP_BATCH);
    fs_consumer_t c;
    fs_consumer_attach(&c, r->base);
    fs_record_t rec;
    CHECK(fs_consumer_poll_lane(&c, 1, &rec, NULL) == 1);
    CHECK(put(r, 1, 100) == 1); /* room again: the pending 10 go to the header */
    CHECK_EQ(hdr_cnt(r, FS_CNT_DROPPED_FULL), FS_RING_DROP_BATCH + 10);
    for (int i = 0; i < 3; i++) CHECK(put(r, 1, 99) == 0);
    CHECK_EQ(hdr_cnt(r, FS_CNT_DROPPED_FULL), FS_RING_DROP_BATCH + 10);
    fs_ring_close(r, now_ns()); /* close: exact */
    CHECK_EQ(hdr_cnt(r, FS_CNT_DROPPED_FULL), FS_RING_DROP_BATCH + 13);
    CHECK_EQ(fs_ring_producer_state(r), FS_PRODUCER_STATE_CLOSED);
    drop_ring(r);
}

static void should_count_abandoned_when_publish_is_late(void) {
    fs_ring_t* r = new_ring_lanes(2, 16);
    uint64_t pos;
    fs_record_t* s = fs_ring_try_claim(r, 1, &pos); /* stalls before publishing */
    CHECK(s != NULL);
    put(r, 3, 7);
    fs_consumer_t c;
    fs_consumer_attach(&c, r->base);
    c.stale_timeout_ns = 1000000ULL;
    fs_record_t rec;
    uint64_t t0 = now_ns();
    int got = 0;
    while (now_ns() - t0 < 500000000ULL && !(got = fs_consumer_poll(&c, &rec, NULL))) usleep(500);
    CHECK(got == 1 && payload0(&rec) == 7);
    /* the stalled producer wakes up and publishes: too late */
    fs_ring_write(s, pos, fs_record_w1(4, 1, 0), 1, 2, 3, 4, 5, 6);
    fs_ring_publish(r, s, pos);
    CHECK_EQ(cnt(r, FS_CNT_DROPPED_ABANDONED), 1);
    CHECK(fs_consumer_poll(&c, &rec, NULL) == 0);
    CHECK_EQ(c.received, 1);
    drop_ring(r);
}

static void should_not_spin_forever_on_a_garbage_sequence(void) {
    fs_ring_t* r = new_ring_lanes(4, 16);
    slot_of(r, 3, 0)->seq = 0x7777777777777777ULL; /* far ahead: looks taken, forever */
    uint64_t pos;
    CHECK(fs_ring_try_claim(r, 3, &pos) == NULL);
    CHECK_EQ(cnt(r, FS_CNT_DROPPED_CONTENDED), 1);
    CHECK(put(r, 2, 1) == 1);                      /* the other lanes are not affected */
    slot_of(r, 3, 0)->seq = 0xFFFFFFFFFFFFFFF0ULL; /* behind (signed): looks full */
    CHECK(fs_ring_try_claim(r, 3, &pos) == NULL);
    CHECK_EQ(cnt(r, FS_CNT_DROPPED_FULL), 1);
    /* the consumer repairs it (corrupt, tail <= pos: free again) */
    fs_consumer_t c;
    fs_consumer_attach(&c, r->base);
    fs_record_t rec;
    CHECK(fs_consumer_poll_lane(&c, 3, &rec, NULL) == 0);
    CHECK_EQ(c.corrupt, 1);
    CHECK(put(r, 3, 9) == 1);
    CHECK(fs_consumer_poll_lane(&c, 3, &rec, NULL) == 1);
    CHECK_EQ(payload0(&rec), 9);
    drop_ring(r);
}

static void should_reject_a_record_with_a_bad_checksum(void) {
    fs_ring_t* r = new_ring(16);
    put(r, 0, 1);
    put(r, 0, 2);
    r->slots[0].time_ns ^= 1; /* a flipped bit */
    fs_consumer_t c;
    fs_consumer_attach(&c, r->base);
    fs_record_t rec;
    CHECK(fs_consumer_poll(&c, &rec, NULL) == 1);
    CHECK_EQ(payload0(&rec), 2);
    CHECK_EQ(c.corrupt, 1);
    CHECK_EQ(*(uint64_t*)(r->base + FS_HDR_CONSUMER_CORRUPT_OFFSET), 1);
    drop_ring(r);
}

static void deliver_exactly_once(uint32_t lanes) {
    fs_ring_t* r = new_ring_lanes(lanes, 1024 / lanes);
    uint64_t n = quick ? 20000 : 400000;
    prod_t p[NPROD];
    pthread_t th[NPROD];
    producers_left = NPROD;
    fs_consumer_t c;
    fs_consumer_attach(&c, r->base);
    for (uint32_t i = 0; i < NPROD; i++) {
        p[i] = (prod_t){r, i, n, 0};
        pthread_create(&th[i], NULL, producer, &p[i]);
    }
    uint64_t last[NPROD] = {0}, got[NPROD] = {0};
    fs_record_t rec;
    int bad = 0;
    for (;;) {
        int done = __atomic_load_n(&producers_left, __ATOMIC_ACQUIRE) == 0;
        int any = 0;
        while (fs_consumer_poll(&c, &rec, NULL)) {
            any = 1;
            uint64_t v = payload0(&rec);
            if (rec.thread >= NPROD || v <= last[rec.thread] || c.last_lane != rec.thread % lanes)
                bad++; /* duplicate, reordered, or in another lane */
            else
                last[rec.thread] = v;
            got[rec.thread < NPROD ? rec.thread : 0]++;
        }
        if (done && !any) break;
    }
    for (int i = 0; i < NPROD; i++) pthread_join(th[i], NULL);
    while (fs_consumer_poll(&c, &rec, NULL)) bad++; /* nothing may be left */
    CHECK_EQ(bad, 0);
    uint64_t received = 0, written = 0;
    for (int i = 0; i < NPROD; i++) {
        CHECK_EQ(got[i], p[i].written);
        received += got[i];
        written += p[i].written;
    }
    uint64_t dropped = cnt(r, FS_CNT_DROPPED_FULL) + cnt(r, FS_CNT_DROPPED_CONTENDED);
    CHECK_EQ(received + dropped, (uint64_t)NPROD * n);
    CHECK_EQ(c.corrupt, 0);
    CHECK_EQ(c.skipped_stale, 0);
    printf("  (%u lanes: %" PRIu64 " received, %" PRIu64 " dropped full, %" PRIu64 " contended)\n", lanes,
           received, cnt(r, FS_CNT_DROPPED_FULL), cnt(r, FS_CNT_DROPPED_CONTENDED));
    drop_ring(r);
}

/* a lane per producer, two producers per lane (MPSC within a lane), one lane for all */
/* ---- lanes owned by one thread ---- */

static void should_own_the_first_lanes_and_share_the_rest(void) {
    fs_ring_t* r = new_ring_lanes(8, 16); /* 6 ownable, 2 shared */
    uint32_t owned, seen = 0;
    for (uint32_t t = 0; t < 6; t++) {
        uint32_t lane = fs_ring_lane_take(r, t + 3, 1, &owned);
        CHECK(owned == 1 && lane < 6);
        CHECK((seen & (1u << lane)) == 0); /* never two owners */
        seen |= 1u << lane;
    }
    CHECK_EQ(fs_ring_lane_take(r, 8, 1, &owned), 6); /* all taken: shared lane 6 + 8 % 2 */
    CHECK_EQ(owned, 0);
    CHECK_EQ(fs_ring_lane_take(r, 9, 1, &owned), 7);
    fs_ring_lane_give_back(&r->lane_local[4].owned);
    CHECK_EQ(fs_ring_lane_take(r, 11, 1, &owned), 4); /* given back: owned again */
    CHECK_EQ(owned, 1);
    CHECK_EQ(fs_ring_lane_take(r, 0, 0, &owned), 6); /* a forked child: shared only */
    CHECK_EQ(owned, 0);
    drop_ring(r);
    r = new_ring_lanes(1, 16); /* one lane: shared */
    CHECK_EQ(fs_ring_lane_take(r, 0, 1, &owned), 0);
    CHECK_EQ(owned, 0);
    drop_ring(r);
    r = new_ring_lanes(2, 16);
    CHECK_EQ(fs_ring_lane_take(r, 5, 1, &owned), 0);
    CHECK_EQ(owned, 1);
    CHECK_EQ(fs_ring_lane_take(r, 5, 1, &owned), 1);
    CHECK_EQ(owned, 0);
    drop_ring(r);
}

static int put_owned(fs_ring_t* r, uint32_t lane, uint32_t thread, uint64_t value) {
    uint64_t pos;
    fs_record_t* s = fs_ring_try_claim_owned(r, lane, &pos);
    if (!s) return 0;
    fs_ring_write(s, pos, fs_record_w1(FS_KIND_PROXY_STEP, FS_OP_START, thread), 1000 + value,
                  (uint64_t)FS_KIND_PROXY_STEP << 60 | (value + 1), 0, value, 0, 0);
    fs_ring_publish_owned(s, pos);
    return 1;
}

static void should_claim_an_owned_lane_without_cas_with_the_same_outcomes(void) {
    fs_ring_t* r = new_ring_lanes(2, 16);
    for (int i = 0; i < 16; i++) CHECK(put_owned(r, 0, 0, (uint64_t)i) == 1);
    CHECK_EQ(tail_of(r, 0), 16);
    CHECK(put_owned(r, 0, 0, 99) == 0); /* full */
    CHECK_EQ(cnt(r, FS_CNT_DROPPED_FULL), 1);
    fs_consumer_t c;
    fs_consumer_attach(&c, r->base);
    fs_record_t rec;
    uint64_t pos;
    for (uint64_t i = 0; i < 16; i++) {
        CHECK(fs_consumer_poll_lane(&c, 0, &rec, &pos) == 1);
        CHECK_EQ(pos, i);
        CHECK_EQ(payload0(&rec), i);
    }
    CHECK(put_owned(r, 0, 0, 16) == 1); /* the next lap */
    CHECK(fs_consumer_poll_lane(&c, 0, &rec, &pos) == 1);
    CHECK_EQ(pos, 16);
    slot_of(r, 0, 1)->seq = 0x7777777777777777ULL; /* garbage ahead: no spin, counted */
    CHECK(put_owned(r, 0, 0, 17) == 0);
    CHECK_EQ(cnt(r, FS_CNT_DROPPED_CONTENDED), 1);
    CHECK_EQ(c.corrupt, 0);
    drop_ring(r);
}

/* An owner descheduled between claim and publish past the consumer's timeout:
 * the consumer skips the slot (counted), the owner's late store lands on the
 * skipped slot, a lap later the owner finds that slot not yet free (one
 * dropped_full) until the consumer, reaching it, frees it; nothing is read
 * twice, nothing counted corrupt, every later record arrives. */
static void should_skip_a_slot_of_an_owner_stalled_past_the_timeout(void) {
    fs_ring_t* r = new_ring_lanes(2, 16);
    fs_consumer_t c;
    fs_consumer_attach(&c, r->base);
    c.stale_timeout_ns = 2000000ULL;
    CHECK(put_owned(r, 0, 0, 1) == 1);
    uint64_t pos;
    fs_record_t* s = fs_ring_try_claim_owned(r, 0, &pos); /* stalls */
    CHECK(s != NULL && pos == 1);
    fs_record_t rec;
    CHECK(fs_consumer_poll(&c, &rec, NULL) == 1);
    uint64_t t0 = now_ns();
    while (now_ns() - t0 < 500000000ULL && c.skipped_stale == 0) {
        CHECK(fs_consumer_poll(&c, &rec, NULL) == 0);
        usleep(200);
    }
    CHECK_EQ(c.skipped_stale, 1);
    fs_ring_write(s, pos, fs_record_w1(4, 1, 0), 1, 2, 3, 4, 5, 6); /* wakes up */
    fs_ring_publish_owned(s, pos);
    CHECK_EQ(slot_of(r, 0, 1)->seq, 2); /* the late store over the consumer's mark 17 */
    CHECK_EQ(cnt(r, FS_CNT_DROPPED_ABANDONED), 0);
    for (uint64_t i = 2; i < 40; i++) { /* laps over the skipped slot */
        if (i == 17) {                  /* slot 1 of the next lap: still holds the late 2 */
            CHECK(put_owned(r, 0, 0, i) == 0);
            CHECK_EQ(cnt(r, FS_CNT_DROPPED_FULL) + r->lane_local[0].dropped_full, 1);
            CHECK(fs_consumer_poll(&c, &rec, NULL) == 0); /* frees it */
            CHECK_EQ(c.late_published, 1);
        }
        CHECK(put_owned(r, 0, 0, i) == 1);
        CHECK(fs_consumer_poll(&c, &rec, &pos) == 1);
        CHECK_EQ(pos, i);
        CHECK_EQ(payload0(&rec), i);
    }
    CHECK_EQ(c.late_published, 1);
    CHECK_EQ(c.skipped_stale, 1);
    CHECK_EQ(c.corrupt, 0);
    CHECK(fs_consumer_poll(&c, &rec, NULL) == 0);
    drop_ring(r);
}

/* Threads that own lanes and threads that share the rest, a consumer draining
 * meanwhile, one owner stalled once past the timeout: every record arrives
 * once, in its thread's order, in its thread's lane. */
#define NOWN 10
typedef struct {
    fs_ring_t* r;
    uint32_t id;
    uint64_t n;
    uint64_t written;
    uint32_t lane;
    uint32_t owned;
    uint64_t full_retries; /* the stalling claim's attempts on a full lane (dropped_full) */
    int stalled;
} own_prod_t;

static pthread_barrier_t lanes_taken;

static own_prod_t* own_prods;

static void* owning_producer(void* arg) {
    own_prod_t* p = arg;
    p->lane = fs_ring_lane_take(p->r, p->id, 1, &p->owned);
    pthread_barrier_wait(&lanes_taken); /* every thread holds its lane before any gives it back */
    int stalls = 0;                     /* the owner of the lowest id stalls once */
    if (p->owned) {
        stalls = 1;
        for (uint32_t i = 0; i < p->id; i++) stalls &= !own_prods[i].owned;
    }
    for (uint64_t i = 1; i <= p->n; i++) {
        if (stalls && i == p->n / 2) {
            uint64_t pos;
            fs_record_t* s;
            while (!(s = fs_ring_try_claim_owned(p->r, p->lane, &pos))) p->full_retries++;
            usleep(100000); /* descheduled: 5 stale timeouts */
            fs_ring_write(s, pos, fs_record_w1(FS_KIND_PROXY_STEP, FS_OP_START, p->id), 1000 + i,
                          (uint64_t)FS_KIND_PROXY_STEP << 60 | (i + 1), 0, i, 0, 0);
            fs_ring_publish_owned(s, pos); /* too late: skipped by the consumer, never delivered */
            p->stalled = 1;
            continue;
        }
        p->written +=
            (uint64_t)(p->owned ? put_owned(p->r, p->lane, p->id, i) : put_shared(p->r, p->lane, p->id, i));
    }
    if (p->owned) fs_ring_lane_give_back(&p->r->lane_local[p->lane].owned);
    __atomic_fetch_sub(&producers_left, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void should_deliver_every_record_once_with_owned_and_shared_lanes(void) {
    fs_ring_t* r = new_ring_lanes(8, 128); /* 6 owned, 4 threads on 2 shared lanes */
    uint64_t n = quick ? 20000 : 200000;
    own_prod_t p[NOWN];
    own_prods = p;
    pthread_t th[NOWN];
    producers_left = NOWN;
    fs_consumer_t c;
    fs_consumer_attach(&c, r->base);
    c.stale_timeout_ns = 20000000ULL;
    pthread_barrier_init(&lanes_taken, NULL, NOWN);
    for (uint32_t i = 0; i < NOWN; i++) {
        p[i] = (own_prod_t){r, i, n, 0, 0, 0, 0, 0};
        pthread_create(&th[i], NULL, owning_producer, &p[i]);
    }
    uint64_t last[NOWN] = {0}, got[NOWN] = {0};
    uint32_t lane_of_thread[NOWN];
    for (int i = 0; i < NOWN; i++) lane_of_thread[i] = UINT32_MAX;
    fs_record_t rec;
    int bad = 0;
    for (;;) {
        int done = __atomic_load_n(&producers_left, __ATOMIC_ACQUIRE) == 0;
        int any = 0;
        while (fs_consumer_poll(&c, &rec, NULL)) {
            any = 1;
            uint64_t v = payload0(&rec);
            if (rec.thread >= NOWN || v <= last[rec.thread]) {
                bad++; /* duplicate or reordered */
                continue;
            }
            if (lane_of_thread[rec.thread] == UINT32_MAX) lane_of_thread[rec.thread] = c.last_lane;
            if (lane_of_thread[rec.thread] != c.last_lane) bad++; /* a thread writes one lane */
            last[rec.thread] = v;
            got[rec.thread]++;
        }
        if (done && !any) break;
    }
    for (int i = 0; i < NOWN; i++) pthread_join(th[i], NULL);
    pthread_barrier_destroy(&lanes_taken);
    while (fs_consumer_poll(&c, &rec, NULL)) bad++;
    CHECK_EQ(bad, 0);
    uint64_t received = 0, owners = 0;
    for (int i = 0; i < NOWN; i++) {
        CHECK_EQ(got[i], p[i].written);
        if (got[i]) CHECK_EQ(lane_of_thread[i], p[i].lane);
        received += got[i];
        owners += p[i].owned;
        if (!p[i].owned) CHECK(p[i].lane >= 6);
    }
    CHECK_EQ(owners, 6);
    for (uint32_t l = 0; l < 6; l++) CHECK_EQ(r->lane_local[l].owned, 0); /* all given back */
    uint64_t dropped = cnt(r, FS_CNT_DROPPED_FULL) + cnt(r, FS_CNT_DROPPED_CONTENDED);
    uint64_t stalled = 0, full_retries = 0;
    for (int i = 0; i < NOWN; i++) stalled += (uint64_t)p[i].stalled, full_retries += p[i].full_retries;
    CHECK_EQ(stalled, 1);
    /* Every skipped slot is one record lost, counted by the consumer; a shared
     * lane's producer also counts it abandoned (its CAS fails), an owner's late
     * store is freed by the consumer a lap later (if its lane laps again). The
     * stalled owner's lane does lap. */
    CHECK_EQ(received + dropped + c.skipped_stale, (uint64_t)NOWN * n + full_retries);
    CHECK(c.skipped_stale >= 1);
    CHECK(c.late_published >= 1);
    CHECK(cnt(r, FS_CNT_DROPPED_ABANDONED) + c.late_published <= c.skipped_stale);
    CHECK_EQ(c.corrupt, 0);
    printf("  (%" PRIu64 " received, %" PRIu64 " full, %" PRIu64 " contended, %" PRIu64 " abandoned)\n",
           received, cnt(r, FS_CNT_DROPPED_FULL), cnt(r, FS_CNT_DROPPED_CONTENDED),
           cnt(r, FS_CNT_DROPPED_ABANDONED));
    drop_ring(r);
}

static void should_deliver_every_record_exactly_once_with_concurrent_producers(void) {
    deliver_exactly_once(4);
    deliver_exactly_once(2);
    deliver_exactly_once(1);
}

/* ---- tables ---- */

static void should_intern_strings_once_and_publish_length_last(void) {
    fs_ring_t* r = new_ring(16);
    static const char a[] = "AllReduce";
    char b[16];
    strcpy(b, "AllReduce");
    uint8_t ia = fs_ring_intern(r, a);
    CHECK_EQ(ia, 1);
    CHECK_EQ(fs_ring_intern(r, a), 1);
    CHECK_EQ(fs_ring_intern(r, b), 1); /* same text, other pointer: same entry */
    CHECK_EQ(fs_ring_intern(r, NULL), 0);
    CHECK_EQ(fs_ring_intern(r, ""), 0);
    CHECK_EQ(fs_ring_intern(r, "a_name_that_is_longer_than_28_bytes"), 2);
    uint8_t* e = r->base + FS_STRING_TABLE_OFFSET + 2 * FS_STRING_ENTRY_SIZE;
    CHECK_EQ(*(uint32_t*)e, 28);
    CHECK(memcmp(e + 4, "a_name_that_is_longer_than_2", 28) == 0);
    e = r->base + FS_STRING_TABLE_OFFSET + 1 * FS_STRING_ENTRY_SIZE;
    CHECK_EQ(*(uint32_t*)e, 9);
    CHECK(memcmp(e + 4, "AllReduce", 9) == 0);
    CHECK_EQ(*(uint32_t*)(r->base + FS_HDR_STRING_COUNT_OFFSET), 3);
    static char names[300][16];
    for (int i = 0; i < 300; i++) {
        snprintf(names[i], sizeof names[i], "n%d", i);
        fs_ring_intern(r, names[i]);
    }
    CHECK_EQ(*(uint32_t*)(r->base + FS_HDR_STRING_COUNT_OFFSET), 256);
    CHECK_EQ(cnt(r, FS_CNT_STRINGS_OVERFLOW), 300 - 253);
    CHECK_EQ(fs_ring_intern(r, names[299]), 0);
    CHECK_EQ(cnt(r, FS_CNT_STRINGS_OVERFLOW), 300 - 253); /* counted once per name */
    drop_ring(r);
}

static void should_claim_comm_entries_and_finalize(void) {
    fs_ring_t* r = new_ring(16);
    fs_gpu_t gpu = {.cuda_dev = 1, .pci_bus_id = "0000:19:00.0"};
    for (int i = 0; i < 16; i++) gpu.uuid[i] = (uint8_t)(0x10 + i);
    CHECK_EQ(fs_ring_comm_add(r, 0xabcdef, 3, 8, 2, "tp-group", &gpu, 111), 0);
    CHECK_EQ(fs_ring_comm_add(r, 0x123, 0, 1, 1, NULL, NULL, 112), 1);
    uint8_t* e = r->base + FS_COMM_TABLE_OFFSET;
    /* 1.2: the UUID beside the entry; none known: zero */
    CHECK(memcmp(r->base + FS_GPU_UUID_TABLE_OFFSET, gpu.uuid, FS_GPU_UUID_SIZE) == 0);
    for (unsigned i = 0; i < FS_GPU_UUID_SIZE; i++)
        CHECK_EQ(r->base[FS_GPU_UUID_TABLE_OFFSET + FS_GPU_UUID_SIZE + i], 0);
    CHECK_EQ(*(int32_t*)(e + FS_COMM_CUDA_DEV_OFFSET), 1);
    CHECK(strcmp((char*)e + FS_COMM_PCI_BUS_ID_OFFSET, "0000:19:00.0") == 0);
    uint8_t* e1 = e + FS_COMM_ENTRY_SIZE; /* no device known: -1 and "" */
    CHECK(*(int32_t*)(e1 + FS_COMM_CUDA_DEV_OFFSET) == -1);
    CHECK_EQ(e1[FS_COMM_PCI_BUS_ID_OFFSET], 0);
    CHECK_EQ(e1[FS_COMM_NAME_OFFSET], 0);
    CHECK_EQ(*(uint64_t*)(e + FS_COMM_HASH_OFFSET), 0xabcdef);
    CHECK_EQ(*(uint32_t*)(e + FS_COMM_STATE_OFFSET), 1);
    CHECK_EQ(*(int32_t*)(e + FS_COMM_RANK_OFFSET), 3);
    CHECK_EQ(*(int32_t*)(e + FS_COMM_NRANKS_OFFSET), 8);
    CHECK_EQ(*(int32_t*)(e + FS_COMM_NNODES_OFFSET), 2);
    CHECK_EQ(*(uint64_t*)(e + FS_COMM_INIT_MONOTONIC_NS_OFFSET), 111);
    CHECK(strcmp((char*)e + FS_COMM_NAME_OFFSET, "tp-group") == 0);
    fs_ring_comm_finalize(r, 0, 222);
    CHECK_EQ(*(uint32_t*)(e + FS_COMM_STATE_OFFSET), 2);
    CHECK_EQ(*(uint64_t*)(e + FS_COMM_FINALIZE_MONOTONIC_NS_OFFSET), 222);
    for (int i = 2; i < 1024; i++) fs_ring_comm_add(r, (uint64_t)i, 0, 1, 1, "x", NULL, 1);
    CHECK_EQ(fs_ring_comm_add(r, 1, 0, 1, 1, "overflow", NULL, 1), FS_COMM_INDEX_UNKNOWN);
    CHECK_EQ(cnt(r, FS_CNT_COMMS_OVERFLOW), 1);
    drop_ring(r);
}

/* Layout 1.1: the name ends inside its 56 bytes, before cuda_dev; an over-long
 * bus id is cut inside its 28. */
static void should_keep_long_names_and_bus_ids_inside_their_fields(void) {
    fs_ring_t* r = new_ring(16);
    char name[120];
    memset(name, 'n', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    fs_gpu_t gpu = {.cuda_dev = 7};
    memset(gpu.pci_bus_id, 'b', sizeof gpu.pci_bus_id - 1);
    gpu.pci_bus_id[sizeof gpu.pci_bus_id - 1] = '\0';
    CHECK_EQ(fs_ring_comm_add(r, 0x77, 0, 2, 1, name, &gpu, 1), 0);
    uint8_t* e = r->base + FS_COMM_TABLE_OFFSET;
    CHECK_EQ(strlen((char*)e + FS_COMM_NAME_OFFSET), FS_COMM_NAME_LENGTH - 1);
    CHECK_EQ(*(int32_t*)(e + FS_COMM_CUDA_DEV_OFFSET), 7);
    CHECK_EQ(strnlen((char*)e + FS_COMM_PCI_BUS_ID_OFFSET, FS_COMM_PCI_BUS_ID_LENGTH),
             FS_COMM_PCI_BUS_ID_LENGTH - 1);
    CHECK_EQ(*(uint32_t*)(e + FS_COMM_ENTRY_SIZE + FS_COMM_STATE_OFFSET), 0); /* the next entry untouched */
    drop_ring(r);
}

/* fs_gpu: the device only through a driver the process already has. Without
 * one: unknown. With the stand-in driver (FS_FAKE_CUDA_LIB, make check sets
 * it) loaded: the calling thread's device and its bus id; no current
 * context: unknown. */
static void should_read_the_device_only_from_a_loaded_driver(void) {
    fs_gpu_t gpu;
    memset(&gpu, 0x55, sizeof gpu);
    fs_gpu_of_calling_thread(&gpu);
    CHECK(gpu.cuda_dev == -1);
    CHECK_EQ(gpu.pci_bus_id[0], 0);
    static const uint8_t zero_uuid[16];
    CHECK(memcmp(gpu.uuid, zero_uuid, 16) == 0);
    const char* path = getenv("FS_FAKE_CUDA_LIB");
    if (!path || !*path) {
        printf("  (FS_FAKE_CUDA_LIB unset: the stand-in driver's half skipped)\n");
        return;
    }
    void* fake = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    CHECK(fake != NULL);
    fs_fake_cuda_set_device_t set_device = (fs_fake_cuda_set_device_t)dlsym(fake, "fs_fake_cuda_set_device");
    CHECK(set_device != NULL);
    set_device(3);
    fs_gpu_of_calling_thread(&gpu);
    char want[32];
    fs_fake_cuda_bus_id(3, want, sizeof want);
    CHECK_EQ(gpu.cuda_dev, 3);
    CHECK(strcmp(gpu.pci_bus_id, want) == 0);
    unsigned char want_uuid[16];
    fs_fake_cuda_uuid(3, want_uuid);
    CHECK(memcmp(gpu.uuid, want_uuid, 16) == 0);
    setenv(FS_FAKE_CUDA_NO_UUID_ENV, "1", 1); /* a driver that cannot tell the UUID: zero, the rest known */
    fs_gpu_of_calling_thread(&gpu);
    unsetenv(FS_FAKE_CUDA_NO_UUID_ENV);
    CHECK_EQ(gpu.cuda_dev, 3);
    CHECK(memcmp(gpu.uuid, zero_uuid, 16) == 0);
    set_device(-1); /* the driver is there, the thread has no context */
    fs_gpu_of_calling_thread(&gpu);
    CHECK(gpu.cuda_dev == -1);
    CHECK_EQ(gpu.pci_bus_id[0], 0);
    CHECK(memcmp(gpu.uuid, zero_uuid, 16) == 0);
    dlclose(fake);
}

/* ---- config and clock ---- */

static void should_parse_event_masks(void) {
    uint32_t m = 0;
    CHECK(fs_config_parse_mask("223", &m) == 0 && m == 0xDF);
    CHECK(fs_config_parse_mask("0x7fff", &m) == 0 && m == 0x7FFF);
    CHECK(fs_config_parse_mask("proxystep,netplugin", &m) == 0 && m == 0x90);
    CHECK(fs_config_parse_mask("ProxyStep, KernelCh", &m) == 0 && m == 0x50);
    CHECK(fs_config_parse_mask("all", &m) == 0 && m == 0x7FFF);
    CHECK(fs_config_parse_mask("default,groupapi", &m) == 0 && m == (FS_CONFIG_DEFAULT_MASK | 0x100));
    m = 5;
    CHECK(fs_config_parse_mask("bogus", &m) != 0 && m == 5);
    CHECK(fs_config_parse_mask("0x10000", &m) != 0);
    CHECK(fs_config_parse_mask("12abc", &m) != 0);
    CHECK(fs_config_parse_mask("", &m) != 0);
    CHECK(fs_config_parse_mask("coll,,p2p", &m) != 0);
}

static void should_parse_ring_sizes_and_round_down_to_power_of_two_slots(void) {
    uint64_t b = 0;
    CHECK(fs_config_parse_size("16M", &b) == 0 && b == 16ULL << 20);
    CHECK(fs_config_parse_size("1k", &b) == 0 && b == 1024);
    CHECK(fs_config_parse_size("4G", &b) == 0 && b == 4ULL << 30);
    CHECK(fs_config_parse_size("65536", &b) == 0 && b == 65536);
    CHECK(fs_config_parse_size("16MiB", &b) == 0 && b == 16ULL << 20);
    CHECK(fs_config_parse_size("-1", &b) != 0);
    CHECK(fs_config_parse_size("lots", &b) != 0);
    CHECK(fs_config_parse_size("16Q", &b) != 0);
    CHECK_EQ(fs_config_slots_for_bytes(16ULL << 20, 1), 262144);
    CHECK_EQ(fs_config_slots_for_bytes(64ULL << 20, 8), 1048576);
    CHECK_EQ(fs_config_slots_for_bytes(100000, 1), 1024);
    CHECK_EQ(fs_config_slots_for_bytes(10, 1), 16);
    CHECK_EQ(fs_config_slots_for_bytes(1024, 8), 128); /* 16 slots per lane at least */
    CHECK_EQ(fs_config_slots_for_bytes(64ULL << 30, 8), (4ULL << 30) / 64);
    uint32_t l = 0;
    CHECK(fs_config_parse_lanes("8", &l) == 0 && l == 8);
    CHECK(fs_config_parse_lanes("1", &l) == 0 && l == 1);
    CHECK(fs_config_parse_lanes("64", &l) == 0 && l == 64);
    CHECK(fs_config_parse_lanes("6", &l) == 1 && l == 4);
    CHECK(fs_config_parse_lanes("63", &l) == 1 && l == 32);
    l = 3;
    CHECK(fs_config_parse_lanes("0", &l) == -1 && l == 3);
    CHECK(fs_config_parse_lanes("65", &l) == -1);
    CHECK(fs_config_parse_lanes("-2", &l) == -1);
    CHECK(fs_config_parse_lanes("eight", &l) == -1);
    CHECK(fs_config_parse_lanes("8x", &l) == -1);
}

static void should_read_defaults_and_warn_on_bad_values(void) {
    fs_config_t cfg;
    unsetenv("FLOWSCOPE_EVENT_MASK");
    unsetenv("FLOWSCOPE_RING_DIR");
    unsetenv("FLOWSCOPE_RING_SIZE");
    unsetenv("FLOWSCOPE_RING_LANES");
    unsetenv("FLOWSCOPE_CLOCK");
    unsetenv("FLOWSCOPE_DISABLE");
    fs_config_load(&cfg, NULL);
    CHECK_EQ(cfg.event_mask, FS_CONFIG_DEFAULT_MASK);
    CHECK(strcmp(cfg.ring_dir, "/dev/shm/flowscope") == 0);
    CHECK_EQ(cfg.ring_slots, 1048576); /* 64M */
    CHECK_EQ(cfg.ring_lanes, 8);
    CHECK_EQ(cfg.prefer_tsc, 1);
    CHECK_EQ(cfg.disabled, 0);
    setenv("FLOWSCOPE_EVENT_MASK", "nonsense", 1);
    setenv("FLOWSCOPE_RING_SIZE", "huge", 1);
    setenv("FLOWSCOPE_CLOCK", "sundial", 1);
    setenv("FLOWSCOPE_DISABLE", "yes", 1);
    setenv("FLOWSCOPE_RING_LANES", "100", 1);
    fprintf(stderr, "  (5 WARN lines expected:)\n");
    fs_config_load(&cfg, NULL);
    CHECK_EQ(cfg.event_mask, FS_CONFIG_DEFAULT_MASK);
    CHECK_EQ(cfg.ring_slots, 1048576);
    CHECK_EQ(cfg.ring_lanes, 8);
    CHECK_EQ(cfg.prefer_tsc, 1);
    CHECK_EQ(cfg.disabled, 0);
    setenv("FLOWSCOPE_CLOCK", "monotonic", 1);
    setenv("FLOWSCOPE_DISABLE", "1", 1);
    setenv("FLOWSCOPE_RING_SIZE", "1K", 1);
    setenv("FLOWSCOPE_RING_LANES", "1", 1);
    fs_config_load(&cfg, NULL);
    CHECK_EQ(cfg.prefer_tsc, 0);
    CHECK_EQ(cfg.disabled, 1);
    CHECK_EQ(cfg.ring_slots, 16);
    CHECK_EQ(cfg.ring_lanes, 1);
    unsetenv("FLOWSCOPE_EVENT_MASK");
    fprintf(stderr, "  (2 WARN lines expected:)\n");
    setenv("FLOWSCOPE_RING_LANES", "12", 1); /* rounded down to 8, WARN */
    fs_config_load(&cfg, NULL);              /* 1K < 8 x 16 slots: clamped up, WARN */
    CHECK_EQ(cfg.ring_lanes, 8);
    CHECK_EQ(cfg.ring_slots, 128);
    unsetenv("FLOWSCOPE_RING_LANES");
    unsetenv("FLOWSCOPE_EVENT_MASK");
    unsetenv("FLOWSCOPE_RING_SIZE");
    unsetenv("FLOWSCOPE_CLOCK");
    unsetenv("FLOWSCOPE_DISABLE");
}

static void should_track_clock_monotonic_with_the_tsc(void) {
    uint32_t src = fs_clock_init(1);
    if (src != FS_CLOCK_SOURCE_TSC) {
        printf("  (no invariant TSC: clock_gettime fallback)\n");
        return;
    }
    uint64_t worst = 0, prev = 0;
    uint64_t t_end = now_ns() + (quick ? 100000000ULL : 1200000000ULL); /* crosses re-anchors */
    while (now_ns() < t_end) {
        uint64_t a = fs_clock_monotonic_ns();
        uint64_t t = fs_clock_now_ns();
        uint64_t b = fs_clock_monotonic_ns();
        uint64_t err = t < a ? a - t : t > b ? t - b : 0;
        if (err > worst) worst = err;
        CHECK(t + 20000 >= prev); /* never backwards by more than 20 us */
        prev = t;
        usleep(200);
    }
    printf("  (TSC clock: worst error vs clock_gettime %" PRIu64 " ns, %.4f ns/tick)\n", worst,
           fs_clock_ns_per_tick());
    CHECK(worst < 50000);
}

/* ---- main ---- */

#define RUN(t)                                                                                               \
    do {                                                                                                     \
        int f0 = failures;                                                                                   \
        t();                                                                                                 \
        printf("%s %s\n", failures == f0 ? "ok  " : "FAIL", #t);                                             \
        fflush(stdout);                                                                                      \
    } while (0)

int main(int argc, char** argv) {
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            quick = 1;
        else if (!strcmp(argv[i], "--vectors") && i + 1 < argc)
            vectors_path = argv[++i];
    }
    snprintf(tmpdir, sizeof tmpdir, "%s/fs_ring_test.%d/sub", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (int)getpid());
    RUN(should_initialise_header_and_slot_sequences);
    RUN(should_create_a_fresh_file_per_ring);
    RUN(should_claim_and_publish_in_position_order);
    RUN(should_count_drop_when_ring_full);
    RUN(should_wrap_around_and_keep_exact_counts);
    RUN(should_count_exact_drops_per_lane);
    RUN(should_write_different_lanes_from_threads_of_different_lanes);
    RUN(should_not_read_tail_on_an_empty_poll);
    RUN(should_not_skip_a_claim_first_seen_at_the_tail_read);
    RUN(should_compute_the_fixed_checksum_vector);
    RUN(should_never_read_a_record_claimed_by_a_killed_producer);
    RUN(should_add_a_full_lanes_drops_to_the_header_in_batches);
    RUN(should_count_abandoned_when_publish_is_late);
    RUN(should_not_spin_forever_on_a_garbage_sequence);
    RUN(should_reject_a_record_with_a_bad_checksum);
    RUN(should_deliver_every_record_exactly_once_with_concurrent_producers);
    RUN(should_own_the_first_lanes_and_share_the_rest);
    RUN(should_claim_an_owned_lane_without_cas_with_the_same_outcomes);
    RUN(should_skip_a_slot_of_an_owner_stalled_past_the_timeout);
    RUN(should_deliver_every_record_once_with_owned_and_shared_lanes);
    RUN(should_intern_strings_once_and_publish_length_last);
    RUN(should_claim_comm_entries_and_finalize);
    RUN(should_keep_long_names_and_bus_ids_inside_their_fields);
    RUN(should_read_the_device_only_from_a_loaded_driver);
    RUN(should_parse_event_masks);
    RUN(should_parse_ring_sizes_and_round_down_to_power_of_two_slots);
    RUN(should_read_defaults_and_warn_on_bad_values);
    RUN(should_track_clock_monotonic_with_the_tsc);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/fs_ring_test.%d'", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             (int)getpid());
    if (system(cmd) != 0) fprintf(stderr, "cleanup failed\n");
    printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
    return failures ? 1 : 0;
}
