#!/usr/bin/env bash
# The whole suite against the real PostgreSQL and Redis, in a throw-away data dir.
set -euo pipefail
cd "$(dirname "$0")/.."
# tests/faults restarts its servers: it runs on servers of its own (scripts/test-faults.sh).
if [[ "${1:-}" == tests/faults* ]]; then
    exec scripts/test-faults.sh "$@"
fi
data_dir=$(mktemp -d)
trap 'rm -rf "$data_dir"' EXIT
export DATABASE_URL="${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}"
export CELERY_BROKER_URL="${TEST_BROKER_URL:-redis://127.0.0.1:6379/15}"
export TESSERA_DATA_DIR="$data_dir"
export TESSERA_STORAGE_ROOTS="$data_dir/external"
# pytest exits 5 when it collected no test: that is a failure of ours, and set -e keeps it one.
exec .venv/bin/python -m pytest "$@"
