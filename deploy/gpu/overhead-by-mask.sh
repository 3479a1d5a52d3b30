#!/usr/bin/env bash
# Locates the plugin's cost in NCCL's launch-bound range (1-16 MiB over NVLink): the same
# workload with NCCL_PROFILER_PLUGIN=none and with the plugin at several event masks,
# interleaved, REPS times. No reader drains the rings (a large ring absorbs the run; what
# does not fit is dropped and counted, as in production).
#   deploy/gpu/overhead-by-mask.sh [masks, default none,0x1,0x3,0x7,0x9F] [reps, default 3]
# A mask MASK@N also sets FLOWSCOPE_KERNEL_SAMPLING=N (e.g. 0xDF@100: the default kinds and KernelCh on one
# group in 100 of each communicator).
# Environment: TRANSPORT=nvlink|socket (default nvlink), COLLS, MIN_SIZE, MAX_SIZE, RING_SIZE, BUDGET,
# DEADLINE_AT (epoch seconds: no repetition starts that would, at the pace of the last one, end after it).
# Prints, per collective and size, the median over repetitions of each run's median batch
# time and, beside it, of each run's fastest batch (robust to a stalled batch).
set -euo pipefail
MASKS=${1:-none,0x1,0x3,0x7,0x9F}
REPS=${2:-3}
TRANSPORT=${TRANSPORT:-nvlink}
OUTDIR=${OUT:-$PWD/gpu-out}/by-mask-$TRANSPORT
case "$TRANSPORT" in
  nvlink) TENV="NCCL_NVLS_ENABLE=0" ;;
  socket) TENV="NCCL_NVLS_ENABLE=0 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_IB_DISABLE=1" ;;
  *) echo "TRANSPORT must be nvlink or socket" >&2; exit 2 ;;
esac
mkdir -p "$OUTDIR"
make -C profiler-plugin -j"$(nproc)" build/libnccl-profiler-flowscope.so >/dev/null
PLUGIN=$PWD/profiler-plugin/build/libnccl-profiler-flowscope.so
GPUS=$(nvidia-smi -L | wc -l)
PORT=29700
IFS=, read -r -a M <<<"$MASKS"
rep_s=0
for rep in $(seq 1 "$REPS"); do
  if [ -n "${DEADLINE_AT:-}" ] && [ $(($(date +%s) + rep_s)) -gt "$DEADLINE_AT" ]; then
    echo "!! repetitions $rep.. skipped: deadline"; break
  fi
  rep_t0=$(date +%s)
  n=${#M[@]}
  for i in $(seq 0 $((n - 1))); do
    mask=${M[$(((i + rep) % n))]}
    PORT=$((PORT + 1))
    ringdir=/dev/shm/fs-mask-$mask-$rep
    if [ "$mask" = none ]; then envs="NCCL_PROFILER_PLUGIN=none"
    else rm -rf "$ringdir"; mkdir -p "$ringdir"
      envs="NCCL_PROFILER_PLUGIN=$PLUGIN FLOWSCOPE_RING_DIR=$ringdir FLOWSCOPE_EVENT_MASK=${mask%@*} FLOWSCOPE_RING_SIZE=${RING_SIZE:-256M}"
      case "$mask" in *@*) envs="$envs FLOWSCOPE_KERNEL_SAMPLING=${mask#*@}" ;; esac
    fi
    env $TENV $envs timeout -k 10 120 torchrun --standalone --nproc_per_node="$GPUS" --master_port=$PORT \
      deploy/gpu/nccl_workload.py --collectives "${COLLS:-all_reduce,sendrecv}" --min-size "${MIN_SIZE:-1M}" --max-size "${MAX_SIZE:-16M}" --budget "${BUDGET:-1G}" \
      --label "$mask-$rep" --out "$OUTDIR/$mask-$rep.json" >"$OUTDIR/$mask-$rep.log" 2>&1 || echo "!! $mask-$rep failed"
    rm -rf "$ringdir"
  done
  rep_s=$(($(date +%s) - rep_t0))
done
python3 - "$OUTDIR" <<'PY'
import json, glob, sys, statistics, collections
t = collections.defaultdict(list)
for f in glob.glob(sys.argv[1] + "/*.json"):
    d = json.load(open(f)); mask = d["label"].rsplit("-", 1)[0]
    for r in d["results"]:
        t[(r["collective"], r["bytes"], mask)].append((r["time_us"], r["time_us_min"]))
keys = sorted({(c, b) for c, b, _ in t})
masks = sorted({m for _, _, m in t}, key=lambda m: (m != "none", m))
print("µs per operation: median over runs of the run's median batch / of its fastest batch [spread of the runs' "
      "median batches: (max - min) / median]; vs none in %")
print("| collective | size | " + " | ".join(masks) + " |")
print("|---|---|" + "---|" * len(masks))
for c, b in keys:
    base = [statistics.median(x[i] for x in t[(c, b, "none")]) for i in (0, 1)] if (c, b, "none") in t else None
    cells = []
    for m in masks:
        runs = [x[0] for x in t[(c, b, m)]]
        med = [statistics.median(x[i] for x in t[(c, b, m)]) for i in (0, 1)]
        rel = "" if base is None or m == "none" else " (%+.1f%% / %+.1f%%)" % tuple(100 * (med[i] / base[i] - 1) for i in (0, 1))
        cells.append("%.1f / %.1f [%.0f%%]%s" % (med[0], med[1], 100 * (max(runs) - min(runs)) / med[0], rel))
    size = f"{b >> 30} GiB" if b >= 1 << 30 else f"{b >> 20} MiB" if b >= 1 << 20 else f"{b >> 10} KiB"
    print(f"| {c} | {size} | " + " | ".join(cells) + " |")
PY
tar czf "$OUTDIR.tgz" -C "$(dirname "$OUTDIR")" "$(basename "$OUTDIR")" && rm -rf "$OUTDIR"
