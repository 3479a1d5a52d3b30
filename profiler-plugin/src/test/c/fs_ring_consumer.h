/*
 * fs_ring_consumer.h - a minimal C consumer that follows RING.md's consumer
 * protocol (used by fs_ring_test, fs_bench and the TSan runs; the real
 * consumer is the Java RingReader).
 */
#ifndef FS_RING_CONSUMER_H
#define FS_RING_CONSUMER_H

#include <stddef.h>
#include <stdint.h>

#include "fs_ring_layout.h"

typedef struct {
    uint8_t* base;
    size_t map_size; /* 0 when attached to memory we do not own */
    uint64_t capacity;
    uint64_t mask;
    fs_record_t* slots;
    uint64_t* tail;
    uint64_t* head;
    uint64_t stale_timeout_ns; /* default 100 ms */
    uint64_t stale_pos;        /* position being watched, UINT64_MAX = none */
    uint64_t stale_since_ns;
    uint64_t received;
    uint64_t corrupt;
    uint64_t skipped_stale;
} fs_consumer_t;

/* Attaches to a mapped ring (waits for layout_version; refuses another major). */
int fs_consumer_attach(fs_consumer_t* c, uint8_t* base);
/* Maps a ring file read-write and attaches. 0 on success. */
int fs_consumer_open(fs_consumer_t* c, const char* path);
void fs_consumer_close(fs_consumer_t* c);

/* 1: a record was copied into *out (its position in *pos_out); 0: nothing now. */
int fs_consumer_poll(fs_consumer_t* c, fs_record_t* out, uint64_t* pos_out);

#endif /* FS_RING_CONSUMER_H */
