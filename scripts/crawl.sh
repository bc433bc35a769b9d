#!/usr/bin/env bash
# crawl.sh: run crawl rounds (fetch a segment, then build the next one) on one
# crawl directory. Safe to run from cron: a lock keeps two runs apart, every
# round has its own log, and a run killed at any point resumes on the next call.
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
#   75  another crawl.sh holds the lock on this crawl directory (try later)
#   130 interrupted (SIGINT/SIGTERM/SIGHUP); the next run resumes where this
#       one stopped
set -uo pipefail

prog=crawl.sh
# `wait -n -p` (to notice a step's end at once) and EPOCHREALTIME.
if ((BASH_VERSINFO[0] < 5 || (BASH_VERSINFO[0] == 5 && BASH_VERSINFO[1] < 1))); then
    echo "$prog: bash 5.1 or newer is needed (this is $BASH_VERSION)" >&2
    exit 2
fi
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
Logs: CRAWL/logs/round-NNNNN.log (one per round), plus each program's own log.
Each round prints one line: round number, segment, URLs in it, pages fetched
(HTTP responses other than robots.txt), new URLs scheduled; what the fetch
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
(min_free_disk; free the space it names, then run again), 75 locked by another
run, 130 interrupted (run again to resume).
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
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
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
fetcher=$(find_bin fetcher) || exit 2
segmenter=$(find_bin segmenter) || exit 2
command -v flock >/dev/null 2>&1 || { echo "$prog: flock not found (it comes with util-linux)" >&2; exit 2; }

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

mkdir -p "$crawl/logs" || { echo "$prog: $crawl: cannot create the crawl directory" >&2; exit 1; }

# One run at a time per crawl directory. The lock is held by this process and
# by the step it runs (they share the descriptor), so it is released when both
# are gone, however they end (even kill -9); a step left running by a killed
# crawl.sh keeps the crawl locked until it ends.
exec 9>"$crawl/.crawl.lock" || { echo "$prog: $crawl/.crawl.lock: cannot open the lock file" >&2; exit 1; }
if ! flock -n 9; then
    echo "$prog: $crawl is being crawled by another run (lock $crawl/.crawl.lock held); exiting" >&2
    exit 75
fi

# Signals are counted here and passed on to the running step, one for one:
# the first asks the step to stop cleanly, a second makes it exit at once.
signals=0
on_signal() { signals=$((signals + 1)); }
trap on_signal INT TERM HUP

# Runs one step with its output appended to the round log, and stops the
# script, naming the step, if it fails. The step runs in its own process
# group, so that a Ctrl-C on the terminal reaches it once, through this
# script, rather than twice. With STOP_WATCH=1 (the fetch), a STOP file
# appearing in CRAWL also asks the step to stop early.
STOP_WATCH=0
step() {
    local name=$1; shift
    local stamp
    TZ=UTC0 printf -v stamp '%(%Y-%m-%dT%H:%M:%SZ)T' -1
    echo "=== $stamp $name: $*" >>"$log"
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
                exit 0 ;;
        esac
    fi
    if [ "$signals" -gt 0 ] || [ "$rc" = 130 ] || [ "$rc" = 131 ]; then
        echo "$prog: interrupted during $name; run again to resume (log: $log)" >&2
        exit 130
    fi
    if [ "$rc" = 3 ]; then
        # The step refused to start for lack of space, having changed nothing.
        echo "$prog: $name did not start: not enough free disk space (see $log)" >&2
        grep 'free disk space' "$log" | tail -n 1 | sed "s/^/$prog:   /" >&2
        exit 3
    fi
    if [ "$rc" != 0 ]; then
        local how="exit code $rc"
        [ "$rc" -gt 128 ] && how="$how (killed by signal $((rc - 128)))"
        echo "$prog: $name failed with $how; see $log" >&2
        tail -n 5 "$log" | sed "s/^/$prog:   /" >&2
        exit 1
    fi
}

stop_requested() {
    if [ -e "$crawl/STOP" ]; then
        echo "$prog: $crawl/STOP exists; stopping (remove it to go on)"
        exit 0
    fi
}

