#!/bin/sh
# Harness scenarios: each run must exit 0 and pass --verify (ring header,
# counters, checksums and per-kind record counts against the expect file).
#   scenarios.sh BUILD_DIR [normal|sanitizer]
set -eu
dir=$1
mode=${2:-normal}
so=$dir/libnccl-profiler-flowscope.so
h=$dir/fs_harness
ops=200
[ "$mode" = sanitizer ] && ops=60
tmp=$(mktemp -d "${TMPDIR:-/tmp}/flowscope-scenarios.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
n=0
run() {
    name=$1
    shift
    n=$((n + 1))
    out=$("$h" --plugin "$so" --ring-dir "$tmp/$n" --expect "$tmp/$n.expect" --verify "$@" 2>"$tmp/$n.err") || {
        echo "scenario $name: FAIL ($*)"
        cat "$tmp/$n.err"
        exit 1
    }
    echo "scenario $name: OK  $out"
}
run abi5-default --abi 5 --ops $ops
run abi4-all --abi 4 --mask all --ops $ops
run abi6-all --abi 6 --mask all --ops $ops --comms 3
# one lane of 16 slots, no consumer: exactly the first 16 records kept, the rest dropped_full
run tiny-ring --abi 5 --mask all --ring-lanes 1 --ring-size 1K --ops $ops
records=$(echo "$out" | sed -n 's/.* records=\([0-9]*\) .*/\1/p')
grep -q "verify: lanes=1 lane_capacity=16 readable=16 dropped_full=$((records - 16)) " "$tmp/$n.err" || { echo "scenario tiny-ring: expected 16 kept, $((records - 16)) dropped"; cat "$tmp/$n.err"; exit 1; }
# the default lanes (8) x 16 slots: per lane, readable + dropped_full == records
run tiny-ring-lanes --abi 5 --mask all --ring-size 8K --ops $ops
grep -q "verify: lanes=8 lane_capacity=16 " "$tmp/$n.err" || { echo "scenario tiny-ring-lanes: expected 8 lanes of 16 slots"; cat "$tmp/$n.err"; exit 1; }
# a single lane at the default size: every producer thread shares one tail
run one-lane --abi 6 --mask all --ring-lanes 1 --ops $ops --comms 3
grep -q "verify: lanes=1 lane_capacity=1048576 " "$tmp/$n.err" || { echo "scenario one-lane: expected 1 lane of 1048576 slots"; cat "$tmp/$n.err"; exit 1; }
run abuse-abi5 --abi 5 --mask all --abuse --ops $ops
run abuse-abi4 --abi 4 --abuse --ops $ops
run abuse-abi6 --abi 6 --mask 0x7fff --abuse --ops $ops
run mask-names --abi 5 --mask proxystep,netplugin,groupapi --ops $ops
# KernelCh on one group in 4 (groups 0, 4, 8, ... of the one communicator): NCCL's mask carries the bit for
# exactly a quarter of the groups; ABI v4 refuses N > 1 (one WARN, KernelCh off)
run kernel-sampling --abi 5 --mask all --kernel-sampling 4 --ops $ops --comms 1
echo "$out" | grep -q "kernelGroups=$(((ops + 3) / 4))/$ops\$" || { echo "scenario kernel-sampling: expected kernelGroups=$(((ops + 3) / 4))/$ops"; exit 1; }
run kernel-sampling-v4 --abi 4 --mask all --kernel-sampling 4 --ops $ops --comms 1
echo "$out" | grep -q "kernelGroups=0/$ops\$" || { echo "scenario kernel-sampling-v4: expected kernelGroups=0/$ops"; exit 1; }
[ "$(grep -c "NCCL WARN flags=0x4000 .*FLOWSCOPE_KERNEL_SAMPLING=4 needs NCCL's profiler ABI v5" "$tmp/$n.err")" = 1 ] || { echo "scenario kernel-sampling-v4: expected one WARN"; exit 1; }
run kernel-never --abi 6 --mask all --kernel-sampling 0 --ops $ops
echo "$out" | grep -q "kernelGroups=0/" || { echo "scenario kernel-never: KernelCh requested"; exit 1; }
# a bad value: one WARN line, then the default mask
run bad-mask --abi 5 --mask bogus --ops 20
grep -q "FLOWSCOPE_EVENT_MASK='bogus'" "$tmp/$n.err" || { echo "scenario bad-mask: no WARN"; exit 1; }
grep -q "NCCL WARN flags=0x4000 .*FLOWSCOPE_EVENT_MASK='bogus'" "$tmp/$n.err" || { echo "scenario bad-mask: WARN not through NCCL's logger"; exit 1; }
# lanes: not a power of two -> rounded down with one WARN; out of range -> one WARN and the default 8
run lanes-rounded --abi 5 --ring-lanes 6 --ops 20
[ "$(grep -c "FLOWSCOPE_RING_LANES='6'" "$tmp/$n.err")" = 1 ] || { echo "scenario lanes-rounded: expected one WARN"; exit 1; }
grep -q "verify: lanes=4 " "$tmp/$n.err" || { echo "scenario lanes-rounded: expected 4 lanes"; exit 1; }
run lanes-bad --abi 5 --ring-lanes 65 --ops 20
[ "$(grep -c "NCCL WARN flags=0x4000 .*FLOWSCOPE_RING_LANES='65'" "$tmp/$n.err")" = 1 ] || { echo "scenario lanes-bad: expected one WARN through NCCL's logger"; exit 1; }
grep -q "verify: lanes=8 " "$tmp/$n.err" || { echo "scenario lanes-bad: expected the default 8 lanes"; exit 1; }
# the CUDA device of each communicator's rank, through the stand-in driver (each init thread its own device; the
# abuse communicators none): --verify checks cuda_dev and pci_bus_id of every entry (without it: all unknown)
if [ -n "${FS_FAKE_CUDA_LIB:-}" ]; then
    run gpu-devices --abi 5 --comms 4 --abuse --ops 20 --fake-cuda "$FS_FAKE_CUDA_LIB"
    run gpu-devices-v4 --abi 4 --comms 2 --ops 20 --fake-cuda "$FS_FAKE_CUDA_LIB"
else
    echo "scenario gpu-devices: skipped (FS_FAKE_CUDA_LIB unset)"
fi
echo "all $n scenarios passed ($mode)"
