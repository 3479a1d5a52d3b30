/*
 * fs_ring.h - the producer side of the flowscope ring (RING.md, layout 1.1):
 * file creation, claim/publish, the string and communicator tables, close.
 *
 * The slots are split into lanes, each an independent MPSC ring with its own
 * tail (alone on 128 bytes in the header's lane table). A thread writes one
 * lane only, one it owns (claim without a CAS) or a shared one: producers of
 * different lanes share no cache line on the hot path, and one thread's
 * records stay in order in its lane.
 *
 * Names match the Java side: fs_ring_try_claim <-> tryClaim,
 * fs_ring_publish <-> publish.
 */
#ifndef FS_RING_H
#define FS_RING_H

#include <stddef.h>
#include <stdint.h>

#include "fs_ring_layout.h"

#ifndef FS_HIDDEN
#define FS_HIDDEN __attribute__((visibility("hidden")))
#endif

#define FS_RING_CLAIM_RETRIES 64
#define FS_RING_LIKELY(x)     __builtin_expect(!!(x), 1)
#define FS_RING_STRING_CACHE  512 /* pointer-keyed cache entries (power of two) */
#define FS_RING_STRING_PROBES 8

typedef struct {
    uint32_t abi_version; /* 0 until the first init */
    int32_t nccl_version; /* 0 if unknown */
    uint32_t event_mask;
    uint32_t clock_source; /* FS_CLOCK_SOURCE_* */
} fs_ring_params_t;

/* dropped_full reaches the header in batches of this many per lane (RING.md):
 * the producers of a full lane count on their own cache line, not on the
 * header's counter that every lane shares. */
#define FS_RING_DROP_BATCH 256u

/* Process memory of one lane, written only by that lane's producers. */
typedef struct {
    uint64_t dropped_full; /* drops not yet added to the header's dropped_full */
    uint32_t owned;        /* ownable lanes: 1 while a thread holds the lane (fs_ring_lane_take) */
} __attribute__((aligned(128))) fs_lane_local_t;

typedef struct fs_ring {
    /* read by every claim (read-only after creation): one cache line */
    uint8_t* base;          /* the mapping: header then slots */
    fs_record_t* slots;     /* slot 0 of lane 0 */
    uint64_t lane_mask;     /* lane_capacity - 1 */
    uint32_t lane_shift;    /* log2(lane_capacity) */
    uint32_t ownable_lanes; /* lanes 0 .. ownable_lanes-1: one thread each (RING.md) */
    uint32_t shared_select; /* shared lane count - 1: thread -> shared lane */
    uint64_t* counters;     /* dropped_full ... comms_overflow (global, drop path only) */
    uint64_t capacity;      /* all slots: lane_count * lane_capacity */
    uint64_t lane_capacity;
    uint32_t lane_count;
    size_t map_size;
    char path[640];
    fs_lane_local_t lane_local[FS_LANE_MAX];
    /* string interning cache, process memory: (pointer << 8 | index), 0 = empty */
    uint64_t string_cache[FS_RING_STRING_CACHE] __attribute__((aligned(128)));
} __attribute__((aligned(128))) fs_ring_t;

/* Producer counter indexes into fs_ring_t.counters (header offset 896 + 8*i). */
enum {
    FS_CNT_DROPPED_FULL = 0,
    FS_CNT_DROPPED_ABANDONED = 1,
    FS_CNT_DROPPED_CONTENDED = 2,
    FS_CNT_INVALID_CALLS = 3,
    FS_CNT_STRINGS_OVERFLOW = 4,
    FS_CNT_COMMS_OVERFLOW = 5,
};

/* Creates <dir>/flowscope-<pid>-<k>.ring (mkdir -p dir), maps it, initialises
 * the slot sequences and the header, and publishes layout_version last.
 * lane_count: a power of two in [1, 64]; lane_capacity: a power of two >= 2.
 * Returns a malloc'd ring, or NULL with a message in err. */
fs_ring_t* fs_ring_create(const char* dir, uint32_t lane_count, uint64_t lane_capacity,
                          const fs_ring_params_t* params, char* err, size_t errlen) FS_HIDDEN;

