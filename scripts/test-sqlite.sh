#!/usr/bin/env bash
# The web-side hostile tests of stored text, bodies, figures and tokens, and the hot-path row
# reader, again on the embedded default (SQLite, file-system broker): what one database
# accepts the other must refuse alike, and read alike.
set -euo pipefail
cd "$(dirname "$0")/.."
data_dir=$(mktemp -d)
trap 'rm -rf "$data_dir"' EXIT
unset DATABASE_URL
export CELERY_BROKER_URL="filesystem://"
export TESSERA_DATA_DIR="$data_dir"
export TESSERA_STORAGE_ROOTS="$data_dir/external"
# Without a path among the arguments, these modules.
case " $* " in
    *" tests/"*) ;;
    *) set -- "$@" tests/security/test_unstorable_text.py tests/security/test_tokens.py \
        tests/security/test_body_rights.py tests/security/test_what_use_shows.py \
        tests/webapp/test_rows.py ;;
esac
exec .venv/bin/python -m pytest -p no:cacheprovider -m "not spark" "$@"
