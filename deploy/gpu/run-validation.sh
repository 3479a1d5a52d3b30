#!/usr/bin/env bash
# flowscope on real NCCL: builds the plugin on a GPU machine, runs all_reduce, all_gather,
# reduce_scatter and send/recv across the local GPUs with the plugin loaded and the Java
# reader draining the rings live, and measures bus bandwidth with the plugin against
# NCCL_PROFILER_PLUGIN=none in the same script, interleaved, over several repetitions.
# Configurations: none (NCCL_PROFILER_PLUGIN=none), plugin (the defaults: KernelCh sampled on
# one group in 100), kernelall (FLOWSCOPE_KERNEL_SAMPLING=1: GPU timestamps on every operation).
#
# Run from the repository root on a machine with >= 2 GPUs, torch (with its NCCL), gcc, and
# a Java runtime + the reader's jars prepared on the build machine by deploy/gpu/make-carry.sh
# (.carry/jre.tgz and .carry/lib/*.jar):
#
#   deploy/gpu/run-validation.sh [--transports nvlink,socket] [--configs none,plugin,kernelall]
#                                [--reps 3] [--max-size 1G] [--budget 4G] [--socket-budget 1G]
#                                [--out DIR]
#
# Transports: nvlink = NCCL's default intra-node path (P2P/NVLink, NCCL_NVLS_ENABLE=0);
#             socket = NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_IB_DISABLE=1, which sends
#             through the network (socket) transport and so produces proxy events.
# Output (in --out, default $OUT or ./gpu-out): report.md, log.txt, artifacts.tgz.
set -euo pipefail

TRANSPORTS=nvlink,socket
CONFIGS=none,plugin,kernelall
REPS=3
MAX_SIZE=1G
BUDGET=4G
SOCKET_BUDGET=1G
OUTDIR=${OUT:-$PWD/gpu-out}
while [ $# -gt 0 ]; do
  case "$1" in
    --transports) TRANSPORTS=$2; shift 2 ;;
    --configs) CONFIGS=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --max-size) MAX_SIZE=$2; shift 2 ;;
    --budget) BUDGET=$2; shift 2 ;;
    --socket-budget) SOCKET_BUDGET=$2; shift 2 ;;
    --out) OUTDIR=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

ROOT=$(pwd)
WORK=$(mktemp -d /tmp/flowscope-gpu.XXXXXX)
mkdir -p "$OUTDIR" "$WORK/runs" "$WORK/captures"
REPORT=$OUTDIR/report.md
exec > >(tee -a "$OUTDIR/log.txt") 2>&1

GPUS=$(nvidia-smi -L | wc -l)
{
  echo "# flowscope GPU validation, $(date -u +%FT%TZ)"
  echo
  echo '```'
  nvidia-smi -L
  nvidia-smi topo -m || true
  python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version(), "gpus", torch.cuda.device_count())'
  echo "cpus $(nproc)  $(gcc --version | head -1)"
  df -h /dev/shm | tail -1
  echo '```'
} | tee "$REPORT"

echo "== build the plugin with this machine's gcc"
make -C profiler-plugin -j"$(nproc)" all >"$WORK/make.log" 2>&1 || { cat "$WORK/make.log"; exit 1; }
PLUGIN=$ROOT/profiler-plugin/build/libnccl-profiler-flowscope.so
echo "exported: $(nm -D --defined-only "$PLUGIN" | awk '{print $3}' | grep -v '^$' | tr '\n' ' ')"

if [ -z "${SKIP_BENCH:-}" ]; then
echo "== C benchmark on this host ($(nproc) cores)"
# Its ring files are removed right after: /dev/shm is shared with NCCL's own segments.
# Twice: a consumer spinning right behind the producers, and one that sleeps BENCH_IDLE_US
# when it finds nothing (as the Java reader backs off), reading in bursts.
for idle in 0 "${BENCH_IDLE_US:-20}"; do
  profiler-plugin/build/fs_bench --plugin profiler-plugin/build/libnccl-profiler-flowscope.so \
    --ring-dir /dev/shm/flowscope-bench --ring-size 512M --threads "${BENCH_THREADS:-1,2,4,8}" \
    --events "${BENCH_EVENTS:-2000000}" --consumer-idle-us "$idle"
