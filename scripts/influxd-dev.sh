#!/usr/bin/env bash
# A local influxd for development, on 127.0.0.1 with its data under the cache.
#
#   influxd-dev.sh start   build if needed, start in the background, wait for /health
#   influxd-dev.sh stop    stop the server this script started (by its PID file)
#   influxd-dev.sh status  say whether it runs
#   influxd-dev.sh run     run in the foreground (Ctrl-C stops it)
#
# Environment: THROTTLESCOPE_CACHE (default ~/.cache/throttlescope), INFLUXD_PORT (8086).
# Data: $THROTTLESCOPE_CACHE/influxd/data; log: …/influxd/dev.log; PID: …/influxd/dev.pid.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
cache="${THROTTLESCOPE_CACHE:-$HOME/.cache/throttlescope}"
base="$cache/influxd"
data="$base/data"
pidfile="$base/dev.pid"
logfile="$base/dev.log"
port="${INFLUXD_PORT:-8086}"
url="http://127.0.0.1:$port"

log() { printf 'influxd-dev: %s\n' "$*" >&2; }

running() { [[ -f "$pidfile" ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

healthy() { curl -fsS -m 2 "$url/health" >/dev/null 2>&1; }

args() {
    printf '%s\n' run \
        --bolt-path "$data/influxd.bolt" --engine-path "$data/engine" \
        --sqlite-path "$data/influxd.sqlite" --http-bind-address "127.0.0.1:$port" \
        --reporting-disabled --ui-disabled
}

cmd="${1:-start}"
case "$cmd" in
start)
    if running; then
        log "already running (PID $(cat "$pidfile")) at $url"
        exit 0
    fi
    bin="$("$here/build-influxd.sh")"
    mkdir -p "$data"
    mapfile -t a < <(args)
    INFLUXD_CONFIG_PATH="$data" nohup "$bin" "${a[@]}" >>"$logfile" 2>&1 &
    echo $! >"$pidfile"
    for _ in $(seq 1 300); do
        if healthy; then
            log "running at $url (PID $(cat "$pidfile"), data $data, log $logfile)"
            exit 0
        fi
        running || { log "influxd exited; see $logfile"; tail -n 20 "$logfile" >&2; rm -f "$pidfile"; exit 1; }
        sleep 0.1
    done
    log "not healthy after 30 s; see $logfile"
    exit 1
    ;;
stop)
    if ! running; then
        log "not running"
        rm -f "$pidfile"
        exit 0
    fi
    pid="$(cat "$pidfile")"
    kill "$pid"
    for _ in $(seq 1 150); do
        kill -0 "$pid" 2>/dev/null || { rm -f "$pidfile"; log "stopped"; exit 0; }
        sleep 0.1
    done
    log "PID $pid did not stop within 15 s"
    exit 1
    ;;
status)
    if running; then log "running at $url (PID $(cat "$pidfile"))"; else log "not running"; exit 1; fi
    ;;
run)
    bin="$("$here/build-influxd.sh")"
    mkdir -p "$data"
    mapfile -t a < <(args)
    INFLUXD_CONFIG_PATH="$data" exec "$bin" "${a[@]}"
    ;;
*)
    log "usage: $0 start|stop|status|run"
    exit 2
    ;;
esac
