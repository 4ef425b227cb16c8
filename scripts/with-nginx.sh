#!/usr/bin/env bash
# Runs a throwaway nginx load balancer in front of several `anchorage serve` processes, for Anchorage's tests.
#
# Usage:
#   scripts/with-nginx.sh COMMAND [ARGUMENT...]
#       Starts nginx, runs COMMAND with the balancer's address in the environment, stops nginx and removes its
#       files, and exits with COMMAND's status. Example:
#       ANCHORAGE_NGINX_UPSTREAMS="127.0.0.1:8081 127.0.0.1:8082" \
#           scripts/with-nginx.sh sh -c 'curl -s http://127.0.0.1:$ANCHORAGE_NGINX_PORT/health'
#   scripts/with-nginx.sh --start DIRECTORY [OWNER_PID]
#       Starts nginx whose configuration, pid file and logs live in DIRECTORY (made if missing, must be empty) and
#       prints its port on the last line of standard output. With OWNER_PID, nginx stops by itself once that
#       process has ended.
#   scripts/with-nginx.sh --stop DIRECTORY
#       Stops the nginx started in DIRECTORY and removes DIRECTORY.
#
# ANCHORAGE_NGINX_UPSTREAMS names the servers, HOST:PORT separated by spaces (required). nginx listens on
# 127.0.0.1 only, on a free port chosen at random, and hands each request to the next server in turn
# (round-robin, nothing sticky: no cookie, no client address). A server that refuses the connection is skipped
# for that request and for one second; a request already sent to a server that dies is answered 502, which
# clients retry. The access log (DIRECTORY/access.log) has one line per request: method, path, status and the
# server that answered. nginx runs as the calling user; as root, its workers run as `nobody`. The binary is
# NGINX, else `nginx` in PATH, else /usr/sbin/nginx.
#
# COMMAND sees ANCHORAGE_NGINX_HOST and ANCHORAGE_NGINX_PORT.
set -euo pipefail

die() {
    echo "with-nginx: $*" >&2
    exit 1
}

find_nginx() {
    if [ -n "${NGINX:-}" ] && [ -x "$NGINX" ]; then
        echo "$NGINX"
    elif command -v nginx >/dev/null 2>&1; then
        command -v nginx
    elif [ -x /usr/sbin/nginx ]; then
        echo /usr/sbin/nginx
    else
        die "nginx is not installed (scripts/install-deps.sh --nginx installs it, or set NGINX)"
    fi
}

# Writes the configuration for PORT into DIRECTORY/nginx.conf.
write_config() {
    local directory="$1" port="$2" servers="" upstream user_line=""
    for upstream in ${ANCHORAGE_NGINX_UPSTREAMS}; do
        [[ "$upstream" =~ ^[A-Za-z0-9.:_-]+:[0-9]+$ ]] || die "not a HOST:PORT upstream: $upstream"
        servers+="        server $upstream max_fails=1 fail_timeout=1s;"$'\n'
    done
    [ "$(id -u)" -ne 0 ] || user_line="user nobody $(id -gn nobody 2>/dev/null || echo nogroup);"
    cat >"$directory/nginx.conf" <<EOF
$user_line
worker_processes 1;
daemon on;
pid $directory/nginx.pid;
error_log $directory/error.log warn;
events {
    worker_connections 1024;
}
http {
    log_format balancer '\$request_method \$uri \$status \$upstream_addr';
    access_log $directory/access.log balancer;
    client_body_temp_path $directory/temp/client;
    proxy_temp_path $directory/temp/proxy;
    fastcgi_temp_path $directory/temp/fastcgi;
    uwsgi_temp_path $directory/temp/uwsgi;
    scgi_temp_path $directory/temp/scgi;
    client_max_body_size 64m;
    upstream anchorage {
$servers    }
    server {
        listen 127.0.0.1:$port;
        location / {
            proxy_pass http://anchorage;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header Host \$host;
            proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for;
            proxy_next_upstream error timeout;
            proxy_connect_timeout 2s;
            proxy_read_timeout 120s;
        }
    }
}
EOF
}

start_nginx() {
    local directory="$1" owner="${2:-}" binary attempt port
    binary="$(find_nginx)"
    [ -n "${ANCHORAGE_NGINX_UPSTREAMS:-}" ] || die "ANCHORAGE_NGINX_UPSTREAMS names no server (HOST:PORT separated by spaces)"
    mkdir -p "$directory"
    [ -z "$(ls -A "$directory")" ] || die "$directory is not empty"
    mkdir -p "$directory/temp"
    if [ "$(id -u)" -eq 0 ]; then
        # The workers run as nobody and write request bodies under temp/.
        chown nobody "$directory/temp"
        chmod 755 "$directory"
    fi
    for attempt in $(seq 1 20); do
        port=$((20000 + RANDOM % 40000))
        write_config "$directory" "$port"
        if "$binary" -p "$directory" -c "$directory/nginx.conf" -e "$directory/error.log" >"$directory/start.log" 2>&1; then
            echo "$binary" >"$directory/binary"
            if [ -n "$owner" ]; then
                # Stops nginx once its owner has gone, even if the owner never calls --stop.
                nohup setsid bash -c '
                    while kill -0 "$1" 2>/dev/null && [ -f "$2/nginx.conf" ]; do sleep 1; done
                    [ -f "$2/nginx.conf" ] && exec "$0" --stop "$2"
                ' "$0" "$owner" "$directory" </dev/null >/dev/null 2>&1 &
            fi
            echo "$port"
            return 0
        fi
        # A port in use makes the start fail; any other failure shows in the log.
        grep -q -i "address already in use" "$directory/start.log" "$directory/error.log" 2>/dev/null || break
        rm -f "$directory/error.log"
    done
    cat "$directory/start.log" "$directory/error.log" >&2 2>/dev/null || true
    die "nginx did not start (log above)"
}

stop_nginx() {
    local directory="$1" pid attempt
    [ -d "$directory" ] || return 0
    if [ -f "$directory/nginx.pid" ]; then
        pid="$(cat "$directory/nginx.pid")"
        # TERM: a fast shutdown of the master and its workers.
        if kill -TERM "$pid" 2>/dev/null; then
            for attempt in $(seq 1 50); do
                kill -0 "$pid" 2>/dev/null || break
                sleep 0.1
            done
            kill -KILL "$pid" 2>/dev/null || true
        fi
    fi
    rm -rf "$directory"
}

case "${1:-}" in
    --start)
        [ $# -ge 2 ] && [ $# -le 3 ] || die "usage: $0 --start DIRECTORY [OWNER_PID]"
        start_nginx "$2" "${3:-}"
        ;;
    --stop)
        [ $# -eq 2 ] || die "usage: $0 --stop DIRECTORY"
        stop_nginx "$2"
        ;;
    "" | -h | --help)
        sed -n '2,/^[^#]/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'
        [ $# -ge 1 ] || exit 2
        ;;
    *)
        directory="$(mktemp -d "${TMPDIR:-/tmp}/anchorage-nginx.XXXXXX")"
        rmdir "$directory"
        trap 'stop_nginx "$directory"' EXIT
        trap 'exit 130' INT TERM
        port="$(start_nginx "$directory" | tail -n 1)"
        status=0
        ANCHORAGE_NGINX_HOST=127.0.0.1 ANCHORAGE_NGINX_PORT="$port" "$@" || status=$?
        exit "$status"
        ;;
esac
