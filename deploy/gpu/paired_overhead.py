#!/usr/bin/env python3
"""The plugin's cost on real NCCL, measured in pairs of batches inside one process.

Run under torchrun (one process per GPU) with NCCL_PROFILER_PLUGIN pointing at mask_shim.so and FS_SHIM_PLUGIN at
the real plugin (deploy/gpu/overhead-paired.sh does it). For every collective and size: a warm-up, then `trials`
pairs of batches of back-to-back operations timed with CUDA events (the slowest rank's time, as nccl-tests): one
batch with NCCL's event mask as the plugin set it ("on"), one with the mask at 0 ("off": NCCL makes no profiler call),
in alternating order (on-off, off-on, ...), every switch between a synchronize and a barrier. Reported per point: the
median batch time of each state, and the median and quartiles of the paired change (on / off - 1), which cancels
what differs from process to process and drifts over a run (host speed in a VM guest, GPU clock state).

Bandwidth factors as nccl_workload.py (nccl-tests' busbw).
"""
import argparse
import ctypes
import json
import os
import statistics
import time

import torch
import torch.distributed as dist

from nccl_workload import Collective, iterations_for, parse_size, sizes_between


def quartiles(values):
    v = sorted(values)
    q = statistics.quantiles(v, n=4) if len(v) >= 2 else [v[0]] * 3
    return q[0], statistics.median(v), q[2]


def interquartile_mean(values):
    """Mean of the middle half: as robust as the median to the occasional 3x batch, less noisy than it."""
    v = sorted(values)
    k = len(v) // 4
    middle = v[k:len(v) - k] or v
    return sum(middle) / len(middle)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--collectives", default="all_reduce,all_gather,reduce_scatter,sendrecv")
    ap.add_argument("--min-size", default="1K")
    ap.add_argument("--max-size", default="1G")
    ap.add_argument("--factor", type=int, default=4)
    ap.add_argument("--budget", default="1G", help="bytes moved per batch (sets iterations)")
    ap.add_argument("--min-iters", type=int, default=5)
    ap.add_argument("--max-iters", type=int, default=1000,
                    help="operations per batch at most (long batches average the launch-bound range's 3x swings)")
    ap.add_argument("--min-trials", type=int, default=8, help="pairs per point at least")
    ap.add_argument("--max-trials", type=int, default=40, help="pairs per point at most")
    ap.add_argument("--point-seconds", type=float, default=2.0, help="time per point, within the trial bounds")
    ap.add_argument("--warmup-seconds", type=float, default=3.0, help="GPU busy before the first point")
    ap.add_argument("--out", required=True)
    ap.add_argument("--label", default="")
    args = ap.parse_args()

    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    local = int(os.environ.get("LOCAL_RANK", rank))
    torch.cuda.set_device(local)
    device = torch.device("cuda", local)
    dist.barrier()
    shim = ctypes.CDLL(os.environ["NCCL_PROFILER_PLUGIN"])   # the loaded shim: dlopen returns the same instance
    shim.fs_shim_pause.restype = ctypes.c_int
    mask_on = shim.fs_shim_pause(0)

    def set_state(on):
        torch.cuda.synchronize()
        dist.barrier()
        torch.cuda.synchronize()
        mask = shim.fs_shim_pause(0 if on else 1)
        dist.barrier()
        torch.cuda.synchronize()
        return mask

    # The GPUs leave their idle clocks before anything is timed.
    warm = Collective("all_reduce", world, rank, 64 << 20, device)
    t0 = time.time()
    while time.time() - t0 < args.warmup_seconds:
        for _ in range(20):
            warm.run()
        torch.cuda.synchronize()
    del warm

    results = []
    budget = parse_size(args.budget)
    started = time.time()
    for name in args.collectives.split(","):
        for size in sizes_between(parse_size(args.min_size), parse_size(args.max_size), args.factor):
            coll = Collective(name, world, rank, size, device)
            iters = iterations_for(coll.bytes, budget, args.min_iters, args.max_iters)
            for on in (True, False):
                set_state(on)
                for _ in range(3):
                    coll.run()
            times = {True: [], False: []}
            host = {True: [], False: []}
            pairs = []
            host_pairs = []
            point_start = time.time()
            trial = 0
            while trial < args.max_trials:
                flag = torch.tensor([1.0 if trial < args.min_trials or
                                     time.time() - point_start < args.point_seconds else 0.0], device=device)
                dist.all_reduce(flag, op=dist.ReduceOp.MIN)   # every rank stops at the same trial
                if flag.item() == 0.0:
                    break
                got = {}
                for on in ((True, False) if trial % 2 == 0 else (False, True)):
                    mask = set_state(on)
                    if (mask != 0) != on:
                        raise SystemExit(f"mask switch failed: wanted {'on' if on else 'off'}, NCCL mask {mask}")
                    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    start.record()
                    host0 = time.perf_counter()
                    for _ in range(iters):
                        coll.run()
                    host1 = time.perf_counter()
                    stop.record()
                    torch.cuda.synchronize()
                    # GPU time of the batch (slowest rank) and the host's enqueue time per operation (slowest rank):
                    # in the launch-bound range the second is what the plugin's callbacks add to.
                    t = torch.tensor([start.elapsed_time(stop) / 1000.0 / iters, (host1 - host0) / iters],
                                     dtype=torch.float64, device=device)
                    dist.all_reduce(t, op=dist.ReduceOp.MAX)
                    got[on] = t[0].item()
                    host[on].append(t[1].item())
                    times[on].append(got[on])
                pairs.append(got[True] / got[False] - 1.0)
                host_pairs.append(host[True][-1] - host[False][-1])
                trial += 1
            q1, med, q3 = quartiles(pairs)
            t_on, t_off = statistics.median(times[True]), statistics.median(times[False])
            results.append({"collective": name, "bytes": coll.bytes, "iters": iters, "pairs": len(pairs),
                            "time_us_on": t_on * 1e6, "time_us_off": t_off * 1e6,
                            "busbw_gbs_on": coll.bytes / t_on / 1e9 * coll.factor,
                            "busbw_gbs_off": coll.bytes / t_off / 1e9 * coll.factor,
                            "change_median": med, "change_q1": q1, "change_q3": q3,
                            "change_iqm": interquartile_mean(pairs),
                            "host_us_on": statistics.median(host[True]) * 1e6,
                            "host_us_off": statistics.median(host[False]) * 1e6,
                            "host_added_us_iqm": interquartile_mean(host_pairs) * 1e6,
                            "host_added_us_median": statistics.median(host_pairs) * 1e6,
                            "changes": pairs})
            if rank == 0:
                print(f"{name:15s} {coll.bytes:>11d} B  off {t_off * 1e6:10.1f} us  on {t_on * 1e6:10.1f} us  "
                      f"change median {100 * med:+6.2f} % [{100 * q1:+.2f} .. {100 * q3:+.2f}] "
                      f"iqm {100 * interquartile_mean(pairs):+6.2f} %  host/op {statistics.median(host[False]) * 1e6:.2f} us "
                      f"{interquartile_mean(host_pairs) * 1e6:+.3f} us  ({len(pairs)} pairs)",
                      flush=True)
            del coll
    set_state(True)
    if rank == 0:
        nccl = ".".join(str(v) for v in torch.cuda.nccl.version())
        with open(args.out, "w") as f:
            json.dump({"label": args.label, "world": world, "nccl": nccl, "torch": torch.__version__,
                       "mask_on": mask_on, "seconds": time.time() - started, "results": results}, f, indent=1)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