# The value of key $1 in $2, one line of flat JSON as the programs print
# with --json (`{"key":value,...}`): a number, true/false/null, a string
# (unquoted here), or a list of segment IDs (here separated by spaces). The
# programs promise that strings and IDs hold no `"` or `,`.
json_value() {
    local rest=${2#*\"$1\":}
    [ "$rest" != "$2" ] || return 1
    case "$rest" in
        \[*) rest=${rest#\[}; rest=${rest%%]*}; rest=${rest//\"/}; rest=${rest//,/ } ;;
        \"*) rest=${rest#\"}; rest=${rest%%\"*} ;;
        *) rest=${rest%%[,\}]*} ;;
    esac
    printf '%s\n' "$rest"
}

# Asks the segmenter where the crawl stands (`segmenter status --json`):
# sets $segments (every segment ID, oldest first), $next (the segment the
# fetcher takes next, empty if none) and $unconsumed (complete fetched runs
# the segmenter has not read yet), and keeps the whole answer in
# $crawl_status (the last run's figures: see round_figure). The backlog,
# which takes a read of the whole file to count, is asked for only when a
# decision needs it.
crawl_state() {
    crawl_status=$("$segmenter" status "$crawl" --json --no-backlog) || {
        echo "$prog: 'segmenter status $crawl' failed (it says why above)" >&2
        exit 1
    }
    segments=$(json_value segments "$crawl_status" | tr ' ' '\n')
    next=$(json_value next "$crawl_status")
    unconsumed=$(json_value unconsumed "$crawl_status")
}

# Prints figure $1 of the last segmenter run (a round_* key of `segmenter
# status`, as crawl_state last read it); 0 if it is unknown, or if that run
# is the one of before this round's segmenter run ($report_before: the run
# had nothing to do and kept no report).
round_figure() {
    local n
    n=$(json_value "$1" "$crawl_status")
    [ "$(json_value last_round "$crawl_status")" != "$report_before" ] || n=0
    case "$n" in ''|*[!0-9]*) n=0 ;; esac
    echo "$n"
}

# Prints the URLs waiting in the backlog (1 if it cannot be read).
backlog_urls() {
    local n
    n=$(json_value backlog_urls "$("$segmenter" status "$crawl" --json 2>/dev/null)")
    case "$n" in ''|*[!0-9]*) n=1 ;; esac
    echo "$n"
}

# The file of segment $1 (of whichever format version it is in).
segment_file() {
    local f
    for f in "$crawl/segments/$1".v[0-9]*.tsv.zst; do
        [ -e "$f" ] && { echo "$f"; return; }
    done
}

# Sets $summary to the summary of a file of the segment format (`segmenter
# inspect --json`, spaces removed), asking once per file: a round counts its
# new segment, the next one fetches it (and may wait for its first URL).
declare -A summaries=()
summary_of() {
    if [ -z "${summaries[$1]:-}" ]; then
        summaries[$1]=$("$segmenter" inspect --json "$1" 2>/dev/null | tr -d ' \n')
    fi
    summary=${summaries[$1]}
}

# Sets $count to the URLs in a file of the segment format.
count_file() {
    summary_of "$1"
    count=$(json_value urls "$summary")
}

# Sets $count to the URLs in the segments whose IDs are given.
count_urls_in() {
    local total=0 id
    for id in "$@"; do
        count_file "$(segment_file "$id")"
        total=$((total + ${count:-0}))
    done
    count=$total
}

# Asks the fetcher what the fetch of segment $1 did (`fetcher status
# --json`): sets $pages (HTTP responses other than robots.txt, over every
# run of the segment; ? if unknown) and $stop_reason (why it ended:
# complete, tail, held, time-limit, min-hosts, signal).
fetch_state() {
    local state
    state=$("$fetcher" status "$crawl" "$1" --json 2>/dev/null) || state=""
    pages=$(json_value pages "$state") || pages="?"
    stop_reason=$(json_value stop_reason "$state")
    stop_detail=$(json_value stop_detail "$state")
}

# True if the fetch did what it could (not stopped by a time limit,
# min-hosts or a signal): it ran to its end, or ended when only hosts it
# would have waited for were left.
fetch_complete() {
    case "$stop_reason" in complete|tail|held) return 0 ;; *) return 1 ;; esac
}

