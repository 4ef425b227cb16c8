#!/usr/bin/env bash
# Anchorage's load benchmark and the same workloads against Kinto, in one run, with every ratio printed.
#
# Usage (from anywhere):
#   Benchmarks/performance.sh [--write-docs]
#
# 1. builds `anchorage` and `sync-load` in release mode (Benchmarks/.build);
# 2. runs sync-load against `anchorage serve` on SQLite and on PostgreSQL (a throwaway server from
#    scripts/with-postgres.sh, which this script re-runs itself under);
# 3. makes a Python virtual environment in Benchmarks/.build/kinto-venv, installs Kinto 26.5 from PyPI, and
#    runs kinto/kinto_load.py against Kinto on a free loopback port with the memory backend, then with the
#    PostgreSQL backend (a database of its own on the same throwaway server);
# 4. prints the table of Anchorage/Kinto ratios and the targets (kinto/report.py); with --write-docs it also
#    writes docs/performance-results.md and docs/performance.svg.
#
# Environment: DEVICES (10,100,1000), RUN_SECONDS (10 a fast-sync run), REPEATS (3: each of Anchorage's fast-sync
# figures is the median of that many runs), CONTACTS (100000, Anchorage's upload,
# pull and import), KINTO_CONTACTS (10000: Kinto uploads a few hundred records a second, so 100,000 would take
# minutes; the figures compared are rates), SKIP_BUILD=1 to run the release builds already there, NO_POSTGRES=1 to skip PostgreSQL, NO_KINTO=1 to skip the peer.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"

if [ -z "${NO_POSTGRES:-}" ] && [ -z "${ANCHORAGE_POSTGRES_PORT:-}" ]; then
    exec "$root/scripts/with-postgres.sh" "$0" "$@"
fi

