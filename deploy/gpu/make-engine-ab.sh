#!/usr/bin/env bash
# On the build machine, after deploy/gpu/make-carry.sh (which empties .carry/): two small benchmark jars for
# deploy/gpu/engine-ab.sh, .carry/engine-ab/before.jar built from commit BEFORE and after.jar from the working tree.
# Each holds what the window engine's JMH benchmark and the anomaly stage's CPU-time loop need (the benchmarks, api,
# window-engine and anomaly classes, Agrona, HdrHistogram, JMH): about 5 MB, where the full benchmarks.jar (50 MB)
# would not fit the carry twice.
#   deploy/gpu/make-engine-ab.sh BEFORE
set -euo pipefail
ROOT=$(pwd)
BEFORE=${1:?usage: deploy/gpu/make-engine-ab.sh BEFORE_COMMIT}
OUT=$ROOT/.carry/engine-ab
mkdir -p "$OUT"
M2=${M2_REPO:-$HOME/.m2/repository}
libs() {  # the libraries, newest of each in the local repository
  for pattern in "org/agrona/agrona/*/agrona-*[0-9].jar" "org/hdrhistogram/HdrHistogram/*/HdrHistogram-*[0-9].jar" \
    "org/openjdk/jmh/jmh-core/*/jmh-core-*[0-9].jar" "net/sf/jopt-simple/jopt-simple/*/jopt-simple-*[0-9].jar" \
    "org/apache/commons/commons-math3/*/commons-math3-*[0-9].jar"; do
    ls $M2/$pattern | sort -V | tail -1
  done
}
slim() {  # $1 a tree, $2 the jar to write
  (cd "$1" && mvn -B -q -o -pl benchmarks -am test-compile -Dflowscope.skipSanitizers=true)
  local stage
  stage=$(mktemp -d)
  for lib in $(libs); do (cd "$stage" && unzip -qo "$lib" -x 'META-INF/*'); done
  for m in api window-engine anomaly benchmarks; do
    if [ -d "$1/$m/target/classes" ]; then cp -r "$1/$m/target/classes/." "$stage/"; fi
  done
  printf 'Main-Class: org.openjdk.jmh.Main\n' >"$stage.mf"
  jar cfm "$2" "$stage.mf" -C "$stage" .
  rm -rf "$stage" "$stage.mf"
}
tree=$(mktemp -d)
git worktree add -q --detach "$tree" "$BEFORE"
trap 'git worktree remove --force "$tree"' EXIT
slim "$tree" "$OUT/before.jar"
slim "$ROOT" "$OUT/after.jar"
echo "$BEFORE" >"$OUT/before.commit"
git rev-parse HEAD >"$OUT/after.commit"
ls -la "$OUT"
