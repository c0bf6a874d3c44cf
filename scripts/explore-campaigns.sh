#!/usr/bin/env bash
# scripts/explore-campaigns.sh — explore on six programs nobody here wrote (Debian's sqlite3,
# git through sh, gzip and gunzip, python3, tar, curl), one campaign each, and a table of what
# a tester reads first: runs, runs that reached nothing, findings, bugs, seconds. Run it
# against two builds to see what a change did to explore's plans and findings; CAMPAIGNS.md
# keeps the numbers.
#
# Usage: scripts/explore-campaigns.sh [ASPECTCTL [LIBASPECTS]]   (default: the release build)
set -euo pipefail
cd "$(dirname "$0")/.."
CTL=${1:-$PWD/.build/release/aspectctl}
LIB=${2:-$(dirname "$CTL")/libaspects.so}
[ -x "$CTL" ] || { echo "no aspectctl at $CTL (swift build -c release)" >&2; exit 2; }
for p in sqlite3 git gzip gunzip tar curl python3; do
    command -v "$p" >/dev/null || { echo "$p is needed (.ci/run installs it)" >&2; exit 2; }
done
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
PY=$(command -v python3)
PY=$(readlink -f "$(python3 -c 'import sys; print(sys.executable)')" 2>/dev/null || echo "$PY")

head -c 20000 /dev/urandom > "$WORK/page"
FILES='mkdir -p dir && echo hello > dir/a && echo world > dir/b'
n=0

# campaign NAME "EXPLORE OPTIONS" SETUP CHECK COMMAND...   (SETUP: in each run's fresh
# directory; CHECK "": none)
campaign() {
    local name=$1 opts=$2 setup=$3 check=$4
    shift 4
    n=$((n + 1))
    local out="$WORK/out-$n" checks=()
    [ -n "$check" ] && checks=(--check "$check")
    # shellcheck disable=SC2086
    "$CTL" explore $opts --setup "$setup" "${checks[@]}" --preload "$LIB" -j 2 --out "$out" --json "$out.json" -- "$@" >/dev/null 2>"$out.err" || true
    if [ ! -s "$out.json" ]; then
        printf '%-16s %s\n' "$name" "no report: $(tail -c 300 "$out.err" | tr '\n' ' ')"
        return
    fi
    python3 - "$name" "$out.json" <<'PY'
import json, sys
name, path = sys.argv[1], sys.argv[2]
d = json.load(open(path))
runs = d.get("runs", [])
nr = sum(1 for r in runs if r.get("outcome") == "not-reached")
findings = sum(1 for r in runs if r.get("outcome") in ("crash", "hang", "check-failed"))
share = f"{nr} ({100 * nr / len(runs):.0f}%)" if runs else "0"
print(f"{name:16s} {len(runs):6d} {share:>12s} {findings:9d} {len(d.get('bugs', [])):5d} {d.get('seconds', 0):8.1f}")
PY
}

printf '%-16s %6s %12s %9s %5s %8s\n' campaign runs not-reached findings bugs seconds
campaign "sqlite3 malloc" "--function malloc --max-runs 300" true "" sqlite3 :memory: 'select 1;'
campaign "git via sh" "--function write --function open --function close --max-runs 300" "$FILES" "" \
    sh -c 'git init -q && git add . && git -c user.email=a@b -c user.name=n commit -qm m'
campaign "gzip -k" "--function write --function read --function close --function open --max-runs 300" \
    'head -c 200000 /dev/urandom > data && cp data ref' \
    'test "$ASPECTS_EXPLORE_STATUS" -ne 0 || { gzip -dc data.gz > back && cmp -s back ref; }' gzip -k data
campaign "gunzip (dash)" "--function read --max-runs 300" 'head -c 200000 /dev/urandom > ref && gzip -c ref > data.gz' \
    'test "$ASPECTS_EXPLORE_STATUS" -ne 0 || cmp -s data ref' gunzip -k data.gz
campaign "python3 -c" "--function malloc --function open --function read --max-runs 300" true "" "$PY" -c 'print(1)'
campaign "tar czf" "--function write --function open --function close --function read --max-runs 300" "$FILES" "" tar czf out.tgz dir
campaign "curl file://" "--function malloc --function open --function read --max-runs 300" true "" curl -s -o out "file://$WORK/page"
