#!/usr/bin/env bash
# Issue #17 item 3: each GPU's %globaltimer against the host's CLOCK_MONOTONIC, measured twice at the same time:
#  - independently, by deploy/gpu/gpu_clock_probe.cu (host timestamps around a mapped-memory handshake with a kernel
#    that reads %globaltimer: brackets of the offset, the timer's update period, drift by a line fit);
#  - passively, by the window engine (GpuClock: KernelCh starts of a real NCCL run, plugin rings drained by the
#    collector service into its journal, replayed by io.flowscope.collector.tools.GpuClockReport),
# then deploy/gpu/gpu_clock_compare.py checks |engine − probe| <= engine bound + probe bound for every estimate.
#
# On the GPU machine, from the repository root (about 2 minutes with the default 60 s):
#   deploy/gpu/gpu-clock-check.sh [--seconds S]
# Needs: >= 2 GPUs, torch, gcc; .carry/ from `deploy/gpu/make-carry.sh --collector` (Java runtime + collector
# jars, which hold GpuClockReport); the probe binary build/gpu-clock/gpu_clock_probe (built on the build machine:
# `deploy/gpu/gpu-clock-check.sh --build-probe`; carry build/gpu-clock), or nvcc on the GPU machine (then it is
# built there).
# Writes under $OUT (./gpu-out/gpu-clock without it): gpu-clock-table.md (the table, also printed),
# gpu-clock-comparison.csv, probe.csv, engine.csv, and logs/.
#
# Without a GPU:
#   deploy/gpu/gpu-clock-check.sh --build-probe          compiles the probe (nvcc, sm_90 + PTX)
#   deploy/gpu/gpu-clock-check.sh --dry-run TRACE        the engine side and the comparison on a recorded trace with
#       KernelCh (e.g. ../shared/traces/nvlink-k-clean/events.jsonl.gz) against a SYNTHETIC probe made from the
#       trace's own lower envelope (offset 1.5 us below it): tests the script's plumbing, measures nothing.
set -uo pipefail
PROBE_SECONDS=60
DRY_TRACE=
BUILD_ONLY=
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) PROBE_SECONDS=$2; shift 2 ;;
    --dry-run) DRY_TRACE=$2; shift 2 ;;
    --build-probe) BUILD_ONLY=1; shift ;;
    *) echo "gpu-clock-check: unknown option $1 (--seconds S | --dry-run TRACE | --build-probe)" >&2; exit 2 ;;
  esac
done
case "$PROBE_SECONDS" in ''|*[!0-9]*) echo "gpu-clock-check: --seconds needs a whole number" >&2; exit 2 ;; esac
ROOT=$(pwd)
PROBE=$ROOT/build/gpu-clock/gpu_clock_probe
build_probe() { # $1: output binary
  mkdir -p "$(dirname "$1")"
  nvcc -O2 -std=c++17 -gencode 'arch=compute_90,code=[sm_90,compute_90]' -o "$1" deploy/gpu/gpu_clock_probe.cu
}
if [ -n "$BUILD_ONLY" ]; then
  build_probe "$PROBE" && echo "built $PROBE (carry build/gpu-clock)"; exit $?
fi

WORK=$(mktemp -d /tmp/flowscope-clock.XXXXXX)
DEST=${OUT:-$ROOT/gpu-out/gpu-clock}
mkdir -p "$DEST/logs"
SERVICE=
WORKLOAD=
cleanup() {
  [ -n "$WORKLOAD" ] && kill -TERM "$WORKLOAD" 2>/dev/null
  [ -n "$SERVICE" ] && kill -TERM "$SERVICE" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$WORK" /dev/shm/fs-clock-$$
}
trap cleanup EXIT

# Java: the carried runtime and jars, or (dry run on the build machine) the local JDK and the collector's build.
if [ -f .carry/jre.tgz ]; then
  . deploy/gpu/carried-java.sh
  carried_java "$WORK" || { echo "gpu-clock-check: cannot unpack .carry/jre.tgz" >&2; exit 1; }
  CP="$ROOT/.carry/lib/*"
elif [ -n "$DRY_TRACE" ] && command -v java >/dev/null && ls collector/target/flowscope-collector-*.jar >/dev/null 2>&1; then
  JAVA=java
  JFLAGS=()
  CP="$(ls collector/target/flowscope-collector-*-SNAPSHOT.jar | grep -v tests | head -1):$ROOT/collector/target/lib/*"
else
  echo "gpu-clock-check: no Java: run deploy/gpu/make-carry.sh --collector on the build machine and carry .carry" >&2
  exit 1
