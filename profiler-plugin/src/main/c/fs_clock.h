/*
 * fs_clock.h - host timestamps in CLOCK_MONOTONIC nanoseconds without a system
 * call per event.
 *
 * On x86-64 with an invariant TSC the hot path is `rdtsc` plus one 64x64->128
 * multiply against a calibration (anchor tsc, anchor ns, ns-per-tick << 32).
 * Calibrations live in 4 slots; the current one is named by a generation
 * (slot = generation % 4). When
 * more than `interval` ticks passed since the anchor, one thread wins a CAS,
 * pairs rdtsc with clock_gettime(CLOCK_MONOTONIC), computes the frequency over
 * the long baseline since the first anchor, writes the next slot and publishes
 * its index (release). Nobody waits: losers keep extrapolating the old slot.
 * The interval starts at 8 ms and doubles up to 0.5 s, so the first estimate is
 * refined quickly and the error stays bounded by a 0.5 s extrapolation.
 *
 * Elsewhere (or FLOWSCOPE_CLOCK=monotonic) every read is clock_gettime.
 */
#ifndef FS_CLOCK_H
#define FS_CLOCK_H

#include <stdint.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#ifndef FS_HIDDEN
#define FS_HIDDEN __attribute__((visibility("hidden")))
#endif
#define FS_LIKELY(x)   __builtin_expect(!!(x), 1)
#define FS_UNLIKELY(x) __builtin_expect(!!(x), 0)

typedef struct {
    uint64_t tsc;      /* anchor TSC value */
    uint64_t ns;       /* CLOCK_MONOTONIC ns at the anchor */
    uint64_t mult;     /* ns per tick, 32.32 fixed point */
    uint64_t interval; /* ticks after which a re-anchor is attempted */
} __attribute__((aligned(64))) fs_clock_slot_t;

typedef struct {
    uint32_t source;   /* 0 until fs_clock_init; then FS_CLOCK_SOURCE_* */
    uint32_t current;  /* generation of the published calibration, in slot current & 3 */
    uint64_t base_tsc; /* first anchor: the long baseline starts here */
    uint64_t base_ns;
    /* 1 while one thread re-anchors: written by every thread that finds the
     * calibration expired, so not on the line every read reads */
    uint32_t busy __attribute__((aligned(128)));
    fs_clock_slot_t slots[4] __attribute__((aligned(128)));
} __attribute__((aligned(128))) fs_clock_state_t;

extern fs_clock_state_t fs_clock_state FS_HIDDEN;

/* Selects and calibrates the clock once per process (idempotent, not hot).
 * prefer_tsc = 0 forces clock_gettime. Returns the clock source. */
uint32_t fs_clock_init(int prefer_tsc) FS_HIDDEN;

/* CLOCK_MONOTONIC / CLOCK_REALTIME in ns through clock_gettime. */
uint64_t fs_clock_monotonic_ns(void) FS_HIDDEN;
uint64_t fs_clock_realtime_ns(void) FS_HIDDEN;

/* Whether this CPU has an invariant TSC (cpuid 0x80000007 EDX bit 8). */
int fs_clock_has_invariant_tsc(void) FS_HIDDEN;

/* Slow path of fs_clock_now_ns: re-anchor (one winner) and convert `tsc`. */
uint64_t fs_clock_reanchor(uint64_t tsc) FS_HIDDEN;

/* ns per TSC tick of the current calibration (0 without TSC). */
double fs_clock_ns_per_tick(void) FS_HIDDEN;

static inline uint64_t fs_clock_convert(const fs_clock_slot_t* s, uint64_t tsc) {
    int64_t d = (int64_t)(tsc - __atomic_load_n(&s->tsc, __ATOMIC_RELAXED));
    uint64_t mult = __atomic_load_n(&s->mult, __ATOMIC_RELAXED);
    return __atomic_load_n(&s->ns, __ATOMIC_RELAXED) +
           (uint64_t)(int64_t)(((__int128)d * (__int128)mult) >> 32);
}

/* Now, in CLOCK_MONOTONIC ns. Hot path: no lock, no system call. A reader that
 * finds the generation moved on by 3 or more while it read the slot may have
 * read it while a re-anchor rewrote it (the writer reuses a slot 4 generations
 * later): it takes clock_gettime instead. */
static inline uint64_t fs_clock_now_ns(void) {
#if defined(__x86_64__)
    if (FS_LIKELY(__atomic_load_n(&fs_clock_state.source, __ATOMIC_ACQUIRE) == 1u)) {
        uint64_t t = __rdtsc();
        uint32_t g = __atomic_load_n(&fs_clock_state.current, __ATOMIC_ACQUIRE);
        const fs_clock_slot_t* s = &fs_clock_state.slots[g & 3u];
        /* acquire: the generation check below reads after them, and one that
         * reads a re-anchor's store sees the generation that store follows */
        uint64_t tsc0 = __atomic_load_n(&s->tsc, __ATOMIC_ACQUIRE);
        uint64_t ns0 = __atomic_load_n(&s->ns, __ATOMIC_ACQUIRE);
        uint64_t mult = __atomic_load_n(&s->mult, __ATOMIC_ACQUIRE);
        uint64_t interval = __atomic_load_n(&s->interval, __ATOMIC_ACQUIRE);
        if (FS_UNLIKELY(__atomic_load_n(&fs_clock_state.current, __ATOMIC_RELAXED) - g >= 3u))
            return fs_clock_monotonic_ns();
        int64_t d = (int64_t)(t - tsc0);
        if (FS_UNLIKELY(d > (int64_t)interval)) return fs_clock_reanchor(t);
        return ns0 + (uint64_t)(int64_t)(((__int128)d * (__int128)mult) >> 32);
    }
#endif
    return fs_clock_monotonic_ns();
}

#endif /* FS_CLOCK_H */
