#!/usr/bin/env bash
# The test of scripts/check-format.sh, in a scratch git repository with this repository's
# formatter settings: a badly formatted line a commit changes fails, a badly formatted line it
# leaves alone passes, a 73-character subject fails and a 72-character one passes. .ci/run
# runs it before the check itself.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
check="$here/scripts/check-format.sh"
repo=$(mktemp -d)
trap 'rm -rf "$repo"' EXIT
cd "$repo"
git init -q -b main
git config user.name test
git config user.email test@example.invalid
cp "$here/.swift-format" "$here/.clang-format" .

failed=0
expect() { # expect STATUS WHAT ARGS...: the check exits STATUS, and says so
    local want=$1 what=$2 status=0
    shift 2
    "$check" "$@" > out.txt 2>&1 || status=$?
    if [ "$status" != "$want" ]; then
        echo "FAIL: $what: exit $status, expected $want"; sed 's/^/    /' out.txt; failed=1
    else
        echo "ok: $what"
    fi
}
commit() { # commit SUBJECT: everything, with a body
    git add -A && git commit -q -m "$1" -m "Why: the test needs a commit."
}

# A first commit with a badly formatted line in each language, which later commits leave alone.
cat > a.swift <<'EOF'
let untouched   =   1
let value = 2
EOF
cat > a.c <<'EOF'
int untouched( void ){return 1;}
int value(void) { return 2; }
EOF
commit "Add the files"

sed -i 's/let value = 2/let value = 3/' a.swift
sed -i 's/return 2;/return 3;/' a.c
commit "Change the well formatted lines"
expect 0 "an untouched badly formatted line passes"
grep -q 'a.swift' out.txt && { echo "FAIL: the untouched line was reported"; failed=1; }

sed -i 's/let value = 3/let value   = 4/' a.swift
commit "Change a Swift line badly"
expect 1 "a badly formatted changed Swift line fails"
grep -q '^a.swift:2: not as the formatter writes it' out.txt || { echo "FAIL: no a.swift:2 finding"; cat out.txt; failed=1; }
grep -q '^  +let value = 4$' out.txt || { echo "FAIL: the fix is not printed"; cat out.txt; failed=1; }

sed -i 's/let value   = 4/let value = 4/' a.swift
sed -i 's/int value(void) { return 3; }/int value(void)   {  return 4; }/' a.c
commit "Fix the Swift line and change a C line badly"
expect 1 "a badly formatted changed C line fails"
grep -q '^a.c:2: not as the formatter writes it' out.txt || { echo "FAIL: no a.c:2 finding"; cat out.txt; failed=1; }
expect 1 "--base checks every commit of the branch" --base HEAD~2

sed -i 's/int value(void)   {  return 4; }/int value(void) { return 4; }/' a.c
echo 'let more = 5' >> a.swift
commit "$(printf 'x%.0s' $(seq 73))"
expect 1 "a 73-character subject fails"
grep -q 'the subject has 73 characters' out.txt || { echo "FAIL: the subject is not named"; cat out.txt; failed=1; }

echo 'let last = 6' >> a.swift
commit "$(printf 'x%.0s' $(seq 72))"
expect 0 "a 72-character subject passes"

echo 'let none = 7' >> a.swift
git add -A && git commit -q -m "A commit without a body"
expect 0 "a commit without a body is a warning only"
grep -q 'warning: no body' out.txt || { echo "FAIL: no warning for the missing body"; failed=1; }

echo 'let dirty   = 8' >> a.swift
expect 1 "--worktree checks uncommitted lines" --worktree

exit $failed
