#!/usr/bin/env bash
# slurm/crawl.sh: run a sharded crawl's rounds as Slurm job arrays.
#
# Usage: scripts/slurm/crawl.sh CRAWL [--rounds N] [--retries N] [--bin DIR]
#                               [--fetcher-arg ARG]... [--segmenter-arg ARG]...
#                               [-- SBATCH_OPTIONS...]
#
# --fetcher-arg ARG goes to every task's `fetcher fetch`, --segmenter-arg
# ARG to its `segmenter map` and `reduce` (flags of `fetcher fetch` and
# `segmenter run`, as scripts/crawl.sh passes them; both repeatable, written
# into the sbatch scripts). Settings are best kept in CRAWL/crawl.toml.
#
# What to do next, and why, is decided by `segmenter next`, by the rules
# scripts/crawl.sh follows on one machine, over every shard at once; this
# script asks it between steps and runs each step as an array of S tasks
# (S from CRAWL/shards.toml):
#   fetch   task J fetches the round's segment ID in shard J, if it waits
#           there, and maps what it fetched (scripts/task.sh CRAWL fetch
#           --segment ID), while the WARC files are still in the page cache
#           (a shard that had no URL in a round numbers its segments behind
#           the others: it catches up in rounds of its own numbers);
#   reduce  task J writes shard J's next segment from what every shard's
#           map addressed to it (scripts/task.sh CRAWL reduce).
# A task that fails is run again in its allocation, at most --retries times
# (default 2); every step resumes from the files, so a rerun loses nothing
# and fetches nothing twice. Whether a step did its work is judged from the
# crawl directory, not from Slurm's job states: a task cancelled before it
# ran leaves its shard's work undone, and the crawl stops saying so.
#
# As scripts/crawl.sh does: each round that ends prints its round line and
# is appended to the round journal CRAWL/rounds.v1.tsv (which numbers the
# rounds, from one run to the next); CRAWL/report.html is rebuilt after each
# round; logs and spent files older than [crawl] keep_logs are pruned at the
# start; when every host left is held, the driver waits for the first of
# them rather than running empty rounds (each wait at most the crawl's
# max_retry_after, [fetcher] in crawl.toml); CRAWL/STOP stops the crawl, and
# a fetch array running is asked to stop (its fetchers stop cleanly and keep
# the URLs not fetched). `segmenter next CRAWL --shard J` says where shard J
# stands by the same rules. Run it again at any time to go on from where
# the crawl stands.
#
# The sbatch scripts are written to CRAWL/slurm/ (readable on their own);
# every task's output goes to CRAWL/logs/slurm-STEP-JOB_TASK.log, and the
# round's log CRAWL/logs/round-NNNNN.log names the round's jobs and its
# waits. The step the crawl is at goes to its metrics file (segmenter next
# --record writes it at each step; segmenter metrics when the driver ends
# otherwise).
#
# Exit codes: 0 done (--rounds done, nothing left, STOP, or the crawl's byte
# budget reached); 1 a step failed (the message names the logs); 2 usage
# error; 3 stopped at the free-disk floor; 4 the WARC store could not take a
# fetch's files; 75 another driver runs on CRAWL; 130 interrupted (the
# running tasks are asked to stop; run again to resume).
set -uo pipefail

prog=slurm/crawl.sh
# The help: the comment at the top of this file.
usage() { sed -n '2,/^set /{/^set /!p}' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
die_usage() { echo "$prog: $*" >&2; echo "usage: scripts/slurm/crawl.sh CRAWL [--rounds N] [--retries N] [--bin DIR] [--fetcher-arg ARG]... [--segmenter-arg ARG]... [-- SBATCH_OPTIONS...]" >&2; exit 2; }

[ $# -ge 1 ] || die_usage "missing the crawl directory"
case "$1" in -h|--help) usage; exit 0 ;; esac
crawl=$1; shift
rounds= retries=2 bindir=
sbatch_opts=() fetch_args=() seg_args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) [ $# -ge 2 ] || die_usage "--rounds needs a value"; rounds=$2; shift 2 ;;
        --retries) [ $# -ge 2 ] || die_usage "--retries needs a value"; retries=$2; shift 2 ;;
        --bin) [ $# -ge 2 ] || die_usage "--bin needs a value"; bindir=$2; shift 2 ;;
        --fetcher-arg) [ $# -ge 2 ] || die_usage "--fetcher-arg needs a value"; fetch_args+=("$2"); shift 2 ;;
        --segmenter-arg) [ $# -ge 2 ] || die_usage "--segmenter-arg needs a value"; seg_args+=("$2"); shift 2 ;;
        -h|--help) usage; exit 0 ;;
        --) shift; sbatch_opts=("$@"); break ;;
        *) die_usage "unknown option $1" ;;
    esac
