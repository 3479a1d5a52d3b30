#!/usr/bin/env python3
"""The window engine's per-GPU clock estimates against gpu_clock_probe's independent measurement (issue #17 item 3).

    gpu_clock_compare.py PROBE_CSV ENGINE_CSV [--out DIR]

PROBE_CSV: gpu_clock_probe's output (brackets t0 <= host instant <= t1 around a %globaltimer reading g, host clock
CLOCK_MONOTONIC). ENGINE_CSV: GpuClockReport's output (the engine's live estimates every second of the run and its
final ones). Offsets are host − GPU in ns, as both write them.

The probe's offset per GPU: each bracket gives the offset at its instant within [t0 − g − u, t1 − g] (u: the timer's
update period, a reading lags the continuous clock by up to u). Per second the narrowest bracket is kept; a line is
fitted through their midpoints (offset, drift); its bound over the fitted span is max(|residual| + half width):
at each kept bracket the line is within that of the true offset, and between them too if the drift is constant
between neighbouring brackets (the residuals show whether it is).

A GPU of the engine ((commHash, rank) of its collectives) is the probe's device with the same PCI bus id (the
rings' communicator entries), else the device numbered like the rank (torchrun: LOCAL_RANK = device). Each live
estimate inside the probe's span is compared: agreement when |engine − probe| <= engine bound + probe bound.
Writes DIR/gpu-clock-table.md (also printed) and DIR/gpu-clock-comparison.csv; exit 0 when every compared estimate
agrees, 1 when one does not, 2 when there is nothing to compare.
"""
import argparse
import os
import statistics
import sys


def norm_bus(bus):
    """'00000000:19:00.0' and '0000:19:00.0' name the same device."""
    bus = bus.strip().lower()
    if ":" not in bus:
        return bus
    domain, rest = bus.split(":", 1)
    return "%x:%s" % (int(domain or "0", 16), rest)


