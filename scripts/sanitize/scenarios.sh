# scripts/sanitize/scenarios.sh — sourced by scripts/sanitize.sh: what runs under each
# sanitizer. A scenario NAME is three functions:
#   NAME_rules      prints the rules added to its fresh table before the program starts
#                   (for sanitizer $1);
#   NAME_command    sets CMD (and optionally CMD_STDIN) for sanitizer $1 (fx gives the
#                   fixture's path in the right variant);
#   NAME_churn      optional: one round of changes to table $1 (round $2), called again and
#                   again for as long as the program runs.
# Between them they cover: threads on armed functions with every scope, rules added and
# removed while calls run, events, autoRemove, once, prototype rules (GOT rewriting, dlopen,
# dlmopen, structs, variadics), fork/vfork/exec/posix_spawn, signal handlers, 1,000 threads
# (300 under TSan), closed descriptors, clearenv.

SCENARIOS=(threads-churn autoremove hierarchy prototypes prototype-churn after-errno closed-fds clearenv
           signals children many-threads)

RUN_LIMIT=180 # seconds before a scenario counts as hung (timeout kills it)
MS=$((SECONDS_PER_RUN * 1000))

fx() { # NAME SAN
    if [ "$2" = tsan ]; then echo "$OUT/fx/$1-tsan"; else echo "$OUT/fx/$1"; fi
}

add_rule() { # TABLE JSON: a rule of a churn round; "all or none", an error is reported
    "$ASPECTCTL" add --table "$1" --rule "$2" >/dev/null
}

remove_rules() { # TABLE ID...: ids that autoRemove already retired are not an error here
    local table=$1
    shift
    "$ASPECTCTL" remove --table "$table" "$@" >/dev/null 2>&1 || true
}

