#!/usr/bin/env bash
# Install the servers the test suite starts by itself, when they are missing:
# PostgreSQL (initdb/pg_ctl), redis-server and Debian's chromium. Needs root (apt-get);
# as another user it only says what is missing.
set -euo pipefail
need=()
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
[ ${#need[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "missing system packages: ${need[*]} (install them with apt-get as root)" >&2
  exit 0
fi
echo "installing ${need[*]} from Debian's packages" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
# the packages start their own servers on install; the tests run their own instances
for svc in postgresql redis-server; do
  (command -v service >/dev/null && service "$svc" stop >/dev/null 2>&1) || true
done
