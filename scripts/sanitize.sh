#!/usr/bin/env bash
# scripts/sanitize.sh — libaspects.so under the sanitizers, running the preload's test fixtures
# with rules in a table (issue 10, "Sanitizers").
#
#   asan   the preload built with -fsanitize=address,undefined, preloaded after clang's ASan
#          runtime (which must come first in LD_PRELOAD) into the ordinary fixtures;
#   tsan   the preload built with -fsanitize=thread. TSan's runtime must live in the main
#          program, so every fixture is rebuilt with -fsanitize=thread and linked against
#          libaspects-tsan.so as its first library (its wrappers then come before libc's, as
#          with LD_PRELOAD, and TSan's interceptors in the program come before both). No
#          LD_PRELOAD here: the symbolizer TSan starts must not load an instrumented library.
#
# Each scenario gets a fresh table (aspectctl from the normal Swift build writes it), its
# rules, and for some a writer that adds and removes rules for as long as the program runs.
# Sanitizer logs go to .build-sanitize/logs/; the summary lists every report by the first
# frame in the preload's sources. Exit status: 0 when every run was clean and succeeded, 1 on
# any sanitizer report or failed run, 2 when the tools are missing. CAMPAIGNS.md records the
# last full run.
#
# Usage: scripts/sanitize.sh [--only asan|tsan] [--scenario NAME] [--list]
# Environment: ASPECTCTL (a built aspectctl; default: built with `swift build` in
# SWIFT_SCRATCH, default .build), CLANG (default clang), SANITIZE_SECONDS (length of the
# timed scenarios, default 5).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
HERE=$ROOT/scripts/sanitize
OUT=$ROOT/.build-sanitize
CLANG=${CLANG:-clang}
SECONDS_PER_RUN=${SANITIZE_SECONDS:-5}
ONLY=""
SCENARIO_FILTER=""
LIST=0
while [ $# -gt 0 ]; do
    case "$1" in
        --only) ONLY=$2; shift 2 ;;
        --scenario) SCENARIO_FILTER=$2; shift 2 ;;
        --list) LIST=1; shift ;;
        -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
        *) echo "sanitize: unknown argument $1" >&2; exit 2 ;;
    esac
done

source "$HERE/build.sh"
source "$HERE/reports.sh"
source "$HERE/scenarios.sh"

if [ "$LIST" = 1 ]; then
    printf '%s\n' "${SCENARIOS[@]}"
    exit 0
fi

mkdir -p "$OUT/logs" "$OUT/tables" "$OUT/fx"
rm -rf "$OUT"/logs/*

sanitize_find_tools || exit 2
sanitize_build_aspectctl || exit 2
# the last run's tables: destroyed (a table's segment outlives its file), then removed
for t in "$OUT"/tables/*; do [ -f "$t" ] && "$ASPECTCTL" destroy --table "$t" >/dev/null 2>&1; done
rm -rf "$OUT"/tables/*
sanitize_build_preloads || exit 2
sanitize_build_fixtures || exit 2

# Before trusting "0 reports": a planted bug must be seen by the same log scan.
sanitize_self_check || exit 1

RUNS=0
FAILED_RUNS=0
REPORTS=0
SUMMARY=()
for san in asan tsan; do
    [ -n "$ONLY" ] && [ "$ONLY" != "$san" ] && continue
    for scenario in "${SCENARIOS[@]}"; do
        [ -n "$SCENARIO_FILTER" ] && [ "$SCENARIO_FILTER" != "$scenario" ] && continue
        if ! run_scenario "$scenario" "$san"; then # its table or rules could not be set up
            RUNS=$((RUNS + 1))
            FAILED_RUNS=$((FAILED_RUNS + 1))
            SUMMARY+=("$(printf '  %-22s %-6s %s' "$scenario" "$san" setup-failed)")
        fi
    done
done

echo
echo "sanitize: summary"
printf '  %-22s %-6s %-8s %-8s %s\n' scenario san status reports fired
printf '%s\n' "${SUMMARY[@]}"
echo
sanitize_list_reports "$OUT/logs"
echo "sanitize: $RUNS runs: $((RUNS - FAILED_RUNS)) passed, $FAILED_RUNS failed; $REPORTS sanitizer reports (logs: ${OUT#"$ROOT"/}/logs)"
[ "$FAILED_RUNS" = 0 ] && [ "$REPORTS" = 0 ]
