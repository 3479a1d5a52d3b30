#!/usr/bin/env python3
"""Summary of overhead-busbw.sh: per transport, collective and size, the median over repetitions of each run's
median bus bandwidth for `none` and each other configuration, the change config/none - 1 (%), and the spread of the
config's runs (min..max of each run's change against the none median). Usage: compare_busbw.py DIR"""
import glob
import json
import os
import statistics
import sys
from collections import defaultdict

from compare_overhead import human  # the size names of the torch-workload summary


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "."
    runs = defaultdict(list)  # (transport, config, coll, bytes) -> [busbw of each run]
    for path in glob.glob(os.path.join(d, "*.jsonl")):
        transport, config, _rep = os.path.basename(path)[:-6].rsplit("-", 2)
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    p = json.loads(line)
                    runs[(transport, config, p["coll"], p["bytes"])].append(p["busbw_gbs"])
    for transport in sorted({k[0] for k in runs}):
        configs = sorted({k[1] for k in runs if k[0] == transport and k[1] != "none"},
                         key=lambda c: (c != "noop", c != "default", c))
        for config in configs:
            table(runs, transport, config)


def table(runs, transport, config):
    print(f"\n### {transport}: bus bandwidth, {config} vs none (median of runs, GB/s; change %, runs' spread %)\n")
    print(f"| collective | size | none | {config} | change | spread of {config} runs | runs |")
    print("|---|---|---|---|---|---|---|")
    worst = []
    for coll in ("all_reduce", "all_gather", "reduce_scatter", "sendrecv"):
        for b in sorted({k[3] for k in runs if k[0] == transport and k[2] == coll}):
            none, on = runs.get((transport, "none", coll, b)), runs.get((transport, config, coll, b))
            if not none or not on:
                continue
            mn, mo = statistics.median(none), statistics.median(on)
            change = (mo / mn - 1) * 100
            spread = [(x / mn - 1) * 100 for x in on]
            if b >= 1 << 20:
                worst.append((change, coll, b))
            print(f"| {coll} | {human(b)} | {mn:.2f} | {mo:.2f} | {change:+.2f} % | {min(spread):+.1f} … "
                  f"{max(spread):+.1f} | {len(none)}/{len(on)} |")
    if worst:
        losses = [w for w in worst if w[0] < -1.0]
        print(f"\n{transport} {config}, ≥ 1 MiB: {len(worst)} points, changes {min(w[0] for w in worst):+.2f} … "
              f"{max(w[0] for w in worst):+.2f} %; losses > 1 %: "
              + (", ".join(f"{c} {human(b)} {x:+.2f} %" for x, c, b in losses) if losses else "none"))


if __name__ == "__main__":
    main()
