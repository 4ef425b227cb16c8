#!/usr/bin/env bash
# Runs a throwaway PostgreSQL server for Anchorage's tests.
#
# Usage:
#   scripts/with-postgres.sh COMMAND [ARGUMENT...]
#       Starts a server, runs COMMAND with the server's address in the environment, stops the server and removes
#       its files, and exits with COMMAND's status. Example: scripts/with-postgres.sh swift test --filter SyncPostgresTests
#   scripts/with-postgres.sh --replica COMMAND [ARGUMENT...]
#       As the first form, with a hot standby of the server beside it: COMMAND also sees
#       ANCHORAGE_POSTGRES_REPLICA_PORT. The primary runs with synchronous_commit on, so its commits reach the
#       standby at once (off, they would wait for PostgreSQL's WAL writer, up to 200 ms).
#   scripts/with-postgres.sh --start DIRECTORY [OWNER_PID]
#       Starts a server whose files live in DIRECTORY (made if missing, must be empty) and prints its port on the
#       last line of standard output. With OWNER_PID, the server stops by itself once that process has ended.
#   scripts/with-postgres.sh --start-replica DIRECTORY PRIMARY_PORT [OWNER_PID]
#       Starts a hot standby of the server on 127.0.0.1:PRIMARY_PORT (streaming replication; copied with
#       pg_basebackup -R), its files in DIRECTORY as for --start, and prints its port on the last line.
#   scripts/with-postgres.sh --crash DIRECTORY
#       Stops the server started in DIRECTORY at once, as a crash would (pg_ctl stop -m immediate), and keeps
#       DIRECTORY for --stop: for tests of a server that goes away.
#   scripts/with-postgres.sh --stop DIRECTORY
#       Stops the server started in DIRECTORY and removes DIRECTORY.
#
# The server listens on 127.0.0.1 only, on a free port chosen at random, with trust authentication for the
# superuser `anchorage`, replication connections included; its data lives in a temporary directory. initdb
# refuses to run as root, so as root the server runs as the `postgres` user. The binaries come from PG_BINDIR,
# else pg_config, else the newest /usr/lib/postgresql/*/bin, else PATH.
#
# COMMAND sees ANCHORAGE_POSTGRES_HOST, ANCHORAGE_POSTGRES_PORT, ANCHORAGE_POSTGRES_USER and
# ANCHORAGE_POSTGRES_DATABASE. The server is tuned for tests (fsync off): never keep data in it.
set -euo pipefail

readonly server_user_name="anchorage"
readonly service_user="postgres"

die() {
    echo "with-postgres: $*" >&2
    exit 1
}

