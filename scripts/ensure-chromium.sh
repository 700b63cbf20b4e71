#!/usr/bin/env bash
# Browser tests drive Debian's Chromium; install it when missing (needs root, as on CI).
set -euo pipefail
chromium="${TESSERA_CHROMIUM:-/usr/bin/chromium}"
[ -x "$chromium" ] && exit 0
if [ "$(id -u)" != 0 ]; then
    echo "$chromium is missing: run 'sudo apt-get install chromium chromium-driver'" >&2
    exit 1
fi
echo "installing Debian's chromium and chromium-driver (browser tests)"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null
