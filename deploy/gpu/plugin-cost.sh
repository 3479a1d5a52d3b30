#!/usr/bin/env bash
# Issue #17, item 4 ("cheap on many cores"): what one profiler callback costs on this host, through the
# plugin's ABI, from 1, 2, 4 and 8 threads on one communicator, against a no-op plugin measured in the same
# run, with the plugin as it was before the change and as it is now, in one process (fs_abi_bench, interleaved).
#
# On the build machine, once (puts the "before" sources into .carry/, ignored by git, carried to the GPU host):
#     deploy/gpu/plugin-cost.sh --prepare [REF]        REF default 34a5f43 (main before lanes owned by one
#                                                       thread; db07704: before the per-lane drop counts)
# On the GPU host, from the repository root (carry .carry/plugin-before):
#     deploy/gpu/plugin-cost.sh                         writes $OUT/plugin-cost/ (OUT default ./out)
# Needs gcc and make. perf is used when it is there and allowed (perf stat; perf c2c when the CPU's memory
# sampling events exist); without it the script goes on.
#
# Output: host.txt (lscpu, nproc, clocksource, THP), abi-drain.md (consumer draining, threads unpinned),
# abi-drain-pinned.md (one worker per physical core), abi-full.md (no consumer: the ring full, every record
# dropped and counted), claim.txt (fs_claim_bench), fs_bench-*.txt (the older ProxyStep benchmark), perf-*.txt,
# summary.md (every table).
set -uo pipefail

if [ "${1:-}" = --prepare ]; then
  ref=${2:-34a5f43}
  rm -rf .carry/plugin-before && mkdir -p .carry/plugin-before
  git archive "$ref" profiler-plugin | tar -x -C .carry/plugin-before || exit 1
  echo "$ref" >.carry/plugin-before/REF
  echo "prepared .carry/plugin-before from $ref ($(git log -1 --format='%h %s' "$ref"))"
  exit 0
fi

OUTDIR=${OUT:-./out}/plugin-cost
mkdir -p "$OUTDIR"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
PP=profiler-plugin
THREADS=${THREADS:-1,2,4,8}
REPS=${REPS:-5}
CALLS=${CALLS:-200000}

# ---- the host ----
{
  echo "date: $(date -u +%FT%TZ)"
  echo "nproc: $(nproc)"
  echo "clocksource: $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)" \
    "(available: $(cat /sys/devices/system/clocksource/clocksource0/available_clocksource 2>/dev/null))"
  echo "kernel: $(uname -r)"
  echo "THP: enabled $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null);" \
    "shmem $(cat /sys/kernel/mm/transparent_hugepage/shmem_enabled 2>/dev/null)"
  echo "gcc: $(gcc --version | head -1)"
  echo "TSC flags: $(grep -m1 -o -w -E 'constant_tsc|nonstop_tsc|tsc_known_freq|rdtscp|tsc_reliable' /proc/cpuinfo | sort -u | tr '\n' ' ')"
  echo "perf: $(command -v perf || echo absent)"
  echo
  lscpu
} >"$OUTDIR/host.txt" 2>&1
echo "host: $(grep -m1 'Model name' "$OUTDIR/host.txt" | sed 's/.*: *//'), $(nproc) CPUs, clocksource" \
  "$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)"

# ---- builds: after (this tree), after without the slot prefetch, before ----
make -C "$PP" -j"$(nproc)" all >"$WORK/make-after.log" 2>&1 || { tail -30 "$WORK/make-after.log"; exit 1; }
AFTER=$PP/build/libnccl-profiler-flowscope.so
NOOP=$PP/build/libnccl-profiler-noop.so
BENCH=$PP/build/fs_abi_bench
make -C "$PP" BUILD="$WORK/nopf" EXTRA_CFLAGS=-DFS_RING_PREFETCH_AHEAD=0 "$WORK/nopf/libnccl-profiler-flowscope.so" \
  >"$WORK/make-nopf.log" 2>&1 || { tail -30 "$WORK/make-nopf.log"; exit 1; }
PLUGINS=(--plugin "after=$AFTER" --plugin "after-noprefetch=$WORK/nopf/libnccl-profiler-flowscope.so")
if [ -d .carry/plugin-before/profiler-plugin ]; then
  cp -r .carry/plugin-before/profiler-plugin "$WORK/before"
  if make -C "$WORK/before" build/libnccl-profiler-flowscope.so >"$WORK/make-before.log" 2>&1; then
    PLUGINS=(--plugin "before=$WORK/before/build/libnccl-profiler-flowscope.so" "${PLUGINS[@]}")
    echo "before: $(cat .carry/plugin-before/REF 2>/dev/null)"
  else
    echo "before: build failed (no before figures)"; tail -20 "$WORK/make-before.log"
  fi
else
  echo "before: .carry/plugin-before missing (run deploy/gpu/plugin-cost.sh --prepare on the build machine and" \
    "carry it); only after figures"
