/*
 * fs_gpu.h - the CUDA device of the thread that initialises a communicator,
 * through the CUDA driver the process has already loaded. The plugin never
 * links CUDA and never loads it: without a loaded driver, a current context or
 * either entry point, the device is unknown (-1, "") and init goes on.
 */
#ifndef FS_GPU_H
#define FS_GPU_H

#include "fs_ring.h"

/* The driver NCCL loaded (the soname libcudart opens); looked up, never loaded. */
#define FS_GPU_DRIVER_LIBRARY "libcuda.so.1"

/* Fills *gpu with the device of the calling thread's current CUDA context:
 * cuCtxGetDevice, then cuDeviceGetPCIBusId and cuDeviceGetUuid_v2 (else
 * cuDeviceGetUuid; neither: an all-zero UUID). NCCL calls the profiler's init on
 * the thread that initialises the communicator, after cudaSetDevice to the
 * communicator's device (ncclCommInitRankFunc -> initTransportsRank ->
 * ncclProfilerPluginInit, NCCL 2.27 to 2.30). Not hot: a dlopen (RTLD_NOLOAD)
 * and three driver queries; call it without holding the plugin's lock. */
void fs_gpu_of_calling_thread(fs_gpu_t* gpu) FS_HIDDEN;

#endif /* FS_GPU_H */