/* Flushes the lanes' pending drops, then producer_state = 2 after
 * closed_monotonic_ns. The mapping stays. */
void fs_ring_close(fs_ring_t* ring, uint64_t now_ns) FS_HIDDEN;

/* munmap + free. Only when no thread can still write to it. */
void fs_ring_unmap(fs_ring_t* ring) FS_HIDDEN;

/* Header field helpers (not hot). */
void fs_ring_set_abi(fs_ring_t* ring, uint32_t abi_version, int32_t nccl_version) FS_HIDDEN;
uint32_t fs_ring_producer_state(const fs_ring_t* ring) FS_HIDDEN;

/* String table: index of `s` (1..255), 0 for NULL/empty or a full table.
 * Hot path is one probe of a pointer-keyed cache. */
uint8_t fs_ring_intern_slow(fs_ring_t* ring, const char* s) FS_HIDDEN;

static inline uint32_t fs_ring_string_hash(uintptr_t p) {
    uint64_t h = (uint64_t)p * 0x9E3779B97F4A7C15ULL;
    return (uint32_t)(h >> 40);
}

static inline uint8_t fs_ring_intern(fs_ring_t* ring, const char* s) {
    if (!s) return 0;
    uintptr_t key = (uintptr_t)s;
    uint32_t h = fs_ring_string_hash(key);
    for (uint32_t i = 0; i < FS_RING_STRING_PROBES; i++) {
        uint64_t e =
            __atomic_load_n(&ring->string_cache[(h + i) & (FS_RING_STRING_CACHE - 1)], __ATOMIC_ACQUIRE);
        if (e == 0) break;
        if ((e >> 8) == (uint64_t)key) return (uint8_t)e;
    }
    return fs_ring_intern_slow(ring, s);
}

/* The CUDA device of a communicator's rank (fs_gpu.h fills it): ordinal, -1
 * unknown; PCI bus id as CUDA gives it, "" unknown; UUID as cuDeviceGetUuid
 * gives it, all zero unknown. */
typedef struct {
    int32_t cuda_dev;
    char pci_bus_id[FS_COMM_PCI_BUS_ID_LENGTH];
    uint8_t uuid[FS_GPU_UUID_SIZE];
} fs_gpu_t;

/* Communicator table: claims an entry (CAS on comm_count), writes its fields
 * (name truncated to 55 bytes; gpu NULL: device unknown) and publishes state 1
 * last. Returns its index, or FS_COMM_INDEX_UNKNOWN when full. */
uint32_t fs_ring_comm_add(fs_ring_t* ring, uint64_t comm_hash, int rank, int nranks, int nnodes,
                          const char* name, const fs_gpu_t* gpu, uint64_t now_ns) FS_HIDDEN;
void fs_ring_comm_finalize(fs_ring_t* ring, uint32_t index, uint64_t now_ns) FS_HIDDEN;

static inline void fs_ring_count(fs_ring_t* ring, int counter) {
    __atomic_fetch_add(&ring->counters[counter], 1, __ATOMIC_RELAXED);
}

/* Adds the lane's pending drops to the header's dropped_full (any thread). */
void fs_ring_flush_lane(fs_ring_t* ring, uint32_t lane) FS_HIDDEN;

/* Every lane's pending drops into the header: exact counts (fs_ring_close does it). */
void fs_ring_flush_drops(fs_ring_t* ring) FS_HIDDEN;

/* One event dropped on a full lane: counted on the lane's own line, added to
 * the header every FS_RING_DROP_BATCH (and when the lane takes a record again). */
static inline void fs_ring_drop_full(fs_ring_t* ring, uint32_t lane) {
    uint64_t n = __atomic_add_fetch(&ring->lane_local[lane].dropped_full, 1, __ATOMIC_RELAXED);
    if (__builtin_expect(n >= FS_RING_DROP_BATCH, 0)) fs_ring_flush_lane(ring, lane);
}

/* Lanes: the first ownable_lanes are each written by one thread at a time
 * (claim without a CAS), the other max(1, lane_count/4) are shared by every
 * thread that found no lane to own (claim by CAS on the tail). RING.md,
 * "Lanes owned by one thread". */
