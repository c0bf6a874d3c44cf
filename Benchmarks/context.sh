#!/usr/bin/env bash
# Benchmarks/context.sh — what a `context` condition costs per call (instructions, callgrind),
# beside the direct call and a `site` condition on the same call.
#
# The workload is Benchmarks/percall.c: N calls of one function from one site in work(),
# called by main(), called by libc's start: a calling context of depth 3. Its frames are
# learnt from a log rule with "context": true, then each state is measured as in run.sh (two
# call counts, the difference divided by the difference of the counts).
#
#   Benchmarks/context.sh                 write and malloc
#   Benchmarks/context.sh getppid         only these
#   LIB=/path/libaspects.so Benchmarks/context.sh   another build of the preload (before/after)
set -euo pipefail
cd "$(dirname "$0")/.."

command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
command -v jq >/dev/null || { echo "jq is needed (apt-get install jq)" >&2; exit 1; }
swift build -c release >/dev/null
BIN=.build/release
LIB=${LIB:-$PWD/$BIN/libaspects.so}
CTL=$BIN/aspectctl
WORK=$(mktemp -d)
TABLE="$WORK/table"
trap '"$CTL" destroy --table "$TABLE" >/dev/null 2>&1; rm -rf "$WORK"' EXIT
cc -O2 -o "$WORK/percall" Benchmarks/percall.c -lpthread

N1=2000
N2=12000
functions=("$@")
[ ${#functions[@]} -gt 0 ] || functions=(write malloc)

instructions() {
  local fn=$1 n=$2; shift 2
  valgrind --tool=callgrind --callgrind-out-file=/dev/null --trace-children=yes \
    env "$@" "$WORK/percall" "$fn" "$n" 2>&1 >/dev/null | sed -n 's/.*Collected : \([0-9]*\).*/\1/p' | tail -1
}
per_call() {
  local fn=$1 a b; shift
  a=$(instructions "$fn" $N1 "$@")
  b=$(instructions "$fn" $N2 "$@")
  echo $(( (b - a) / (N2 - N1) ))
}
reset_table() {
  "$CTL" destroy --table "$TABLE" >/dev/null 2>&1 || true
  "$CTL" create --table "$TABLE" >/dev/null
  # (add's notes, e.g. that write has a family, are not what is measured)
  if [ $# -gt 0 ]; then "$CTL" add --table "$TABLE" --rule "$1" >/dev/null 2>&1; fi
}
# an action that never changes the workload: nth far away, so the rule is decided on every
# call and never fires
never() {
  local fn=$1 when=$2 act='{"fail":true}'
  [ "$fn" = getppid ] && act='{"return":42}'
  echo "{\"symbol\":\"$fn\",\"position\":\"instead\",\"action\":$act,\"when\":{$when\"nth\":1000000000}}"
}
# a frame "obj+0xN" moved by DELTA bytes: the same object, another place
moved() { local obj=${1%+0x*} off=${1##*+0x}; printf '%s+0x%x' "$obj" $(( 16#$off + $2 )); }

printf '%s\n' "machine: $(uname -m), $(nproc) cores; $(ldd --version | head -1 | sed 's/.*) //'); preload $LIB"
printf '%-8s %-44s %12s %12s\n' function state instr/call "over direct"
for fn in "${functions[@]}"; do
  reset_table "{\"id\":\"learn\",\"symbol\":\"$fn\",\"position\":\"before\",\"action\":{\"log\":true,\"context\":true}}"
  env LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE" "$WORK/percall" "$fn" 3 >/dev/null
  mapfile -t frames < <("$CTL" events --table "$TABLE" --json | jq -rs '[.[] | select(.context != null and (.context | length) >= 3 and (.context[0] | startswith("percall+")))][-1].context[0:3][]')
  if [ ${#frames[@]} -ne 3 ]; then echo "$fn: no context of depth 3 was recorded (${frames[*]:-none})" >&2; exit 1; fi
  ctx=$(printf '"%s",' "${frames[@]}"); ctx="[${ctx%,}]"
  wrong=$(printf '["%s","%s","%s"]' "${frames[0]}" "$(moved "${frames[1]}" 1)" "${frames[2]}")
  other=$(printf '["%s","%s","%s"]' "$(moved "${frames[0]}" 1)" "${frames[1]}" "${frames[2]}")
  base=$(per_call "$fn")
  row() { printf '%-8s %-44s %12s %+12d\n' "$fn" "$1" "$2" "$(( $2 - base ))"; }
  printf '%-8s %-44s %12s %12s\n' "$fn" "direct (no preload)" "$base" "-"
  printf '%-8s context %s\n' "$fn" "$ctx"
  reset_table "$(never "$fn" "\"site\":\"${frames[0]}\",")"
  row "site condition, holds" "$(per_call "$fn" LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE")"
  reset_table "$(never "$fn" "\"site\":\"$(moved "${frames[0]}" 1)\",")"
  row "site condition, does not hold" "$(per_call "$fn" LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE")"
  reset_table "$(never "$fn" "\"context\":$ctx,")"
  row "context of 3, holds" "$(per_call "$fn" LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE")"
  reset_table "$(never "$fn" "\"context\":$wrong,")"
  row "context of 3, same site, another caller" "$(per_call "$fn" LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE")"
  reset_table "$(never "$fn" "\"context\":$other,")"
  row "context of 3, another site" "$(per_call "$fn" LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE")"
  reset_table "{\"symbol\":\"$fn\",\"position\":\"before\",\"action\":{\"log\":true,\"context\":true},\"when\":{\"nth\":1000000000}}"
  row "log rule recording contexts, not firing" "$(per_call "$fn" LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE")"
  reset_table "{\"symbol\":\"$fn\",\"position\":\"before\",\"action\":{\"log\":true,\"context\":true}}"
  row "log rule recording contexts, every call" "$(per_call "$fn" LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE")"
done
