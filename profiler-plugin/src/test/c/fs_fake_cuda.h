/*
 * fs_fake_cuda.h - a stand-in for the CUDA driver, for machines without a GPU:
 * build/fakecuda/libcuda.so.1 (soname libcuda.so.1, so the plugin's
 * dlopen("libcuda.so.1", RTLD_NOLOAD) finds it once a test program loaded it:
 * fs_harness --fake-cuda PATH, or LD_PRELOAD for programs that load nothing).
 * It answers the two driver calls the plugin makes (fs_gpu.c):
 *
 *   cuCtxGetDevice       the calling thread's device: the one it set with
 *                        fs_fake_cuda_set_device, else $FS_FAKE_CUDA_DEVICE;
 *                        none (or -1): 201, CUDA_ERROR_INVALID_CONTEXT
 *   cuDeviceGetPCIBusId  $FS_FAKE_CUDA_BUS_ID for $FS_FAKE_CUDA_DEVICE when
 *                        set, else fs_fake_cuda_bus_id(device)
 *   cuDeviceGetUuid_v2,  fs_fake_cuda_uuid(device); with $FS_FAKE_CUDA_NO_UUID
 *   cuDeviceGetUuid      set: 1, CUDA_ERROR_INVALID_VALUE (a driver that
 *                        cannot tell)
 */
#ifndef FS_FAKE_CUDA_H
#define FS_FAKE_CUDA_H

#include <stddef.h>
#include <stdio.h>

#define FS_FAKE_CUDA_DEVICE_ENV  "FS_FAKE_CUDA_DEVICE"
#define FS_FAKE_CUDA_BUS_ID_ENV  "FS_FAKE_CUDA_BUS_ID"
#define FS_FAKE_CUDA_NO_UUID_ENV "FS_FAKE_CUDA_NO_UUID"
#define FS_FAKE_CUDA_NO_CONTEXT  201 /* CUDA_ERROR_INVALID_CONTEXT */

/* The bus id the stand-in reports for a device it was given no id for. */
static inline void fs_fake_cuda_bus_id(int device, char* buf, size_t len) {
    snprintf(buf, len, "0000:%02X:00.0", (0x18 + device) & 0xFF);
}

/* The UUID the stand-in reports for a device: f5ca0000-0000-4000-8000-0000000000<device>
 * (nvidia-smi: GPU-f5ca0000-0000-4000-8000-0000000000dd). */
static inline void fs_fake_cuda_uuid(int device, unsigned char uuid[16]) {
    static const unsigned char base[16] = {0xf5, 0xca, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, 0};
    for (int i = 0; i < 16; i++) uuid[i] = base[i];
    uuid[15] = (unsigned char)device;
}

/* Exported by the stand-in: the calling thread's current device (-1: no
 * current context), as cudaSetDevice makes one current. */
typedef void (*fs_fake_cuda_set_device_t)(int device);

#endif /* FS_FAKE_CUDA_H */
