#!/usr/bin/env bash
# The plugin's cost on real NCCL by paired batches in one process (issue #17, acceptance 2): for each transport and
# plugin configuration, one torchrun of paired_overhead.py through mask_shim.so (see both for why), 1 KiB - 1 GiB.
#   deploy/gpu/overhead-paired.sh [CONFIGS] [REPS]     e.g. default,kc1000 2
# CONFIGS (comma-separated): default (the plugin's default mask), kcN (default + KernelCh sampled 1 in N,
# FLOWSCOPE_EVENT_MASK=default,kernelch FLOWSCOPE_KERNEL_SAMPLING=N), or a mask MASK[@N].
# Environment: TRANSPORTS (default nvlink,socket), COLLS, MIN_SIZE, MAX_SIZE, POINT_SECONDS, DEADLINE_AT (epoch s:
# no run starts after it), RING_SIZE. Results: $OUT/paired-TRANSPORT-CONFIG-REP.json and a table on stdout.
set -euo pipefail
CONFIGS=${1:-default}
REPS=${2:-1}
OUTDIR=${OUT:-$PWD/gpu-out}
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUTDIR"
make -C profiler-plugin -j"$(nproc)" build/libnccl-profiler-flowscope.so >/dev/null
PLUGIN=$PWD/profiler-plugin/build/libnccl-profiler-flowscope.so
SHIM=$PWD/profiler-plugin/build/mask_shim.so
gcc -O2 -Wall -fPIC -shared -fvisibility=hidden -Iprofiler-plugin/src/main/c -o "$SHIM" "$HERE/mask_shim.c" -ldl -lpthread
GPUS=$(nvidia-smi -L | wc -l)
PORT=29800
for rep in $(seq 1 "$REPS"); do
  for transport in ${TRANSPORTS:-nvlink socket}; do
    transport=${transport//,/ }
    case "$transport" in
      nvlink) tenv="NCCL_NVLS_ENABLE=0"; maxsize=${MAX_SIZE:-1G} ;;
      socket) tenv="NCCL_NVLS_ENABLE=0 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_IB_DISABLE=1 NCCL_NET=Socket"
              maxsize=${SOCKET_MAX_SIZE:-${MAX_SIZE:-1G}} ;;
      *) echo "transport must be nvlink or socket: $transport" >&2; exit 2 ;;
    esac
    IFS=, read -r -a CS <<<"$CONFIGS"
    for config in "${CS[@]}"; do
      if [ -n "${DEADLINE_AT:-}" ] && [ "$(date +%s)" -gt "$DEADLINE_AT" ]; then echo "!! $transport $config $rep skipped: deadline"; continue; fi
      case "$config" in
        default) cenv="" ;;
        kc*) cenv="FLOWSCOPE_EVENT_MASK=default,kernelch FLOWSCOPE_KERNEL_SAMPLING=${config#kc}" ;;
        *@*) cenv="FLOWSCOPE_EVENT_MASK=${config%@*} FLOWSCOPE_KERNEL_SAMPLING=${config#*@}" ;;
        *) cenv="FLOWSCOPE_EVENT_MASK=$config" ;;
      esac
      ringdir=/dev/shm/fs-paired-$transport-$config-$rep
      rm -rf "$ringdir"; mkdir -p "$ringdir"
      PORT=$((PORT + 1))
      name=paired-$transport-$config-$rep
      echo "== $name ($cenv)"
      t0=$(date +%s)
      env $tenv $cenv NCCL_PROFILER_PLUGIN="$SHIM" FS_SHIM_PLUGIN="$PLUGIN" FLOWSCOPE_RING_DIR="$ringdir" \
        FLOWSCOPE_RING_SIZE="${RING_SIZE:-1G}" PYTHONUNBUFFERED=1 PYTHONPATH="$HERE:$PWD/deploy/gpu" \
        timeout -k 10 "${RUN_TIMEOUT:-400}" torchrun --standalone --nproc_per_node="$GPUS" --master_port=$PORT \
        "$HERE/paired_overhead.py" --collectives "${COLLS:-all_reduce,all_gather,reduce_scatter,sendrecv}" \
        --min-size "${MIN_SIZE:-1K}" --max-size "$maxsize" --point-seconds "${POINT_SECONDS:-2}" \
        --min-trials "${MIN_TRIALS:-8}" --max-iters "${MAX_ITERS:-1000}" \
        --label "$name" --out "$OUTDIR/$name.json" 2>"$OUTDIR/$name.err" || { echo "!! $name failed"; tail -5 "$OUTDIR/$name.err"; }
      echo "   $(( $(date +%s) - t0 )) s; ring: $(du -sh "$ringdir" | cut -f1)"
      rm -rf "$ringdir"
    done
  done
done
