#!/usr/bin/env bash
# Bytes and time of the standard first upload and first pull (10,000 contacts, `anchorage sizes
# --write-records`), per codec, with and without HTTP compression (and for JSON with the server at zlib's
# fastest level too), on loopback and through a link
# limited to a phone's (scripts/tcp-relay.py: 10 Mbit/s, 25 ms each way), with the CPU time of device and server.
#
#   Benchmarks/compression/compression.sh [--markdown FILE]
#
# Uses .build/release/anchorage (built when missing; ANCHORAGE=path names another) and python3.
set -euo pipefail
cd "$(dirname "$0")/../.."
markdown=""
[ "${1:-}" = "--markdown" ] && markdown="$2"
anchorage="${ANCHORAGE:-.build/release/anchorage}"
[ -x "$anchorage" ] || swift build -c release --product anchorage
link="scripts/tcp-relay.py"
work="$(mktemp -d)"
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

echo secret | "$anchorage" users add ada --file "$work/users.txt" --iterations 1000 >/dev/null
"$anchorage" sizes --write-records "$work/contacts.jsonl"
"$anchorage" records import Contact "$work/contacts.jsonl" --store "sqlite:$work/seed.sqlite" >/dev/null
ticks=$(getconf CLK_TCK)

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# Waits until FILE has a line matching PATTERN.
wait_for() { for _ in $(seq 600); do grep -q "$2" "$1" 2>/dev/null && return; sleep 0.05; done; echo "timed out waiting for $2 in $1" >&2; exit 1; }
server_ms() { awk -v t="$ticks" '{ printf "%d", ($14 + $15) * 1000 / t }' "/proc/$1/stat"; }

# One sync through the link: prints "seconds device_ms up down".
through_link() {
    local server_port="$1" shaping="$2" store="$3" flag="$4" codec="$5"
    local port; port="$(free_port)"
    # shellcheck disable=SC2086
    python3 "$link" "$port" "$server_port" $shaping > "$work/link.out" & local relay=$!
    wait_for "$work/link.out" relaying
    local start end
    start=$(date +%s.%N)
    /usr/bin/time -f "%e %U %S" -o "$work/time" env ANCHORAGE_PASSWORD=secret "$anchorage" sync --server "http://127.0.0.1:$port" \
        --user ada --codec "$codec" $flag --store "sqlite:$store" > /dev/null
    end=$(date +%s.%N)
    kill -TERM "$relay"; wait "$relay" || true
    local bytes; bytes="$(grep '^up ' "$work/link.out")"
    awk -v s="$start" -v e="$end" '{ printf "%.2f %d ", e - s, ($2 + $3) * 1000 }' "$work/time"
    echo "$bytes" | awk '{ print $2, $4 }'
}

header="| link | codec | compression | upload: bytes up | upload: s | pull: bytes down | pull: s | device CPU ms (up + pull) | server CPU ms (up + pull) |"
rows=()
for name in loopback phone; do
    shaping=""
    [ "$name" = phone ] && shaping="--rate 10000000 --delay 0.025"
    for codec in json msgpack xml-plist binary-plist; do
        # "level 1": the server compresses at zlib's fastest level (--compression-level 1), JSON only.
        levels=("on" "off")
        [ "$codec" = json ] && levels+=("level 1")
        for compression in "${levels[@]}"; do
            flag=""
            [ "$compression" = off ] && flag="--no-compression"
            level=6
            [ "$compression" = "level 1" ] && level=1
            port="$(free_port)"
            "$anchorage" serve --port "$port" --store memory --users "$work/users.txt" --log-level warning \
                --compression-level "$level" > "$work/serve.out" 2>&1 &
            server=$!
            pids+=("$server")
            wait_for "$work/serve.out" "serving on"
            # A store is its file and its write-ahead log: both are copied, and neither is left from a run before.
            rm -f "$work"/device.sqlite* "$work"/pull.sqlite*
            for part in "$work"/seed.sqlite*; do cp "$part" "$work/device.sqlite${part#"$work"/seed.sqlite}"; done
            before=$(server_ms "$server")
            read -r up_s up_cpu up_bytes _ <<< "$(through_link "$port" "$shaping" "$work/device.sqlite" "$flag" "$codec")"
            read -r pull_s pull_cpu _ pull_down <<< "$(through_link "$port" "$shaping" "$work/pull.sqlite" "$flag" "$codec")"
            after=$(server_ms "$server")
            kill "$server"; wait "$server" 2>/dev/null || true
            row="| $name | $codec | $compression | $up_bytes | $up_s | $pull_down | $pull_s | $((up_cpu + pull_cpu)) | $((after - before)) |"
            echo "$row"
            rows+=("$row")
        done
    done
done

if [ -n "$markdown" ]; then
    {
        echo "$header"
        echo "|---|---|---|---:|---:|---:|---:|---:|---:|"
        printf '%s\n' "${rows[@]}"
    } > "$markdown"
fi
