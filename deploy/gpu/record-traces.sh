#!/usr/bin/env bash
# Records labelled real-NCCL traces: for each case of a case list, the collector service drains the rings of a
# torchrun job (fault_workload.py, one process per GPU, flowscope's plugin loaded) into its journal; the journal
# is decoded with `Main inspect` into events.jsonl.gz beside the workload's truth.json and workload.log.
#
# Needs .carry/ from `deploy/gpu/make-carry.sh --collector` (Java runtime + collector jars), gcc, and >= 2 GPUs.
#   deploy/gpu/record-traces.sh [--cases FILE] [--only REGEX] [--deadline SECONDS] [--case-timeout SECONDS]
#                               [--dest DIR]
# Case file lines: NAME TRANSPORT WORKLOAD-ARGS...  (TRANSPORT: socket | nvlink | nvlink-k; '#' comments)
#   socket    NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_IB_DISABLE=1: NCCL's socket transport, proxy steps flow
#   nvlink    NCCL's default intra-node path
#   nvlink-k  the same with FLOWSCOPE_EVENT_MASK=default,kernelch (GPU timestamps of kernel channels)
# NCCL_NVLS_ENABLE=0 always. Cases with --mode net run with LD_PRELOAD=slowsend.so (deploy/gpu/slowsend.c).
# Output: DIR/traces/NAME/{events.jsonl.gz,truth.json,workload.log} and DIR/logs/NAME/{service.log,inspect.err};
# DIR defaults to ./gpu-out, or with $OUT set (on the device machine) to a temporary folder whose traces/ and
# logs/ are packed into $OUT/traces.tar at the end (split into traces.tar.part-aa, -ab, ... above 15 MiB). A case that starts after --deadline
# seconds is skipped (reported as such), so a device call ends in time.
set -uo pipefail
CASES=deploy/gpu/trace-cases.txt
ONLY=.
DEADLINE=520
CASE_TIMEOUT=90
DEST=
while [ $# -gt 0 ]; do
  case "$1" in
    --cases) CASES=$2; shift 2 ;;
    --only) ONLY=$2; shift 2 ;;
    --deadline) DEADLINE=$2; shift 2 ;;
    --case-timeout) CASE_TIMEOUT=$2; shift 2 ;;
    --dest) DEST=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
START=$SECONDS
ROOT=$(pwd)
WORK=$(mktemp -d /tmp/flowscope-rec.XXXXXX)
[ -n "$DEST" ] || { if [ -n "${OUT:-}" ]; then DEST=$WORK/out; else DEST=$ROOT/gpu-out; fi; }
mkdir -p "$DEST/traces" "$DEST/logs"

make -C profiler-plugin -j"$(nproc)" build/libnccl-profiler-flowscope.so >/dev/null || exit 1
PLUGIN=$ROOT/profiler-plugin/build/libnccl-profiler-flowscope.so
gcc -O2 -Wall -shared -fPIC -o "$WORK/slowsend.so" deploy/gpu/slowsend.c -ldl || exit 1
. deploy/gpu/carried-java.sh
carried_java "$WORK" || exit 1
GPUS=$(nvidia-smi -L | wc -l)
echo "host: $(nproc) CPUs; GPUs: $(nvidia-smi -L | tr '\n' ';')"
python3 -c 'import torch; print("torch", torch.__version__, "NCCL", ".".join(map(str, torch.cuda.nccl.version())))'

SERVICE=
cleanup() { [ -n "$SERVICE" ] && kill -TERM "$SERVICE" 2>/dev/null; wait; rm -rf /dev/shm/fs-rec-* "$WORK"; }
trap cleanup EXIT

