#!/usr/bin/env bash
# crawl.sh: run crawl rounds (fetch a segment, then build the next one) on one
# crawl directory. Safe to run from cron: a lock keeps two runs apart, every
# round has its own log, and a run killed at any point resumes on the next call.
#
# Usage: scripts/crawl.sh CRAWL [--seeds FILE] [--rounds N] [--bin DIR]
#                          [--segmenter-arg ARG]... [--] [FETCHER_ARGS...]
#
# Exit codes:
#   0   stopped normally: rounds done, nothing left to fetch, or a STOP file
#   1   a step failed (the message names it and its log)
#   2   usage error
#   75  another crawl.sh holds the lock on this crawl directory (try later)
#   130 interrupted (SIGINT/SIGTERM); the next run resumes where this one stopped
set -uo pipefail

prog=crawl.sh
usage() {
    cat <<'EOF'
Usage: scripts/crawl.sh CRAWL [options] [--] [FETCHER_ARGS...]

Runs crawl rounds on the crawl directory CRAWL: each round fetches the oldest
waiting segment (fetcher fetch) and builds the next segment from what was
fetched (segmenter run). Stops after --rounds rounds, when no segment is left,
or when the file CRAWL/STOP exists (checked between steps).

Options:
  --seeds FILE          inject these seeds first if CRAWL has no segment yet
  --rounds N            at most N rounds (default: until nothing is left)
  --bin DIR             where the fetcher and segmenter binaries are
                        (default: target/release of this repository, then PATH)
  --segmenter-arg ARG   pass ARG to `segmenter run` (repeatable)
  --                    everything after it is passed to `fetcher fetch`
  -h, --help            this help

Settings for both programs are best kept in CRAWL/crawl.toml.
Logs: CRAWL/logs/round-NNNNN.log (one per round), plus each program's own log.

Exit codes: 0 done, 1 a step failed, 2 usage, 75 locked by another run,
130 interrupted (rerun to resume).
EOF
}

die_usage() { echo "$prog: $*" >&2; echo "Try '$prog --help'." >&2; exit 2; }

crawl="" seeds="" rounds=0 bindir="" seg_args=() fetch_args=()
while [ $# -gt 0 ]; do
    case "$1" in
        -h|--help) usage; exit 0 ;;
        --seeds) [ $# -ge 2 ] || die_usage "--seeds needs a file"; seeds=$2; shift 2 ;;
        --rounds) [ $# -ge 2 ] || die_usage "--rounds needs a number"; rounds=$2; shift 2 ;;
        --bin) [ $# -ge 2 ] || die_usage "--bin needs a directory"; bindir=$2; shift 2 ;;
        --segmenter-arg) [ $# -ge 2 ] || die_usage "--segmenter-arg needs a value"; seg_args+=("$2"); shift 2 ;;
        --) shift; fetch_args=("$@"); break ;;
        -*) die_usage "unknown option $1" ;;
        *) [ -z "$crawl" ] || die_usage "one crawl directory only (got '$crawl' and '$1')"; crawl=$1; shift ;;
    esac
done
[ -n "$crawl" ] || die_usage "missing the crawl directory"
case "$rounds" in ''|*[!0-9]*) die_usage "--rounds takes a whole number, not '$rounds'" ;; esac
[ -z "$seeds" ] || [ -f "$seeds" ] || die_usage "$seeds: no such seeds file"

# Find the binaries: --bin, then this repository's release build, then PATH.
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
find_bin() {
    local name=$1
    if [ -n "$bindir" ]; then
        [ -x "$bindir/$name" ] || { echo "$prog: $bindir/$name: not found or not executable" >&2; exit 2; }
        echo "$bindir/$name"
    elif [ -x "$repo/target/release/$name" ]; then
        echo "$repo/target/release/$name"
    elif command -v "$name" >/dev/null 2>&1; then
        command -v "$name"
    else
        echo "$prog: cannot find '$name': build it with 'cargo build --release' or pass --bin DIR" >&2
        exit 2
    fi
}
fetcher=$(find_bin fetcher) || exit 2
segmenter=$(find_bin segmenter) || exit 2

mkdir -p "$crawl/logs" || { echo "$prog: $crawl: cannot create the crawl directory" >&2; exit 1; }

# One run at a time per crawl directory. The lock is released when this
# process exits, however it exits (even kill -9).
exec 9>"$crawl/.crawl.lock" || { echo "$prog: $crawl/.crawl.lock: cannot open the lock file" >&2; exit 1; }
if ! flock -n 9; then
    echo "$prog: $crawl is being crawled by another run (lock $crawl/.crawl.lock held); exiting" >&2
    exit 75
fi

interrupted=0
on_signal() { interrupted=1; }
trap on_signal INT TERM

