#!/usr/bin/env bash
# Benchmarks/run.sh — per-call cost of advice, side by side with a direct call.
#
# Instructions per call come from callgrind (repeatable on a noisy machine): each state is
# run with two call counts and the difference is divided by the difference of the counts,
# so start-up cost cancels out. ns per call is the median of 5 timed runs (informative only).
# Start-up: callgrind instructions of /bin/true, and wall time of 200 runs.
#
#   Benchmarks/run.sh                 all functions
#   Benchmarks/run.sh getppid write   only these
set -euo pipefail
cd "$(dirname "$0")/.."

command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)" >&2; exit 1; }
swift build -c release >/dev/null
BIN=.build/release
LIB=$PWD/$BIN/libaspects.so
CTL=$BIN/aspectctl
WORK=$(mktemp -d)
trap '"$CTL" destroy --table "$TABLE" >/dev/null 2>&1; rm -rf "$WORK"' EXIT
cc -O2 -o "$WORK/percall" Benchmarks/percall.c -lpthread
cc -O2 -o "$WORK/floor" Benchmarks/closure_floor.c -lffi
TABLE="$WORK/table"

N1=20000
N2=120000
functions=("$@")
[ ${#functions[@]} -gt 0 ] || functions=(getppid write open malloc)

# libfiu's failure-point names of the workloads (Debian's fiu-utils), when it is installed.
fiu_point() {
  case $1 in write) echo posix/io/rw/write ;; open) echo posix/io/oc/open ;; malloc) echo libc/mm/malloc ;; *) echo "" ;; esac
}

# instructions_cmd N COMMAND... → total instructions of the final program of COMMAND
instructions_cmd() {
  local n=$1; shift
  valgrind --tool=callgrind --callgrind-out-file=/dev/null --trace-children=yes "$@" 2>&1 >/dev/null |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p' | tail -1
}

# instructions FUNCTION N ENV... → total instructions of the run. The environment is set by
# env(1) under valgrind (which follows the exec and counts the workload alone): the valgrind
# launcher itself must not run with the preload, or a firing `open`/`malloc` rule hits it.
instructions() {
  local fn=$1 n=$2; shift 2
  valgrind --tool=callgrind --callgrind-out-file=/dev/null --trace-children=yes \
    env "$@" "$WORK/percall" "$fn" "$n" 2>&1 >/dev/null | sed -n 's/.*Collected : \([0-9]*\).*/\1/p' | tail -1
}

# The closure floor: a libffi closure of the function's signature whose handler returns at once.
floor_per_call() {
  local fn=$1 a b
  a=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$WORK/floor" "$fn" $N1 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
  b=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$WORK/floor" "$fn" $N2 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p')
  echo $(( (b - a) / (N2 - N1) ))
}

per_call() {
  local fn=$1; shift
  local a b
  a=$(instructions "$fn" $N1 "$@")
  b=$(instructions "$fn" $N2 "$@")
  echo $(( (b - a) / (N2 - N1) ))
}

median_ns() {
  local fn=$1; shift
  for _ in 1 2 3 4 5; do env "$@" "$WORK/percall" "$fn" 200000; done | sort -n | sed -n 3p
}