# ---- threads-churn: 6 threads (and forked children) on getppid, open, write, read, close
threads-churn_rules() {
    echo '{"id":"base","symbol":"getppid","position":"instead","action":{"return":42},"when":{"every":5}}'
}
threads-churn_command() { CMD=("$(fx armed_threads "$1")" 6 "$MS" fork); }
threads-churn_churn() {
    # One add and one remove a round (each is an aspectctl start): as many rounds as can be.
    local t=$1 r=c$2 scope rules=""
    for scope in thread process hierarchy table; do
        rules+="{\"id\":\"$r-w-$scope\",\"symbol\":\"write\",\"position\":\"instead\",\"action\":{\"fail\":\"EIO\",\"log\":true},\"scope\":\"$scope\",\"when\":{\"every\":3}},"
    done
    add_rule "$t" "{\"rules\":[$rules
      {\"id\":\"$r-open\",\"symbol\":\"open\",\"position\":\"after\",\"action\":{\"log\":true},\"when\":{\"args\":[{\"arg\":0,\"glob\":\"/dev/z*\"}]}},
      {\"id\":\"$r-read\",\"symbol\":\"read\",\"position\":\"before\",\"action\":{\"log\":true},\"when\":{\"probability\":0.5,\"seed\":7}},
      {\"id\":\"$r-close\",\"symbol\":\"close\",\"position\":\"instead\",\"action\":{\"fail\":\"EIO\"},\"autoRemove\":true},
      {\"id\":\"$r-ppid\",\"symbol\":\"getppid\",\"position\":\"before\",\"action\":{\"log\":true},\"when\":{\"every\":100,\"times\":3}}]}"
    sleep 0.02
    # $r-close may be gone already (autoRemove retired it): removed on its own
    remove_rules "$t" "$r-w-thread" "$r-w-process" "$r-w-hierarchy" "$r-w-table" "$r-open" "$r-read" "$r-ppid"
    remove_rules "$t" "$r-close"
}

# ---- autoremove: 4 processes x 8 threads race for rules that fire once in the whole table
autoremove_rules() {
    echo '{"id":"table-nth","symbol":"getppid","position":"instead","action":{"return":42},"scope":"table","when":{"nth":500}}'
}
autoremove_command() {
    CMD=(bash -c 'for i in $(seq 1 12); do "$0" 4 8 300 || exit 1; done' "$(fx hammer "$1")")
}
autoremove_churn() {
    local t=$1 r=a$2
    add_rule "$t" "{\"rules\":[
      {\"id\":\"$r-once\",\"symbol\":\"getppid\",\"position\":\"instead\",\"action\":{\"return\":42},\"autoRemove\":true},
      {\"id\":\"$r-proc\",\"symbol\":\"getppid\",\"position\":\"after\",\"action\":{\"log\":true},\"once\":\"process\"}]}"
    sleep 0.03
    remove_rules "$t" "$r-once" "$r-proc"
}

# ---- hierarchy: a process tree (fork, exec) sharing hierarchy- and table-scoped counters
hierarchy_rules() {
    echo '{"rules":[
      {"id":"h-every","symbol":"getppid","position":"instead","action":{"return":42},"scope":"hierarchy","when":{"every":3}},
      {"id":"h-once","symbol":"getppid","position":"before","action":{"log":true},"once":"hierarchy"},
      {"id":"t-times","symbol":"getppid","position":"after","action":{"log":true},"scope":"table","when":{"times":5}}]}'
}
hierarchy_command() {
    CMD=(bash -c 'for i in 1 2 3 4 5; do "$0" 300 >/dev/null || exit 1; done' "$(fx tree "$1")")
}

# ---- prototypes: GOT rewriting for integer, string, double, struct and variadic signatures,
# in the program, a dlopened library and a dlmopen namespace
prototypes_rules() {
    echo '{"rules":[
      {"id":"add","symbol":"fx_add","prototype":"int fx_add(int a, int b)","position":"instead","action":{"return":-7},"when":{"nth":2}},
      {"id":"sum","symbol":"fx_sum6","prototype":"long fx_sum6(long a, long b, long c, long d, long e, long f)","position":"after","action":{"log":true},"when":{"args":[{"arg":5,"eq":2}]}},
      {"id":"scale","symbol":"fx_scale","prototype":"double fx_scale(double x, double k)","position":"after","action":{"log":true}},
      {"id":"name","symbol":"fx_name","prototype":"const char *fx_name(int which)","position":"instead","action":{"return":0},"when":{"nth":3}},
      {"id":"v","symbol":"fx_vsum","prototype":"int fx_vsum(int count, ...)","variadic":["int","int"],"position":"after","action":{"log":true}},
      {"id":"swap","symbol":"fx_swap","prototype":"struct pair fx_swap(struct pair p)","types":{"struct pair":["double","double"]},"position":"after","action":{"log":true}},
      {"id":"big","symbol":"fx_bigsum","prototype":"long fx_bigsum(struct big b)","types":{"struct big":["long","long","long","long"]},"position":"instead","action":{"return":7},"when":{"nth":2}}]}'
}
prototypes_command() {
    CMD=(bash -c '"$0" 3 "$1" >/dev/null && "$0" 1 "$1" ns >/dev/null' "$(fx proto_main "$1")" "$OUT/fx/libfxuser.so")
}

# ---- prototype-churn: a prototype rule added and removed while a program calls the function
prototype-churn_rules() {
    # getppid armed: the advised call on which a running program notices table changes
    echo '{"id":"watch","symbol":"getppid","position":"before","action":{"log":true},"when":{"nth":1000000000}}'
}
prototype-churn_command() {
    CMD=("$(fx proto_main "$1")" live)
    CMD_STDIN=$OUT/fx/lines
}
prototype-churn_churn() {
    local t=$1 r=p$2
    add_rule "$t" "{\"id\":\"$r\",\"symbol\":\"fx_add\",\"prototype\":\"int fx_add(int a, int b)\",\"position\":\"instead\",\"action\":{\"return\":-7},\"when\":{\"every\":2}}"
    sleep 0.03
    remove_rules "$t" "$r"
}

# ---- after-errno: after advice keeping and replacing results, globs, delay and signal actions
after-errno_rules() {
    echo '{"rules":[
      {"id":"o","symbol":"open","position":"after","action":{"log":true}},
      {"id":"c","symbol":"close","position":"before","action":{"signal":"SIGUSR1","delay":"2ms"},"when":{"process":"signal_raise*"}},
      {"id":"w","symbol":"write","position":"after","action":{"fail":"EIO"},"when":{"process":"errno_exact*","args":[{"arg":2,"eq":5}]}},
      {"id":"r","symbol":"read","position":"after","action":{"log":true}},
      {"id":"g","symbol":"open","position":"instead","action":{"fail":"EACCES"},"when":{"nth":2,"args":[{"arg":0,"glob":"/etc/host*"}]}}]}'
}
after-errno_command() {
    CMD=(bash -c '"$0" >/dev/null && "$1" /etc/hostname 3 >/dev/null && "$2" >/dev/null' \
        "$(fx errno_exact "$1")" "$(fx open_calls "$1")" "$(fx signal_raise "$1")")
}

# ---- closed-fds: every descriptor closed (each an armed close), then armed calls
closed-fds_rules() {
    echo '{"rules":[
      {"id":"g","symbol":"getppid","position":"instead","action":{"return":42},"when":{"every":2}},
      {"id":"c","symbol":"close","position":"after","action":{"log":true},"when":{"every":100}}]}'
}
closed-fds_command() { CMD=("$(fx closed_fds "$1")" loop "$OUT/tables/closed-fds-$1.out"); }

# ---- clearenv: clearenv() under an attached preload, then exec with and without it
clearenv_rules() {
    echo '{"id":"g","symbol":"getppid","position":"instead","action":{"return":42},"when":{"every":2}}'
}
clearenv_command() {
    CMD=(bash -c '"$0" bare >/dev/null && "$0" keep >/dev/null' "$(fx clearenv_exec "$1")")
}

