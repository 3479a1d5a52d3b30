#!/usr/bin/env python3
"""Checks the KernelCh records of the rings of one run against FLOWSCOPE_KERNEL_SAMPLING=N.

    check_sampling.py RING_DIR N [--label L]

Reads every ring file in RING_DIR (profiler-plugin/RING.md, layout 1.x; the producers are gone, no
consumer ran: lane l holds its records at positions 0 .. tail-1) with numpy, links
KernelCh -> Coll/P2p -> CollApi/P2pApi -> GroupApi, and numbers, per communicator, the groups that
carry a task of it (k = 0, 1, 2 ...; a group = the tasks appended before one kernel launch, as
the plugin counts them). Then, for each rank and communicator:
  - every task of a sampled group has KernelCh, no task of another group has it;
  - N = 1: every group is sampled; N > 1: exactly the groups k with k % N == 0 are;
  - every KernelCh has a stop pTimer >= its start pTimer;
and across ranks: the same groups of each communicator are sampled on every rank.
Prints one summary line per ring and per communicator, and 'CHECK ok' or 'CHECK FAIL: ...';
exit status 0 / 1.
"""
import glob
import os
import sys
from collections import defaultdict

import numpy as np

REC = np.dtype([("seq", "<u8"), ("kind", "u1"), ("op", "u1"), ("thread", "<u2"), ("ck", "<u4"),
                ("time", "<u8"), ("id", "<u8"), ("parent", "<u8"), ("p0", "<u8"), ("p1", "<u8"), ("p2", "<u8")])
GROUP_API, COLL_API, P2P_API, COLL, P2P, KERNEL_CH, KERNEL_LAUNCH = 8, 9, 10, 1, 2, 6, 11
START, STOP, STATE = 1, 2, 3
KERNEL_CH_STOP = 22


def u64(b, off):
    return int.from_bytes(b[off:off + 8], "little")


def u32(b, off):
    return int.from_bytes(b[off:off + 4], "little")


def read_ring(path):
    with open(path, "rb") as f:
        head = f.read(262144)
    assert head[:8] == b"FSRING1\n", f"{path}: not a ring"
    capacity, header_size = u64(head, 16), u64(head, 24)
    lanes, lane_cap = u32(head, 192), u64(head, 200)
    info = {"pid": int.from_bytes(head[32:36], "little", signed=True), "abi": u32(head, 36),
            "nccl": u32(head, 40), "mask": hex(u32(head, 44)), "dropped_full": u64(head, 896),
            "dropped_abandoned": u64(head, 904), "dropped_contended": u64(head, 912),
            "invalid_calls": u64(head, 920), "lanes": lanes}
    comms = {}
    for i in range(u32(head, 92)):
        e = head[16384 + 128 * i:16384 + 128 * (i + 1)]
        comms[i] = {"hash": u64(e, 0), "rank": int.from_bytes(e[12:16], "little", signed=True),
                    "nranks": int.from_bytes(e[16:20], "little", signed=True)}
    recs = np.memmap(path, dtype=REC, mode="r", offset=header_size, shape=(capacity,))
    slot = np.arange(capacity, dtype=np.uint64) % np.uint64(lane_cap)
    valid = recs["seq"] == slot + np.uint64(1)
    r = np.array(recs[valid])
    info["records"] = int(len(r))
    return info, comms, r


