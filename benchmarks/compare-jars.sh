#!/usr/bin/env bash
# Runs the window-engine JMH benchmark and the anomaly stage's CPU-time loop on two benchmark jars, alternated
# (A B A B ...), on whatever machine this is: the build VM, or a GPU machine's host CPU (a quiet core) with the
# Java runtime that deploy/gpu/make-carry.sh packs (JAVA=...). Prints one line per run and writes JMH's JSON.
#   benchmarks/compare-jars.sh BEFORE.jar AFTER.jar [pairs, default 2] [ranks for the anomaly loop, default 4096]
# Environment: JAVA (default java), OUTDIR (default ./bench-out).
set -euo pipefail
A=$1 B=$2 PAIRS=${3:-2} RANKS=${4:-4096}
JAVA=${JAVA:-java}
OUTDIR=${OUTDIR:-$PWD/bench-out}
mkdir -p "$OUTDIR"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq 1 "$PAIRS"); do
  for side in A B; do
    jar=$A; [ "$side" = B ] && jar=$B
    "$JAVA" --add-exports java.base/jdk.internal.misc=ALL-UNNAMED -jar "$jar" 'WindowEngineBenchmark.engine' \
      -f 1 -wi 5 -w 2 -i 10 -r 2 -prof gc -rf json -rff "$OUTDIR/window-$side-$i.json" >"$OUTDIR/window-$side-$i.log" 2>&1
    python3 - "$OUTDIR/window-$side-$i.json" "$side" "$i" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))[0]
m = r["primaryMetric"]; alloc = r["secondaryMetrics"].get("gc.alloc.rate.norm", {}).get("score", float("nan"))
print(f"window engine  {sys.argv[2]} run {sys.argv[3]}: {m['score'] / 1e6:.2f} ± {m['scoreError'] / 1e6:.2f} M events/s, {alloc:.4f} B/op")
PY
    "$JAVA" -Xms1g -Xmx1g -cp "$jar" io.flowscope.bench.AnomalyEngineCpuTime "$RANKS" 1000 hot 2>&1 \
      | tail -1 | sed "s/^/anomaly stage  $side run $i: /"
  done
done
