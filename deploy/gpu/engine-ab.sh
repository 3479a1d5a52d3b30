#!/usr/bin/env bash
# On a GPU machine (its host CPU, a quiet core), from the repository root: the window engine's JMH rate and the
# anomaly stage's CPU-time loop, the two jars of deploy/gpu/make-engine-ab.sh alternated (benchmarks/compare-jars.sh)
# with the Java runtime of deploy/gpu/make-carry.sh. Writes the lines and JMH's JSON under $OUT (default ./engine-ab).
#   deploy/gpu/engine-ab.sh [PAIRS, default 4] [CORE, default 3]
set -euo pipefail
PAIRS=${1:-4}
CORE=${2:-3}
OUT=${OUT:-$PWD/engine-ab}
mkdir -p "$OUT"
for f in .carry/jre.tgz .carry/engine-ab/before.jar .carry/engine-ab/after.jar; do
  [ -f "$f" ] || { echo "engine-ab: no $f (on the build machine: deploy/gpu/make-carry.sh, then" \
    "deploy/gpu/make-engine-ab.sh BEFORE)" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. deploy/gpu/carried-java.sh
carried_java "$work"
{
  echo "before $(cat .carry/engine-ab/before.commit), after $(cat .carry/engine-ab/after.commit); core $CORE"
  "$JAVA" -version 2>&1 | head -1
  JAVA="$JAVA" OUTDIR="$OUT" taskset -c "$CORE" benchmarks/compare-jars.sh .carry/engine-ab/before.jar \
    .carry/engine-ab/after.jar "$PAIRS"
} 2>&1 | tee "$OUT/engine-ab.txt"