fi

# ---- pinning: one worker per physical core, skipping the first core; the consumer on the next core ----
mapfile -t FIRST_SIBLINGS < <(for c in /sys/devices/system/cpu/cpu[0-9]*; do
  n=${c##*cpu}
  sib=$(cut -d, -f1 "$c/topology/thread_siblings_list" 2>/dev/null | cut -d- -f1)
  [ "$sib" = "$n" ] && echo "$n"
done | sort -n)
PIN=""
CONSUMER_CPU=""
if [ "${#FIRST_SIBLINGS[@]}" -ge 10 ]; then
  PIN=$(IFS=,; echo "${FIRST_SIBLINGS[*]:1:8}")
  CONSUMER_CPU=${FIRST_SIBLINGS[9]}
fi

run_abi() { # name, extra args...
  local name=$1; shift
  echo "== fs_abi_bench $name"
  timeout 900 "$BENCH" --noop "$NOOP" "${PLUGINS[@]}" --threads "$THREADS" --reps "$REPS" --calls "$CALLS" "$@" \
    >"$OUTDIR/abi-$name.md" 2>&1
  echo "rc=$?" >>"$OUTDIR/abi-$name.md"
  sed -n '/^Cost per callback/,$p' "$OUTDIR/abi-$name.md" | grep -E '^\|' || tail -5 "$OUTDIR/abi-$name.md"
}

run_abi drain --consumer drain
if [ -n "$PIN" ]; then
  run_abi drain-pinned --consumer drain --pin "$PIN" --consumer-cpu "$CONSUMER_CPU"
else
  echo "(pinned run skipped: fewer than 10 physical cores)"
fi
run_abi full --consumer none

# ---- the claim alone: CAS claim of a shared lane against an owned lane's load/store (this tree only) ----
echo "== fs_claim_bench"
timeout 300 "$PP/build/fs_claim_bench" >"$OUTDIR/claim.txt" 2>&1
cat "$OUTDIR/claim.txt"

# ---- the older ProxyStep benchmark (docs/benchmarks.md section 1), before and after ----
for p in "${PLUGINS[@]}"; do
  [ "$p" = --plugin ] && continue
  name=${p%%=*}; so=${p#*=}
  echo "== fs_bench $name"
  timeout 600 "$PP/build/fs_bench" --plugin "$so" --threads "$THREADS" --events 1000000 --ring-size 512M \
    >"$OUTDIR/fs_bench-$name.txt" 2>&1
  grep -E '^ *[0-9]+ ' "$OUTDIR/fs_bench-$name.txt"
done

# ---- perf, when it is there ----
if command -v perf >/dev/null 2>&1 && perf stat -e cycles true >/dev/null 2>&1; then
  for p in "${PLUGINS[@]}"; do
    [ "$p" = --plugin ] && continue
    name=${p%%=*}
    timeout 300 perf stat -e cycles,instructions,cache-misses,cache-references -- "$BENCH" --noop "$NOOP" \
      --plugin "$p" --threads 8 --reps 3 --calls "$CALLS" --consumer none >"$OUTDIR/perf-stat-full-$name.txt" 2>&1
  done
  if timeout 120 perf c2c record -o "$WORK/c2c.data" -- "$BENCH" --noop "$NOOP" "${PLUGINS[@]:0:2}" --threads 8 \
    --reps 2 --calls "$CALLS" --consumer none >"$WORK/c2c-run.txt" 2>&1; then
    perf c2c report -i "$WORK/c2c.data" --stdio 2>&1 | head -150 >"$OUTDIR/perf-c2c-full-first-plugin.txt"
  else
    echo "perf c2c record failed (no memory sampling events here?):" >"$OUTDIR/perf-c2c-full-first-plugin.txt"
    tail -5 "$WORK/c2c-run.txt" >>"$OUTDIR/perf-c2c-full-first-plugin.txt"
  fi
else
  echo "perf absent or not allowed here: skipped" >"$OUTDIR/perf-skipped.txt"
fi

# ---- one file with every table ----
{
  echo "# plugin cost, $(date -u +%F), $(grep -m1 'Model name' "$OUTDIR/host.txt" | sed 's/.*: *//'), $(nproc) CPUs"
  for f in "$OUTDIR"/abi-*.md; do
    echo; echo "## $(basename "$f")"; echo
    grep -E '^(Host|Run|Event mask|\||Cost|Clock|Per callback)' "$f"
  done
  echo; echo "## claim.txt"; echo '```'; cat "$OUTDIR/claim.txt"; echo '```'
  for f in "$OUTDIR"/fs_bench-*.txt; do echo; echo "## $(basename "$f")"; echo '```'; cat "$f"; echo '```'; done
} >"$OUTDIR/summary.md"
echo "wrote $OUTDIR (summary.md has every table)"
