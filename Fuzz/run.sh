#!/usr/bin/env bash
# Fuzz/run.sh — the hostile-input campaign of issue 10, repeatable: builds each libFuzzer
# target and runs it for a while on its committed corpus, then prints per target the
# executions, exec/s, coverage (libFuzzer's final cov/ft), the corpus size and the findings.
# FUZZING.md says what each target feeds where.
#
#   C (clang -fsanitize=fuzzer,address,undefined, the preload's sources #included):
#     table         the preload attaching a table of the input's bytes (segment + anchor), copying every
#                   group's rules, counting, claiming and appending events as a firing does
#     signature     the table's prototype entries: validated, made into libffi interfaces
#                   and stubs (real libffi), applied to a fake object's GOT, called, removed
#     elf           proto.c's walk over an object made of the input's bytes, found through
#                   dl_iterate_phdr or a fake link map (r_debug chain); writes stay inside it
#   Swift (swiftc -sanitize=fuzzer,address, the Swift layers' sources as one module in one binary):
#     json, rules, prototype, catalog, table-reader   (see Fuzz/swift/FuzzEntry.swift)
#
# The minimized merge of the corpus Fuzz/corpus/<target>/ and the run's new inputs (the
# smallest set that keeps every feature) goes to Fuzz/out/<target>/merged/; the committed
# corpus is left as it is unless --update-corpus asks for it to be replaced by the merge.
# Crashes, timeouts and leaks go to Fuzz/out/<target>/ (git-ignored), logs to
# Fuzz/out/<target>.log. Fuzzers run under nice -n 19, one at a time.
#
# Usage: Fuzz/run.sh [TARGET...] [--time SECONDS] [--update-corpus]
#                                                   every target (default), 60 s each (default)
#        Fuzz/run.sh --replay [TARGET...]           run every corpus input and every reproducer
#                                                   not listed in Fuzz/regressions/OPEN once
#                                                   (no fuzzing): exit 1 if any fails
# Exit status: 1 when any target found a crash (or a replayed input failed), 2 on a build error.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# The Swift layers the Swift targets exercise (Package.swift), in dependency order.
LAYERS=(AspectsCore AspectsRules AspectsTable AspectsPreflight AspectsExplore AspectsCodegen)
OUT=$ROOT/Fuzz/out
TIME=60
REPLAY=0
UPDATE=0
TARGETS=()
ALL=(table signature elf json rules prototype catalog table-reader)
while [ $# -gt 0 ]; do
    case "$1" in
        --time) TIME=$2; shift 2 ;;
        --replay) REPLAY=1; shift ;;
        --update-corpus) UPDATE=1; shift ;;
        -h|--help) sed -n '2,29p' "$0"; exit 0 ;;
        *) TARGETS+=("$1"); shift ;;
    esac
done
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=("${ALL[@]}")
mkdir -p "$OUT/bin" "$OUT/modules/CAspectsABI"
# Swift's own crash reporter would catch a trap before libFuzzer does (and confuses ASan).
export SWIFT_BACKTRACE=enable=no

build_c() { # TARGET: Fuzz/c/TARGET_fuzz.c
    local t=$1 src=$ROOT/Fuzz/c/$1_fuzz.c
    [ "$OUT/bin/$t" -nt "$src" ] && [ -z "$(find "$ROOT/Sources/CPreload" "$ROOT/Sources/CAspectsABI" -newer "$OUT/bin/$t" -name '*.[ch]' | head -1)" ] && return 0
    echo "fuzz: building $t (C)" >&2
    clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -fuse-ld=lld \
        $(find "$ROOT/Sources/CPreload" -type d | sort | sed 's/^/-I/') -I"$ROOT/Sources/CAspectsABI/include" \
        "$src" "$ROOT/Sources/CAspectsABI/table_trust.c" -o "$OUT/bin/$t" -ldl -lpthread
}

