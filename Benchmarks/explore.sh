#!/usr/bin/env bash
# Benchmarks/explore.sh — what a run of `aspectctl explore` costs next to the program itself.
# For `sqlite3 :memory: '…'` and `python3 -c pass`: a bare loop of RUNS runs of the program
# under the preload (LD_PRELOAD + an empty table: the floor a run cannot go under), explore's
# RUNS runs at -j1 (k-th-call faults of malloc; seconds from its --json, without the baseline),
# and their ratio (the target: 1.5×); then the same campaign with --out on tmpfs (/dev/shm),
# where a run's directory, files and table cost no disk file system's metadata work. Builds a
# release first (CTL=path skips the build and times that aspectctl). Prints a table;
# BENCHMARKS.md keeps the numbers of one run.
#
# Usage: Benchmarks/explore.sh [RUNS]   (RUNS: runs of each, default 60)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-60}
if [ -z "${CTL:-}" ]; then
    swift build -c release >/dev/null
    CTL=$PWD/.build/release/aspectctl
fi
LIB=$(dirname "$CTL")/libaspects.so
WORK=$(mktemp -d)
trap '"$CTL" destroy --table "$WORK/bare.table" >/dev/null 2>&1; rm -rf "$WORK"' EXIT  # destroyed: a table's segment outlives its file
"$CTL" create --table "$WORK/bare.table" >/dev/null

# seconds of RUNS plain runs of the command under the preload, one after another
bare() {
    python3 - "$LIB" "$WORK/bare.table" "$RUNS" "$@" <<'PY'
import os, subprocess, sys, time
lib, table, runs, cmd = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
env = dict(os.environ, LD_PRELOAD=lib, ASPECTS_TABLE=table)
s = time.perf_counter()
for _ in range(runs):
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
print(f"{time.perf_counter() - s:.3f}")
PY
}

# runs and seconds of one campaign of RUNS k-th-call faults of malloc at -j1, in OUT
campaign() { # OUT COMMAND...
    local out=$1; shift
    rm -rf "$out"
    "$CTL" explore --function malloc --strategy nth --max-runs "$RUNS" -j 1 --progress never \
        --out "$out" --json "$WORK/c.json" -- "$@" >/dev/null || true
    rm -rf "$out"
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(len(d['runs']), f\"{d['seconds']:.3f}\")" "$WORK/c.json"
}

SHM=/dev/shm/aspects-bench-$$
printf '%-44s %5s %9s %5s %12s %6s %12s %6s\n' command runs "bare (s)" runs "explore (s)" ratio "tmpfs (s)" ratio
for target in "/usr/bin/sqlite3 :memory: create table t(x); insert into t values(1); select * from t;" "/usr/bin/python3 -c pass"; do
    if [ "${target%% *}" = /usr/bin/sqlite3 ]; then
        set -- /usr/bin/sqlite3 :memory: "create table t(x); insert into t values(1); select * from t;"
    else
        set -- /usr/bin/python3 -c pass
    fi
    b=$(bare "$@")
    read -r runs secs < <(campaign "$WORK/out" "$@")
    read -r _ shm < <(campaign "$SHM" "$@")
    # the bare loop scaled to the campaign's number of runs
    ratio() { python3 -c "import sys; b,r,n,s=map(float,sys.argv[1:]); print(f'{s/(b*n/r):.2f}x')" "$b" "$RUNS" "$runs" "$1"; }
    printf '%-44s %5s %9s %5s %12s %6s %12s %6s\n' "${target:0:44}" "$RUNS" "$b" "$runs" "$secs" "$(ratio "$secs")" "$shm" "$(ratio "$shm")"
done
