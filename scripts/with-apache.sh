#!/usr/bin/env bash
# Runs a throwaway Apache httpd with mod_dav, the WebDAV server of Anchorage's file-sync tests.
#
# Usage:
#   scripts/with-apache.sh COMMAND [ARGUMENT...]
#       Starts a server, runs COMMAND with the server's address in the environment, stops the server and removes
#       its files, and exits with COMMAND's status. Example: scripts/with-apache.sh swift test --filter FileSyncTests
#   scripts/with-apache.sh --start DIRECTORY [OWNER_PID]
#       Starts a server whose files live in DIRECTORY (made if missing, must be empty) and prints its port on the
#       last line of standard output. With OWNER_PID, the server stops by itself once that process has ended.
#   scripts/with-apache.sh --stop DIRECTORY
#       Stops the server started in DIRECTORY and removes DIRECTORY.
#
# The server listens on 127.0.0.1 only, on a free port chosen at random, and serves WebDAV at /dav/ from
# DIRECTORY/root (lock database DIRECTORY/lock/, configuration DIRECTORY/httpd.conf, log DIRECTORY/error.log).
# /dav/ asks for HTTP Basic authentication as `anchorage` with the password `anchorage`. As root, the server's
# children and files belong to `www-data`. The binaries come from APACHE_BIN (else /usr/sbin/apache2, else httpd on
# PATH) and the modules from APACHE_MODULES (else /usr/lib/apache2/modules).
#
# For tests of a server's refusals, a request whose path has a segment named `.anchorage-status-NNN` (NNN one of
# 403, 423, 500, 503, 507) is answered with status NNN for any method but PROPFIND and GET, without being carried out.
#
# The password is stored as bcrypt (htpasswd -B), which Apache checks on every request (2-3 ms of its CPU each here);
# APACHE_PASSWORD_HASH=md5 stores it as apr1-MD5 (htpasswd -m, well under 1 ms), for benchmarks of the client.
#
# COMMAND sees ANCHORAGE_WEBDAV_URL (http://127.0.0.1:PORT/dav/), ANCHORAGE_WEBDAV_USER,
# ANCHORAGE_WEBDAV_PASSWORD and ANCHORAGE_WEBDAV_ROOT (the document root, to change files behind the server's back).
set -euo pipefail

readonly dav_user="anchorage"
readonly dav_password="anchorage"
readonly service_user="www-data"

die() {
    echo "with-apache: $*" >&2
    exit 1
}

find_binary() {
    if [ -n "${APACHE_BIN:-}" ] && [ -x "$APACHE_BIN" ]; then echo "$APACHE_BIN"; return; fi
    if [ -x /usr/sbin/apache2 ]; then echo /usr/sbin/apache2; return; fi
    if command -v httpd >/dev/null 2>&1; then command -v httpd; return; fi
    die "no Apache httpd found (install the apache2 package: scripts/install-deps.sh --apache, or set APACHE_BIN)"
}

find_modules() {
    local dir="${APACHE_MODULES:-/usr/lib/apache2/modules}"
    [ -f "$dir/mod_dav_fs.so" ] || die "no mod_dav_fs.so in $dir (set APACHE_MODULES)"
    echo "$dir"
}

write_config() {
    local directory="$1" port="$2" modules="$3"
    local user_lines=""
    if [ "$(id -u)" -eq 0 ]; then
        user_lines="User $service_user
Group $(id -gn "$service_user")"
    fi
    cat >"$directory/httpd.conf" <<CONF
ServerRoot "$directory"
ServerName 127.0.0.1
Listen 127.0.0.1:$port
PidFile "$directory/httpd.pid"
ErrorLog "$directory/error.log"
LogLevel warn
Mutex file:$directory/lock default
$user_lines
LoadModule mpm_event_module $modules/mod_mpm_event.so
LoadModule authz_core_module $modules/mod_authz_core.so
LoadModule authz_user_module $modules/mod_authz_user.so
LoadModule authn_core_module $modules/mod_authn_core.so
LoadModule authn_file_module $modules/mod_authn_file.so
LoadModule auth_basic_module $modules/mod_auth_basic.so
LoadModule alias_module $modules/mod_alias.so
LoadModule rewrite_module $modules/mod_rewrite.so
LoadModule dav_module $modules/mod_dav.so
LoadModule dav_fs_module $modules/mod_dav_fs.so
# Both children start at once and stay: the event MPM closes idle keep-alive
# connections while it is short of threads, and a write sent on one of them at
# that moment gets no answer (which a sync leaves to the next sync).
StartServers 2
ServerLimit 2
ThreadsPerChild 32
MaxRequestWorkers 64
MinSpareThreads 32
MaxSpareThreads 64
KeepAliveTimeout 30
MaxKeepAliveRequests 0
Timeout 60
LimitRequestBody 0
FileETag Digest
RewriteEngine On
RewriteCond %{REQUEST_METHOD} !^(PROPFIND|GET|HEAD|OPTIONS)$
RewriteCond %{REQUEST_URI} /\.anchorage-status-403(/|$)
RewriteRule ^ - [R=403,L]
RewriteCond %{REQUEST_METHOD} !^(PROPFIND|GET|HEAD|OPTIONS)$
RewriteCond %{REQUEST_URI} /\.anchorage-status-423(/|$)
RewriteRule ^ - [R=423,L]
RewriteCond %{REQUEST_METHOD} !^(PROPFIND|GET|HEAD|OPTIONS)$
RewriteCond %{REQUEST_URI} /\.anchorage-status-500(/|$)
RewriteRule ^ - [R=500,L]
RewriteCond %{REQUEST_METHOD} !^(PROPFIND|GET|HEAD|OPTIONS)$
RewriteCond %{REQUEST_URI} /\.anchorage-status-503(/|$)
RewriteRule ^ - [R=503,L]
RewriteCond %{REQUEST_METHOD} !^(PROPFIND|GET|HEAD|OPTIONS)$
RewriteCond %{REQUEST_URI} /\.anchorage-status-507(/|$)
RewriteRule ^ - [R=507,L]
DavLockDB "$directory/lock/davlock"
Alias /dav "$directory/root"
<Directory "$directory/root">
    Dav On
    Options FollowSymLinks
    AllowOverride None
    AuthType Basic
    AuthName "anchorage"
    AuthUserFile "$directory/users"
    Require valid-user
</Directory>
<Directory />
    Require all denied
</Directory>
CONF
}

