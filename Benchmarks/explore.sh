#!/usr/bin/env bash
# Benchmarks/explore.sh — how fast `aspectctl explore` runs fault points: runs per second at
# -j1 and -j2 for a small C program and for `python3 -c pass`, each next to the program's own
# wall time (the floor: one run cannot take less). Builds a release first. Prints a table;
# BENCHMARKS.md keeps the numbers of a run.
#
# Usage: Benchmarks/explore.sh [RUNS]   (RUNS: fault points per campaign, default 80)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-80}
swift build -c release >/dev/null
CTL=$PWD/.build/release/aspectctl
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cc -O2 -o "$WORK/malloc_nth" Tests/Fixtures/malloc_nth.c

# seconds of one plain run, the median of 9
plain() {
    python3 - "$@" <<'PY'
import statistics, subprocess, sys, time
t = []
for _ in range(9):
    s = time.perf_counter(); subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL); t.append(time.perf_counter() - s)
print(f"{statistics.median(t) * 1000:.1f}")
PY
}

# runs per second of one campaign: RUNS k-th-call faults of malloc
campaign() { # JOBS ARGS...
    local jobs=$1; shift
    "$CTL" explore --function malloc --strategy nth --max-runs "$RUNS" -j "$jobs" --out "$WORK/out" --json "$WORK/c.json" -- "$@" >/dev/null || true
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(f\"{len(d['runs'])} {d['seconds']:.2f} {len(d['runs'])/d['seconds']:.1f}\")" "$WORK/c.json"
}

printf '%-22s %12s %6s %10s %8s %10s\n' program "plain (ms)" jobs runs seconds runs/s
for target in "malloc_nth 100000" "python3 -c pass"; do
    set -- $target
    prog=$1; shift
    [ "$prog" = malloc_nth ] && prog=$WORK/malloc_nth
    [ "$prog" = python3 ] && prog=/usr/bin/python3
    ms=$(plain "$prog" "$@")
    for j in 1 2; do
        read -r runs secs rate < <(campaign "$j" "$prog" "$@")
        printf '%-22s %12s %6s %10s %8s %10s\n' "$target" "$ms" "$j" "$runs" "$secs" "$rate"
    done
done
