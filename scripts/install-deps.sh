#!/usr/bin/env bash
# Installs the system packages Anchorage builds and tests with, when they are missing.
# Usage: scripts/install-deps.sh [--postgres] [--python] [--nginx] [--apache] [--dovecot] [--browser]
set -euo pipefail

# openssl makes the certificate authority and server certificate the HTTPS tests use.
packages=(pkg-config libxml2-dev libmsgpack-dev libsqlite3-dev zlib1g-dev openssl)
want_python=0
for arg in "$@"; do
    case "$arg" in
        --postgres) packages+=(postgresql) ;;
        # The load balancer in front of several `anchorage serve` processes (scripts/with-nginx.sh).
        --nginx) packages+=(nginx) ;;
        # Apache httpd with mod_dav, the WebDAV server of the file-sync tests (scripts/with-apache.sh).
        --apache) packages+=(apache2) ;;
        # The IMAP server of the mail tests (scripts/with-dovecot.sh).
        --dovecot) packages+=(dovecot-imapd) ;;
        # Headless Chromium, its WebDriver and Selenium: the operator console's browser tests (Tests/Browser).
        --browser) packages+=(chromium chromium-driver python3-selenium) ;;
        --python) want_python=1 ;;
    esac
done

# python3 runs the doc-comment check; the interop tests need its msgpack module too.
command -v python3 >/dev/null || packages+=(python3)
if [ "$want_python" -eq 1 ] && ! command -v python3 >/dev/null; then packages+=(python3-msgpack); fi
# scripts/check-openapi.sh makes a virtual environment: a Debian or Ubuntu python3 needs python3-venv for it.
if [ "$want_python" -eq 1 ] && ! python3 -c "import ensurepip, venv" 2>/dev/null; then packages+=(python3-venv); fi

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

if [ "$want_python" -eq 1 ] && ! python3 -c "import msgpack" 2>/dev/null; then
    # Python's plistlib and json ship with Python; msgpack is the interop peer for MessagePack.
    # A distribution's Python may refuse pip ("externally managed"), or lack pip: then its package.
    python3 -m pip install --quiet msgpack 2>/dev/null \
        || python3 -m pip install --quiet --user --break-system-packages msgpack 2>/dev/null \
        || { sudo_cmd=""; [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
             DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq python3-msgpack >/dev/null; }
    python3 -c "import msgpack" || { echo "error: cannot install Python's msgpack module" >&2; exit 1; }
fi
