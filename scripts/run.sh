#!/usr/bin/env bash
# Start Tessera in the foreground: web server + worker. Ctrl-C stops all of it.
#
# The worker runs under a small supervisor: when it exits (a crash, kill -9, its JVM gone
# with it) it is started again after 1 s, then 2, 4 … up to 30 s while it keeps failing
# (back to 1 s once a start has lived a minute); the web server keeps serving meanwhile.
# Each start is a new worker identity (jobs/worker.py), so the jobs of the process that
# died are failed WORKER_LOST at once, never shielded by the new one.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
export TESSERA_DATA_DIR="${TESSERA_DATA_DIR:-$PWD/var}"
PORT="${PORT:-8000}"
BIND="${TESSERA_BIND:-127.0.0.1}"
# Restart delays of the worker, in seconds.
BACKOFF_FIRST=1
BACKOFF_MAX=30
STABLE_AFTER=60
HS2_RESTART_SECONDS=5

say() { echo "[run.sh $(date +%H:%M:%S)] $*" >&2; }

describe_exit() {
    local status=$1
    if ((status > 128)); then
        echo "killed by SIG$(kill -l $((status - 128)) 2>/dev/null || echo $((status - 128)))"
    else
        echo "exit status $status"
    fi
}

supervise_worker() {
    # In its own subshell: start the worker, and start it again whenever it exits, until
    # this subshell is told to stop (SIGTERM from the launcher on Ctrl-C).
    local child="" sleeper="" stopping="" backoff=$BACKOFF_FIRST started status ran
    trap 'stopping=1; kill -TERM $child $sleeper 2>/dev/null || true' TERM INT
    while [[ -z $stopping ]]; do
        started=$SECONDS
        $BIN/celery -A webapp worker --pool threads --concurrency 4 --loglevel INFO \
            --hostname "worker1@%h" &
        child=$!
        say "worker started (pid $child)"
        while :; do
            status=0
            wait "$child" || status=$?
            # A signal to this subshell interrupts `wait`: wait on until the worker is gone.
            kill -0 "$child" 2>/dev/null || break
        done
        child=""
        [[ -n $stopping ]] && break
        ran=$((SECONDS - started))
        ((ran >= STABLE_AFTER)) && backoff=$BACKOFF_FIRST
        say "worker exited ($(describe_exit "$status")) after ${ran} s; starting it again in ${backoff} s"
        sleep "$backoff" &
        sleeper=$!
        wait "$sleeper" || true
        sleeper=""
        backoff=$((backoff * 2 > BACKOFF_MAX ? BACKOFF_MAX : backoff * 2))
    done
    say "worker stopped"
}

supervise_endpoint() {
    # Like the worker's supervisor: the endpoint ($1: hiveserver2 or flightsql, $2: its name
    # in the log) started again HS2_RESTART_SECONDS after it exits (a crash, or its port
    # still taken), while the web server keeps serving.
    local child="" sleeper="" stopping=""
    trap 'stopping=1; kill -TERM $child $sleeper 2>/dev/null || true' TERM INT
    while [[ -z $stopping ]]; do
        $BIN/python manage.py "$1" &
        child=$!
        while :; do
            wait "$child" || true
            kill -0 "$child" 2>/dev/null || break
        done
        child=""
        [[ -n $stopping ]] && break
        say "$2 exited; starting it again in ${HS2_RESTART_SECONDS} s"
        sleep "$HS2_RESTART_SECONDS" &
        sleeper=$!
        wait "$sleeper" || true
        sleeper=""
    done
}

$BIN/python manage.py migrate --noinput
$BIN/python manage.py collectstatic --noinput -v 0
$BIN/python manage.py bootstrap

pids=()
stop() {
    trap - INT TERM EXIT
    kill -TERM "${pids[@]}" 2>/dev/null || true
    wait || true
}
trap stop INT TERM EXIT

supervise_worker &
pids+=($!)
$BIN/gunicorn webapp.wsgi -c python:webapp.gunicorn_conf --bind "$BIND:$PORT" --workers 2 --threads 16 \
    --access-logfile - --graceful-timeout 5 &
pids+=($!)
# HiveServer2 (JDBC/ODBC, PyHive): its own process on TESSERA_HS2_PORT (default 10009; 0: off).
if [[ "${TESSERA_HS2_PORT:-10009}" != "0" ]]; then
    supervise_endpoint hiveserver2 HiveServer2 &
    pids+=($!)
fi
# Arrow Flight SQL (ADBC, Flight SQL JDBC): its own process on TESSERA_FLIGHT_SQL_PORT
# (default 32010; 0: off).
if [[ "${TESSERA_FLIGHT_SQL_PORT:-32010}" != "0" ]]; then
    supervise_endpoint flightsql "Flight SQL" &
    pids+=($!)
fi
echo "Tessera is starting on http://$BIND:$PORT/ (API: /api/v1/, docs: /api/v1/docs;" \
    "HiveServer2: $BIND:${TESSERA_HS2_PORT:-10009}; Flight SQL: $BIND:${TESSERA_FLIGHT_SQL_PORT:-32010})"
# The supervisor only ends when told to: when the web server ends, stop everything.
wait -n
