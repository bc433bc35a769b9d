# Sourced by the drivers (crawl.sh, slurm/crawl.sh) and by task.sh: the
# shell side of the crawl cycle, written once. The decisions themselves are
# `segmenter next`'s (segmenter/src/cycle/); these functions ask for them and
# do what every driver does around them. They use the caller's $prog (for
# messages), $crawl, $segmenter, $bindir (--bin, empty for none), $since
# (when the driver started, as $EPOCHREALTIME), $signals (signals received,
# 0 for none), $rounds (the --rounds limit, empty for none) and the loop's
# $rc, $rounds_done and $failed_log (see next_step).
# shellcheck shell=bash

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# `find_bin NAME`: prints the path of the program NAME (fetcher, segmenter):
# from `--bin DIR` ($bindir) if given, else this repository's release build,
# else the PATH. On failure it says what to do (as $prog) and returns 1.
find_bin() {
    local name=$1
    if [ -n "$bindir" ]; then
        [ -x "$bindir/$name" ] || { echo "$prog: $bindir/$name: not found or not executable" >&2; return 1; }
        echo "$bindir/$name"
    elif [ -x "$repo/target/release/$name" ]; then
        echo "$repo/target/release/$name"
    elif command -v "$name" >/dev/null 2>&1; then
        command -v "$name"
    else
        echo "$prog: cannot find '$name': build it with 'cargo build --release' or pass --bin DIR" >&2
        return 1
    fi
}

# `read_shards CRAWL`: prints S, the shard count of CRAWL/shards.toml; on a
# file without a `shards = S` line, says so (as $prog) and returns 1.
read_shards() {
    local line
    while IFS= read -r line; do
        if [[ $line =~ ^shards\ *=\ *([0-9]+)\ *$ ]]; then
            echo "${BASH_REMATCH[1]}"
            return 0
        fi
    done <"$1/shards.toml"
    echo "$prog: $1/shards.toml: no 'shards = S' line" >&2
    return 1
}

# `need_bash MAJOR MINOR WHY`: exits 2, saying so, on a bash older than
# MAJOR.MINOR (WHY: what the caller needs of it).
need_bash() {
    if ((BASH_VERSINFO[0] < $1 || (BASH_VERSINFO[0] == $1 && BASH_VERSINFO[1] < $2))); then
        echo "$prog: bash $1.$2 or newer is needed, for $3 (this is $BASH_VERSION)" >&2
        exit 2
    fi
}

# `lock_crawl`: takes CRAWL/.crawl.lock on descriptor 9 (kept by the steps
# the driver starts, so that a step left running by a killed driver keeps
# the crawl locked), or exits 75 if another run holds it.
lock_crawl() {
    command -v flock >/dev/null 2>&1 || { echo "$prog: flock not found (it comes with util-linux)" >&2; exit 2; }
    exec 9>"$crawl/.crawl.lock" || { echo "$prog: $crawl/.crawl.lock: cannot open the lock file" >&2; exit 1; }
    if ! flock -n 9; then
        echo "$prog: $crawl is being crawled by another run (lock $crawl/.crawl.lock held); exiting" >&2
        exit 75
    fi
}

# `read_next [ARGS...]`: asks `segmenter next CRAWL ARGS...` and reads its
# answer line (ACTION ARG LOG REASON) into $action, $arg, $log (the step's
# log, under CRAWL; empty for none) and $reason. If it fails, says so (as
# $prog) and exits 1, or 130 once a signal came ($signals).
read_next() {
    local answer code
    answer=$("$segmenter" next "$crawl" "$@")
    code=$?
    if [ "$code" != 0 ] || [ -z "$answer" ]; then
        [ "${signals:-0}" = 0 ] || { echo "$prog: interrupted; run again to resume" >&2; exit 130; }
        local how="exit code $code"
        [ "$code" -gt 128 ] && how="$how (killed by signal $((code - 128)))"
        echo "$prog: 'segmenter next $crawl $*' failed with $how (it says why above)" >&2
        exit 1
    fi
    read -r action arg log reason <<<"$answer"
    if [ "$log" = - ]; then log=""; else log="$crawl/$log"; fi
}

# `ask CODE [peek]`: asks `segmenter next` what the crawl does next, as the
# driver, passing the exit code of the step just run (see read_next). With
# "peek", records nothing (the answer is only looked at).
ask() {
    local record=--record
    [ "${2:-}" != peek ] || record=""
    read_next ${record:+"$record"} --since "$since" --exit-code "$1"
}

# `next_step`: the next question of the driver's loop: after the step that
# ended with $rc, what to do; once --rounds rounds are done, it only looks,
# and exits 0 unless the last round says to stop (and why).
next_step() {
    if [ -n "$rounds" ] && [ "$rounds_done" -ge "$rounds" ]; then
        ask "$rc" peek
        [ "$action" = stop ] || { echo "$rounds_done round(s) done; run again to go on"; exit 0; }
    else
        ask "$rc"
    fi
}

# `common_answer`: the answers every driver handles alike: `round N` (its
# line printed, counted, the report rebuilt) and `stop CODE`; any other is
# unexpected (exit 1).
common_answer() {
    case "$action" in
        round)
            echo "$reason"
            rounds_done=$((rounds_done + 1))
            report_round "$arg" ;;
        stop) stop_crawl "$failed_log" ;;
        *)
            echo "$prog: unexpected answer from 'segmenter next': $action $arg $reason" >&2
            exit 1 ;;
    esac
}

# `log_step TEXT`: a line `=== TIME TEXT` in the step's log ($log), the
# time in UTC.
log_step() {
    local stamp
    TZ=UTC0 printf -v stamp '%(%Y-%m-%dT%H:%M:%SZ)T' -1
    echo "=== $stamp $*" >>"$log"
}

# `step_ended`: the exit code of the step just run ($step_rc) goes to the
# next question; its log is shown if it failed.
step_ended() {
    rc=$step_rc failed_log=""
    [ "$rc" = 0 ] || failed_log=$log
}

# `report_round N`: rebuilds CRAWL/report.html (segmenter report) after
# round N, its output in the round's log; a report that fails costs the
# page, never the round.
report_round() {
    local round_log
    printf -v round_log '%s/logs/round-%05d.log' "$crawl" "$1"
    echo "=== segmenter report $crawl" >>"$round_log"
    "$segmenter" report "$crawl" </dev/null >>"$round_log" 2>&1 ||
        echo "$prog: 'segmenter report $crawl' failed (exit code $?); the round is not affected" >>"$round_log"
}

# `prune_crawl`: logs and spent files past their retention go (a failure
# only costs disk space).
prune_crawl() {
    "$segmenter" prune "$crawl" || echo "$prog: 'segmenter prune $crawl' failed (it says why above); going on"
}

# `stop_crawl FAILED_LOG`: the `stop CODE` answer: prints its reason (on
# stderr with the last lines of FAILED_LOG, if any, for a code other than
# 0) and exits with CODE.
stop_crawl() {
    if [ "$arg" = 0 ]; then
        echo "$reason"
    else
        echo "$prog: $reason" >&2
        # Not sed: the program's name (slurm/crawl.sh) holds a slash.
        [ -z "$1" ] || tail -n 5 "$1" | while IFS= read -r line; do
            printf '%s:   %s\n' "$prog" "$line"
        done >&2
    fi
    exit "$arg"
}