static inline uint32_t fs_ring_shared_lane(const fs_ring_t* ring, uint32_t thread) {
    return ring->ownable_lanes + (thread & ring->shared_select);
}

/* The lane a thread writes from now on: an ownable lane it now holds
 * (*owned = 1; CAS 0 -> 1 on the lane's owner word, first at thread %
 * ownable_lanes), else its shared lane (*owned = 0). allow_own = 0: shared only
 * (a forked child, whose copies of the owner words say nothing true). */
uint32_t fs_ring_lane_take(fs_ring_t* ring, uint32_t thread, int allow_own, uint32_t* owned) FS_HIDDEN;

/* Gives an owned lane back (its thread exits or moves to a newer ring). The
 * owner's last tail store happens before it (release); the next owner's CAS
 * acquires it. */
static inline void fs_ring_lane_give_back(uint32_t* owner_word) {
    __atomic_store_n(owner_word, 0, __ATOMIC_RELEASE);
}

/* The lane's tail, in the header's lane table. */
static inline uint64_t* fs_ring_lane_tail(const fs_ring_t* ring, uint32_t lane) {
    return (uint64_t*)(ring->base + FS_LANE_TABLE_OFFSET + ((size_t)lane << FS_LANE_ENTRY_SHIFT) +
                       FS_LANE_TAIL_OFFSET);
}

/* Slot 0 of a lane. */
static inline fs_record_t* fs_ring_lane_slots(const fs_ring_t* ring, uint32_t lane) {
    return ring->slots + ((size_t)lane << ring->lane_shift);
}

/* Asks for the slot a few records ahead, for writing: the claim of a
 * later record then finds its line (and its page's translation) at hand
 * instead of waiting for them. Every record is a fresh line, last touched by
 * the consumer a lap ago. */
#ifndef FS_RING_PREFETCH_AHEAD /* 0: none (a build to compare with: make                                     \
                                  EXTRA_CFLAGS=-DFS_RING_PREFETCH_AHEAD=0) */
#define FS_RING_PREFETCH_AHEAD 8u
#endif
static inline void fs_ring_prefetch_for_write(const void* p) {
#if FS_RING_PREFETCH_AHEAD == 0
    (void)p;
#elif defined(__x86_64__)
    __asm__ volatile("prefetchw %0" : : "m"(*(const char*)p));
#else
    __builtin_prefetch(p, 1, 3);
#endif
}

/* Claims the next position of `lane` (bounded: FS_RING_CLAIM_RETRIES).
 * Returns the slot and *pos (the position in the lane), or NULL after
 * counting dropped_full (batched per lane) / dropped_contended. */
static inline fs_record_t* fs_ring_try_claim(fs_ring_t* ring, uint32_t lane, uint64_t* pos_out) {
    uint64_t* tail = fs_ring_lane_tail(ring, lane);
    fs_record_t* slots = fs_ring_lane_slots(ring, lane);
    uint64_t mask = ring->lane_mask;
    uint64_t pos = __atomic_load_n(tail, __ATOMIC_RELAXED);
    for (int i = 0; i < FS_RING_CLAIM_RETRIES; i++) {
        fs_record_t* slot = &slots[pos & mask];
        uint64_t seq = __atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE);
        int64_t dif = (int64_t)(seq - pos);
        if (FS_RING_LIKELY(dif == 0)) {
            if (FS_RING_LIKELY(__atomic_compare_exchange_n(tail, &pos, pos + 1, 0, __ATOMIC_RELAXED,
                                                           __ATOMIC_RELAXED))) {
                /* the lane has room again: the drops of its full spell reach the header now */
                if (__builtin_expect(
                        __atomic_load_n(&ring->lane_local[lane].dropped_full, __ATOMIC_RELAXED) != 0, 0))
                    fs_ring_flush_lane(ring, lane);
                *pos_out = pos;
                fs_ring_prefetch_for_write(&slots[(pos + FS_RING_PREFETCH_AHEAD) & mask]);
                return slot;
            }
            /* pos now holds the tail another producer of this lane moved to */
        } else if (dif < 0) {
            fs_ring_drop_full(ring, lane);
            return NULL;
        } else {
            pos = __atomic_load_n(tail, __ATOMIC_RELAXED);
        }
    }
    fs_ring_count(ring, FS_CNT_DROPPED_CONTENDED);
    return NULL;
}

