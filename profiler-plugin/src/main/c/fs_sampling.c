/* fs_sampling.c - KernelCh on one group in N of each communicator (fs_sampling.h). */
#include "fs_sampling.h"

#include "fs_config.h"

uint32_t fs_sampling_on;

static struct {
    int* nccl_mask;       /* NCCL's process-global event mask (from init) */
    uint32_t every;       /* N > 1 */
    uint32_t frozen;      /* 1: the bit is never changed again */
    uintptr_t owner;      /* the thread issuing NCCL calls (fs_sampling_me), 0 = none yet */
    fs_comm_ctx_t* comms; /* every communicator initialised, newest first */
    fs_nccl_logger_t logfn;
    /* written by the owner per API call and per group: off the line above,
     * which other threads read */
    uint64_t groups __attribute__((aligned(128))); /* outermost groups launched on the owner thread */
    uint32_t open;                                 /* 1: a task was appended since the last launch */
    /* ids (by serial) of API and operation events whose KernelCh is not recorded */
    uint64_t skip[FS_SAMPLING_SKIP_SLOTS] __attribute__((aligned(128)));
} fs_s __attribute__((aligned(128)));

/* Its address names the calling thread (unique among live threads). */
static __thread char fs_sampling_me;
static inline uintptr_t fs_sampling_self(void) {
    return (uintptr_t)&fs_sampling_me;
}

static inline uint64_t* fs_skip_slot(uint64_t id) {
    return &fs_s.skip[id & (FS_SAMPLING_SKIP_SLOTS - 1)];
}
static inline void fs_skip_add(uint64_t id) {
    __atomic_store_n(fs_skip_slot(id), id, __ATOMIC_RELAXED);
}
static inline int fs_skip_has(uint64_t id) {
    return id != 0 && __atomic_load_n(fs_skip_slot(id), __ATOMIC_RELAXED) == id;
}

static int fs_kernel_bit(void) {
    return (__atomic_load_n(fs_s.nccl_mask, __ATOMIC_RELAXED) & FS_EV_KERNEL_CH) != 0;
}

/* No change of the bit from now on: any change could land inside a group that
 * another thread is enqueueing, or mix captured work with and without it. */
static __attribute__((noinline, cold)) void fs_sampling_freeze(const char* why) {
    if (__atomic_exchange_n(&fs_s.frozen, 1u, __ATOMIC_RELAXED)) return;
    fs_log_warn(fs_s.logfn,
                "FLOWSCOPE_KERNEL_SAMPLING=%u stopped: %s. NCCL's KernelCh bit stays %s for the rest of "
                "this process (changing it could split a group being enqueued between two values, "
                "which hangs NCCL)",
                fs_s.every, why, fs_kernel_bit() ? "on (GPU timestamps on every operation)" : "off");
}

