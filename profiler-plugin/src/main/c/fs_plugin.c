/*
 * fs_plugin.c - the NCCL ABI glue, the only file with exported symbols:
 * ncclProfiler_v4, ncclProfiler_v5 and ncclProfiler_v6 ("flowscope").
 *
 * Each version has its own init so the ring header records which ABI NCCL
 * picked. init runs once per communicator, possibly concurrently: it reads the
 * CUDA device of its thread (fs_gpu.h, before any lock), takes a plain mutex
 * (never a trylock, so no communicator is skipped), creates the ring once per
 * process, claims a communicator entry (with that device) and always writes
 * *context and *eActivationMask. Every other callback handles NULL and returns
 * ncclSuccess. The last finalize closes the ring; the mapping stays until the
 * library is unloaded (destructor); a later init opens a fresh ring file.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fs_clock.h"
#include "fs_config.h"
#include "fs_events.h"
#include "fs_gpu.h"
#include "fs_nccl_abi.h"
#include "fs_ring.h"
#include "fs_sampling.h"

#define FS_EXPORT    __attribute__((visibility("default")))
#define FS_MAX_RINGS 64

static pthread_mutex_t fs_lock = PTHREAD_MUTEX_INITIALIZER;
static int fs_config_loaded;
static fs_config_t fs_config;
static uint32_t fs_record_mask; /* the kinds recorded, decided at the first init */
static int fs_active_comms;
static fs_comm_ctx_t* fs_all_ctx;         /* every context made, freed on unload */
static fs_ring_t* fs_rings[FS_MAX_RINGS]; /* every ring mapped, unmapped on unload */
static int fs_nrings;
static int fs_nccl_version_known;
static int32_t fs_nccl_version;

static int fs_find_libnccl(struct dl_phdr_info* info, size_t size, void* path) {
    (void)size;
    if (info->dlpi_name && strstr(info->dlpi_name, "/libnccl.so")) {
        snprintf(path, PATH_MAX, "%s", info->dlpi_name);
        return 1;
    }
    return 0;
}

/* ncclGetVersion from the global namespace, else from the libnccl.so already
 * loaded locally (torch loads it RTLD_LOCAL, so RTLD_DEFAULT does not see it).
 * RTLD_NOLOAD: never loads a library that is not there. */
static int32_t fs_detect_nccl_version(void) {
    if (!fs_nccl_version_known) {
        fs_nccl_version_known = 1;
        int (*get)(int*) = (int (*)(int*))dlsym(RTLD_DEFAULT, "ncclGetVersion");
        void* lib = NULL;
        if (!get) {
            char path[PATH_MAX] = "";
            dl_iterate_phdr(fs_find_libnccl, path);
            if (path[0] && (lib = dlopen(path, RTLD_NOLOAD | RTLD_LAZY)))
                get = (int (*)(int*))dlsym(lib, "ncclGetVersion");
        }
        int v = 0;
        if (get && get(&v) == 0) fs_nccl_version = v;
        if (lib) dlclose(lib);
    }
    return fs_nccl_version;
}

