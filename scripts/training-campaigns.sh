#!/usr/bin/env bash
# scripts/training-campaigns.sh — explore's training set (docs/bugs.md): campaigns on programs
# nobody here wrote, each with an integrity check, and a table of what each reported.
#
# Usage: scripts/training-campaigns.sh [--aspectctl PATH] [--out DIR] [--only PROGRAM] [--campaign NAME]
#
# Per program (sed, jq, bison with its m4 child, cflow, diff, xz, bzip2) three campaigns:
#   mem       malloc, calloc and realloc, every call site (--strategy sites)
#   context   the same functions, every calling context (--strategy context)
#   io        the stdio and I/O functions it calls (--strategy sites)
# No campaign has a hand-written --check: explore's own integrity check is the baseline's
# working directory and stdout (a run that exits as the baseline did but leaves other files or
# loses output is a silent-difference), which tells a file emptied from a file left unchanged
# where a check would say only "failed". bison's campaigns fault m4, its child, too.
# Prints one line per campaign (runs, findings, bugs, fail-fast stops, seconds) and leaves each
# campaign's JSON, text report and reproducers in DIR/PROGRAM-CAMPAIGN/.
set -euo pipefail
cd "$(dirname "$0")/.."
ASPECTCTL=${ASPECTCTL:-.build/debug/aspectctl}
OUT=""
ONLY=""
CAMPAIGN=""
while [ $# -gt 0 ]; do
    case $1 in
        --aspectctl) ASPECTCTL=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        --only) ONLY=$2; shift 2 ;;
        --campaign) CAMPAIGN=$2; shift 2 ;;
        *) echo "usage: $0 [--aspectctl PATH] [--out DIR] [--only PROGRAM] [--campaign mem|context|io]" >&2; exit 64 ;;
    esac
done
[ -x "$ASPECTCTL" ] || { echo "training-campaigns: $ASPECTCTL is not built (swift build)" >&2; exit 1; }
ASPECTCTL=$(cd "$(dirname "$ASPECTCTL")" && pwd)/$(basename "$ASPECTCTL")
[ -n "$OUT" ] || OUT=$(mktemp -d "${TMPDIR:-/tmp}/aspects-training.XXXXXX")
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
INPUTS=$OUT/inputs
mkdir -p "$INPUTS"

# The inputs, made once; each run's --setup copies them into its fresh directory.
printf 'foo bar\nsecond foo line\nthird\n' > "$INPUTS/f.txt"
printf '{"a":[1,2,{"b":"foo"}],"c":"bar","d":{"e":null}}\n{"a":[],"c":"x"}\n' > "$INPUTS/in.json"
cp scripts/inputs/calc.y "$INPUTS/calc.y"   # also the grammar Benchmarks/survey.sh times bison on
cat > "$INPUTS/f.c" <<'EOF'
#include <stdio.h>
static int square(int x) { return x * x; }
static void show(int v) { printf("%d\n", v); }
int main(void) { for (int i = 0; i < 3; i++) show(square(i)); return 0; }
EOF
printf 'one\ntwo\nthree\nfour\n' > "$INPUTS/a.txt"
printf 'one\n2\nthree\nfour\nfive\n' > "$INPUTS/b.txt"
head -c 200000 /usr/share/common-licenses/GPL-3 2>/dev/null > "$INPUTS/data" || seq 1 30000 > "$INPUTS/data"

# program | command | setup | the images faulted (--process) | the I/O functions of its io campaign
define() { PROGRAMS+=("$1"); CMD[$1]=$2; SETUP[$1]=$3; PROCESS[$1]=$4; IO[$1]=$5; }
declare -A CMD SETUP PROCESS IO
PROGRAMS=()
cp_in="cp $INPUTS/"
define sed "sed -i s/foo/baz/g f.txt" "${cp_in}f.txt ." \
    sed \
    "fopen,fread,getdelim,fwrite,fputs,fflush,fclose,read,write,rename,open,close"
define jq "jq -c .a in.json" "${cp_in}in.json ." \
    jq \
    "fopen,fread,fwrite,fputs,fflush,fclose,read,write,open,close,getline,fgets"
define bison "bison -d -o calc.c calc.y" "${cp_in}calc.y ." \
    bison,m4 \
    "fopen,fread,fwrite,fputs,fflush,fclose,read,write,open,close,pipe,fork,posix_spawn,getdelim"
define cflow "cflow -o out f.c" "${cp_in}f.c ." \
    cflow \
    "fopen,fread,fwrite,fputs,fflush,fclose,read,write,open,close,getc"
define diff "diff a.txt b.txt" "${cp_in}a.txt . && ${cp_in}b.txt ." \
    diff \
    "open,openat,read,write,close,fstat,fwrite,fflush,fclose"
define xz "xz data" "${cp_in}data ." \
    xz \
    "open,openat,read,write,close,fsync,fchmod,fchown,unlink"
define bzip2 "bzip2 data" "${cp_in}data ." \
    bzip2 \
    "fopen,fread,fwrite,fflush,fclose,open,read,write,close,unlink,fchmod,fchown"

functions_of() { local f out=(); IFS=, read -ra f <<< "$1"; for x in "${f[@]}"; do out+=(--function "$x"); done; echo "${out[@]}"; }

printf '%-7s %-8s %5s %8s %5s %9s %8s\n' program campaign runs findings bugs fail-fast seconds
for p in "${PROGRAMS[@]}"; do
    [ -z "$ONLY" ] || [ "$ONLY" = "$p" ] || continue
    command -v "${CMD[$p]%% *}" >/dev/null || { echo "$p: not installed, skipped" >&2; continue; }
    for c in mem context io; do
        [ -z "$CAMPAIGN" ] || [ "$CAMPAIGN" = "$c" ] || continue
        case $c in
            mem) opts=(--function malloc --function calloc --function realloc --strategy sites) ;;
            context) opts=(--function malloc --function calloc --function realloc --strategy context) ;;
            io) read -ra opts <<< "$(functions_of "${IO[$p]}") --strategy sites" ;;
        esac
        dir=$OUT/$p-$c
        rm -rf "$dir" "$dir.json"
        start=$(date +%s.%N)
        set +e
        # shellcheck disable=SC2086
        "$ASPECTCTL" explore "${opts[@]}" $(printf -- '--process %s ' ${PROCESS[$p]//,/ }) --max-runs 400 --setup "${SETUP[$p]}" \
            --out "$dir" --json "$dir.json" -- ${CMD[$p]} > "$dir.txt" 2> "$dir.err"
        status=$?
        set -e
        seconds=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
        if [ ! -s "$dir.json" ]; then
            printf '%-7s %-8s %s\n' "$p" "$c" "no report (exit $status): $(tail -n 2 "$dir.err" | tr '\n' ' ')"
            continue
        fi
        python3 - "$dir.json" "$p" "$c" "$seconds" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
runs = r["runs"]
findings = [x for x in runs if x.get("outcome") in ("crash", "hang", "check-failed", "silent-difference")]
print("%-7s %-8s %5d %8d %5d %9d %8.1f" % (sys.argv[2], sys.argv[3], len(runs), len(findings), len(r["bugs"]),
      len(r.get("failFast", [])), float(sys.argv[4])))
EOF
    done
done
echo "reports in $OUT"
