#!/usr/bin/env bash
# A local flowscope fleet on 127.0.0.1, every piece a real process:
#   a Kafka broker (deploy/kafka/kafka.sh), an InfluxDB (deploy/influxdb/influxdb.sh), one aggregator
#   (flowscope run --role aggregator; FLOWSCOPE_CLUSTER_AGGREGATORS=2: two in one consumer group sharing the 4
#   partitions, kill one and the other takes its partitions over) and two agents (flowscope simulate --role agent), each agent fed by the
#   cluster simulator with a fault on one node (agent-1: a slow link rank 3 -> 4, hosts cluster-a-node-*;
#   agent-2: a hang of rank 5, hosts cluster-b-node-*).
#
#   deploy/local-cluster.sh start    start everything (free ports), record the PIDs, print where to look
#   deploy/local-cluster.sh stop     stop everything by PID (agents, aggregators, InfluxDB, Kafka)
#   deploy/local-cluster.sh status   what runs
#
# Environment: FLOWSCOPE_CLUSTER_DIR (state, logs, PIDs; default /tmp/flowscope-cluster),
# FLOWSCOPE_CLUSTER_SECONDS (simulated seconds each agent runs, default 10; the agents then publish what is
# left and exit, the aggregators keep serving), FLOWSCOPE_CLUSTER_AGGREGATORS (1 or 2, default 1),
# FLOWSCOPE_KAFKA_LIBS (the broker's jars, shared).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DIR=${FLOWSCOPE_CLUSTER_DIR:-/tmp/flowscope-cluster}
SECONDS_SIM=${FLOWSCOPE_CLUSTER_SECONDS:-10}
AGGREGATORS=(aggregator-1)
if [ "${FLOWSCOPE_CLUSTER_AGGREGATORS:-1}" = 2 ]; then AGGREGATORS=(aggregator-1 aggregator-2); fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
alive() { [ -f "$DIR/$1.pid" ] && kill -0 "$(cat "$DIR/$1.pid")" 2>/dev/null; }

kafka_env() {
  export FLOWSCOPE_KAFKA_DIR=$DIR/kafka FLOWSCOPE_KAFKA_PORT=$(cat "$DIR/ports/kafka")
  export FLOWSCOPE_KAFKA_CONTROLLER_PORT=$(cat "$DIR/ports/kafka-controller")
}
influx_env() {
  export FLOWSCOPE_INFLUX_DIR=$DIR/influxdb FLOWSCOPE_INFLUX_HTTP_PORT=$(cat "$DIR/ports/influx")
  export FLOWSCOPE_INFLUX_RPC_PORT=$(cat "$DIR/ports/influx-rpc")
}

