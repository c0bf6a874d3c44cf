#!/usr/bin/env bash
# Benchmarks/explore.sh — what `aspectctl explore` costs next to a bare loop of the same runs.
# For the sqlite3 shell with a file database (`sqlite3 t.db '…'`, a new file in each run's own
# directory) and `python3 -c pass`: a bare loop of RUNS runs of the program under the preload
# (LD_PRELOAD + an empty table of a run's size, each run in a new directory: the floor a run
# cannot go under), then `explore` of RUNS k-th-call faults of malloc at -j1, the whole command
# (survey, baselines, runs, symbolizing, reports). CPU is user + system of everything each started
# (rusage of the children); `own` is aspectctl's own part of explore's, read from /proc when
# it has ended. The ratio is explore's over the bare loop's scaled to explore's number of runs
# (the target: 1.5×), for CPU and wall time, with --out on disk (a directory beside the
# repository's .build) and on tmpfs (/dev/shm). Each figure is the median of REPEATS rounds,
# explore and the bare loop interleaved. Builds a release first (CTL=path skips the build and
# times that aspectctl). BENCHMARKS.md keeps the numbers of one run.
#
# Usage: Benchmarks/explore.sh [--static] [RUNS] [REPEATS]   (defaults: 60 runs, 3 rounds)
#   --static: the release as the tarball and the Debian package ship it (cli-start.sh says
#   more): aspectctl starts without loading the Swift runtime as shared libraries.
set -euo pipefail
cd "$(dirname "$0")/.."
SCRATCH=.build
if [ "${1:-}" = --static ]; then SCRATCH=.build-static; shift; fi
RUNS=${1:-60}
REPEATS=${2:-3}
if [ -z "${CTL:-}" ]; then
    if [ "$SCRATCH" = .build-static ]; then
        swift build -c release --static-swift-stdlib --scratch-path "$SCRATCH" >/dev/null
    else
        swift build -c release >/dev/null
    fi
    CTL=$PWD/$SCRATCH/release/aspectctl
fi
LIB=$(dirname "$CTL")/libaspects.so
mkdir -p .build
DISK=$(mktemp -d "$PWD/.build/explore-bench.XXXXXX")
SHM=$(mktemp -d /dev/shm/aspects-explore-bench.XXXXXX)
trap '"$CTL" destroy --table "$DISK/bare.table" >/dev/null 2>&1; rm -rf "$DISK" "$SHM"' EXIT # a table's segment outlives its file
# the size of the table of an explore run (ExploreCampaign.runOnce): a bigger one costs each
# process that attaches it more
"$CTL" create --table "$DISK/bare.table" --rules 1 --events 256 --stats 16 >/dev/null

python3 - "$CTL" "$LIB" "$DISK/bare.table" "$RUNS" "$REPEATS" "$DISK" "$SHM" <<'PY'
import json, os, resource, shutil, statistics, subprocess, sys, time

ctl, lib, table, runs, repeats, disk, shm = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6], sys.argv[7]
targets = [("sqlite3 t.db (a file database)", ["/usr/bin/sqlite3", "t.db", "create table t(x); insert into t values(1); select * from t;"]),
           ("python3 -c pass", ["/usr/bin/python3", "-c", "pass"])]

def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime

def bare(cmd, where):
    """CPU and wall seconds of `runs` runs of cmd under the preload, each in a new directory."""
    env = dict(os.environ, LD_PRELOAD=lib, ASPECTS_TABLE=table)
    base = os.path.join(where, "bare")
    shutil.rmtree(base, ignore_errors=True)
    os.mkdir(base)
    c, w = children_cpu(), time.perf_counter()
    for i in range(runs):
        d = os.path.join(base, str(i))
        os.mkdir(d)
        subprocess.run(cmd, env=env, cwd=d, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cpu, wall = children_cpu() - c, time.perf_counter() - w
    shutil.rmtree(base)
    return cpu, wall

def explore(cmd, where):
    """CPU (all of it, and aspectctl's own), wall seconds and runs of one campaign."""
    out, report = os.path.join(where, "out"), os.path.join(where, "c.json")
    shutil.rmtree(out, ignore_errors=True)
    c, w = children_cpu(), time.perf_counter()
    p = subprocess.Popen([ctl, "explore", "--function", "malloc", "--strategy", "nth", "--max-runs", str(runs), "-j", "1",
                          "--progress", "never", "--out", out, "--json", report, "--"] + cmd,
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # ended but not reaped: /proc still has its own CPU time apart from its children's
    os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT)
    fields = open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()
    own = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    p.wait()
    cpu, wall = children_cpu() - c, time.perf_counter() - w
    n = len(json.load(open(report))["runs"])
    shutil.rmtree(out)
    os.unlink(report)
    return cpu, own, wall, n

print(f"{runs} runs of each, median of {repeats} rounds; CPU = user + system seconds, ratio = explore / bare loop scaled to explore's runs")
print(f"{'command':32} {'out':5} {'runs':>4} {'bare cpu':>9} {'explore cpu':>12} {'own':>6} {'ratio':>6} {'bare wall':>10} {'explore wall':>13} {'ratio':>6}")
for name, cmd in targets:
    for label, where in (("disk", disk), ("tmpfs", shm)):
        rows = []
        for _ in range(repeats):
            b = bare(cmd, where)
            e = explore(cmd, where)
            rows.append(b + e)
        bcpu, bwall, ecpu, own, ewall, n = (statistics.median(r[k] for r in rows) for k in range(6))
        scale = n / runs
        print(f"{name:32} {label:5} {int(n):4} {bcpu:8.3f}s {ecpu:11.3f}s {own:5.2f}s {ecpu / (bcpu * scale):5.2f}x "
              f"{bwall:9.3f}s {ewall:12.3f}s {ewall / (bwall * scale):5.2f}x")
PY
