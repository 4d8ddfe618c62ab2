#!/usr/bin/env bash
# make demo: the whole pipeline on the embedded default (an SQLite file plus the local
# test web), then the dashboard, left running on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
DB_URL=${1:-sqlite:///$PWD/demo/webometrics.db}
W=.venv/bin/webometrics
mkdir -p demo
export WEBOMETRICS_DB_URL="$DB_URL"
has() { $W --help | grep -qE "^    $1 "; }
step() { printf '\n== %s\n' "$*"; }

# stop what an earlier demo left running
for pidfile in demo/testbed.pid demo/dashboard.pid; do
  if [ -f "$pidfile" ]; then kill "$(cat "$pidfile")" 2>/dev/null || true; rm -f "$pidfile"; fi
done
rm -f demo/webometrics.db demo/webometrics.db-wal demo/webometrics.db-shm

step "database schema ($DB_URL)"
$W db upgrade

UNIVERSITIES=examples/universities.toml
PROXY_ARGS=()
if has testbed; then
  step "local test web: build"
  $W testbed build --out demo/testbed
  step "local test web: serve on 127.0.0.1 (the crawler's HTTP proxy)"
  PORT=$(.venv/bin/python -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  nohup $W testbed serve --dir demo/testbed --port "$PORT" > demo/testbed.log 2>&1 &
  echo $! > demo/testbed.pid
  for _ in $(seq 50); do
    (exec 3<>/dev/tcp/127.0.0.1/"$PORT") 2>/dev/null && break; sleep 0.2
  done
  UNIVERSITIES=testbed/universities.toml
  # the local test web is ours: no politeness delays (a real crawl keeps the defaults)
  export WEBOMETRICS_CRAWL__DOWNLOAD_DELAY=0 WEBOMETRICS_CRAWL__AUTOTHROTTLE=false
  PROXY_ARGS=(--proxy "http://127.0.0.1:$PORT" --testbed demo/testbed)
fi

step "universities: import $UNIVERSITIES"
$W universities import "$UNIVERSITIES"

if has crawl; then
  step "crawl the outgoing and citing environment"
  $W crawl --universities "$UNIVERSITIES" --direction both "${PROXY_ARGS[@]}"
fi
if has extract; then step "extract main text, language, shingles"; $W extract; fi
if has dedup; then step "remove fuzzy duplicates"; $W dedup; fi
if has cluster; then step "cluster external domains by kind of activity, per university and direction"; $W cluster; fi
if has analyse; then step "themes and categories"; $W analyse; fi
if has report; then step "report"; $W report --out demo/report; fi

if [ -f demo/testbed.pid ]; then kill "$(cat demo/testbed.pid)" 2>/dev/null || true; rm -f demo/testbed.pid; fi

if has dashboard; then
  step "dashboard"
  nohup $W dashboard --port "${DASHBOARD_PORT:-8501}" > demo/dashboard.log 2>&1 &
  echo $! > demo/dashboard.pid
  for _ in $(seq 100); do
    (exec 3<>/dev/tcp/127.0.0.1/"${DASHBOARD_PORT:-8501}") 2>/dev/null && break; sleep 0.3
  done
  echo "dashboard running at http://127.0.0.1:${DASHBOARD_PORT:-8501}/ (pid $(cat demo/dashboard.pid);"
  echo "stop it with: kill \$(cat demo/dashboard.pid))"
else
  step "stored universities"
  $W universities list
fi
