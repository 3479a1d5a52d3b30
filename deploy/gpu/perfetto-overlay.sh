#!/usr/bin/env bash
# flowscope's Perfetto export laid over the PyTorch profiler's trace of the same run (issue #18, item 6): the
# collector service drains the rings of a 2-rank torchrun all_reduce (plugin loaded, KernelCh on) into its journal
# while each rank profiles 50 all_reduces (profiled_allreduce.py); `replay --trace` exports the journal; then
# check_overlay.py matches each NCCL kernel of the PyTorch traces to flowscope's GPU collective slice on the epoch
# and reports the start differences. Needs .carry/ from `deploy/gpu/make-carry.sh --collector`, torch, >= 2 GPUs.
# Writes $OUT (or ./gpu-out) /perfetto/: flowscope.json.gz, torch-rank*.json.gz, check.txt, service.log.
# Exit 0 when the export is on the rings' clock anchors and the median |start difference| is under 100 us.
set -uo pipefail
ROOT=$(pwd)
WORK=$(mktemp -d /tmp/flowscope-overlay.XXXXXX)
DEST=${OUT:-$ROOT/gpu-out}/perfetto
mkdir -p "$DEST"
rings=/dev/shm/fs-overlay
SERVICE=
cleanup() { [ -n "$SERVICE" ] && kill -TERM "$SERVICE" 2>/dev/null; wait; rm -rf "$rings" "$WORK"; }
trap cleanup EXIT
make -C profiler-plugin -j"$(nproc)" build/libnccl-profiler-flowscope.so >/dev/null || exit 1
PLUGIN=$ROOT/profiler-plugin/build/libnccl-profiler-flowscope.so
. deploy/gpu/carried-java.sh
carried_java "$WORK" || exit 1
python3 -c 'import torch; print("torch", torch.__version__, "NCCL", ".".join(map(str, torch.cuda.nccl.version())))'
rm -rf "$rings"; mkdir -p "$rings"
port=$((20000 + RANDOM % 20000))
"$JAVA" "${JFLAGS[@]}" -Xmx2g -cp "$ROOT/.carry/lib/*" io.flowscope.collector.Main run --ring-dir "$rings" \
  --port "$port" --journal-dir "$WORK/journal" >"$DEST/service.log" 2>&1 &
SERVICE=$!
for _ in $(seq 1 150); do grep -q 'serving http' "$DEST/service.log" && break; sleep 0.2; done
env NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NCCL_DEBUG=WARN NCCL_PROFILER_PLUGIN="$PLUGIN" \
  FLOWSCOPE_RING_DIR="$rings" FLOWSCOPE_EVENT_MASK=default,kernelch PYTHONUNBUFFERED=1 \
  timeout -k 10 180 torchrun --standalone --nproc_per_node=2 --master_port=$((port + 1)) \
  deploy/gpu/profiled_allreduce.py --out "$WORK" 2>&1 | grep -v '^W.*OMP_NUM_THREADS\|^\*\*\*\*'
sleep 2   # the last records drained
kill -TERM "$SERVICE"; wait "$SERVICE"; SERVICE=
"$JAVA" "${JFLAGS[@]}" -Xmx4g -cp "$ROOT/.carry/lib/*" io.flowscope.collector.Main replay "$WORK/journal" \
  --no-progress --trace "$WORK/flowscope.json" --trace-base "$WORK/torch-rank0.json" >/dev/null 2>"$WORK/replay.err"
cat "$WORK/replay.err"
python3 deploy/gpu/check_overlay.py "$WORK/flowscope.json" "$WORK"/torch-rank*.json 2>&1 | tee "$DEST/check.txt"
status=${PIPESTATUS[0]}
gzip -c "$WORK/flowscope.json" >"$DEST/flowscope.json.gz"
for f in "$WORK"/torch-rank*.json; do gzip -c "$f" >"$DEST/$(basename "$f").gz"; done
exit "$status"
