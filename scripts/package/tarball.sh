# scripts/package/tarball.sh — the relocatable tarball around a tree staged with layout_tarball
# (stage.sh): sourced by scripts/package.sh, which calls `make_tarball WORK NAME OUTDIR` once
# WORK/NAME is staged. install.sh beside the tree copies it under any prefix.

# make_tarball WORK NAME OUTDIR: prints the tarball's path.
make_tarball() {
    local work=$1 name=$2 out=$3
    cat > "$work/$name/install.sh" <<'INSTALL'
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
    chmod 0755 "$work/$name/install.sh"
    tar -C "$work" -czf "$out/$name.tar.gz" "$name"
    echo "$out/$name.tar.gz"
}
