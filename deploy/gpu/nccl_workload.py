#!/usr/bin/env python3
"""NCCL collectives through torch.distributed, timed like nccl-tests.

Run under torchrun, one process per GPU:
    torchrun --nproc_per_node=2 nccl_workload.py --out results.json

For each collective and message size it times `trials` batches of `iters`
back-to-back operations with CUDA events (after warm-up), takes for each batch
the slowest rank's time, and reports the median batch (and the fastest and
slowest), so one stall of the machine does not decide a point. Bandwidths use
nccl-tests' factors:
    all_reduce      busbw = algbw * 2 (n-1) / n
    all_gather      busbw = algbw * (n-1) / n     (size = whole output buffer)
    reduce_scatter  busbw = algbw * (n-1) / n     (size = whole input buffer)
    sendrecv        busbw = algbw                 (ring exchange: send to r+1, receive from r-1)
The profiler plugin (or none) is chosen by the caller through NCCL_PROFILER_PLUGIN.
"""
import argparse
import json
import os
import statistics
import time

import torch
import torch.distributed as dist


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper().rstrip("B").rstrip("I")
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def sizes_between(lo, hi, factor):
    size = lo
    while size <= hi:
        yield size
        size *= factor


def iterations_for(size, budget_bytes, lo_iters, hi_iters):
    return max(lo_iters, min(hi_iters, budget_bytes // max(size, 1)))


class Collective:
    def __init__(self, name, world, rank, size_bytes, device):
        self.name, self.world, self.rank = name, world, rank
        n = world
        elems = max(size_bytes // 4, n)
        elems -= elems % n
        self.bytes = elems * 4
        if name == "all_reduce":
            self.buf = torch.ones(elems, dtype=torch.float32, device=device)
            self.factor = 2.0 * (n - 1) / n
        elif name == "all_gather":
            self.out = torch.empty(elems, dtype=torch.float32, device=device)
            self.inp = torch.ones(elems // n, dtype=torch.float32, device=device)
            self.factor = (n - 1) / n
        elif name == "reduce_scatter":
            self.inp = torch.ones(elems, dtype=torch.float32, device=device)
            self.out = torch.empty(elems // n, dtype=torch.float32, device=device)
            self.factor = (n - 1) / n
        elif name == "sendrecv":
            self.send = torch.ones(elems, dtype=torch.float32, device=device)
            self.recv = torch.empty(elems, dtype=torch.float32, device=device)
            self.factor = 1.0
        else:
            raise ValueError(name)

    def run(self):
        if self.name == "all_reduce":
            dist.all_reduce(self.buf)
        elif self.name == "all_gather":
            dist.all_gather_into_tensor(self.out, self.inp)
        elif self.name == "reduce_scatter":
            dist.reduce_scatter_tensor(self.out, self.inp)
        else:
            nxt, prv = (self.rank + 1) % self.world, (self.rank - 1) % self.world
            ops = [dist.P2POp(dist.isend, self.send, nxt), dist.P2POp(dist.irecv, self.recv, prv)]
            for req in dist.batch_isend_irecv(ops):
                req.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--collectives", default="all_reduce,all_gather,reduce_scatter,sendrecv")
    ap.add_argument("--min-size", default="1K")
    ap.add_argument("--max-size", default="1G")
    ap.add_argument("--factor", type=int, default=4)
    ap.add_argument("--budget", default="4G", help="bytes moved per measurement (sets iterations)")
    ap.add_argument("--min-iters", type=int, default=5)
    ap.add_argument("--max-iters", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--trials", type=int, default=5, help="timed batches per size; the median is reported")
    ap.add_argument("--out", required=True)
    ap.add_argument("--label", default="")
    args = ap.parse_args()

    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    local = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local)
    device = torch.device("cuda", local)
    dist.barrier()

    results = []
    budget = parse_size(args.budget)
    started = time.time()
    for name in args.collectives.split(","):
        for size in sizes_between(parse_size(args.min_size), parse_size(args.max_size), args.factor):
            coll = Collective(name, world, rank, size, device)
            iters = iterations_for(coll.bytes, budget, args.min_iters, args.max_iters)
            for _ in range(args.warmup):
                coll.run()
            torch.cuda.synchronize()
            batches = []
            for _ in range(args.trials):
                dist.barrier()
                start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                for _ in range(iters):
                    coll.run()
                stop.record()
                torch.cuda.synchronize()
                # The slowest rank defines the collective's time, as in nccl-tests.
                t = torch.tensor([start.elapsed_time(stop) / 1000.0 / iters], dtype=torch.float64, device=device)
                dist.all_reduce(t, op=dist.ReduceOp.MAX)
                batches.append(t.item())
            seconds = statistics.median(batches)
            algbw = coll.bytes / seconds / 1e9
            results.append({"collective": name, "bytes": coll.bytes, "iters": iters, "trials": args.trials,
                            "time_us": seconds * 1e6, "time_us_min": min(batches) * 1e6,
                            "time_us_max": max(batches) * 1e6, "algbw_gbs": algbw,
                            "busbw_gbs": algbw * coll.factor})
            del coll
    if rank == 0:
        nccl = ".".join(str(v) for v in torch.cuda.nccl.version())
        with open(args.out, "w") as f:
            json.dump({"label": args.label, "world": world, "nccl": nccl, "torch": torch.__version__,
                       "profiler_plugin": os.environ.get("NCCL_PROFILER_PLUGIN", ""),
                       "seconds": time.time() - started, "results": results}, f, indent=1)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
