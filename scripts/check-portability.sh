#!/usr/bin/env bash
# Fails on platform-specific imports and calls that no #if guards in the library targets, and checks that the
# msgpack-c sources vendored for Apple platforms compile (scripts/check-portability.py says how).
set -euo pipefail
exec python3 "$(dirname "$0")/check-portability.py" "$@"
