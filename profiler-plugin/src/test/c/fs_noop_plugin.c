/*
 * fs_noop_plugin.c - an NCCL profiler (ncclProfiler_v5, "noop") that does
 * nothing: the baseline fs_abi_bench measures in the same run as flowscope, so
 * that the call through the table, the descriptor the driver fills and the
 * timing bracket cancel out. Every start hands back a non-NULL handle (the
 * context), as a real plugin would, so the driver makes the same calls.
 */
#include "fs_nccl_abi.h"

#define FS_EXPORT __attribute__((visibility("default")))

static char noop_context;

static fs_nccl_result_t noop_init(void** context, uint64_t commId, int* eActivationMask, const char* commName,
                                  int nNodes, int nranks, int rank, fs_nccl_logger_t logfn) {
    (void)commId, (void)eActivationMask, (void)commName, (void)nNodes, (void)nranks, (void)rank, (void)logfn;
    *context = &noop_context;
    return FS_NCCL_SUCCESS;
}

static fs_nccl_result_t noop_start(void* context, void** eHandle, fs_nccl_descr_v5_t* d) {
    (void)d;
    *eHandle = context;
    return FS_NCCL_SUCCESS;
}

static fs_nccl_result_t noop_stop(void* eHandle) {
    (void)eHandle;
    return FS_NCCL_SUCCESS;
}

static fs_nccl_result_t noop_state(void* eHandle, fs_nccl_state_t eState, fs_nccl_state_args_t* args) {
    (void)eHandle, (void)eState, (void)args;
    return FS_NCCL_SUCCESS;
}

static fs_nccl_result_t noop_finalize(void* context) {
    (void)context;
    return FS_NCCL_SUCCESS;
}

FS_EXPORT const fs_nccl_profiler_v5_t ncclProfiler_v5 = {
    "noop", noop_init, noop_start, noop_stop, noop_state, noop_finalize,
};
