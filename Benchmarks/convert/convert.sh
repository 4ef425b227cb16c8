#!/usr/bin/env bash
# `anchorage convert` of the 10,000 standard contacts from an XML property list to a binary one,
# against CPython's plistlib doing the same (load the XML, dump binary): each side is a whole
# process, start-up included, timed by wall clock, best of RUNS runs (default 10).
#
#   Benchmarks/convert/convert.sh [RUNS]
#
# Uses .build/release/anchorage (built when missing, so rebuild it after changing the code;
# ANCHORAGE=path names another), python3, and bash 5 or later (for $EPOCHREALTIME).
set -euo pipefail
cd "$(dirname "$0")/../.."
export LC_ALL=C
[ -n "${EPOCHREALTIME:-}" ] || { echo "convert.sh needs bash 5 or later (\$EPOCHREALTIME)" >&2; exit 1; }
runs="${1:-10}"
anchorage="${ANCHORAGE:-.build/release/anchorage}"
[ -x "$anchorage" ] || swift build -c release --product anchorage
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The standard records are written as JSON Lines (one contact per line, the form
# `anchorage records import` reads); join them into one JSON array and convert that once.
"$anchorage" sizes --write-records "$work/contacts.jsonl"
{ printf '['; paste -sd, "$work/contacts.jsonl"; printf ']\n'; } > "$work/contacts.json"
"$anchorage" convert --from json --to xml-plist "$work/contacts.json" "$work/contacts.xml"

plistlib='import plistlib, sys; plistlib.dump(plistlib.load(open(sys.argv[1], "rb")), open(sys.argv[2], "wb"), fmt=plistlib.FMT_BINARY)'
run_anchorage() { "$anchorage" convert --from xml-plist --to binary-plist "$work/contacts.xml" "$work/anchorage.bplist"; }
run_plistlib() { python3 -c "$plistlib" "$work/contacts.xml" "$work/plistlib.bplist"; }

# Prints the best wall-clock seconds of `runs` runs of the command named by $1.
best_of_runs() {
    local best="" start end
    for _ in $(seq "$runs"); do
        start=$EPOCHREALTIME
        "$1"
        end=$EPOCHREALTIME
        best=$(awk -v best="$best" -v start="$start" -v end="$end" \
            'BEGIN { t = end - start; if (best == "" || t < best) printf "%.6f", t; else print best }')
    done
    echo "$best"
}

anchorage_seconds=$(best_of_runs run_anchorage)
plistlib_seconds=$(best_of_runs run_plistlib)

# Both outputs must hold the same values (their bytes may differ: object order, sharing).
python3 -c 'import plistlib, sys; a, b = (plistlib.load(open(p, "rb")) for p in sys.argv[1:]); sys.exit(a != b)' \
    "$work/anchorage.bplist" "$work/plistlib.bplist" || { echo "the two binary plists differ" >&2; exit 1; }

echo "machine: $(nproc) CPUs, Linux $(uname -r); $(date -u '+%Y-%m-%d %H:%M UTC'); $(python3 --version)"
echo "input: $(wc -c < "$work/contacts.xml") bytes of XML plist (10,000 contacts); output: $(wc -c < "$work/anchorage.bplist") bytes of binary plist"
awk -v a="$anchorage_seconds" -v p="$plistlib_seconds" -v runs="$runs" 'BEGIN {
    printf "anchorage convert: %.1f ms (best of %d)\n", a * 1000, runs
    printf "python3 plistlib:  %.1f ms (best of %d)\n", p * 1000, runs
    printf "ratio (plistlib / anchorage): %.2fx\n", p / a
}'
