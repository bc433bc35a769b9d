#!/usr/bin/env bash
# slurm/crawl.sh: run a sharded crawl's rounds as Slurm job arrays.
#
# Usage: scripts/slurm/crawl.sh CRAWL [--rounds N] [--retries N] [--bin DIR]
#                               [-- SBATCH_OPTIONS...]
#
# Each round is two arrays of S tasks (S from CRAWL/shards.toml):
#   fetch   task J fetches shard J's segment and maps what it fetched
#           (scripts/task.sh CRAWL fetch), while the WARC files are still in
#           the page cache;
#   reduce  task J writes shard J's next segment (scripts/task.sh CRAWL
#           reduce), submitted with --dependency=afterok:FETCH and
#           --kill-on-invalid-dep=yes: it never runs on half a round.
# A task that fails is run again in its allocation, at most --retries times
# (default 2); every step resumes from the files, so a rerun loses nothing
# and fetches nothing twice. The driver waits for each round (squeue)
# and decides from the crawl directory, not from Slurm's memory, whether to
# go on: it stops when no shard has a segment to fetch or a run to reduce,
# after --rounds rounds, or when CRAWL/STOP exists. Run it again at any time
# to go on from where the crawl stands.
#
# The sbatch scripts are written to CRAWL/slurm/ (readable on their own);
# every task's output goes to CRAWL/logs/slurm-STEP-JOB_TASK.log. The step
# the crawl is at goes to its metrics file (segmenter metrics --phase).
#
# Exit codes: 0 the crawl ended, or --rounds done, or STOP; 1 a round
# failed (the message names the logs); 2 usage error.
set -uo pipefail

prog=slurm/crawl.sh
die_usage() { echo "$prog: $*" >&2; echo "usage: scripts/slurm/crawl.sh CRAWL [--rounds N] [--retries N] [--bin DIR] [-- SBATCH_OPTIONS...]" >&2; exit 2; }

[ $# -ge 1 ] || die_usage "missing the crawl directory"
crawl=$1; shift
rounds= retries=2 bindir=
sbatch_opts=()
while [ $# -gt 0 ]; do
    case "$1" in
        --rounds) [ $# -ge 2 ] || die_usage "--rounds needs a value"; rounds=$2; shift 2 ;;
        --retries) [ $# -ge 2 ] || die_usage "--retries needs a value"; retries=$2; shift 2 ;;
        --bin) [ $# -ge 2 ] || die_usage "--bin needs a value"; bindir=$2; shift 2 ;;
        -h|--help) sed -n '2,29p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
repo=$(dirname "$scripts")
if [ -z "$bindir" ]; then
    if [ -x "$repo/target/release/segmenter" ]; then bindir="$repo/target/release"
    else bindir=$(dirname "$(command -v segmenter)") || die_usage "cannot find segmenter: pass --bin DIR"; fi
fi
bindir=$(cd "$bindir" && pwd)
shards=$(sed -n 's/^shards *= *\([0-9]*\) *$/\1/p' "$crawl/shards.toml")
[ -n "$shards" ] || { echo "$prog: $crawl/shards.toml: no 'shards = S' line" >&2; exit 1; }
last=$((shards - 1))

# One readable sbatch script per step.
mkdir -p "$crawl/slurm" "$crawl/logs"
write_script() {
    local step=$1 file="$crawl/slurm/$1.sbatch" tmp
    tmp=$(mktemp "$crawl/slurm/.$1.XXXXXX")
    cat >"$tmp" <<SCRIPT
#!/usr/bin/env bash
#SBATCH --job-name=crawl-$step
#SBATCH --array=0-$last
#SBATCH --output=$crawl/logs/slurm-$step-%A_%a.log
# Task \$SLURM_ARRAY_TASK_ID of the $step step: shard \$SLURM_ARRAY_TASK_ID of
# $crawl. A failed attempt is run again (each step resumes from the files),
# at most $retries more times; 75 (the shard is locked by another task) is
# not retried. The segmenter runs one thread per CPU Slurm gave the task
# (SLURM_CPUS_PER_TASK, set by --cpus-per-task; 1 CPU without it).
for attempt in \$(seq 0 $retries); do
    "$scripts/task.sh" "$crawl" $step --bin "$bindir" --threads "\${SLURM_CPUS_PER_TASK:-1}"
    code=\$?
    case \$code in 0|75) exit \$code ;; esac
    echo "crawl-$step: attempt \$attempt of shard \$SLURM_ARRAY_TASK_ID exited \$code" >&2
done
exit \$code
SCRIPT
    mv "$tmp" "$file"
}
write_script fetch
write_script reduce

# What the crawl directory says is left: a segment to fetch, a run not yet
# mapped or a map output not yet reduced, in some shard.
work_left() {
    "$bindir/segmenter" status "$crawl" --no-backlog | grep -Eq '^(pending|unconsumed|unmapped): .|^unreduced: [1-9]'
}

# Waits until every task of the jobs $1 and $2 has ended (squeue, every
# second: Slurm keeps ended jobs listed for MinJobAge, 300 s by default);
# true if all completed. sbatch --wait would do, but polls up to 10 s apart.
wait_round() {
    local states
    while :; do
        states=$(squeue -h -t all -j "$1,$2" -o %T 2>/dev/null) || { sleep 1; continue; }
        grep -Eq '^(PENDING|CONFIGURING|RUNNING|COMPLETING|REQUEUED|RESIZING|SUSPENDED|SIGNALING|STAGE_OUT)' <<<"$states" || break
        sleep 1
    done
    ! grep -qv '^COMPLETED$' <<<"$states"
}

# The crawl's metrics file for a monitoring system (segmenter metrics): the
# step the crawl is at, rewritten at each step; a failure costs only the file.
since=$EPOCHREALTIME
metrics() { "$bindir/segmenter" metrics "$crawl" --phase "$1" --since "$since" || echo "$prog: the metrics file was not written" >&2; }
trap 'code=$?; if [ $code = 0 ]; then metrics stopped; else metrics failed; fi' EXIT

n=0
while :; do
    if [ -e "$crawl/STOP" ]; then echo "$prog: $crawl/STOP exists: stopping"; exit 0; fi
    if ! work_left; then echo "$prog: nothing left to fetch: the crawl has ended"; exit 0; fi
    if [ -n "$rounds" ] && [ "$n" -ge "$rounds" ]; then echo "$n round(s) done; run again to go on"; exit 0; fi
    n=$((n + 1))
    metrics fetch
    fetch=$(sbatch --parsable "${sbatch_opts[@]}" "$crawl/slurm/fetch.sbatch") ||
        { echo "$prog: round $n: sbatch of the fetch array failed" >&2; exit 1; }
    fetch=${fetch%%;*}
    reduce=$(sbatch --parsable --dependency="afterok:$fetch" --kill-on-invalid-dep=yes \
        "${sbatch_opts[@]}" "$crawl/slurm/reduce.sbatch") ||
        { echo "$prog: round $n: sbatch of the reduce array failed" >&2; exit 1; }
    reduce=${reduce%%;*}
    if ! wait_round "$fetch" "$reduce"; then
        echo "$prog: round $n failed: see $crawl/logs/slurm-fetch-${fetch}_*.log and slurm-reduce-${reduce}_*.log, and segmenter status $crawl; run again to resume" >&2
        exit 1
    fi
    echo "round $n: done (fetch array $fetch, reduce array $reduce)"
    metrics idle
done
