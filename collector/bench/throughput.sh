#!/usr/bin/env bash
# Sustained event rate through the whole service: the C harness (the real plugin) writes a ring at RATE
# events/s for SECONDS while `flowscope run` drains, journals, windows and serves it; reports what the service
# ingested and what the producer had to drop (ring full). Usage: collector/bench/throughput.sh RATE [SECONDS]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RATE=${1:?rate}; SECONDS_=${2:-10}
dir=$(mktemp -d /tmp/flowscope-bench.XXXXXX); mkdir -p "$dir/rings"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$ROOT/flowscope" run --ring-dir "$dir/rings" --journal-dir "$dir/journal" --port "$port" --quiet \
  --duration $((SECONDS_ + 8)) >"$dir/service.log" 2>&1 &
svc=$!
trap 'kill $svc 2>/dev/null || true; wait $svc 2>/dev/null || true; rm -rf "$dir"' EXIT
until curl -sf "http://127.0.0.1:$port/api/health/ready" >/dev/null; do sleep 0.2; done
"$ROOT/profiler-plugin/build/fs_harness" --plugin "$ROOT/profiler-plugin/build/libnccl-profiler-flowscope.so" \
  --ring-dir "$dir/rings" --live "$SECONDS_" --rate "$RATE" >"$dir/harness.log" 2>&1
sleep 2
m=$(curl -s "http://127.0.0.1:$port/metrics")
get() { echo "$m" | awk -v k="$1" '$1==k {printf "%d", $2}'; }
rec=$(get flowscope_ring_records_total); drops=$(get flowscope_ring_producer_dropped_total)
lag=$(get flowscope_ring_lag_records); jb=$(get flowscope_journal_bytes); ev=$(get flowscope_events_total)
emitted=$(grep -o 'events=[0-9]*' "$dir/harness.log" | cut -d= -f2)
echo "rate=$RATE seconds=$SECONDS_ harness_events=$emitted ring_records_to_engines=$rec engine_events=$ev producer_drops=$drops lag=$lag journal_bytes=$jb achieved_records_per_s=$((rec / SECONDS_)) drop_pct=$(python3 -c "print(round(100*$drops/max(1,$drops+$rec),2))")"