start() {
  if alive aggregator-1 || alive aggregator-2; then
    echo "local-cluster: already running (state in $DIR)"; status; return 0
  fi
  mkdir -p "$DIR/ports" "$DIR/logs"
  for p in kafka kafka-controller influx influx-rpc aggregator-1 aggregator-2 agent-1 agent-2; do
    free_port >"$DIR/ports/$p"
  done
  "$ROOT/flowscope" --version >/dev/null   # builds the collector on first use
  kafka_env; "$ROOT/deploy/kafka/kafka.sh" start
  local bootstrap=127.0.0.1:$FLOWSCOPE_KAFKA_PORT
  influx_env
  local sinks=()
  if "$ROOT/deploy/influxdb/influxdb.sh" start; then
    influx_note="InfluxDB on http://127.0.0.1:$FLOWSCOPE_INFLUX_HTTP_PORT, database flowscope (the agents write to it)"
    sinks=(--set sinks.influxdb.enabled=true --set "sinks.influxdb.url=http://127.0.0.1:$FLOWSCOPE_INFLUX_HTTP_PORT")
  else influx_note="InfluxDB did not start (is influxd installed? apt-get install -y influxdb)"; fi
  local common=(--set "fleet.bootstrap=$bootstrap" --set fleet.topicPrefix=flowscope --quiet)
  for a in "${AGGREGATORS[@]}"; do
    nohup "$ROOT/flowscope" run --role aggregator --no-journal --port "$(cat "$DIR/ports/$a")" \
      --set "fleet.agentId=$a" "${common[@]}" >"$DIR/logs/$a.log" 2>&1 &
    echo $! >"$DIR/$a.pid"
  done
  # each simulated cluster has its own host names (and ids), as two real clusters would
  local scenario=("default,hosts=cluster-a" "hang-ring-2x4,hosts=cluster-b")
  for i in 1 2; do
    nohup "$ROOT/flowscope" simulate --role agent --scenario "${scenario[$((i - 1))]}" \
      --port "$(cat "$DIR/ports/agent-$i")" --journal-dir "$DIR/journal-agent-$i" \
      --set "fleet.agentId=agent-$i" --set "simulate.durationSeconds=$SECONDS_SIM" "${common[@]}" "${sinks[@]}" \
      >"$DIR/logs/agent-$i.log" 2>&1 &
    echo $! >"$DIR/agent-$i.pid"
  done
  for a in "${AGGREGATORS[@]}"; do
    for _ in $(seq 1 300); do
      grep -q "serving http" "$DIR/logs/$a.log" 2>/dev/null && break
      alive "$a" || { echo "local-cluster: $a exited:" >&2; tail -20 "$DIR/logs/$a.log" >&2; stop; exit 1; }
      sleep 0.2
    done
  done
  local agg=http://127.0.0.1:$(cat "$DIR/ports/aggregator-1") agg2=http://127.0.0.1:$(cat "$DIR/ports/aggregator-2")
  local second=""
  if [ ${#AGGREGATORS[@]} = 2 ]; then
    second="  aggregator-2 $agg2/   its partitions: curl $agg2/api/health   (log $DIR/logs/aggregator-2.log)
               each aggregator serves the anomalies of the partitions it owns (all: flowscope.fleet-anomalies);
               failover: kill -9 \$(cat $DIR/aggregator-1.pid): aggregator-2 owns all 4 partitions ~10-20 s later
"
  fi
  cat <<MSG
local-cluster: started (state, logs and PIDs in $DIR)
  Kafka        127.0.0.1:$FLOWSCOPE_KAFKA_PORT   topics flowscope.summaries / .anomalies / .events / .fleet-anomalies
  $influx_note
  aggregator-1 $agg/   live page; anomalies: curl $agg/api/anomalies   (log $DIR/logs/aggregator-1.log)
${second}  agent-1      http://127.0.0.1:$(cat "$DIR/ports/agent-1")/   simulated 2x4 cluster, slow link rank 3 -> 4
  agent-2      http://127.0.0.1:$(cat "$DIR/ports/agent-2")/   simulated 2x4 cluster, rank 5 hangs
  the agents run $SECONDS_SIM simulated seconds, publish what is left and exit; the aggregators keep serving.
  stop all:    $0 stop
MSG
}

stop_pid() {  # SIGTERM, SIGKILL after 30 s
  local name=$1 pid
  [ -f "$DIR/$name.pid" ] || return 0
  pid=$(cat "$DIR/$name.pid")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
    echo "local-cluster: $name stopped (pid $pid)"
  fi
  rm -f "$DIR/$name.pid"
}

stop() {
  stop_pid agent-1; stop_pid agent-2; stop_pid aggregator-1; stop_pid aggregator-2
  if [ -f "$DIR/ports/influx" ]; then influx_env; "$ROOT/deploy/influxdb/influxdb.sh" stop || true; fi
  if [ -f "$DIR/ports/kafka" ]; then kafka_env; "$ROOT/deploy/kafka/kafka.sh" stop; fi
}

status() {
  for n in aggregator-1 aggregator-2 agent-1 agent-2; do
    if alive "$n"; then echo "$n: running (pid $(cat "$DIR/$n.pid"))"; else echo "$n: not running"; fi
  done
  if [ -f "$DIR/ports/kafka" ]; then kafka_env; "$ROOT/deploy/kafka/kafka.sh" status || true; fi
  if [ -f "$DIR/ports/influx" ]; then influx_env; "$ROOT/deploy/influxdb/influxdb.sh" status || true; fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
