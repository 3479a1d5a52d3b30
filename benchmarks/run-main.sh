#!/usr/bin/env bash
# Runs one of the benchmarks jar's main-class benchmarks (those that are not JMH: CPU-time loops, the journal write,
# the live-stream latency, the sinks) with the JVM options the collector's code needs (Chronicle Queue's module
# openings, as collector/pom.xml's collector.jvm.flags and ServiceDrainBenchmark's @Fork give them).
#   benchmarks/run-main.sh CLASS [ARGS...]      e.g. benchmarks/run-main.sh JournalWriteBenchmark
# CLASS is a simple name in io.flowscope.bench or a full one. Environment: JAVA (default java), JAVA_OPTS (more
# options, e.g. "-Xms2g -Xmx2g" or a taskset-pinned JAVA), JAR (default benchmarks/target/benchmarks.jar: build it
# with `mvn -B -q -pl benchmarks -am package -DskipTests -Dflowscope.skipSanitizers=true`).
set -euo pipefail
CLASS=${1:?usage: run-main.sh CLASS [ARGS...]}; shift
case "$CLASS" in *.*) ;; *) CLASS=io.flowscope.bench.$CLASS ;; esac
JAR=${JAR:-benchmarks/target/benchmarks.jar}
FLAGS=(--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED --add-exports=java.base/jdk.internal.ref=ALL-UNNAMED
  --add-exports=java.base/sun.nio.ch=ALL-UNNAMED --add-exports=jdk.unsupported/sun.misc=ALL-UNNAMED
  --add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED --add-opens=jdk.compiler/com.sun.tools.javac=ALL-UNNAMED
  --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.lang.reflect=ALL-UNNAMED
  --add-opens=java.base/java.io=ALL-UNNAMED --add-opens=java.base/java.util=ALL-UNNAMED
  --add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED
  -Dchronicle.analytics.disable=true -Dchronicle.announcer.disable=true)
# shellcheck disable=SC2086  # JAVA_OPTS is a list of options
exec "${JAVA:-java}" "${FLAGS[@]}" ${JAVA_OPTS:-} -cp "$JAR" "$CLASS" "$@"