build_swift() {
    local newest
    newest=$(find "${LAYERS[@]/#/$ROOT/Sources/}" "$ROOT/Sources/CAspectsABI" "$ROOT/Fuzz/swift" -type f -newer "$OUT/bin/swift-fuzz" 2>/dev/null | head -1)
    [ -x "$OUT/bin/swift-fuzz" ] && [ -z "$newest" ] && return 0
    echo "fuzz: building the Swift targets (a few minutes)" >&2
    cat > "$OUT/modules/CAspectsABI/module.modulemap" <<MAP
module CAspectsABI {
    umbrella "$ROOT/Sources/CAspectsABI/include"
    export *
}
MAP
    clang -c -O1 -fsanitize=address "$ROOT/Sources/CAspectsABI/table_trust.c" -I"$ROOT/Sources/CAspectsABI/include" -o "$OUT/bin/table_trust.o" || return 1
    # The layers' sources as one module: their imports of each other dropped (the names are
    # one module's then), `package` API visible within it (-package-name). A file is copied
    # under its layer's and folder's name, since two layers may hold files of one name.
    local src=$OUT/swift-src layer f
    rm -rf "$src" && mkdir -p "$src"
    for layer in "${LAYERS[@]}"; do
        while IFS= read -r f; do
            sed -E '/^(@_exported |@testable )?import Aspects[A-Za-z]*$/d' "$f" > "$src/$(echo "${f#"$ROOT/Sources/"}" | tr / _)"
        done < <(find "$ROOT/Sources/$layer" -name '*.swift')
    done
    # -num-threads 1: one core of two, the other is the running fuzzer's
    nice -n 10 swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name AspectsFuzz -package-name aspects -num-threads 1 \
        -I "$OUT/modules" "$src"/*.swift "$ROOT/Fuzz/swift/FuzzEntry.swift" \
        "$OUT/bin/table_trust.o" -o "$OUT/bin/swift-fuzz" >"$OUT/build-swift.log" 2>&1 \
        || { grep -E 'error' "$OUT/build-swift.log" >&2; return 1; }
}

# target -> binary and environment
setup() {
    case "$1" in
        table|signature|elf) build_c "$1" || exit 2; bin=$OUT/bin/$1; envs=(FUZZ_TARGET=$1) ;;
        json|rules|prototype|catalog|table-reader) build_swift || exit 2; bin=$OUT/bin/swift-fuzz; envs=(FUZZ_TARGET=$1) ;;
        *) echo "fuzz: unknown target $1 (one of: ${ALL[*]})" >&2; exit 2 ;;
    esac
}

if [ $REPLAY = 1 ]; then
    status=0
    for t in "${TARGETS[@]}"; do
        setup "$t"
        # The corpus as it was fuzzed (FUZZ_SKIP_OPEN=1); every reproducer not listed in
        # Fuzz/regressions/OPEN as it is, one by one.
        ok=1 n=0
        : >"$OUT/replay-$t.log"
        if [ -d "$ROOT/Fuzz/corpus/$t" ]; then
            n=$(find "$ROOT/Fuzz/corpus/$t" -type f | wc -l)
            env "${envs[@]}" FUZZ_SKIP_OPEN=1 "$bin" -runs=0 -timeout=20 -rss_limit_mb=2048 -artifact_prefix="$OUT/replay-$t-" \
                "$ROOT/Fuzz/corpus/$t" >>"$OUT/replay-$t.log" 2>&1 || ok=0
        fi
        for f in "$ROOT/Fuzz/regressions/$t"/*; do
            [ -f "$f" ] || continue
            grep -qs "^$t/$(basename "$f")\b" "$ROOT/Fuzz/regressions/OPEN" && { echo "replay $t: $(basename "$f") skipped (open, see Fuzz/regressions/OPEN)"; continue; }
            n=$((n + 1))
            env "${envs[@]}" "$bin" -runs=1 -timeout=20 -rss_limit_mb=2048 -artifact_prefix="$OUT/replay-$t-" "$f" >>"$OUT/replay-$t.log" 2>&1 || ok=0
        done
        if [ $ok = 1 ]; then
            echo "replay $t: $n inputs, no failure"
        else
            echo "replay $t: FAILED (log: $OUT/replay-$t.log)"; status=1
        fi
    done
    exit $status
fi

status=0
report=()
for t in "${TARGETS[@]}"; do
    setup "$t"
    corpus=$ROOT/Fuzz/corpus/$t fresh=$OUT/$t/new crashes=$OUT/$t
    mkdir -p "$corpus" "$fresh" "$crashes"
    log=$OUT/$t.log
    before=$(find "$crashes" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'slow-unit-*' \) | wc -l)
    echo "fuzz: $t for ${TIME}s" >&2
    # FUZZ_SKIP_OPEN=1: the C targets step around findings still open (Fuzz/regressions/OPEN),
    # so that one open finding does not end every run
    (cd "$OUT" && env "${envs[@]}" FUZZ_SKIP_OPEN=1 nice -n 19 "$bin" -max_total_time="$TIME" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="$crashes/" -print_final_stats=1 "$fresh" "$corpus" >"$log" 2>&1)
    rc=$?
    # The corpus minimized: the smallest set of old and new inputs that keeps every feature
    # (libFuzzer's merge into an empty directory), kept in Fuzz/out/<target>/merged; it takes
    # the committed corpus's place only with --update-corpus.
    min=$OUT/$t/merged
    rm -rf "$min"; mkdir -p "$min"
    if (cd "$OUT" && env "${envs[@]}" FUZZ_SKIP_OPEN=1 nice -n 19 "$bin" -merge=1 -timeout=10 -rss_limit_mb=2048 "$min" "$corpus" "$fresh" >"$OUT/$t.merge.log" 2>&1) \
        && [ -n "$(ls -A "$min")" ]; then
        if [ $UPDATE = 1 ]; then
            find "$corpus" -type f -delete
            cp "$min"/* "$corpus"/
        else
            corpus=$min # the sizes below are the merge's
        fi
    fi
    rm -rf "$fresh"
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    persec=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    secs=$(grep -o 'Done [0-9]* runs in [0-9]* second' "$log" | grep -o 'in [0-9]*' | grep -o '[0-9]*' | tail -1)
    line=$(grep -E '^#[0-9]+\s+(DONE|pulse|NEW|REDUCE|INITED)' "$log" | tail -1)
    cov=$(echo "$line" | grep -o 'cov: [0-9]*' | grep -o '[0-9]*')
    ft=$(echo "$line" | grep -o 'ft: [0-9]*' | grep -o '[0-9]*')
    after=$(find "$crashes" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' -o -name 'slow-unit-*' \) | wc -l)
    found=$((after - before))
    files=$(find "$corpus" -type f | wc -l)
    kb=$(( $(find "$corpus" -type f -exec cat {} + | wc -c) / 1024 ))
    report+=("$(printf '%-13s %7s %12s %8s %7s %7s %7s %7s %s' "$t" "${secs:-?}" "${execs:-?}" "${persec:-?}" "${cov:-?}" "${ft:-?}" "$files" "${kb}K" "$found")")
    if [ "$found" -gt 0 ] || { [ $rc -ne 0 ] && ! grep -q 'Done [0-9]* runs' "$log"; }; then
        status=1
        report+=("  findings in $crashes/ (log: $log)")
    fi
done
printf '%-13s %7s %12s %8s %7s %7s %7s %7s %s\n' target seconds execs exec/s cov ft corpus size findings
printf '%s\n' "${report[@]}"
exit $status
