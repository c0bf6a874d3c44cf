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
# (Debian's libffi-dev:arm64, multiarch). The compiler is SwiftPM's own, clang, targeting
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
# Package.swift: ["os", "rules", "originals", "dispatch", "stubs", "."] plus CAspectsABI's public headers
INC=(-I "$P/os" -I "$P/rules" -I "$P/originals" -I "$P/dispatch" -I "$P/stubs" -I "$P" -I "$P/include"
     -I Sources/CAspectsABI/include -I Sources/CAspectsABI -idirafter "$FFI_INC")
mapfile -t SRCS < <(find "$P" -name '*.c' -o -name '*.S' | sort)
SRCS+=(Sources/CAspectsABI/table_trust.c)
# A directory of this build's own, so two builds at once (two test runs) never mix objects.
OBJ=$(mktemp -d "$OUT/obj.XXXXXX")
trap 'rm -rf "$OBJ"' EXIT
objs=()
for s in "${SRCS[@]}"; do
    o=$OBJ/$(echo "$s" | tr / _).o
    "${CC[@]}" -O2 -fvisibility=hidden -fPIC -gdwarf-4 "${INC[@]}" -c "$s" -o "$o"
    objs+=("$o")
done
"${CC[@]}" -shared -o "$OBJ/libaspects.so" "${objs[@]}" -ldl -lpthread
mv "$OBJ/libaspects.so" "$OUT/libaspects.so"
echo "$OUT/libaspects.so"
