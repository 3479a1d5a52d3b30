/*
 * fs_sampling.h - KernelCh sampling (FLOWSCOPE_KERNEL_SAMPLING = N > 1): GPU
 * kernel timestamps on one group in N of each communicator, safe by
 * construction on NCCL 2.28-2.30 (profiler ABI v5/v6). The why, with NCCL
 * file:line references, is in profiler-plugin/README.md ("KernelCh sampling").
 *
 * NCCL copies its process-global mask into every task when the task is
 * appended (each ncclAllReduce/ncclSend/... call), before any callback of that
 * call. A KernelCh bit that differs between the send and the receive task of
 * one fused p2p work item leaves a profiler proxy op waiting for a GPU counter
 * that is never written: the proxy thread never goes idle and communicator
 * destruction hangs. So:
 *
 *  1. The bit changes only when NCCL launches the kernels of an outermost
 *     group (the first KernelLaunch start after a task was appended), on the
 *     one thread that issues NCCL calls (the "owner", the first thread with an
 *     API event): NCCL launches only at the outermost ncclGroupEnd, after every
 *     task of the group was appended, so every task of a group sees one value.
 *     (Not at GroupApi stop: NCCL 2.28 emits it before the outermost group ends
 *     when groups are nested, as torch does around each send and receive.)
 *     A communicator's init sets the bit only on the owner's thread (or before
 *     any call); elsewhere it keeps the bit as it is.
 *  2. Sampling freezes (the bit is never changed again, one WARN) when a
 *     second thread makes an API call or launches, or an operation is
 *     graph-captured.
 *  3. The group k of communicator C (k counted from 0 over the groups that
 *     carry a task of C) is due when k % N == 0, the same groups on every rank.
 *     The bit is on for the next group when any communicator whose next group
 *     is due had a group in the last max(N, FS_SAMPLING_IDLE_GROUPS) groups of
 *     the process (a communicator idle for longer stops holding it on: its
 *     next group may then go unsampled on this rank only). Tasks of a group
 *     that got the bit without being due for their communicator have their
 *     KernelCh events dropped (the handle NCCL gets is NULL), so a ring holds
 *     GPU timestamps for exactly the due groups of each communicator.
 *
 * Hot path: every Coll/P2p/KernelCh/API/KernelLaunch start reads one flag;
 * only while sampling runs does it do more (a few loads and stores, a walk over
 * the live communicators at each group end); never a lock, an allocation or a
 * system call.
 */
#ifndef FS_SAMPLING_H
#define FS_SAMPLING_H

#include <stdint.h>

#include "fs_events.h"
#include "fs_nccl_abi.h"

#ifndef FS_HIDDEN
#define FS_HIDDEN __attribute__((visibility("hidden")))
#endif

/* A communicator whose next group is due keeps the bit on for at most this
 * many groups of the process (or N) after its last one. */
#define FS_SAMPLING_IDLE_GROUPS 1024u

/* Ids of CollApi/P2pApi/Coll/P2p events whose KernelCh is not recorded, by serial. */
#define FS_SAMPLING_SKIP_SLOTS 4096u

/* 1 while sampling runs (set at the first init, never cleared): read on the hot path. */
extern uint32_t fs_sampling_on FS_HIDDEN;

/* The NCCL mask bits sampling needs besides the recorded ones: the events whose
 * callbacks drive it (recorded only when asked for). */
#define FS_SAMPLING_API_EVENTS (FS_EV_GROUP_API | FS_EV_COLL_API | FS_EV_P2P_API | FS_EV_KERNEL_LAUNCH)

/* Once, at the first init (under the plugin's lock): decides whether sampling
 * runs. `record_mask` = the kinds recorded; returns the kinds to record (KernelCh
 * removed when N = 0, or when N > 1 with ABI 4: refused with one WARN). */
uint32_t fs_sampling_configure(uint32_t every, uint32_t abi, uint32_t record_mask, int* nccl_mask,
                               fs_nccl_logger_t logfn) FS_HIDDEN;

/* init of communicator `c` (under the plugin's lock, after configure, sampling
 * on): starts its count (its next group, the first, is due) and writes NCCL's
 * mask: `base` (no KernelCh bit) plus the KernelCh bit, set on the owner's
 * thread or before any API call, kept as it is elsewhere. */
void fs_sampling_comm_init(fs_comm_ctx_t* c, int* nccl_mask, uint32_t base) FS_HIDDEN;

/* GroupApi / CollApi / P2pApi start (kind) of communicator c, id = the handle given to NCCL. */
void fs_sampling_api_start(fs_comm_ctx_t* c, uint32_t kind, uint64_t id,
                           const fs_nccl_descr_v6_t* d) FS_HIDDEN;

/* Coll / P2p start: inherits "not recorded" from its CollApi/P2pApi parent. */
void fs_sampling_op_start(uint64_t id, uint64_t parent) FS_HIDDEN;

/* KernelCh start with this parent (a Coll/P2p id): 1 = record it, 0 = drop it. */
int fs_sampling_keep_kernel(uint64_t parent) FS_HIDDEN;

/* KernelLaunch start: the first after a task was appended ends the group. */
void fs_sampling_launch(void) FS_HIDDEN;

/* Library unload with no live communicator: forget the communicator list. */
void fs_sampling_forget_comms(void) FS_HIDDEN;

#endif /* FS_SAMPLING_H */
