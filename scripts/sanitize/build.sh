# scripts/sanitize/build.sh — sourced by scripts/sanitize.sh: the tools, aspectctl, the two
# instrumented builds of libaspects.so, and the fixtures in a plain and a TSan variant.

# The preload's sources, exactly what SwiftPM compiles for the CPreload target, plus the
# trust rule it shares with aspectctl.
mapfile -t PRELOAD_SOURCES < <(find "$ROOT/Sources/CPreload" \( -name '*.c' -o -name '*.S' \) | sort)
PRELOAD_SOURCES+=("$ROOT"/Sources/CAspectsABI/table_trust.c)
# A file includes another folder's header by its name (one folder per layer, as in Package.swift).
mapfile -t PRELOAD_INCLUDES < <(find "$ROOT/Sources/CPreload" -type d | sort | sed 's/^/-I/')

# The fixtures the scenarios run (Tests/Fixtures/COMPONENT/NAME.c), each built plain and for TSan.
FIXTURES=(armed_threads hammer tree errno_exact open_calls signal_raise closed_fds clearenv_exec
          signal_storm child_storm many_threads proto_main)

sanitize_find_tools() {
    if ! command -v "$CLANG" >/dev/null; then
        echo "sanitize: $CLANG not found (the Swift toolchain ships one)" >&2
        return 1
    fi
    ASAN_RT=$("$CLANG" -print-file-name=libclang_rt.asan-x86_64.so)
    if [ ! -f "$ASAN_RT" ]; then
        echo "sanitize: clang's ASan runtime (libclang_rt.asan-x86_64.so) is missing" >&2
        return 1
    fi
    FFI_CFLAGS=$(pkg-config --cflags libffi 2>/dev/null || true)
    if [ -z "$FFI_CFLAGS" ]; then
        local h
        h=$(ls /usr/include/ffi.h /usr/include/*/ffi.h 2>/dev/null | head -n 1)
        [ -n "$h" ] && FFI_CFLAGS="-I$(dirname "$h")"
    fi
    if [ -z "$FFI_CFLAGS" ]; then
        echo "sanitize: ffi.h not found: apt-get install libffi-dev" >&2
        return 1
    fi
}

sanitize_build_aspectctl() {
    if [ -n "${ASPECTCTL:-}" ]; then
        [ -x "$ASPECTCTL" ] && return 0
        echo "sanitize: ASPECTCTL=$ASPECTCTL is not executable" >&2
        return 1
    fi
    local scratch=${SWIFT_SCRATCH:-$ROOT/.build}
    echo "sanitize: building aspectctl (swift build --scratch-path ${scratch#"$ROOT"/})"
    (cd "$ROOT" && swift build --product aspectctl --scratch-path "$scratch" >"$OUT/logs/swift-build.txt" 2>&1) || {
        tail -n 30 "$OUT/logs/swift-build.txt" >&2
        return 1
    }
    ASPECTCTL=$(cd "$ROOT" && swift build --scratch-path "$scratch" --show-bin-path)/aspectctl
}

# -O1 and frame pointers: usable stacks in reports. The flags SwiftPM gives the target
# (-fvisibility=hidden) are kept: the exported set must stay the wrappers only.
preload_build() { # OUTPUT SANITIZER-FLAGS...
    local output=$1
    shift
    "$CLANG" -shared -fPIC -O1 -g -fno-omit-frame-pointer -fvisibility=hidden "$@" \
        -I "$ROOT/Sources/CAspectsABI/include" "${PRELOAD_INCLUDES[@]}" $FFI_CFLAGS \
        -o "$output" "${PRELOAD_SOURCES[@]}" -ldl
}

sanitize_build_preloads() {
    echo "sanitize: building libaspects-asan.so (address,undefined) and libaspects-tsan.so (thread)"
    # -shared-libsan: the ASan runtime is the shared one the programs get in LD_PRELOAD.
    preload_build "$OUT/libaspects-asan.so" -fsanitize=address,undefined -shared-libsan || return 1
    # No runtime linked: TSan's symbols come from the program that links this library.
    preload_build "$OUT/libaspects-tsan.so" -fsanitize=thread || return 1
    # The Swift toolchain's TSan runtime also intercepts libdispatch and needs its symbols;
    # another clang's does not. Whatever a trivial program needs to link, the fixtures get.
    local probe=$OUT/fx/tsan-probe
    printf 'int main(void) { return 0; }\n' >"$probe.c"
    TSAN_LIBS=()
    if ! "$CLANG" -fsanitize=thread -o "$probe" "$probe.c" >/dev/null 2>&1; then
        local swiftlib
        swiftlib=$(dirname "$(dirname "$(command -v "$CLANG")")")/lib/swift/linux
        TSAN_LIBS=(-L"$swiftlib" -ldispatch -lBlocksRuntime -Wl,-rpath,"$swiftlib")
        "$CLANG" -fsanitize=thread -o "$probe" "$probe.c" "${TSAN_LIBS[@]}" >"$OUT/logs/tsan-probe.txt" 2>&1 || {
            echo "sanitize: cannot link a -fsanitize=thread program:" >&2
            cat "$OUT/logs/tsan-probe.txt" >&2
            return 1
        }
    fi
}

# NAME [EXTRA-LINK-FLAGS...]: $OUT/fx/NAME (cc) and $OUT/fx/NAME-tsan (linked with the TSan
# preload first).
fixture_build() {
    local name=$1
    shift
    local src; src=$(ls "$ROOT"/Tests/Fixtures/*/"$name".c)
    cc -O1 -g -o "$OUT/fx/$name" "$src" "$@" -lpthread || return 1
    "$CLANG" -fsanitize=thread -O1 -g -o "$OUT/fx/$name-tsan" "$src" \
        -Wl,--no-as-needed "$OUT/libaspects-tsan.so" -Wl,--as-needed -Wl,-rpath,"$OUT" \
        "$@" -lpthread "${TSAN_LIBS[@]}" || return 1
}

sanitize_build_fixtures() {
    echo "sanitize: building ${#FIXTURES[@]} fixtures, plain and for TSan"
    # libfx (the prototype rules' library) and libfxuser (dlopened, imports fx_add): plain, as
    # any library a program loads.
    cc -shared -fPIC -g -o "$OUT/fx/libfx.so" "$ROOT/Tests/Fixtures/Prototypes/proto_lib.c" || return 1
    cc -shared -fPIC -g -o "$OUT/fx/libfxuser.so" "$ROOT/Tests/Fixtures/Prototypes/proto_user.c" \
        -L"$OUT/fx" -lfx -Wl,-rpath,"$OUT/fx" || return 1
    local f
    for f in "${FIXTURES[@]}"; do
        if [ "$f" = proto_main ]; then
            fixture_build "$f" -L"$OUT/fx" -lfx -Wl,-rpath,"$OUT/fx" -ldl || return 1
        else
            fixture_build "$f" || return 1
        fi
    done
    fixture_build_planted || return 1
    seq 1 500000 >"$OUT/fx/lines" # prototype-churn: one call of fx_add a line
}
