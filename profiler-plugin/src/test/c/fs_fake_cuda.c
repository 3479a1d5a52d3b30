/* fs_fake_cuda.c - the stand-in CUDA driver of the tests (fs_fake_cuda.h). */
#include "fs_fake_cuda.h"

#include <stdlib.h>
#include <string.h>

#define FS_FAKE_EXPORT __attribute__((visibility("default")))

static __thread int thread_device_set;
static __thread int thread_device;

FS_FAKE_EXPORT void fs_fake_cuda_set_device(int device) {
    thread_device = device;
    thread_device_set = 1;
}

static int env_device(void) {
    const char* e = getenv(FS_FAKE_CUDA_DEVICE_ENV);
    return e && *e ? atoi(e) : -1;
}

FS_FAKE_EXPORT int cuCtxGetDevice(int* device) {
    int d = thread_device_set ? thread_device : env_device();
    if (!device || d < 0) return FS_FAKE_CUDA_NO_CONTEXT;
    *device = d;
    return 0;
}

FS_FAKE_EXPORT int cuDeviceGetPCIBusId(char* bus_id, int len, int device) {
    if (!bus_id || len <= 0 || device < 0) return 1; /* CUDA_ERROR_INVALID_VALUE */
    const char* e = getenv(FS_FAKE_CUDA_BUS_ID_ENV);
    if (e && *e && device == env_device())
        snprintf(bus_id, (size_t)len, "%s", e);
    else
        fs_fake_cuda_bus_id(device, bus_id, (size_t)len);
    return 0;
}

static int fake_uuid(unsigned char* uuid, int device) {
    if (!uuid || device < 0) return 1; /* CUDA_ERROR_INVALID_VALUE */
    const char* e = getenv(FS_FAKE_CUDA_NO_UUID_ENV);
    if (e && *e) return 1;
    fs_fake_cuda_uuid(device, uuid);
    return 0;
}

FS_FAKE_EXPORT int cuDeviceGetUuid_v2(unsigned char* uuid, int device) {
    return fake_uuid(uuid, device);
}

FS_FAKE_EXPORT int cuDeviceGetUuid(unsigned char* uuid, int device) {
    return fake_uuid(uuid, device);
}
