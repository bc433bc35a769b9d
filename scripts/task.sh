#!/usr/bin/env bash
# task.sh: one task of a sharded crawl's round, for a batch engine's job array
# (Slurm, Kubernetes Indexed Jobs, AWS Batch) or by hand.
#
# Usage: scripts/task.sh CRAWL fetch|reduce [--index J] [--segment ID]
#                        [--threads N] [--segmenter-arg ARG]... [--bin DIR]
#                        [--lock-wait SECONDS] [-- FETCHER_ARGS...]
#
#   fetch   shard J's part of the fetch step: fetch its oldest pending
#           segment (what `segmenter next CRAWL --shard J` says), or with
#           --segment ID that one if it is the one waiting in shard J (the
#           round's: the Slurm driver passes it), nothing otherwise (an
#           unfinished run is resumed: nothing stored is fetched again), then
#           map every complete run of the shard (`segmenter map`), while the
#           WARC files are still in the page cache
#   reduce  shard J's reduce (`segmenter reduce`): its next segment from
#           what every shard's map addressed to it
#
# The index J is --index, else SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX or
# AWS_BATCH_JOB_ARRAY_INDEX. --threads N is the segmenter's worker threads
# for the map and the reduce (one per CPU the task was given: the Slurm
# driver passes SLURM_CPUS_PER_TASK); without it, the segmenter takes the
# CPUs it may run on (which, without a cgroup, are all the machine's).
# --segmenter-arg ARG (repeatable) goes to the map and the reduce (a flag of
# `segmenter run`), FETCHER_ARGS to `fetcher fetch`. A task
# holds CRAWL/shards/JJJ/.task.lock (flock) while it runs. A second task of
# the same shard waits for it --lock-wait seconds (default 30: long enough
# for a cancelled or timed-out task to finish stopping, its fetcher takes at
# most 10 s), then refuses. A task killed anywhere is run again as it was:
# every step resumes from the files.
#
# Exit codes:
#   0   done (also: nothing to do for this shard)
#   1   a step failed (its message names its log)
#   2   usage error (no index, index out of range, binary not found)
#   3   stopped at the free-disk floor
#   75  another task held this shard's lock for --lock-wait seconds (the
#       same index runs twice)
#   130 interrupted; run the task again to resume
set -uo pipefail

prog=task.sh
die_usage() { echo "$prog: $*" >&2; echo "usage: scripts/task.sh CRAWL fetch|reduce [--index J] [--segment ID] [--threads N] [--segmenter-arg ARG]... [--bin DIR] [--lock-wait SECONDS] [-- FETCHER_ARGS...]" >&2; exit 2; }

[ $# -ge 2 ] || die_usage "missing arguments"
crawl=$1 step=$2
shift 2
case "$step" in fetch|reduce) ;; *) die_usage "unknown step '$step' (fetch or reduce)" ;; esac
index= bindir= lock_wait=30 segment=
fetch_args=() segmenter_args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --index) [ $# -ge 2 ] || die_usage "--index needs a value"; index=$2; shift 2 ;;
        --bin) [ $# -ge 2 ] || die_usage "--bin needs a value"; bindir=$2; shift 2 ;;
        --segment)
            [ $# -ge 2 ] || die_usage "--segment needs a segment ID"
            case "$2" in ''|*[!0-9a-z-]*) die_usage "--segment takes a segment ID (00003), not '$2'" ;; esac
            segment=$2; shift 2 ;;
        --lock-wait)
            [ $# -ge 2 ] || die_usage "--lock-wait needs a value"
            case "$2" in ''|*[!0-9]*) die_usage "--lock-wait takes whole seconds" ;; esac
            lock_wait=$2; shift 2 ;;
        --threads)
            [ $# -ge 2 ] || die_usage "--threads needs a value"
            case "$2" in ''|*[!0-9]*|0) die_usage "--threads takes a whole number above 0" ;; esac
            segmenter_args+=(--threads "$2"); shift 2 ;;
        --segmenter-arg)
            [ $# -ge 2 ] || die_usage "--segmenter-arg needs a value"
            segmenter_args+=("$2"); shift 2 ;;
        --) shift; fetch_args+=("$@"); break ;;
        *) die_usage "unknown option $1" ;;
    esac
