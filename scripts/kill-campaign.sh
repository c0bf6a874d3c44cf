#!/usr/bin/env bash
# scripts/kill-campaign.sh — the writer-kill campaign of issue 10 at full size: N rounds
# (default 1500 kills, over 1,000 of them inside the lock) of aspectctl writers — add
# batches of 24 rules with an autoRemove rule the callers fire (retired by the next writer),
# remove --all, create — SIGKILLed inside the lock at a random step of the batch or at a
# random moment, while 8 processes call the advised functions; after each kill the batch
# must be whole or absent and a created table whole or missing. Prints the kills, how many
# landed inside the lock and the partial batches seen (must be 0). The suite runs 200 rounds.
#
# Usage: scripts/kill-campaign.sh [N]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
N=${1:-1500}
swift build --build-tests >/dev/null
ASPECTS_KILL_ROUNDS=$N swift test --skip-build --filter 'WriterKillTests' 2>&1 | grep -E 'writer kills|✘|passed after|failed after'