reset_table() {
  "$CTL" destroy --table "$TABLE" >/dev/null 2>&1 || true # its segment too, not only the file
  "$CTL" create --table "$TABLE" >/dev/null
  if [ $# -gt 0 ]; then "$CTL" add --table "$TABLE" --rule "$1" >/dev/null; fi
}

# latency LABEL PROGRAM RULE [SETUP_RULE]: PROGRAM runs under the preload (after SETUP_RULE is
# in the table), prints the CLOCK_REALTIME ns of its first advised call; RULE is added while it
# runs. Prints the median over 5 runs of (that time - the rule's addedNs).
latency() {
  local label=$1 program=$2 rule=$3 setup=${4:-}
  for _ in 1 2 3 4 5; do
    if [ -n "$setup" ]; then reset_table "$setup"; else reset_table; fi
    LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE" $program > "$WORK/latency.out" &
    local waiter=$!
    sleep 0.2
    "$CTL" add --table "$TABLE" --rule "$rule" >/dev/null
    wait $waiter
    local added
    added=$("$CTL" list --table "$TABLE" --json | sed -n 's/.*"addedNs": \([0-9]*\).*/\1/p' | tail -1)
    echo $(( $(cat "$WORK/latency.out") - added ))
  done | sort -n | sed -n 3p | awk -v l="$label" '{printf "%-39s %10.1f us\n", l, $1 / 1000}'
}

# The rule JSON of each state, per function. getppid cannot fail: it returns 42 instead.
rule_for() {
  local fn=$1 state=$2 act='{"fail":true}' only=''
  [ "$fn" = getppid ] && act='{"return":42}'
  # a failing malloc must leave the program's other allocations (stdio's) alone
  [ "$fn" = malloc ] && only=',"when":{"args":[{"arg":0,"eq":32}]}'
  case $state in
    unarmed) echo '{"symbol":"fsync","position":"instead","action":{"fail":true}}' ;;
    armed-nth) echo "{\"symbol\":\"$fn\",\"position\":\"instead\",\"action\":$act,\"when\":{\"nth\":1000000000}}" ;;
    armed-p) echo "{\"symbol\":\"$fn\",\"position\":\"instead\",\"action\":$act,\"when\":{\"probability\":0.000001,\"seed\":1}}" ;;
    # an integer condition no call of the workload meets (write's fd, open's flags, malloc's size)
    int-condition) case $fn in
        write) echo '{"symbol":"write","position":"instead","action":{"fail":true},"when":{"args":[{"arg":0,"eq":999}]}}' ;;
        open) echo '{"symbol":"open","position":"instead","action":{"fail":true},"when":{"args":[{"arg":1,"eq":"O_WRONLY"}]}}' ;;
        malloc) echo '{"symbol":"malloc","position":"instead","action":{"fail":true},"when":{"args":[{"arg":0,"eq":12345}]}}' ;;
        *) echo '' ;;
      esac ;;
    firing) echo "{\"symbol\":\"$fn\",\"position\":\"instead\",\"action\":$act$only}" ;;
  esac
}

