#!/usr/bin/env bash
# scripts/demo.sh — builds aspects (release) and injects faults into real, unmodified programs.
set -euo pipefail
cd "$(dirname "$0")/.."

swift build -c release
CTL=$PWD/.build/release/aspectctl
LIB=$PWD/.build/release/libaspects.so
WORK=$(mktemp -d)
TABLE=demo-$$
trap '"$CTL" destroy --table "$TABLE" >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT

say() { printf '\n\033[1m== %s\033[0m\n' "$1"; }
show() { printf '$ %s\n' "$*"; }

say "1. cat cannot open /etc/hostname (open fails with ENOENT for /etc/host*)"
RULE='{"symbol":"open","position":"instead","action":{"fail":"ENOENT"},"when":{"args":[{"arg":0,"glob":"/etc/host*"}]}}'
show "aspectctl run --rule '$RULE' -- cat /etc/hostname"
"$CTL" run --rule "$RULE" -- cat /etc/hostname && echo "exit status 0" || echo "exit status $?"

say "2. the 3rd write to a disk image fails with ENOSPC: a full disk, the same way on every run"
# config/examples/flaky-disk.json's disk-full rule: dd writes its output through fd 1, so the
# rule names the file the descriptor refers to (fdpath), not a descriptor number.
RULE='{"id":"disk-full","symbol":"write","position":"instead","action":{"fail":"ENOSPC","log":true},"when":{"nth":3,"args":[{"arg":0,"fdpath":"*.img"}]}}'
for run in 1 2; do
  show "aspectctl run --report --rule '$RULE' -- dd if=/dev/zero of=$WORK/disk.img bs=4k count=8   # run $run"
  "$CTL" run --report --rule "$RULE" -- dd if=/dev/zero of="$WORK/disk.img" bs=4k count=8 status=none \
    && echo "exit status 0" || echo "exit status $?"
  echo "bytes written: $(stat -c %s "$WORK/disk.img")"
done

say "3. changing the advice of a program that is already running"
echo "the configuration" > "$WORK/config.txt"
show "aspectctl create --table $TABLE"
"$CTL" create --table "$TABLE"
show "ASPECTS_TABLE=$TABLE LD_PRELOAD=$LIB bash -c 'every 0.2 s: read config.txt' &"
ASPECTS_TABLE=$TABLE LD_PRELOAD=$LIB bash -c '
  for i in $(seq 1 10); do
    if { read -r line < "$1"; } 2>/dev/null; then echo "  reader: read #$i ok"; else echo "  reader: read #$i FAILED"; fi
    sleep 0.2
  done' reader "$WORK/config.txt" &
READER=$!
sleep 0.5
RULE='{"id":"deny-config","symbol":"open","position":"instead","action":{"fail":"EACCES","log":true},"when":{"args":[{"arg":0,"glob":"*/config.txt"}]}}'
show "aspectctl add --table $TABLE --rule '$RULE'"
"$CTL" add --table "$TABLE" --rule "$RULE"
sleep 0.7
show "aspectctl list --table $TABLE"
"$CTL" list --table "$TABLE"
show "aspectctl remove --table $TABLE deny-config"
"$CTL" remove --table "$TABLE" deny-config
wait "$READER"
show "aspectctl events --table $TABLE"
"$CTL" events --table "$TABLE"
show "aspectctl destroy --table $TABLE"
"$CTL" destroy --table "$TABLE"
