"""A training-like loop of all_reduce in which one rank stops for a while: a real hang as NCCL sees it.

Run under torchrun, one process per GPU:
    torchrun --nproc_per_node=2 stall_workload.py --stall-rank 1 --stall-seconds 5 --out stall.json

Every rank all-reduces a --size buffer --before times back to back; then --stall-rank sleeps --stall-seconds
before its next all_reduce (its peers have already entered theirs and wait on it), then all ranks do --after
more. Counts, not durations: every rank must issue the same sequence of collectives. The stalled rank writes CLOCK_MONOTONIC (the rings' clock) at the start and
end of its sleep, so the collector's detection can be dated against the real onset.
"""
import argparse
import json
import os
import time

import torch
import torch.distributed as dist


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=4 << 20, help="bytes per all_reduce")
    ap.add_argument("--before", type=int, default=2000, help="all_reduce calls before the stall")
    ap.add_argument("--after", type=int, default=1000, help="all_reduce calls after it")
    ap.add_argument("--stall-rank", type=int, default=1)
    ap.add_argument("--stall-seconds", type=float, default=5.0)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    dist.init_process_group("nccl")
    rank = dist.get_rank()
    local = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local)
    buf = torch.ones(args.size // 4, dtype=torch.float32, device=torch.device("cuda", local))
    dist.barrier()

    def run(calls):
        for i in range(calls):
            dist.all_reduce(buf)
            if i % 20 == 19:
                torch.cuda.synchronize()
        torch.cuda.synchronize()
        return calls

    before = run(args.before)
    stall = {}
    if rank == args.stall_rank:
        stall["stall_start_mono_ns"] = time.monotonic_ns()
        time.sleep(args.stall_seconds)
        stall["stall_end_mono_ns"] = time.monotonic_ns()
    after = run(args.after)
    dist.barrier()
    if rank == args.stall_rank:
        with open(args.out, "w") as f:
            json.dump({"rank": rank, "world": dist.get_world_size(), "size": args.size,
                       "all_reduce_before": before, "all_reduce_after": after, **stall}, f, indent=1)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