static fs_nccl_result_t fs_init(void** context, uint64_t commHash, int* eActivationMask, const char* commName,
                                int nNodes, int nranks, int rank, fs_nccl_logger_t logfn, uint32_t abi,
                                uint32_t abi_types) {
    if (context) *context = NULL;
    /* NCCL calls init on the thread that initialises the communicator, with its
     * device current. Queried outside fs_lock: no foreign library call (and no
     * dlopen, which takes the loader's lock) while we hold it. */
    fs_gpu_t gpu;
    fs_gpu_of_calling_thread(&gpu);
    pthread_mutex_lock(&fs_lock);
    if (!fs_config_loaded) {
        fs_config_load(&fs_config, logfn);
        fs_config_loaded = 1;
        if (!fs_config.disabled)
            fs_record_mask = fs_sampling_configure(fs_config.kernel_sampling, abi,
                                                   fs_config.event_mask & abi_types, eActivationMask, logfn);
    }
    if (fs_config.disabled) {
        if (eActivationMask) __atomic_store_n(eActivationMask, 0, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&fs_lock);
        return FS_NCCL_SUCCESS;
    }
    if (!context) {
        fs_log_warn(logfn, "init called with a NULL context pointer; communicator %llx not profiled",
                    (unsigned long long)commHash);
        pthread_mutex_unlock(&fs_lock);
        return FS_NCCL_INVALID_ARGUMENT;
    }
    int32_t nccl_version = fs_detect_nccl_version();
    fs_ring_t* r = fs_events_ring;
    if (!r) {
        fs_ring_params_t params = {
            .abi_version = abi,
            .nccl_version = nccl_version,
            .event_mask = fs_config.event_mask,
            .clock_source = fs_clock_init(fs_config.prefer_tsc),
        };
        char err[768];
        r = fs_ring_create(fs_config.ring_dir, fs_config.ring_lanes,
                           fs_config.ring_slots / fs_config.ring_lanes, &params, err, sizeof err);
        if (!r) {
            fs_log_warn(logfn, "%s; this process is not profiled", err);
            if (eActivationMask) __atomic_store_n(eActivationMask, 0, __ATOMIC_RELAXED);
            pthread_mutex_unlock(&fs_lock);
            return FS_NCCL_SYSTEM_ERROR;
        }
        if (fs_nrings < FS_MAX_RINGS) fs_rings[fs_nrings++] = r; /* else: never unmapped */
        __atomic_store_n(&fs_events_ring, r, __ATOMIC_RELEASE);
    }
    fs_ring_set_abi(r, abi, nccl_version);
    fs_comm_ctx_t* c = NULL; /* aligned: its hot first line shares nothing */
    if (posix_memalign((void**)&c, _Alignof(fs_comm_ctx_t), sizeof *c) != 0) c = NULL;
    if (c) memset(c, 0, sizeof *c);
    if (!c) {
        fs_log_warn(logfn, "out of memory; communicator %llx not profiled", (unsigned long long)commHash);
        pthread_mutex_unlock(&fs_lock);
        return FS_NCCL_SYSTEM_ERROR;
    }
    c->comm_index = fs_ring_comm_add(r, commHash, rank, nranks, nNodes, commName, &gpu, fs_clock_now_ns());
    c->comm_bits = (uint64_t)c->comm_index << FS_ID_COMM_SHIFT;
    c->abi_version = abi;
    c->ring = r;
    c->next = fs_all_ctx;
    __atomic_store_n(&c->magic, FS_CTX_LIVE, __ATOMIC_RELEASE);
    fs_all_ctx = c;
    fs_active_comms++;
    __atomic_store_n(&fs_events_mask, fs_record_mask, __ATOMIC_RELAXED);
    /* NCCL's mask is shared by every communicator and read concurrently: with
     * KernelCh sampling, its KernelCh bit is fs_sampling's to change. */
    if (eActivationMask && __atomic_load_n(&fs_sampling_on, __ATOMIC_RELAXED))
        fs_sampling_comm_init(c, eActivationMask, fs_record_mask | FS_SAMPLING_API_EVENTS);
    else if (eActivationMask)
        __atomic_store_n(eActivationMask, (int)fs_record_mask, __ATOMIC_RELAXED);
    *context = c;
    pthread_mutex_unlock(&fs_lock);
    return FS_NCCL_SUCCESS;
}

