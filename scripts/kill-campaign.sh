#!/usr/bin/env bash
# scripts/kill-campaign.sh — the writer-kill campaign of issue 10 at full size: N (default
# 1000) aspectctl writers (add batches of 24 rules, remove --all; autoRemove retirement and
# every step of a batch are covered by the suite's step test) SIGKILLed at random moments
# while 8 processes call the advised functions, checking after each kill that the batch is
# whole or absent. Prints the kills, how many landed inside the lock and how many partial
# batches were seen (must be 0). The suite runs the same test with 200 kills.
#
# Usage: scripts/kill-campaign.sh [N]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
N=${1:-1000}
swift build --build-tests >/dev/null
ASPECTS_KILL_ROUNDS=$N swift test --skip-build --filter 'WriterKillTests' 2>&1 | grep -E 'writer kills:|✘|passed after|failed after'