# Runs one step with its output appended to the round log, and stops the
# script, naming the step, if it fails. A signal to this script is passed on
# to the step, which shuts down cleanly. With STOP_WATCH=1 (the fetch), a
# STOP file appearing in CRAWL also asks the step to stop early.
STOP_WATCH=0
step() {
    local name=$1; shift
    echo "=== $(date -u +%Y-%m-%dT%H:%M:%SZ) $name: $*" >>"$log"
    "$@" >>"$log" 2>&1 &
    local pid=$! sent=0 stopped_by_file=0 rc
    while kill -0 "$pid" 2>/dev/null; do
        if [ "$sent" = 0 ]; then
            if [ "$interrupted" = 1 ]; then
                kill -TERM "$pid" 2>/dev/null; sent=1
            elif [ "$STOP_WATCH" = 1 ] && [ -e "$crawl/STOP" ]; then
                echo "$prog: $crawl/STOP appeared; asking $name to stop early"
                kill -TERM "$pid" 2>/dev/null; sent=1; stopped_by_file=1
            fi
        fi
        sleep 0.2
    done
    wait "$pid"; rc=$?
    if [ "$stopped_by_file" = 1 ] && [ "$interrupted" = 0 ] && [ "$rc" = 130 ]; then
        rc=0 # a clean early stop: the unfetched URLs are in the leftover file
    fi
    if [ "$interrupted" = 1 ] || [ "$rc" = 130 ] || [ "$rc" = 131 ]; then
        echo "$prog: interrupted during $name; run again to resume (log: $log)" >&2
        exit 130
    fi
    if [ "$rc" != 0 ]; then
        echo "$prog: $name failed with exit code $rc; see $log" >&2
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

# Pending segment = a segment file whose fetched/ID/DONE does not exist.
oldest_pending() {
    local f id
    for f in "$crawl"/segments/*.v1.tsv.zst; do
        [ -e "$f" ] || continue
        id=$(basename "$f" .v1.tsv.zst)
        case "$id" in .*) continue ;; esac
        [ -e "$crawl/fetched/$id/DONE" ] || { echo "$id"; return; }
    done
}

# True if some complete fetched run is not yet in consumed.txt.
unconsumed_runs() {
    local d id
    for d in "$crawl"/fetched/*/; do
        [ -e "$d/DONE" ] || continue
        id=$(basename "$d")
        grep -qxF "$id" "$crawl/consumed.txt" 2>/dev/null || return 0
    done
    return 1
}

# Reads a number from a JSON file written with one key per line.
json_number() {
    sed -n "s/.*\"$2\"[[:space:]]*:[[:space:]]*\([0-9][0-9]*\).*/\1/p" "$1" 2>/dev/null | head -n 1
}

segment_urls() {
    "$segmenter" inspect --json "$1" 2>/dev/null | tr ',' '\n' | sed -n 's/.*"urls"[[:space:]]*:[[:space:]]*\([0-9][0-9]*\).*/\1/p' | head -n 1
}

count_urls_in() {
    local total=0 id n
    for id in "$@"; do
        n=$(segment_urls "$crawl/segments/$id.v1.tsv.zst")
        total=$((total + ${n:-0}))
    done
    echo "$total"
}

list_segments() {
    local f
    for f in "$crawl"/segments/*.v1.tsv.zst; do
        [ -e "$f" ] && basename "$f" .v1.tsv.zst
    done | grep -v '^\.' || true
}

# First run on a new crawl directory: inject the seeds.
if [ -z "$(list_segments)" ]; then
    if [ -z "$seeds" ]; then
        echo "$prog: $crawl has no segment yet; give seeds with --seeds FILE" >&2
        exit 2
    fi
    log="$crawl/logs/inject.log"
    step "segmenter inject" "$segmenter" inject "$crawl" "$seeds"
    echo "injected $(count_urls_in $(list_segments)) seed URLs from $seeds"
elif [ -n "$seeds" ]; then
    echo "$prog: $crawl already has segments; --seeds $seeds ignored"
fi

round=0
while [ "$rounds" = 0 ] || [ "$round" -lt "$rounds" ]; do
    stop_requested
    started=$(date +%s)
    before=$(list_segments)
    n=$(( $(ls "$crawl"/logs/round-*.log 2>/dev/null | wc -l) + 1 ))
    log=$(printf '%s/logs/round-%05d.log' "$crawl" "$n")

    # A segmenter run interrupted earlier (its fetched run is complete but not
    # consumed) is redone first, so that no fetched page is skipped.
    if unconsumed_runs; then
        step "segmenter run (catching up)" "$segmenter" run "$crawl" "${seg_args[@]}"
    fi
    id=$(oldest_pending)
    if [ -z "$id" ]; then
        # Nothing waiting: the backlog may still fill a segment.
        step "segmenter run" "$segmenter" run "$crawl" "${seg_args[@]}"
        id=$(oldest_pending)
    fi
    if [ -z "$id" ]; then
        echo "nothing left to fetch in $crawl"
        rm -f "$log"
        exit 0
    fi
    stop_requested

    urls=$(segment_urls "$crawl/segments/$id.v1.tsv.zst")
    STOP_WATCH=1
    step "fetcher fetch $id" "$fetcher" fetch "$crawl" "$id" "${fetch_args[@]}"
    STOP_WATCH=0
    pages=$(json_number "$crawl/fetched/$id/stats.json" pages)
    step "segmenter run" "$segmenter" run "$crawl" "${seg_args[@]}"

    new_ids=$(comm -13 <(echo "$before") <(list_segments))
    # shellcheck disable=SC2086
    found=$(count_urls_in $new_ids)
    round=$((round + 1))
    printf 'round %d: segment %s, %s URLs, %s pages fetched, %s new URLs in %d segment(s), %ds\n' \
        "$n" "$id" "${urls:-?}" "${pages:-?}" "$found" "$(echo "$new_ids" | grep -c .)" \
        "$(( $(date +%s) - started ))"
done
echo "$round round(s) done; run again to go on"
exit 0
