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
    for (int i = 0; (v = __atomic_load_n((uint32_t*)(base + FS_HDR_LAYOUT_VERSION_OFFSET), __ATOMIC_ACQUIRE)) == 0; i++) {
        if (i > 5000) return -1;
        usleep(1000);
    }
    if (v >> 16 != FS_RING_LAYOUT_MAJOR) {
        fprintf(stderr, "ring layout %u.%u, this consumer reads %u.x\n", v >> 16, v & 0xFFFF,
                FS_RING_LAYOUT_MAJOR);
        return -1;
    }
    c->base = base;
    c->capacity = *(uint64_t*)(base + FS_HDR_CAPACITY_OFFSET);
    c->mask = c->capacity - 1;
    c->slots = (fs_record_t*)(base + *(uint64_t*)(base + FS_HDR_HEADER_SIZE_OFFSET));
    c->tail = (uint64_t*)(base + FS_HDR_TAIL_OFFSET);
    c->head = (uint64_t*)(base + FS_HDR_HEAD_OFFSET);
    c->stale_timeout_ns = 100000000ULL;
    c->stale_pos = UINT64_MAX;
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

int fs_consumer_poll(fs_consumer_t* c, fs_record_t* out, uint64_t* pos_out) {
    for (;;) {
        uint64_t pos = __atomic_load_n(c->head, __ATOMIC_RELAXED);
        fs_record_t* s = &c->slots[pos & c->mask];
        uint64_t seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
        if (seq == pos + 1) {
            memcpy(out, s, sizeof *out);
            const uint64_t* w = (const uint64_t*)out;
            uint32_t ck = fs_record_checksum(pos, w[1], w[2], w[3], w[4], w[5], w[6], w[7]);
            __atomic_store_n(&s->seq, pos + c->capacity, __ATOMIC_RELEASE);
            __atomic_store_n(c->head, pos + 1, __ATOMIC_RELEASE);
            if (ck != out->checksum) {
                c->corrupt++;
                fs_consumer_count(c, FS_HDR_CONSUMER_CORRUPT_OFFSET);
                continue;
            }
            c->received++;
            if (pos_out) *pos_out = pos;
            return 1;
        }
        if (seq == pos + c->capacity) { /* consumed by a consumer that died before moving head */
            __atomic_store_n(c->head, pos + 1, __ATOMIC_RELEASE);
            continue;
        }
        uint64_t tail = __atomic_load_n(c->tail, __ATOMIC_ACQUIRE);
        if (seq == pos) {
            if (tail <= pos) return 0; /* nothing more */
            uint64_t now = fs_consumer_now();
            if (c->stale_pos != pos) {
                c->stale_pos = pos;
                c->stale_since_ns = now;
                return 0;
            }
            if (now - c->stale_since_ns < c->stale_timeout_ns) return 0;
            uint64_t expected = pos;
            if (__atomic_compare_exchange_n(&s->seq, &expected, pos + c->capacity, 0, __ATOMIC_ACQ_REL,
                                            __ATOMIC_ACQUIRE)) {
                c->skipped_stale++;
                fs_consumer_count(c, FS_HDR_CONSUMER_SKIPPED_STALE_OFFSET);
                __atomic_store_n(c->head, pos + 1, __ATOMIC_RELEASE);
            }
            continue; /* published meanwhile, or skipped */
        }
        /* corrupt slot sequence */
        c->corrupt++;
        fs_consumer_count(c, FS_HDR_CONSUMER_CORRUPT_OFFSET);
        if (tail > pos) {
            __atomic_store_n(&s->seq, pos + c->capacity, __ATOMIC_RELEASE);
            __atomic_store_n(c->head, pos + 1, __ATOMIC_RELEASE);
            continue;
        }
        __atomic_store_n(&s->seq, pos, __ATOMIC_RELEASE);
        return 0;
    }
}
