#!/usr/bin/env python3
"""Bus bandwidth with the flowscope plugin versus NCCL_PROFILER_PLUGIN=none.

Reads the results files written by nccl_workload.py, named
    <config>-<transport>-<repetition>.json      config: none | plugin | kernelall | ...
and prints, per transport, collective and size, the median bus bandwidth of
each configuration over the repetitions, the loss of each configuration
against `none` in percent (positive = slower with the plugin) and the spread
of the baseline (max-min over median: of the repetitions, or with a single
repetition of its timed batches), so a loss can be read against the noise.
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
    configs = sorted({c for c, _ in runs if c != "none"}, key=lambda c: (c != "plugin", c))
    summary = {c: [] for c in configs}
    for transport in sorted({t for _, t in runs}):
        base = runs.get(("none", transport), [])
        tests = [c for c in configs if runs.get((c, transport))]
        if not base or not tests:
            continue
        print(f"\n### {transport}: {len(base)} repetitions each, interleaved\n")
        print("| collective | size | busbw none (GB/s) | " + " | ".join(
            f"busbw {c} (GB/s) | loss {c} %" for c in tests) + " | baseline spread % |")
        print("|---|---|---|" + "---|---|" * len(tests) + "---|")

        def busbw(config, coll, size):
            return [r["busbw_gbs"] for run in runs[(config, transport)] for r in run
                    if (r["collective"], r["bytes"]) == (coll, size)]

        def spread(coll, size, b):
            if len(b) > 1:
                return (max(b) - min(b)) / statistics.median(b) * 100.0
            row = [r for run in runs[("none", transport)] for r in run if (r["collective"], r["bytes"]) == (coll, size)]
            if row and "time_us_max" in row[0]:
                return (row[0]["time_us_max"] - row[0]["time_us_min"]) / row[0]["time_us"] * 100.0
            return float("nan")

        for coll, size in [(r["collective"], r["bytes"]) for r in base[0]]:
            b = busbw("none", coll, size)
            mb = statistics.median(b)
            cells = []
            for c in tests:
                p = busbw(c, coll, size)
                if not p:
                    cells.append("- | -")
                    continue
                mp = statistics.median(p)
                loss = (mb - mp) / mb * 100.0
                cells.append(f"{mp:.2f} | {loss:+.2f}")
                summary[c].append((transport, coll, size, loss))
            print(f"| {coll} | {human(size)} | {mb:.2f} | " + " | ".join(cells) + f" | {spread(coll, size, b):.2f} |")
    for c in configs:
        big = [s for s in summary[c] if s[2] >= (1 << 20)]
        if big:
            losses = [s[3] for s in big]
            worst = max(big, key=lambda s: s[3])
            print(f"\n{c}, sizes >= 1 MiB: median loss {statistics.median(losses):+.2f} %, worst {worst[3]:+.2f} % "
                  f"({worst[0]} {worst[1]} {human(worst[2])}) over {len(big)} points")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