fi
engine_report() { # $1: journal dir or trace; writes $DEST/engine.csv
  timeout -k 5 120 "$JAVA" "${JFLAGS[@]}" -Xmx2g -cp "$CP" io.flowscope.collector.tools.GpuClockReport "$1" --every-ms 1000 \
    >"$DEST/engine.csv" 2>"$DEST/logs/engine.err"
}

if [ -n "$DRY_TRACE" ]; then
  echo "== dry run: engine on $DRY_TRACE, against a SYNTHETIC probe (plumbing only, no measurement)"
  if command -v nvcc >/dev/null; then
    build_probe "$WORK/gpu_clock_probe" && echo "probe compiles (nvcc $(nvcc --version | grep -o "release [0-9.]*"))"
  fi
  engine_report "$DRY_TRACE" || { echo "gpu-clock-check: GpuClockReport failed:"; cat "$DEST/logs/engine.err"; exit 1; }
  # The synthetic probe: per rank, the trace's lower envelope (minimum of host time − pTimer per 50 ms, a line
  # through them) less 1.5 us is taken as the true offset; brackets of 1.6..2.6 us every 10 ms around it.
  python3 - "$DRY_TRACE" >"$DEST/probe.csv" <<'EOF' || exit 1
import collections, gzip, json, random, sys
path = sys.argv[1]
opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
coll, low = {}, collections.defaultdict(dict)
with opener(path, "rt") as f:
    for line in f:
        o = json.loads(line)
        if o["type"] == "collStart":
            coll[o["collKey"]] = o["rank"]
        elif o["type"] == "kernelChStart" and o["collKey"] in coll:
            r, t, y = coll[o["collKey"]], o["timeNs"], o["timeNs"] - o["pTimerNs"]
            b = t // 50_000_000
            if b not in low[r] or y < low[r][b][1]:
                low[r][b] = (t, y)
rnd = random.Random(1)
print("# probe,SYNTHETIC from %s" % path)
for r, pts in sorted(low.items()):
    pts = sorted(pts.values())
    t0, y0 = pts[0]
    n = len(pts)
    xs = [p[0] - t0 for p in pts]; ys = [p[1] - y0 for p in pts]
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    k = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
    c = my - k * mx
    print("# device,%d,0000:%02x:00.0,SYNTHETIC" % (r, r + 0x19))
    print("# tick,%d,65536,2048,32,32,64,32" % r)
    for t in range(pts[0][0], pts[-1][0], 10_000_000):
        true = y0 + round(c + k * (t - t0)) - 1500
        w = 1600 + rnd.randrange(1000)
        at = t + rnd.randrange(w)
        print("sample,%d,%d,%d,%d" % (r, t, t + w, at - true))
EOF
  python3 deploy/gpu/gpu_clock_compare.py "$DEST/probe.csv" "$DEST/engine.csv" --out "$DEST"
  echo "gpu-clock-check: dry run rc=$? (outputs in $DEST)"
  exit 0
fi

# --- On the GPU machine.
GPUS=$(nvidia-smi -L 2>/dev/null | wc -l)
[ "$GPUS" -ge 2 ] || { echo "gpu-clock-check: needs >= 2 GPUs for the NCCL run, found $GPUS" >&2; exit 1; }
echo "host: $(nproc) CPUs; GPUs: $(nvidia-smi -L | tr '\n' ';')"
nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version --format=csv,noheader | tee "$DEST/logs/gpus.txt"
python3 -c 'import torch; print("torch", torch.__version__, "NCCL", ".".join(map(str, torch.cuda.nccl.version())))'
if command -v nvcc >/dev/null; then
  build_probe "$WORK/gpu_clock_probe" || exit 1
  PROBE=$WORK/gpu_clock_probe
fi
[ -x "$PROBE" ] || { echo "gpu-clock-check: no probe: no nvcc here and no $PROBE (carry build/gpu-clock)" >&2; exit 1; }
timeout -k 5 30 "$PROBE" --seconds 0.05 --devices 0 >/dev/null 2>"$DEST/logs/probe-smoke.err" ||
  { echo "gpu-clock-check: the probe does not run here:"; cat "$DEST/logs/probe-smoke.err"; exit 1; }
make -C profiler-plugin -j"$(nproc)" build/libnccl-profiler-flowscope.so >/dev/null || exit 1
PLUGIN=$ROOT/profiler-plugin/build/libnccl-profiler-flowscope.so

RINGS=/dev/shm/fs-clock-$$
JOURNAL=$WORK/journal
mkdir -p "$RINGS"
PORT=$((20000 + RANDOM % 20000))
"$JAVA" "${JFLAGS[@]}" -Xmx2g -cp "$CP" io.flowscope.collector.Main run --ring-dir "$RINGS" --port "$PORT" \
  --journal-dir "$JOURNAL" >"$DEST/logs/service.log" 2>&1 &
