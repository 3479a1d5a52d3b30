#!/usr/bin/env python3
"""A collective loop in three phases (before, faulty, after) with one injected fault, for labelled traces.

Run under torchrun, one process per GPU (deploy/gpu/record-traces.sh does this for a list of cases):
    torchrun --standalone --nproc_per_node=2 fault_workload.py --mode gpu --slow-rank 0 --slow-ms 1 \
        --op all_gather --size 4M --before 300 --slow 300 --after 200 --out truth.json

Every rank issues the same sequence: --warmup operations (not timed), then --before, --slow and --after
operations of --op on a --size buffer. During the middle phase the rank --slow-rank is faulty:
  none   no fault (a clean run; the middle phase is timed like the others)
  gpu    its GPU is kept busy --slow-ms (torch.cuda._sleep, calibrated at start) on the current stream before
         each operation: the NCCL kernel starts late on that rank, its peers wait in theirs
  cpu    its CPU waits for its GPU, then sleeps --slow-ms, before each operation: the rank enters NCCL late
  hang   as cpu, but once: give --slow 1 and --slow-ms >= 1000; its peers sit in the collective meanwhile
  net    each socket send()/sendmsg() of more than 1 KiB on that rank first spins --slow-us microseconds
         (needs LD_PRELOAD=slowsend.so, deploy/gpu/slowsend.c; the workload switches it on and off through
         flowscope_slowsend_set, in the faulty rank only): a slow link out of that rank
--op sendrecv is a ring exchange in one batch_isend_irecv group (send to rank+1, receive from rank-1).
Sizes: all_reduce, sendrecv: the buffer; all_gather: the output buffer; reduce_scatter: the input buffer.

The faulty rank writes --out (truth.json): rank, world, size, op, mode, slow_ms, slow_us, slow_start_mono_ns,
slow_end_mono_ns (CLOCK_MONOTONIC, time.monotonic_ns(): the plugin's ring clock), us_per_op [before, during,
after] (wall time per operation on that rank, each phase bounded by torch.cuda.synchronize()) and
transport_args. slow_ms is 0 for --mode none, slow_us / 1000 for net (slow_us is null outside net).
"""
import argparse
import ctypes
import json
import os
import sys
import time

import torch
import torch.distributed as dist


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    t = text.strip().upper().rstrip("B").rstrip("I")
    if t and t[-1] in units:
        return int(float(t[:-1]) * units[t[-1]])
    return int(t)