start_server() {
    local directory="$1" owner="${2:-}"
    local binary modules
    binary="$(find_binary)"
    modules="$(find_modules)"
    mkdir -p "$directory"
    [ -z "$(ls -A "$directory")" ] || die "$directory is not empty"
    mkdir -p "$directory/root" "$directory/lock"
    local hash_flag
    case "${APACHE_PASSWORD_HASH:-bcrypt}" in
        bcrypt) hash_flag=-B ;;
        md5) hash_flag=-m ;;
        *) die "APACHE_PASSWORD_HASH must be bcrypt or md5, not ${APACHE_PASSWORD_HASH}" ;;
    esac
    htpasswd -bc "$hash_flag" "$directory/users" "$dav_user" "$dav_password" >/dev/null 2>&1 \
        || die "htpasswd failed (install apache2-utils)"
    if [ "$(id -u)" -eq 0 ]; then
        id "$service_user" >/dev/null 2>&1 || die "running as root, but there is no '$service_user' user to run the server"
        chmod 755 "$directory"
        chown -R "$service_user" "$directory/root" "$directory/lock"
        chmod 644 "$directory/users"
    fi
    echo "$binary" >"$directory/binary"

    local attempt port
    for attempt in $(seq 1 20); do
        port=$((20000 + RANDOM % 40000))
        write_config "$directory" "$port" "$modules"
        : >"$directory/error.log"
        if "$binary" -f "$directory/httpd.conf" -k start >"$directory/start.log" 2>&1; then
            # httpd forks: wait until it answers on the port (or says why it cannot).
            local tries
            for tries in $(seq 1 100); do
                if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
                    if [ -n "$owner" ]; then
                        # Stops the server once its owner has gone, even if the owner never calls --stop.
                        # (An owner that has ended but was not reaped is a zombie, which kill -0 still finds.)
                        nohup setsid bash -c '
                            running() { [ -r "/proc/$1/stat" ] && [ "$(sed "s/.*) //" "/proc/$1/stat" | cut -c1)" != Z ]; }
                            while running "$1" && [ -f "$2/httpd.conf" ]; do sleep 1; done
                            [ -f "$2/httpd.conf" ] && exec "$0" --stop "$2"
                        ' "$0" "$owner" "$directory" </dev/null >/dev/null 2>&1 &
                    fi
                    echo "$port"
                    return 0
                fi
                grep -q -i "could not bind\|address already in use" "$directory/error.log" 2>/dev/null && break
                sleep 0.05
            done
        fi
        stop_process "$directory"
        grep -q -i "could not bind\|address already in use" "$directory/error.log" "$directory/start.log" 2>/dev/null \
            || break
    done
    cat "$directory/start.log" "$directory/error.log" >&2 2>/dev/null || true
    die "the server did not start (log above)"
}

# Whether process PID runs: it exists and is not a zombie (an ended process nobody reaped, which kill -0 still
# finds where the machine's first process does not reap orphans).
running() {
    [ -r "/proc/$1/stat" ] && [ "$(sed 's/.*) //' "/proc/$1/stat" | cut -c1)" != Z ]
}

stop_process() {
    local directory="$1" pid=""
    [ -f "$directory/httpd.pid" ] && pid="$(cat "$directory/httpd.pid" 2>/dev/null || true)"
    if [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null; then
        local tries
        for tries in $(seq 1 100); do
            running "$pid" || break
            sleep 0.05
        done
        ! running "$pid" || kill -KILL "$pid" 2>/dev/null || true
    fi
    # Children whose parent ended before them (or was killed) still serve under this configuration: end them too.
    pkill -KILL -f -- "-f $directory/httpd.conf" 2>/dev/null || true
}

stop_server() {
    local directory="$1"
    [ -d "$directory" ] || return 0
    stop_process "$directory"
    rm -rf "$directory"
}

case "${1:-}" in
    --start)
        [ $# -ge 2 ] || die "usage: $0 --start DIRECTORY [OWNER_PID]"
        start_server "$2" "${3:-}"
        ;;
    --stop)
        [ $# -eq 2 ] || die "usage: $0 --stop DIRECTORY"
        stop_server "$2"
        ;;
    "" | -h | --help)
        sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'
        [ $# -ge 1 ] || exit 2
        ;;
    *)
        directory="$(mktemp -d "${TMPDIR:-/tmp}/anchorage-apache.XXXXXX")"
        trap 'stop_server "$directory"' EXIT
        trap 'exit 130' INT TERM
        port="$(start_server "$directory" | tail -n 1)"
        status=0
        ANCHORAGE_WEBDAV_URL="http://127.0.0.1:$port/dav/" ANCHORAGE_WEBDAV_USER="$dav_user" \
            ANCHORAGE_WEBDAV_PASSWORD="$dav_password" ANCHORAGE_WEBDAV_ROOT="$directory/root" \
            "$@" || status=$?
        exit "$status"
        ;;
esac
