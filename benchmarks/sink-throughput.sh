#!/usr/bin/env bash
# Sink throughput against a real influxd and a local webhook receiver (docs/benchmarks.md section 7).
#   benchmarks/sink-throughput.sh [points per run] [webhook alerts per run] [runs]
#   benchmarks/sink-throughput.sh names [points] [rounds]      # encoding cost of host names and gpu tags
# Run from anywhere. Builds the benchmarks jar with the reactor (no mvn install) and runs
# io.flowscope.bench.SinkThroughput from it; needs influxd on the PATH (Debian: influxdb).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mvn -B -q -pl benchmarks -am package -DskipTests -Dflowscope.skipSanitizers=true
uptime
exec java -Xms512m -Xmx512m -cp benchmarks/target/benchmarks.jar io.flowscope.bench.SinkThroughput "$@"
