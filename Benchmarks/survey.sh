#!/usr/bin/env bash
# Benchmarks/survey.sh — what explore's survey costs next to the program's own run: the
# survey's first pass (`baseline.seconds` of the --json report: every call of every explored
# function logged, with its calling context for --strategy context) against the median of
# plain runs of the same command in a fresh directory (under the preload with an empty table).
# For the sqlite3 shell on a file database and bison on a small grammar (with its m4 child).
# Builds a release first (CTL=path skips the build and times that aspectctl with its
# libaspects.so beside it: before/after).
#
# Usage: Benchmarks/survey.sh [REPEATS]   (median of REPEATS campaigns and of 5×REPEATS plain runs; default 3)
set -euo pipefail
cd "$(dirname "$0")/.."
REPEATS=${1:-3}
if [ -z "${CTL:-}" ]; then
    swift build -c release >/dev/null
    CTL=$PWD/.build/release/aspectctl
fi
LIB=$(dirname "$CTL")/libaspects.so
WORK=$(mktemp -d)
trap '"$CTL" destroy --table "$WORK/bare.table" >/dev/null 2>&1; rm -rf "$WORK"' EXIT
"$CTL" create --table "$WORK/bare.table" >/dev/null
cp scripts/inputs/calc.y "$WORK/calc.y"   # the training set's grammar (scripts/training-campaigns.sh)

# median seconds of N plain runs: SETUP then COMMAND, each in a fresh directory
plain() { # N SETUP COMMAND
    python3 - "$LIB" "$WORK/bare.table" "$WORK" "$@" <<'PY'
import os, shutil, statistics, subprocess, sys, tempfile, time
lib, table, work, n, setup, cmd = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6]
env = dict(os.environ, LD_PRELOAD=lib, ASPECTS_TABLE=table)
times = []
for _ in range(n):
    d = tempfile.mkdtemp(dir=work)
    subprocess.run(setup, shell=True, cwd=d, check=True)
    s = time.perf_counter()
    subprocess.run(cmd, shell=True, cwd=d, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    times.append(time.perf_counter() - s)
    shutil.rmtree(d)
print(f"{statistics.median(times):.4f}")
PY
}

# median of the survey's first pass over REPEATS campaigns (one fault run each)
survey() { # STRATEGY SETUP COMMAND
    local strategy=$1 setup=$2 cmd=$3 i
    for i in $(seq "$REPEATS"); do
        rm -rf "$WORK/out"
        "$CTL" explore --strategy "$strategy" --max-runs 1 --timeout 60 --out "$WORK/out" --json "$WORK/report.json" \
            --setup "$setup" -- sh -c "$cmd" >/dev/null 2>&1 || true
        python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["baseline"]["seconds"])' "$WORK/report.json"
    done | sort -n | sed -n "$(( (REPEATS + 1) / 2 ))p"
}

printf '%s\n' "machine: $(uname -m), $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg); aspectctl $CTL"
printf '%-8s %10s %14s %8s %14s %8s\n' program "plain s" "survey s" "×" "context s" "×"
row() { # NAME SETUP COMMAND
    local p s c
    p=$(plain $(( 5 * REPEATS )) "$2" "$3")
    s=$(survey sites "$2" "$3")
    c=$(survey context "$2" "$3")
    printf '%-8s %10.4f %14.4f %8.1f %14.4f %8.1f\n' "$1" "$p" "$s" "$(echo "$s / $p" | bc -l)" "$c" "$(echo "$c / $p" | bc -l)"
}
command -v sqlite3 >/dev/null && row sqlite3 "true" "sqlite3 t.db 'create table t(x); insert into t values(1),(2); select sum(x) from t;'"
command -v bison >/dev/null && row bison "cp $WORK/calc.y ." "bison -d -o calc.c calc.y"
