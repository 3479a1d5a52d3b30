/* fs_clock.c - TSC-scaled CLOCK_MONOTONIC with clock_gettime fallback. */
#include "fs_clock.h"

#include <time.h>

#include "fs_ring_layout.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

fs_clock_state_t fs_clock_state;

#define FS_CLOCK_FIRST_INTERVAL_NS 8000000ULL   /* 8 ms */
#define FS_CLOCK_MAX_INTERVAL_NS   500000000ULL /* 0.5 s */

uint64_t fs_clock_monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t fs_clock_realtime_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int fs_clock_has_invariant_tsc(void) {
#if defined(__x86_64__)
    unsigned a, b, c, d;
    if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u) return 0;
    if (!__get_cpuid(0x80000007u, &a, &b, &c, &d)) return 0;
    return (d >> 8) & 1u;
#else
    return 0;
#endif
}

#if defined(__x86_64__)
/* A (tsc, ns) pair: the narrowest of 5 rdtsc/clock_gettime/rdtsc brackets,
 * tsc taken at the bracket's midpoint. */
static void fs_clock_pair(uint64_t* tsc, uint64_t* ns) {
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t t0 = __rdtsc();
        uint64_t n = fs_clock_monotonic_ns();
        uint64_t t1 = __rdtsc();
        if (t1 - t0 < best) {
            best = t1 - t0;
            *tsc = t0 + (t1 - t0) / 2;
            *ns = n;
        }
    }
}

static uint64_t fs_clock_mult(uint64_t dns, uint64_t dtsc) {
    if (dtsc == 0) return 1ULL << 32;
    return (uint64_t)(((unsigned __int128)dns << 32) / dtsc);
}

static uint64_t fs_clock_ticks(uint64_t ns, uint64_t mult) {
    return (uint64_t)(((unsigned __int128)ns << 32) / (mult ? mult : 1));
}
#endif

uint32_t fs_clock_init(int prefer_tsc) {
    uint32_t src = __atomic_load_n(&fs_clock_state.source, __ATOMIC_ACQUIRE);
    if (src) return src;
#if defined(__x86_64__)
    if (prefer_tsc && fs_clock_has_invariant_tsc()) {
        uint64_t t0, n0, t1, n1;
        fs_clock_pair(&t0, &n0);
        do { /* ~2 ms first estimate; refined by the doubling re-anchors */
            fs_clock_pair(&t1, &n1);
        } while (n1 - n0 < 2000000ULL);
        fs_clock_state.base_tsc = t0;
        fs_clock_state.base_ns = n0;
        fs_clock_slot_t* s = &fs_clock_state.slots[0];
        s->mult = fs_clock_mult(n1 - n0, t1 - t0);
        s->tsc = t1;
        s->ns = n1;
        s->interval = fs_clock_ticks(FS_CLOCK_FIRST_INTERVAL_NS, s->mult);
        __atomic_store_n(&fs_clock_state.current, 0u, __ATOMIC_RELEASE);
        __atomic_store_n(&fs_clock_state.source, FS_CLOCK_SOURCE_TSC, __ATOMIC_RELEASE);
        return FS_CLOCK_SOURCE_TSC;
    }
#else
    (void)prefer_tsc;
#endif
    __atomic_store_n(&fs_clock_state.source, FS_CLOCK_SOURCE_CLOCK_GETTIME, __ATOMIC_RELEASE);
    return FS_CLOCK_SOURCE_CLOCK_GETTIME;
}

uint64_t fs_clock_reanchor(uint64_t tsc) {
#if defined(__x86_64__)
    uint32_t g = __atomic_load_n(&fs_clock_state.current, __ATOMIC_ACQUIRE);
    const fs_clock_slot_t* old = &fs_clock_state.slots[g & 3u];
    uint32_t expected = 0;
    /* test before the CAS: the losers only read the line while the winner works */
    if (__atomic_load_n(&fs_clock_state.busy, __ATOMIC_RELAXED) != 0 ||
        !__atomic_compare_exchange_n(&fs_clock_state.busy, &expected, 1u, 0, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        return fs_clock_convert(old, tsc); /* another thread re-anchors, into slot g+1: g stays whole */
    if (__atomic_load_n(&fs_clock_state.current, __ATOMIC_ACQUIRE) != g) {
        /* someone re-anchored between our read and our CAS */
        __atomic_store_n(&fs_clock_state.busy, 0u, __ATOMIC_RELEASE);
        return fs_clock_convert(
            &fs_clock_state.slots[__atomic_load_n(&fs_clock_state.current, __ATOMIC_ACQUIRE) & 3u], tsc);
    }
    uint64_t t, n;
    fs_clock_pair(&t, &n);
    uint64_t mult = fs_clock_mult(n - fs_clock_state.base_ns, t - fs_clock_state.base_tsc);
    uint64_t interval_ns = (uint64_t)(((unsigned __int128)__atomic_load_n(&old->interval, __ATOMIC_RELAXED) *
                                       __atomic_load_n(&old->mult, __ATOMIC_RELAXED)) >>
                                      32) *
                           2;
    if (interval_ns > FS_CLOCK_MAX_INTERVAL_NS) interval_ns = FS_CLOCK_MAX_INTERVAL_NS;
    /* slot g+1 was last published as generation g-3: a reader still on it sees
     * the generation moved by >= 3 and does not use what it read */
    fs_clock_slot_t* s = &fs_clock_state.slots[(g + 1u) & 3u];
    /* release: a reader that reads any of these also sees the generation
     * published before (the busy flag orders re-anchors one after the other) */
    __atomic_store_n(&s->tsc, t, __ATOMIC_RELEASE);
    __atomic_store_n(&s->ns, n, __ATOMIC_RELEASE);
    __atomic_store_n(&s->mult, mult, __ATOMIC_RELEASE);
    __atomic_store_n(&s->interval, fs_clock_ticks(interval_ns, mult), __ATOMIC_RELEASE);
    __atomic_store_n(&fs_clock_state.current, g + 1u, __ATOMIC_RELEASE);
    __atomic_store_n(&fs_clock_state.busy, 0u, __ATOMIC_RELEASE);
    return fs_clock_convert(s, tsc);
#else
    (void)tsc;
    return fs_clock_monotonic_ns();
#endif
}

double fs_clock_ns_per_tick(void) {
    if (__atomic_load_n(&fs_clock_state.source, __ATOMIC_ACQUIRE) != FS_CLOCK_SOURCE_TSC) return 0.0;
    uint32_t i = __atomic_load_n(&fs_clock_state.current, __ATOMIC_ACQUIRE) & 3u;
    return (double)__atomic_load_n(&fs_clock_state.slots[i].mult, __ATOMIC_RELAXED) / 4294967296.0;
}
