#!/usr/bin/env bash
# crawl.sh: run crawl rounds (fetch a segment, then build the next one) on one
# crawl directory. Safe to run from cron: a lock keeps two runs apart, every
# round has its own log, and a run killed at any point resumes on the next call.
#
# What to do next, and why, is decided by `segmenter next` (the crawl cycle's
# rules, in segmenter/src/cycle/), which this script asks between steps; the
# script keeps the lock, runs each step in its own process group, passes
# signals on, watches for the STOP file and loops.
#
# Usage: scripts/crawl.sh CRAWL [--seeds FILE] [--rounds N] [--bin DIR]
#                          [PROGRAM FLAGS...] [--] [FETCHER_ARGS...]
#
# Exit codes:
#   0   stopped normally: rounds done, nothing left to fetch, or a STOP file
#   1   a step failed (the message names it and its log)
#   2   usage error (bad option, missing seeds, binary not found)
#   3   stopped at the free-disk floor (min_free_disk): a fetch ended there,
#       or a step did not start for lack of space; a line says how much to
#       free; the next run goes on once there is room
#   4   a fetch could not upload its WARC files to the WARC store (warc_store);
#       the round stays open: run again once the store answers
#   75  another crawl.sh holds the lock on this crawl directory (try later)
#   130 interrupted (SIGINT/SIGTERM/SIGHUP); the next run resumes where this
#       one stopped
set -uo pipefail

prog=crawl.sh
usage() {
    cat <<'EOF'
Usage: scripts/crawl.sh CRAWL [options] [PROGRAM FLAGS...] [--] [FETCHER_ARGS...]

Runs crawl rounds on the crawl directory CRAWL: each round fetches the oldest
waiting segment (fetcher fetch) and builds the next segment from what was
fetched (segmenter run). Stops after --rounds rounds, when no segment is left,
or when the file CRAWL/STOP exists (a fetch in progress is then stopped
cleanly; its unfetched URLs are kept for later).

Options:
  --seeds FILE          inject these seeds first if CRAWL has no segment yet
  --rounds N            at most N rounds (default: until nothing is left)
  --bin DIR             where the fetcher and segmenter binaries are
                        (default: target/release of this repository, then PATH)
  --fetcher-arg ARG     pass ARG to `fetcher fetch` (repeatable)
  --segmenter-arg ARG   pass ARG to `segmenter inject` and `segmenter run`
                        (repeatable)
  --                    everything after it is passed to `fetcher fetch`
  -h, --help            this help

Any other flag goes to the program it belongs to (`fetcher fetch --help`,
`segmenter run --help`): `--min-delay 1s` to both (the segmenter plans rounds
with the fetcher's politeness settings, and `--round-time`, `--delay-factor`
and `--max-crawl-delay` likewise), `--max-body 1MB` to the fetcher,
`--max-per-host 50` to the segmenter. A flag both programs have with
different meanings (`--threads`) must be given with --fetcher-arg or
--segmenter-arg.

Settings for both programs are best kept in CRAWL/crawl.toml.
Logs: CRAWL/logs/round-NNNNN.log (one per round, every step's output); logs
and the spent files of fetched runs (segments, leftover lists; never WARC
files) older than [crawl] keep_logs (30d) are pruned at the start of each run.
Rounds are numbered by the round journal CRAWL/rounds.v1.tsv (one line each).
After each round, CRAWL/report.html (segmenter report) is rebuilt; a failure
there is written to the round's log and does not stop the crawl.
Each round prints one line: round number, segment, URLs in it, pages fetched
(HTTP responses other than robots.txt), URLs scheduled (in the segments the
round wrote); what the fetch
history learnt (URLs fetched for the first time, refreshed ones and of them
unchanged and changed, URLs retired: gone, moved, robots.txt); what sitemaps
gave (sitemaps read, URLs they list, new ones scheduled, rejected ones, bad
sitemaps); then how long
the fetch took and why it ended (complete, tail: the hosts left would mostly
have made it wait, time-limit, ...), how long the segmenter took, and the
round's seconds. When nothing new is left, rounds go on with the URLs due for
a refetch; when none is due either, the run stops (the next one goes on).

Exit codes: 0 done (rounds done, nothing left, STOP, or the crawl's byte
budget reached), 1 a step failed, 2 usage, 3 stopped at the free-disk floor
(min_free_disk; free the space it names, then run again), 4 the WARC store
could not take a fetch's files (run again once it answers), 75 locked by
another run, 130 interrupted (run again to resume).
EOF
}

die_usage() {
    echo "$prog: $*" >&2
    echo "Try '$prog --help'." >&2
    exit 2
}

# First pass: crawl.sh's own options; the other words (the crawl directory,
# the programs' flags and their values) are sorted out once the programs
# have said which flags they take.
crawl="" seeds="" rounds="" bindir="" seg_args=() fetch_args=() rest=()
while [ $# -gt 0 ]; do
    case "$1" in
        -h|--help) usage; exit 0 ;;
        --seeds) [ $# -ge 2 ] || die_usage "--seeds needs a file"; seeds=$2; shift 2 ;;
        --rounds) [ $# -ge 2 ] || die_usage "--rounds needs a number"; rounds=$2; shift 2 ;;
        --bin) [ $# -ge 2 ] || die_usage "--bin needs a directory"; bindir=$2; shift 2 ;;
        --segmenter-arg) [ $# -ge 2 ] || die_usage "--segmenter-arg needs a value"; seg_args+=("$2"); shift 2 ;;
        --fetcher-arg) [ $# -ge 2 ] || die_usage "--fetcher-arg needs a value"; fetch_args+=("$2"); shift 2 ;;
        --) shift; fetch_args+=("$@"); break ;;
        --*) rest+=("$1"); shift ;;
        -*) die_usage "unknown option $1" ;;
        *) rest+=("$1"); shift ;;
    esac
