#!/usr/bin/env bash
# Benchmarks/dispatch.sh — the dispatcher's rows of Benchmarks/run.sh, and the paths run.sh
# does not show (single `after`, several rules, `call` advice), for getppid and write: the
# before/after table of a change to Sources/CPreload/dispatch. Instructions per call from
# callgrind, as in run.sh (two call counts, the difference divided by the difference).
#
#   Benchmarks/dispatch.sh                      builds a release and measures it
#   LIB=... CTL=... Benchmarks/dispatch.sh      measures a saved libaspects.so with its aspectctl
set -euo pipefail
cd "$(dirname "$0")/.."

command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
if [ -z "${LIB:-}" ]; then
  swift build -c release >/dev/null
  LIB=$PWD/.build/release/libaspects.so
  CTL=$PWD/.build/release/aspectctl
fi
WORK=$(mktemp -d)
TABLE="$WORK/table"
trap '"$CTL" destroy --table "$TABLE" >/dev/null 2>&1; rm -rf "$WORK"' EXIT
cc -O2 -o "$WORK/percall" Benchmarks/percall.c -lpthread
cat > "$WORK/noop_advice.c" <<'ADVICE'
#include <aspects_advice.h>
void noop(aspects_invocation *inv) { (void)inv; }
void proceed(aspects_invocation *inv) { aspects_proceed(inv); }
ADVICE
cc -shared -fPIC -O2 -I Sources/CPreload/include -o "$WORK/libnoop.so" "$WORK/noop_advice.c"
N1=20000
N2=120000

instructions() {
  local fn=$1 n=$2; shift 2
  valgrind --tool=callgrind --callgrind-out-file=/dev/null --trace-children=yes \
    env "$@" "$WORK/percall" "$fn" "$n" 2>&1 >/dev/null | sed -n 's/.*Collected : \([0-9]*\).*/\1/p' | tail -1
}
per_call() {
  local fn=$1; shift
  local a b
  a=$(instructions "$fn" $N1 "$@")
  b=$(instructions "$fn" $N2 "$@")
  echo $(( (b - a) / (N2 - N1) ))
}
# measure FN LABEL RULES_JSON: one row, the rules (a JSON array or one rule) in a fresh table
measure() {
  local fn=$1 label=$2 rules=$3
  "$CTL" destroy --table "$TABLE" >/dev/null 2>&1 || true
  "$CTL" create --table "$TABLE" >/dev/null
  "$CTL" add --table "$TABLE" --rule "$rules" >/dev/null 2>&1
  printf '%-10s %-36s %10s\n' "$fn" "$label" "$(per_call "$fn" LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE")"
}

printf '%-10s %-36s %10s\n' function state instr/call
for fn in getppid write; do
  act='{"fail":true}'; [ "$fn" = getppid ] && act='{"return":42}'
  printf '%-10s %-36s %10s\n' "$fn" "direct (no preload)" "$(per_call "$fn")"
  measure "$fn" "un-armed (rule on another fn)" '{"symbol":"fsync","position":"instead","action":{"fail":true}}'
  measure "$fn" "armed, not firing (nth)" "{\"symbol\":\"$fn\",\"position\":\"instead\",\"action\":$act,\"when\":{\"nth\":1000000000}}"
  [ "$fn" = write ] && measure "$fn" "armed, int condition false" '{"symbol":"write","position":"instead","action":{"fail":true},"when":{"args":[{"arg":0,"eq":999}]}}'
  measure "$fn" "firing instead" "{\"symbol\":\"$fn\",\"position\":\"instead\",\"action\":$act}"
  measure "$fn" "before + log (every call)" "{\"symbol\":\"$fn\",\"position\":\"before\",\"action\":{\"log\":true}}"
  measure "$fn" "after + log (every call)" "{\"symbol\":\"$fn\",\"position\":\"after\",\"action\":{\"log\":true}}"
  measure "$fn" "several rules, none firing" "[{\"symbol\":\"$fn\",\"position\":\"before\",\"action\":{\"log\":true},\"when\":{\"nth\":1000000000}},{\"symbol\":\"$fn\",\"position\":\"instead\",\"action\":$act,\"when\":{\"nth\":1000000000}}]"
  measure "$fn" "several rules, before + instead fire" "[{\"symbol\":\"$fn\",\"position\":\"before\",\"action\":{\"log\":true}},{\"symbol\":\"$fn\",\"position\":\"instead\",\"action\":$act}]"
  measure "$fn" "full path (before delay 0 + after)" "[{\"symbol\":\"$fn\",\"position\":\"before\",\"action\":{\"delay\":\"0ms\"},\"when\":{\"nth\":1000000000}},{\"symbol\":\"$fn\",\"position\":\"after\",\"action\":{\"log\":true}}]"
  measure "$fn" "before, call returns" "{\"symbol\":\"$fn\",\"position\":\"before\",\"action\":{\"call\":\"$WORK/libnoop.so:noop\"}}"
  measure "$fn" "instead, call proceeds" "{\"symbol\":\"$fn\",\"position\":\"instead\",\"action\":{\"call\":\"$WORK/libnoop.so:proceed\"}}"
  measure "$fn" "after, call returns" "{\"symbol\":\"$fn\",\"position\":\"after\",\"action\":{\"call\":\"$WORK/libnoop.so:noop\"}}"
done
