/*
 * fs_ring_consumer.h - a minimal C consumer that follows RING.md's consumer
 * protocol (used by fs_ring_test, fs_bench and the TSan runs; the real
 * consumer is the Java RingReader).
 *
 * Lanes are drained round-robin (up to 64 records of a lane in a row). On an empty slot (seq == pos) the
 * consumer does not read the lane's tail (the producers' cache line): it notes when it first saw `pos`
 * unpublished and reads tail only once the stale timeout has passed.
 */
#ifndef FS_RING_CONSUMER_H
#define FS_RING_CONSUMER_H

#include <stddef.h>
#include <stdint.h>

#include "fs_ring_layout.h"

typedef struct {
    fs_record_t* slots; /* slot 0 of the lane */
    uint64_t* tail;
    uint64_t* head;
    uint64_t stale_pos; /* position being watched, UINT64_MAX = none */
    uint64_t stale_since_ns;
    int stale_claimed; /* tail > stale_pos seen at stale_since_ns */
    uint64_t received;
    uint64_t tail_reads; /* how often this lane's tail was read (tests) */
} fs_consumer_lane_t;

typedef struct {
    uint8_t* base;
    size_t map_size;        /* 0 when attached to memory we do not own */
    uint64_t capacity;      /* all slots */
    uint64_t lane_capacity; /* slots per lane */
    uint64_t lane_mask;
    uint32_t lane_count;
    uint32_t next_lane;        /* round-robin cursor */
    uint32_t burst;            /* records taken from next_lane in a row */
    uint32_t last_lane;        /* lane of the record the last successful poll returned */
    uint64_t stale_timeout_ns; /* default 100 ms */
    uint64_t received;
    uint64_t corrupt;
    uint64_t skipped_stale;
    uint64_t late_published; /* slots freed after an owner's late publication (1.3) */
    fs_consumer_lane_t lanes[FS_LANE_MAX];
} fs_consumer_t;

/* Attaches to a mapped ring (waits for layout_version; refuses another major). */
int fs_consumer_attach(fs_consumer_t* c, uint8_t* base);
/* Maps a ring file read-write and attaches. 0 on success. */
int fs_consumer_open(fs_consumer_t* c, const char* path);
void fs_consumer_close(fs_consumer_t* c);

/* Round-robin over the lanes: 1 = a record was copied into *out (its position
 * in its lane in *pos_out, its lane in c->last_lane); 0 = nothing now. */
int fs_consumer_poll(fs_consumer_t* c, fs_record_t* out, uint64_t* pos_out);

/* The same for one lane. */
int fs_consumer_poll_lane(fs_consumer_t* c, uint32_t lane, fs_record_t* out, uint64_t* pos_out);

#endif /* FS_RING_CONSUMER_H */