done | tee "$WORK/fs_bench.txt"
rm -rf /dev/shm/flowscope-bench
else echo "(C benchmark skipped: SKIP_BENCH)" >"$WORK/fs_bench.txt"; fi

tar xzf .carry/jre.tgz -C "$WORK"
JAVA=$(ls -d "$WORK"/*/bin/java | head -1)
CP="$ROOT/.carry/lib/*"
JFLAGS="--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED"
"$JAVA" -version

transport_env() {
  case "$1" in
    nvlink) echo "NCCL_NVLS_ENABLE=0" ;;
    socket) echo "NCCL_NVLS_ENABLE=0 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_IB_DISABLE=1" ;;
  esac
}

PORT=29600
run_one() { # config transport rep
  local config=$1 transport=$2 rep=$3 budget=$BUDGET name="$1-$2-$3" ringdir capture_pid=""
  [ "$transport" = socket ] && budget=$SOCKET_BUDGET
  PORT=$((PORT + 1))
  local envs; envs="$(transport_env "$transport") NCCL_PROFILER_PLUGIN=none"
  if [ "$config" != none ]; then
    ringdir=/dev/shm/flowscope-$name
    rm -rf "$ringdir"; mkdir -p "$ringdir"
    envs="$(transport_env "$transport") NCCL_PROFILER_PLUGIN=$PLUGIN FLOWSCOPE_RING_DIR=$ringdir"
    [ "$config" = kernelall ] && envs="$envs FLOWSCOPE_KERNEL_SAMPLING=1"
    # The reader attaches to the rings as the ranks create them and drains them live.
    "$JAVA" $JFLAGS -Xmx2g -cp "$CP" io.flowscope.ring.cli.RingTool capture "$ringdir" \
      --summary "$WORK/captures/$name-summary.json" --timeline "$WORK/captures/$name-timeline.txt" \
      >"$WORK/captures/$name-capture.log" 2>&1 &
    capture_pid=$!
  fi
  echo "-- $name: $envs"
  # A run that does not finish in RUN_TIMEOUT seconds is reported and the sweep goes on.
  env $envs NCCL_DEBUG=${NCCL_DEBUG:-WARN} timeout -k 10 "${RUN_TIMEOUT:-240}" torchrun --standalone --nproc_per_node="$GPUS" --master_port=$PORT \
    deploy/gpu/nccl_workload.py --max-size "$MAX_SIZE" --budget "$budget" --label "$name" \
    --out "$WORK/runs/$name.json" >"$WORK/runs/$name.log" 2>&1 || { echo "!! $name failed or timed out"; tail -30 "$WORK/runs/$name.log"; }
  if [ -n "$capture_pid" ]; then
    kill -TERM "$capture_pid"; wait "$capture_pid" || true
    rm -rf "$ringdir"
  fi
}

IFS=, read -r -a TLIST <<<"$TRANSPORTS"
IFS=, read -r -a CLIST <<<"$CONFIGS"
for rep in $(seq 1 "$REPS"); do
  for transport in "${TLIST[@]}"; do
    # Rotate the order so slow drift of the machine favours no configuration.
    n=${#CLIST[@]}
    for i in $(seq 0 $((n - 1))); do run_one "${CLIST[$(((i + rep) % n))]}" "$transport" "$rep"; done
  done
done

{
  echo
  echo "## Bus bandwidth, plugin vs none"
  python3 deploy/gpu/compare_overhead.py "$WORK/runs"
  echo
  echo "## C benchmark on this host"
  echo '```'
  cat "$WORK/fs_bench.txt"
  echo '```'
  for transport in "${TLIST[@]}"; do
    echo
    echo "## Events decoded by the Java reader: $transport, ${CLIST[-1]}, repetition 1"
    echo '```'
    cat "$WORK/captures/${CLIST[-1]}-$transport-1-summary.json" 2>/dev/null || echo "(no summary)"
    echo '```'
    echo "Sample timeline:"
    echo '```'
    head -40 "$WORK/captures/${CLIST[-1]}-$transport-1-timeline.txt" 2>/dev/null || echo "(no timeline)"
    echo '```'
  done
} | tee -a "$REPORT"

tar czf "$OUTDIR/artifacts.tgz" -C "$WORK" runs captures fs_bench.txt make.log
echo "report: $REPORT"
