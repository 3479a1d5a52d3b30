#!/usr/bin/env python3
"""Every kind of NCCL operation, many times, with its results checked: the workload of
deploy/gpu/kernel-sampling.sh (KernelCh sampling must never hang NCCL nor change a result).

Run under torchrun, one process per GPU:
    torchrun --nproc_per_node=2 sampling_workload.py --iters 20000

Each iteration issues, on the default process group, six NCCL groups (twelve operations):
    all_reduce                      one operation
    all_gather_into_tensor          one operation
    reduce_scatter_tensor           one operation
    send/recv                       batch_isend_irecv: a send to the next rank, a receive from the previous
    grouped p2p                     batch_isend_irecv: two sends and two receives in one group
    coalesced all_reduce            three all_reduce in one group (torch's _coalescing_manager)
at sizes cycling over 1 KiB .. 256 KiB. Every result is compared with its expected value on the GPU
(no host synchronisation per operation); one flag per kind collects mismatches. At the end the
flags are summed over ranks and printed (RESULT ok / RESULT WRONG), then the process group is
destroyed: a profiler proxy operation left waiting would hang there, so the caller's timeout sees it.
"""
import argparse
import os
import time

import torch
import torch.distributed as dist

KINDS = ["all_reduce", "all_gather", "reduce_scatter", "sendrecv", "grouped_p2p", "coalesced_all_reduce"]
SIZES = [256, 1024, 4096, 16384, 65536]  # float32 elements: 1 KiB .. 256 KiB


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--iters", type=int, default=20000)
    ap.add_argument("--label", default="")
    args = ap.parse_args()

    local = int(os.environ.get("LOCAL_RANK", 0))
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    dist.init_process_group("nccl", device_id=dev)
    rank, world = dist.get_rank(), dist.get_world_size()
    nxt, prv = (rank + 1) % world, (rank - 1) % world
    tri = world * (world + 1) / 2.0  # sum over ranks of (r + 1)
    try:
        from torch.distributed.distributed_c10d import _coalescing_manager
    except ImportError:  # pragma: no cover
        _coalescing_manager = None

    buf = {}
    for n in SIZES:
        m = n * world
        buf[n] = {
            "ar": torch.empty(n, device=dev),
            "ag_in": torch.empty(n, device=dev), "ag_out": torch.empty(m, device=dev),
            "ag_exp": torch.arange(world, device=dev, dtype=torch.float32).add_(1).repeat_interleave(n),
            "rs_in": torch.empty(m, device=dev), "rs_out": torch.empty(n, device=dev),
            "s1": torch.empty(n, device=dev), "r1": torch.empty(n, device=dev),
            "s2": torch.empty(n, device=dev), "r2": torch.empty(n, device=dev),
            "c": [torch.empty(n, device=dev) for _ in range(3)],
        }
    bad = {k: torch.zeros((), dtype=torch.bool, device=dev) for k in KINDS}
    counts = dict.fromkeys(KINDS, 0)

    def check(kind, got, want):
        bad[kind].logical_or_(torch.ne(got, want).any())

    dist.barrier()
    torch.cuda.synchronize()
    t0 = time.time()
    for i in range(args.iters):
        n = SIZES[i % len(SIZES)]
        b = buf[n]
        k = float(i % 13 + 1)
        mine = (rank + 1) * k
        # all_reduce
        b["ar"].fill_(mine)
        dist.all_reduce(b["ar"])
        check("all_reduce", b["ar"], k * tri)
        # all_gather
        b["ag_in"].fill_(mine)
        dist.all_gather_into_tensor(b["ag_out"], b["ag_in"])
        check("all_gather", b["ag_out"], b["ag_exp"] * k)
        # reduce_scatter
        b["rs_in"].fill_(mine)
        dist.reduce_scatter_tensor(b["rs_out"], b["rs_in"])
        check("reduce_scatter", b["rs_out"], k * tri)
        # send/recv (one send, one receive: a fused pair in NCCL's kernel)
        b["s1"].fill_(mine)
        for req in dist.batch_isend_irecv([dist.P2POp(dist.isend, b["s1"], nxt), dist.P2POp(dist.irecv, b["r1"], prv)]):
            req.wait()
        check("sendrecv", b["r1"], (prv + 1) * k)
        # grouped p2p: two sends, two receives, one group
        b["s2"].fill_(mine + 0.5)
        ops = [dist.P2POp(dist.isend, b["s1"], nxt), dist.P2POp(dist.isend, b["s2"], nxt),
               dist.P2POp(dist.irecv, b["r1"], prv), dist.P2POp(dist.irecv, b["r2"], prv)]
        for req in dist.batch_isend_irecv(ops):
            req.wait()
        check("grouped_p2p", b["r1"], (prv + 1) * k)
        check("grouped_p2p", b["r2"], (prv + 1) * k + 0.5)
        # three all_reduce in one group
        for j, t in enumerate(b["c"]):
            t.fill_(mine * (j + 1))
        if _coalescing_manager is not None:
            with _coalescing_manager(device=dev):
                for t in b["c"]:
                    dist.all_reduce(t)
        else:
            for t in b["c"]:
                dist.all_reduce(t)
        for j, t in enumerate(b["c"]):
            check("coalesced_all_reduce", t, k * tri * (j + 1))
        for kind in KINDS:
            counts[kind] += 1
        if rank == 0 and (i + 1) % 5000 == 0:
            torch.cuda.synchronize()
            print(f"[{args.label}] {i + 1} iterations, {time.time() - t0:.1f} s", flush=True)
    torch.cuda.synchronize()
    elapsed = time.time() - t0
    flags = torch.stack([bad[k] for k in KINDS]).to(torch.int32)
    dist.all_reduce(flags)
    wrong = [k for k, f in zip(KINDS, flags.tolist()) if f]
    if rank == 0:
        per = ", ".join(f"{k} {counts[k]}" for k in KINDS)
        print(f"[{args.label}] nccl {'.'.join(map(str, torch.cuda.nccl.version()))} world {world} "
              f"coalescing_manager {_coalescing_manager is not None}: {per} groups in {elapsed:.1f} s", flush=True)
        print(f"[{args.label}] RESULT {'ok' if not wrong else 'WRONG ' + ','.join(wrong)}", flush=True)
    dist.barrier()
    t1 = time.time()
    dist.destroy_process_group()
    print(f"[{args.label}] rank {rank} destroyed the process group in {time.time() - t1:.2f} s", flush=True)


if __name__ == "__main__":
    main()
