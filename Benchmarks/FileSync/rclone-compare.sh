#!/usr/bin/env bash
# Anchorage's `anchorage files sync` against `rclone sync` on the same Apache mod_dav (issue 49), and whether
# `rclone bisync` runs there at all.
#
# Usage: Benchmarks/FileSync/rclone-compare.sh [--files N] [--large M] [--folders F] [--runs R] [--anchorage PATH]
#                                        [--rclone-flag FLAG]... [--password-hash bcrypt|md5] [--markdown FILE] [--keep]
#   --files N         small files of 1-8 KiB in the tree (default 2000)
#   --large M         files of 5 MiB in the tree (default 20)
#   --folders F       folders the files are spread over (default 40)
#   --runs R          repetitions of every step, each on fresh server folders (default 3)
#   --anchorage PATH  the anchorage binary (default .build/release/anchorage, built when missing)
#   --rclone-flag F   one more argument for every rclone sync and bisync, repeatable (e.g. --webdav-pacer-min-sleep=0
#                     on an rclone that has it); shown in the table's header
#   --password-hash H how the server stores the password: md5 (apr1, the default: well under 1 ms of Apache's CPU
#                     per request) or bcrypt (2-3 ms per request, as Apache checks it on every request whichever
#                     client sends it)
#   --markdown FILE   also write the result (a Markdown table) to FILE
#   --keep            keep the work folder (trees, stores, logs) and print its path
#
# Installs rclone from the distribution when it is missing (apt-get, through sudo unless root), and Apache with
# scripts/install-deps.sh --apache. Generates a deterministic tree (make_tree.py, seed 49), starts a throwaway Apache
# with scripts/with-apache.sh (mod_dav_fs, FileETag Digest, 127.0.0.1) and times, on the wall clock, for each tool in
# its own server folder: (1) the first upload of the tree, (2) a sync with nothing changed, (3) a sync after 10
# edited files, (4) a second device's first download into an empty folder (rclone: `rclone sync` from the server
# into an empty folder). After every step the folder and the server's document root are compared (diff -r): a step
# that fails or leaves them different is reported and not timed. Then it runs `rclone bisync --resync` once and
# records its exit status and first error line. Prints a Markdown table (median and range of the runs) with the
# machine and versions. Exits 1 when a step failed.
#
# rclone's remote comes from the environment (RCLONE_CONFIG_BENCH_*: type webdav, vendor other, the password
# obscured with `rclone obscure`), with --transfers 4 (its default) and no --checksum; anchorage runs as
# `anchorage files sync DIR --server URL --user anchorage --store sqlite:PATH` with ANCHORAGE_PASSWORD.
set -euo pipefail
export LC_ALL=C
readonly caller="$PWD"
readonly script="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
cd "$(dirname "$script")/../.."
readonly here="Benchmarks/FileSync"
readonly dav_user="anchorage" dav_password="anchorage"

files=2000
large=20
folders=40
runs=3
anchorage=""
markdown=""
keep=0
rclone_flags=()
password_hash=md5

die() {
    echo "filesync: $*" >&2
    exit 1
}

