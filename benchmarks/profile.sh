#!/usr/bin/env bash
# Where the cycles go: CPU samples (async-profiler, fetched from Maven Central into the local repository; not part
# of the project) of the window-engine JMH benchmark or of the anomaly stage's CPU-time loop, on whatever machine
# this is (a quiet GPU-machine core with the runtime of deploy/gpu/make-carry.sh: JAVA=..., taskset -c 3 ...).
# Prints the methods (inlined ones included, C2's frames as the profiler resolves them) by their share of the
# samples under the timed code, and keeps the collapsed stacks (flame-graph input) in OUTDIR.
#   benchmarks/profile.sh window  [JAR]     # WindowEngineBenchmark.engine, 4 × 2 s warm-up, 5 × 2 s measured
#   benchmarks/profile.sh anomaly [JAR]     # AnomalyEngineCpuTime 4096 3000 hot
# Environment: JAVA (default java), OUTDIR (default ./profile-out), AP_LIB (a libasyncProfiler.so to use instead
# of fetching one). Samples every 100 µs of CPU time (itimer-style "cpu" mode: no perf_events needed); the
# sampling slows the run itself by ~20 %, so read shares, not rates.
set -euo pipefail
WHAT=${1:?window or anomaly}
JAR=${2:-benchmarks/target/benchmarks.jar}
JAVA=${JAVA:-java}
OUTDIR=${OUTDIR:-$PWD/profile-out}
AP_VERSION=3.0
mkdir -p "$OUTDIR"
if [ -z "${AP_LIB:-}" ]; then
  mvn -B -q dependency:get -Dartifact=tools.profiler:async-profiler:$AP_VERSION
  unzip -o -q "$HOME/.m2/repository/tools/profiler/async-profiler/$AP_VERSION/async-profiler-$AP_VERSION.jar" \
    'linux-x64/*' -d "$OUTDIR/async-profiler"
  AP_LIB=$OUTDIR/async-profiler/linux-x64/libasyncProfiler.so
fi
STACKS=$OUTDIR/$WHAT.collapsed
AGENT="-agentpath:$AP_LIB=start,event=cpu,interval=100us,ann,collapsed,file=$STACKS"
case "$WHAT" in
  window)
    "$JAVA" --add-exports java.base/jdk.internal.misc=ALL-UNNAMED -jar "$JAR" 'WindowEngineBenchmark.engine' \
      -f 1 -wi 4 -w 2 -i 5 -r 2 -jvmArgsAppend "$AGENT" | grep -E '^WindowEngineBenchmark' || true
    ROOT=jmhStub ;;
  anomaly)
    "$JAVA" -Xms1g -Xmx1g "$AGENT" -cp "$JAR" io.flowscope.bench.AnomalyEngineCpuTime 4096 3000 hot | tail -1
    ROOT=AnomalyEngineCpuTime.run ;;
  *) echo "window or anomaly, not $WHAT" >&2; exit 2 ;;
esac
# Self samples by leaf frame, within the stacks that pass through the timed code (warm-up and compiler threads
# left out), top 30.
awk -v root="$ROOT" '
  { n = $NF; $NF = ""; split($0, f, ";"); keep = 0
    for (i = 1; i <= length(f); i++) if (index(f[i], root)) { keep = 1; break }
    if (!keep) next
    leaf = f[length(f)]; sub(/ +$/, "", leaf); self[leaf] += n; total += n }
  END { for (m in self) printf "%6.2f %%  %s\n", 100 * self[m] / total, m; printf "%d samples\n", total > "/dev/stderr" }
' "$STACKS" | sort -rn | head -30
