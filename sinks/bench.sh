#!/usr/bin/env bash
# Sink throughput against a real influxd and a local webhook receiver (docs/benchmarks.md section 7).
#   sinks/bench.sh [points per run] [webhook alerts per run] [runs]
# Run from the repository root. Builds with the reactor (no mvn install) and runs
# io.flowscope.sink.bench.SinkThroughput (sinks/src/test/java) on the test classpath.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cp_file="$(mktemp)"
trap 'rm -f "$cp_file"' EXIT
mvn -B -q -pl sinks -am test-compile dependency:build-classpath -Dmdep.outputFile="$cp_file" \
  -Dmdep.includeScope=test -Dflowscope.skipSanitizers=true
uptime
exec java -Xms512m -Xmx512m -cp "sinks/target/test-classes:sinks/target/classes:$(cat "$cp_file")" \
  io.flowscope.sink.bench.SinkThroughput "$@"