static fs_nccl_result_t fs_finalize(void* context) {
    fs_comm_ctx_t* c = context;
    pthread_mutex_lock(&fs_lock);
    if (!c || __atomic_load_n(&c->magic, __ATOMIC_ACQUIRE) != FS_CTX_LIVE) {
        fs_events_invalid(); /* NULL context (failed init) or finalized twice */
        pthread_mutex_unlock(&fs_lock);
        return FS_NCCL_SUCCESS;
    }
    __atomic_store_n(&c->magic, FS_CTX_DEAD, __ATOMIC_RELEASE);
    uint64_t now = fs_clock_now_ns();
    fs_ring_comm_finalize(c->ring, c->comm_index, now);
    if (--fs_active_comms == 0) {
        fs_ring_close(c->ring, now);
        __atomic_store_n(&fs_events_ring, NULL, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&fs_lock);
    return FS_NCCL_SUCCESS;
}

__attribute__((destructor)) static void fs_unload(void) {
    fs_events_unload(); /* first: no exiting thread touches a ring freed below */
    pthread_mutex_lock(&fs_lock);
    fs_ring_t* open = fs_events_ring;
    if (open) fs_ring_close(open, fs_clock_now_ns()); /* exit with live communicators */
    for (int i = 0; i < fs_nrings; i++) {
        if (fs_rings[i] != open) fs_ring_unmap(fs_rings[i]); /* others may still write to `open` */
        fs_rings[i] = NULL;
    }
    fs_nrings = 0;
    if (fs_active_comms == 0) {
        fs_sampling_forget_comms();
        while (fs_all_ctx) {
            fs_comm_ctx_t* n = fs_all_ctx->next;
            free(fs_all_ctx);
            fs_all_ctx = n;
        }
    }
    pthread_mutex_unlock(&fs_lock);
}

/* ---- v4 ---- */

static fs_nccl_result_t fs_init_v4(void** context, int* eActivationMask, const char* commName,
                                   uint64_t commHash, int nNodes, int nranks, int rank,
                                   fs_nccl_logger_t logfn) {
    return fs_init(context, commHash, eActivationMask, commName, nNodes, nranks, rank, logfn, 4,
                   FS_EV_ALL_V4);
}

static fs_nccl_result_t fs_start_v4(void* context, void** eHandle, fs_nccl_descr_v4_t* d) {
    /* the v4 type is one byte; every other field has its v5/v6 offset */
    return fs_events_start(context, eHandle, d ? d->type : 0, (const fs_nccl_descr_v6_t*)(void*)d,
                           FS_EV_ALL_V4);
}

/* ---- v5 ---- */

static fs_nccl_result_t fs_init_v5(void** context, uint64_t commId, int* eActivationMask,
                                   const char* commName, int nNodes, int nranks, int rank,
                                   fs_nccl_logger_t logfn) {
    return fs_init(context, commId, eActivationMask, commName, nNodes, nranks, rank, logfn, 5, FS_EV_ALL_V5);
}

static fs_nccl_result_t fs_start_v5(void* context, void** eHandle, fs_nccl_descr_v5_t* d) {
    return fs_events_start(context, eHandle, d ? d->type : 0, (const fs_nccl_descr_v6_t*)(void*)d,
                           FS_EV_ALL_V5);
}

/* ---- v6 ---- */

static fs_nccl_result_t fs_init_v6(void** context, uint64_t commId, int* eActivationMask,
                                   const char* commName, int nNodes, int nranks, int rank,
                                   fs_nccl_logger_t logfn) {
    return fs_init(context, commId, eActivationMask, commName, nNodes, nranks, rank, logfn, 6, FS_EV_ALL_V6);
}

static fs_nccl_result_t fs_start_v6(void* context, void** eHandle, fs_nccl_descr_v6_t* d) {
    return fs_events_start(context, eHandle, d ? d->type : 0, d, FS_EV_ALL_V6);
}

/* ---- shared ---- */

static fs_nccl_result_t fs_stop(void* eHandle) {
    return fs_events_stop(eHandle);
}

static fs_nccl_result_t fs_record_state(void* eHandle, fs_nccl_state_t eState,
                                        fs_nccl_state_args_t* eStateArgs) {
    return fs_events_state(eHandle, eState, eStateArgs);
}

FS_EXPORT const fs_nccl_profiler_v4_t ncclProfiler_v4 = {
    "flowscope", fs_init_v4, fs_start_v4, fs_stop, fs_record_state, fs_finalize,
};
FS_EXPORT const fs_nccl_profiler_v5_t ncclProfiler_v5 = {
    "flowscope", fs_init_v5, fs_start_v5, fs_stop, fs_record_state, fs_finalize,
};
FS_EXPORT const fs_nccl_profiler_v6_t ncclProfiler_v6 = {
    "flowscope", fs_init_v6, fs_start_v6, fs_stop, fs_record_state, fs_finalize,
};