SERVICE=$!
for _ in $(seq 1 150); do grep -q 'serving http' "$DEST/logs/service.log" && break; sleep 0.2; done
grep -q 'serving http' "$DEST/logs/service.log" || { echo "gpu-clock-check: the service did not start:"; tail "$DEST/logs/service.log"; exit 1; }

# The NCCL run: bursts of 8 all_reduce (64 KiB and 4 MiB alternating) then 4 ms idle, so KernelCh starts come
# both from a busy and from an idle GPU; both ranks stop together when the stop file appears.
cat >"$WORK/clock_workload.py" <<'EOF'
import os, sys, time
import torch
import torch.distributed as dist
stop_file, max_seconds = sys.argv[1], float(sys.argv[2])
local = int(os.environ["LOCAL_RANK"])
torch.cuda.set_device(local)
dev = torch.device("cuda", local)
dist.init_process_group("nccl", device_id=dev)
rank = dist.get_rank()
small = torch.ones(16384, device=dev)
big = torch.ones(1 << 20, device=dev)
flag = torch.zeros(1, device=dev)
for _ in range(20):
    dist.all_reduce(small)
torch.cuda.synchronize()
print("rank %d device %d bus %s ready" % (rank, local, torch.cuda.get_device_properties(local).pci_bus_id
      if hasattr(torch.cuda.get_device_properties(local), "pci_bus_id") else "?"), flush=True)
deadline, bursts = time.time() + max_seconds, 0
while True:
    for k in range(8):
        dist.all_reduce(small if k % 2 == 0 else big)
    torch.cuda.synchronize()
    time.sleep(0.004)
    bursts += 1
    if bursts % 25 == 0:
        flag.fill_(1.0 if os.path.exists(stop_file) or time.time() > deadline else 0.0)
        dist.all_reduce(flag, op=dist.ReduceOp.MAX)
        if flag.item() > 0:
            break
print("rank %d: %d all_reduce" % (rank, bursts * 8), flush=True)
dist.destroy_process_group()
EOF
STOP=$WORK/stop
env NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 NCCL_PROFILER_PLUGIN="$PLUGIN" \
  FLOWSCOPE_RING_DIR="$RINGS" FLOWSCOPE_EVENT_MASK=default,kernelch \
  FLOWSCOPE_KERNEL_SAMPLING="${FLOWSCOPE_KERNEL_SAMPLING:-1}" NCCL_DEBUG=WARN PYTHONUNBUFFERED=1 \
  timeout -k 10 $((PROBE_SECONDS + 120)) torchrun --standalone --nproc_per_node=2 --master_port=$((PORT + 1)) \
  "$WORK/clock_workload.py" "$STOP" $((PROBE_SECONDS + 60)) >"$DEST/logs/workload.log" 2>&1 &
WORKLOAD=$!
for _ in $(seq 1 450); do [ "$(grep -c ' ready' "$DEST/logs/workload.log")" -ge 2 ] && break; sleep 0.2; done
[ "$(grep -c ' ready' "$DEST/logs/workload.log")" -ge 2 ] ||
  { echo "gpu-clock-check: the NCCL run did not start:"; tail -20 "$DEST/logs/workload.log"; exit 1; }
echo "== probe: $PROBE_SECONDS s on every GPU while the NCCL run goes on"
timeout -k 5 $((PROBE_SECONDS + 30)) "$PROBE" --seconds "$PROBE_SECONDS" >"$DEST/probe.csv" 2>"$DEST/logs/probe.err"
PROBE_RC=$?
touch "$STOP"
wait "$WORKLOAD"
echo "workload rc=$?: $(grep -h 'all_reduce' "$DEST/logs/workload.log" | tr '\n' ' ')"
WORKLOAD=
sleep 1 # the last records drained
kill -TERM "$SERVICE"
for _ in $(seq 1 60); do kill -0 "$SERVICE" 2>/dev/null || break; sleep 0.5; done
kill -KILL "$SERVICE" 2>/dev/null && echo "gpu-clock-check: the service did not stop in 30 s (killed)"
wait "$SERVICE" 2>/dev/null
SERVICE=
[ "$PROBE_RC" -eq 0 ] || { echo "gpu-clock-check: probe rc=$PROBE_RC:"; cat "$DEST/logs/probe.err"; }
grep '^#' "$DEST/probe.csv"
engine_report "$JOURNAL" || { echo "gpu-clock-check: GpuClockReport failed:"; cat "$DEST/logs/engine.err"; exit 1; }
grep '^gpu,' "$DEST/engine.csv"
python3 deploy/gpu/gpu_clock_compare.py "$DEST/probe.csv" "$DEST/engine.csv" --out "$DEST"
RC=$?
du -sh "$DEST"/* | tr '\n' ' '; echo
exit $RC
