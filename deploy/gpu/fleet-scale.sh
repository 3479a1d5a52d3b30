#!/usr/bin/env bash
# The fleet at cluster scale (issue #20 item 3) on a many-core host: a real Kafka broker, FLEET_AGENTS agent JVMs
# publishing a simulated cluster's central summaries in real time, FLEET_AGGREGATORS `flowscope run --role
# aggregator` JVMs consuming them (io.flowscope.bench.cluster.ClusterHarness); per second: consumer lag (records
# and seconds), bytes on Kafka, CPU of every process; at the end the aggregators' culprits against the
# single-process reference. Results under $OUT (cluster-summary.txt, cluster-timeseries.csv, every process's log).
#
#   deploy/gpu/fleet-scale.sh carry    on the build machine, from the repository root: builds the jars, a Java
#                                      runtime and the broker's jars into .carry/fleet.tar.xz (~40 MB; ignored by
#                                      git: carry that one path to the GPU host)
#   deploy/gpu/fleet-scale.sh [run]    on the GPU host (no Maven, no Java): runs it from .carry/; also works here
#
# Settings (environment): FLEET_SPEC (ClusterSpec, default below), FLEET_AGENTS, FLEET_AGGREGATORS,
# FLEET_PARTITIONS, FLEET_SECONDS (publishing time; the broker, the JVMs' start and the drain add about a minute,
# the reference replay up to a minute more), FLEET_BROKER_HEAP, FLEET_AGGREGATOR_HEAP, FLEET_BROKER_THREADS (the
# broker's request handler threads, default 8 as Kafka's), FLEET_RETENTION_MS (the summaries topic deletes older
# segments, the other topics keep everything: a 16,384-GPU run writes ~200 MB/s; the bytes per summary are then
# measured until the first deletion), FLEET_WORK (where the broker's log and the run live, default a new /tmp folder).
# FLEET_JVM_OPTS (JVM flags for every JVM of the run, e.g. -XX:ParallelGCThreads=2: a JVM sizes its GC and compiler
# threads for all the host's cores), FLEET_AGENT_KAFKA and FLEET_AGGREGATOR_KAFKA (Kafka client tuning as
# fleet.kafka.* passes it, k=v;k=v, e.g. linger.ms=20).
# FLEET_DETACH=1 starts the run in its own session and returns (the device tool's 10 minutes a command; read
# $FLEET_WORK/out/ later: FLEET_WAIT=1 waits for it and copies that to $OUT).
set -euo pipefail
ROOT=$(pwd)
MODE=${1:-run}

