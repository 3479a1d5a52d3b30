#!/usr/bin/env bash
# KernelCh sampling on real NCCL: for each transport and FLOWSCOPE_KERNEL_SAMPLING rate, a torchrun of
# sampling_workload.py (20,000 iterations of all_reduce, all_gather, reduce_scatter, send/recv, a grouped
# p2p of four operations and a group of three all_reduce, every result checked on the GPU) with the plugin
# recording the default kinds plus KernelCh and the API events, under a timeout that reports a hang; then
# check_sampling.py reads both ranks' rings: KernelCh exactly on the due groups of each communicator, the
# same groups on both ranks. Optionally (OVERHEAD_REPS > 0) the bus bandwidth of the sampled configuration
# against NCCL_PROFILER_PLUGIN=none, interleaved (overhead-by-mask.sh), until DEADLINE_S.
#
#   deploy/gpu/kernel-sampling.sh           from the repository root, on a machine with >= 2 GPUs and torch
# Environment: RATES (100,7,2,1, in that order), TRANSPORTS (nvlink,socket; empty: no validation run),
#   ITERS (20000), TIMEOUT_S (a run's hang timeout: 120 nvlink, 180 socket), VALIDATION_BUDGET_S (seconds
#   after which no further run starts, 330), OVERHEAD_REPS (0), OVERHEAD_CONFIGS (none,0xDF@100),
#   OVERHEAD_TRANSPORTS (nvlink; space-separated), BUDGET (bytes per point, 1G), DEADLINE_S (seconds of the
#   whole script, 560).
# Output in $OUT (or ./gpu-out): kernel-sampling.txt (everything), kernel-sampling-runs.tgz (per-run logs).
set -uo pipefail
RATES=${RATES:-100,7,2,1}
TRANSPORTS=${TRANSPORTS-nvlink,socket}
ITERS=${ITERS:-20000}
VALIDATION_BUDGET_S=${VALIDATION_BUDGET_S:-330}
DEADLINE_S=${DEADLINE_S:-560}
OUTDIR=${OUT:-$PWD/gpu-out}
WORK=$(mktemp -d /tmp/fs-ks.XXXXXX)
mkdir -p "$OUTDIR" "$WORK/runs"
exec > >(tee -a "$OUTDIR/kernel-sampling.txt") 2>&1
T0=$SECONDS
START_EPOCH=$(date +%s)
echo "# KernelCh sampling on real NCCL, $(date -u +%FT%TZ)"
nvidia-smi -L
python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version(), "gpus", torch.cuda.device_count())'
echo "cpus $(nproc); $(df -h /dev/shm | tail -1)"
make -C profiler-plugin -j"$(nproc)" build/libnccl-profiler-flowscope.so >"$WORK/make.log" 2>&1 || { cat "$WORK/make.log"; exit 1; }
PLUGIN=$PWD/profiler-plugin/build/libnccl-profiler-flowscope.so
GPUS=$(nvidia-smi -L | wc -l)
MASK=default,kernelch,groupapi,collapi,p2papi,kernellaunch
PORT=29800
checks=()
IFS=, read -r -a TL <<<"$TRANSPORTS"
IFS=, read -r -a RL <<<"$RATES"
for t in "${TL[@]}"; do
  case "$t" in
    nvlink) TENV="NCCL_NVLS_ENABLE=0"; TMO=${TIMEOUT_S:-120} ;;
    socket) TENV="NCCL_NVLS_ENABLE=0 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_IB_DISABLE=1 NCCL_NET=Socket"; TMO=${TIMEOUT_S:-180} ;;
    *) echo "unknown transport $t"; exit 2 ;;
  esac
  for n in "${RL[@]}"; do
    if [ $((SECONDS - T0)) -ge "$VALIDATION_BUDGET_S" ]; then echo "!! $t N=$n skipped: validation budget spent"; continue; fi
    name=$t-N$n
    ring=/dev/shm/fs-ks-$name
    rm -rf "$ring"; mkdir -p "$ring"
    PORT=$((PORT + 1))
    echo "== $name: $TENV FLOWSCOPE_KERNEL_SAMPLING=$n FLOWSCOPE_EVENT_MASK=$MASK (timeout ${TMO} s)"
    s=$SECONDS
    env $TENV NCCL_PROFILER_PLUGIN="$PLUGIN" FLOWSCOPE_RING_DIR="$ring" FLOWSCOPE_EVENT_MASK=$MASK \
      FLOWSCOPE_KERNEL_SAMPLING="$n" FLOWSCOPE_RING_SIZE=4G FLOWSCOPE_RING_LANES=4 NCCL_DEBUG=WARN PYTHONUNBUFFERED=1 \
      timeout -k 5 "$TMO" torchrun --standalone --nproc_per_node="$GPUS" --master_port=$PORT \
      deploy/gpu/sampling_workload.py --iters "$ITERS" --label "$name" >"$WORK/runs/$name.log" 2>&1
    rc=$?
    grep -E "^\[$name\]|WARN|Error|error" "$WORK/runs/$name.log" | grep -v "^\s*$" | head -20
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then echo "!! $name HANG: no exit within ${TMO} s (rc $rc)"
    elif [ $rc -ne 0 ]; then echo "!! $name failed (rc $rc)"; tail -20 "$WORK/runs/$name.log"
    else echo "-- $name exited 0 after $((SECONDS - s)) s"; fi
    # The rings are read in the background while the next run goes on, then removed.
    (python3 deploy/gpu/check_sampling.py "$ring" "$n" --label "$name" >"$WORK/runs/$name.check" 2>&1; rm -rf "$ring") &
    checks+=($!)
  done
done
for p in "${checks[@]}"; do wait "$p"; done
echo "== ring checks"
cat "$WORK"/runs/*.check 2>/dev/null
echo "validation: $((SECONDS - T0)) s"
if [ "${OVERHEAD_REPS:-0}" -gt 0 ]; then
  echo "== overhead: ${OVERHEAD_CONFIGS:-none,0xDF@100}, ${OVERHEAD_REPS} repetitions, interleaved, until ${DEADLINE_S} s"
  for t in ${OVERHEAD_TRANSPORTS:-nvlink}; do
    TRANSPORT=$t COLLS=all_reduce,all_gather,reduce_scatter,sendrecv MIN_SIZE=1K MAX_SIZE=1G BUDGET=${BUDGET:-1G} \
      DEADLINE_AT=$((START_EPOCH + DEADLINE_S)) OUT=$WORK bash deploy/gpu/overhead-by-mask.sh "${OVERHEAD_CONFIGS:-none,0xDF@100}" "$OVERHEAD_REPS"
  done
  cp "$WORK"/by-mask-*.tgz "$OUTDIR/" 2>/dev/null
fi
tar czf "$OUTDIR/kernel-sampling-runs.tgz" -C "$WORK" runs
echo "total: $((SECONDS - T0)) s"
