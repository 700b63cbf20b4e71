#!/usr/bin/env bash
# The fault-injection suite (tests/faults, docs/faults.md) as its own pytest run: it restarts
# PostgreSQL and Redis, so it runs against servers of its own (started by
# tests/faults/conftest.py on the free ports chosen here), never the shared ones.
# TESSERA_FAULT_REPEATS (default 3) is how often each fault is injected.
set -euo pipefail
cd "$(dirname "$0")/.."
data_dir=$(mktemp -d)
server_dir=$(mktemp -d /tmp/tessera-faults-XXXXXX)
trap 'rm -rf "$data_dir" "$server_dir"' EXIT
read -r pg_port redis_port < <(.venv/bin/python - <<'PY'
import socket
ports = []
sockets = []
for _ in range(2):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    sockets.append(s)
    ports.append(s.getsockname()[1])
print(*ports)
PY
)
export TESSERA_FAULT_SERVER_DIR="$server_dir"
export TESSERA_FAULT_PG_PORT="$pg_port"
export TESSERA_FAULT_REDIS_PORT="$redis_port"
export DATABASE_URL="postgres://postgres@127.0.0.1:$pg_port/tessera_faults"
export CELERY_BROKER_URL="redis://127.0.0.1:$redis_port/0"
export TESSERA_DATA_DIR="$data_dir"
export TESSERA_STORAGE_ROOTS="$data_dir/external"
# Only tests/faults runs here: without a path of it among the arguments, all of it.
case " $* " in
    *" tests/faults"*) ;;
    *) set -- "$@" tests/faults ;;
esac
exec .venv/bin/python -m pytest -p no:cacheprovider "$@"
