#!/bin/bash
# Issue 20 item 2, by hand (root, setpriv): can another member of a shared table's group make a
# member's process run the attacker's code, by swapping the advice object between the
# preload's check and its load? A table of root's shared with group 0; the victim (nobody,
# member of 0) keeps its own advice object in a directory the attacker (daemon, member of 0)
# owns, reached through root's symbolic link; the attacker exchanges that object with its own
# in a loop (renameat2 RENAME_EXCHANGE) while the victim starts N processes.
#   scripts/attacks/object-swap.sh [LIBASPECTS] [ASPECTCTL] [N]
# Prints how many starts ran the attacker's code, the victim's own, and neither (refused).
set -euo pipefail
LIB=${1:-$PWD/.build/debug/libaspects.so}
CTL=${2:-$PWD/.build/debug/aspectctl}
N=${3:-200}
[ "$(id -u)" = 0 ] || { echo "run as root (it switches users with setpriv)" >&2; exit 2; }
W=$(mktemp -d /tmp/object-swap.XXXXXX)
NAME=object-swap-$$
cleanup() { [ -n "${SWAPPER:-}" ] && kill "$SWAPPER" 2>/dev/null; wait 2>/dev/null; "$CTL" destroy --table "$NAME" >/dev/null 2>&1; rm -f /dev/shm/aspects.$NAME; rm -rf "$W"; }
trap cleanup EXIT
chmod 755 "$W"
cp "$LIB" "$W/libaspects.so" && chmod 644 "$W/libaspects.so"
inc=$(cd "$(dirname "$0")/../.." && pwd)/Sources/CPreload/include
for who in good:1111 evil:6666; do
    cat > "$W/${who%%:*}.c" <<C
#include <aspects_advice.h>
void swap_getppid(aspects_invocation *inv) { aspects_set_return_int(inv, ${who##*:}); }
C
    cc -shared -fPIC -I "$inc" -o "$W/${who%%:*}.so" "$W/${who%%:*}.c"
done
printf '#include <stdio.h>\n#include <unistd.h>\nint main(void){printf("%%d\\n",(int)getppid());return 0;}\n' > "$W/host.c"
cc -o "$W/host" "$W/host.c"
cat > "$W/swapper.c" <<'C'
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
    for (;;) renameat2(AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE);
}
C
cc -o "$W/swapper" "$W/swapper.c"
chmod 755 "$W/host" "$W/swapper"
# the attacker's directory; the victim's object in it, the attacker's beside it
mkdir "$W/shared" && chown 1:0 "$W/shared" && chmod 755 "$W/shared"
install -o 65534 -g 65534 -m 644 "$W/good.so" "$W/shared/obj.so"
install -o 1 -g 1 -m 644 "$W/evil.so" "$W/shared/evil.so"
ln -s "$W/shared" "$W/link"
"$CTL" create --table "$NAME" --share-with-group 0 >/dev/null
rule='{"id":"swap","symbol":"getppid","position":"instead","action":{"call":"'"$W"'/link/obj.so:swap_getppid"}}'
"$CTL" add --table "$NAME" --rule "$rule" >/dev/null 2>&1
setpriv --reuid=1 --regid=1 --groups=0 -- "$W/swapper" "$W/shared/obj.so" "$W/shared/evil.so" &
SWAPPER=$!
evil=0 good=0 neither=0
for _ in $(seq "$N"); do
    out=$(setpriv --reuid=65534 --regid=65534 --groups=0 -- env LD_PRELOAD="$W/libaspects.so" ASPECTS_TABLE="$NAME" "$W/host" 2>/dev/null || true)
    case "$out" in 6666) evil=$((evil + 1)) ;; 1111) good=$((good + 1)) ;; *) neither=$((neither + 1)) ;; esac
done
echo "starts: $N  attacker's code: $evil  victim's own: $good  refused (no advice): $neither"
