#!/usr/bin/env bash
# scripts/package.sh — a release anyone can install without Swift: a relocatable tarball with
# aspectctl (the Swift standard library linked in statically: it needs only libc, libm,
# libstdc++ and libgcc_s), libaspects.so (libc only), the C headers of the table layout and of
# advice as code (aspects_advice.h), the man page and bash/zsh/fish completions generated from
# the argument parser, the JSON Schemas, the catalog, the example rules and C advice, and
# install.sh.
#
# Usage: scripts/package.sh [OUTDIR]   (default dist/) — prints the tarball's path.
# Installed layout (install.sh --prefix DIR): DIR/bin/aspectctl, DIR/lib/libaspects.so (found
# by aspectctl as ../lib/libaspects.so; --preload or ASPECTS_PRELOAD otherwise),
# DIR/include/aspects/, DIR/share/man/man1/aspectctl.1, DIR/share/aspects/{schemas,examples},
# and the completions under DIR/share/{bash-completion,zsh,fish}.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=$(mkdir -p "${1:-dist}" && cd "${1:-dist}" && pwd)
SCRATCH=.build-static

swift build -c release --static-swift-stdlib --scratch-path "$SCRATCH" >&2
BIN=$SCRATCH/release
if ldd "$BIN/aspectctl" | grep -q 'libswift'; then
    echo "package: aspectctl still needs a Swift library:" >&2; ldd "$BIN/aspectctl" >&2; exit 1
fi
VERSION=$("$BIN/aspectctl" --version)
NAME=aspects-$VERSION-linux-$(uname -m)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
ROOT=$WORK/$NAME
mkdir -p "$ROOT"/{bin,lib,include/aspects,share/man/man1,share/aspects/schemas,share/aspects/examples} \
         "$ROOT"/share/bash-completion/completions "$ROOT"/share/zsh/site-functions "$ROOT"/share/fish/vendor_completions.d

install -m 0755 "$BIN/aspectctl" "$ROOT/bin/aspectctl"
install -m 0644 "$BIN/libaspects.so" "$ROOT/lib/libaspects.so"
install -m 0644 Sources/CAspectsABI/include/aspects_abi.h Sources/CPreload/include/aspects_advice.h "$ROOT/include/aspects/"
install -m 0644 config/*.schema.json "$ROOT/share/aspects/schemas/"
install -m 0644 config/examples/*.json config/catalog.spec "$ROOT/share/aspects/examples/"
install -d "$ROOT/share/aspects/examples/advice-c"
install -m 0644 config/examples/advice-c/*.c config/examples/advice-c/*.json "$ROOT/share/aspects/examples/advice-c/"
install -m 0644 README.md "$ROOT/share/aspects/"

# The man page, from the argument parser's manual plugin.
mkdir -p "$WORK/man"
swift package --scratch-path "$SCRATCH-man" --allow-writing-to-directory "$WORK/man" generate-manual --output-directory "$WORK/man" >&2
install -m 0644 "$WORK/man/aspectctl.1" "$ROOT/share/man/man1/aspectctl.1"

# Completions, from the parser too.
"$BIN/aspectctl" --generate-completion-script bash > "$ROOT/share/bash-completion/completions/aspectctl"
"$BIN/aspectctl" --generate-completion-script zsh > "$ROOT/share/zsh/site-functions/_aspectctl"
"$BIN/aspectctl" --generate-completion-script fish > "$ROOT/share/fish/vendor_completions.d/aspectctl.fish"

cat > "$ROOT/install.sh" <<'INSTALL'
#!/bin/sh
# install.sh --prefix DIR: copies aspects into DIR (bin, lib, include, share); nothing else.
set -eu
PREFIX=
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) PREFIX=$2; shift 2 ;;
        --prefix=*) PREFIX=${1#--prefix=}; shift ;;
        *) echo "usage: install.sh --prefix DIR" >&2; exit 64 ;;
    esac
done
[ -n "$PREFIX" ] || { echo "usage: install.sh --prefix DIR" >&2; exit 64; }
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$PREFIX"
for d in bin lib include share; do
    mkdir -p "$PREFIX/$d"
    cp -R "$HERE/$d/." "$PREFIX/$d/"
done
echo "installed aspects in $PREFIX: run $PREFIX/bin/aspectctl (man: $PREFIX/share/man/man1/aspectctl.1)"
INSTALL
chmod 0755 "$ROOT/install.sh"

tar -C "$WORK" -czf "$OUT/$NAME.tar.gz" "$NAME"
echo "$OUT/$NAME.tar.gz"
