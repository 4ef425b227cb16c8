#!/usr/bin/env bash
# Runs a throwaway Dovecot 2.3 IMAP server, the mail server of Anchorage's mail tests, with the push hook.
#
# Usage:
#   scripts/with-dovecot.sh COMMAND [ARGUMENT...]
#       Starts a server, runs COMMAND with the server's address in the environment, stops the server and removes
#       its files, and exits with COMMAND's status. Example: scripts/with-dovecot.sh swift test --filter SyncMailTests
#   scripts/with-dovecot.sh --start DIRECTORY [OWNER_PID]
#       Starts a server whose files live in DIRECTORY (made if missing, must be empty) and prints its port on the
#       last line of standard output. With OWNER_PID, the server stops by itself once that process has ended.
#   scripts/with-dovecot.sh --stop DIRECTORY
#       Stops the server started in DIRECTORY and removes DIRECTORY.
#   scripts/with-dovecot.sh --add-user DIRECTORY NAME PASSWORD [PUSH_URL PUSH_USER PUSH_PASSWORD]
#       Adds an IMAP user, who can log in at once. With PUSH_URL, the push hook
#       posts that user's changes to PUSH_URL (the push server's /push/mail) with HTTP Basic PUSH_USER:PUSH_PASSWORD.
#
# The server listens on 127.0.0.1 only, on a free port chosen at random, IMAP with STARTTLS (a self-signed
# certificate for 127.0.0.1 and localhost, DIRECTORY/tls/cert.pem) and, on loopback, LOGIN and AUTHENTICATE PLAIN
# without it too. It has one user at the start, `anchorage` with the password `anchorage`. Mail lives in
# DIRECTORY/home/USER/Maildir, the configuration is DIRECTORY/dovecot.conf, each user in a file of its own,
# DIRECTORY/users.d/NAME (one line "NAME:{PLAIN}PASSWORD::::::EXTRA", where EXTRA may set userdb_push_lua_url,
# _user and _password: one file a user, because Dovecot looks at a users file at most once a second, so a user
# added to a shared file can be refused for up to a second while other logins go on), the
# log DIRECTORY/dovecot.log. Every process runs as one unprivileged user: as root, `nobody` (the files are
# given to it); otherwise the caller. The push hook is scripts/dovecot/anchorage-push.lua, copied into DIRECTORY.
# The server is found as DOVECOT_BIN, else /usr/sbin/dovecot (scripts/install-deps.sh --dovecot installs it, as
# this script does when it is missing and it runs as root).
#
# COMMAND sees ANCHORAGE_IMAP_HOST (127.0.0.1), ANCHORAGE_IMAP_PORT, ANCHORAGE_IMAP_USER,
# ANCHORAGE_IMAP_PASSWORD and ANCHORAGE_DOVECOT_DIR (DIRECTORY, for --add-user).
set -euo pipefail

readonly imap_user="anchorage"
readonly imap_password="anchorage"
readonly script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

die() {
    echo "with-dovecot: $*" >&2
    exit 1
}

find_binary() {
    if [ -n "${DOVECOT_BIN:-}" ] && [ -x "$DOVECOT_BIN" ]; then echo "$DOVECOT_BIN"; return; fi
    if [ ! -x /usr/sbin/dovecot ] && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "with-dovecot: installing dovecot-imapd" >&2
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q dovecot-imapd >&2 \
            || die "could not install dovecot-imapd (scripts/install-deps.sh --dovecot)"
        # The package starts a system-wide server on ports 143/993 where it can; these tests never use it.
        command -v systemctl >/dev/null 2>&1 && systemctl disable --now dovecot >/dev/null 2>&1 || true
    fi
    if [ -x /usr/sbin/dovecot ]; then echo /usr/sbin/dovecot; return; fi
    die "no Dovecot found (install dovecot-imapd: scripts/install-deps.sh --dovecot, or set DOVECOT_BIN)"
}