done
case "$rounds" in ''|[1-9]|[1-9]*[0-9]) ;; *) die_usage "--rounds takes a whole number above 0" ;; esac
case "$retries" in [0-9]|[1-9][0-9]) ;; *) die_usage "--retries takes a whole number (0 to 99)" ;; esac
command -v sbatch >/dev/null 2>&1 || die_usage "sbatch not found: run this where Slurm's commands are"
[ -f "$crawl/shards.toml" ] || die_usage "$crawl: not a sharded crawl (create it with segmenter inject CRAWL SEEDS --shards S)"
crawl=$(cd "$crawl" && pwd)
scripts=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=../cycle.sh
. "$scripts/cycle.sh"
need_bash 5 0 "EPOCHREALTIME and EPOCHSECONDS"
segmenter=$(find_bin segmenter) || exit 2
find_bin fetcher >/dev/null || exit 2
bindir=$(cd "$(dirname "$segmenter")" && pwd)
shards=$(read_shards "$crawl") || exit 1
last=$((shards - 1))

mkdir -p "$crawl/slurm" "$crawl/logs"
lock_crawl

# One readable sbatch script per step; the programs' flags given to the
# driver are written in, quoted for the shell.
write_script() {
    local step=$1 file="$crawl/slurm/$1.sbatch" tmp flags="" fetcher_flags
    [ ${#seg_args[@]} = 0 ] || printf -v flags ' --segmenter-arg %q' "${seg_args[@]}"
    if [ "$step" = fetch ] && [ ${#fetch_args[@]} -gt 0 ]; then
        printf -v fetcher_flags ' %q' "${fetch_args[@]}"
        flags+=" --$fetcher_flags"
    fi
    tmp=$(mktemp "$crawl/slurm/.$1.XXXXXX")
    cat >"$tmp" <<SCRIPT
#!/usr/bin/env bash
#SBATCH --job-name=crawl-$step
#SBATCH --array=0-$last
#SBATCH --output=$crawl/logs/slurm-$step-%A_%a.log
# Task \$SLURM_ARRAY_TASK_ID of the $step step: shard \$SLURM_ARRAY_TASK_ID of
# $crawl. A failed attempt is run again (each step resumes from the files),
# at most $retries more times; 75 (the shard is locked by another task) and
# 130 (the task was asked to stop: STOP, or the driver interrupted) are not
# retried. The segmenter runs one thread per CPU Slurm gave the task
# (SLURM_CPUS_PER_TASK, set by --cpus-per-task; 1 CPU without it).
# (A TERM sent to the task reaches task.sh and its fetcher, which stop
# cleanly; this shell waits for them.)
trap 'echo "crawl-$step: shard \$SLURM_ARRAY_TASK_ID asked to stop" >&2' TERM
# The round's segment ID, for a fetch: \$1.
for attempt in \$(seq 0 $retries); do
    "$scripts/task.sh" "$crawl" $step \${1:+--segment "\$1"} --bin "$bindir" --threads "\${SLURM_CPUS_PER_TASK:-1}"$flags
    code=\$?
    case \$code in 0|75|130) exit \$code ;; esac
    echo "crawl-$step: attempt \$attempt of shard \$SLURM_ARRAY_TASK_ID exited \$code" >&2
done
exit \$code
SCRIPT
    mv "$tmp" "$file"
}
write_script fetch
write_script reduce

# Signals are counted; at the first, the array running is asked to stop
# (its running tasks get TERM, its pending ones are cancelled), at the
# second it is cancelled outright (as a second Ctrl-C stops crawl.sh's step
# at once); the driver exits 130 once it has ended.
signals=0
trap 'signals=$((signals + 1))' INT TERM HUP

# `run_array STEP [ID]`: submits the array of STEP (fetch of segment ID, or
# reduce), writes its
# job to the round's log ($log), waits until its tasks have ended (squeue,
# every second: Slurm keeps ended jobs listed for MinJobAge, 300 s by
# default) and sets $step_rc: 0 if every task completed or STOP asked the
# fetch to stop, else the first failed task's exit code (1 if it had none).
# Whether the step did its work is `segmenter next`'s to say, from the files.
run_array() {
    local step=$1 job states asked=0
    job=$(sbatch --parsable "${sbatch_opts[@]}" "$crawl/slurm/$step.sbatch" "${@:2}") ||
        { echo "$prog: sbatch of the $step array failed (see above)" >&2; exit 1; }
    job=${job%%;*}
    log_step "$step array: job $job (task logs: $crawl/logs/slurm-$step-${job}_*.log)"
    while :; do
        if [ "$asked" = 0 ] && { [ "$signals" -gt 0 ] || { [ "$step" = fetch ] && [ -e "$crawl/STOP" ]; }; }; then
            [ "$signals" -gt 0 ] || echo "$prog: $crawl/STOP appeared; asking the fetch array (job $job) to stop early"
            scancel --signal=TERM --full "$job" 2>/dev/null
            [ "$signals" = 0 ] || scancel --state=PENDING "$job" 2>/dev/null
            asked=1
        fi
        if [ "$signals" -gt 1 ] && [ "$asked" = 1 ]; then
            scancel "$job" 2>/dev/null
            asked=2
        fi
        states=$(squeue -h -t all -j "$job" -o %T 2>/dev/null) || { sleep 1; continue; }
        grep -Eq '^(PENDING|CONFIGURING|RUNNING|COMPLETING|REQUEUED|RESIZING|SUSPENDED|SIGNALING|STAGE_OUT)' <<<"$states" || break
        sleep 1
    done
    if [ "$signals" -gt 0 ]; then
        echo "$prog: interrupted during the $step array (job $job); run again to resume" >&2
        exit 130
    fi
    step_rc=0
    if [ "$asked" = 0 ] && grep -qv '^COMPLETED$' <<<"$states"; then
        step_rc=$(failed_code "$job")
        echo "$prog: the $step array (job $job) did not complete: $(sort <<<"$states" | uniq -c | xargs); see $crawl/logs/slurm-$step-${job}_*.log" >&2
        echo "=== $step array: job $job did not complete (exit code $step_rc)" >>"$log"
    fi
}

# `failed_code JOB`: the exit code of the first task of JOB that did not
# complete, as `scontrol show job` gives it (1 if none is known).
failed_code() {
    local line
    while IFS= read -r line; do
        if [[ $line =~ JobState=([A-Z_]+) ]] && [ "${BASH_REMATCH[1]}" != COMPLETED ] &&
            [[ $line =~ ExitCode=([0-9]+): ]] && [ "${BASH_REMATCH[1]}" != 0 ]; then
            echo "${BASH_REMATCH[1]}"
            return
        fi
    done < <(scontrol -o show job "$1" 2>/dev/null)
    echo 1
}

# `wait_held SECONDS`: sleeps while every host left is held, watching for
# STOP and signals.
wait_held() {
    local until=$((EPOCHSECONDS + $1))
    while [ "$EPOCHSECONDS" -lt "$until" ]; do
        [ "$signals" = 0 ] || { echo "$prog: interrupted while waiting for held hosts; run again to resume" >&2; exit 130; }
        [ ! -e "$crawl/STOP" ] || return 0
        sleep 1
    done
}

# The metrics file for a run that ends without a `stop` answer (an sbatch
# that fails, an interrupt); a failure costs only the file.
since=$EPOCHREALTIME
metrics() { "$segmenter" metrics "$crawl" --phase "$1" --since "$since" || echo "$prog: the metrics file was not written" >&2; }
trap 'code=$?; if [ $code = 0 ]; then metrics stopped; else metrics failed; fi' EXIT

prune_crawl

rounds_done=0 rc=0 failed_log=""
while :; do
    next_step
    step_rc=0
    case "$action" in
        inject|injected)
            echo "$prog: $crawl has no segment: inject seeds first (segmenter inject $crawl SEEDS --shards $shards)" >&2
            exit 2 ;;
        fetch|resume) run_array fetch "$arg" ;;
        reduce) run_array reduce ;;
        wait)
            echo "$reason"
            log_step "waiting for held hosts: $arg s"
            wait_held "$arg" ;;
        *) common_answer ;;
    esac
    step_ended
done
