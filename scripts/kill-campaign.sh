#!/usr/bin/env bash
# scripts/kill-campaign.sh — the writer-kill campaign of issue 10 at full size: N kills
# (default 1500, over 1,000 of them inside the lock) of aspectctl writers — add batches of
# 24 rules and an autoRemove rule the callers fire (retired by the next writer), remove --all,
# create — SIGKILLed at a step of the batch (ASPECTS_TEST_WRITER_STOP: each step at least
# once, then at random) or at a random moment, while 8 processes call the advised functions.
# After each kill: the batch is whole or absent, a rolled-back batch adds again, no rule id is
# doubled, a created table is whole or missing and leaves no file behind. Prints the kills, how
# many landed inside the lock, the kills per step and the failures (all must be 0). The suite
# runs the same test with 200 kills. CAMPAIGNS.md records the last full run.
#
# Usage: scripts/kill-campaign.sh [N]    (SCRATCH=.build-x to build elsewhere than .build)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
N=${1:-1500}
SCRATCH=${SCRATCH:-.build}
swift build --scratch-path "$SCRATCH" --build-tests >/dev/null
start=$(date +%s)
ASPECTS_KILL_ROUNDS=$N swift test --scratch-path "$SCRATCH" --skip-build --filter 'WriterKillTests/twoHundredRandomKills' 2>&1 |
    grep -E 'writer kills|seconds by kind|✘|passed after|failed after'
echo "campaign: $N kills requested, $(( $(date +%s) - start )) s"
