/*
 * fs_claim_bench.c - what the claim protocol alone costs per record: claim,
 * write and publish in a loop on one lane, one thread, no consumer, the lane's
 * pages touched beforehand. The CAS claim of a shared lane against the
 * load/store claim of an owned lane (RING.md), interleaved repetitions.
 *
 *   build/fs_claim_bench [--records N] [--reps R]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs_clock.h"
#include "fs_ring.h"

static double ns_per_record(fs_ring_t* r, int owned, uint64_t n) {
    uint64_t t0 = fs_clock_monotonic_ns();
    for (uint64_t i = 0; i < n; i++) {
        uint64_t pos;
        fs_record_t* s = owned ? fs_ring_try_claim_owned(r, 0, &pos) : fs_ring_try_claim(r, 0, &pos);
        if (!s) return -1;
        fs_ring_write(s, pos, fs_record_w1(FS_KIND_PROXY_STEP, FS_OP_START, 0), i, 3, 4, 5, 6, 7);
        if (owned)
            fs_ring_publish_owned(s, pos);
        else
            fs_ring_publish(r, s, pos);
    }
    return (double)(fs_clock_monotonic_ns() - t0) / (double)n;
}

static int cmp_double(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char** argv) {
    uint64_t n = 1u << 20;
    int reps = 9;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--records"))
            n = strtoull(argv[i + 1], NULL, 0);
        else if (!strcmp(argv[i], "--reps"))
            reps = atoi(argv[i + 1]);
    }
    if (n == 0 || reps < 1 || reps > 1000) {
        fprintf(stderr, "usage: fs_claim_bench [--records N] [--reps R (1..1000)]\n");
        return 2;
    }
    uint64_t lane = 2;
    while (lane < n) lane <<= 1;
    fs_ring_params_t params = {5, 0, 0, FS_CLOCK_SOURCE_CLOCK_GETTIME};
    char err[256];
    double* res[2] = {calloc((size_t)reps, sizeof(double)), calloc((size_t)reps, sizeof(double))};
    for (int rep = 0; rep < reps; rep++) {
        for (int k = 0; k < 2; k++) {
            int owned = (rep & 1) ? 1 - k : k; /* alternate which goes first */
            fs_ring_t* r = fs_ring_create("/dev/shm/fs-claim-bench", 1, lane, &params, err, sizeof err);
            if (!r) {
                fprintf(stderr, "fs_claim_bench: %s\n", err);
                return 1;
            }
            for (uint64_t i = 0; i < lane; i++) r->slots[i].seq = i; /* faults every page in, untimed */
            res[owned][rep] = ns_per_record(r, owned, n);
            unlink(r->path);
            fs_ring_unmap(r);
            if (res[owned][rep] < 0) {
                fprintf(stderr, "fs_claim_bench: a claim failed\n");
                return 1;
            }
        }
    }
    rmdir("/dev/shm/fs-claim-bench");
    qsort(res[0], (size_t)reps, sizeof(double), cmp_double);
    qsort(res[1], (size_t)reps, sizeof(double), cmp_double);
    printf("claim+write+publish, one thread, one lane, %" PRIu64
           " records x %d reps (median, min..max ns/record)\n",
           n, reps);
    printf("  shared lane (CAS claim):      %.1f  %.1f..%.1f\n", res[0][reps / 2], res[0][0],
           res[0][reps - 1]);
    printf("  owned lane (load/store claim, store publish): %.1f  %.1f..%.1f\n", res[1][reps / 2], res[1][0],
           res[1][reps - 1]);
    printf("BENCH claim_cas_ns=%.1f claim_owned_ns=%.1f\n", res[0][reps / 2], res[1][reps / 2]);
    free(res[0]);
    free(res[1]);
    return 0;
}