def analyse(path, n):
    info, comms, r = read_ring(path)
    comm_of = lambda i: comms.get((int(i) >> 48) & 0xFFF, {"hash": -1})["hash"]  # noqa: E731
    r = r[np.argsort(r["time"], kind="stable")]
    st = r[r["op"] == START]
    # A group is what NCCL launches together: the tasks appended between two kernel launches
    # (KernelLaunch starts, recorded with the mask's kernellaunch); without them, one GroupApi event.
    api_group = {}  # CollApi/P2pApi id -> group id
    api_order = []  # (comm hash, group id) in time order
    by_launch = bool(np.any(st["kind"] == KERNEL_LAUNCH))
    group, pending = 0, False
    for rec in st[(st["kind"] == COLL_API) | (st["kind"] == P2P_API) | (st["kind"] == KERNEL_LAUNCH)]:
        if rec["kind"] == KERNEL_LAUNCH:
            if pending:
                group, pending = group + 1, False
            continue
        g = group if by_launch else int(rec["parent"])
        pending = True
        api_group[int(rec["id"])] = g
        api_order.append((comm_of(rec["id"]), g))
    group_index = {}  # (comm, group id) -> k
    ngroups = defaultdict(int)
    for c, g in api_order:
        if (c, g) not in group_index:
            group_index[(c, g)] = ngroups[c]
            ngroups[c] += 1
    task_group = {}  # Coll/P2p id -> (comm, k)
    for rec in st[(st["kind"] == COLL) | (st["kind"] == P2P)]:
        g = api_group.get(int(rec["parent"]))
        c = comm_of(rec["id"])
        if g is not None and (c, g) in group_index:
            task_group[int(rec["id"])] = (c, group_index[(c, g)])
    tasks_of = defaultdict(set)  # (comm, k) -> task ids
    for t, ck in task_group.items():
        tasks_of[ck].add(t)
    kc = st[st["kind"] == KERNEL_CH]
    kc_tasks = set(int(p) for p in kc["parent"])
    unlinked = len(kc_tasks - set(task_group))
    stops = r[(r["op"] == STATE) & (r["kind"] == KERNEL_CH) & (r["p0"] == KERNEL_CH_STOP)]
    stop_of = dict(zip(stops["id"].tolist(), stops["p1"].tolist()))
    bad_timer = sum(1 for i, t in zip(kc["id"].tolist(), kc["p1"].tolist()) if i in stop_of and stop_of[i] < t)
    no_stop = sum(1 for i in kc["id"].tolist() if i not in stop_of)
    problems = []
    sampled = {}
    for (c, k), tasks in tasks_of.items():
        have = tasks & kc_tasks
        if have and have != tasks:
            problems.append(f"comm {c:#x} group {k}: {len(have)} of {len(tasks)} tasks have KernelCh")
        if have:
            sampled.setdefault(c, set()).add(k)
    for c, g in ngroups.items():
        got = sampled.get(c, set())
        want = set() if n == 0 else set(k for k in range(g) if k % n == 0)
        if n != 0 and got != want:
            extra, miss = sorted(got - want)[:5], sorted(want - got)[:5]
            problems.append(f"comm {c:#x}: {len(got)} groups sampled, {len(want)} due "
                            f"(extra {extra}..., missing {miss}...)")
        if n == 0 and got:
            problems.append(f"comm {c:#x}: {len(got)} groups sampled with N = 0")
    if unlinked:
        problems.append(f"{unlinked} KernelCh parents not linked to a task")
    if bad_timer:
        problems.append(f"{bad_timer} KernelCh stop pTimer before start")
    for key in ("dropped_full", "dropped_abandoned", "dropped_contended", "invalid_calls"):
        if info[key]:
            problems.append(f"{key} = {info[key]}")
    rank = {comms[i]["hash"]: comms[i]["rank"] for i in comms}
    summary = {"ring": os.path.basename(path), **info,
               "kernelch": int(len(kc)), "kernelch_no_stop": no_stop, "grouped_by": "launch" if by_launch else "GroupApi", "tasks": len(task_group),
               "comms": {f"{c:#x}": {"rank": rank.get(c), "groups": ngroups[c], "sampled": len(sampled.get(c, ()))}
                         for c in ngroups}}
    return summary, sampled, problems


def main():
    ring_dir, n = sys.argv[1], int(sys.argv[2])
    label = sys.argv[4] if len(sys.argv) > 4 and sys.argv[3] == "--label" else ring_dir
    paths = sorted(glob.glob(os.path.join(ring_dir, "*.ring")))
    problems = [] if paths else ["no ring"]
    per_rank = []
    for p in paths:
        summary, sampled, probs = analyse(p, n)
        print(f"[{label}] {summary}", flush=True)
        problems += [f"{os.path.basename(p)}: {x}" for x in probs]
        per_rank.append(sampled)
    # the same groups of each communicator on every rank
    for c in set().union(*[set(s) for s in per_rank]) if per_rank else ():
        sets = [s.get(c, set()) for s in per_rank]
        if any(x != sets[0] for x in sets):
            problems.append(f"comm {c:#x}: sampled groups differ between ranks ({[len(x) for x in sets]})")
        else:
            print(f"[{label}] comm {c:#x}: the same {len(sets[0])} sampled groups on all {len(sets)} rings", flush=True)
    print(f"[{label}] CHECK {'ok' if not problems else 'FAIL: ' + '; '.join(problems[:10])}", flush=True)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