if [ "$MODE" = carry ]; then
  [ -f deploy/gpu/fleet-scale.sh ] || { echo "fleet-scale.sh carry: run it from the repository root" >&2; exit 2; }
  mvn -B -q -pl benchmarks -am package -DskipTests -Dflowscope.skipSanitizers=true
  stage=$(mktemp -d)
  mkdir -p "$stage/fleet/lib" "$stage/fleet/kafka"
  # the broker's jars, downloaded once by the collector's tests (or deploy/kafka/kafka.sh libs)
  LIBS=${FLOWSCOPE_KAFKA_LIBS:-$ROOT/collector/target/kafka-libs}
  [ -f "$LIBS/.complete" ] || FLOWSCOPE_KAFKA_LIBS="$LIBS" bash deploy/kafka/kafka.sh libs
  cp "$LIBS"/*.jar "$stage/fleet/kafka/"
  touch "$stage/fleet/kafka/.complete"
  # the service and the harness: the collector's runtime jars less the Kafka client and its codecs (taken from
  # the broker's folder: the same versions), the benchmarks' own jar
  cp collector/target/flowscope-collector-*-SNAPSHOT.jar benchmarks/target/flowscope-benchmarks-*-SNAPSHOT.jar \
    "$stage/fleet/lib/"
  for j in collector/target/lib/*.jar; do
    case "$(basename "$j")" in kafka-clients-*|zstd-*|snappy-*|lz4-*|jna-platform-*|*-tests.jar) ;; *) cp "$j" "$stage/fleet/lib/" ;; esac
  done
  rm -f "$stage"/fleet/lib/*-tests.jar
  # an uncompressed runtime and uncompressed jars, then one xz over all: about 40 MB where the jars as they come
  # and a compressed runtime are about 85 MB (the carry's cap is 64 MiB). Native libraries of other platforms
  # than linux x86_64 are left out of the jars.
  jlink --add-modules java.base,jdk.unsupported,java.management,java.logging,jdk.management,java.naming,java.net.http,java.sql,java.xml,jdk.crypto.ec,java.security.sasl,java.security.jgss,jdk.security.auth,java.desktop \
    --strip-debug --no-header-files --no-man-pages --output "$stage/fleet/jre"
  python3 - "$stage"/fleet/lib/*.jar "$stage"/fleet/kafka/*.jar <<'PY'
import os, sys, zipfile
NATIVE = (".so", ".dll", ".dylib", ".a", ".jnilib")
OURS = ("linux/amd64/", "Linux/x86_64/", "linux-x86-64/", "x86_64-linux", "linux-x86_64", "linux_x64")
for jar in sys.argv[1:]:
    tmp = jar + ".tmp"
    with zipfile.ZipFile(jar) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_STORED) as dst:
        for e in src.infolist():
            n = e.filename
            if n.endswith(NATIVE) and not any(o in n for o in OURS):
                continue
            info = zipfile.ZipInfo(n, e.date_time)
            info.external_attr = e.external_attr
            dst.writestr(info, src.read(n), zipfile.ZIP_STORED)
    os.replace(tmp, jar)
PY
  mkdir -p .carry
  XZ_OPT=-9e tar cJf .carry/fleet.tar.xz -C "$stage" fleet # -9e: about 1 MB under -6, and the carry is at its cap
  rm -rf "$stage"
  du -sh .carry/fleet.tar.xz
  exit 0
fi

[ "$MODE" = run ] || { echo "usage: $0 [carry|run]" >&2; exit 2; }
OUT=${OUT:-$ROOT/fleet-scale-out}
mkdir -p "$OUT"
if [ "${FLEET_WAIT:-0}" = 1 ]; then
  # a detached run's results: wait for its end (the command's own limit cuts this short), then hand them to $OUT
  # as at most 8 files: the summary, the time series, the harness's and host's logs, every process's log in one tar
  w=${FLEET_WORK:?FLEET_WAIT needs FLEET_WORK of the detached run}
  until [ -f "$w/out/.done" ]; do sleep 5; done
  cp "$w/out/host.txt" "$w/out/harness.log" "$OUT/" 2>/dev/null || true
  cp "$w/out/cluster-summary.txt" "$w/out/cluster-timeseries.csv" "$OUT/" 2>/dev/null || true
  tar czf "$OUT/logs.tgz" -C "$w/out" --exclude=.done --exclude=host.txt --exclude=harness.log \
    --exclude=cluster-summary.txt --exclude=cluster-timeseries.csv .
  cat "$w/out/.done"
  exit "$(cat "$w/out/.done")"
fi
if [ "${FLEET_DETACH:-0}" = 1 ]; then
  w=${FLEET_WORK:?FLEET_DETACH needs FLEET_WORK, a folder for the run and its results}
  mkdir -p "$w/out"
  rm -f "$w/out/.done"
  FLEET_DETACH=0 OUT="$w/out" setsid bash -c '"$0" run >"$OUT/run.log" 2>&1; echo $? >"$OUT/.done"' "$0" </dev/null &
  echo "fleet-scale: detached; results in $w/out (FLEET_WAIT=1 FLEET_WORK=$w $0 collects them)"
  exit 0
fi
# defaults for a 16-core host: 64 nodes x 8 GPUs (32 data-parallel communicators of 2 nodes, 64 node-local ones),
# 10 ms periods, three faults from 21 s. The 16,384-GPU run of docs/benchmarks.md section 8 (32 cores, ~28 used;
# on 64 cores FLEET_AGENTS=24 FLEET_BROKER_THREADS=16 used ~32):
#   FLEET_SPEC='nodes=2048,gpus=8,group=2,channels=2,period=10,seed=3,template=4000,every=16,faults=...'
#   FLEET_AGENTS=16 FLEET_AGGREGATORS=16 FLEET_PARTITIONS=16 FLEET_SECONDS=600 FLEET_RETENTION_MS=240000
#   FLEET_BROKER_THREADS=8 FLEET_BROKER_HEAP=8g FLEET_AGENT_KAFKA='linger.ms=20'
#   FLEET_JVM_OPTS='-XX:ParallelGCThreads=2 -XX:ConcGCThreads=1 -XX:CICompilerCount=2'
#   FLEET_WORK=/tmp/fleet FLEET_DETACH=1 (then FLEET_WAIT=1 FLEET_WORK=/tmp/fleet in the next command)
SPEC=${FLEET_SPEC:-nodes=64,gpus=8,group=2,channels=2,period=10,seed=3,template=4000,faults=slow-link:1:3:4@20;slow-gpu:17:12@20;hang:30:9@20}
AGENTS=${FLEET_AGENTS:-4}
AGGREGATORS=${FLEET_AGGREGATORS:-4}
PARTITIONS=${FLEET_PARTITIONS:-16}
SECONDS_=${FLEET_SECONDS:-420}

if [ -n "${FLEET_WORK:-}" ]; then work=$FLEET_WORK/run; rm -rf "$work"; mkdir -p "$work"; else work=$(mktemp -d /tmp/fleet-scale.XXXXXX); fi
cleanup() {
  FLOWSCOPE_KAFKA_DIR="$work/kafka" bash deploy/kafka/kafka.sh stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

JFLAGS=(--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED --add-exports=java.base/sun.nio.ch=ALL-UNNAMED
  --add-exports=jdk.unsupported/sun.misc=ALL-UNNAMED --add-opens=java.base/java.lang=ALL-UNNAMED
  --add-opens=java.base/java.lang.reflect=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED
  --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
  --add-opens=java.base/java.nio=ALL-UNNAMED --add-exports=java.base/jdk.internal.misc=ALL-UNNAMED
  -Dchronicle.analytics.disable=true -Dchronicle.announcer.disable=true)
if [ -f .carry/fleet.tar.xz ]; then
  tar xJf .carry/fleet.tar.xz -C "$work" 2>/dev/null \
    || python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .carry/fleet.tar.xz "$work"
  JAVA=$work/fleet/jre/bin/java
  export PATH=$work/fleet/jre/bin:$PATH
  KAFKA_LIBS=$work/fleet/kafka
  CP="$work/fleet/lib/*"
else
  # on the build machine without a carry: the reactor's jars (mvn -pl benchmarks -am package first)
  JAVA=java
  KAFKA_LIBS=$ROOT/collector/target/kafka-libs
  CP="$(ls collector/target/flowscope-collector-*-SNAPSHOT.jar):$(ls benchmarks/target/flowscope-benchmarks-*-SNAPSHOT.jar):$ROOT/collector/target/lib/*"
fi
for j in kafka-clients zstd-jni lz4-java snappy-java; do
  [ -n "$(ls "$KAFKA_LIBS"/$j-*.jar 2>/dev/null)" ] && CP="$CP:$(ls "$KAFKA_LIBS"/$j-*.jar)"
done

{
  echo "fleet-scale: $(date -u +%FT%TZ) on $(hostname): $(nproc) CPUs, $(free -g | awk '/Mem:/ {print $2}') GiB"
  grep -m1 'model name' /proc/cpuinfo || true
  "$JAVA" -version 2>&1 | head -1
  echo "spec $SPEC; agents $AGENTS, aggregators $AGGREGATORS, partitions $PARTITIONS, $SECONDS_ s"
  echo "JVM ${FLEET_JVM_OPTS:-(defaults)}; agents' Kafka ${FLEET_AGENT_KAFKA:-(defaults)}; aggregators' Kafka ${FLEET_AGGREGATOR_KAFKA:-(defaults)}"
} | tee "$OUT/host.txt"

export FLOWSCOPE_KAFKA_DIR="$work/kafka" FLOWSCOPE_KAFKA_LIBS="$KAFKA_LIBS"
export FLOWSCOPE_KAFKA_PORT=29092 FLOWSCOPE_KAFKA_CONTROLLER_PORT=29093
export FLOWSCOPE_KAFKA_HEAP=${FLEET_BROKER_HEAP:-4g}
{
  echo "num.io.threads=${FLEET_BROKER_THREADS:-8}"
  echo "num.network.threads=$(( (${FLEET_BROKER_THREADS:-8} + 1) / 2 > 3 ? (${FLEET_BROKER_THREADS:-8} + 1) / 2 : 3 ))"
  echo "log.retention.check.interval.ms=10000" # FLEET_RETENTION_MS: the summaries topic's own retention.ms
} >"$work/broker-extra.properties"
export FLOWSCOPE_KAFKA_EXTRA_CONFIG="$work/broker-extra.properties"
sed 's/^/broker: /' "$work/broker-extra.properties" | tee -a "$OUT/host.txt"
bash deploy/kafka/kafka.sh start | tee -a "$OUT/host.txt"

set +e
# shellcheck disable=SC2086 # FLEET_JVM_OPTS: several flags
"$JAVA" -Xmx2g "${JFLAGS[@]}" ${FLEET_JVM_OPTS:-} -Dflowscope.cluster.aggregatorHeap="${FLEET_AGGREGATOR_HEAP:-2g}" \
  -Dflowscope.cluster.summariesRetentionMs="${FLEET_RETENTION_MS:-}" -Dflowscope.cluster.agentKafka="${FLEET_AGENT_KAFKA:-}" -Dflowscope.cluster.aggregatorKafka="${FLEET_AGGREGATOR_KAFKA:-}" -cp "$CP" \
  io.flowscope.bench.cluster.ClusterHarness "$SPEC" "$AGENTS" "$AGGREGATORS" "$PARTITIONS" "$SECONDS_" \
  127.0.0.1:29092 "$work/kafka/broker.pid" "$OUT" 2>&1 | tee "$OUT/harness.log"
rc=${PIPESTATUS[0]}
set -e
cp "$work/kafka/broker.log" "$OUT/broker.log" 2>/dev/null || true
echo "fleet-scale: harness exit $rc (0: every injected fault named with the reference's culprit)" | tee -a "$OUT/host.txt"
exit "$rc"
