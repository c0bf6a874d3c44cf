#!/usr/bin/env bash
# Benchmarks/attach.sh — what attaching an advice table costs a process that does nothing
# (/bin/true), beside libfiu's preload with one failure point enabled (issue #33 item 2).
# Four rows: bare /bin/true; libfiu (its two preloads, as fiu-run -x sets them, one point
# enabled); libaspects.so with a one-rule table of the default capacity; the same rule in a
# table of the largest capacity. CPU is user + sys of the process (wait4's rusage of the child),
# summed over ROUNDS interleaved rounds — each round runs every row once, so a drift of the
# machine's speed hits all rows alike — and divided per process; minor page faults are the
# median of the same runs; system calls are counted once with strace -f -c, and user-space
# instructions once with callgrind (both when installed).
#
# Usage: Benchmarks/attach.sh [ROUNDS]   (default 2000)
# Environment: CTL (aspectctl) and LIB (libaspects.so), default the release build; FIU_RUN
# (fiu-run; its script names the directory of its preloads), default the one on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${1:-2000}
if [ -z "${CTL:-}" ] || [ -z "${LIB:-}" ]; then swift build -c release >/dev/null; fi
CTL=${CTL:-$PWD/.build/release/aspectctl}
LIB=${LIB:-$PWD/.build/release/libaspects.so}
FIU_RUN=${FIU_RUN:-$(command -v fiu-run || true)}
RULE='{"symbol":"write","position":"instead","action":{"fail":"ENOSPC"},"when":{"nth":3}}'
FIU_POINT='enable name=posix/io/rw/write'
MAX_RULES=$(sed -n 's/^#define ASPECTS_MAX_RULE_CAPACITY \([0-9]*\)u.*/\1/p' Sources/CAspectsABI/include/aspects_abi.h)

WORK=$(mktemp -d)
SMALL="attach-bench-small-$$"
BIG="attach-bench-big-$$"
cleanup() {
  "$CTL" destroy --table "$SMALL" >/dev/null 2>&1 || true
  "$CTL" destroy --table "$BIG" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
"$CTL" create --table "$SMALL" >/dev/null
"$CTL" create --table "$BIG" --rules "$MAX_RULES" >/dev/null
"$CTL" add --table "$SMALL" --rule "$RULE" >/dev/null 2>&1
"$CTL" add --table "$BIG" --rule "$RULE" >/dev/null 2>&1

# libfiu's preloads are where its fiu-run script says (PLIBPATH), loaded as it loads them.
# libfiu.so.0 itself goes first when it is there: a build outside the system's directories
# finds it through a RUNPATH, whose search (hwcaps subdirectories) a system install never pays.
FIU_LIBS=""
if [ -n "$FIU_RUN" ]; then
  dir=$(sed -n 's/^PLIBPATH="\(.*\)"$/\1/p' "$FIU_RUN" | head -1)
  if [ -f "$dir/fiu_run_preload.so" ]; then
    FIU_LIBS="$dir/fiu_run_preload.so $dir/fiu_posix_preload.so"
    [ -f "$dir/libfiu.so.0" ] && FIU_LIBS="$dir/libfiu.so.0 $FIU_LIBS"
  fi
fi
[ -n "$FIU_LIBS" ] || echo "libfiu not found (fiu-run on PATH, or FIU_RUN=path): its row is left out" >&2

python3 - "$ROUNDS" "$LIB" "$SMALL" "$BIG" "$MAX_RULES" "$FIU_LIBS" "$FIU_POINT" "$WORK" <<'PY'
import os, re, statistics, subprocess, sys
rounds, lib, small, big, max_rules, fiu_libs, fiu_point, work = sys.argv[1:9]
rounds = int(rounds)
base = {k: v for k, v in os.environ.items() if not k.startswith(("LD_", "ASPECTS_", "FIU_"))}
rows = [("/bin/true", {})]
if fiu_libs:
    rows.append(("libfiu preload, one point", {"LD_PRELOAD": fiu_libs, "FIU_ENABLE": fiu_point, "FIU_CTRL_FIFO": ""}))
rows.append(("aspects, one rule, default table", {"LD_PRELOAD": lib, "ASPECTS_TABLE": small}))
rows.append((f"aspects, one rule, {max_rules}-slot table", {"LD_PRELOAD": lib, "ASPECTS_TABLE": big}))
envs = [dict(base, **extra) for _, extra in rows]

# posix_spawn (vfork-like): the child touches none of this interpreter's pages before exec,
# so what it is charged is the exec and /bin/true's own life.
quiet = [(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0), (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0)]
def run(env):
    pid = os.posix_spawn("/bin/true", ["/bin/true"], env, file_actions=quiet)
    _, status, ru = os.wait4(pid, 0)
    if status != 0:
        sys.exit(f"/bin/true exited with {status} under {env.get('LD_PRELOAD', 'nothing')}")
    return ru.ru_utime + ru.ru_stime, ru.ru_minflt

cpu = [0.0] * len(rows)
faults = [[] for _ in rows]
for _ in range(rounds):
    for i, env in enumerate(envs):
        c, f = run(env)
        cpu[i] += c
        faults[i].append(f)

def instructions(env):
    r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", "/bin/true"], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    found = re.findall(r"Collected : (\d+)", r.stderr)
    return found[-1] if found else "-"

def syscalls(env):
    out = os.path.join(work, "strace.txt")
    subprocess.run(["strace", "-f", "-c", "-o", out, "/bin/true"], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    total = [l for l in open(out) if l.strip().endswith("total")]
    return int(total[0].split()[3]) if total else 0

def have(tool):
    return subprocess.run(["sh", "-c", f"command -v {tool}"], stdout=subprocess.DEVNULL).returncode == 0
have_strace, have_valgrind = have("strace"), have("valgrind")
print(f"{rounds} interleaved rounds; CPU = user + sys per process; instructions: callgrind, user space")
print(f"{'process':40s} {'CPU µs':>8s} {'vs fiu':>7s} {'minflt':>7s} {'syscalls':>9s} {'instructions':>13s}")
fiu = cpu[1] if fiu_libs else None
for i, (name, _) in enumerate(rows):
    per = cpu[i] / rounds * 1e6
    ratio = f"{cpu[i] / fiu:6.2f}x" if fiu else "-"
    calls = str(syscalls(envs[i])) if have_strace else "-"
    count = instructions(envs[i]) if have_valgrind else "-"
    print(f"{name:40s} {per:8.0f} {ratio:>7s} {statistics.median(faults[i]):7.0f} {calls:>9s} {count:>13s}")
PY
