# scripts/package/deb.sh — the Debian packages around a staged tree: sourced by scripts/package.sh,
# which stages the release with layout_deb (stage.sh) and calls `make_deb ROOT DEBARCH VERSION
# OUTDIR` (the layout's L_* say where the files are; STRIP is the architecture's strip).
# Debian's own tools do the work: dpkg-shlibdeps reads which libraries the programs need,
# dpkg-deb --build makes the archive (root-owned files, time stamps clamped to the commit's:
# the same commit gives the same package). Why not a debian/ directory for dpkg-buildpackage:
# the release is already built (statically, or cross-built for arm64) and staged by the tarball's
# own list; dpkg-buildpackage would build it a second time in debian/rules, under debhelper.

DEB_MAINTAINER="aspects maintainers <maintainers@users.noreply.a-seed-961a8c57.example>"

# make_deb ROOT DEBARCH VERSION OUTDIR: prints the packages' paths, one a line: aspects (the
# programs, headers, pages, completions, schemas and examples) and python3-aspects-pytest (the
# plugin, Architecture all), which Debian's Python policy wants in its own package, depending on
# python3 and pytest: an aspects for C programs does not pull in Python.
make_deb() {
    local root=$1 debarch=$2 version=$3 out=$4
    local py=$root-python
    # Debian ships programs stripped (the debug information belongs in a -dbgsym package), as
    # dh_strip strips them: symbols the dynamic linker needs stay.
    "$STRIP" --remove-section=.comment --remove-section=.note "$root/$L_BIN/aspectctl"
    "$STRIP" --strip-unneeded --remove-section=.comment --remove-section=.note "$root/$L_PRELOAD/libaspects.so"

    # The aarch64 aspectctl of the static Linux SDK (musl) is statically linked on purpose: it
    # needs no library of the machine at all (docs/aarch64.md). lintian asks for a reason.
    # (grep reads all of readelf's output: -q would end the pipe early, which pipefail reports)
    if ! readelf -d "$root/$L_BIN/aspectctl" | grep NEEDED >/dev/null; then
        install -d "$root/usr/share/lintian/overrides"
        printf '%s\n' "# aspectctl, built with the static Linux SDK (musl), needs no library of the machine" \
            "aspects: statically-linked-binary [$L_BIN/aspectctl]" > "$root/usr/share/lintian/overrides/aspects"
        chmod 0644 "$root/usr/share/lintian/overrides/aspects"
    fi

    install -d "$py/${L_PYTHON%/*}"
    mv "$root/$L_PYTHON" "$py/$L_PYTHON"
    rmdir "$root/${L_PYTHON%/*}"

    # (dpkg-shlibdeps knows a package's tree by its DEBIAN directory: $ORIGIN is read in it)
    install -d "$root/DEBIAN"
    local depends
    depends=$(deb_shlibs "$root" "$debarch" "$L_BIN/aspectctl" "$L_PRELOAD/libaspects.so")
    # libaspects.so dlopens libffi (libffi.so.8) on first use (originals/ffi_lazy.c): no
    # DT_NEEDED entry for dpkg-shlibdeps to see.
    depends=${depends:+$depends, }libffi8
    deb_finish "$root" aspects "$version" "$debarch" devel "$depends" "Suggests: python3-aspects-pytest" \
        "fault injection into the C library calls of unmodified programs" "$out/aspects_${version}_${debarch}.deb" <<'TEXT'
 aspects runs advice before, instead of or after the C library functions of
 an unmodified Linux program, through LD_PRELOAD, and changes that advice
 while the program runs. Its main use is reproducible fault injection in
 tests: the 3rd write fails with ENOSPC, opening *.db fails once with EACCES,
 the 10,000th malloc returns NULL, every connect waits 200 ms.
 .
 aspectctl writes the rules into a shared-memory advice table, runs a command
 under them, and explores a program's error handling by failing each of its
 call sites in turn. The package also holds the C headers for advice written
 in C, the man pages, shell completions, JSON Schemas and examples.
TEXT
    echo "$out/aspects_${version}_${debarch}.deb"

    deb_python_scripts "$py"
    deb_finish "$py" python3-aspects-pytest "$version" all python "aspects (= $version), python3:any, python3-pytest" "" \
        "pytest plugin of aspects: fault injection into the programs a test runs" "$out/python3-aspects-pytest_${version}_all.deb" <<'TEXT'
 The aspects fixture of this pytest plugin runs the programs a test starts
 under fault-injection rules (the 3rd write fails with ENOSPC, opening *.db
 fails once with EACCES) through aspectctl, and reports what was injected;
 explore campaigns fail each call site of a program in turn.
TEXT
    echo "$out/python3-aspects-pytest_${version}_all.deb"
}

