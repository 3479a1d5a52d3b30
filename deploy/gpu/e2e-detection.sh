#!/usr/bin/env bash
# flowscope end to end on real NCCL: the plugin in every rank, the collector service draining the rings live,
# and a real stall (one rank stops calling NCCL for a few seconds while its peers wait in an all_reduce). The
# service must name the stalled rank as a HANG while nothing moves, and resolve it when traffic resumes.
#
# Needs .carry/ from `deploy/gpu/make-carry.sh --collector` (Java runtime + collector jars) and >= 2 GPUs.
#   deploy/gpu/e2e-detection.sh [--stall-seconds 5] [--transport socket|nvlink]
# Output in $OUT/e2e (or ./gpu-out/e2e): report.md, service.log, anomalies.json, stall.json.
set -euo pipefail
STALL=5
TRANSPORT=socket
while [ $# -gt 0 ]; do
  case "$1" in
    --stall-seconds) STALL=$2; shift 2 ;;
    --transport) TRANSPORT=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
ROOT=$(pwd)
OUTDIR=${OUT:-$ROOT/gpu-out}/e2e
WORK=$(mktemp -d /tmp/flowscope-e2e.XXXXXX)
RINGS=/dev/shm/flowscope-e2e-$$
mkdir -p "$OUTDIR" "$RINGS"
make -C profiler-plugin -j"$(nproc)" build/libnccl-profiler-flowscope.so >/dev/null
PLUGIN=$ROOT/profiler-plugin/build/libnccl-profiler-flowscope.so
. deploy/gpu/carried-java.sh
carried_java "$WORK"

PORT=$((20000 + RANDOM % 20000))
"$JAVA" "${JFLAGS[@]}" -Xmx2g -cp "$ROOT/.carry/lib/*" io.flowscope.collector.Main run --ring-dir "$RINGS" \
  --port "$PORT" --journal-dir "$WORK/journal" >"$OUTDIR/service.log" 2>&1 &
SERVICE=$!
cleanup() { kill -TERM "$SERVICE" 2>/dev/null || true; wait "$SERVICE" 2>/dev/null || true; rm -rf "$RINGS"; }
trap cleanup EXIT
for _ in $(seq 1 100); do grep -q 'serving http' "$OUTDIR/service.log" && break; sleep 0.2; done

case "$TRANSPORT" in
  socket) TENV="NCCL_NVLS_ENABLE=0 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_IB_DISABLE=1" ;;
  nvlink) TENV="NCCL_NVLS_ENABLE=0" ;;
esac
GPUS=$(nvidia-smi -L | wc -l)
env $TENV NCCL_PROFILER_PLUGIN="$PLUGIN" FLOWSCOPE_RING_DIR="$RINGS" NCCL_DEBUG=WARN \
  timeout -k 10 120 torchrun --standalone --nproc_per_node="$GPUS" --master_port=$((PORT + 1)) \
  deploy/gpu/stall_workload.py --stall-seconds "$STALL" --out "$OUTDIR/stall.json" >"$OUTDIR/workload.log" 2>&1 \
  || { echo "workload failed"; tail -30 "$OUTDIR/workload.log"; }
sleep 2
python3 - "$PORT" "$OUTDIR" <<'PY'
import json, sys, urllib.request
port, out = sys.argv[1], sys.argv[2]
def get(path):
    return json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10))
anomalies = get("/api/anomalies?state=all")
health = get("/api/health")
json.dump({"anomalies": anomalies, "health": health}, open(out + "/anomalies.json", "w"), indent=1)
stall = json.load(open(out + "/stall.json"))
t0, t1 = stall["stall_start_mono_ns"], stall["stall_end_mono_ns"]
print(f"stall of rank {stall['rank']}: {(t1 - t0) / 1e9:.3f} s; all_reduce of {stall['size']} B: "
      f"{stall['all_reduce_before']} before, {stall['all_reduce_after']} after")
print("| kind | culprit | start − stall start (ms) | detected − stall start (ms) | resolved − stall end (ms) | summary |")
print("|---|---|---|---|---|---|")
for a in anomalies.get("items", []):
    res = a.get("resolvedNs", -1)
    print("| %s | %s | %.1f | %.1f | %s | %s |" % (a["kind"], json.dumps(a["culprit"]),
          (a["startNs"] - t0) / 1e6, (a["detectedNs"] - t0) / 1e6,
          "%.1f" % ((res - t1) / 1e6) if res and res > 0 else "open", a["summary"]))
print("health:", json.dumps({k: health[k] for k in health if k in ("status", "ringsAttached", "events", "eventsTotal")}))
PY
