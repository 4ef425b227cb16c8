#!/usr/bin/env bash
# Installs the system packages Anchorage builds and tests with, when they are missing.
# Usage: scripts/install-deps.sh [--postgres] [--python]
set -euo pipefail

packages=(pkg-config libxml2-dev libmsgpack-dev libsqlite3-dev zlib1g-dev)
want_python=0
for arg in "$@"; do
    case "$arg" in
        --postgres) packages+=(postgresql) ;;
        --python) want_python=1 ;;
    esac
done

missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing system packages: ${missing[*]}"
    sudo_cmd=""
    [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if [ "$want_python" -eq 1 ] && command -v python3 >/dev/null; then
    # Python's plistlib and json ship with Python; msgpack is the interop peer for MessagePack.
    python3 -c "import msgpack" 2>/dev/null || python3 -m pip install --quiet msgpack
fi