# ---- signals: a 10 kHz SIGALRM handler calling armed functions against the main loop.
# Under TSan write stays unarmed: TSan's write interceptor counts as a blocking call, during
# which TSan runs signal handlers at once, and an instrumented preload running inside that
# call (the armed path) can be interrupted while TSan holds its own trace lock, which the
# handler then waits for forever (seen: TraceSwitchPartImpl -> sighandler -> SlotLock). That
# is a limit of running instrumented code beneath a TSan interceptor, not of the preload; the
# ASan run arms write too, and so does HostSafetyTests with the ordinary build.
signals_rules() {
    local getppid='{"id":"g","symbol":"getppid","position":"instead","action":{"return":42},"when":{"every":3}}'
    local write='{"id":"w","symbol":"write","position":"after","action":{"log":true},"when":{"every":1000}}'
    if [ "$1" = tsan ]; then echo "$getppid"; else echo "[$getppid, $write]"; fi
}
signals_command() { CMD=("$(fx signal_storm "$1")" "$MS" 100); }

# ---- children: fork, vfork, fork + exec and posix_spawn from 4 threads, with fork, execve
# and posix_spawn armed
children_rules() {
    echo '{"rules":[
      {"id":"g","symbol":"getppid","position":"instead","action":{"return":42},"when":{"every":2}},
      {"id":"f","symbol":"fork","position":"before","action":{"log":true},"when":{"every":7}},
      {"id":"e","symbol":"execve","position":"after","action":{"log":true}},
      {"id":"s","symbol":"posix_spawn","position":"before","action":{"log":true}}]}'
}
children_command() { CMD=("$(fx child_storm "$1")" 4 16); }
children_churn() {
    local t=$1 r=k$2
    add_rule "$t" "{\"id\":\"$r\",\"symbol\":\"getppid\",\"position\":\"before\",\"action\":{\"log\":true},\"scope\":\"hierarchy\",\"when\":{\"every\":4}}"
    sleep 0.02
    remove_rules "$t" "$r"
}

# ---- many-threads: 1,000 threads at once (300 under TSan, whose per-thread state is large)
many-threads_rules() {
    echo '{"rules":[
      {"id":"g","symbol":"getppid","position":"instead","action":{"return":42},"scope":"thread","when":{"every":10}},
      {"id":"w","symbol":"write","position":"after","action":{"log":true},"when":{"every":1000}}]}'
}
many-threads_command() {
    local n=1000
    [ "$1" = tsan ] && n=300
    CMD=("$(fx many_threads "$1")" "$n" 100)
}

# Runs scenario $1 under sanitizer $2 and appends its line to SUMMARY.
run_scenario() {
    local name=$1 san=$2
    local table=$OUT/tables/$name-$san log=$OUT/logs/$name-$san
    "$ASPECTCTL" create --table "$table" --rules 256 --events 1024 --stats 8192 >/dev/null || return 1
    "${name}_rules" "$san" >"$table.json"
    "$ASPECTCTL" add --table "$table" "$table.json" >/dev/null || { echo "sanitize: $name: rules refused" >&2; return 1; }
    CMD=()
    CMD_STDIN=/dev/null
    "${name}_command" "$san"
    echo "sanitize: $name ($san): ${CMD[*]//$OUT\//}"
    ASPECTS_TABLE=$table sanitized "$san" "$log" timeout -k 5 "$RUN_LIMIT" "${CMD[@]}" \
        <"$CMD_STDIN" >"$log.stdout" 2>"$log.stderr" &
    local pid=$! round=0
    if declare -F "${name}_churn" >/dev/null; then
        while kill -0 "$pid" 2>/dev/null; do
            "${name}_churn" "$table" "$round"
            round=$((round + 1))
        done
    fi
    wait "$pid"
    local status=$?
    local reports fired verdict=ok
    reports=$(count_reports "$log")
    # Advice that never fired means the table was not used (a stale aspectctl, another
    # catalog): such a run proves nothing and fails.
    fired=$("$ASPECTCTL" list --table "$table" --all 2>/dev/null | grep -o 'fired [0-9]*' | awk '{s += $2} END {print s + 0}')
    if [ "$status" != 0 ]; then
        verdict="exit-$status"
        [ "$status" = 124 ] && verdict=timeout
    elif [ "$fired" = 0 ]; then
        verdict=no-advice
    fi
    RUNS=$((RUNS + 1))
    [ "$verdict" != ok ] && FAILED_RUNS=$((FAILED_RUNS + 1))
    REPORTS=$((REPORTS + reports))
    SUMMARY+=("$(printf '  %-22s %-6s %-8s %-8s %s' "$name" "$san" "$verdict" "$reports" "$fired")")
    [ "$round" -gt 0 ] && SUMMARY[-1]+=" ($round churn rounds)"
    return 0
}
