/*
 * fs_events.h - NCCL event -> ring record encoding (RING.md "Slot / record").
 *
 * Handles are event ids, never pointers: kind << 60 | comm << 48 | serial.
 * Serials come from per-thread blocks of one global 48-bit counter, so no
 * cache line is shared per event. Hot path: no lock, no allocation, no
 * system call.
 */
#ifndef FS_EVENTS_H
#define FS_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "fs_nccl_abi.h"
#include "fs_ring.h"

#ifndef FS_HIDDEN
#define FS_HIDDEN __attribute__((visibility("hidden")))
#endif

#define FS_CTX_LIVE 0x666C6F7773636F70ULL /* "flowscop" */
#define FS_CTX_DEAD 0x646561646465616DULL

/* The per-communicator context handed to NCCL as *context. Every thread that
 * starts an event of the communicator reads its first line; the sampling
 * fields, written by the owner thread per group, are on lines of their own
 * (allocated 128-byte aligned: fs_plugin.c). */
typedef struct fs_comm_ctx {
    uint64_t magic;     /* FS_CTX_LIVE until finalize, then FS_CTX_DEAD */
    uint64_t comm_bits; /* comm_index << 48, ORed into every id */
    uint32_t comm_index;
    uint32_t abi_version;
    fs_ring_t* ring;
    struct fs_comm_ctx* next; /* every context ever made, freed by the destructor */
    /* KernelCh sampling (fs_sampling.c), written on the owner thread only */
    uint64_t ks_groups __attribute__((aligned(128))); /* groups that carried a task of this communicator */
    uint64_t ks_last;            /* process groups ended before its last group (or its init) */
    uint64_t ks_stamp;           /* process group + 1 it was last counted in */
    struct fs_comm_ctx* ks_next; /* the sampling list (immutable once published) */
} __attribute__((aligned(128))) fs_comm_ctx_t;
_Static_assert(offsetof(fs_comm_ctx_t, ks_groups) == 128 && sizeof(fs_comm_ctx_t) == 256,
               "the sampling fields start a line pair of their own");

/* The ring records go to (NULL: none open) and the kinds to record. */
extern fs_ring_t* fs_events_ring FS_HIDDEN;
extern uint32_t fs_events_mask FS_HIDDEN;

/* startEvent for all ABIs. `d` is read through the v6 view: v4/v5 share every
 * offset this reads (the v4 type byte is passed in `type`). abi_types = the
 * event bits the ABI defines. */
fs_nccl_result_t fs_events_start(fs_comm_ctx_t* ctx, void** eHandle, uint64_t type,
                                 const fs_nccl_descr_v6_t* d, uint32_t abi_types) FS_HIDDEN;
fs_nccl_result_t fs_events_stop(void* eHandle) FS_HIDDEN;
fs_nccl_result_t fs_events_state(void* eHandle, int state, const fs_nccl_state_args_t* args) FS_HIDDEN;

/* Counts one invalid call (NULL / unknown arguments) on the open ring. */
void fs_events_invalid(void) FS_HIDDEN;

/* At library unload: no thread exit may call back into the plugin's code. */
void fs_events_unload(void) FS_HIDDEN;

/* The state argument RING.md records for `state` (0 for NULL args). */
uint64_t fs_events_state_arg(int state, const fs_nccl_state_args_t* args) FS_HIDDEN;

#endif /* FS_EVENTS_H */