# Rounds in a row that found every host held, and how many of them wait.
held_rounds=0
MAX_HELD_WAITS=5

# Prints the seconds until the first URL of segment $1 may be fetched, when
# every one of its URLs has a not-before time (0 if some URL has none;
# nothing if the segment is empty or its summary unreadable).
held_wait() {
    local summary urls held first at
    [ -n "$1" ] || return 0
    summary_of "$(segment_file "$1")"
    urls=$(json_value urls "$summary")
    held=$(json_value not_before_urls "$summary")
    first=$(json_value earliest_not_before "$summary")
    case "$urls" in ''|0|*[!0-9]*) return 0 ;; esac
    if [ "$held" != "$urls" ]; then
        echo 0
        return 0
    fi
    at=$(date -d "$first" +%s 2>/dev/null) || return 0
    echo $(( at > EPOCHSECONDS ? at - EPOCHSECONDS + 1 : 1 ))
}

now() { echo "$EPOCHREALTIME"; }
# Seconds since $1 (from `now`), with one decimal.
seconds_since() {
    local t=$EPOCHREALTIME
    local us=$(( (${t%.*} - ${1%.*}) * 1000000 + 10#${t#*.} - 10#${1#*.} ))
    printf '%d.%d' $(( us / 1000000 )) $(( us % 1000000 / 100000 ))
}

# First run on a new crawl directory: inject the seeds.
crawl_state
if [ -z "$segments" ]; then
    if [ -z "$seeds" ]; then
        echo "$prog: $crawl has no segment yet; give seeds with --seeds FILE" >&2
        exit 2
    fi
    log="$crawl/logs/inject.log"
    step "segmenter inject" "$segmenter" inject "$crawl" "$seeds" "${seg_args[@]}"
    crawl_state
    # shellcheck disable=SC2086
    count_urls_in $segments
    echo "injected $count seed URLs from $seeds"
elif [ -n "$seeds" ]; then
    echo "$prog: $crawl already has segments; --seeds $seeds ignored"
fi

round=0
while [ -z "$rounds" ] || [ "$round" -lt "$rounds" ]; do
    stop_requested
    started=$EPOCHSECONDS
    round_logs=("$crawl"/logs/round-*.log)
    [ -e "${round_logs[0]}" ] || round_logs=()
    n=$(( ${#round_logs[@]} + 1 ))
    log=$(printf '%s/logs/round-%05d.log' "$crawl" "$n")

    # A segmenter run interrupted earlier (its fetched run is complete but not
    # consumed) is redone first, so that no fetched page is skipped.
    crawl_state
    if [ -n "$unconsumed" ]; then
        step "segmenter run (catching up)" "$segmenter" run "$crawl" "${seg_args[@]}"
        crawl_state
    fi
    # Segments written from here on are this round's finds (those of the
    # catching-up run belong to the interrupted round before).
    before=$segments
    id=$next
    if [ -z "$id" ]; then
        # Nothing waiting: the backlog may still fill a segment.
        step "segmenter run" "$segmenter" run "$crawl" "${seg_args[@]}"
        crawl_state
        id=$next
    fi
    if [ -z "$id" ]; then
        backlog=$(backlog_urls)
        if [ "$backlog" != 0 ]; then
            # Every host of the backlog may only be asked after a round's time.
            echo "nothing to fetch now in $crawl: $backlog URL(s) wait in the backlog" \
                "for hosts that may not be asked yet; a later run goes on"
        else
            history=$(json_value history_urls "$("$segmenter" status "$crawl" --json 2>/dev/null)")
            case "$history" in ''|*[!0-9]*|0)
                echo "nothing left to fetch in $crawl" ;;
            *)
                echo "nothing left to fetch in $crawl now: no new URL, and none of the" \
                    "$history URL(s) of the fetch history is due for a refetch yet" \
                    "(segmenter inspect $crawl/history.v2.tsv.zst says when); a later run goes on" ;;
            esac
        fi
        rm -f "$log"
        exit 0
    fi
    stop_requested

    count_file "$(segment_file "$id")"
    urls=$count
    STOP_WATCH=1
    fetch_started=$(now)
    step "fetcher fetch $id" "$fetcher" fetch "$crawl" "$id" "${fetch_args[@]}"
    fetch_took=$(seconds_since "$fetch_started")
    STOP_WATCH=0
    fetch_state "$id"
    # A fetch that ended at the free-disk floor: stop with its own code and
    # say what to free (the next run consumes the fetch and goes on). One
    # that spent the crawl's byte budget ends the crawl.
    case "$stop_reason" in
        disk)
            echo "$prog: the fetch of segment $id stopped at the free-disk floor: $stop_detail" >&2
            exit 3 ;;
        crawl-bytes)
            echo "the crawl's byte budget is spent: $stop_detail"
            exit 0 ;;
    esac
    report_before=$(json_value last_round "$crawl_status")
    seg_started=$(now)
    step "segmenter run" "$segmenter" run "$crawl" "${seg_args[@]}"
    seg_took=$(seconds_since "$seg_started")

    crawl_state
    new_ids=$(LC_ALL=C comm -13 <(echo "$before") <(echo "$segments"))
    # shellcheck disable=SC2086
    count_urls_in $new_ids
    found=$count
    round=$((round + 1))
    unchanged=$(round_figure round_refreshed_unchanged)
    changed=$(round_figure round_refreshed_changed)
    printf 'round %d: segment %s, %s URLs, %s pages fetched, %s new URLs in %d segment(s); history: %s new, %s refreshed (%s unchanged, %s changed), %s retired; sitemaps: %s read, %s URLs, %s new, %s rejected, %s bad; fetch %ss (%s), segmenter %ss; %ds\n' \
        "$n" "$id" "${urls:-?}" "$pages" "$found" "$(echo "$new_ids" | grep -c .)" \
        "$(round_figure round_history_new)" "$(( unchanged + changed ))" "$unchanged" "$changed" \
        "$(round_figure round_retired)" \
        "$(round_figure round_sitemaps_read)" "$(round_figure round_sitemap_urls)" \
        "$(round_figure round_sitemap_urls_new)" "$(round_figure round_sitemap_urls_rejected)" \
        "$(round_figure round_bad_sitemaps)" \
        "$fetch_took" "$stop_reason" "$seg_took" "$(( EPOCHSECONDS - started ))"

    # A fetch that ended with every host left held beyond its delay (a
    # robots.txt to ask again, a Retry-After) and got no page: another round
    # now would only find them held again. Wait for the first of them (the
    # next segment's earliest not-before; a STOP file or a signal ends the
    # wait), a few times at most; else stop, and the next run goes on.
    if [ "$pages" = 0 ] && [ "$stop_reason" = held ]; then
        held_rounds=$((held_rounds + 1))
        wait_s=$(held_wait "$next")
        if [ -n "$wait_s" ] && [ "$held_rounds" -le "$MAX_HELD_WAITS" ]; then
            echo "every host left is held; waiting ${wait_s}s for the first of them"
            STOP_WATCH=1
            step "waiting for held hosts" sleep "$wait_s"
            STOP_WATCH=0
            continue
        fi
        echo "nothing fetchable now in $crawl: every host left in segment $id is held" \
            "(robots.txt to ask again, Retry-After; see $crawl/logs/); the next run goes on"
        exit 0
    fi
    # A complete fetch that got no HTTP response at all, after which no URL is
    # new and none waits in the backlog, cannot lead anywhere by itself: what
    # is left waits on hosts that cannot be fetched now (robots.txt
    # unavailable, Crawl-delay too high, connections failing). Stop rather
    # than fetch the same URLs again and again; the next run retries them.
    if [ "$pages" = 0 ] && [ "$found" -le "${urls:-0}" ] \
        && fetch_complete && [ "$(backlog_urls)" = 0 ]; then
        echo "nothing fetchable left in $crawl: no URL of segment $id got an HTTP response" \
            "(see $crawl/fetched/$id/crawl.log); its $found URL(s) wait for the next run"
        exit 0
    fi
    held_rounds=0
done
echo "$round round(s) done; run again to go on"
exit 0
