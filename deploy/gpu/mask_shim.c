/*
 * mask_shim.c - benchmark only (deploy/gpu/overhead-paired.sh): a profiler
 * plugin that loads the real one (FS_SHIM_PLUGIN), forwards its ncclProfiler_v5
 * table unchanged, and lets the benchmark switch NCCL's event mask off and back
 * on between two synchronised batches (fs_shim_pause), so that one process
 * times "the plugin recording" against "no profiler event" batch by batch.
 *
 * Why: over NVLink at 1-4 MiB an operation is launch-bound (25-40 us, the GPU
 * waits for the host) and the same configuration varies by 20-60 % from one
 * process to the next on the GPU machine (a KVM guest: its vCPUs' speed is the
 * host's), so fresh processes cannot resolve a 1 % effect there. Paired batches
 * in one process share the process, its buffers, NCCL's choices and the host's
 * moment. With the mask at 0 NCCL makes no profiler call at all (each call site
 * tests its bit first); with NCCL_PROFILER_PLUGIN=none it tests a NULL table
 * instead: the same single branch. overhead-paired.sh also runs `none` in its
 * own processes, to show that the paused state costs what `none` costs.
 *
 * NCCL keeps one process-wide mask and hands its address to every init; the
 * shim keeps that address. Pausing is only safe with no NCCL operation in
 * flight (NCCL copies the mask into each task when it is enqueued): the
 * benchmark synchronises and barriers around every switch.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "fs_nccl_abi.h"

static const fs_nccl_profiler_v5_t* real;
static int* nccl_mask;
static int saved_mask;
static int paused;
static pthread_mutex_t shim_lock = PTHREAD_MUTEX_INITIALIZER;

static fs_nccl_result_t shim_init(void** context, uint64_t commId, int* eActivationMask, const char* commName,
                                  int nNodes, int nranks, int rank, fs_nccl_logger_t logfn) {
    pthread_mutex_lock(&shim_lock);
    if (!real) {
        const char* path = getenv("FS_SHIM_PLUGIN");
        void* lib = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
        real = lib ? (const fs_nccl_profiler_v5_t*)dlsym(lib, "ncclProfiler_v5") : NULL;
        if (!real) {
            fprintf(stderr, "mask_shim: cannot load ncclProfiler_v5 from FS_SHIM_PLUGIN=%s: %s\n",
                    path ? path : "(unset)", dlerror());
            pthread_mutex_unlock(&shim_lock);
            if (context) *context = NULL;
            if (eActivationMask) *eActivationMask = 0;
            return FS_NCCL_SYSTEM_ERROR;
        }
    }
    fs_nccl_result_t r = real->init(context, commId, eActivationMask, commName, nNodes, nranks, rank, logfn);
    nccl_mask = eActivationMask;
    if (paused && eActivationMask) {
        saved_mask = __atomic_load_n(eActivationMask, __ATOMIC_RELAXED);
        __atomic_store_n(eActivationMask, 0, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&shim_lock);
    return r;
}

static fs_nccl_result_t shim_start(void* context, void** eHandle, fs_nccl_descr_v5_t* eDescr) {
    return real->startEvent(context, eHandle, eDescr);
}

static fs_nccl_result_t shim_stop(void* eHandle) { return real->stopEvent(eHandle); }

static fs_nccl_result_t shim_state(void* eHandle, fs_nccl_state_t s, fs_nccl_state_args_t* a) {
    return real->recordEventState(eHandle, s, a);
}

static fs_nccl_result_t shim_finalize(void* context) { return real->finalize(context); }

__attribute__((visibility("default"))) const fs_nccl_profiler_v5_t ncclProfiler_v5 = {
    "flowscope-mask-shim", shim_init, shim_start, shim_stop, shim_state, shim_finalize,
};

/* 1: NCCL's mask to 0 (saved); 0: the saved mask back. Returns the mask now in force, -1 before any init. */
__attribute__((visibility("default"))) int fs_shim_pause(int on) {
    pthread_mutex_lock(&shim_lock);
    int now = -1;
    if (nccl_mask) {
        if (on && !paused) {
            saved_mask = __atomic_load_n(nccl_mask, __ATOMIC_RELAXED);
            __atomic_store_n(nccl_mask, 0, __ATOMIC_RELAXED);
        } else if (!on && paused) {
            __atomic_store_n(nccl_mask, saved_mask, __ATOMIC_RELAXED);
        }
        now = __atomic_load_n(nccl_mask, __ATOMIC_RELAXED);
    }
    paused = on != 0;
    pthread_mutex_unlock(&shim_lock);
    return now;
}