usage() { sed -n '2,32p' "$script" | sed 's/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
    case "$1" in
        --files | --large | --folders | --runs | --anchorage | --markdown | --rclone-flag | --password-hash)
            [ $# -ge 2 ] || { echo "filesync: $1 needs a value" >&2; exit 64; }
            case "$1" in
                --files) files="$2" ;;
                --large) large="$2" ;;
                --folders) folders="$2" ;;
                --runs) runs="$2" ;;
                --rclone-flag) rclone_flags+=("$2") ;;
                --password-hash) password_hash="$2" ;;
                # Paths are the caller's: relative ones start from the folder the script was started in.
                --anchorage) anchorage="$2"; [[ "$2" = /* ]] || anchorage="$caller/$2" ;;
                --markdown) markdown="$2"; [[ "$2" = /* ]] || markdown="$caller/$2" ;;
            esac
            shift 2
            ;;
        --keep) keep=1; shift ;;
        -h | --help) usage; exit 0 ;;
        *) echo "filesync: unknown argument $1" >&2; usage >&2; exit 64 ;;
    esac
done
for value in "$files" "$large" "$folders" "$runs"; do
    [[ "$value" =~ ^[0-9]+$ ]] || { echo "filesync: $value is not a number" >&2; exit 64; }
done
[ "$runs" -ge 1 ] && [ "$folders" -ge 1 ] && [ $((files + large)) -ge 1 ] \
    || { echo "filesync: --runs and --folders must be at least 1, and the tree must hold a file" >&2; exit 64; }
[ "$password_hash" = md5 ] || [ "$password_hash" = bcrypt ] \
    || { echo "filesync: --password-hash must be md5 or bcrypt" >&2; exit 64; }
[ "$files" -ge 10 ] || { echo "filesync: --files must be at least 10 (step 3 edits 10 of them)" >&2; exit 64; }

# --- Tools ---------------------------------------------------------------------------------------------------------

# Installs Debian/Ubuntu packages as scripts/install-deps.sh does.
install_packages() {
    echo "installing system packages: $*" >&2
    local sudo_cmd=""
    [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "$@" >/dev/null
}

command -v python3 >/dev/null || install_packages python3
command -v curl >/dev/null || install_packages curl
command -v rclone >/dev/null || install_packages rclone
command -v rclone >/dev/null || die "rclone is still missing after apt-get install rclone"
if [ -z "${APACHE_BIN:-}" ] && [ ! -x /usr/sbin/apache2 ] && ! command -v httpd >/dev/null 2>&1; then
    scripts/install-deps.sh --apache
fi

if [ -z "$anchorage" ]; then
    anchorage=.build/release/anchorage
    if [ ! -x "$anchorage" ]; then
        echo "building anchorage (swift build -c release --product anchorage)" >&2
        swift build -c release --product anchorage >&2
    fi
fi
[ -x "$anchorage" ] || die "no anchorage at $anchorage (swift build -c release --product anchorage)"
anchorage="$(cd "$(dirname "$anchorage")" && pwd)/$(basename "$anchorage")"

# --- Work folder and server ------------------------------------------------------------------------------------------

work="$(mktemp -d "${TMPDIR:-/tmp}/anchorage-filesync.XXXXXX")"
# As root the server runs as www-data, which must reach its document root inside the work folder.
chmod 755 "$work"
cleanup() {
    scripts/with-apache.sh --stop "$work/apache" >/dev/null 2>&1 || true
    if [ "$keep" -eq 1 ]; then echo "filesync: the work folder is kept in $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

progress() { echo "filesync: $*" >&2; }

progress "generating the tree ($files small files, $large of 5 MiB, $folders folders)"
tree_summary="$(python3 "$here/make_tree.py" tree "$work/tree" --files "$files" --large "$large" --folders "$folders")"
tree_bytes="$(echo "$tree_summary" | awk '{ print $3 }')"

port="$(APACHE_PASSWORD_HASH="$password_hash" scripts/with-apache.sh --start "$work/apache" "$$" | tail -n 1)"
[[ "$port" =~ ^[0-9]+$ ]] || die "scripts/with-apache.sh --start did not print a port"
readonly url="http://127.0.0.1:$port/dav/"
readonly server_root="$work/apache/root"
progress "Apache with mod_dav on $url"

# rclone's remote "bench:", from the environment only (an empty config file, so no user's config is read).
export RCLONE_CONFIG="$work/rclone.conf"
: >"$RCLONE_CONFIG"
export RCLONE_CONFIG_BENCH_TYPE=webdav
export RCLONE_CONFIG_BENCH_URL="$url"
export RCLONE_CONFIG_BENCH_VENDOR=other
export RCLONE_CONFIG_BENCH_USER="$dav_user"
RCLONE_CONFIG_BENCH_PASS="$(rclone obscure "$dav_password")"
export RCLONE_CONFIG_BENCH_PASS

# Makes (or removes) the server folder NAME through WebDAV.
mkcol() { curl -sS -f -u "$dav_user:$dav_password" -X MKCOL "$url$1/" -o /dev/null; }
rmcol() { curl -sS -u "$dav_user:$dav_password" -X DELETE "$url$1/" -o /dev/null || true; }

# --- Steps -----------------------------------------------------------------------------------------------------------

results="$work/results.tsv"   # tool, step, run, seconds
failures="$work/failures.txt" # one line a failed step
: >"$results"
: >"$failures"

anchorage_sync() { # LOCAL SERVER_FOLDER STORE DEVICE
    ANCHORAGE_PASSWORD="$dav_password" "$anchorage" files sync "$1" --server "$url$2/" --user "$dav_user" \
        --store "sqlite:$3" --device "$4"
}

rclone_sync() { # SOURCE DESTINATION
    rclone sync "$1" "$2" --transfers 4 ${rclone_flags[@]+"${rclone_flags[@]}"}
}

# Runs COMMAND... with its output in LOG and sets `elapsed` (wall-clock seconds) and `status`.
timed() {
    local log="$1"
    shift
    local start end
    status=0
    start="$EPOCHREALTIME"
    "$@" >"$log" 2>&1 </dev/null || status=$?
    end="$EPOCHREALTIME"
    elapsed="$(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.3f", e - s }')"
}

# Records the step TOOL STEP RUN just timed: its time when COMMAND succeeded and LOCAL and the server folder hold
# the same files, a failure otherwise (returns 1).
record() { # TOOL STEP RUN LOG LOCAL SERVER_FOLDER
    local tool="$1" step="$2" run="$3" log="$4" local_dir="$5" server_dir="$server_root/$6" why=""
    if [ "$status" -ne 0 ]; then
        why="exit $status"
        local last
        last="$(grep -v '^[[:space:]]*$' "$log" | tail -n 1 || true)"
        [ -z "$last" ] || why="$why: $last"
    elif ! diff -r -q -x .DAV "$local_dir" "$server_dir" >"$log.diff" 2>&1; then
        why="the folder and the server differ after the sync ($(wc -l <"$log.diff") differences, e.g. $(head -n 1 "$log.diff"))"
    fi
    if [ -n "$why" ]; then
        progress "run $run, $tool, $step: FAILED, $why"
        printf '%s, %s, run %s: %s\n' "$tool" "$step" "$run" "$why" >>"$failures"
        return 1
    fi
    progress "run $run, $tool, $step: $elapsed s"
    printf '%s\t%s\t%s\t%s\n' "$tool" "$step" "$run" "$elapsed" >>"$results"
}

run_anchorage() { # RUN
    local run="$1" dir="$work/run$1/anchorage" folder="run$1-anchorage"
    mkdir -p "$dir"
    cp -a "$work/tree" "$dir/local"
    mkcol "$folder"
    timed "$dir/1-upload.log" anchorage_sync "$dir/local" "$folder" "$dir/device1.sqlite" bench1
    record anchorage upload "$run" "$dir/1-upload.log" "$dir/local" "$folder" || return 0
    timed "$dir/2-unchanged.log" anchorage_sync "$dir/local" "$folder" "$dir/device1.sqlite" bench1
    record anchorage unchanged "$run" "$dir/2-unchanged.log" "$dir/local" "$folder" || return 0
    python3 "$here/make_tree.py" edit "$dir/local" --count 10 >"$dir/edited.txt"
    timed "$dir/3-edited.log" anchorage_sync "$dir/local" "$folder" "$dir/device1.sqlite" bench1
    record anchorage edited "$run" "$dir/3-edited.log" "$dir/local" "$folder" || return 0
    mkdir "$dir/device2"
    timed "$dir/4-download.log" anchorage_sync "$dir/device2" "$folder" "$dir/device2.sqlite" bench2
    record anchorage download "$run" "$dir/4-download.log" "$dir/device2" "$folder" || return 0
}

run_rclone() { # RUN
    local run="$1" dir="$work/run$1/rclone" folder="run$1-rclone"
    mkdir -p "$dir"
    cp -a "$work/tree" "$dir/local"
    mkcol "$folder"
    timed "$dir/1-upload.log" rclone_sync "$dir/local" "bench:$folder"
    record rclone upload "$run" "$dir/1-upload.log" "$dir/local" "$folder" || return 0
    timed "$dir/2-unchanged.log" rclone_sync "$dir/local" "bench:$folder"
    record rclone unchanged "$run" "$dir/2-unchanged.log" "$dir/local" "$folder" || return 0
    python3 "$here/make_tree.py" edit "$dir/local" --count 10 >"$dir/edited.txt"
    timed "$dir/3-edited.log" rclone_sync "$dir/local" "bench:$folder"
    record rclone edited "$run" "$dir/3-edited.log" "$dir/local" "$folder" || return 0
    mkdir "$dir/device2"
    timed "$dir/4-download.log" rclone_sync "bench:$folder" "$dir/device2"
    record rclone download "$run" "$dir/4-download.log" "$dir/device2" "$folder" || return 0
}

load_at_start="$(cut -d' ' -f1-3 /proc/loadavg)"
for run in $(seq 1 "$runs"); do
    # Odd runs start with Anchorage, even runs with rclone, so that neither always meets a warmer cache.
    if [ $((run % 2)) -eq 1 ]; then order=(anchorage rclone); else order=(rclone anchorage); fi
    for tool in "${order[@]}"; do "run_$tool" "$run"; done
    if [ "$keep" -eq 0 ]; then
        rm -rf "$work/run$run"
        rmcol "run$run-anchorage"
        rmcol "run$run-rclone"
    fi
done

# Step 5: whether rclone bisync runs on plain WebDAV. Its first run must be --resync.
progress "rclone bisync --resync"
bisync_dir="$work/bisync"
mkdir -p "$bisync_dir/workdir"
cp -a "$work/tree" "$bisync_dir/local"
mkcol bisync
timed "$bisync_dir/resync.log" rclone bisync "$bisync_dir/local" bench:bisync --resync --transfers 4 \
    --workdir "$bisync_dir/workdir" ${rclone_flags[@]+"${rclone_flags[@]}"}
bisync_status="$status"
bisync_elapsed="$elapsed"
bisync_error="$(grep -m 1 -E 'ERROR|Failed|[Ee]rror' "$bisync_dir/resync.log" || true)"
bisync_next_status=""
bisync_next_elapsed=""
if [ "$bisync_status" -eq 0 ]; then
    progress "rclone bisync (a second run, nothing changed)"
    timed "$bisync_dir/next.log" rclone bisync "$bisync_dir/local" bench:bisync --transfers 4 \
        --workdir "$bisync_dir/workdir" ${rclone_flags[@]+"${rclone_flags[@]}"}
    bisync_next_status="$status"
    bisync_next_elapsed="$elapsed"
    [ -n "$bisync_error" ] || bisync_error="$(grep -m 1 -E 'ERROR|Failed|[Ee]rror' "$bisync_dir/next.log" || true)"
fi
progress "rclone bisync: exit $bisync_status${bisync_error:+, $bisync_error}"

# --- Report ----------------------------------------------------------------------------------------------------------

cpu_model="$(grep -m 1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//' || true)"
ram="$(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
apache_version="$("$(cat "$work/apache/binary")" -v | sed -n 's/^Server version: *//p')"
rclone_version="$(rclone version | sed -n 1p)"
anchorage_version="$("$anchorage" --version 2>/dev/null | sed -n 1p || true)"
commit="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
if [ -n "$(git --no-optional-locks status --porcelain -- Sources Package.swift 2>/dev/null)" ]; then
    commit="$commit, Sources changed in the working tree"
fi
built="$(date -u -r "$anchorage" '+%Y-%m-%d %H:%M UTC')"

report="$(
    FILES="$files" LARGE="$large" FOLDERS="$folders" RUNS="$runs" TREE_BYTES="$tree_bytes" \
    DATE="$(date -u '+%Y-%m-%d %H:%M UTC')" NPROC="$(nproc)" CPU="$cpu_model" RAM="$ram" KERNEL="$(uname -sr)" \
    LOAD="$load_at_start" PASSWORD_HASH="$password_hash" APACHE="$apache_version" RCLONE="$rclone_version" RCLONE_FLAGS="${rclone_flags[*]-}" \
    ANCHORAGE="$anchorage (${anchorage_version:-version unknown}, checkout $commit; binary built $built)" \
    BISYNC_STATUS="$bisync_status" BISYNC_ELAPSED="$bisync_elapsed" BISYNC_ERROR="$bisync_error" \
    BISYNC_NEXT_STATUS="$bisync_next_status" BISYNC_NEXT_ELAPSED="$bisync_next_elapsed" \
    python3 - "$results" "$failures" <<'PY'
import os, statistics, sys

env = os.environ
times = {}
for line in open(sys.argv[1]):
    tool, step, _, seconds = line.rstrip("\n").split("\t")
    times.setdefault((tool, step), []).append(float(seconds))
failures = [line.rstrip("\n") for line in open(sys.argv[2]) if line.strip()]
runs = int(env["RUNS"])

def cell(tool, step):
    values = times.get((tool, step), [])
    if not values:
        return "failed"
    text = f"{statistics.median(values):.2f}"
    if len(values) > 1:
        text += f" ({min(values):.2f}–{max(values):.2f})"
    if len(values) < runs:
        text += f" [{runs - len(values)} of {runs} failed]"
    return text

def ratio(step):
    a, r = times.get(("anchorage", step)), times.get(("rclone", step))
    if not a or not r:
        return "—"
    return f"{statistics.median(r) / statistics.median(a):.2f}"

files, large, folders = int(env["FILES"]), int(env["LARGE"]), int(env["FOLDERS"])
size = int(env["TREE_BYTES"])
rows = [
    ("upload", "1. first upload of the tree"),
    ("unchanged", "2. sync, nothing changed"),
    ("edited", "3. sync after 10 edited files"),
    ("download", "4. second device's first download (rclone: `rclone sync` server → empty folder)"),
]
out = []
out.append("### File sync: Anchorage vs rclone on Apache mod_dav")
out.append("")
out.append(f"- Date: {env['DATE']}")
out.append(f"- Machine: {env['NPROC']} CPUs ({env['CPU']}), {env['RAM']} RAM, {env['KERNEL']}; load average at start {env['LOAD']}")
hash_name = {"md5": "apr1-MD5 (`htpasswd -m`)", "bcrypt": "bcrypt (`htpasswd -B`)"}[env["PASSWORD_HASH"]]
out.append(f"- Server: {env['APACHE']}, mod_dav_fs, `FileETag Digest`, password stored as {hash_name}, on 127.0.0.1 (scripts/with-apache.sh)")
flags = f", `{env['RCLONE_FLAGS']}`" if env["RCLONE_FLAGS"] else ""
out.append(f"- rclone: {env['RCLONE']}, WebDAV remote with vendor `other`, `--transfers 4`{flags}, no `--checksum`")
out.append(f"- Anchorage: {env['ANCHORAGE']}, `anchorage files sync`, SQLite store")
out.append(f"- Tree: {files + large:,} files ({files:,} of 1–8 KiB, {large} of 5 MiB) in {folders} folders, "
           f"{size / 1e6:.1f} MB; {runs} run{'s' if runs != 1 else ''} of every step, fresh server folders each run")
out.append("")
out.append("Wall-clock seconds, median (min–max) of the runs; the last column above 1 means Anchorage is faster.")
out.append("")
out.append("| step | Anchorage | rclone | rclone ÷ Anchorage |")
out.append("|---|---|---|---|")
for step, label in rows:
    out.append(f"| {label} | {cell('anchorage', step)} | {cell('rclone', step)} | {ratio(step)} |")
out.append("")
status = int(env["BISYNC_STATUS"])
error = env["BISYNC_ERROR"].strip()
line = f"5. `rclone bisync --resync` (its required first run), on a copy of the tree: exit status {status}"
if status == 0:
    line += f", {float(env['BISYNC_ELAPSED']):.2f} s"
    if env["BISYNC_NEXT_STATUS"]:
        line += (f"; a second `rclone bisync`, nothing changed: exit status {env['BISYNC_NEXT_STATUS']}, "
                 f"{float(env['BISYNC_NEXT_ELAPSED']):.2f} s")
if error:
    line += f"; first error line: `{error}`"
out.append(line + ".")
if failures:
    out.append("")
    out.append("Failed steps (not timed):")
    out.append("")
    out.extend(f"- {failure}" for failure in failures)
print("\n".join(out))
PY
)"

echo "$report"
[ -z "$markdown" ] || echo "$report" >"$markdown"
[ ! -s "$failures" ] || exit 1