/* Claims the next position of a lane this thread owns: it is the only
 * writer of the lane's tail, so the claim is a load and a store (release: the
 * consumer reads tail to tell a claimed slot from an empty one). Same outcomes
 * as fs_ring_try_claim. A sequence ahead of the tail cannot come from another
 * producer here (garbage, or a slot the consumer repaired): counted as
 * contended, as the CAS claim would after its retries. */
static inline fs_record_t* fs_ring_try_claim_owned(fs_ring_t* ring, uint32_t lane, uint64_t* pos_out) {
    uint64_t* tail = fs_ring_lane_tail(ring, lane);
    fs_record_t* slots = fs_ring_lane_slots(ring, lane);
    uint64_t mask = ring->lane_mask;
    uint64_t pos = __atomic_load_n(tail, __ATOMIC_RELAXED);
    fs_record_t* slot = &slots[pos & mask];
    uint64_t seq = __atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE);
    int64_t dif = (int64_t)(seq - pos);
    if (FS_RING_LIKELY(dif == 0)) {
        __atomic_store_n(tail, pos + 1, __ATOMIC_RELEASE);
        if (__builtin_expect(__atomic_load_n(&ring->lane_local[lane].dropped_full, __ATOMIC_RELAXED) != 0, 0))
            fs_ring_flush_lane(ring, lane);
        *pos_out = pos;
        fs_ring_prefetch_for_write(&slots[(pos + FS_RING_PREFETCH_AHEAD) & mask]);
        return slot;
    }
    if (dif < 0)
        fs_ring_drop_full(ring, lane);
    else
        fs_ring_count(ring, FS_CNT_DROPPED_CONTENDED);
    return NULL;
}

/* Writes bytes 8..63 (w1..w7, checksum computed here) into a claimed slot. */
static inline void fs_ring_write(fs_record_t* slot, uint64_t pos, uint64_t w1, uint64_t w2, uint64_t w3,
                                 uint64_t w4, uint64_t w5, uint64_t w6, uint64_t w7) {
    uint64_t ck = fs_record_checksum(pos, w1, w2, w3, w4, w5, w6, w7);
    uint64_t* w = (uint64_t*)slot;
    w[1] = (w1 & 0xFFFFFFFFULL) | (ck << 32);
    w[2] = w2;
    w[3] = w3;
    w[4] = w4;
    w[5] = w5;
    w[6] = w6;
    w[7] = w7;
}

/* Publishes a claimed slot: CAS(seq, pos -> pos+1, release). A failure means
 * the consumer reclaimed the slot meanwhile: dropped_abandoned. */
static inline void fs_ring_publish(fs_ring_t* ring, fs_record_t* slot, uint64_t pos) {
    uint64_t expected = pos;
    if (!__atomic_compare_exchange_n(&slot->seq, &expected, pos + 1, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
        fs_ring_count(ring, FS_CNT_DROPPED_ABANDONED);
}

/* Publishes a claimed slot of a lane this thread owns: a release store of
 * pos+1, no CAS (no locked instruction on the owned path at all, so the store
 * buffer absorbs the slot's line transfer). If the consumer reclaimed the slot
 * meanwhile (the owner stalled past the stale timeout), the store overwrites
 * the consumer's mark pos+capacity with pos+1: the consumer has passed the
 * slot already and counted it as skipped; a lap later it finds pos+1 where it
 * expects pos+capacity and frees the slot (RING.md, "Late publication"). */
static inline void fs_ring_publish_owned(fs_record_t* slot, uint64_t pos) {
    __atomic_store_n(&slot->seq, pos + 1, __ATOMIC_RELEASE);
}

/* w1 of a record: kind | op << 8 | thread << 16 (checksum added by fs_ring_write). */
static inline uint64_t fs_record_w1(uint32_t kind, uint32_t op, uint32_t thread) {
    return (uint64_t)(kind & 0xFFu) | (uint64_t)(op & 0xFFu) << 8 | (uint64_t)(thread & 0xFFFFu) << 16;
}

#endif /* FS_RING_H */