# One case: NAME TRANSPORT ARGS...
record() {
  local name=$1 transport=$2; shift 2
  local dir=$DEST/traces/$name logs=$DEST/logs/$name rings=/dev/shm/fs-rec-$name journal=$WORK/journal-$name
  local port=$((20000 + RANDOM % 20000)) tenv=(NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
    NVSHMEM_DISABLE_NVLS=1 NCCL_PROFILER_PLUGIN="$PLUGIN" FLOWSCOPE_RING_DIR="$rings" NCCL_DEBUG=WARN
    PYTHONUNBUFFERED=1)
  case "$transport" in
    socket) tenv+=(NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_IB_DISABLE=1) ;;
    nvlink) ;;
    nvlink-k) tenv+=(FLOWSCOPE_EVENT_MASK=default,kernelch) ;;
    *) echo "$name: unknown transport $transport"; return 1 ;;
  esac
  case " $* " in *" --mode net "*) tenv+=(LD_PRELOAD="$WORK/slowsend.so") ;; esac
  rm -rf "$dir" "$logs" "$rings" "$journal"
  mkdir -p "$dir" "$logs" "$rings"
  "$JAVA" "${JFLAGS[@]}" -Xmx2g -cp "$ROOT/.carry/lib/*" io.flowscope.collector.Main run --ring-dir "$rings" \
    --port "$port" --journal-dir "$journal" >"$logs/service.log" 2>&1 &
  SERVICE=$!
  for _ in $(seq 1 150); do grep -q 'serving http' "$logs/service.log" && break; sleep 0.2; done
  local t0=$SECONDS rc
  echo "== $name ($transport): $*"
  echo "env: ${tenv[*]}" >"$logs/command.txt"
  echo "torchrun --standalone --nproc_per_node=$GPUS deploy/gpu/fault_workload.py $* --transport-label $transport --out truth.json" >>"$logs/command.txt"
  env "${tenv[@]}" timeout -k 10 "$CASE_TIMEOUT" torchrun --standalone --nproc_per_node="$GPUS" \
    --master_port=$((port + 1)) deploy/gpu/fault_workload.py "$@" --transport-label "$transport" \
    --out "$dir/truth.json" >"$dir/workload.log" 2>&1
  rc=$?
  sleep 2 # the service drains what the last ranks wrote, then sees the rings detach
  kill -TERM "$SERVICE" 2>/dev/null; wait "$SERVICE" 2>/dev/null; SERVICE=
  rm -rf "$rings"
  echo "   workload rc=$rc in $((SECONDS - t0)) s; $(grep -h '^rank' "$dir/workload.log" | tr '\n' ' ')"
  [ $rc -eq 0 ] || { echo "   FAILED: tail of workload.log:"; tail -15 "$dir/workload.log" | sed 's/^/   | /'; }
  # decode in the background while the next case runs
  ( "$JAVA" "${JFLAGS[@]}" -Xmx2g -cp "$ROOT/.carry/lib/*" io.flowscope.collector.Main inspect "$journal" \
      2>"$logs/inspect.err" | gzip -9n >"$dir/events.jsonl.gz"
    rm -rf "$journal" ) &
}

while read -r name transport args; do
  case "$name" in ''|\#*) continue ;; esac
  [[ $name =~ $ONLY ]] || continue
  if [ $((SECONDS - START)) -gt "$DEADLINE" ]; then echo "== $name: SKIPPED (deadline ${DEADLINE}s)"; continue; fi
  # shellcheck disable=SC2086 # the case's arguments are words
  record "$name" "$transport" $args </dev/null
done <"$CASES"
wait
echo "== all cases done in $((SECONDS - START)) s"
for d in "$DEST"/traces/*/; do
  n=$(basename "$d")
  printf '%-34s %10s B  %s\n' "$n" "$(stat -c %s "$d/events.jsonl.gz" 2>/dev/null || echo -)" \
    "$(python3 -c 'import json,sys; t=json.load(open(sys.argv[1])); print(t["mode"], t["us_per_op"])' "$d/truth.json" 2>/dev/null || echo 'no truth.json')"
done
if [ -n "${OUT:-}" ]; then
  tar cf "$OUT/traces.tar" -C "$DEST" traces logs
  if [ "$(stat -c %s "$OUT/traces.tar")" -gt $((15 << 20)) ]; then
    split -b 15m "$OUT/traces.tar" "$OUT/traces.tar.part-" && rm "$OUT/traces.tar"
  fi
  ls -l "$OUT"
fi
