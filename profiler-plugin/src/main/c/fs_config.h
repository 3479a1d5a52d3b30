/*
 * fs_config.h - the plugin's environment variables, read once at first init.
 *
 *   FLOWSCOPE_EVENT_MASK  decimal, 0x hex, or comma-separated names
 *                         (group,coll,p2p,proxyop,proxystep,proxyctrl,kernelch,
 *                         netplugin,groupapi,collapi,p2papi,kernellaunch,cecoll,
 *                         cesync,cebatch, all, default)          default 0x9F
 *   FLOWSCOPE_RING_DIR    directory of the ring files            default /dev/shm/flowscope
 *   FLOWSCOPE_RING_SIZE   bytes of slots (all lanes), K/M/G      default 64M
 *   FLOWSCOPE_RING_LANES  lanes, a power of two in [1, 64]       default 8
 *   FLOWSCOPE_CLOCK       tsc | monotonic                        default tsc
 *   FLOWSCOPE_DISABLE     1 = profile nothing                    default 0
 *   FLOWSCOPE_KERNEL_SAMPLING  with KernelCh in the mask: GPU kernel
 *                         timestamps for one group in N of each communicator
 *                         (fs_sampling.h); 1 = every operation, 0 = never  default 1
 *
 * A bad value produces one WARN line and the default (an out-of-range ring
 * size is clamped). Never a failure.
 */
#ifndef FS_CONFIG_H
#define FS_CONFIG_H

#include <stdint.h>

#include "fs_nccl_abi.h"

#ifndef FS_HIDDEN
#define FS_HIDDEN __attribute__((visibility("hidden")))
#endif

/* Group|Coll|P2p|ProxyOp|ProxyStep|NetPlugin: what telemetry needs at no cost to
 * NCCL. KernelCh (GPU timestamps) is opt-in: stock NCCL adds profiler proxy
 * work to every operation that has it (+20 us per operation over NVLink with
 * 2.28.9, docs/benchmarks.md). */
#define FS_CONFIG_DEFAULT_MASK       0x9Fu
#define FS_CONFIG_ALL_MASK           FS_EV_ALL_V6
#define FS_CONFIG_DEFAULT_RING_DIR   "/dev/shm/flowscope"
#define FS_CONFIG_DEFAULT_RING_BYTES (64ULL << 20)
#define FS_CONFIG_DEFAULT_RING_LANES 8u
#define FS_CONFIG_MAX_RING_LANES     64u
#define FS_CONFIG_MIN_SLOTS          16ULL /* per lane */
#define FS_CONFIG_MAX_RING_BYTES     (4ULL << 30)
/* KernelCh on every operation when the mask has it (N = 1). Sampling (N > 1,
 * fs_sampling.h) ran 20,000 iterations of every operation kind on NCCL 2.28.9
 * without a hang and costs NVLink bus bandwidth nothing measurable at N = 100,
 * but a freeze on a due group leaves KernelCh on every later operation, so the
 * default mask has no KernelCh (README.md, "Why not on by default"). */
#define FS_CONFIG_DEFAULT_KERNEL_SAMPLING 1u
#define FS_CONFIG_MAX_KERNEL_SAMPLING     1000000000u

typedef struct {
    uint32_t event_mask;      /* FS_EV_* bits to record */
    uint64_t ring_slots;      /* capacity, all lanes: a power of two >= 16 * ring_lanes */
    uint32_t ring_lanes;      /* a power of two in [1, 64] */
    int prefer_tsc;           /* 1 = tsc, 0 = clock_gettime */
    int disabled;             /* FLOWSCOPE_DISABLE=1 */
    uint32_t kernel_sampling; /* KernelCh on one group in N (1 = all, 0 = none) */
    char ring_dir[512];
} fs_config_t;

/* Reads the environment into `cfg`; WARNs through logfn (NULL -> stderr). */
void fs_config_load(fs_config_t* cfg, fs_nccl_logger_t logfn) FS_HIDDEN;

/* Parsers (0 on success, -1 on a bad value; *out untouched on failure). */
int fs_config_parse_mask(const char* s, uint32_t* out) FS_HIDDEN;
int fs_config_parse_size(const char* s, uint64_t* bytes) FS_HIDDEN;

/* Ring bytes -> slots (all lanes): rounded down to a power of two, clamped to
 * [16 * lanes, 4G/64]. */
uint64_t fs_config_slots_for_bytes(uint64_t bytes, uint32_t lanes) FS_HIDDEN;

/* FLOWSCOPE_RING_LANES: 0 = a power of two in [1, 64]; 1 = in range but not a
 * power of two (*lanes rounded down); -1 = not a number in [1, 64]. */
int fs_config_parse_lanes(const char* s, uint32_t* lanes) FS_HIDDEN;

/* One WARN line through NCCL's logger, or stderr when logfn is NULL. */
void fs_log_warn(fs_nccl_logger_t logfn, const char* fmt, ...)
    __attribute__((format(printf, 2, 3))) FS_HIDDEN;

#endif /* FS_CONFIG_H */