# deb_finish ROOT PACKAGE VERSION DEBARCH SECTION DEPENDS EXTRA SYNOPSIS DEB < DESCRIPTION: its copyright
# and changelog, DEBIAN/control (EXTRA: more fields, or nothing) and md5sums, and the archive DEB.
deb_finish() {
    local root=$1 package=$2 version=$3 debarch=$4 section=$5 depends=$6 extra=$7 synopsis=$8 deb=$9
    local doc=$root/usr/share/doc/$package
    install -d "$doc" "$root/DEBIAN"
    deb_copyright > "$doc/copyright"
    # A native package (the version has no Debian revision): its changelog is changelog.gz.
    deb_changelog "$package" "$version" | gzip -9n > "$doc/changelog.gz"
    chmod 0644 "$doc/copyright" "$doc/changelog.gz"
    {
        echo "Package: $package"
        echo "Version: $version"
        echo "Architecture: $debarch"
        echo "Maintainer: $DEB_MAINTAINER"
        echo "Installed-Size: $(deb_installed_size "$root")"
        echo "Depends: $depends"
        [ -z "$extra" ] || echo "$extra"
        echo "Section: $section"
        echo "Priority: optional"
        echo "Description: $synopsis"
        cat
    } > "$root/DEBIAN/control"
    (cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"
    chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/md5sums"
    chmod 0755 "$root" "$root/DEBIAN"
    SOURCE_DATE_EPOCH=$(deb_epoch) dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >&2
}

# deb_shlibs ROOT DEBARCH FILE…: the Depends of the programs' shared libraries, as dpkg-shlibdeps
# reads them from the installed libraries' shlibs and symbols files (the arm64 ones through
# multiarch: libc6:arm64). It wants a debian/control to read: a minimal one of its own.
deb_shlibs() {
    local root=$1 debarch=$2; shift 2
    local dir
    dir=$(mktemp -d)
    mkdir "$dir/debian"
    printf 'Source: aspects\n\nPackage: aspects\nArchitecture: any\n' > "$dir/debian/control"
    local args=() f
    for f in "$@"; do args+=("-e$root/$f"); done
    local line status=0
    line=$(cd "$dir" && DEB_HOST_ARCH=$debarch dpkg-shlibdeps -O "${args[@]}") || status=$?
    rm -rf "$dir"
    [ "$status" = 0 ] || return "$status"
    echo "${line#shlibs:Depends=}"
}

# deb_installed_size ROOT: KiB, counted as dpkg-gencontrol counts (each file rounded up to a KiB,
# one for every directory and link).
deb_installed_size() {
    find "$1" -path "$1/DEBIAN" -prune -o -mindepth 1 -printf '%y %s\n' |
        awk '{ n += ($1 == "f") ? int(($2 + 1023) / 1024) : 1 } END { print n }'
}

# The copyright file in Debian's machine-readable format (its Format line names the format's
# version, as the format requires).
deb_copyright() {
    local years last
    years=$(git log --format=%ad --date=format:%Y | tail -1)
    last=$(git log -1 --format=%ad --date=format:%Y)
    [ "$last" = "$years" ] || years=$years-$last
    cat <<COPYRIGHT
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: aspects
Upstream-Contact: $DEB_MAINTAINER

Files: *
Copyright: $years the aspects maintainers
License: no-license-granted

License: no-license-granted
 The aspects repository states no license: no rights beyond those copyright
 law gives are granted.
COPYRIGHT
}

# deb_changelog PACKAGE VERSION
deb_changelog() {
    cat <<CHANGELOG
$1 ($2) unstable; urgency=medium

  * aspects $2, packaged by scripts/package.sh --deb from commit
    $(git rev-parse --short=12 HEAD).

 -- $DEB_MAINTAINER  $(git log -1 --format=%aD)
CHANGELOG
}

# The commit's time: the package's time stamps (dpkg-deb clamps to SOURCE_DATE_EPOCH).
deb_epoch() { git log -1 --format=%ct; }

# deb_python_scripts ROOT: Python writes bytecode beside a module at its first import, as the
# user importing it: root's pytest would leave __pycache__ behind at removal. As dh_python3's
# scripts do, py3compile writes it at configure and py3clean removes it before removal.
deb_python_scripts() {
    install -d "$1/DEBIAN"
    cat > "$1/DEBIAN/postinst" <<'POSTINST'
#!/bin/sh
set -e
if [ "$1" = configure ] && command -v py3compile >/dev/null 2>&1; then
    py3compile -p python3-aspects-pytest
fi
POSTINST
    cat > "$1/DEBIAN/prerm" <<PRERM
#!/bin/sh
set -e
if command -v py3clean >/dev/null 2>&1; then
    py3clean -p python3-aspects-pytest
else
    rm -rf /$L_PYTHON/aspects_pytest/__pycache__
fi
PRERM
    chmod 0755 "$1/DEBIAN/postinst" "$1/DEBIAN/prerm"
}