printf '%s\n' "machine: $(uname -m), $(nproc) cores; $(ldd --version | head -1 | sed 's/.*) //'); $(date -u +%Y-%m-%d)"
# row FN STATE INSTR NS: one line; armed rows (arow) also show how far above the direct call
# and above the closure floor of the same function they are.
row() { printf '%-10s %-30s %10s %11s %11s %9s\n' "$1" "$2" "$3" "-" "-" "$4"; }
arow() { printf '%-10s %-30s %10s %+11d %+11d %9s\n' "$1" "$2" "$3" "$(( $3 - base ))" "$(( $3 - floor ))" "$4"; }
printf '%-10s %-30s %10s %11s %11s %9s\n' function state instr/call "over direct" "over floor" ns/call
for fn in "${functions[@]}"; do
  base=$(per_call "$fn")
  floor=$(floor_per_call "$fn")
  row "$fn" "direct (no preload)" "$base" "$(median_ns "$fn")"
  row "$fn" "closure floor (libffi)" "$floor" "-"
  r=$(per_call "$fn" LD_PRELOAD="$LIB")
  row "$fn" "preload, no table" "$r" "$(median_ns "$fn" LD_PRELOAD="$LIB")"
  reset_table "$(rule_for "$fn" unarmed)"
  r=$(per_call "$fn" LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE")
  row "$fn" "table, rule on another fn" "$r" "$(median_ns "$fn" LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE")"
  reset_table
  for other in fsync fdatasync unlink mkdir; do
    rules=$(for _ in $(seq 25); do printf '{"symbol":"%s","position":"instead","action":{"fail":true}},' "$other"; done)
    # (25 rules on one function: add says each later one can never fire, which is the point)
    "$CTL" add --table "$TABLE" --rule "[${rules%,}]" >/dev/null 2>&1
  done
  r=$(per_call "$fn" LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE")
  row "$fn" "table, 100 rules on others" "$r" "-"
  reset_table "$(rule_for "$fn" armed-nth)"
  r=$(per_call "$fn" LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE")
  arow "$fn" "armed, not firing (nth)" "$r" "$(median_ns "$fn" LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE")"
  reset_table "$(rule_for "$fn" armed-p)"
  r=$(per_call "$fn" LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE")
  arow "$fn" "armed, p=1e-6 (seeded)" "$r" "-"
  cond=$(rule_for "$fn" int-condition)
  if [ -n "$cond" ]; then
    reset_table "$cond"
    r=$(per_call "$fn" LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE")
    arow "$fn" "armed, int condition false" "$r" "-"
  fi
  if [ "$fn" = open ]; then
    reset_table '{"symbol":"open","position":"instead","action":{"fail":true},"when":{"args":[{"arg":0,"glob":"*.db"}]}}'
    r=$(per_call "$fn" LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE")
    arow "$fn" "armed, glob does not match" "$r" "-"
  fi
  reset_table "$(rule_for "$fn" firing)"
  r=$(per_call "$fn" LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE")
  arow "$fn" "firing instead" "$r" "$(median_ns "$fn" LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE")"
  reset_table "{\"symbol\":\"$fn\",\"position\":\"before\",\"action\":{\"log\":true}}"
  r=$(per_call "$fn" LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE")
  arow "$fn" "before + log (every call)" "$r" "-"
  # libc itself takes slower paths once a second thread exists (cancellation points, locks):
  # the same two threads without the preload are the baseline of the next row.
  a=$(instructions_cmd $N1 "$WORK/percall" "$fn" $N1 2); b=$(instructions_cmd $N2 "$WORK/percall" "$fn" $N2 2)
  row "$fn" "direct, 2 threads" "$(( (b - a) / (N2 - N1) ))" "-"
  reset_table "{\"symbol\":\"$fn\",\"position\":\"before\",\"action\":{\"log\":true},\"scope\":\"table\",\"when\":{\"nth\":1000000000}}"
  a=$(instructions_cmd $N1 env LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE" "$WORK/percall" "$fn" $N1 2)
  b=$(instructions_cmd $N2 env LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE" "$WORK/percall" "$fn" $N2 2)
  ns=$(for _ in 1 2 3 4 5; do LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE" "$WORK/percall" "$fn" 200000 2; done | sort -n | sed -n 3p)
  arow "$fn" "2 threads, scope table" "$(( (b - a) / (N2 - N1) ))" "$ns"
  point=$(fiu_point "$fn")
  if command -v fiu-run >/dev/null && [ -n "$point" ]; then
    a=$(instructions_cmd $N1 fiu-run -x "$WORK/percall" "$fn" $N1); b=$(instructions_cmd $N2 fiu-run -x "$WORK/percall" "$fn" $N2)
    row "$fn" "libfiu, nothing enabled" "$(( (b - a) / (N2 - N1) ))" "-"
    a=$(instructions_cmd $N1 fiu-run -x -c "enable_random name=$point,probability=0.000001" "$WORK/percall" "$fn" $N1)
    b=$(instructions_cmd $N2 fiu-run -x -c "enable_random name=$point,probability=0.000001" "$WORK/percall" "$fn" $N2)
    row "$fn" "libfiu, point enabled p=1e-6" "$(( (b - a) / (N2 - N1) ))" "-"
  fi
done

echo
echo "calls per second of getppid armed with a rule that never fires, scope table (one counter"
echo "word for every thread: its cache line is the limit), median of 5 runs of 2,000,000 calls"
printf '%-28s %14s %10s\n' threads "calls/s" "vs 1"
reset_table '{"symbol":"getppid","position":"instead","action":{"return":42},"scope":"table","when":{"nth":1000000000000}}'
one=0
for threads in 1 2 8; do
  ns=$(for _ in 1 2 3 4 5; do LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE" "$WORK/percall" getppid 2000000 $threads; done | sort -n | sed -n 3p)
  cps=$(echo "1000000000 / $ns" | bc)
  [ $threads = 1 ] && one=$cps
  printf '%-28s %14s %10s\n' "$threads" "$cps" "$(echo "scale=2; $cps / $one" | bc)"
done

echo
echo "getppid, armed with a rule that never fires (nth far away), by counter scope"
printf '%-28s %12s\n' scope instr/call
for scope in process thread hierarchy table; do
  reset_table "{\"symbol\":\"getppid\",\"position\":\"instead\",\"action\":{\"return\":42},\"scope\":\"$scope\",\"when\":{\"nth\":1000000000}}"
  printf '%-28s %12s\n' "$scope" "$(per_call getppid LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE")"
done
for extra in '"once":"process"' '"once":"hierarchy"' '"autoRemove":true' '"when":{"probability":0.000001,"seed":1}'; do
  reset_table "{\"symbol\":\"getppid\",\"position\":\"instead\",\"action\":{\"return\":42},$extra}"
  printf '%-28s %12s\n' "$extra" "$(per_call getppid LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE")"
done

echo
echo "functions outside the catalog, advised from a prototype (GOT rewriting)"
cc -shared -fPIC -O2 -o "$WORK/libprotobench.so" Benchmarks/proto_bench_lib.c
cc -O2 -o "$WORK/proto_bench" Benchmarks/proto_bench.c -L"$WORK" -lprotobench -Wl,-rpath,"$WORK"
proto_per_call() {
  local which=$1; shift
  local a b
  a=$(instructions_cmd $N1 env "$@" "$WORK/proto_bench" "$which" $N1)
  b=$(instructions_cmd $N2 env "$@" "$WORK/proto_bench" "$which" $N2)
  echo $(( (b - a) / (N2 - N1) ))
}
printf '%-10s %-30s %10s %11s %11s\n' function state instr/call "over direct" "over floor"
for which in one four; do
  proto="int fx_one(int a)"; [ "$which" = four ] && proto="int fx_four(int a, int b, int c, int d)"
  base=$(proto_per_call $which)
  floor=$(floor_per_call $which)
  printf '%-10s %-30s %10s %11s %11s\n' "fx_$which" "direct (no preload)" "$base" - -
  printf '%-10s %-30s %10s %11s %11s\n' "fx_$which" "closure floor (libffi)" "$floor" - -
  reset_table "{\"symbol\":\"fx_$which\",\"prototype\":\"$proto\",\"position\":\"instead\",\"action\":{\"return\":7},\"when\":{\"nth\":1000000000}}"
  r=$(proto_per_call $which LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE")
  printf '%-10s %-30s %10s %+11d %+11d\n' "fx_$which" "armed, not firing (nth)" "$r" "$(( r - base ))" "$(( r - floor ))"
  reset_table "{\"symbol\":\"fx_$which\",\"prototype\":\"$proto\",\"position\":\"instead\",\"action\":{\"return\":7},\"when\":{\"args\":[{\"arg\":0,\"eq\":-5}]}}"
  r=$(proto_per_call $which LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE")
  printf '%-10s %-30s %10s %+11d %+11d\n' "fx_$which" "armed, int condition false" "$r" "$(( r - base ))" "$(( r - floor ))"
  reset_table "{\"symbol\":\"fx_$which\",\"prototype\":\"$proto\",\"position\":\"instead\",\"action\":{\"return\":7}}"
  r=$(proto_per_call $which LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE")
  printf '%-10s %-30s %10s %+11d %+11d\n' "fx_$which" "firing instead" "$r" "$(( r - base ))" "$(( r - floor ))"
done
latency "add prototype rule -> first advised call" "$WORK/proto_bench wait" \
  '{"symbol":"fx_one","prototype":"int fx_one(int a)","position":"instead","action":{"return":42}}' \
  '{"symbol":"getppid","position":"before","action":{"log":true},"when":{"nth":1000000000}}'

echo
echo "start-up of /bin/true"
startup() { valgrind --tool=callgrind --callgrind-out-file=/dev/null --trace-children=yes env "$@" /bin/true 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p' | tail -1; }
wall() { local s e; s=$(date +%s%N); for _ in $(seq 200); do env "$@" /bin/true; done; e=$(date +%s%N); echo "$(( (e - s) / 1000000 )) ms"; }
reset_table '{"symbol":"fsync","position":"instead","action":{"fail":true}}'
printf '%-28s %14s %12s\n' state instructions "200 runs"
printf '%-28s %14s %12s\n' "no preload" "$(startup)" "$(wall)"
printf '%-28s %14s %12s\n' "preload, no table" "$(startup LD_PRELOAD="$LIB")" "$(wall LD_PRELOAD="$LIB")"
printf '%-28s %14s %12s\n' "preload, table" "$(startup LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE")" "$(wall LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE")"
if command -v fiu-run >/dev/null; then
  printf '%-28s %14s %12s\n' "libfiu (fiu-run -x)" "$(instructions_cmd 0 fiu-run -x /bin/true)" "-"
fi

echo
echo "memory: RSS of a process that sleeps (kB, from /proc)"
rss() { env "$@" sleep 0.3 & local p=$!; sleep 0.15; awk '/VmRSS/ {print $2}' /proc/$p/status; wait $p; }
printf '%-28s %10s\n' "no preload" "$(rss)"
printf '%-28s %10s\n' "preload, table" "$(rss LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE")"

echo
echo "from \`aspectctl add\` publishing a rule (its addedNs) to a running program's first advised call (median of 5)"
cc -O2 -o "$WORK/spin" Benchmarks/add_latency.c
latency "add -> first advised call" "$WORK/spin" '{"symbol":"getppid","position":"instead","action":{"return":42}}'

# ---- advice as code: what a `call` rule costs (Sources/CPreload/dispatch/advice_call.c) ----
echo
echo "advice as code: a \`call\` advice that returns at once, beside the closure floor (every call fires and records its event)"
cat > "$WORK/noop_advice.c" <<'ADVICE'
#include <aspects_advice.h>
void noop(aspects_invocation *inv) { (void)inv; }
void proceed(aspects_invocation *inv) { aspects_proceed(inv); }
ADVICE
cc -shared -fPIC -O2 -I Sources/CPreload/include -o "$WORK/libnoop_advice.so" "$WORK/noop_advice.c"
call_row() { printf '%-10s %-30s %10s %11s %11s\n' "$@"; }
call_row function state instr/call "over direct" "over floor"
for fn in getppid write; do
  base=$(per_call "$fn")
  floor=$(floor_per_call "$fn")
  call_row "$fn" "direct (no preload)" "$base" - -
  call_row "$fn" "closure floor (libffi)" "$floor" - -
  for state in "before:log" "before:call, returns" "instead:call, proceeds" "after:call, returns"; do
    pos=${state%%:*} what=${state#*:}
    case $what in
      log) act='{"log":true}' ;;
      "call, proceeds") act="{\"call\":\"$WORK/libnoop_advice.so:proceed\"}" ;;
      *) act="{\"call\":\"$WORK/libnoop_advice.so:noop\"}" ;;
    esac
    reset_table "{\"symbol\":\"$fn\",\"position\":\"$pos\",\"action\":$act}"
    r=$(per_call "$fn" LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE")
    call_row "$fn" "$pos, $what" "$r" "+$(( r - base ))" "+$(( r - floor ))"
  done
done

echo
echo "a \`call\` rule's object is loaded when a process attaches: start-up of /bin/true, and RSS of sleep (kB)"
swift build -c release --package-path config/examples/advice-swift --scratch-path "$WORK/advice-swift" >/dev/null 2>&1
# valgrind 3.19 cannot read the DWARF 5 swiftc writes: a copy without it
cp "$WORK/advice-swift/release/libWriteSizes.so" "$WORK/libWriteSizes.so" && strip --strip-debug "$WORK/libWriteSizes.so"
printf '%-28s %14s %12s %10s\n' "object in the table" instructions "200 runs" "RSS"
for which in "none (a fail rule)" "C advice" "Swift advice"; do
  case $which in
    none*) reset_table '{"symbol":"fsync","position":"instead","action":{"fail":true}}' ;;
    C*) reset_table "{\"symbol\":\"write\",\"position\":\"after\",\"action\":{\"call\":\"$WORK/libnoop_advice.so:noop\"}}" ;;
    *) reset_table "{\"symbol\":\"write\",\"position\":\"after\",\"action\":{\"call\":\"$WORK/libWriteSizes.so:record_write_size\"}}" ;;
  esac
  printf '%-28s %14s %12s %10s\n' "$which" "$(startup LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE")" \
    "$(wall LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE")" "$(rss LD_PRELOAD="$LIB" ASPECTS_TABLE="$TABLE")"
done