def read_probe(path):
    devices, ticks, samples = {}, {}, {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            p = line.strip().split(",")
            if not p or not p[0]:
                continue
            try:
                if p[0] == "# device":
                    devices[int(p[1])] = {"bus": p[2], "name": p[3] if len(p) > 3 else ""}
                elif p[0] == "# tick":
                    reads, distinct, mn, med = int(p[2]), int(p[3]), int(p[4]), int(p[5])
                    # Reads faster than the updates: a change is one update, the median step its period. Every read
                    # distinct: the clock updates at least once a loop, its period is at most the smallest step.
                    ticks[int(p[1])] = {"reads": reads, "distinct": distinct, "min": mn, "median": med,
                                        "max": int(p[6]), "update": med if distinct < reads else mn}
                elif p[0] == "sample":
                    samples.setdefault(int(p[1]), []).append((int(p[2]), int(p[3]), int(p[4])))
            except (ValueError, IndexError):
                sys.exit("gpu_clock_compare: %s line %d is not a probe line: %r" % (path, n, line.strip()))
    return devices, ticks, samples


def fit_probe(samples, update_ns, bin_ns=1_000_000_000):
    """Narrowest bracket per bin, a line through their midpoints, its bound."""
    first = min(s[0] for s in samples)
    best = {}
    for t0, t1, g in samples:
        lo, hi = t0 - g - update_ns, t1 - g
        b = (t0 - first) // bin_ns
        if b not in best or hi - lo < best[b][2] - best[b][1]:
            best[b] = ((t0 + t1) // 2, lo, hi)
    pts = [best[b] for b in sorted(best)]
    ref_t, ref_y = pts[0][0], (pts[0][1] + pts[0][2]) // 2
    xs = [p[0] - ref_t for p in pts]
    # Relative to a reference in integers first: offsets are near -1.8e18, where a float is 256 ns coarse.
    ys = [(p[1] + p[2] - 2 * ref_y) / 2 for p in pts]
    n = len(pts)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if n >= 2 and sxx > 0 else 0.0
    icpt = my - slope * mx
    resid = [y - (icpt + slope * x) for x, y in zip(xs, ys)]
    bound = max(abs(r) + (p[2] - p[1]) / 2 for r, p in zip(resid, pts))
    widths = sorted(t1 - t0 for t0, t1, _ in samples)
    return {
        "ref_t": ref_t, "ref_y": ref_y, "slope": slope, "icpt": icpt, "bound": bound,
        "from": pts[0][0], "to": pts[-1][0], "kept": n, "samples": len(samples),
        "max_resid": max(abs(r) for r in resid), "best_width": widths[0], "median_width": widths[len(widths) // 2],
        "kept_width_max": max(p[2] - p[1] for p in pts),
    }


def probe_at(fit, t):
    """The probe's offset at host time t, in integer ns."""
    return fit["ref_y"] + round(fit["icpt"] + fit["slope"] * (t - fit["ref_t"]))


def read_engine(path):
    gpus, rows = {}, []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            p = line.strip().split(",")
            if not p or not p[0] or p[0].startswith("#"):
                continue
            try:
                if p[0] == "gpu":
                    gpus[(p[1], p[2], int(p[3]))] = {"device": int(p[4]), "bus": p[5] if len(p) > 5 else ""}
                elif p[0] in ("live", "final"):
                    rows.append({"kind": p[0], "gpu": (p[1], p[2], int(p[3])), "at": int(p[4]), "samples": int(p[5]),
                                 "buckets": int(p[6]), "steps": int(p[7]), "offset": int(p[8]),
                                 "drift": float(p[9]), "drift_known": p[10] == "true", "bound": int(p[11])})
            except (ValueError, IndexError):
                sys.exit("gpu_clock_compare: %s line %d is not a GpuClockReport line: %r" % (path, n, line.strip()))
    return gpus, rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("probe")
    ap.add_argument("engine")
    ap.add_argument("--out", default=".")
    a = ap.parse_args()
    devices, ticks, samples = read_probe(a.probe)
    gpus, rows = read_engine(a.engine)
    if not samples:
        print("gpu_clock_compare: no probe samples in %s" % a.probe)
        return 2
    if not rows:
        print("gpu_clock_compare: no engine estimates in %s (no KernelCh start reached the engine?)" % a.engine)
        return 2
    fits = {}
    for dev, ss in sorted(samples.items()):
        u = ticks.get(dev, {}).get("update", 0)
        fits[dev] = fit_probe(ss, u)
    bus_to_dev = {norm_bus(d["bus"]): dev for dev, d in devices.items()}

    out = []
    out.append("## GPU clock: window engine against gpu_clock_probe\n")
    out.append("Offsets are host CLOCK_MONOTONIC − GPU %globaltimer. Probe: narrowest handshake bracket per second, "
               "line fit, bound = max(|residual| + half width).\n")
    out.append("| GPU | device | timer update | brackets (best / median) | probe drift | probe bound | probe residual |")
    out.append("|---|---|---|---|---|---|---|")
    for dev, f in fits.items():
        t = ticks.get(dev, {})
        d = devices.get(dev, {})
        out.append("| %d %s | %s | %s ns (steps min %s, median %s; %s of %s reads distinct) | %d / %d ns | %+.3f ppm | "
                   "%.0f ns | %.0f ns |" % (
                       dev, d.get("name", ""), d.get("bus", "?"), t.get("update", "?"), t.get("min", "?"),
                       t.get("median", "?"), t.get("distinct", "?"), t.get("reads", "?"), f["best_width"],
                       f["median_width"], f["slope"] * 1e6, f["bound"], f["max_resid"]))
    out.append("")
    out.append("| engine GPU (comm, rank) | probe device (matched by) | estimates compared | agree | max abs(engine − probe) "
               "| median engine − probe | engine bound (median / max) | engine drift (median, when known) | verdict |")
    out.append("|---|---|---|---|---|---|---|---|---|")
    comparison = ["kind,commHash,rank,device,atHostNs,engineOffsetNs,engineBoundNs,probeOffsetNs,probeBoundNs,"
                  "differenceNs,buckets,driftKnown,engineDriftPpm,agrees"]
    failures = compared_total = 0
    by_gpu = {}
    for r in rows:
        by_gpu.setdefault(r["gpu"], []).append(r)
    for g, rs in by_gpu.items():
        info = gpus.get(g)
        dev, how = None, ""
        if info and norm_bus(info["bus"]) in bus_to_dev:
            dev, how = bus_to_dev[norm_bus(info["bus"])], "PCI bus id"
        elif g[2] in fits:
            dev, how = g[2], "rank = device"
        if dev not in fits:
            out.append("| %s, %d | none | 0 | | | | | | no probe of this GPU |" % (g[1], g[2]))
            continue
        f = fits[dev]
        diffs, bounds, drifts, agree, n = [], [], [], 0, 0
        for r in rs:
            if not (f["from"] <= r["at"] <= f["to"]):
                continue
            p = probe_at(f, r["at"])
            diff = r["offset"] - p
            ok = abs(diff) <= r["bound"] + f["bound"]
            comparison.append("%s,%s,%d,%d,%d,%d,%d,%d,%.0f,%d,%d,%s,%.3f,%s" % (
                r["kind"], g[1], g[2], dev, r["at"], r["offset"], r["bound"], p, f["bound"], diff, r["buckets"],
                str(r["drift_known"]).lower(), r["drift"], str(ok).lower()))
            n += 1
            agree += ok
            diffs.append(diff)
            bounds.append(r["bound"])
            if r["drift_known"]:
                drifts.append(r["drift"])
        compared_total += n
        failures += n - agree
        if n == 0:
            out.append("| %s, %d | %d (%s) | 0 | | | | | | no estimate inside the probe's span |" % (g[1], g[2], dev, how))
            continue
        out.append("| %s, %d | %d (%s) | %d | %d | %.0f ns | %+.0f ns | %d / %d ns | %s | %s |" % (
            g[1], g[2], dev, how, n, agree, max(abs(x) for x in diffs), statistics.median(diffs),
            statistics.median(bounds), max(bounds),
            ("%+.3f ppm (probe %+.3f)" % (statistics.median(drifts), f["slope"] * 1e6)) if drifts else "unknown",
            "agrees" if agree == n else "DISAGREES"))
    out.append("")
    verdict = ("every engine estimate within its bound of the probe's" if compared_total and not failures else
               "%d of %d engine estimates outside engine bound + probe bound" % (failures, compared_total)
               if compared_total else "nothing compared")
    out.append("Verdict: %s." % verdict)
    text = "\n".join(out) + "\n"
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "gpu-clock-table.md"), "w") as fh:
        fh.write(text)
    with open(os.path.join(a.out, "gpu-clock-comparison.csv"), "w") as fh:
        fh.write("\n".join(comparison) + "\n")
    print(text, end="")
    return 2 if not compared_total else (1 if failures else 0)


if __name__ == "__main__":
    sys.exit(main())