# The user every server process runs as, and its group.
run_user() { if [ "$(id -u)" -eq 0 ]; then echo nobody; else id -un; fi; }
run_group() { if [ "$(id -u)" -eq 0 ]; then id -gn nobody; else id -gn; fi; }

# Runs a command as the server's user.
as_run_user() {
    if [ "$(id -u)" -eq 0 ]; then
        setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"
    else
        "$@"
    fi
}

write_config() {
    local directory="$1" port="$2" user group
    user="$(run_user)"
    group="$(run_group)"
    cat >"$directory/dovecot.conf" <<CONF
# Dovecot 2.3 syntax (Debian 12). Written by scripts/with-dovecot.sh.
protocols = imap
listen = 127.0.0.1
base_dir = $directory/run
state_dir = $directory/state
instance_name = anchorage-$port
log_path = $directory/dovecot.log
ssl = yes
ssl_cert = <$directory/tls/cert.pem
ssl_key = <$directory/tls/key.pem
$( [ -f /usr/share/dovecot/dh.pem ] && echo "ssl_dh = </usr/share/dovecot/dh.pem" )
disable_plaintext_auth = no
auth_mechanisms = plain login
default_internal_user = $user
default_internal_group = $group
default_login_user = $user
first_valid_uid = $(id -u "$user")
first_valid_gid = $(id -g "$user")

passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%n $directory/users.d/%n
}
userdb {
  driver = passwd-file
  args = username_format=%n $directory/users.d/%n
  default_fields = uid=$user gid=$group home=$directory/home/%n
}
mail_location = maildir:~/Maildir
mail_fsync = never

service imap-login {
  chroot =
  inet_listener imap {
    address = 127.0.0.1
    port = $port
  }
  inet_listener imaps {
    port = 0
  }
}
service anvil {
  chroot =
}
service stats {
  unix_listener stats-reader {
    user = $user
  }
  unix_listener stats-writer {
    user = $user
  }
}

mail_attribute_dict = file:%h/dovecot-attributes
protocol imap {
  imap_metadata = yes
  mail_max_userip_connections = 200
}

mail_plugins = \$mail_plugins mail_lua notify push_notification push_notification_lua
plugin {
  push_notification_driver = lua:file=$directory/anchorage-push.lua
}
CONF
}

