#!/usr/bin/env bash
# The collector service's ingest rate on this host's CPU (issue #17, acceptance 5: >= 5 M ring records/s on one
# core, drops reported). PROCS C-harness processes (the real plugin, one ring each in /dev/shm, one hostname) offer
# each RATE in turn for SECONDS while the service (carried Java, default configuration: journal on disk, 1 ms
# periods, anomaly stage, HTTP) drains them, pinned to SERVICE_CPUS so that its drain thread has a core of its own;
# the harnesses run on the other cores. Per run benchmarks/collector-throughput.sh reports the achieved rate, the
# producers' drops, the ring lag left, and the drain thread's CPU seconds per record. No GPU is used.
#
# Needs .carry/ from `deploy/gpu/make-carry.sh --collector` (Java runtime + collector jars); builds the harness
# and the plugin with make here.
#   deploy/gpu/service-throughput.sh [--rates "2000000 5000000 8000000"] [--procs 4] [--seconds 10] [--reps 2]
#                                    [--warmup 5] [--service-cpus 2-3]
# Each run first offers its rate for --warmup seconds (the JIT compiles the drain path), then measures.
# Output in $OUT/service-throughput (or ./gpu-out/service-throughput): results.txt (one line of figures per run),
# report.md (a table), machine.txt (CPU, load), logs/ (service and harness logs of each run).
set -euo pipefail
RATES="2000000 5000000 8000000"
PROCS=4
SECONDS_=10
REPS=2
WARMUP=5
SERVICE_CPUS=2-3
while [ $# -gt 0 ]; do
  case "$1" in
    --rates) RATES=$2; shift 2 ;;
    --procs) PROCS=$2; shift 2 ;;
    --seconds) SECONDS_=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --warmup) WARMUP=$2; shift 2 ;;
    --service-cpus) SERVICE_CPUS=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
ROOT=$(pwd)
OUTDIR=${OUT:-$ROOT/gpu-out}/service-throughput
WORK=$(mktemp -d /tmp/flowscope-throughput.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUTDIR/logs"
make -C profiler-plugin -j"$(nproc)" build/libnccl-profiler-flowscope.so build/fs_harness >/dev/null
. deploy/gpu/carried-java.sh
carried_java "$WORK"
# `flowscope` as throughput.sh calls it, on the carried runtime
{
  echo '#!/usr/bin/env bash'
  printf 'exec %q' "$JAVA"; printf ' %q' "${JFLAGS[@]}" -Xms2g -Xmx2g -cp "$ROOT/.carry/lib/*"
  echo ' io.flowscope.collector.Main "$@"'
} >"$WORK/flowscope"
chmod +x "$WORK/flowscope"
# the harnesses on every CPU but the service's
last=$(($(nproc) - 1))
HARNESS_CPUS=$(python3 -c "
svc = set()
for part in '$SERVICE_CPUS'.split(','):
    a, _, b = part.partition('-'); svc.update(range(int(a), int(b or a) + 1))
print(','.join(str(c) for c in range($last + 1) if c not in svc))")
{
  echo "date: $(date -u +%FT%TZ)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) CPUs"
  echo "service CPUs: $SERVICE_CPUS; harness CPUs: $HARNESS_CPUS; $PROCS harness processes; ${SECONDS_} s a run" \
    "after ${WARMUP} s of warm-up"
  echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "java: $("$JAVA" -version 2>&1 | head -1)"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
} | tee "$OUTDIR/machine.txt"
: >"$OUTDIR/results.txt"
for rep in $(seq 1 "$REPS"); do
  for rate in $RATES; do
    line=$(FLOWSCOPE="$WORK/flowscope" SERVICE_CPUS=$SERVICE_CPUS HARNESS_CPUS=$HARNESS_CPUS WARMUP=$WARMUP \
      LOG_DIR="$OUTDIR/logs/$rate-$rep" benchmarks/collector-throughput.sh "$rate" "$SECONDS_" "$PROCS" 2>&1 | tail -1)
    echo "rep=$rep $line" | tee -a "$OUTDIR/results.txt"
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUTDIR/machine.txt"
python3 - "$OUTDIR/results.txt" >"$OUTDIR/report.md" <<'PY'
import sys
print("| offered (records/s) | rep | harness events | ring records | achieved records/s | producer drops | drop % | lag after | drain CPU s | drain ns/record | records per drain CPU s |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for line in open(sys.argv[1]):
    f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
    if "ring_records" not in f:
        print(f"| {f.get('rate', '?')} | {f.get('rep', '?')} | failed: {line.strip()} |")
        continue
    print(f"| {int(f['rate']):,} | {f['rep']} | {int(f['harness_events']):,} | {int(f['ring_records']):,} | "
          f"{int(f['achieved_records_per_s']):,} | {int(f['producer_drops']):,} | {f['drop_pct']} | {f['lag']} | "
          f"{f['drain_cpu_s']} | {f['drain_ns_per_record']} | {int(f['records_per_drain_cpu_s']):,} |")
PY
cat "$OUTDIR/report.md"
