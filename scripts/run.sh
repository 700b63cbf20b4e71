#!/usr/bin/env bash
# Start Tessera in the foreground: web server + worker. Ctrl-C stops all of it.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin
export TESSERA_DATA_DIR="${TESSERA_DATA_DIR:-$PWD/var}"
PORT="${PORT:-8000}"
BIND="${TESSERA_BIND:-127.0.0.1}"

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

$BIN/celery -A webapp worker --pool threads --concurrency 4 --loglevel INFO \
    --hostname "worker1@%h" &
pids+=($!)
$BIN/gunicorn webapp.wsgi -c python:webapp.gunicorn_conf --bind "$BIND:$PORT" --workers 2 --threads 4 \
    --access-logfile - --graceful-timeout 5 &
pids+=($!)
echo "Tessera is starting on http://$BIND:$PORT/ (API: /api/v1/, docs: /api/v1/docs)"
# When either process ends, stop the other one too.
wait -n
