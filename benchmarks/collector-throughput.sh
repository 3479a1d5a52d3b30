#!/usr/bin/env bash
# Sustained event rate through the whole service: PROCS C-harness processes (the real plugin, a ring each, one
# host) write RATE events/s in all for SECONDS while `flowscope run` drains, journals, windows and serves them;
# reports what the service ingested, what the producers dropped (ring full), and the drain thread's CPU time
# per record, which shows what one core does ("flowscope-drain" is one thread: its CPU seconds per record).
#   benchmarks/collector-throughput.sh RATE [SECONDS] [PROCS]        (defaults: 10 s, 1 process)
# Environment:
#   SERVICE_CPUS   taskset CPU list for the service's JVM (e.g. 2-3); HARNESS_CPUS the same for the harnesses
#   FLOWSCOPE      the command that runs `flowscope` (default ./flowscope; deploy/gpu/service-throughput.sh
#                  points it at the carried Java runtime)
#   NATIVE         where fs_harness and the plugin are (default profiler-plugin/build)
#   RING_SIZE      each harness's FLOWSCOPE_RING_SIZE (default the plugin's)
#   JOURNAL_DIR    the service's journal (default a temporary directory, removed afterwards)
#   LOG_DIR        keep the service's and the harnesses' logs there
#   WARMUP         seconds of the same traffic before the measured run (the JIT compiles the drain path); the
#                  figures are then the measured run's alone
# Prints one line of key=value figures:
#   harness_events      the calls the harnesses made (each is a ring record or a counted drop)
#   ring_records        records the service handed to the engines (Group records are drained, not counted)
#   achieved_records_per_s   ring_records / SECONDS
#   producer_drops      the rings' full / abandoned / contended counters, summed; drop_pct of what was written
#   lag                 records published and not yet drained when the figures were read (2 s after the end)
#   journal_bytes       the journal's size then (warm-up included)
#   drain_cpu_s         CPU time of the drain thread over the run; drain_ns_per_record = that / ring_records,
#                       records_per_drain_cpu_s its inverse: the rate one core of this drain would sustain
#   service_cpu_s       CPU time of the whole service process (HTTP, GC, JIT, journal housekeeping included)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RATE=${1:?usage: collector-throughput.sh RATE [SECONDS] [PROCS]}; SECONDS_=${2:-10}; PROCS=${3:-1}
FLOWSCOPE=${FLOWSCOPE:-$ROOT/flowscope}
NATIVE=${NATIVE:-$ROOT/profiler-plugin/build}
pin() { local cpus=$1; shift; if [ -n "$cpus" ]; then taskset -c "$cpus" "$@"; else "$@"; fi; }
dir=$(mktemp -d /tmp/flowscope-bench.XXXXXX); mkdir -p "$dir/rings"
journal=${JOURNAL_DIR:-$dir/journal}
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
pin "${SERVICE_CPUS:-}" $FLOWSCOPE run --ring-dir "$dir/rings" --journal-dir "$journal" --port "$port" --quiet \
  --duration $((SECONDS_ + ${WARMUP:-0} + 40)) >"$dir/service.log" 2>&1 &
svc=$!
harnesses=()
cleanup() {
  for h in "${harnesses[@]}"; do kill "$h" 2>/dev/null || true; done
  kill "$svc" 2>/dev/null || true; wait "$svc" 2>/dev/null || true
  if [ -n "${LOG_DIR:-}" ]; then mkdir -p "$LOG_DIR" && cp "$dir"/*.log "$LOG_DIR"/ 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT
# HTTP through python3 (a GPU host may have no curl): the body of a 200, else nothing and a failure
http_get() {
  python3 -c 'import sys, urllib.request
try: sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())
except Exception: sys.exit(1)' "http://127.0.0.1:$port$1"
}
for _ in $(seq 1 600); do
  http_get /api/health/ready >/dev/null && break
  kill -0 "$svc" 2>/dev/null || { cat "$dir/service.log" >&2; exit 1; }
  sleep 0.2
done
# the service's java process (flowscope execs java; a wrapper may fork it) and its drain thread
jpid=$svc
if command -v pgrep >/dev/null; then child=$(pgrep -P "$svc" java | head -1 || true); [ -n "$child" ] && jpid=$child; fi
tid=
for t in /proc/"$jpid"/task/*; do
  [ "$(cat "$t/comm" 2>/dev/null)" = flowscope-drain ] && tid=${t##*/}
done
[ -n "$tid" ] || { echo "no flowscope-drain thread in process $jpid" >&2; exit 1; }
drain_ns() { cut -d' ' -f1 "/proc/$jpid/task/$tid/schedstat"; }
proc_ticks() { awk '{print $14 + $15}' "/proc/$jpid/stat"; }
per=$(python3 -c "print($RATE / $PROCS)")
# PROCS harnesses at RATE in all for $1 seconds, their logs named $2-N.log
harness_run() {
  for i in $(seq 1 "$PROCS"); do
    FLOWSCOPE_RING_SIZE=${RING_SIZE:-${FLOWSCOPE_RING_SIZE:-}} pin "${HARNESS_CPUS:-}" "$NATIVE/fs_harness" \
      --plugin "$NATIVE/libnccl-profiler-flowscope.so" --ring-dir "$dir/rings" --live "$1" --rate "$per" \
      >"$dir/$2-$i.log" 2>&1 &
    harnesses+=($!)
  done
  for h in "${harnesses[@]}"; do wait "$h"; done
  harnesses=()
  sleep 2
}
metrics() { http_get /metrics; }
get() { echo "$1" | awk -v k="$2" '$1==k {printf "%d", $2}'; }
if [ "${WARMUP:-0}" != 0 ]; then harness_run "$WARMUP" warmup; fi
m0=$(metrics)
d0=$(drain_ns); p0=$(proc_ticks)
harness_run "$SECONDS_" harness
d1=$(drain_ns); p1=$(proc_ticks)
m=$(metrics)
rec=$(( $(get "$m" flowscope_ring_records_total) - $(get "$m0" flowscope_ring_records_total) ))
drops=$(( $(get "$m" flowscope_ring_producer_dropped_total) - $(get "$m0" flowscope_ring_producer_dropped_total) ))
lag=$(get "$m" flowscope_ring_lag_records); jb=$(get "$m" flowscope_journal_bytes)
emitted=$(cat "$dir"/harness-*.log | grep -o 'events=[0-9]*' | cut -d= -f2 | awk '{s+=$1} END {print s+0}')
hz=$(getconf CLK_TCK)
python3 - "$RATE" "$SECONDS_" "$PROCS" "$emitted" "$rec" "$drops" "$lag" "$jb" "$d0" "$d1" "$p0" "$p1" "$hz" <<'PY'
import sys
rate, secs, procs, emitted, rec, drops, lag, jb, d0, d1, p0, p1, hz = sys.argv[1:]
rec, drops, d = int(rec), int(drops), (int(d1) - int(d0)) / 1e9
cpu = (int(p1) - int(p0)) / int(hz)
print(f"rate={rate} seconds={secs} procs={procs} harness_events={emitted} ring_records={rec} "
      f"achieved_records_per_s={rec // int(secs)} producer_drops={drops} "
      f"drop_pct={round(100 * drops / max(1, drops + rec), 2)} lag={lag} journal_bytes={jb} "
      f"drain_cpu_s={d:.2f} drain_ns_per_record={1e9 * d / max(1, rec):.0f} "
      f"records_per_drain_cpu_s={rec / max(1e-9, d):.0f} service_cpu_s={cpu:.2f}")
PY
