#!/usr/bin/env bash
# Prepares what deploy/gpu/run-validation.sh needs on a GPU machine that has no Java and no
# package registry: a small Java runtime made with jlink (.carry/jre.tgz) and the reader's
# jars (.carry/lib). Run on the build machine from the repository root; .carry/ is ignored
# by git and travels to the GPU machine as a carried path (about 26 MB).
set -euo pipefail
ROOT=$(pwd)
rm -rf .carry && mkdir -p .carry/lib
mvn -B -q -pl profiler-plugin -am package -DskipTests -Dflowscope.skipSanitizers=true
cp profiler-plugin/target/flowscope-profiler-plugin-*-SNAPSHOT.jar .carry/lib/
mvn -B -q -pl profiler-plugin dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$ROOT/.carry/lib"
tmp=$(mktemp -d)
jlink --add-modules java.base,jdk.unsupported,java.management,java.logging,jdk.management \
  --compress=2 --strip-debug --no-header-files --no-man-pages --output "$tmp/jre"
tar czf .carry/jre.tgz -C "$tmp" jre
rm -rf "$tmp"
du -sh .carry/*