/* 1 when the calling thread is the owner (the first to ask becomes it); else freezes. */
static int fs_sampling_owner(void) {
    uintptr_t self = fs_sampling_self();
    uintptr_t o = __atomic_load_n(&fs_s.owner, __ATOMIC_RELAXED);
    if (o == self) return 1;
    if (o == 0 && __atomic_compare_exchange_n(&fs_s.owner, &o, self, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        return 1;
    fs_sampling_freeze("NCCL calls come from a second thread");
    return 0;
}

uint32_t fs_sampling_configure(uint32_t every, uint32_t abi, uint32_t record_mask, int* nccl_mask,
                               fs_nccl_logger_t logfn) {
    fs_s.logfn = logfn;
    if (!(record_mask & FS_EV_KERNEL_CH) || every == 1 || !nccl_mask) return record_mask;
    if (every == 0) return record_mask & ~(uint32_t)FS_EV_KERNEL_CH;
    if (abi < 5) {
        fs_log_warn(logfn,
                    "FLOWSCOPE_KERNEL_SAMPLING=%u needs NCCL's profiler ABI v5 or v6 (NCCL 2.28 to 2.30): "
                    "with ABI v%u no callback marks the end of a group, where the KernelCh bit can change "
                    "safely; KernelCh is off (1 = every operation)",
                    every, abi);
        return record_mask & ~(uint32_t)FS_EV_KERNEL_CH;
    }
    fs_s.nccl_mask = nccl_mask;
    fs_s.every = every;
    __atomic_store_n(&fs_sampling_on, 1u, __ATOMIC_RELEASE);
    return record_mask;
}

void fs_sampling_comm_init(fs_comm_ctx_t* c, int* nccl_mask, uint32_t base) {
    c->ks_groups = 0; /* its first group is due */
    c->ks_stamp = 0;
    c->ks_last = __atomic_load_n(&fs_s.groups, __ATOMIC_RELAXED);
    c->ks_next = __atomic_load_n(&fs_s.comms, __ATOMIC_RELAXED);
    __atomic_store_n(&fs_s.comms, c, __ATOMIC_RELEASE);
    /* The owner's thread is between two of its groups here (an init inside a
     * group runs at its end), and before any API call nothing is enqueued:
     * the bit may go on for the new communicator's first group. Any other
     * thread keeps the bit as it is. */
    uintptr_t o = __atomic_load_n(&fs_s.owner, __ATOMIC_RELAXED);
    int set = !__atomic_load_n(&fs_s.frozen, __ATOMIC_RELAXED) && (o == 0 || o == fs_sampling_self());
    int cur = __atomic_load_n(nccl_mask, __ATOMIC_RELAXED), next;
    do {
        next =
            (int)(base & ~(uint32_t)FS_EV_KERNEL_CH) | (cur & FS_EV_KERNEL_CH) | (set ? FS_EV_KERNEL_CH : 0);
    } while (!__atomic_compare_exchange_n(nccl_mask, &cur, next, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}

void fs_sampling_api_start(fs_comm_ctx_t* c, uint32_t kind, uint64_t id, const fs_nccl_descr_v6_t* d) {
    if (__atomic_load_n(&fs_s.frozen, __ATOMIC_RELAXED) || !fs_sampling_owner()) return;
    int captured = kind == FS_KIND_GROUP_API  ? d->groupApi.graphCaptured
                   : kind == FS_KIND_COLL_API ? d->collApi.graphCaptured
                                              : d->p2pApi.graphCaptured;
    if (captured) {
        /* NCCL counts the GPU work of captured operations without KernelCh
         * once, at capture, and the GPU counts it at every replay: a later
         * operation with KernelCh could then wait for the wrong counter. */
        fs_sampling_freeze("an operation is captured into a CUDA graph");
        return;
    }
    if (kind == FS_KIND_GROUP_API) return;
    fs_s.open = 1;
    uint64_t g = __atomic_load_n(&fs_s.groups, __ATOMIC_RELAXED);
    if (c->ks_stamp != g + 1) { /* the first task of c in this group */
        c->ks_stamp = g + 1;
        c->ks_last = g;
        c->ks_groups++;
    }
    /* Only the owner changes the bit, so its value now is the one NCCL copied
     * into this task a moment ago. */
    if ((c->ks_groups - 1) % fs_s.every != 0 && fs_kernel_bit()) fs_skip_add(id);
}

void fs_sampling_op_start(uint64_t id, uint64_t parent) {
    if (fs_skip_has(parent)) fs_skip_add(id);
}

int fs_sampling_keep_kernel(uint64_t parent) {
    return !fs_skip_has(parent);
}

void fs_sampling_launch(void) {
    if (__atomic_load_n(&fs_s.frozen, __ATOMIC_RELAXED)) return;
    uintptr_t o = __atomic_load_n(&fs_s.owner, __ATOMIC_RELAXED);
    if (o != fs_sampling_self()) {
        /* another thread launches what the owner enqueued (non-blocking
         * communicators): the owner may be enqueueing its next group now */
        if (o != 0)
            fs_sampling_freeze("NCCL launches from a thread other than the one that enqueues (non-blocking "
                               "communicators?)");
        return;
    }
    if (!fs_s.open) return; /* the same launch, a further plan */
    fs_s.open = 0;
    uint64_t g = __atomic_load_n(&fs_s.groups, __ATOMIC_RELAXED) + 1;
    __atomic_store_n(&fs_s.groups, g, __ATOMIC_RELAXED);
    uint32_t n = fs_s.every;
    uint64_t recent = n > FS_SAMPLING_IDLE_GROUPS ? n : FS_SAMPLING_IDLE_GROUPS;
    int on = 0;
    for (fs_comm_ctx_t* c = __atomic_load_n(&fs_s.comms, __ATOMIC_ACQUIRE); c; c = c->ks_next) {
        if (__atomic_load_n(&c->magic, __ATOMIC_RELAXED) != FS_CTX_LIVE) continue;
        if (c->ks_groups % n == 0 && g - c->ks_last <= recent) {
            on = 1;
            break;
        }
    }
    int* m = fs_s.nccl_mask;
    if (on != fs_kernel_bit()) {
        if (on)
            __atomic_fetch_or(m, FS_EV_KERNEL_CH, __ATOMIC_RELAXED);
        else
            __atomic_fetch_and(m, ~FS_EV_KERNEL_CH, __ATOMIC_RELAXED);
    }
}

void fs_sampling_forget_comms(void) {
    __atomic_store_n(&fs_s.comms, NULL, __ATOMIC_RELEASE);
}
