#!/usr/bin/env bash
# Runs Anchorage's test suite: installs what it needs, builds without warnings in our targets, runs every test.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh --python --postgres --nginx --apache --dovecot --browser

swift build --build-tests 2>&1 | tee .build-log.txt
# Our own targets must build without warnings (dependencies' warnings are theirs).
if grep -E "^(/.*/(Sources|Tests|Plugins|Examples)/.*|macro expansion .*): warning:" .build-log.txt | grep -v "/.build/" ; then
    echo "error: warnings in Anchorage's own targets (listed above)"
    exit 1
fi
rm -f .build-log.txt
# Every public symbol carries a doc comment.
python3 scripts/check-doc-comments.py
python3 scripts/check-dependencies.py  # every target of Package.swift depends on exactly what it imports
scripts/check-portability.sh  # no unguarded Linux-only import or call in a library (we cannot build for Apple here)
# The SyncCore documentation catalog builds, with no broken symbol links.
swift package generate-documentation --target SyncCore --warnings-as-errors > .build/docc-log.txt 2>&1 \
    || { cat .build/docc-log.txt; echo "error: the SyncCore documentation does not build"; exit 1; }
# The slow tests (the crash matrix, the 100,000-record row-count tests and the other long runs) run only
# when ANCHORAGE_SLOW_TESTS asks for them (Tests/TestSupport/SlowTests.swift), so that a plain `swift test`
# stays quick. This script is the whole suite, and under CI a skipped test fails the run: it asks for them.
export ANCHORAGE_SLOW_TESTS=1
# Tests that need PostgreSQL, Python or the built tool are skipped when those cannot be had. On a
# developer's machine that is a convenience; under CI it would hide a missing install step, so
# there a skipped test fails the run.
run_tests() {
    if [ -n "${CI:-}" ]; then
        swift test --skip-build "$@" 2>&1 | tee .build/test-log.txt
        if grep -E "^➜ (Test|Suite) .* skipped" .build/test-log.txt; then
            echo "error: tests were skipped under CI (listed above): something they need is not installed"
            exit 1
        fi
    else
        swift test --skip-build "$@"
    fi
}
if [ "$#" -eq 0 ]; then
    # The crash matrix runs on its own, after the rest: it draws its kill moments against the length
    # of one whole sync, and its child processes would share two cores with the rest of the suite,
    # which makes every sync, and so the matrix, several times longer (docs/testing.md).
    run_tests --skip CrashMatrixTests
    run_tests --filter CrashMatrixTests
else
    run_tests "$@"
fi
# The HTTP API description matches a live server (schemathesis, docs/openapi.yaml): with the whole
# suite, not when the arguments pick some tests.
if [ "$#" -eq 0 ]; then
    scripts/check-openapi.sh
fi