find_bindir() {
    if [ -n "${PG_BINDIR:-}" ] && [ -x "$PG_BINDIR/initdb" ]; then
        echo "$PG_BINDIR"
        return
    fi
    if command -v pg_config >/dev/null 2>&1; then
        local dir
        dir="$(pg_config --bindir 2>/dev/null || true)"
        if [ -n "$dir" ] && [ -x "$dir/initdb" ]; then
            echo "$dir"
            return
        fi
    fi
    local newest=""
    for dir in /usr/lib/postgresql/*/bin; do
        [ -x "$dir/initdb" ] && newest="$dir"
    done
    if [ -z "$newest" ]; then
        newest="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
    fi
    if [ -n "$newest" ] && [ -x "$newest/initdb" ]; then
        echo "$newest"
        return
    fi
    if command -v initdb >/dev/null 2>&1; then
        dirname "$(command -v initdb)"
        return
    fi
    die "no PostgreSQL server binaries found (install the postgresql package, or set PG_BINDIR)"
}

# Runs a command as the user that owns the server's files.
as_server_user() {
    if [ "$(id -u)" -ne 0 ]; then
        "$@"
    elif command -v runuser >/dev/null 2>&1; then
        runuser -u "$service_user" -- "$@"
    else
        su "$service_user" -s /bin/sh -c "$(printf '%q ' "$@")"
    fi
}

# Makes DIRECTORY, which must be empty, and gives it to the user that runs the server.
make_server_directory() {
    local directory="$1"
    mkdir -p "$directory"
    [ -z "$(ls -A "$directory")" ] || die "$directory is not empty"
    if [ "$(id -u)" -eq 0 ]; then
        id "$service_user" >/dev/null 2>&1 || die "running as root, but there is no '$service_user' user to run the server"
        chown "$service_user" "$directory"
        chmod 700 "$directory"
    fi
}

# Starts the server of DIRECTORY/data on a free port with the settings OPTIONS, and prints the port. With
# OWNER, the server stops by itself once that process has ended.
start_postmaster() {
    local directory="$1" bindir="$2" owner="$3" options="$4"
    local data="$directory/data" log="$directory/server.log"
    local attempt port
    for attempt in $(seq 1 20); do
        port=$((20000 + RANDOM % 40000))
        if as_server_user "$bindir/pg_ctl" --pgdata="$data" --log="$log" --wait --timeout=30 \
            -o "-p $port -k $directory -c listen_addresses=127.0.0.1 $options" \
            start >/dev/null 2>&1; then
            echo "$bindir" >"$directory/bindir"
            if [ -n "$owner" ]; then
                # Stops the server once its owner has gone, even if the owner never calls --stop.
                nohup setsid bash -c '
                    while kill -0 "$1" 2>/dev/null && [ -d "$2/data" ]; do sleep 1; done
                    [ -d "$2/data" ] && exec "$0" --stop "$2"
                ' "$0" "$owner" "$directory" </dev/null >/dev/null 2>&1 &
            fi
            echo "$port"
            return 0
        fi
        # A port in use makes the start fail; any other failure shows in the log.
        grep -q -i "could not bind\|could not create listen socket\|address already in use" "$log" 2>/dev/null || break
    done
    cat "$log" >&2 2>/dev/null || true
    die "the server did not start (log above)"
}

start_server() {
    local directory="$1" owner="${2:-}" synchronous_commit="${3:-off}"
    local bindir
    bindir="$(find_bindir)"
    make_server_directory "$directory"
    local data="$directory/data"
    as_server_user "$bindir/initdb" --pgdata="$data" --username="$server_user_name" --auth=trust \
        --encoding=UTF8 --locale=C --no-sync >"$directory/initdb.log" 2>&1 \
        || { cat "$directory/initdb.log" >&2; die "initdb failed"; }
    # Standbys copy the server over a replication connection (initdb's file has this line; older ones may not).
    grep -q "^host[[:space:]]\+replication[[:space:]]\+all[[:space:]]\+127.0.0.1/32" "$data/pg_hba.conf" \
        || echo "host replication all 127.0.0.1/32 trust" | as_server_user tee -a "$data/pg_hba.conf" >/dev/null
    start_postmaster "$directory" "$bindir" "$owner" \
        "-c max_connections=300 -c fsync=off -c synchronous_commit=$synchronous_commit -c full_page_writes=off -c wal_level=replica -c max_wal_senders=10 -c wal_keep_size=128MB"
}

start_replica() {
    local directory="$1" primary_port="$2" owner="${3:-}"
    local bindir
    bindir="$(find_bindir)"
    make_server_directory "$directory"
    local data="$directory/data"
    # A standby needs at least the primary's max_connections.
    local connections
    connections="$(as_server_user "$bindir/psql" -X -A -t -h 127.0.0.1 -p "$primary_port" -U "$server_user_name" \
        -d postgres -c "SHOW max_connections" 2>"$directory/basebackup.log")" \
        || { cat "$directory/basebackup.log" >&2; die "cannot reach the primary on 127.0.0.1:$primary_port"; }
    # -R writes standby.signal and primary_conninfo: the copy starts as a standby that streams from the primary.
    # Another copy's checkpoint may remove the WAL this copy starts from before its stream asks for it (the
    # primary keeps wal_keep_size of it, but one not started here may not): then it is tried again.
    local attempt
    for attempt in 1 2 3; do
        if as_server_user "$bindir/pg_basebackup" --pgdata="$data" --host=127.0.0.1 --port="$primary_port" \
            --username="$server_user_name" --write-recovery-conf --wal-method=stream --checkpoint=fast --no-sync \
            >"$directory/basebackup.log" 2>&1; then
            break
        fi
        grep -q "has already been removed" "$directory/basebackup.log" && [ "$attempt" -lt 3 ] \
            || { cat "$directory/basebackup.log" >&2; die "pg_basebackup from 127.0.0.1:$primary_port failed"; }
    done
    start_postmaster "$directory" "$bindir" "$owner" \
        "-c hot_standby=on -c max_connections=$connections -c fsync=off -c full_page_writes=off"
}

crash_server() {
    local directory="$1"
    [ -d "$directory/data" ] && [ -f "$directory/bindir" ] || die "no server was started in $directory"
    as_server_user "$(cat "$directory/bindir")/pg_ctl" --pgdata="$directory/data" --mode=immediate --wait stop \
        >/dev/null 2>&1 || die "the server in $directory did not stop"
}

stop_server() {
    local directory="$1"
    [ -d "$directory" ] || return 0
    if [ -d "$directory/data" ] && [ -f "$directory/bindir" ]; then
        as_server_user "$(cat "$directory/bindir")/pg_ctl" --pgdata="$directory/data" --mode=fast --wait stop \
            >/dev/null 2>&1 || true
    fi
    rm -rf "$directory"
}

case "${1:-}" in
    --start)
        [ $# -ge 2 ] || die "usage: $0 --start DIRECTORY [OWNER_PID]"
        start_server "$2" "${3:-}"
        ;;
    --start-replica)
        [ $# -ge 3 ] || die "usage: $0 --start-replica DIRECTORY PRIMARY_PORT [OWNER_PID]"
        start_replica "$2" "$3" "${4:-}"
        ;;
    --crash)
        [ $# -eq 2 ] || die "usage: $0 --crash DIRECTORY"
        crash_server "$2"
        ;;
    --stop)
        [ $# -eq 2 ] || die "usage: $0 --stop DIRECTORY"
        stop_server "$2"
        ;;
    "" | -h | --help)
        sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'
        [ $# -ge 1 ] || exit 2
        ;;
    --replica)
        shift
        [ $# -ge 1 ] || die "usage: $0 --replica COMMAND [ARGUMENT...]"
        directory="$(mktemp -d "${TMPDIR:-/tmp}/anchorage-postgres.XXXXXX")"
        replica_directory="$(mktemp -d "${TMPDIR:-/tmp}/anchorage-postgres-replica.XXXXXX")"
        trap 'stop_server "$replica_directory"; stop_server "$directory"' EXIT
        trap 'exit 130' INT TERM
        port="$(start_server "$directory" "" on | tail -n 1)"
        replica_port="$(start_replica "$replica_directory" "$port" | tail -n 1)"
        status=0
        ANCHORAGE_POSTGRES_HOST=127.0.0.1 ANCHORAGE_POSTGRES_PORT="$port" ANCHORAGE_POSTGRES_REPLICA_PORT="$replica_port" \
            ANCHORAGE_POSTGRES_USER="$server_user_name" ANCHORAGE_POSTGRES_DATABASE=postgres \
            "$@" || status=$?
        exit "$status"
        ;;
    *)
        directory="$(mktemp -d "${TMPDIR:-/tmp}/anchorage-postgres.XXXXXX")"
        trap 'stop_server "$directory"' EXIT
        trap 'exit 130' INT TERM
        port="$(start_server "$directory" | tail -n 1)"
        status=0
        ANCHORAGE_POSTGRES_HOST=127.0.0.1 ANCHORAGE_POSTGRES_PORT="$port" \
            ANCHORAGE_POSTGRES_USER="$server_user_name" ANCHORAGE_POSTGRES_DATABASE=postgres \
            "$@" || status=$?
        exit "$status"
        ;;
esac