class Operation:
    """One collective (or the send/recv ring) with its buffers; run() only enqueues it."""

    def __init__(self, op, size, rank, world, device):
        self.op, self.rank, self.world = op, rank, world
        elems = max(size // 4, world)
        elems -= elems % world
        self.size = elems * 4
        if op == "all_reduce":
            self.a = torch.ones(elems, dtype=torch.float32, device=device)
        elif op == "all_gather":
            self.a = torch.ones(elems // world, dtype=torch.float32, device=device)
            self.b = torch.empty(elems, dtype=torch.float32, device=device)
        elif op == "reduce_scatter":
            self.a = torch.ones(elems, dtype=torch.float32, device=device)
            self.b = torch.empty(elems // world, dtype=torch.float32, device=device)
        elif op == "sendrecv":
            self.a = torch.ones(elems, dtype=torch.float32, device=device)
            self.b = torch.empty(elems, dtype=torch.float32, device=device)
        else:
            raise SystemExit("unknown --op " + op)

    def run(self):
        if self.op == "all_reduce":
            dist.all_reduce(self.a)
        elif self.op == "all_gather":
            dist.all_gather_into_tensor(self.b, self.a)
        elif self.op == "reduce_scatter":
            dist.reduce_scatter_tensor(self.b, self.a)
        else:
            to, frm = (self.rank + 1) % self.world, (self.rank - 1) % self.world
            reqs = dist.batch_isend_irecv([dist.P2POp(dist.isend, self.a, to), dist.P2POp(dist.irecv, self.b, frm)])
            for r in reqs:
                r.wait()  # makes the current stream wait for the group; does not block the CPU


def gpu_cycles_per_ms():
    """Clock cycles torch.cuda._sleep spins for one millisecond on this GPU (second of two measurements)."""
    probe = 20_000_000
    rate = None
    for _ in range(2):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        torch.cuda._sleep(probe)
        b.record()
        torch.cuda.synchronize()
        rate = probe / a.elapsed_time(b)
    return rate


def slowsend_switch():
    """flowscope_slowsend_set from the preloaded shim, or None when it is not loaded."""
    try:
        fn = ctypes.CDLL(None).flowscope_slowsend_set
    except AttributeError:
        return None
    fn.argtypes, fn.restype = [ctypes.c_uint], ctypes.c_uint
    return fn


def slowsend_count():
    try:
        fn = ctypes.CDLL(None).flowscope_slowsend_delayed
    except AttributeError:
        return -1
    fn.restype = ctypes.c_ulonglong
    return int(fn())


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", choices=["none", "gpu", "cpu", "hang", "net"], default="none")
    ap.add_argument("--slow-rank", type=int, default=1)
    ap.add_argument("--slow-ms", type=float, default=0.0)
    ap.add_argument("--slow-us", type=int, default=0)
    ap.add_argument("--op", choices=["all_reduce", "all_gather", "reduce_scatter", "sendrecv"], default="all_reduce")
    ap.add_argument("--size", default="4M", help="bytes, suffix K/M/G (binary)")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--before", type=int, default=300)
    ap.add_argument("--slow", type=int, default=300)
    ap.add_argument("--after", type=int, default=200)
    ap.add_argument("--sync-every", type=int, default=10,
                    help="torch.cuda.synchronize() after every N operations on every rank (0: only between phases)")
    ap.add_argument("--transport-label", default="", help="recorded first in truth.json's transport_args")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    if args.mode in ("gpu", "cpu", "hang") and args.slow_ms <= 0:
        raise SystemExit("--mode %s needs --slow-ms > 0" % args.mode)
    if args.mode == "net" and args.slow_us <= 0:
        raise SystemExit("--mode net needs --slow-us > 0")

    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    device = torch.device("cuda", local)
    dist.init_process_group("nccl", device_id=device)
    rank, world = dist.get_rank(), dist.get_world_size()
    faulty = rank == args.slow_rank and args.mode != "none"
    size = parse_size(args.size)
    op = Operation(args.op, size, rank, world, device)

    cycles = int(gpu_cycles_per_ms() * args.slow_ms) if args.mode == "gpu" and faulty else 0
    switch = slowsend_switch() if args.mode == "net" and faulty else None
    if args.mode == "net" and faulty and switch is None:
        raise SystemExit("--mode net: flowscope_slowsend_set not found (run with LD_PRELOAD=slowsend.so)")

    def inject():
        if args.mode == "gpu":
            torch.cuda._sleep(cycles)
        elif args.mode in ("cpu", "hang"):
            torch.cuda.synchronize()
            time.sleep(args.slow_ms / 1000.0)

    def phase(n, with_fault):
        torch.cuda.synchronize()
        t0 = time.monotonic_ns()
        if with_fault and switch is not None:
            switch(args.slow_us)
        for i in range(n):
            if with_fault and faulty:
                inject()
            op.run()
            if args.sync_every and (i + 1) % args.sync_every == 0:
                torch.cuda.synchronize()
        torch.cuda.synchronize()
        if with_fault and switch is not None:
            switch(0)
        t1 = time.monotonic_ns()
        return t0, t1

    dist.barrier()
    phase(args.warmup, False)
    b0, b1 = phase(args.before, False)
    s0, s1 = phase(args.slow, True)
    a0, a1 = phase(args.after, False)
    us = [(b1 - b0) / 1e3 / max(args.before, 1), (s1 - s0) / 1e3 / max(args.slow, 1),
          (a1 - a0) / 1e3 / max(args.after, 1)]
    print("rank %d: %s %d B, us/op before %.1f during %.1f after %.1f; faulty=%s%s%s" % (
        rank, args.op, op.size, us[0], us[1], us[2], faulty,
        " gpu_sleep_cycles=%d" % cycles if cycles else "",
        " delayed_sends=%d" % slowsend_count() if switch is not None else ""), flush=True)

    dist.barrier()
    if rank == (args.slow_rank % world):
        argv = ["--mode", args.mode, "--slow-rank", str(args.slow_rank), "--op", args.op, "--size", str(op.size),
                "--before", str(args.before), "--slow", str(args.slow), "--after", str(args.after),
                "--sync-every", str(args.sync_every)]
        if args.mode == "net":
            argv += ["--slow-us", str(args.slow_us)]
        elif args.mode != "none":
            argv += ["--slow-ms", "%g" % args.slow_ms]
        truth = {"rank": rank, "world": world, "size": op.size, "op": args.op, "mode": args.mode,
                 "slow_ms": (args.slow_us / 1000.0 if args.mode == "net" else
                             0.0 if args.mode == "none" else float(args.slow_ms)),
                 "slow_us": args.slow_us if args.mode == "net" else None,
                 "slow_start_mono_ns": s0, "slow_end_mono_ns": s1, "us_per_op": us,
                 "transport_args": " ".join(([args.transport_label] if args.transport_label else []) + argv)}
        with open(args.out, "w") as f:
            json.dump(truth, f, indent=1)
        print("truth: " + json.dumps(truth), flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
