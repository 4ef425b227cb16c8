#!/usr/bin/env bash
# Runs Anchorage's test suite: installs what it needs, builds without warnings in our targets, runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh --python --postgres

swift build --build-tests 2>&1 | tee .build-log.txt
# Our own targets must build without warnings (dependencies' warnings are theirs).
if grep -E "^(/.*/(Sources|Tests|Plugins)/.*|macro expansion .*): warning:" .build-log.txt | grep -v "/.build/" ; then
    echo "error: warnings in Anchorage's own targets (listed above)"
    exit 1
fi
rm -f .build-log.txt
# Every public symbol carries a doc comment.
python3 scripts/check-doc-comments.py
swift test --skip-build "$@"
