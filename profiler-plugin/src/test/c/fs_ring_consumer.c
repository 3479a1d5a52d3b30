/* fs_ring_consumer.c - RING.md's consumer protocol, in C (tests and bench). */
#define _GNU_SOURCE
#include "fs_ring_consumer.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uint64_t fs_consumer_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int fs_consumer_attach(fs_consumer_t* c, uint8_t* base) {
    memset(c, 0, sizeof *c);
    uint32_t v;
    for (int i = 0;
         (v = __atomic_load_n((uint32_t*)(base + FS_HDR_LAYOUT_VERSION_OFFSET), __ATOMIC_ACQUIRE)) == 0;
         i++) {
        if (i > 5000) return -1;
        usleep(1000);
    }
    if (v >> 16 != FS_RING_LAYOUT_MAJOR) {
        fprintf(stderr, "ring layout %u.%u, this consumer reads %u.x\n", v >> 16, v & 0xFFFF,
                FS_RING_LAYOUT_MAJOR);
        return -1;
    }
    uint32_t lanes = *(uint32_t*)(base + FS_HDR_LANE_COUNT_OFFSET);
    uint64_t lane_capacity = *(uint64_t*)(base + FS_HDR_LANE_CAPACITY_OFFSET);
    uint64_t capacity = *(uint64_t*)(base + FS_HDR_CAPACITY_OFFSET);
    if (lanes < 1 || lanes > FS_LANE_MAX || (lanes & (lanes - 1)) || lane_capacity < 2 ||
        (lane_capacity & (lane_capacity - 1)) || capacity != lanes * lane_capacity) {
        fprintf(stderr, "ring lanes %u x %llu slots, capacity %llu: inconsistent\n", lanes,
                (unsigned long long)lane_capacity, (unsigned long long)capacity);
        return -1;
    }
    c->base = base;
    c->capacity = capacity;
    c->lane_capacity = lane_capacity;
    c->lane_mask = lane_capacity - 1;
    c->lane_count = lanes;
    c->stale_timeout_ns = 100000000ULL;
    uint64_t header_size = *(uint64_t*)(base + FS_HDR_HEADER_SIZE_OFFSET);
    for (uint32_t l = 0; l < lanes; l++) {
        fs_consumer_lane_t* ln = &c->lanes[l];
        ln->slots = (fs_record_t*)(base + fs_slot_offset(header_size, lane_capacity, l, 0));
        ln->tail =
            (uint64_t*)(base + FS_LANE_TABLE_OFFSET + (size_t)l * FS_LANE_ENTRY_SIZE + FS_LANE_TAIL_OFFSET);
        ln->head =
            (uint64_t*)(base + FS_LANE_TABLE_OFFSET + (size_t)l * FS_LANE_ENTRY_SIZE + FS_LANE_HEAD_OFFSET);
        ln->stale_pos = UINT64_MAX;
    }
    __atomic_store_n((int32_t*)(base + FS_HDR_CONSUMER_PID_OFFSET), (int32_t)getpid(), __ATOMIC_RELAXED);
    return 0;
}

int fs_consumer_open(fs_consumer_t* c, const char* path) {
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) { /* only one consumer per ring */
        close(fd);
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < (off_t)FS_RING_HEADER_SIZE) {
        close(fd);
        return -1;
    }
    void* m = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd); /* the lock goes with the file description: fine for tests */
    if (m == MAP_FAILED) return -1;
    if (fs_consumer_attach(c, m) != 0) {
        munmap(m, (size_t)st.st_size);
        return -1;
    }
    c->map_size = (size_t)st.st_size;
    return 0;
}

void fs_consumer_close(fs_consumer_t* c) {
    if (c->map_size) munmap(c->base, c->map_size);
    c->base = NULL;
}

static void fs_consumer_count(fs_consumer_t* c, size_t off) {
    __atomic_fetch_add((uint64_t*)(c->base + off), 1, __ATOMIC_RELAXED);
}