done
case "$rounds" in
    '') ;;
    *[!0-9]*|0*) die_usage "--rounds takes a whole number above 0, not '$rounds'" ;;
esac
[ -z "$seeds" ] || [ -f "$seeds" ] || die_usage "$seeds: no such seeds file"
# The crawl directory is among the words left (found in the second pass).
[ ${#rest[@]} -gt 0 ] || die_usage "missing the crawl directory"

# Find the binaries: --bin, then this repository's release build, then PATH.
# shellcheck source=cycle.sh
. "$(dirname "${BASH_SOURCE[0]}")/cycle.sh"
need_bash 5 1 "wait -n -p (to notice a step's end at once) and EPOCHREALTIME"
fetcher=$(find_bin fetcher) || exit 2
segmenter=$(find_bin segmenter) || exit 2

# Second pass: each program flag goes to the program it belongs to; each
# program lists its flags (`--name=` takes a value; ` shared`: the
# segmenter's copy of a fetcher setting, which both get). The one word that
# is neither a flag nor a flag's value is the crawl directory.
declare -A fetcher_flag=() segmenter_flag=()
while read -r f _; do fetcher_flag[${f%=}]=$f; done < <("$fetcher" flags)
while read -r f shared; do segmenter_flag[${f%=}]="$f${shared:+ shared}"; done < <("$segmenter" flags)
i=0
while [ $i -lt ${#rest[@]} ]; do
    arg=${rest[$i]}
    i=$((i + 1))
    case "$arg" in
        --*) ;;
        *)
            [ -z "$crawl" ] || die_usage "one crawl directory only (got '$crawl' and '$arg')"
            crawl=$arg
            continue ;;
    esac
    name=${arg%%=*}
    in_f=${fetcher_flag[$name]:-} in_s=${segmenter_flag[$name]:-}
    [ -n "$in_f$in_s" ] || die_usage "unknown option $name (not a flag of crawl.sh, fetcher fetch or segmenter run)"
    if [ -n "$in_f" ] && [ -n "$in_s" ] && [ "${in_s#* }" != shared ]; then
        die_usage "$name is a flag of both fetcher fetch and segmenter run, with different meanings: give it with --fetcher-arg or --segmenter-arg"
    fi
    words=("$arg")
    case "${in_f:-$in_s}" in
        *=*)
            if [ "$arg" = "$name" ]; then
                [ $i -lt ${#rest[@]} ] || die_usage "$name needs a value"
                words+=("${rest[$i]}")
                i=$((i + 1))
            fi ;;
    esac
    [ -z "$in_f" ] || fetch_args+=("${words[@]}")
    [ -z "$in_s" ] || seg_args+=("${words[@]}")
done
[ -n "$crawl" ] || die_usage "missing the crawl directory"

# Without seeds, only a crawl that was started goes on; nothing is created
# for a mistyped directory.
if [ -z "$seeds" ] && [ ! -e "$crawl/seen.bloom" ] && [ ! -e "$crawl/shards.toml" ]; then
    if [ -d "$crawl" ]; then
        echo "$prog: $crawl: no crawl was started here (no seen.bloom); start one with: $0 $crawl --seeds SEEDS_FILE" >&2
    else
        echo "$prog: $crawl: no such crawl directory; start a crawl there with: $0 $crawl --seeds SEEDS_FILE" >&2
    fi
    exit 2
fi

mkdir -p "$crawl/logs" || { echo "$prog: $crawl: cannot create the crawl directory" >&2; exit 1; }

# One run at a time per crawl directory. The lock is held by this process and
# by the step it runs (they share the descriptor), so it is released when both
# are gone, however they end (even kill -9); a step left running by a killed
# crawl.sh keeps the crawl locked until it ends.
lock_crawl

# Signals are counted here and passed on to the running step, one for one:
# the first asks the step to stop cleanly, a second makes it exit at once.
signals=0
on_signal() { signals=$((signals + 1)); }
trap on_signal INT TERM HUP

# Runs one step with its output appended to its log ($log), and sets
# $step_rc to its exit code (0 for a fetch stopped cleanly by STOP). The step
# runs in its own process group, so that a Ctrl-C on the terminal reaches it
# once, through this script, rather than twice; a signal received stops the
# script once the step has ended. With STOP_WATCH=1 (the fetch, a wait), a
# STOP file appearing in CRAWL also asks the step to stop early.
STOP_WATCH=0
step_rc=0
step() {
    local name=$1; shift
    log_step "$name: $*"
    set -m
    "$@" </dev/null >>"$log" 2>&1 &
    local pid=$!
    set +m
    # TERMs sent to the step: one per signal received, and one for STOP
    # (which a first signal does not add to: the step is already stopping).
    local sent=0 want stop_sent=0 rc=0 nap ended=""
    while [ -z "${ended:-}" ]; do
        if [ "$STOP_WATCH" = 1 ] && [ "$stop_sent" = 0 ] && [ -e "$crawl/STOP" ]; then
            echo "$prog: $crawl/STOP appeared; asking $name to stop early"
            stop_sent=1
        fi
        want=$signals
        [ "$stop_sent" = 1 ] && [ "$want" = 0 ] && want=1
        if [ "$sent" -lt "$want" ]; then
            kill -TERM "$pid" 2>/dev/null
            sent=$((sent + 1))
            continue
        fi
        # Until the step ends (noticed at once), or 0.2 s pass (to look for
        # STOP), or a signal comes (trapped: it interrupts the wait).
        sleep 0.2 &
        nap=$!
        ended=""
        wait -n -p ended "$pid" "$nap"
        rc=$?
        # (A signal leaves `ended` unset.)
        if [ "${ended:-}" != "$nap" ]; then
            kill "$nap" 2>/dev/null
            wait "$nap" 2>/dev/null
        fi
        [ "${ended:-}" = "$pid" ] || ended=""
    done
    if [ "$stop_sent" = 1 ] && [ "$signals" = 0 ]; then
        case "$rc" in
            130) rc=0 ;; # a clean early stop: the unfetched URLs are in the leftover file
            143) # our TERM came before the step could catch it: as if killed
                echo "$prog: $name ended at once on STOP (it was starting); the next run resumes it"
                rc=0 ;;
        esac
    fi
    if [ "$signals" -gt 0 ] || [ "$rc" = 130 ] || [ "$rc" = 131 ]; then
        echo "$prog: interrupted during $name; run again to resume (log: $log)" >&2
        exit 130
    fi
    step_rc=$rc
}

prune_crawl

since=$EPOCHREALTIME
rounds_done=0 rc=0 first=1 failed_log=""
while :; do
    next_step
    if [ "$first" = 1 ] && [ -n "$seeds" ] && [ "$action" != inject ]; then
        echo "$prog: $crawl already has segments; --seeds $seeds ignored"
    fi
    first=0 step_rc=0
    case "$action" in
        inject)
            if [ -z "$seeds" ]; then
                echo "$prog: $crawl has no segment yet; give seeds with --seeds FILE" >&2
                exit 2
            fi
            step "segmenter inject" "$segmenter" inject "$crawl" "$seeds" --log "$log" "${seg_args[@]}" ;;
        injected) echo "injected $arg seed URLs from $seeds" ;;
        fetch|resume)
            STOP_WATCH=1
            step "fetcher fetch $arg" "$fetcher" fetch "$crawl" "$arg" --log "$log" "${fetch_args[@]}"
            STOP_WATCH=0 ;;
        segment) step "segmenter run" "$segmenter" run "$crawl" --log "$log" "${seg_args[@]}" ;;
        wait)
            echo "$reason"
            STOP_WATCH=1
            step "waiting for held hosts" sleep "$arg"
            STOP_WATCH=0 ;;
        *) common_answer ;;
    esac
    step_ended
done
