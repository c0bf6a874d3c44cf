#!/usr/bin/env bash
# Benchmarks/cli-start.sh — what one fault-injected run of a short command costs from the
# command line: `aspectctl run --inject … -- /bin/true` next to strace with the same inject,
# the bare command, and aspectctl's own start (`--version`: the Swift runtime and Foundation
# loaded, nothing else). The rows take turns, N rounds, so a change in the machine's load
# falls on all of them alike; wall time is the median of each row's runs, and CPU time (user
# + sys of the whole tree, from getrusage) is steadier on a busy machine. Prints a table and
# the ratios to strace; BENCHMARKS.md keeps the numbers of a run.
#
# Usage: Benchmarks/cli-start.sh [--static] [N]   (N: runs per row, default 40)
#   --static: the release as the tarball and the Debian package ship it (the Swift standard
#   library and Foundation linked in, scripts/package.sh's build); default: `swift build -c
#   release`, which loads them as shared libraries. CTL=… LIB=… measure given binaries.
set -euo pipefail
cd "$(dirname "$0")/.."
SCRATCH=.build
if [ "${1:-}" = --static ]; then SCRATCH=.build-static; shift; fi
N=${1:-40}
if [ -z "${CTL:-}" ]; then
    if [ "$SCRATCH" = .build-static ]; then
        swift build -c release --static-swift-stdlib --scratch-path "$SCRATCH" >/dev/null
    else
        swift build -c release >/dev/null
    fi
fi
CTL=${CTL:-$PWD/$SCRATCH/release/aspectctl}
LIB=${LIB:-$PWD/$SCRATCH/release/libaspects.so}
command -v strace >/dev/null || { echo "strace is needed (apt-get install strace)" >&2; exit 1; }
TERM_="write:error=ENOSPC:when=3"

python3 - "$N" "$CTL" "$LIB" "$TERM_" <<'PY'
import os, resource, statistics, subprocess, sys, time
n, ctl, lib, term = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
rows = [
    ("/bin/true", ["/bin/true"]),
    ("strace -e inject=… /bin/true", ["strace", "-f", "-qq", "-o", "/dev/null", "-e", "inject=" + term, "/bin/true"]),
    ("aspectctl --version", [ctl, "--version"]),
    ("aspectctl run --inject … /bin/true", [ctl, "run", "--preload", lib, "--inject", term, "--", "/bin/true"]),
]
walls = {name: [] for name, _ in rows}
cpus = {name: [] for name, _ in rows}
for _ in range(n):
    for name, cmd in rows:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        walls[name].append(time.perf_counter() - t)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus[name].append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
results = [(name, statistics.median(walls[name]) * 1000, statistics.median(cpus[name]) * 1000) for name, _ in rows]
strace_wall, strace_cpu = results[1][1], results[1][2]
print(f"{'command':38s} {'wall ms':>8s} {'cpu ms':>8s} {'wall/strace':>12s} {'cpu/strace':>11s}")
for name, wall, cpu in results:
    print(f"{name:38s} {wall:8.1f} {cpu:8.1f} {wall / strace_wall:11.1f}x {cpu / strace_cpu:10.1f}x")
PY