/* *now: the consumer's clock, read at most once per poll (0 = not read yet) */
static int fs_consumer_poll_lane_at(fs_consumer_t* c, uint32_t lane, fs_record_t* out, uint64_t* pos_out,
                                    uint64_t* now_cache) {
    fs_consumer_lane_t* ln = &c->lanes[lane];
    const uint64_t cap = c->lane_capacity;
    for (;;) {
        uint64_t pos = __atomic_load_n(ln->head, __ATOMIC_RELAXED);
        fs_record_t* s = &ln->slots[pos & c->lane_mask];
        uint64_t seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
        if (seq == pos + 1) {
            memcpy(out, s, sizeof *out);
            const uint64_t* w = (const uint64_t*)out;
            uint32_t ck = fs_record_checksum(pos, w[1], w[2], w[3], w[4], w[5], w[6], w[7]);
            __atomic_store_n(&s->seq, pos + cap, __ATOMIC_RELEASE);
            __atomic_store_n(ln->head, pos + 1, __ATOMIC_RELEASE);
            if (ck != out->checksum) {
                c->corrupt++;
                fs_consumer_count(c, FS_HDR_CONSUMER_CORRUPT_OFFSET);
                continue;
            }
            c->received++;
            ln->received++;
            c->last_lane = lane;
            if (pos_out) *pos_out = pos;
            return 1;
        }
        if (seq == pos + cap || seq == pos + cap + 1) {
            /* consumed by a consumer that died before moving head (+1: the next
             * lap's record is already published there; it is read at pos+cap) */
            __atomic_store_n(ln->head, pos + 1, __ATOMIC_RELEASE);
            continue;
        }
        if (seq == pos) {
            /* Nothing to read now. The tail is not read here (it is the
             * producers' line): only once pos has been unpublished for longer
             * than the stale timeout. */
            if (!*now_cache) *now_cache = fs_consumer_now();
            uint64_t now = *now_cache;
            if (ln->stale_pos != pos) {
                ln->stale_pos = pos;
                ln->stale_since_ns = now;
                ln->stale_claimed = 0;
                return 0;
            }
            if (now - ln->stale_since_ns < c->stale_timeout_ns) return 0;
            ln->tail_reads++;
            uint64_t tail = __atomic_load_n(ln->tail, __ATOMIC_ACQUIRE);
            if (tail <= pos) { /* simply empty: the timer restarts */
                ln->stale_since_ns = now;
                ln->stale_claimed = 0;
                return 0;
            }
            if (!ln->stale_claimed) { /* the claim may be nanoseconds old: one more timeout */
                ln->stale_claimed = 1;
                ln->stale_since_ns = now;
                return 0;
            }
            uint64_t expected = pos;
            if (__atomic_compare_exchange_n(&s->seq, &expected, pos + cap, 0, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE)) {
                c->skipped_stale++;
                fs_consumer_count(c, FS_HDR_CONSUMER_SKIPPED_STALE_OFFSET);
                __atomic_store_n(ln->head, pos + 1, __ATOMIC_RELEASE);
            }
            continue; /* published meanwhile, or skipped */
        }
        if (seq == pos - cap + 1) {
            /* Late publication (1.3): an owner stalled past the stale timeout
             * stored pos-cap+1 over the slot skipped a lap ago (already counted
             * as skipped). Free the slot for position pos; its owner waits at
             * tail == pos meanwhile (it sees the lane full). */
            uint64_t expected = seq;
            if (__atomic_compare_exchange_n(&s->seq, &expected, pos, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
                c->late_published++;
            continue;
        }
        /* corrupt slot sequence */
        c->corrupt++;
        fs_consumer_count(c, FS_HDR_CONSUMER_CORRUPT_OFFSET);
        ln->tail_reads++;
        uint64_t tail = __atomic_load_n(ln->tail, __ATOMIC_ACQUIRE);
        if (tail > pos) {
            __atomic_store_n(&s->seq, pos + cap, __ATOMIC_RELEASE);
            __atomic_store_n(ln->head, pos + 1, __ATOMIC_RELEASE);
            continue;
        }
        __atomic_store_n(&s->seq, pos, __ATOMIC_RELEASE);
        return 0;
    }
}

int fs_consumer_poll_lane(fs_consumer_t* c, uint32_t lane, fs_record_t* out, uint64_t* pos_out) {
    uint64_t now = 0;
    return fs_consumer_poll_lane_at(c, lane, out, pos_out, &now);
}

/* Round-robin: up to FS_CONSUMER_BURST records from a lane, then the next one. */
#define FS_CONSUMER_BURST 64u

int fs_consumer_poll(fs_consumer_t* c, fs_record_t* out, uint64_t* pos_out) {
    uint32_t n = c->lane_count;
    uint64_t now = 0;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t lane = c->next_lane;
        if (fs_consumer_poll_lane_at(c, lane, out, pos_out, &now)) {
            if (++c->burst >= FS_CONSUMER_BURST) {
                c->burst = 0;
                c->next_lane = (lane + 1) & (n - 1);
            }
            return 1;
        }
        c->burst = 0;
        c->next_lane = (lane + 1) & (n - 1);
    }
    return 0;
}
