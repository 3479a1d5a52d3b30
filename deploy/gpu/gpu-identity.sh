#!/usr/bin/env bash
# The plugin's communicator entries on real GPUs (issue #15: a culprit an operator can act on): builds the plugin
# here, runs a 2-rank torch all_reduce with it loaded (NCCL as torch ships it), then prints each ring's communicator
# entries with the Java reader (ring-tool stat) and checks each rank's CUDA device, PCI bus id and GPU UUID (ring
# layout 1.2: cuDeviceGetUuid_v2) against
# nvidia-smi (CUDA_DEVICE_ORDER=PCI_BUS_ID: nvidia-smi's order): once with every GPU visible, once with
# CUDA_VISIBLE_DEVICES reversed (the ordinal is the process's, the bus id the GPU's). Needs >= 2 GPUs, torch, gcc
# and the reader's Java runtime and jars in .carry/ (deploy/gpu/make-carry.sh). Exit 0 when every entry matches.
set -uo pipefail
shopt -s nullglob
ROOT=$(pwd)
WORK=$(mktemp -d /tmp/flowscope-gpuid.XXXXXX)
trap 'rm -rf "$WORK" /dev/shm/fs-gpuid-*' EXIT
make -C profiler-plugin -j"$(nproc)" build/libnccl-profiler-flowscope.so >/dev/null || exit 1
PLUGIN=$ROOT/profiler-plugin/build/libnccl-profiler-flowscope.so
. deploy/gpu/carried-java.sh
carried_java "$WORK" || exit 1
python3 -c 'import torch; print("torch", torch.__version__, "NCCL", ".".join(map(str, torch.cuda.nccl.version())))'
echo "== nvidia-smi --query-gpu=index,pci.bus_id,uuid --format=csv"
nvidia-smi --query-gpu=index,pci.bus_id,uuid --format=csv | tee "$WORK/smi.csv"
status=0
for cvd in "" "1,0"; do
  rings=/dev/shm/fs-gpuid-${cvd:-all}; rings=${rings/,/}
  echo "== torchrun, 2 ranks, CUDA_VISIBLE_DEVICES='${cvd}'"
  env ${cvd:+CUDA_VISIBLE_DEVICES=$cvd} CUDA_DEVICE_ORDER=PCI_BUS_ID NCCL_NVLS_ENABLE=0 \
    TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NCCL_DEBUG=WARN NCCL_PROFILER_PLUGIN="$PLUGIN" FLOWSCOPE_RING_DIR="$rings" \
    FLOWSCOPE_RING_SIZE=8M PYTHONUNBUFFERED=1 \
    timeout -k 10 120 torchrun --standalone --nproc_per_node=2 deploy/gpu/identity_workload.py 2>&1 \
    | grep -v '^W.*OMP_NUM_THREADS\|^\*\*\*\*' | tee "$WORK/torch-${cvd:-all}.txt" || status=1
  : >"$WORK/stat-${cvd:-all}.txt"
  for ring in "$rings"/*.ring; do
    echo "-- ring-tool stat $ring"
    "$JAVA" "${JFLAGS[@]}" -cp "$ROOT/.carry/lib/*" io.flowscope.ring.cli.RingTool stat "$ring" \
      | grep -E '^layout|^producer|^nccl|^communicators|^  \[[0-9]+\] hash' | tee -a "$WORK/stat-${cvd:-all}.txt"
  done
  python3 - "$WORK/smi.csv" "$WORK/stat-${cvd:-all}.txt" "$cvd" <<'PY' || status=1
import re, sys
def norm(bus):  # "00000000:19:00.0" (nvidia-smi) and "0000:19:00.0" (CUDA) name the same device
    dom, rest = bus.strip().split(":", 1)
    return f"{int(dom, 16):x}:{rest.lower()}"
smi = {}
for line in open(sys.argv[1]).read().splitlines()[1:]:
    i, b, u = line.split(",")
    smi[int(i)] = (b.strip(), u.strip())
visible = [int(v) for v in sys.argv[3].split(",")] if sys.argv[3] else sorted(smi)
pid, bad, n = None, 0, 0
for line in open(sys.argv[2]):
    m = re.match(r"producer\s+pid (\d+)", line)
    if m: pid = m.group(1)
    m = re.search(r"rank (\d+)/(\d+) .* gpu (\d+) \(([^)]*)\)", line)
    if "hash" in line:
        n += 1
        if not m:
            bad += 1; print(f"  pid {pid}: NO DEVICE in {line.strip()}"); continue
        dev, ids = int(m.group(3)), m.group(4).split(", ")
        bus, uuid = ids[0], ids[1] if len(ids) > 1 else "(none)"
        phys = visible[dev]
        ok = norm(bus) == norm(smi[phys][0]) and uuid.lower() == smi[phys][1].lower()
        bad += not ok
        print(f"  pid {pid} rank {m.group(1)}: CUDA device {dev} bus {bus} uuid {uuid} -> nvidia-smi index {phys}"
              f" bus {smi[phys][0]} uuid {smi[phys][1]}: {'MATCH' if ok else 'MISMATCH'}")
print(f"  {n} communicator entries, {bad} not matching nvidia-smi")
sys.exit(1 if bad or n == 0 else 0)
PY
done
echo "gpu-identity: $([ $status = 0 ] && echo OK || echo FAILED)"
exit $status
