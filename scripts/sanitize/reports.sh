# scripts/sanitize/reports.sh — sourced by scripts/sanitize.sh: the environment of each
# sanitizer, finding reports in their logs, and proving the search works.

# The first line of every report the three sanitizers write.
REPORT_PATTERN='ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:|WARNING: ThreadSanitizer|ERROR: ThreadSanitizer'

# Runs a command under sanitizer SAN (asan|tsan) with its logs at LOGPREFIX.<pid>. For asan
# the preload comes through LD_PRELOAD after the ASan runtime; a TSan fixture links it.
sanitized() { # SAN LOGPREFIX COMMAND...
    local san=$1 log=$2
    shift 2
    if [ "$san" = asan ]; then
        # UBSan runs inside the ASan runtime: both options carry the log path.
        # detect_leaks: the preload allocates nothing itself (libffi's closures are reachable
        # from its globals), so a leak report would be real.
        env LD_PRELOAD="$ASAN_RT:$OUT/libaspects-asan.so" \
            ASAN_OPTIONS="log_path=$log:detect_leaks=1:abort_on_error=0:allow_user_segv_handler=1" \
            UBSAN_OPTIONS="log_path=$log:print_stacktrace=1:halt_on_error=0" \
            "$@"
    else
        # exitcode=0: a report is counted from the log; the status stays the program's own.
        env TSAN_OPTIONS="log_path=$log:halt_on_error=0:exitcode=0:second_deadlock_stack=1:suppressions=$HERE/tsan.supp" \
            "$@"
    fi
}

# Reports in the logs LOGPREFIX.*.
count_reports() { # LOGPREFIX
    cat "$1".* 2>/dev/null | grep -cE "$REPORT_PATTERN"
}

fixture_build_planted() {
    cc -O0 -g -o "$OUT/fx/planted_bugs" "$HERE/planted_bugs.c" -lpthread || return 1
    "$CLANG" -fsanitize=thread -O0 -g -o "$OUT/fx/planted_bugs-tsan" "$HERE/planted_bugs.c" -lpthread "${TSAN_LIBS[@]}"
}

sanitize_self_check() {
    mkdir -p "$OUT/logs/self-check"
    rm -f "$OUT"/logs/self-check/*
    sanitized asan "$OUT/logs/self-check/asan" "$OUT/fx/planted_bugs" overflow >/dev/null 2>&1
    sanitized tsan "$OUT/logs/self-check/tsan" "$OUT/fx/planted_bugs-tsan" race >/dev/null 2>&1
    local a t
    a=$(count_reports "$OUT/logs/self-check/asan")
    t=$(count_reports "$OUT/logs/self-check/tsan")
    if [ "$a" -lt 1 ] || [ "$t" -lt 1 ]; then
        echo "sanitize: self-check FAILED: planted bugs gave $a ASan and $t TSan reports; a clean run would prove nothing" >&2
        return 1
    fi
    echo "sanitize: self-check: the planted overflow and race are reported ($a, $t)"
}

# Every report in DIR's logs, once per kind and place: the report's title and the function
# (with its file) of the first frame in the preload's sources, else the first frame at all;
# how often it occurred, and at which lines.
sanitize_list_reports() { # DIR
    local files
    files=$(ls "$1"/*.[0-9]* 2>/dev/null)
    [ -z "$files" ] && return 0
    # shellcheck disable=SC2086
    awk -v root="$ROOT/" -v pattern="$REPORT_PATTERN" '
        function place(frame,    parts, fn, file) {
            # "fn /root/path/file.c:12:3 (lib+0x..)" -> fn in path/file.c, line 12
            split(frame, parts, " ")
            fn = parts[1]; file = parts[2]; sub(root, "", file)
            line = file; sub(/^[^:]*:/, "", line); sub(/:.*/, "", line)
            sub(/:.*/, "", file)
            return fn " in " file
        }
        function flush() {
            if (title != "") {
                key = title " at " (where != "" ? where : first)
                count[key]++
                if (index(lines[key], " " at_line ",") == 0) lines[key] = lines[key] " " at_line ","
            }
            title = ""; where = ""; first = ""; at_line = ""
        }
        $0 ~ pattern {
            flush()
            title = $0
            sub(/^==[0-9]+==/, "", title); sub(/ \(pid=[0-9]+\)/, "", title)
            if ($0 ~ /runtime error:/) {
                split($0, p, ": runtime error:"); where = p[1]; sub(root, "", where)
                at_line = where; sub(/^[^:]*:/, "", at_line); sub(/:.*/, "", at_line); sub(/:.*/, "", where)
                title = "UBSan runtime error:" p[2]
            }
            next
        }
        title != "" && /^ *#[0-9]+ / {
            frame = $0; sub(/^ *#[0-9]+ (0x[0-9a-f]+ in )?/, "", frame)
            if (first == "") first = frame
            if (where == "" && index($0, root "Sources/") > 0) { where = place(frame); at_line = line }
        }
        END {
            flush()
            for (k in count) { l = lines[k]; sub(/,$/, "", l); printf "  %5d x %s (line%s)\n", count[k], k, l }
        }' $files | sort -rn
    echo "  (full reports: the files in ${1#"$ROOT"/})"
}