done
index=${index:-${SLURM_ARRAY_TASK_ID:-${JOB_COMPLETION_INDEX:-${AWS_BATCH_JOB_ARRAY_INDEX:-}}}}
case "$index" in
    '') die_usage "no task index: give --index J, or run as an array task (SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX, AWS_BATCH_JOB_ARRAY_INDEX)" ;;
    *[!0-9]*) die_usage "task index '$index' is not a whole number" ;;
esac
index=$((10#$index))

# Find the binaries: --bin, then this repository's release build, then PATH.
# shellcheck source=cycle.sh
. "$(dirname "${BASH_SOURCE[0]}")/cycle.sh"
fetcher=$(find_bin fetcher) || exit 2
segmenter=$(find_bin segmenter) || exit 2

[ -f "$crawl/shards.toml" ] || die_usage "$crawl: not a sharded crawl (no shards.toml; create one with segmenter inject CRAWL SEEDS --shards S)"
shards=$(read_shards "$crawl") || exit 1
[ "$index" -lt "$shards" ] || die_usage "task index $index: this crawl has $shards shards, numbered 0 to $((shards - 1))"
shard_dir=$(printf '%s/shards/%03d' "$crawl" "$index")
mkdir -p "$shard_dir" || exit 1

command -v flock >/dev/null || { echo "$prog: flock not found (util-linux): a task needs it to hold its shard" >&2; exit 2; }
exec 9>"$shard_dir/.task.lock" || { echo "$prog: $shard_dir/.task.lock: cannot open the lock file" >&2; exit 1; }
if ! flock -n 9; then
    # A cancelled task may still be stopping (its fetcher finishes the
    # requests in flight): wait for it, a bounded time.
    echo "$prog: $shard_dir: another task of shard $index holds the lock; waiting at most ${lock_wait}s for it to end" >&2
    if ! flock -w "$lock_wait" 9; then
        echo "$prog: $shard_dir: another task of shard $index holds the lock after ${lock_wait}s (the same index runs twice?); this one does nothing" >&2
        exit 75
    fi
fi

# A signal reaches the step running (its process group), which stops
# cleanly; this script then goes on as that step's exit code says (a fetch
# stopped cleanly is still mapped).
trap ':' INT TERM HUP
# STOP keeps a fetch from starting; a reduce ends the round its fetch began.
if [ "$step" = fetch ] && [ -e "$crawl/STOP" ]; then
    echo "$prog: $crawl/STOP exists: shard $index fetches nothing"
    exit 0
fi

echo "$prog: shard $index: $step (host $(hostname), $(date -u +%FT%TZ))"
if [ "$step" = fetch ]; then
    # What the shard fetches is the crawl cycle's answer for this shard
    # alone (`segmenter next CRAWL --shard J`): `fetch ID` or `resume ID`,
    # its oldest segment waiting; one a task (a round). With --segment, only
    # that one (a shard that had no URL in a round numbers its segments
    # behind the others, and fetches nothing in their rounds).
    read_next --shard "$index"
    fetch=""
    case "$action" in fetch|resume) fetch=$arg ;; esac
    [ -z "$segment" ] || [ "$fetch" = "$segment" ] || fetch=""
    if [ -n "$fetch" ]; then
        "$fetcher" fetch "$crawl" "$fetch" --shard "$index" --progress none "${fetch_args[@]}"
        code=$?
        # 130: stopped cleanly (STOP passed on, or the task cancelled): the
        # run is complete, and mapped before the task ends with 130.
        case $code in
            0) ;;
            130) "$segmenter" map "$crawl" --shard "$index" "${segmenter_args[@]}"; exit 130 ;;
            *) echo "$prog: shard $index: fetcher exited $code" >&2; exit "$code" ;;
        esac
    else
        echo "$prog: shard $index: no segment ${segment:+$segment }to fetch (segmenter next: $action $arg $reason)"
    fi
    "$segmenter" map "$crawl" --shard "$index" "${segmenter_args[@]}"
else
    "$segmenter" reduce "$crawl" --shard "$index" "${segmenter_args[@]}"
fi
