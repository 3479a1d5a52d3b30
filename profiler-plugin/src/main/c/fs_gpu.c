/* fs_gpu.c - the CUDA device of the calling thread (fs_gpu.h). */
#define _GNU_SOURCE
#include "fs_gpu.h"

#include <dlfcn.h>
#include <stdint.h>
#include <string.h>

/* Our declarations of the two driver entry points (CUDA driver API): CUresult
 * is an int enum, 0 = CUDA_SUCCESS; CUdevice is the int device ordinal. */
typedef int (*fs_cu_ctx_get_device_t)(int* device);
typedef int (*fs_cu_device_get_pci_bus_id_t)(char* pci_bus_id, int len, int device);
/* CUuuid is a struct of 16 bytes, passed by pointer. _v2 (CUDA 11.4+) gives the
 * UUID nvidia-smi prints also under MIG; the first version is the same for a
 * whole GPU. Either is asked for the device, never both. */
typedef int (*fs_cu_device_get_uuid_t)(uint8_t uuid[16], int device);

void fs_gpu_of_calling_thread(fs_gpu_t* gpu) {
    gpu->cuda_dev = -1;
    gpu->pci_bus_id[0] = '\0';
    memset(gpu->uuid, 0, sizeof gpu->uuid);
    /* RTLD_NOLOAD: a handle only if the process has the driver already (NCCL
     * has); RTLD_LAZY: an object already loaded keeps its binding mode. */
    void* lib = dlopen(FS_GPU_DRIVER_LIBRARY, RTLD_LAZY | RTLD_NOLOAD);
    if (!lib) return;
    fs_cu_ctx_get_device_t get_device = (fs_cu_ctx_get_device_t)dlsym(lib, "cuCtxGetDevice");
    fs_cu_device_get_pci_bus_id_t get_bus_id =
        (fs_cu_device_get_pci_bus_id_t)dlsym(lib, "cuDeviceGetPCIBusId");
    int dev = -1;
    if (get_device && get_device(&dev) == 0 && dev >= 0) {
        gpu->cuda_dev = dev;
        char bus[64] = ""; /* CUDA needs 13 bytes: "dddd:bb:dd.f" */
        if (get_bus_id && get_bus_id(bus, (int)sizeof bus, dev) == 0) {
            bus[sizeof bus - 1] = '\0';
            size_t n = strnlen(bus, sizeof gpu->pci_bus_id - 1);
            memcpy(gpu->pci_bus_id, bus, n);
            gpu->pci_bus_id[n] = '\0';
        }
        fs_cu_device_get_uuid_t get_uuid = (fs_cu_device_get_uuid_t)dlsym(lib, "cuDeviceGetUuid_v2");
        if (!get_uuid) get_uuid = (fs_cu_device_get_uuid_t)dlsym(lib, "cuDeviceGetUuid");
        uint8_t uuid[16];
        if (get_uuid && get_uuid(uuid, dev) == 0) memcpy(gpu->uuid, uuid, sizeof gpu->uuid);
    }
    dlclose(lib);
}
