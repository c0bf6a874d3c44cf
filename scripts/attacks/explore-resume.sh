#!/bin/bash
# Issue 23 item 3, by hand: does an interrupted campaign, resumed, end with the uninterrupted
# campaign's runs? Each round starts a campaign (a shell loop of six writes, -j 2), interrupts
# it after a random 0.3-2 s with SIGINT or SIGKILL (half each), and runs the same command with
# --resume until one ends; its runs (point and outcome) are compared with an uninterrupted
# campaign's, and its journal must hold each run once.
#   scripts/attacks/explore-resume.sh [ROUNDS] [ASPECTCTL] [LIBASPECTS]
# Prints rounds same/differing, kills, resumes, cut-short journal lines said, and errors.
set -u
ROUNDS=${1:-10}
CTL=${2:-$PWD/.build/debug/aspectctl}
export ASPECTS_PRELOAD=${3:-$PWD/.build/debug/libaspects.so}
W=$(mktemp -d /tmp/explore-resume.XXXXXX)
trap 'rm -rf "$W"' EXIT
script='for i in 1 2 3 4 5 6; do echo $i > f$i; sleep 0.05; done; cat f1'
opts=(--function write --strategy both -j 2 --timeout 30)
runs() { python3 -c 'import json, sys
print("\n".join("%s %s %s" % (r["index"], r["point"], r["outcome"]) for r in json.load(open(sys.argv[1]))["runs"]))' "$1"; }
"$CTL" explore "${opts[@]}" --out "$W/ref" --json "$W/ref.json" -- /bin/sh -c "$script" >/dev/null
runs "$W/ref.json" > "$W/ref.txt"
planned=$(wc -l < "$W/ref.txt")
[ "$planned" -gt 0 ] || { echo "the uninterrupted campaign planned no run" >&2; exit 2; }
same=0 differ=0 kills=0 resumes=0 cut=0 errors=0
for round in $(seq 1 "$ROUNDS"); do
  out=$W/r$round
  resume=()
  while :; do
    "$CTL" explore "${opts[@]}" "${resume[@]}" --out "$out" --json "$out.json" -- /bin/sh -c "$script" >/dev/null 2>"$W/err" &
    pid=$!
    sleep "$(awk -v s=$RANDOM 'BEGIN { srand(s); printf "%.2f", 0.3 + rand() * 1.7 }')"
    if kill -0 "$pid" 2>/dev/null; then
      if (( RANDOM % 2 )); then kill -INT "$pid"; else kill -KILL "$pid"; fi
      kills=$((kills + 1))
    fi
    wait "$pid" 2>/dev/null; status=$?
    grep -q "cut short" "$W/err" && cut=$((cut + 1))
    [ -f "$out.json" ] && (( status <= 1 )) && break
    if (( status != 130 && status != 137 )); then errors=$((errors + 1)); echo "round $round: exit $status: $(cat "$W/err")"; fi
    resume=(--resume)
    resumes=$((resumes + 1))
  done
  runs "$out.json" > "$out.txt"
  if cmp -s "$W/ref.txt" "$out.txt"; then same=$((same + 1)); else differ=$((differ + 1)); diff "$W/ref.txt" "$out.txt" | head -5; fi
  twice=$(tail -n +2 "$out/journal.jsonl" | python3 -c 'import collections, json, sys
print(sum(1 for n in collections.Counter(json.loads(l)["index"] for l in sys.stdin).values() if n > 1))')
  (( twice > 0 )) && echo "round $round: $twice run(s) journaled twice"
done
echo "plan of $planned runs; $ROUNDS rounds: $same the same as uninterrupted, $differ differ; $kills kills, $resumes resumes, $cut cut-short lines said, $errors errors"
