#!/usr/bin/env bash
# The main job: a sync server and two devices on the embedded SQLite store, syncing over HTTP.
# Installs what it needs, builds `anchorage`, starts `anchorage serve` on a free loopback port,
# edits records on two devices (one speaking JSON, one MessagePack), syncs them, and shows that
# they converge — including a conflict decided by the newest edit and one the laptop keeps for
# its user, who answers "keep both" with `anchorage conflicts`; then the same two devices
# sync a contact over OTA (/ota, in XML and binary plists), both ways; last, the laptop watches
# the push stream (`anchorage sync --watch`) and gets the phone's edit without anyone running
# `sync` on it. Everything lives in a
# temporary folder that is removed at the end (set KEEP=1 to keep it).
# Usage: scripts/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh

echo "== building anchorage"
swift build --product anchorage 2>&1 | tail -1
anchorage="$(swift build --show-bin-path)/anchorage"

work="$(mktemp -d)"
server_pid=""
watch_pid=""
cleanup() {
    [ -n "$watch_pid" ] && kill "$watch_pid" 2>/dev/null && wait "$watch_pid" 2>/dev/null || true
    [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
    if [ "${KEEP:-0}" = 1 ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

step() { printf '\n== %s\n' "$*"; }

step "an account on the server"
echo "demo-password" | "$anchorage" users add ada --file "$work/users.txt"

step "the server (SQLite at $work/server.sqlite)"
"$anchorage" serve --port 0 --store "sqlite:$work/server.sqlite" --users "$work/users.txt" \
    >"$work/server.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 100); do
    grep -q "serving on" "$work/server.log" 2>/dev/null && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log"; exit 1; }
    sleep 0.1
done
url="$(grep -o 'http://[0-9.:]*' "$work/server.log" | head -1)"
cat "$work/server.log"

export ANCHORAGE_PASSWORD=demo-password
phone=(--store "sqlite:$work/phone.sqlite")
laptop=(--store "sqlite:$work/laptop.sqlite")
sync_phone() { "$anchorage" sync --server "$url" --user ada --codec json "${phone[@]}"; }
sync_laptop() { "$anchorage" sync --server "$url" --user ada --codec msgpack "${laptop[@]}"; }

step "the phone adds two contacts, the laptop one (zip stays the text 02134; born:int makes an integer)"
ada=$("$anchorage" records save Contact name=Ada "email=ada@example.com" born:int=1815 zip=02134 \
    'phones:json=[{"label":"home","value":"0123456789"}]' "${phone[@]}")
"$anchorage" records save Contact name=Alan "email=alan@example.com" "${phone[@]}" >/dev/null
"$anchorage" records save Contact name=Grace "email=grace@example.com" "${laptop[@]}" >/dev/null

step "both sync (phone in JSON, laptop in MessagePack)"
sync_phone
sync_laptop
sync_phone

step "the laptop now has"
"$anchorage" records list Contact "${laptop[@]}" | tee "$work/laptop-first.txt"
grep -q '"zip":"02134"' "$work/laptop-first.txt" || { echo "the zip code did not arrive as typed"; exit 1; }

step "both edit Ada's contact; the later edit (the laptop's) wins everywhere"
"$anchorage" records save Contact --gid "$ada" name=Ada "email=ada@lovelace.example" "${phone[@]}" >/dev/null
sleep 0.01
"$anchorage" records save Contact --gid "$ada" name="Ada Lovelace" "email=ada@lovelace.example" "${laptop[@]}" >/dev/null
sync_phone
sync_laptop
sync_phone

step "the phone deletes Alan"
alan=$("$anchorage" records list Contact "${phone[@]}" | grep Alan | sed 's/.*"gid":"\([^"]*\)".*/\1/')
"$anchorage" records delete Contact "$alan" "${phone[@]}"
sync_phone
sync_laptop

step "both edit Grace's contact; the laptop asks its user, who keeps both versions"
grace=$("$anchorage" records list Contact "${phone[@]}" | grep Grace | sed 's/.*"gid":"\([^"]*\)".*/\1/')
"$anchorage" records save Contact --gid "$grace" name=Grace "email=grace@navy.example" "${phone[@]}" >/dev/null
"$anchorage" records save Contact --gid "$grace" name=Grace "email=grace@hopper.example" "${laptop[@]}" >/dev/null
sync_phone
"$anchorage" sync --server "$url" --user ada --codec msgpack --priority ask "${laptop[@]}" | tee "$work/asked.txt"
grep -q "1 conflict waits for an answer" "$work/asked.txt" || { echo "the laptop did not keep the conflict for its user"; exit 1; }
"$anchorage" conflicts list "${laptop[@]}"
"$anchorage" conflicts resolve "$grace" --keep both "${laptop[@]}"
sync_laptop
sync_phone

step "phone and laptop agree"
"$anchorage" records list Contact "${phone[@]}" | sed 's/"dirty":[a-z]*,//' >"$work/phone.txt"
"$anchorage" records list Contact "${laptop[@]}" | sed 's/"dirty":[a-z]*,//' >"$work/laptop.txt"
cat "$work/phone.txt"
if diff -q "$work/phone.txt" "$work/laptop.txt" >/dev/null; then
    echo "converged: $(wc -l <"$work/phone.txt") contacts on both devices"
else
    echo "the devices differ:" && diff "$work/phone.txt" "$work/laptop.txt"
    exit 1
fi

step "OTA at /ota: the phone adds a contact and syncs in XML plists, the laptop in binary plists"
sync_ota_phone() { "$anchorage" sync --stack ota --server "$url" --user ada --codec xml-plist "${phone[@]}"; }
sync_ota_laptop() { "$anchorage" sync --stack ota --server "$url" --user ada --codec binary-plist "${laptop[@]}"; }
"$anchorage" records save --stack ota --user ada com.apple.contacts.Contact "first name=Ada" "last name=Lovelace" \
    "${phone[@]}" >/dev/null
sync_ota_phone
sync_ota_laptop
"$anchorage" records list --stack ota "${laptop[@]}"

step "the laptop edits it over OTA; the phone gets the edit"
luid=$("$anchorage" records list --stack ota "${laptop[@]}" | sed 's/.*"luid":"\([^"]*\)".*/\1/')
"$anchorage" records save --stack ota --luid "$luid" com.apple.contacts.Contact "first name=Ada" "last name=King" \
    "${laptop[@]}" >/dev/null
sync_ota_laptop
sync_ota_phone
"$anchorage" records list --stack ota "${phone[@]}" | tee "$work/ota-phone.txt"
grep -q '"last name":"King"' "$work/ota-phone.txt" || { echo "the phone did not get the laptop's OTA edit"; exit 1; }
echo "OTA: the contact and its edit reached both devices"

step "push: the laptop watches (anchorage sync --watch); the phone edits Ada and syncs"
"$anchorage" sync --watch --server "$url" --user ada --codec msgpack "${laptop[@]}" >"$work/watch.log" 2>&1 &
watch_pid=$!
wait_for_watch() {  # waits up to 10 s for a line matching $1 in the laptop's watch log
    for _ in $(seq 1 100); do
        grep -q "$1" "$work/watch.log" 2>/dev/null && return 0
        kill -0 "$watch_pid" 2>/dev/null || break
        sleep 0.1
    done
    cat "$work/watch.log"
    return 1
}
wait_for_watch "aquasync/Contact: synced" || { echo "the laptop did not connect to the push stream"; exit 1; }
"$anchorage" records save Contact --gid "$ada" name="Ada Lovelace" "email=ada@push.example" "${phone[@]}" >/dev/null
sync_phone
wait_for_watch "pulled 1" || { echo "the laptop was not notified of the phone's edit"; exit 1; }
cat "$work/watch.log"
"$anchorage" records list Contact "${laptop[@]}" | grep "ada@push.example"
echo "push: the phone's edit reached the watching laptop with no sync run on it"
