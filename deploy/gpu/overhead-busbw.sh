#!/usr/bin/env bash
# Issue #17 item 2: bus bandwidth with the plugin's default configuration against NCCL_PROFILER_PLUGIN=none,
# fresh processes interleaved, REPS repetitions, 1 KiB - 1 GiB, over NVLink and over sockets. The workload is
# nccl_busbw (nccl-tests' method: a few us of host work per operation), so that the 1-4 MiB points, launch-bound
# through torch, resolve 1 %. PROCS=1 (default): one process per GPU, as torchrun runs NCCL; PROCS=0: one thread
# drives every GPU (every rank's host cost on one thread: the strictest case; results tagged "<transport>.onethread").
#
# On the build machine (nvcc there):   deploy/gpu/overhead-busbw.sh --build   (nvcc -> .carry/nccl_busbw)
# On the GPU host (carry .carry):        deploy/gpu/overhead-busbw.sh [REPS, default 5]
# Environment: CONFIGS (default "none default"; also "noop": a plugin whose callbacks return at once, i.e. what
# NCCL's own profiler plumbing costs; "mask=0x9E": the plugin with FLOWSCOPE_EVENT_MASK; "mask=0xDF@1000": and
# FLOWSCOPE_KERNEL_SAMPLING=1000, KernelCh on one group in 1000), TRANSPORTS (default
# "nvlink socket"), MIN_SIZE (1K), MAX_SIZE (1G), SECONDS_PER_POINT (0.25),
# PIN=N (PROCS=1: rank r on CPUs PIN_BASE + r*N .. (default base 2), the capture on the next 2 CPUs),
# RING_SIZE (4G, the most: with PROCS=0
# one thread drives every GPU, so one lane of 8 takes every record; drops, if any, are reported), DEADLINE_AT (epoch s: no run starts after).
# CAPTURE=1: a consumer drains each plugin run's rings live (`ring-tool capture` from .carry/lib on the carried
# Java, deploy/gpu/make-carry.sh), as the collector does in production, and the rings keep the plugin's default
# size. BATCHES (10): timed batches per point.
# Output under $OUT/busbw/: <transport>-<config>-<rep>.jsonl, .log, rings.txt (records and drops per run),
# summary.md (compare_busbw.py).
set -uo pipefail
if [ "${1:-}" = --build ]; then
  mkdir -p .carry && nvcc -O2 -o .carry/nccl_busbw deploy/gpu/nccl_busbw.cu -ldl && echo "built .carry/nccl_busbw"
  exit
