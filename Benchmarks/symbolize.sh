#!/usr/bin/env bash
# Benchmarks/symbolize.sh — what naming a campaign's call sites costs: two aspectctl builds
# (BEFORE and AFTER, e.g. the base branch's release and this one's) each run the sqlite3
# benchmark campaign of Benchmarks/explore.sh cut to one run (`--max-runs 1`: survey,
# baseline, one run, then the sites — 7 in libc, 1 in libsqlite3, 1 in the shell — named
# with their file:line), taking turns, N rounds. The difference of the two is what
# symbolizing costs less (or more), everything else being the same work. Also times the
# one addr2line on libc.so.6 that the symbolizer ran before for libc's 7 sites (with
# libc6-dbg installed: it reads all of the debug file's .debug_info). CPU is user + system
# of everything each command started (getrusage of the children); the median of N.
#
# Usage: Benchmarks/symbolize.sh BEFORE_ASPECTCTL AFTER_ASPECTCTL [N]   (N default 15)
# (each aspectctl with its libaspects.so beside it, as `swift build -c release` leaves them)
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,12p' "$0" >&2; exit 64; }
BEFORE=$1 AFTER=$2 N=${3:-15}
WORK=$(mktemp -d /tmp/aspects-symbolize-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

python3 - "$BEFORE" "$AFTER" "$N" "$WORK" <<'PY'
import json, os, resource, shutil, statistics, subprocess, sys

before, after, n, work = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
cmd = ["/usr/bin/sqlite3", "t.db", "create table t(x); insert into t values(1); select * from t;"]

def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime

def campaign(ctl):
    """CPU seconds of one cut campaign, and its sites' locations."""
    d = os.path.join(work, "c")
    shutil.rmtree(d, ignore_errors=True)
    os.mkdir(d)
    c = children_cpu()
    subprocess.run([ctl, "explore", "--function", "malloc", "--strategy", "nth", "--max-runs", "1", "-j", "1",
                    "--progress", "never", "--out", os.path.join(d, "out"), "--json", os.path.join(d, "c.json"), "--"] + cmd,
                   cwd=d, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    cpu = children_cpu() - c
    report = json.load(open(os.path.join(d, "c.json")))
    return cpu, {s["site"]: s.get("location") for f in report.get("functions", []) for s in f.get("sites", [])}

def addr2line(sites):
    """CPU seconds of the one addr2line -f -C the symbolizer ran on libc.so.6 for its sites."""
    libc = "/lib/x86_64-linux-gnu/libc.so.6"
    segs = []
    out = subprocess.run(["readelf", "-lW", libc], capture_output=True, text=True).stdout
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            segs.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))
    addresses = []
    for site in sites:
        obj, _, off = site.partition("+")
        if obj.startswith("libc.so"):
            o = int(off, 16) - 1
            addresses += [hex(o - so + va) for so, va, size in segs if so <= o < so + size]
    c = children_cpu()
    subprocess.run(["addr2line", "-e", libc, "-f", "-C"] + addresses, stdout=subprocess.DEVNULL, check=True)
    return children_cpu() - c, len(addresses)

rows = {"before": [], "after": [], "addr2line": []}
for _ in range(n):
    b, sites_b = campaign(before)
    a, sites_a = campaign(after)
    t, count = addr2line(sites_a)
    rows["before"].append(b)
    rows["after"].append(a)
    rows["addr2line"].append(t)
named = lambda s: sum(1 for v in s.values() if v)
print(f"median of {n} rounds, CPU = user + system of everything started (ms)")
print(f"  before: {1000 * statistics.median(rows['before']):7.1f} ms   sites {len(sites_b)}, with file:line {named(sites_b)}")
print(f"  after:  {1000 * statistics.median(rows['after']):7.1f} ms   sites {len(sites_a)}, with file:line {named(sites_a)}")
print(f"  saved:  {1000 * (statistics.median(rows['before']) - statistics.median(rows['after'])):7.1f} ms")
print(f"  addr2line -f -C on libc.so.6, {count} sites: {1000 * statistics.median(rows['addr2line']):.1f} ms")
for site in sorted(set(sites_b) | set(sites_a)):
    if sites_b.get(site) != sites_a.get(site):
        print(f"  {site}: {sites_b.get(site)}  ->  {sites_a.get(site)}")
PY
