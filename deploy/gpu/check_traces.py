#!/usr/bin/env python3
"""Sanity of recorded traces (record-traces.sh output, testdata/traces/*): one table row per trace folder.

    python3 deploy/gpu/check_traces.py testdata/traces/*/        [--verbose]

For each folder: events.jsonl.gz lines by type, the time range of the events' timeNs, whether truth.json's fault
window [slow_start_mono_ns, slow_end_mono_ns] lies inside it, and per rank the collectives and proxy operations
that start inside the window, steps per proxy operation and the proxy-step states seen. Exit status 1 when a
folder lacks a file, has no timed events, or its window is not inside the events' range.
"""
import collections
import gzip
import json
import os
import sys


def check(folder, verbose):
    truth_path = os.path.join(folder, "truth.json")
    events_path = os.path.join(folder, "events.jsonl.gz")
    for p in (truth_path, events_path, os.path.join(folder, "workload.log")):
        if not os.path.isfile(p):
            return False, "missing " + os.path.basename(p)
    truth = json.load(open(truth_path))
    w0, w1 = truth["slow_start_mono_ns"], truth["slow_end_mono_ns"]
    types = collections.Counter()
    lo, hi = None, None
    op_rank, op_send = {}, {}
    step_op = {}
    steps_per_op = collections.Counter()
    states = collections.Counter()
    in_window = collections.Counter()  # (kind, rank) -> starts inside the window
    coll_funcs = collections.Counter()
    detached = []
    with gzip.open(events_path, "rt") as f:
        for line in f:
            e = json.loads(line)
            t = e["type"]
            types[t] += 1
            ts = e.get("timeNs")
            if ts is not None:
                lo = ts if lo is None or ts < lo else lo
                hi = ts if hi is None or ts > hi else hi
            inside = ts is not None and w0 <= ts <= w1
            if t == "collStart":
                coll_funcs[e["func"]] += 1
                if inside:
                    in_window[("coll", e["rank"])] += 1
            elif t == "proxyOpStart":
                op_rank[e["opKey"]] = e["rank"]
                op_send[e["opKey"]] = e["isSend"]
                if inside:
                    in_window[("proxyOp", e["rank"])] += 1
            elif t == "proxyStepStart":
                step_op[e["stepKey"]] = e["opKey"]
                steps_per_op[e["opKey"]] += 1
            elif t == "proxyStepState":
                states[e["state"]] += 1
            elif t == "ringDetached":
                detached.append(e.get("reason"))
    ok = lo is not None and lo < w0 <= w1 < hi
    nops = len(steps_per_op)
    spo = sum(steps_per_op.values()) / nops if nops else 0
    us = truth["us_per_op"]
    row = {
        "trace": os.path.basename(os.path.normpath(folder)),
        "bytes": os.path.getsize(events_path),
        "events": sum(types.values()),
        "span_s": (hi - lo) / 1e9 if lo is not None else 0,
        "window_s": (w1 - w0) / 1e9,
        "window_inside": ok,
        "slowdown": "%+.0f%%" % (100 * (us[1] / us[0] - 1)) if us[0] else "?",
        "steps_per_proxy_op": round(spo, 1),
        "in_window": {"%s r%d" % k: v for k, v in sorted(in_window.items())},
    }
    if verbose:
        row["types"] = dict(types)
        row["step_states"] = dict(sorted(states.items()))
        row["coll_funcs"] = dict(coll_funcs)
        row["detached"] = detached
        row["truth"] = truth
    return ok, row


def main(argv):
    verbose = "--verbose" in argv
    folders = [a for a in argv if a != "--verbose"]
    bad = 0
    for folder in folders:
        ok, row = check(folder, verbose)
        print(json.dumps(row))
        bad += 0 if ok else 1
    print("%d folders, %d not ok" % (len(folders), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
