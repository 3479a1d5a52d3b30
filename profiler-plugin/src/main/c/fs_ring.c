/* fs_ring.c - ring file creation, string/communicator tables, close. */
#include "fs_ring.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs_clock.h"

#define FS_PLUGIN_VERSION "flowscope-plugin 0.1.0"

static inline uint32_t* fs_hdr_u32(const fs_ring_t* r, size_t off) {
    return (uint32_t*)(r->base + off);
}
static inline uint64_t* fs_hdr_u64(const fs_ring_t* r, size_t off) {
    return (uint64_t*)(r->base + off);
}

/* mkdir -p with 0777 (the umask applies). 0 on success. */
static int fs_mkdirs(const char* dir) {
    char buf[512];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof buf) return -1;
    memcpy(buf, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] == '/' || buf[i] == '\0') {
            char c = buf[i];
            buf[i] = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
            buf[i] = c;
        }
    }
    struct stat st;
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

fs_ring_t* fs_ring_create(const char* dir, uint32_t lane_count, uint64_t lane_capacity,
                          const fs_ring_params_t* params, char* err, size_t errlen) {
    if (lane_count < 1 || lane_count > FS_LANE_MAX || (lane_count & (lane_count - 1))) {
        snprintf(err, errlen, "ring lane count %u is not a power of two in [1, %u]", lane_count, FS_LANE_MAX);
        return NULL;
    }
    if (lane_capacity < 2 || (lane_capacity & (lane_capacity - 1)) || lane_capacity > (1ULL << 40)) {
        snprintf(err, errlen, "ring lane capacity %llu is not a power of two >= 2",
                 (unsigned long long)lane_capacity);
        return NULL;
    }
    uint64_t capacity = (uint64_t)lane_count * lane_capacity;
    if (fs_mkdirs(dir) != 0) {
        snprintf(err, errlen, "cannot create ring directory %s: %s", dir, strerror(errno));
        return NULL;
    }
    fs_ring_t* r = NULL;
    if (posix_memalign((void**)&r, _Alignof(fs_ring_t), sizeof *r) != 0) r = NULL;
    if (r) memset(r, 0, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    int pid = (int)getpid();
    int fd = -1;
    for (int k = 0; k < 100000; k++) {
        snprintf(r->path, sizeof r->path, "%s/flowscope-%d-%d.ring", dir, pid, k);
        fd = open(r->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd >= 0 || errno != EEXIST) break;
    }
    if (fd < 0) {
        snprintf(err, errlen, "cannot create %s: %s", r->path, strerror(errno));
        free(r);
        return NULL;
    }
    size_t size = (size_t)FS_RING_HEADER_SIZE + (size_t)capacity * FS_RING_RECORD_SIZE;
    /* Reserve every page now: a ring on a full tmpfs would otherwise fault (SIGBUS)
     * in the middle of the job on the first write to an unbacked page. */
    int rc = posix_fallocate(fd, 0, (off_t)size);
    if (rc != 0) {
        snprintf(err, errlen, "cannot reserve %zu bytes for %s: %s (is %s full?)", size, r->path,
                 strerror(rc), dir);
        close(fd);
        unlink(r->path);
        free(r);
        return NULL;
    }
    void* m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int mmap_errno = errno;
    close(fd);
    if (m == MAP_FAILED) {
        snprintf(err, errlen, "cannot map %s: %s", r->path, strerror(mmap_errno));
        unlink(r->path);
        free(r);
        return NULL;
    }
    r->base = m;
    r->map_size = size;
    r->capacity = capacity;
    r->lane_count = lane_count;
    r->lane_capacity = lane_capacity;
    r->lane_mask = lane_capacity - 1;
    r->lane_shift = (uint32_t)__builtin_ctzll(lane_capacity);
    uint32_t shared = lane_count / 4 ? lane_count / 4 : 1;
    r->ownable_lanes = lane_count - shared;
    r->shared_select = shared - 1;
    r->slots = (fs_record_t*)(r->base + FS_RING_HEADER_SIZE);
    r->counters = fs_hdr_u64(r, FS_HDR_DROPPED_FULL_OFFSET);

    /* slot sequences start at the slot's index in its lane; tails and heads at 0 (ftruncate) */
    for (uint64_t i = 0; i < capacity; i++) r->slots[i].seq = i & r->lane_mask;

    *fs_hdr_u64(r, FS_HDR_MAGIC_OFFSET) = FS_RING_MAGIC;
    *fs_hdr_u32(r, FS_HDR_RECORD_SIZE_OFFSET) = FS_RING_RECORD_SIZE;
    *fs_hdr_u64(r, FS_HDR_CAPACITY_OFFSET) = capacity;
    *fs_hdr_u64(r, FS_HDR_HEADER_SIZE_OFFSET) = FS_RING_HEADER_SIZE;
    *fs_hdr_u32(r, FS_HDR_LANE_COUNT_OFFSET) = lane_count;
    *fs_hdr_u64(r, FS_HDR_LANE_CAPACITY_OFFSET) = lane_capacity;
    *(int32_t*)(r->base + FS_HDR_PRODUCER_PID_OFFSET) = pid;
    *fs_hdr_u32(r, FS_HDR_ABI_VERSION_OFFSET) = params->abi_version;
    *(int32_t*)(r->base + FS_HDR_NCCL_VERSION_OFFSET) = params->nccl_version;
    *fs_hdr_u32(r, FS_HDR_EVENT_MASK_OFFSET) = params->event_mask;
    *fs_hdr_u64(r, FS_HDR_ANCHOR_REALTIME_NS_OFFSET) = fs_clock_realtime_ns();
    *fs_hdr_u64(r, FS_HDR_ANCHOR_MONOTONIC_NS_OFFSET) = fs_clock_monotonic_ns();
    *fs_hdr_u32(r, FS_HDR_PRODUCER_STATE_OFFSET) = FS_PRODUCER_STATE_OPEN;
    *fs_hdr_u32(r, FS_HDR_CLOCK_SOURCE_OFFSET) = params->clock_source;
    *fs_hdr_u32(r, FS_HDR_STRING_CAPACITY_OFFSET) = FS_STRING_CAPACITY;
    *fs_hdr_u32(r, FS_HDR_STRING_COUNT_OFFSET) = 1; /* index 0 is reserved: "no string" */
    *fs_hdr_u32(r, FS_HDR_COMM_CAPACITY_OFFSET) = FS_COMM_CAPACITY;
    *fs_hdr_u32(r, FS_HDR_COMM_COUNT_OFFSET) = 0;
    char* host = (char*)(r->base + FS_HDR_HOSTNAME_OFFSET);
    if (gethostname(host, FS_HDR_HOSTNAME_LENGTH - 1) != 0) host[0] = '\0';
    host[FS_HDR_HOSTNAME_LENGTH - 1] = '\0';
    snprintf((char*)(r->base + FS_HDR_PLUGIN_VERSION_OFFSET), FS_HDR_PLUGIN_VERSION_LENGTH, "%s",
             FS_PLUGIN_VERSION);
    __atomic_store_n(fs_hdr_u32(r, FS_HDR_LAYOUT_VERSION_OFFSET), FS_RING_LAYOUT_VERSION, __ATOMIC_RELEASE);
    return r;
}

void fs_ring_set_abi(fs_ring_t* r, uint32_t abi_version, int32_t nccl_version) {
    __atomic_store_n(fs_hdr_u32(r, FS_HDR_ABI_VERSION_OFFSET), abi_version, __ATOMIC_RELAXED);
    __atomic_store_n((int32_t*)(r->base + FS_HDR_NCCL_VERSION_OFFSET), nccl_version, __ATOMIC_RELAXED);
}

uint32_t fs_ring_producer_state(const fs_ring_t* r) {
    return __atomic_load_n(fs_hdr_u32(r, FS_HDR_PRODUCER_STATE_OFFSET), __ATOMIC_ACQUIRE);
}

uint32_t fs_ring_lane_take(fs_ring_t* r, uint32_t thread, int allow_own, uint32_t* owned) {
    uint32_t n = r->ownable_lanes;
    for (uint32_t i = 0; allow_own && i < n; i++) {
        uint32_t lane = (thread + i) % n;
        uint32_t expected = 0;
        if (__atomic_compare_exchange_n(&r->lane_local[lane].owned, &expected, 1, 0, __ATOMIC_ACQUIRE,
                                        __ATOMIC_RELAXED)) {
            *owned = 1;
            return lane;
        }
    }
    *owned = 0;
    return fs_ring_shared_lane(r, thread);
}

void fs_ring_flush_lane(fs_ring_t* r, uint32_t lane) {
    uint64_t n = __atomic_exchange_n(&r->lane_local[lane].dropped_full, 0, __ATOMIC_RELAXED);
    if (n) __atomic_fetch_add(&r->counters[FS_CNT_DROPPED_FULL], n, __ATOMIC_RELAXED);
}

void fs_ring_flush_drops(fs_ring_t* r) {
    for (uint32_t l = 0; l < r->lane_count; l++) fs_ring_flush_lane(r, l);
}

void fs_ring_close(fs_ring_t* r, uint64_t now_ns) {
    fs_ring_flush_drops(r);
    __atomic_store_n(fs_hdr_u64(r, FS_HDR_CLOSED_MONOTONIC_NS_OFFSET), now_ns, __ATOMIC_RELAXED);
    __atomic_store_n(fs_hdr_u32(r, FS_HDR_PRODUCER_STATE_OFFSET), FS_PRODUCER_STATE_CLOSED, __ATOMIC_RELEASE);
}

void fs_ring_unmap(fs_ring_t* r) {
    if (!r) return;
    munmap(r->base, r->map_size);
    free(r);
}

/* ---- string table ---- */

static uint8_t* fs_string_entry(const fs_ring_t* r, uint32_t i) {
    return r->base + FS_STRING_TABLE_OFFSET + (size_t)i * FS_STRING_ENTRY_SIZE;
}

static void fs_string_cache_put(fs_ring_t* r, const char* s, uint8_t index) {
    uint64_t e = (uint64_t)(uintptr_t)s << 8 | index;
    uint32_t h = fs_ring_string_hash((uintptr_t)s);
    for (uint32_t i = 0; i < FS_RING_STRING_PROBES; i++) {
        uint64_t* c = &r->string_cache[(h + i) & (FS_RING_STRING_CACHE - 1)];
        uint64_t cur = __atomic_load_n(c, __ATOMIC_ACQUIRE);
        if (cur >> 8 == (uint64_t)(uintptr_t)s) return;
        if (cur == 0 && __atomic_compare_exchange_n(c, &cur, e, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
            return;
    }
    /* probe window full: replace its first entry */
    __atomic_store_n(&r->string_cache[h & (FS_RING_STRING_CACHE - 1)], e, __ATOMIC_RELEASE);
}

uint8_t fs_ring_intern_slow(fs_ring_t* r, const char* s) {
    size_t len = strnlen(s, FS_STRING_NAME_MAX);
    if (len == 0) return 0; /* the empty string is "no string" (length 0 = unpublished) */
    uint32_t* count = fs_hdr_u32(r, FS_HDR_STRING_COUNT_OFFSET);
    uint32_t n = __atomic_load_n(count, __ATOMIC_ACQUIRE);
    if (n > FS_STRING_CAPACITY) n = FS_STRING_CAPACITY;
    for (uint32_t i = 1; i < n; i++) {
        uint8_t* e = fs_string_entry(r, i);
        uint32_t l = __atomic_load_n((uint32_t*)(e + FS_STRING_LENGTH_OFFSET), __ATOMIC_ACQUIRE);
        if (l == len && memcmp(e + FS_STRING_NAME_OFFSET, s, len) == 0) {
            fs_string_cache_put(r, s, (uint8_t)i);
            return (uint8_t)i;
        }
    }
    uint32_t idx = __atomic_load_n(count, __ATOMIC_RELAXED);
    do {
        if (idx >= FS_STRING_CAPACITY) {
            fs_ring_count(r, FS_CNT_STRINGS_OVERFLOW);
            fs_string_cache_put(r, s, 0); /* counted once per distinct name */
            return 0;
        }
    } while (!__atomic_compare_exchange_n(count, &idx, idx + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
    uint8_t* e = fs_string_entry(r, idx);
    memcpy(e + FS_STRING_NAME_OFFSET, s, len);
    __atomic_store_n((uint32_t*)(e + FS_STRING_LENGTH_OFFSET), (uint32_t)len, __ATOMIC_RELEASE);
    fs_string_cache_put(r, s, (uint8_t)idx);
    return (uint8_t)idx;
}

/* ---- communicator table ---- */

static uint8_t* fs_comm_entry(const fs_ring_t* r, uint32_t i) {
    return r->base + FS_COMM_TABLE_OFFSET + (size_t)i * FS_COMM_ENTRY_SIZE;
}

uint32_t fs_ring_comm_add(fs_ring_t* r, uint64_t comm_hash, int rank, int nranks, int nnodes,
                          const char* name, const fs_gpu_t* gpu, uint64_t now_ns) {
    uint32_t* count = fs_hdr_u32(r, FS_HDR_COMM_COUNT_OFFSET);
    uint32_t idx = __atomic_load_n(count, __ATOMIC_RELAXED);
    do {
        if (idx >= FS_COMM_CAPACITY) {
            fs_ring_count(r, FS_CNT_COMMS_OVERFLOW);
            return FS_COMM_INDEX_UNKNOWN;
        }
    } while (!__atomic_compare_exchange_n(count, &idx, idx + 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
    uint8_t* e = fs_comm_entry(r, idx);
    *(uint64_t*)(e + FS_COMM_HASH_OFFSET) = comm_hash;
    *(int32_t*)(e + FS_COMM_RANK_OFFSET) = rank;
    *(int32_t*)(e + FS_COMM_NRANKS_OFFSET) = nranks;
    *(int32_t*)(e + FS_COMM_NNODES_OFFSET) = nnodes;
    *(uint64_t*)(e + FS_COMM_INIT_MONOTONIC_NS_OFFSET) = now_ns;
    if (name) {
        size_t n = strnlen(name, FS_COMM_NAME_LENGTH - 1);
        memcpy(e + FS_COMM_NAME_OFFSET, name, n);
        e[FS_COMM_NAME_OFFSET + n] = '\0';
    }
    *(int32_t*)(e + FS_COMM_CUDA_DEV_OFFSET) = gpu ? gpu->cuda_dev : -1;
    if (gpu) {
        size_t n = strnlen(gpu->pci_bus_id, FS_COMM_PCI_BUS_ID_LENGTH - 1);
        memcpy(e + FS_COMM_PCI_BUS_ID_OFFSET, gpu->pci_bus_id, n);
        e[FS_COMM_PCI_BUS_ID_OFFSET + n] = '\0';
        /* beside the entry (1.2), published by the same release of its state */
        memcpy(r->base + FS_GPU_UUID_TABLE_OFFSET + (size_t)idx * FS_GPU_UUID_SIZE, gpu->uuid,
               FS_GPU_UUID_SIZE);
    }
    __atomic_store_n((uint32_t*)(e + FS_COMM_STATE_OFFSET), FS_COMM_STATE_ACTIVE, __ATOMIC_RELEASE);
    return idx;
}

void fs_ring_comm_finalize(fs_ring_t* r, uint32_t index, uint64_t now_ns) {
    if (index >= FS_COMM_CAPACITY) return;
    uint8_t* e = fs_comm_entry(r, index);
    __atomic_store_n((uint64_t*)(e + FS_COMM_FINALIZE_MONOTONIC_NS_OFFSET), now_ns, __ATOMIC_RELAXED);
    __atomic_store_n((uint32_t*)(e + FS_COMM_STATE_OFFSET), FS_COMM_STATE_FINALIZED, __ATOMIC_RELEASE);
}