add_user() {
    local directory="$1" name="$2" password="$3" url="${4:-}" push_user="${5:-}" push_password="${6:-}"
    [ -d "$directory/users.d" ] || die "$directory has no server (no users.d folder)"
    case "$name$password$push_user$push_password" in *[:\ ]*) die "user names and passwords must have no ':' or space";; esac
    case "$name" in ""|.*|*/*) die "a user name must not be empty, start with '.' or have a '/'";; esac
    case "$url" in *\ *) die "the push address must have no space";; esac
    local extra=""
    [ -z "$url" ] || extra="userdb_push_lua_url=$url userdb_push_lua_user=$push_user userdb_push_lua_password=$push_password"
    # Written whole, then renamed into place: the server never reads half a line.
    echo "$name:{PLAIN}$password::::::$extra" >"$directory/users.d/.$name.new"
    chmod 644 "$directory/users.d/.$name.new"
    mv "$directory/users.d/.$name.new" "$directory/users.d/$name"
}

start_server() {
    local directory="$1" owner="${2:-}"
    local binary
    binary="$(find_binary)"
    mkdir -p "$directory"
    [ -z "$(ls -A "$directory")" ] || die "$directory is not empty"
    mkdir -p "$directory/run" "$directory/state" "$directory/home"
    cp "$script_dir/dovecot/anchorage-push.lua" "$directory/anchorage-push.lua"
    # A self-signed certificate for STARTTLS, for 127.0.0.1 and localhost.
    mkdir -p "$directory/tls"
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 30 -subj /CN=localhost \
        -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" -addext "basicConstraints=critical,CA:TRUE" \
        -keyout "$directory/tls/key.pem" -out "$directory/tls/cert.pem" >/dev/null 2>&1 \
        || die "openssl could not make the server's certificate"
    mkdir -p "$directory/users.d"
    echo "$imap_user:{PLAIN}$imap_password::::::" >"$directory/users.d/$imap_user"
    : >"$directory/dovecot.log"
    chmod 755 "$directory"
    chmod 755 "$directory/users.d"
    chmod 644 "$directory/users.d/$imap_user" "$directory/anchorage-push.lua"
    if [ "$(id -u)" -eq 0 ]; then
        chown -R nobody:"$(id -gn nobody)" "$directory"
    fi
    echo "$binary" >"$directory/binary"

    local attempt port
    for attempt in $(seq 1 20); do
        port=$((20000 + RANDOM % 40000))
        write_config "$directory" "$port"
        [ "$(id -u)" -ne 0 ] || chown nobody "$directory/dovecot.conf"
        : >"$directory/dovecot.log"
        if as_run_user "$binary" -c "$directory/dovecot.conf" >"$directory/start.log" 2>&1; then
            # The master forks: wait for the greeting on the port (or for it to say why it cannot listen).
            local tries
            for tries in $(seq 1 200); do
                if (exec 3<>"/dev/tcp/127.0.0.1/$port" && head -c 4 <&3 | grep -q '^\* OK') 2>/dev/null; then
                    if [ -n "$owner" ]; then
                        # Stops the server once its owner has gone, even if the owner never calls --stop.
                        nohup setsid bash -c '
                            while kill -0 "$1" 2>/dev/null && [ -f "$2/dovecot.conf" ]; do sleep 1; done
                            [ -f "$2/dovecot.conf" ] && exec "$0" --stop "$2"
                        ' "$0" "$owner" "$directory" </dev/null >/dev/null 2>&1 &
                    fi
                    echo "$port"
                    return 0
                fi
                grep -q -i "address already in use" "$directory/dovecot.log" "$directory/start.log" 2>/dev/null && break
                [ -f "$directory/run/master.pid" ] || [ "$tries" -lt 40 ] || break
                sleep 0.05
            done
        fi
        stop_process "$directory"
        grep -q -i "address already in use" "$directory/dovecot.log" "$directory/start.log" 2>/dev/null || break
    done
    cat "$directory/start.log" "$directory/dovecot.log" >&2 2>/dev/null || true
    die "the server did not start (log above)"
}

stop_process() {
    local directory="$1" pid
    [ -f "$directory/run/master.pid" ] || return 0
    pid="$(cat "$directory/run/master.pid" 2>/dev/null || true)"
    [ -n "$pid" ] || return 0
    kill -TERM "$pid" 2>/dev/null || return 0
    local tries
    for tries in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || return 0
        sleep 0.05
    done
    kill -KILL "$pid" 2>/dev/null || true
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
    --add-user)
        [ $# -eq 4 ] || [ $# -eq 7 ] || die "usage: $0 --add-user DIRECTORY NAME PASSWORD [PUSH_URL PUSH_USER PUSH_PASSWORD]"
        shift
        add_user "$@"
        ;;
    "" | -h | --help)
        sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//'
        [ $# -ge 1 ] || exit 2
        ;;
    *)
        directory="$(mktemp -d "${TMPDIR:-/tmp}/anchorage-dovecot.XXXXXX")"
        trap 'stop_server "$directory"' EXIT
        trap 'exit 130' INT TERM
        port="$(start_server "$directory" | tail -n 1)"
        status=0
        ANCHORAGE_IMAP_HOST=127.0.0.1 ANCHORAGE_IMAP_PORT="$port" ANCHORAGE_IMAP_USER="$imap_user" \
            ANCHORAGE_IMAP_PASSWORD="$imap_password" ANCHORAGE_DOVECOT_DIR="$directory" \
            "$@" || status=$?
        exit "$status"
        ;;
esac
