#!/usr/bin/env bash
# Fuzz/run.sh — the hostile-input campaign of issue 10, repeatable: builds each libFuzzer
# target and runs it for a while on its committed corpus, then prints per target the
# executions, exec/s, coverage (libFuzzer's cov/ft), the corpus size and the findings.
#
#   C (clang -fsanitize=fuzzer,address,undefined):
#     table      the preload attaching a table file of the input's bytes and copying every
#                group's rules (table.c, rulecache.c, counters.c, glob.c): mode 0 takes the
#                header from the input, mode 1 patches a valid table anywhere
#     elf        proto.c's walk over an object made of the input's bytes (dynamic section,
#                relocations, symbols, strings, versions): reads and writes stay inside it
#   Swift (swiftc -sanitize=fuzzer,address, the AspectConfig sources in one binary):
#     json, rules, prototype, catalog, swift-table (see Fuzz/swift/FuzzEntry.swift)
#
# New inputs are merged back into Fuzz/corpus/<target>/ (minimized); crashes go to
# Fuzz/out/<target>/ (git-ignored). Exit status 1 when any target found a crash.
#
# Usage: Fuzz/run.sh [--time SECONDS] [TARGET...]     (default: every target, 60 s each)
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=$ROOT/Fuzz/out
TIME=60
TARGETS=()
while [ $# -gt 0 ]; do
    case "$1" in
        --time) TIME=$2; shift 2 ;;
        -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
        *) TARGETS+=("$1"); shift ;;
    esac
done
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=(table elf json rules prototype catalog swift-table)
mkdir -p "$OUT/bin" "$OUT/modules/CAspectsABI"

build_c() { # TARGET: Fuzz/c/TARGET_fuzz.c
    local t=$1 src=$ROOT/Fuzz/c/$1_fuzz.c
    [ "$OUT/bin/$t" -nt "$src" ] && [ -z "$(find "$ROOT/Sources/CPreload" "$ROOT/Sources/CAspectsABI" -newer "$OUT/bin/$t" -name '*.[ch]' | head -1)" ] && return 0
    echo "fuzz: building $t (C)" >&2
    clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -fuse-ld=lld \
        -I"$ROOT/Sources/CPreload" -I"$ROOT/Sources/CPreload/generated" -I"$ROOT/Sources/CAspectsABI/include" \
        "$src" "$ROOT/Sources/CAspectsABI/table_trust.c" -o "$OUT/bin/$t" -ldl
}

build_swift() {
    local newest
    newest=$(find "$ROOT/Sources/AspectConfig" "$ROOT/Fuzz/swift" -name '*.swift' -newer "$OUT/bin/swift-fuzz" 2>/dev/null | head -1)
    [ -x "$OUT/bin/swift-fuzz" ] && [ -z "$newest" ] && return 0
    echo "fuzz: building the Swift targets (this takes a minute or two)" >&2
    cat > "$OUT/modules/CAspectsABI/module.modulemap" <<MAP
module CAspectsABI {
    umbrella "$ROOT/Sources/CAspectsABI/include"
    export *
}
MAP
    clang -c -O1 -fsanitize=address "$ROOT/Sources/CAspectsABI/table_trust.c" -I"$ROOT/Sources/CAspectsABI/include" -o "$OUT/bin/table_trust.o"
    swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name AspectConfig \
        -I "$OUT/modules" $(find "$ROOT/Sources/AspectConfig" -name '*.swift') "$ROOT/Fuzz/swift/FuzzEntry.swift" \
        "$OUT/bin/table_trust.o" -o "$OUT/bin/swift-fuzz"
}

status=0
printf '%-12s %8s %12s %9s %8s %8s %8s %s\n' target seconds execs exec/s cov ft corpus findings
for t in "${TARGETS[@]}"; do
    case "$t" in
        table|elf) build_c "$t" || exit 2; bin=$OUT/bin/$t; env=() ;;
        json|rules|prototype|catalog|swift-table) build_swift || exit 2; bin=$OUT/bin/swift-fuzz; env=(FUZZ_TARGET=${t#swift-}) ;;
        *) echo "fuzz: unknown target $t" >&2; exit 2 ;;
    esac
    corpus=$ROOT/Fuzz/corpus/$t fresh=$OUT/$t/new crashes=$OUT/$t
    mkdir -p "$corpus" "$fresh" "$crashes"
    log=$OUT/$t.log
    env "${env[@]}" nice -n 19 "$bin" -max_total_time="$TIME" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$crashes/" -print_final_stats=1 "$fresh" "$corpus" >"$log" 2>&1
    rc=$?
    # Keep what is new, minimized, in the committed corpus.
    env "${env[@]}" "$bin" -merge=1 "$corpus" "$fresh" >>"$log" 2>&1
    rm -rf "$fresh"
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    secs=$(grep -o 'Done [0-9]* runs in [0-9]* second' "$log" | grep -o 'in [0-9]*' | grep -o '[0-9]*' | tail -1)
    line=$(grep -E '#[0-9]+\s+(DONE|pulse|NEW|REDUCE)' "$log" | tail -1)
    cov=$(echo "$line" | grep -o 'cov: [0-9]*' | grep -o '[0-9]*')
    ft=$(echo "$line" | grep -o 'ft: [0-9]*' | grep -o '[0-9]*')
    found=$(find "$crashes" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
    persec=$(( ${execs:-0} / (${secs:-1} > 0 ? ${secs:-1} : 1) ))
    printf '%-12s %8s %12s %9s %8s %8s %8s %s\n' "$t" "${secs:-?}" "${execs:-?}" "$persec" "${cov:-?}" "${ft:-?}" "$(ls "$corpus" | wc -l)" "$found"
    if [ "$found" -gt 0 ] || { [ $rc -ne 0 ] && ! grep -q 'Done [0-9]* runs' "$log"; }; then status=1; echo "  findings: $crashes (log: $log)"; fi
done
exit $status
