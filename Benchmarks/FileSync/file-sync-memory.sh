#!/usr/bin/env bash
# Peak memory of `anchorage files sync` moving one large file each way through Apache mod_dav.
#
# Usage: Benchmarks/FileSync/file-sync-memory.sh [SIZE_MB] [ANCHORAGE]
#   SIZE_MB   the file's size in MiB (default 1024: 1 GiB)
#   ANCHORAGE the tool to measure (default: .build/release/anchorage, else .build/debug/anchorage)
#
# Starts a throwaway Apache with scripts/with-apache.sh, makes a file of SIZE_MB, syncs a folder holding it
# (an upload), then syncs an empty folder (a download), each under /usr/bin/time, and prints the peak resident
# memory of each sync, the seconds it took and the throughput. It fails when a peak exceeds LIMIT_MB (default 64)
# or the downloaded file differs. A benchmark, not a test: it needs SIZE_MB of free disk three times over.
set -euo pipefail
cd "$(dirname "$0")/../.."

size_mb="${1:-1024}"
tool="${2:-}"
if [ -z "$tool" ]; then
    if [ -x .build/release/anchorage ]; then tool=.build/release/anchorage; else tool=.build/debug/anchorage; fi
fi
[ -x "$tool" ] || { echo "file-sync-memory: no anchorage at $tool (swift build -c release --product anchorage)" >&2; exit 1; }
limit_mb="${LIMIT_MB:-64}"

run() {
    local work
    work="$(mktemp -d "${TMPDIR:-/tmp}/anchorage-bench.XXXXXX")"
    trap 'rm -rf "$work"' RETURN
    mkdir -p "$work/up" "$work/down"
    head -c "$((size_mb * 1024 * 1024))" /dev/urandom >"$work/up/large.bin"
    local status=0
    for side in up down; do
        local start end
        start="$(date +%s.%N)"
        ANCHORAGE_PASSWORD="$ANCHORAGE_WEBDAV_PASSWORD" /usr/bin/time -f "%M" -o "$work/$side.rss" \
            "$tool" files sync "$work/$side" --server "$ANCHORAGE_WEBDAV_URL" --user "$ANCHORAGE_WEBDAV_USER" \
            --store "sqlite:$work/$side.sqlite" >"$work/$side.log"
        end="$(date +%s.%N)"
        local peak_kb seconds
        peak_kb="$(tail -n 1 "$work/$side.rss")"
        seconds="$(echo "$end - $start" | bc)"
        printf '%-9s %6d MiB  peak RSS %6.1f MiB  %6.1f s  %7.1f MiB/s\n' \
            "$([ "$side" = up ] && echo upload || echo download)" "$size_mb" "$(echo "$peak_kb / 1024" | bc -l)" \
            "$seconds" "$(echo "$size_mb / $seconds" | bc -l)"
        if [ "$peak_kb" -gt $((limit_mb * 1024)) ]; then
            echo "file-sync-memory: the $side peak exceeds $limit_mb MiB" >&2
            status=1
        fi
    done
    cmp -s "$work/up/large.bin" "$work/down/large.bin" || { echo "file-sync-memory: the downloaded file differs" >&2; status=1; }
    return "$status"
}

if [ -z "${ANCHORAGE_WEBDAV_URL:-}" ]; then
    exec scripts/with-apache.sh "$0" "$size_mb" "$tool"
fi
run