fi
REPS=${1:-5}
BIN=${BUSBW:-.carry/nccl_busbw}
OUTDIR=${OUT:-./out}/busbw
mkdir -p "$OUTDIR"
[ -x "$BIN" ] || { echo "overhead-busbw: no $BIN (build it with nvcc on the build machine, see the header)" >&2; exit 1; }
make -C profiler-plugin -j"$(nproc)" build/libnccl-profiler-flowscope.so build/libnccl-profiler-noop.so >/dev/null || exit 1
PLUGIN=$PWD/profiler-plugin/build/libnccl-profiler-flowscope.so
NOOP=$PWD/profiler-plugin/build/libnccl-profiler-noop.so
if [ "${CAPTURE:-0}" = 1 ]; then
  # shellcheck source=deploy/gpu/carried-java.sh
  source deploy/gpu/carried-java.sh
  JDIR=$(mktemp -d)
  trap 'rm -rf "$JDIR"' EXIT
  carried_java "$JDIR" || { echo "overhead-busbw: CAPTURE=1 needs .carry/jre.tgz (make-carry.sh)" >&2; exit 1; }
  CP=$(ls .carry/lib/*.jar | tr '\n' ':')
fi
NCCL_LIB=$(python3 - <<'PY'
import glob, os
import nvidia.nccl as m
for p in m.__path__:
    hits = sorted(glob.glob(os.path.join(p, "lib", "libnccl.so*")))
    if hits:
        print(hits[0]); break
PY
)
[ -n "$NCCL_LIB" ] || { echo "overhead-busbw: libnccl.so not found in the nvidia.nccl wheel" >&2; exit 1; }
echo "NCCL: $NCCL_LIB; $(date -u +%FT%TZ)" | tee "$OUTDIR/host.txt"
nvidia-smi -L >>"$OUTDIR/host.txt" 2>&1
: >"$OUTDIR/rings.txt"
PINOPT=()
CAPTURE_PIN=""
if [ -n "${PIN:-}" ]; then
  base=${PIN_BASE:-2}
  PINOPT=(--cpus-per-rank "$PIN" --cpu-base "$base")
  ngpu=$(nvidia-smi -L | wc -l)
  c0=$((base + ngpu * PIN))
  CAPTURE_PIN="taskset -c $c0-$((c0 + 1))"
  echo "pinned: $PIN CPUs a rank from CPU $base, capture on $c0-$((c0 + 1))" | tee -a "$OUTDIR/host.txt"
fi
for transport in ${TRANSPORTS:-nvlink socket}; do
  tag=$transport
  [ "${PROCS:-1}" = 0 ] && tag=$transport.onethread
  case "$transport" in
    nvlink) TENV=(NCCL_NVLS_ENABLE=0) ;;
    socket) TENV=(NCCL_NVLS_ENABLE=0 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_IB_DISABLE=1 NCCL_SOCKET_IFNAME=lo) ;;
    *) echo "unknown transport $transport" >&2; exit 2 ;;
  esac
  for rep in $(seq 1 "$REPS"); do
    if [ -n "${DEADLINE_AT:-}" ] && [ "$(date +%s)" -gt "$DEADLINE_AT" ]; then
      echo "!! $tag repetitions $rep.. skipped: deadline"; break
    fi
    read -r -a configs <<<"${CONFIGS:-none default}"
    n=${#configs[@]}
    for k in $(seq 0 $((n - 1))); do
      config=${configs[$(((k + rep) % n))]} # rotate which goes first
      ringdir=/dev/shm/fs-busbw-$transport-$rep
      rm -rf "$ringdir"
      case "$config" in
        none) PENV=(NCCL_PROFILER_PLUGIN=none) ;;
        noop) PENV=(NCCL_PROFILER_PLUGIN="$NOOP") ;;
        default | mask=*) mkdir -p "$ringdir"
          PENV=(NCCL_PROFILER_PLUGIN="$PLUGIN" FLOWSCOPE_RING_DIR="$ringdir")
          [ "${CAPTURE:-0}" = 1 ] || PENV+=(FLOWSCOPE_RING_SIZE="${RING_SIZE:-4G}")
          mask=${config#mask=}
          [ "$config" != default ] && PENV+=(FLOWSCOPE_EVENT_MASK="${mask%@*}")
          [[ "$config" == *@* ]] && PENV+=(FLOWSCOPE_KERNEL_SAMPLING="${mask#*@}") ;;
        *) echo "unknown config $config (none, noop, default, mask=0x.., mask=0x..@N)" >&2; exit 2 ;;
      esac
      t0=$(date +%s)
      run=$tag-$config-$rep
      cap=""
      if [ "${CAPTURE:-0}" = 1 ] && [ -d "$ringdir" ]; then
        $CAPTURE_PIN "$JAVA" "${JFLAGS[@]}" -Xmx1g -cp "$CP" io.flowscope.ring.cli.RingTool capture "$ringdir" \
          --summary "$OUTDIR/$run-capture.json" >"$OUTDIR/$run-capture.log" 2>&1 &
        cap=$!
      fi
      env "${TENV[@]}" "${PENV[@]}" timeout -k 10 300 "$BIN" --nccl "$NCCL_LIB" --procs "${PROCS:-1}" "${PINOPT[@]}" \
        --min "${MIN_SIZE:-1K}" --max "${MAX_SIZE:-1G}" --seconds "${SECONDS_PER_POINT:-0.25}" --batches "${BATCHES:-10}" --label "$run" \
        >"$OUTDIR/$run.jsonl" 2>"$OUTDIR/$run.log" || echo "!! $run failed: $(tail -2 "$OUTDIR/$run.log")"
      echo "$run: $(($(date +%s) - t0)) s, $(wc -l <"$OUTDIR/$run.jsonl") points"
      if [ -n "$cap" ]; then kill -TERM "$cap"; wait "$cap" 2>/dev/null; fi
      if [ -d "$ringdir" ]; then
        python3 deploy/gpu/ring_counts.py "$ringdir" "$run" >>"$OUTDIR/rings.txt" 2>&1
      fi
      rm -rf "$ringdir"
    done
  done
done
cat "$OUTDIR/rings.txt"
python3 deploy/gpu/compare_busbw.py "$OUTDIR" | tee "$OUTDIR/summary.md"
