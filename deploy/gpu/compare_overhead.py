#!/usr/bin/env python3
"""Bus bandwidth with the flowscope plugin versus NCCL_PROFILER_PLUGIN=none.

Reads the results files written by nccl_workload.py, named
    <config>-<transport>-<repetition>.json      config: none | plugin
and prints, per transport, collective and size, the median bus bandwidth of
each configuration over the repetitions, the loss of the plugin in percent
(positive = slower with the plugin) and the spread of the baseline (max-min
over median), so a loss can be read against the run-to-run noise.
"""
import glob
import json
import os
import statistics
import sys
from collections import defaultdict


def human(n):
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div:
            return f"{n / div:g} {unit}"
    return f"{n} B"


def main(folder):
    runs = defaultdict(list)  # (config, transport) -> [results]
    meta = {}
    for path in sorted(glob.glob(os.path.join(folder, "*-*-*.json"))):
        config, transport, _ = os.path.basename(path)[:-5].split("-", 2)
        with open(path) as f:
            data = json.load(f)
        runs[(config, transport)].append(data["results"])
        meta = data
    print(f"NCCL {meta.get('nccl')}, torch {meta.get('torch')}, {meta.get('world')} ranks")
    summary = []
    for transport in sorted({t for _, t in runs}):
        base, test = runs.get(("none", transport), []), runs.get(("plugin", transport), [])
        if not base or not test:
            continue
        print(f"\n### {transport}: {len(base)} repetitions each, interleaved\n")
        print("| collective | size | busbw none (GB/s) | busbw plugin (GB/s) | loss % | baseline spread % |")
        print("|---|---|---|---|---|---|")
        keys = [(r["collective"], r["bytes"]) for r in base[0]]
        for coll, size in keys:
            b = [r["busbw_gbs"] for run in base for r in run if (r["collective"], r["bytes"]) == (coll, size)]
            p = [r["busbw_gbs"] for run in test for r in run if (r["collective"], r["bytes"]) == (coll, size)]
            if not b or not p:
                continue
            mb, mp = statistics.median(b), statistics.median(p)
            loss = (mb - mp) / mb * 100.0
            spread = (max(b) - min(b)) / mb * 100.0
            print(f"| {coll} | {human(size)} | {mb:.2f} | {mp:.2f} | {loss:+.2f} | {spread:.2f} |")
            summary.append((transport, coll, size, loss, spread))
    big = [s for s in summary if s[2] >= (1 << 20)]
    if big:
        losses = [s[3] for s in big]
        print(f"\nsizes >= 1 MiB: median loss {statistics.median(losses):+.2f} %, "
              f"worst {max(losses):+.2f} % over {len(big)} (transport, collective, size) points")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
