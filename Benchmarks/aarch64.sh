#!/usr/bin/env bash
# Benchmarks/aarch64.sh — instructions per call on aarch64 beside x86-64, both counted the same
# way in one run: under qemu-user, one guest instruction per translated block
# (-singlestep) and every block's execution logged (-d exec,nochain), so the count of "Trace"
# lines is the count of instructions the program executed. As in run.sh each state is run
# with two call counts and the difference divided by the difference of the counts (start-up
# cancels out). qemu's time says nothing about hardware: no time is measured here.
#
# The x86-64 column is the same count under qemu-x86_64 (-cpu max): on the stub's paths it
# agrees with callgrind's to the instruction (getppid: direct 12, not armed +3, armed +13 by
# both); the firing paths run more of libc, whose choices under emulation differ from this
# machine's, so run.sh's callgrind numbers remain the x86-64 reference for them; aarch64 is run on two CPUs, qemu's `max`
# (LSE atomics: the gate counts with ldaddal) and a Cortex-A57 (ARMv8.0: the exclusive
# load/store loop), the two ways the stub chooses between at attach.
#
#   Benchmarks/aarch64.sh                 getppid and write
#   Benchmarks/aarch64.sh getppid         only these
set -euo pipefail
cd "$(dirname "$0")/.."

for tool in qemu-aarch64-static qemu-x86_64-static aarch64-linux-gnu-gcc; do
  command -v $tool >/dev/null || { echo "aarch64.sh: $tool is needed (.ci/run installs qemu-user-static and gcc-aarch64-linux-gnu)" >&2; exit 1; }
done
swift build -c release >/dev/null
scripts/build-aarch64.sh >/dev/null
LIB_X86=$PWD/.build/release/libaspects.so
LIB_ARM=$PWD/.build/aarch64/libaspects.so
CTL=.build/release/aspectctl
WORK=$(mktemp -d)
TABLE="$WORK/table"
trap '"$CTL" destroy --table "$TABLE" >/dev/null 2>&1; rm -rf "$WORK"' EXIT
cc -O2 -o "$WORK/percall-x86_64" Benchmarks/percall.c -lpthread
aarch64-linux-gnu-gcc -O2 -o "$WORK/percall-aarch64" Benchmarks/percall.c -lpthread
mkdir -p "$WORK/x86_64" "$WORK/aarch64"
cc -shared -fPIC -O2 -o "$WORK/x86_64/libprotobench.so" Benchmarks/proto_bench_lib.c
aarch64-linux-gnu-gcc -shared -fPIC -O2 -o "$WORK/aarch64/libprotobench.so" Benchmarks/proto_bench_lib.c
cc -O2 -o "$WORK/proto-x86_64" Benchmarks/proto_bench.c -L"$WORK/x86_64" -lprotobench -Wl,-rpath,"$WORK/x86_64"
aarch64-linux-gnu-gcc -O2 -o "$WORK/proto-aarch64" Benchmarks/proto_bench.c -L"$WORK/aarch64" -lprotobench -Wl,-rpath,"$WORK/aarch64"

N1=2000
N2=12000
functions=("$@")
[ ${#functions[@]} -gt 0 ] || functions=(getppid write)

# count MACHINE PRELOAD(0|1) PROGRAM ARGS... → the instructions the guest executed. The
# preload and the table are set in the guest's environment only (-E): qemu itself is a host
# program.
count() {
  local machine=$1 preload=$2; shift 2
  local qemu=(qemu-x86_64-static -cpu max) lib=$LIB_X86
  case $machine in
    x86_64) ;;
    aarch64-lse) qemu=(qemu-aarch64-static -cpu max); lib=$LIB_ARM ;;
    aarch64-v8.0) qemu=(qemu-aarch64-static -cpu cortex-a57); lib=$LIB_ARM ;;
  esac
  local env=()
  [ "$preload" = 1 ] && env=(-E "LD_PRELOAD=$lib" -E "ASPECTS_TABLE=$TABLE")
  "${qemu[@]}" "${env[@]}" -singlestep -d exec,nochain -D /dev/stdout "$@" | grep -c '^Trace' || true
}

# per_call MACHINE PRELOAD PROGRAM-STEM ARG → instructions per call of the workload
per_call() {
  local machine=$1 preload=$2 stem=$3 arg=$4 a b
  local bin="$WORK/$stem-${machine%%-*}"
  a=$(count "$machine" "$preload" "$bin" "$arg" $N1)
  b=$(count "$machine" "$preload" "$bin" "$arg" $N2)
  # rounded, not truncated: a run's few instructions more or less (a page fault's retry, the
  # scheduler) must not turn 28.0 into 27
  awk -v a="$a" -v b="$b" -v n=$((N2 - N1)) 'BEGIN { printf "%.0f\n", (b - a) / n }'
}

