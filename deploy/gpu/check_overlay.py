#!/usr/bin/env python3
"""Lays flowscope's Perfetto export over PyTorch profiler traces of the same run (deploy/gpu/perfetto-overlay.sh):
for each rank, each NCCL kernel of the PyTorch trace (cat "kernel", name with "nccl") is matched to the flowscope
GPU collective slice of that rank that starts nearest to it, and the start and duration differences are
reported. Both files are compared on Unix time (baseTimeNanoseconds + ts, as Kineto and flowscope write them), so
the differences are the two tools' clock errors together. Exit 0 when the export is on the ring anchors and the
median |start difference| is under --tolerance-us.

    check_overlay.py FLOWSCOPE.json TORCH-rank0.json [TORCH-rank1.json ...] [--tolerance-us 100]"""
import argparse
import bisect
import json
import re
import statistics
import sys
from decimal import Decimal

p = argparse.ArgumentParser()
p.add_argument("flowscope")
p.add_argument("torch", nargs="+")
p.add_argument("--tolerance-us", type=float, default=100.0)
a = p.parse_args()

fs = json.load(open(a.flowscope), parse_float=Decimal)
other = fs.get("otherData", {})
fs_base_us = Decimal(fs.get("baseTimeNanoseconds", 0)) / 1000  # Unix µs = base + ts, as Kineto writes it
print(f"flowscope: clockSource={other.get('clockSource')} baseTimeNanoseconds={fs.get('baseTimeNanoseconds')} "
      f"hosts={other.get('hosts')}")
rank_of_pid = {}
for e in fs["traceEvents"]:
    if e.get("ph") == "M" and e.get("name") == "process_name":
        m = re.search(r"rank (\d+)", e["args"]["name"])
        if m:
            rank_of_pid[e["pid"]] = int(m.group(1))
gpu = {}
for e in fs["traceEvents"]:
    if e.get("ph") == "X" and e.get("cat") == "collective" and e.get("args", {}).get("gpuTimed"):
        r = rank_of_pid.get(e["pid"])
        gpu.setdefault(r, []).append((float(fs_base_us + Decimal(e["ts"])), float(e["dur"]), e["name"]))
for l in gpu.values():
    l.sort()
print("flowscope GPU collectives per rank:", {r: len(l) for r, l in gpu.items()})

ok = other.get("clockSource") == "ring-anchor"
for path in a.torch:
    t = json.load(open(path))
    base = t.get("baseTimeNanoseconds")
    m = re.search(r"rank(\d+)", path)
    rank = int(m.group(1)) if m else 0
    kernels = [e for e in t.get("traceEvents", []) if e.get("ph") == "X" and e.get("cat") == "kernel"
               and "nccl" in e.get("name", "").lower()]
    if not kernels:
        print(f"{path}: no NCCL kernels"); ok = False; continue
    first = float(kernels[0]["ts"])
    # Kineto: Unix µs = baseTimeNanoseconds / 1000 + ts (older versions: no base, ts are Unix µs)
    shift = base / 1000.0 if base else 0.0
    print(f"{path}: rank {rank}, {len(kernels)} NCCL kernels, first ts {first} us, baseTimeNanoseconds {base}, "
          f"same base as flowscope's: {base == fs.get('baseTimeNanoseconds')}")
    mine = gpu.get(rank, [])
    starts = [s for s, _, _ in mine]
    ds, dd = [], []
    for k in kernels:
        ts = float(k["ts"]) + shift
        i = bisect.bisect_left(starts, ts)
        best = min((j for j in (i - 1, i) if 0 <= j < len(mine)), key=lambda j: abs(starts[j] - ts), default=None)
        if best is None:
            continue
        ds.append(starts[best] - ts)
        dd.append(mine[best][1] - float(k.get("dur", 0)))
    if not ds:
        print(f"  rank {rank}: nothing to match"); ok = False; continue
    ads = sorted(abs(d) for d in ds)
    med = statistics.median(ads)
    print(f"  rank {rank}: {len(ds)} matched; flowscope start - torch start (us): median {statistics.median(ds):.1f}, "
          f"|median| {med:.1f}, p90 |d| {ads[int(0.9 * (len(ads) - 1))]:.1f}, max |d| {ads[-1]:.1f}; "
          f"duration difference median {statistics.median(dd):.1f} us")
    ok &= med < a.tolerance_us
print("overlay:", "OK" if ok else "NOT ALIGNED")
sys.exit(0 if ok else 1)
