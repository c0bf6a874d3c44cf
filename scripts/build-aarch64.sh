#!/usr/bin/env bash
# scripts/build-aarch64.sh — the preload cross-built for 64-bit ARM (docs/aarch64.md).
#
# Usage: scripts/build-aarch64.sh                  builds .build/aarch64/libaspects.so
#        scripts/build-aarch64.sh fixture SRC OUT  cross-builds one C fixture with aarch64-linux-gnu-gcc
#                                                  (extra cc flags after OUT)
#
# The library is compiled from exactly what SwiftPM compiles for CPreload: every .c and .S under
# Sources/CPreload, its layer folders on the include path (Package.swift's headerSearchPath
# list), CAspectsABI's headers and table_trust.c, with the same -O2 -fvisibility=hidden. libffi
# is dlopened at run time (originals/ffi_lazy.c), so only its arm64 headers are needed here
# (Debian's libffi-dev:arm64, multiarch). -mbranch-protection=standard: pointer authentication
# of return addresses and BTI landing pads in the C (no-ops on CPUs without them), with which
# the library is marked for BTI (stubs/branch_protection_aarch64.h). The compiler is SwiftPM's own, clang, targeting
# aarch64-linux-gnu; it takes the C library, crt files and linker of Debian's
# gcc-aarch64-linux-gnu and libc6-dev-arm64-cross, which .ci/run installs.
set -euo pipefail
cd "$(dirname "$0")/.."
CC=(clang --target=aarch64-linux-gnu)
OUT=.build/aarch64
mkdir -p "$OUT"
command -v clang >/dev/null || { echo "build-aarch64: clang not found (it comes with the Swift toolchain)" >&2; exit 1; }
command -v aarch64-linux-gnu-ld >/dev/null || { echo "build-aarch64: aarch64-linux-gnu-ld not found: install gcc-aarch64-linux-gnu and libc6-dev-arm64-cross" >&2; exit 1; }
FFI_INC=/usr/include/aarch64-linux-gnu
[ -f "$FFI_INC/ffi.h" ] || { echo "build-aarch64: $FFI_INC/ffi.h not found: install libffi-dev:arm64 (dpkg --add-architecture arm64)" >&2; exit 1; }

if [ "${1:-}" = fixture ]; then
    [ $# -ge 3 ] || { echo "usage: $0 fixture SRC OUT [cc flags]" >&2; exit 2; }
    src=$2 out=$3; shift 3
    # As the x86-64 fixtures are built (Fixture.build: cc, gcc, without optimization): clang
    # assumes malloc leaves errno alone, and at -O1 glibc's getline is an inline __getdelim
    # call, which would bypass the catalog harness's own calls.
    exec aarch64-linux-gnu-gcc -o "$out" "$src" "$@" -lpthread
fi

P=Sources/CPreload
# Package.swift: ["os", "rules", "originals", "events", "dispatch", "install", "."] plus CAspectsABI's public headers
INC=(-I "$P/os" -I "$P/rules" -I "$P/originals" -I "$P/events" -I "$P/dispatch" -I "$P/install" -I "$P" -I "$P/include"
     -I Sources/CAspectsABI/include -I Sources/CAspectsABI -idirafter "$FFI_INC")
# (x86-64's hand-written files assemble to nothing here: left out, as an object without the
# BTI property would unmark the library)
mapfile -t SRCS < <(find "$P" \( -name '*.c' -o -name '*.S' \) ! -name '*x86_64*' | sort)
SRCS+=(Sources/CAspectsABI/table_trust.c)
# A directory of this build's own, so two builds at once (two test runs) never mix objects.
OBJ=$(mktemp -d "$OUT/obj.XXXXXX")
trap 'rm -rf "$OBJ"' EXIT
# compile DIR [cc flags]: every source into DIR; the objects in objs.
compile() {
    local dir=$OBJ/$1; shift
    mkdir -p "$dir"
    objs=()
    for s in "${SRCS[@]}"; do
        local o=$dir/$(echo "$s" | tr / _).o
        "${CC[@]}" -O2 -fvisibility=hidden -fPIC -gdwarf-4 -mbranch-protection=standard "$@" "${INC[@]}" -c "$s" -o "$o"
        objs+=("$o")
    done
}
compile lib
# GNU ld (bfd), not the toolchain's default gold: gold drops the BTI property of its inputs.
"${CC[@]}" -fuse-ld=bfd -shared -o "$OBJ/libaspects.so" "${objs[@]}" -ldl -lpthread

# libaspects-guarded.so, for the tests of BTI (Aarch64BranchProtectionTests runs it in a BTI
# program on qemu's max CPU, where any way in without a landing pad is SIGILL). An object is
# marked for BTI only when all of its inputs are, and Debian 12's cross toolchain ships the
# code it adds unmarked and without pads, some of it entered indirectly: the C runtime's start
# files (_init, crtbeginS.o's frame_dummy in .init_array) and libgcc's outline atomics (whose
# lse-init.o is a constructor). So the library above is not marked here (it is where the
# toolchain's own code is), and this one is the same sources compiled without outline
# atomics (-mno-outline-atomics: inline exclusive loops, no libgcc) and linked without the
# start files (-nostartfiles; __dso_handle, the one thing they gave that the library uses —
# through pthread_atfork — defined as crtbeginS.o defines it). The one unmarked input left,
# libc_nonshared.a's pthread_atfork, is only called directly (bl), which BTI does not check:
# -z force-bti marks the result all the same.
compile guarded -mno-outline-atomics
printf '%s\n' 'void *__dso_handle __attribute__((visibility("hidden"))) = &__dso_handle;' > "$OBJ/dso_handle.c"
"${CC[@]}" -O2 -fPIC -mbranch-protection=standard -c "$OBJ/dso_handle.c" -o "$OBJ/dso_handle.o"
# (the linker's warning that force-bti marks despite that input is the one expected: dropped)
"${CC[@]}" -fuse-ld=bfd -shared -nostartfiles -Wl,-z,force-bti -o "$OBJ/libaspects-guarded.so" \
    "${objs[@]}" "$OBJ/dso_handle.o" -ldl -lpthread 2> "$OBJ/link.err" || { cat "$OBJ/link.err" >&2; exit 1; }
grep -v 'pthread_atfork.oS): warning: BTI turned on by -z force-bti' "$OBJ/link.err" >&2 || true
mv "$OBJ/libaspects-guarded.so" "$OUT/libaspects-guarded.so"
mv "$OBJ/libaspects.so" "$OUT/libaspects.so"
echo "$OUT/libaspects.so"
