#!/usr/bin/env bash
# A real single-node Kafka broker (KRaft, broker + controller in one process) on 127.0.0.1,
# from Maven Central jars. No Docker, no Kafka distribution needed.
#
#   deploy/kafka/kafka.sh start     fetch the jars (first time), format storage (first time), start, wait until ready
#   deploy/kafka/kafka.sh stop      SIGTERM to the broker's PID, SIGKILL after 30 s
#   deploy/kafka/kafka.sh status    running or not, and where
#
# Environment: FLOWSCOPE_KAFKA_DIR (state: libs, data, logs, pid; default /tmp/flowscope-kafka),
# FLOWSCOPE_KAFKA_PORT (default 19092), FLOWSCOPE_KAFKA_CONTROLLER_PORT (default 19093),
# FLOWSCOPE_KAFKA_HEAP (default 512m), FLOWSCOPE_KAFKA_LIBS (the broker's jars; default $FLOWSCOPE_KAFKA_DIR/libs:
# point several brokers, e.g. the tests' temporary ones, at one folder to download the jars once),
# FLOWSCOPE_KAFKA_EXTRA_CONFIG (a file of server properties appended to the generated ones, e.g. a TLS/SASL listener).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=${FLOWSCOPE_KAFKA_DIR:-/tmp/flowscope-kafka}
PORT=${FLOWSCOPE_KAFKA_PORT:-19092}
CTRL=${FLOWSCOPE_KAFKA_CONTROLLER_PORT:-19093}
HEAP=${FLOWSCOPE_KAFKA_HEAP:-512m}
LIBS=${FLOWSCOPE_KAFKA_LIBS:-$DIR/libs}
PIDFILE=$DIR/broker.pid
LOG=$DIR/broker.log

running() { [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; }

libs() {
  if [ ! -f "$LIBS/.complete" ]; then
    mkdir -p "$LIBS"
    mvn -B -q -f "$HERE/pom.xml" dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$LIBS"
    touch "$LIBS/.complete"
  fi
}

configure() {
  mkdir -p "$DIR/data"
  cat >"$DIR/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$CTRL
listeners=PLAINTEXT://127.0.0.1:$PORT,CONTROLLER://127.0.0.1:$CTRL
advertised.listeners=PLAINTEXT://127.0.0.1:$PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$DIR/data
num.partitions=4
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=true
PROPS
  # a file of extra server properties, appended (the last value of a key wins): e.g. a SASL_SSL listener
  if [ -n "${FLOWSCOPE_KAFKA_EXTRA_CONFIG:-}" ]; then cat "$FLOWSCOPE_KAFKA_EXTRA_CONFIG" >>"$DIR/server.properties"; fi
  cat >"$DIR/log4j2.properties" <<'PROPS'
rootLogger.level=INFO
rootLogger.appenderRef.out.ref=out
appender.out.type=Console
appender.out.name=out
appender.out.layout.type=PatternLayout
appender.out.layout.pattern=[%d] %p %m (%c)%n
logger.kafka.name=kafka
logger.kafka.level=INFO
logger.apache.name=org.apache
logger.apache.level=WARN
PROPS
  if [ ! -f "$DIR/data/meta.properties" ]; then
    local uuid
    uuid=$(java -cp "$LIBS/*" kafka.tools.StorageTool random-uuid 2>/dev/null | tail -1)
    java -Dlog4j2.configurationFile="$DIR/log4j2.properties" -cp "$LIBS/*" kafka.tools.StorageTool \
      format -t "$uuid" -c "$DIR/server.properties" --ignore-formatted >"$DIR/format.log" 2>&1 \
      || { cat "$DIR/format.log" >&2; exit 1; }
  fi
}

start() {
  if running; then echo "kafka: already running (pid $(cat "$PIDFILE")) on 127.0.0.1:$PORT"; return 0; fi
  libs
  configure
  : >"$LOG"  # a restart must not read an old "started" line
  nohup java -Xms128m -Xmx"$HEAP" -Dlog4j2.configurationFile="$DIR/log4j2.properties" \
    -cp "$LIBS/*" kafka.Kafka "$DIR/server.properties" >"$LOG" 2>&1 &
  echo $! >"$PIDFILE"
  for _ in $(seq 1 600); do
    if grep -q "Kafka Server started" "$LOG"; then
      echo "kafka: started (pid $(cat "$PIDFILE")) on 127.0.0.1:$PORT, state in $DIR"; return 0
    fi
    if ! running; then echo "kafka: the broker exited; its log:" >&2; tail -40 "$LOG" >&2; exit 1; fi
    sleep 0.1
  done
  echo "kafka: not ready after 60 s; log in $LOG" >&2
  stop
  exit 1
}

stop() {
  running || { rm -f "$PIDFILE"; echo "kafka: not running"; return 0; }
  local pid
  pid=$(cat "$PIDFILE")
  kill -TERM "$pid"
  for _ in $(seq 1 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; echo "kafka: killed (no exit 30 s after SIGTERM)"; fi
  rm -f "$PIDFILE"
  echo "kafka: stopped"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) if running; then echo "kafka: running (pid $(cat "$PIDFILE")) on 127.0.0.1:$PORT"; else echo "kafka: not running"; exit 3; fi ;;
  libs) libs ;;
  *) echo "usage: $0 start|stop|status|libs" >&2; exit 2 ;;
esac