write_docs=""
[ "${1:-}" = "--write-docs" ] && write_docs=1
devices="${DEVICES:-10,100,1000}"
run_seconds="${RUN_SECONDS:-10}"
contacts="${CONTACTS:-100000}"
kinto_contacts="${KINTO_CONTACTS:-10000}"
work="$(mktemp -d)"
# The figures of the last run stay here (the temporary folder goes when the script ends).
kept="$here/.build/performance-results"
mkdir -p "$kept"
kinto_pid=""
cleanup() {
    [ -n "$kinto_pid" ] && kill "$kinto_pid" 2>/dev/null && wait "$kinto_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/ {print $2}') GB RAM, $(date -u '+%Y-%m-%d %H:%M UTC')"

cd "$here"
bin="$(swift build -c release --show-bin-path)"
if [ -n "${SKIP_BUILD:-}" ]; then
    echo "== using the release builds in $bin (SKIP_BUILD)"
else
echo "== building anchorage and sync-load (release)"
# This package builds the root package's targets by path, and SwiftPM keeps its build plan in
# .build/release.yaml without always noticing a source file added to the root package (the build then
# fails with "cannot find … in scope"); the plan is made again in seconds.
rm -f "$here/.build/release.yaml"
for product in anchorage sync-load; do
    if ! swift build -c release --product "$product" >"$work/build.log" 2>&1; then
        grep -E "error" "$work/build.log" | head -n 20 >&2
        echo "performance.sh: the release build of $product failed" >&2
        exit 1
    fi
done
fi
# Copies, so that a build started meanwhile in the shared build folder cannot swap them during the run.
cp "$bin/anchorage" "$bin/sync-load" "$work/"
bin="$work"

postgres_arguments=()
if [ -z "${NO_POSTGRES:-}" ]; then
    postgres_arguments=(--postgres "postgres://$ANCHORAGE_POSTGRES_USER@$ANCHORAGE_POSTGRES_HOST:$ANCHORAGE_POSTGRES_PORT/$ANCHORAGE_POSTGRES_DATABASE")
fi
echo "== Anchorage"
"$bin/sync-load" --anchorage "$bin/anchorage" "${postgres_arguments[@]}" --devices "$devices" --seconds "$run_seconds" \
    --repeat "${REPEATS:-3}" \
    --contacts "$contacts" --json "$work/anchorage.json"

results=("$work/anchorage.json")
if [ -z "${NO_KINTO:-}" ]; then
    venv="$here/.build/kinto-venv"
    if [ ! -x "$venv/bin/kinto" ] || ! "$venv/bin/pip" show psycopg2-binary >/dev/null 2>&1; then
        echo "== installing Kinto 26.5 into $venv"
        python3 -m venv "$venv"
        "$venv/bin/pip" install --quiet "kinto[postgresql]==26.5.*"
    fi
    echo "== Kinto $("$venv/bin/pip" show kinto | awk '/^Version/ {print $2}')"

    # Starts Kinto with the storage settings in $1 (lines of an ini file) and waits for it to answer.
    start_kinto() {
        local port
        port="$("$venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
        cat >"$work/kinto.ini" <<EOF
[app:main]
use = egg:kinto
kinto.includes = kinto.plugins.default_bucket
$1
kinto.userid_hmac_secret = performance-benchmark
kinto.default_bucket_hmac_secret = performance-benchmark
multiauth.policies = basicauth
kinto.bucket_create_principals = system.Authenticated

[server:main]
use = egg:waitress#main
host = 127.0.0.1
port = $port
# As many connections as devices (waitress accepts 100 by default; anchorage serve gets --max-connections too).
connection_limit = 2100

[loggers]
keys = root

[handlers]
keys = console

[formatters]
keys = generic

[logger_root]
level = WARNING
handlers = console

[handler_console]
class = StreamHandler
args = (sys.stderr,)
level = NOTSET
formatter = generic

[formatter_generic]
format = %(levelname)s %(message)s
EOF
        if grep -q postgresql "$work/kinto.ini"; then "$venv/bin/kinto" migrate --ini "$work/kinto.ini" >/dev/null 2>&1; fi
        "$venv/bin/kinto" start --ini "$work/kinto.ini" >"$work/kinto.log" 2>&1 &
        kinto_pid=$!
        kinto_port="$port"
        for _ in $(seq 1 100); do
            if "$venv/bin/python" -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/v1/')" 2>/dev/null; then return; fi
            sleep 0.2
        done
        cat "$work/kinto.log" >&2
        echo "performance.sh: Kinto did not start" >&2
        exit 1
    }
    stop_kinto() {
        kill "$kinto_pid" && wait "$kinto_pid" 2>/dev/null || true
        kinto_pid=""
    }
    run_kinto() {
        "$venv/bin/python" "$here/kinto/kinto_load.py" --port "$kinto_port" --pid "$kinto_pid" --backend "$1" \
            --devices "$devices" --seconds "$run_seconds" --contacts "$kinto_contacts" --json "$work/kinto-$1.json"
        results+=("$work/kinto-$1.json")
    }

    start_kinto "kinto.storage_backend = kinto.core.storage.memory
kinto.cache_backend = kinto.core.cache.memory
kinto.permission_backend = kinto.core.permission.memory"
    run_kinto memory
    stop_kinto

    if [ -z "${NO_POSTGRES:-}" ]; then
        "$venv/bin/python" - <<EOF
import psycopg2
connection = psycopg2.connect(host="$ANCHORAGE_POSTGRES_HOST", port=$ANCHORAGE_POSTGRES_PORT, user="$ANCHORAGE_POSTGRES_USER", dbname="$ANCHORAGE_POSTGRES_DATABASE")
connection.autocommit = True
connection.cursor().execute("CREATE DATABASE kinto_benchmark")
EOF
        url="postgresql://$ANCHORAGE_POSTGRES_USER@$ANCHORAGE_POSTGRES_HOST:$ANCHORAGE_POSTGRES_PORT/kinto_benchmark"
        start_kinto "kinto.storage_backend = kinto.core.storage.postgresql
kinto.storage_url = $url
kinto.cache_backend = kinto.core.cache.memory
kinto.permission_backend = kinto.core.permission.postgresql
kinto.permission_url = $url"
        run_kinto postgres
        stop_kinto
    fi
fi

echo
svg_arguments=()
[ -n "$write_docs" ] && svg_arguments=(--markdown "$root/docs/performance-results.md" --svg "$root/docs/performance.svg")
cp "${results[@]}" "$kept/"
python3 "$here/kinto/report.py" "${results[@]}" "${svg_arguments[@]}"
