#!/usr/bin/env bash
# Benchmarks/programs.sh — whole programs under rules that never fire, side by side with the
# plain program and with libfiu (Debian's fiu-utils), in paired runs: plain, aspects, libfiu,
# plain, aspects, libfiu, ... so that a drift of the machine's speed hits all three alike.
# Prints the median wall time of each and the median of the per-pair ratios.
#
#   Benchmarks/programs.sh            9 rounds
#   ROUNDS=15 Benchmarks/programs.sh
#
# Workloads: sqlite3 inserting 300,000 rows one INSERT at a time (in one transaction), and
# CPython running its test_json. Rules: malloc, realloc, read, write (instead, fail) and free
# (before, log), each with "nth" far away: armed on every call, never firing — what a test
# suite pays for having fault rules in place. libfiu: its malloc point enabled with a
# probability that never fires in practice (fiu-run -x).
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-9}
command -v sqlite3 >/dev/null || { echo "sqlite3 is needed (apt-get install sqlite3)" >&2; exit 1; }
swift build -c release >/dev/null
LIB=$PWD/.build/release/libaspects.so
CTL=.build/release/aspectctl
WORK=$(mktemp -d)
# a shared-memory table, as `aspectctl run` makes
TABLE="bench-programs-$$"
trap 'rm -rf "$WORK"; "$CTL" destroy --table "$TABLE" >/dev/null 2>&1 || true' EXIT
"$CTL" create --table "$TABLE" >/dev/null
"$CTL" add --table "$TABLE" --rule '[
  {"id":"m","symbol":"malloc","position":"instead","action":{"fail":true},"when":{"nth":1000000000000}},
  {"id":"r","symbol":"realloc","position":"instead","action":{"fail":true},"when":{"nth":1000000000000}},
  {"id":"f","symbol":"free","position":"before","action":{"log":true},"when":{"nth":1000000000000}},
  {"id":"rd","symbol":"read","position":"instead","action":{"fail":true},"when":{"nth":1000000000000}},
  {"id":"wr","symbol":"write","position":"instead","action":{"fail":true},"when":{"nth":1000000000000}}]' >/dev/null

{
  echo "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, value REAL);"
  echo "BEGIN;"
  awk 'BEGIN { for (i = 1; i <= 300000; i++) printf "INSERT INTO t(name, value) VALUES (%cname-%d%c, %d.5);\n", 39, i, 39, i }'
  echo "COMMIT;"
  echo "SELECT count(*), sum(value) FROM t;"
} > "$WORK/insert.sql"

have_fiu=0
command -v fiu-run >/dev/null && have_fiu=1

# seconds CMD...: wall time of one run (its output discarded)
seconds() {
  local s e
  s=$(date +%s%N)
  "$@" >/dev/null 2>&1
  e=$(date +%s%N)
  echo "scale=4; ($e - $s) / 1000000000" | bc
}
median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

# bench NAME SETUP CMD...: ROUNDS paired rounds of plain, aspects, libfiu
bench() {
  local name=$1 setup=$2; shift 2
  local plain=() aspects=() fiu=() ra=() rf=()
  for _ in $(seq "$ROUNDS"); do
    eval "$setup"; local p; p=$(seconds "$@")
    eval "$setup"; local a; a=$(seconds env LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE" "$@")
    plain+=("$p"); aspects+=("$a"); ra+=("$(echo "scale=4; $a / $p" | bc)")
    if [ $have_fiu = 1 ]; then
      eval "$setup"; local f; f=$(seconds fiu-run -x -c 'enable_random name=libc/mm/malloc,probability=0.000000001' "$@")
      fiu+=("$f"); rf+=("$(echo "scale=4; $f / $p" | bc)")
    fi
  done
  printf '%-34s %10s %10s\n' "$name" "median s" "ratio"
  printf '  %-32s %10s %10s\n' "plain" "$(printf '%s\n' "${plain[@]}" | median)" "1.00"
  printf '  %-32s %10s %10s\n' "aspects, 5 rules armed" "$(printf '%s\n' "${aspects[@]}" | median)" "$(printf '%s\n' "${ra[@]}" | median)"
  if [ $have_fiu = 1 ]; then
    printf '  %-32s %10s %10s\n' "libfiu, malloc point enabled" "$(printf '%s\n' "${fiu[@]}" | median)" "$(printf '%s\n' "${rf[@]}" | median)"
  fi
}

echo "machine: $(uname -m), $(nproc) cores; $(date -u +%Y-%m-%d); $ROUNDS paired rounds"
bench "sqlite3, 300,000 INSERTs" 'rm -f "$WORK/db"' sh -c "sqlite3 '$WORK/db' < '$WORK/insert.sql'"
if python3 -c 'import test.test_json' 2>/dev/null; then
  bench "python3 -m test test_json" ':' python3 -m test test_json -q
else
  echo "python3 without its test package: test_json skipped"
fi
"$CTL" stats --table "$TABLE" | sed -n '1,6p'
