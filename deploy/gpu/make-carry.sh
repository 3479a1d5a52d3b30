#!/usr/bin/env bash
# Prepares what the GPU scripts need on a GPU machine that has no Java and no package registry: a Java
# runtime made with jlink (.carry/jre.tgz) and jars (.carry/lib). Run on the build machine from the repository
# root; .carry/ is ignored by git and travels to the GPU machine as a carried path.
#   deploy/gpu/make-carry.sh              the ring reader and ring-tool (run-validation.sh), about 21 MB
#   deploy/gpu/make-carry.sh --collector  the whole collector service (e2e-detection.sh), about 45 MB: the
#                                         fleet's Kafka client and its codecs are left out (64 MiB carry cap)
set -euo pipefail
ROOT=$(pwd)
COLLECTOR=${1:-}
rm -rf .carry && mkdir -p .carry/lib
modules=java.base,jdk.unsupported,java.management,java.logging,jdk.management
if [ "$COLLECTOR" = --collector ]; then
  mvn -B -q -pl collector -am package -DskipTests -Dflowscope.skipSanitizers=true
  cp collector/target/flowscope-collector-*-SNAPSHOT.jar .carry/lib/
  rm -f .carry/lib/*-tests.jar
  for j in collector/target/lib/*.jar; do
    case "$(basename "$j")" in kafka-*|zstd-*|snappy-*|lz4-*|jna-platform-*) ;; *) cp "$j" .carry/lib/ ;; esac
  done
  # jdeps over these jars (java.desktop only for JNA's platform classes and Jackson's optional java.beans)
  modules=$modules,java.compiler,java.naming,java.net.http,java.sql,java.xml,jdk.crypto.ec,jdk.jfr
else
  # the reader library and its command line (ring-tools), with their third-party jars
  mvn -B -q -pl ring-tools -am package dependency:copy-dependencies -DskipTests -Dflowscope.skipSanitizers=true \
    -DincludeScope=runtime -DexcludeGroupIds=io.flowscope -DoutputDirectory="$ROOT/.carry/lib"
  cp profiler-plugin/target/flowscope-profiler-plugin-*-SNAPSHOT.jar ring-tools/target/flowscope-ring-tools-*-SNAPSHOT.jar \
    .carry/lib/
  rm -f .carry/lib/*-tests.jar
fi
tmp=$(mktemp -d)
jlink --add-modules "$modules" --compress=2 --strip-debug --no-header-files --no-man-pages --output "$tmp/jre"
tar czf .carry/jre.tgz -C "$tmp" jre
rm -rf "$tmp"
du -sh .carry/jre.tgz .carry/lib
