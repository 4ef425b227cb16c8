#!/usr/bin/env bash
# Runs the libFuzzer target of each decoder and of the IMAP response parser (or the one named) for a time (default 60 s each).
# Usage: scripts/fuzz.sh [FuzzJSON|FuzzXMLPlist|FuzzBinaryPlist|FuzzMessagePack|FuzzIMAP] [seconds]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

targets=(FuzzJSON FuzzXMLPlist FuzzBinaryPlist FuzzMessagePack FuzzIMAP)
if [ $# -ge 1 ]; then targets=("$1"); fi
seconds="${2:-60}"

for target in "${targets[@]}"; do
    swift build --package-path Tests/Fuzz -c release \
        -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library --product "$target"
    corpus="Tests/Fuzz/Corpus/$target"
    mkdir -p "$corpus"
    echo "fuzzing $target for ${seconds}s"
    "Tests/Fuzz/.build/release/$target" "$corpus" -max_total_time="$seconds" -max_len=4096 -print_final_stats=1
done