reset_table() {
  "$CTL" destroy --table "$TABLE" >/dev/null 2>&1 || true
  "$CTL" create --table "$TABLE" >/dev/null
  # (add's warnings and notes about the rule are not the benchmark's: shown only on failure)
  if [ $# -gt 0 ]; then "$CTL" add --table "$TABLE" --rule "$1" >/dev/null 2>"$WORK/add.err" || { cat "$WORK/add.err" >&2; exit 1; }; fi
}

machines=(x86_64 aarch64-lse aarch64-v8.0)
# line FN STATE PRELOAD PROGRAM-STEM: the state's count on each machine, and how far above
# that machine's direct call
line() {
  local fn=$1 state=$2 preload=$3 stem=$4 out="" i=0
  for m in "${machines[@]}"; do
    local r
    r=$(per_call "$m" "$preload" "$stem" "$fn")
    if [ "$preload" = 0 ]; then direct[$i]=$r; out+=$(printf ' %8s %6s' "$r" "-")
    else out+=$(printf ' %8s %+6d' "$r" "$(( r - direct[i] ))"); fi
    i=$((i + 1))
  done
  printf '%-9s %-28s%s\n' "$fn" "$state" "$out"
}

printf '%s\n' "qemu $(qemu-aarch64-static --version | head -1 | sed 's/.*version \([^ ]*\).*/\1/'), instructions counted per translated block of one instruction; $(date -u +%Y-%m-%d)"
printf '%-9s %-28s %15s %15s %15s\n' "" "" "x86-64" "aarch64 (LSE)" "aarch64 (v8.0)"
printf '%-9s %-28s %8s %6s %8s %6s %8s %6s\n' function state instr over instr over instr over
declare -a direct
for fn in "${functions[@]}"; do
  act='{"fail":true}'; [ "$fn" = getppid ] && act='{"return":42}'
  reset_table
  line "$fn" "direct (no preload)" 0 percall
  reset_table '{"symbol":"fsync","position":"instead","action":{"fail":true}}'
  line "$fn" "not armed (rule on fsync)" 1 percall
  reset_table "{\"symbol\":\"$fn\",\"position\":\"instead\",\"action\":$act,\"when\":{\"nth\":1000000000}}"
  line "$fn" "armed, not firing (nth)" 1 percall
  reset_table "{\"symbol\":\"$fn\",\"position\":\"instead\",\"action\":$act,\"when\":{\"probability\":0.000001,\"seed\":1}}"
  line "$fn" "armed, p=1e-6 (seeded)" 1 percall
  if [ "$fn" = write ]; then
    reset_table '{"symbol":"write","position":"instead","action":{"fail":true},"when":{"args":[{"arg":0,"eq":999}]}}'
    line "$fn" "armed, int condition false" 1 percall
  fi
  reset_table "{\"symbol\":\"$fn\",\"position\":\"instead\",\"action\":$act}"
  line "$fn" "firing instead" 1 percall
  reset_table "{\"symbol\":\"$fn\",\"position\":\"before\",\"action\":{\"log\":true}}"
  line "$fn" "before + log (every call)" 1 percall
done

echo
echo "a function outside the catalog, advised from a prototype (GOT rewriting)"
printf '%-9s %-28s %15s %15s %15s\n' "" "" "x86-64" "aarch64 (LSE)" "aarch64 (v8.0)"
printf '%-9s %-28s %8s %6s %8s %6s %8s %6s\n' function state instr over instr over instr over
for which in one four; do
  proto="int fx_one(int a)"; [ "$which" = four ] && proto="int fx_four(int a, int b, int c, int d)"
  reset_table
  line "$which" "direct (no preload)" 0 proto
  reset_table "{\"symbol\":\"fx_$which\",\"prototype\":\"$proto\",\"position\":\"instead\",\"action\":{\"return\":7},\"when\":{\"nth\":1000000000}}"
  line "$which" "armed, not firing (nth)" 1 proto
  reset_table "{\"symbol\":\"fx_$which\",\"prototype\":\"$proto\",\"position\":\"instead\",\"action\":{\"return\":7}}"
  line "$which" "firing instead" 1 proto
done

echo
echo "start-up of a program that makes no call (percall with no calls): instructions"
printf '%-28s %15s %15s\n' state x86-64 "aarch64 (LSE)"
startup() { count "$1" "$2" "$WORK/percall-${1%%-*}" getppid 0; }
reset_table '{"symbol":"fsync","position":"instead","action":{"fail":true}}'
printf '%-28s %15s %15s\n' "no preload" "$(startup x86_64 0)" "$(startup aarch64-lse 0)"
printf '%-28s %15s %15s\n' "preload, table" "$(startup x86_64 1)" "$(startup aarch64-lse 1)"
