#!/usr/bin/env bash
# Starts / stops a local InfluxDB 1.x (Debian: apt-get install -y --no-install-recommends influxdb) for
# flowscope, bound to 127.0.0.1 only, from influxdb.conf.template.
#
#   deploy/influxdb/influxdb.sh start|stop|status
#
# Environment (defaults):
#   FLOWSCOPE_INFLUX_DIR        data, config, log and PID file   (./.influxdb under the current directory)
#   FLOWSCOPE_INFLUX_HTTP_PORT  HTTP API, what the sink and Grafana use   (8086)
#   FLOWSCOPE_INFLUX_RPC_PORT   backup/restore RPC                        (8088)
#   FLOWSCOPE_INFLUX_DB         database created at start                 (flowscope)
#   INFLUXD                     the server binary                         (influxd on PATH)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dir="${FLOWSCOPE_INFLUX_DIR:-$PWD/.influxdb}"
http_port="${FLOWSCOPE_INFLUX_HTTP_PORT:-8086}"
rpc_port="${FLOWSCOPE_INFLUX_RPC_PORT:-8088}"
db="${FLOWSCOPE_INFLUX_DB:-flowscope}"
influxd="${INFLUXD:-$(command -v influxd || true)}"
pidfile="$dir/influxd.pid"
url="http://127.0.0.1:$http_port"

running() {
  [[ -f "$pidfile" ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null
}

ping_status() {
  curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$url/ping" 2>/dev/null || true
}

start() {
  if [[ -z "$influxd" ]]; then
    echo "influxd not found: apt-get install -y --no-install-recommends influxdb" >&2
    exit 1
  fi
  if running; then
    echo "influxd already running (pid $(cat "$pidfile"), $url)"
    return 0
  fi
  mkdir -p "$dir"
  sed -e "s|@DIR@|$dir|g" -e "s|@HTTP_PORT@|$http_port|g" -e "s|@RPC_PORT@|$rpc_port|g" \
    "$here/influxdb.conf.template" > "$dir/influxdb.conf"
  "$influxd" -config "$dir/influxdb.conf" >> "$dir/influxd.log" 2>&1 &
  echo $! > "$pidfile"
  for _ in $(seq 1 300); do
    if [[ "$(ping_status)" == "204" ]]; then
      curl -s -o /dev/null --max-time 5 -XPOST "$url/query" --data-urlencode "q=CREATE DATABASE \"$db\""
      echo "influxd started (pid $(cat "$pidfile"), $url, database $db, dir $dir)"
      return 0
    fi
    if ! running; then
      echo "influxd exited; last log lines:" >&2
      tail -n 20 "$dir/influxd.log" >&2
      rm -f "$pidfile"
      exit 1
    fi
    sleep 0.1
  done
  echo "influxd did not answer $url/ping with 204 in 30 s; stopping it" >&2
  stop
  exit 1
}

stop() {
  if ! running; then
    echo "influxd not running"
    rm -f "$pidfile"
    return 0
  fi
  local pid
  pid="$(cat "$pidfile")"
  kill -TERM "$pid"
  for _ in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || { rm -f "$pidfile"; echo "influxd stopped (pid $pid)"; return 0; }
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$pidfile"
  echo "influxd killed (pid $pid) after 10 s"
}

status() {
  if running; then
    echo "influxd running (pid $(cat "$pidfile"), $url, /ping $(ping_status))"
  else
    echo "influxd not running"
    return 3
  fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
