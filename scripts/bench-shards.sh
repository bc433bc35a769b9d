#!/usr/bin/env bash
# Benchmark of a sharded round (a script, not a timed test).
#
#   scripts/bench-shards.sh
#
# The Rust documentation on this machine as WARC files (as for
# scripts/bench-segment.sh docs, in 16 MB files), dealt into 4 fetched
# runs, segmented:
#   a. S = 1: one `segmenter run` over the 4 runs;
#   b. S = 4, one task at a time: `segmenter map --shard I` for I = 0..3
#      (shard I holds run I), then `segmenter reduce --shard J` for J = 0..3;
#   c. S = 4, two tasks at a time on the 2 cores (maps, then reduces; the
#      next task starts when one ends, as a scheduler with 2 slots runs an
#      array).
# b and c are run twice: with the segmenter's default threads (one per CPU
# of the machine: one task alone already uses both cores) and with one
# thread a task (--threads 1, what the Slurm driver passes to a task given
# one CPU: SLURM_CPUS_PER_TASK).
# Prints total CPU seconds, the peak RSS of the largest task and the wall
# time, each with its target:
#   CPU of b within 1.15 x that of a; peak RSS of any task of b <= that of a;
#   wall time of c <= 0.6 x that of b.
# (All pages are on one host, so every candidate goes to one shard: the
# reduces are as uneven as they can be, which the figures for c show.)
#
# Inputs are generated once under target/bench-segment/ (BENCH_DIR to put
# them elsewhere). Needs GNU time (/usr/bin/time).
set -euo pipefail

root=$(git rev-parse --show-toplevel)
cd "$root"
work=${BENCH_DIR:-$root/target/bench-segment}
mkdir -p "$work"
echo "building release binaries..." >&2
cargo build --release --quiet -p segmenter --bin segmenter --example docs-warc
target=${CARGO_TARGET_DIR:-$root/target}
bin=$target/release/segmenter
gnutime=/usr/bin/time
[ -x "$gnutime" ] || { echo "bench-shards: $gnutime (GNU time) is needed" >&2; exit 1; }
echo "machine: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"

html=$(rustc --print sysroot)/share/doc/rust/html
[ -d "$html" ] || { echo "bench-shards: $html: no Rust documentation (rustup component add rust-docs)" >&2; exit 1; }
# The WARC files (16 MB each) dealt into 4 runs.
dealt=$work/shards-template
if [ ! -f "$dealt/ready" ]; then
    rm -rf "$dealt"
    mkdir -p "$dealt"
    "$target/release/examples/docs-warc" "$html" "$dealt/all" https://doc.rust-lang.org/ 16MB >&2
    i=0
    for f in "$dealt"/all/*.warc.gz; do
        run=$(printf '%05d' $((i % 4 + 1)))
        mkdir -p "$dealt/runs/$run"
        mv "$f" "$dealt/runs/$run/"
        i=$((i + 1))
    done
    for r in "$dealt"/runs/*; do : >"$r/DONE"; done
    rm -rf "$dealt/all"
    : >"$dealt/ready"
fi
flags=(--scope any --memory 512MB --progress-interval 0 --min-free-disk 0)

# a. one shard
one=$work/shards-one
rm -rf "$one"; mkdir -p "$one/fetched"
cp -r "$dealt"/runs/* "$one/fetched/"
"$gnutime" -f '%e %M %U %S' -o "$work/one.time" "$bin" run "$one" "${flags[@]}" 2>"$work/one.report"

# b and c. four shards, run I in shard I
four_crawl() {
    local c=$1 j=0
    rm -rf "$c"; mkdir -p "$c"
    printf 'version = 1\nshards = 4\nkey = "host"\n' >"$c/shards.toml"
    for r in "$dealt"/runs/*; do
        mkdir -p "$c/shards/$(printf '%03d' $j)/fetched"
        cp -r "$r" "$c/shards/$(printf '%03d' $j)/fetched/"
        j=$((j + 1))
    done
}
# task STEP CRAWL NAME SHARD [SEGMENTER_ARGS...]
task() {
    local step=$1 crawl=$2 name=$3 j=$4
    shift 4
    "$gnutime" -f '%e %M %U %S' -o "$work/$name.time" "$bin" "$step" "$crawl" --shard "$j" "${flags[@]}" "$@" 2>"$work/$name.report"
}
# pool STEP CRAWL PREFIX SEGMENTER_ARGS...: the 4 shards' tasks of STEP,
# two at a time, the next one started as soon as one ends (as a scheduler
# with 2 slots runs an array). The running tasks are tracked by pid (bash's
# `wait -n` may return at once for a job of an earlier pool).
pool() {
    local step=$1 crawl=$2 prefix=$3 j p pids=() alive
    shift 3
    for j in 0 1 2 3; do
        while [ "${#pids[@]}" -ge 2 ]; do
            alive=()
            for p in "${pids[@]}"; do
                if kill -0 "$p" 2>/dev/null; then alive+=("$p"); else wait "$p"; fi
            done
            pids=("${alive[@]}")
            if [ "${#pids[@]}" -ge 2 ]; then sleep 0.02; fi
        done
        task "$step" "$crawl" "$prefix-$step-$j" "$j" "$@" &
        pids+=("$!")
    done
    wait
}
now() { date +%s.%N; }
four=$work/shards-four
rm -f "$work"/[bc]*-*.time
# Each way: the segmenter's default threads (one per CPU of the machine),
# then one thread a task (--threads 1, what the Slurm driver passes for a
# task given one CPU).
for way in default one; do
    targs=()
    [ "$way" = one ] && targs=(--threads 1)
    four_crawl "$four"
    start=$(now)
    for j in 0 1 2 3; do task map "$four" "b$way-map-$j" "$j" "${targs[@]}"; done
    for j in 0 1 2 3; do task reduce "$four" "b$way-reduce-$j" "$j" "${targs[@]}"; done
    declare "wall_b_$way=$(printf '%.2f' "$(echo "$(now) - $start" | bc)")"
    four_crawl "$four"
    start=$(now)
    pool map "$four" "c$way" "${targs[@]}"
    pool reduce "$four" "c$way" "${targs[@]}"
    declare "wall_c_$way=$(printf '%.2f' "$(echo "$(now) - $start" | bc)")"
done

cpu_of() { cat "$@" | awk '{s += $3 + $4} END {printf "%.2f", s}'; }
rss_of() { cat "$@" | awk '$2 > m {m = $2} END {printf "%d", m / 1024}'; }
ratio() { awk -v x="$1" -v y="$2" 'BEGIN{printf "%.2f", x/y}'; }
wall_a=$(awk '{print $1}' "$work/one.time")
cpu_a=$(cpu_of "$work/one.time")
rss_a=$(rss_of "$work/one.time")
echo
echo "== $(ls "$dealt"/runs/*/*.warc.gz | wc -l) WARC files ($(cat "$dealt"/runs/*/*.warc.gz | wc -c | awk '{printf "%.0f", $1/1e6}') MB) in 4 fetched runs; load average now $(cut -d' ' -f1-3 /proc/loadavg)"
echo "a. S = 1, segmenter run:        wall $wall_a s, CPU $cpu_a s, peak RSS $rss_a MiB"
for way in default one; do
    wall_b=$(eval echo "\$wall_b_$way") wall_c=$(eval echo "\$wall_c_$way")
    cpu_b=$(cpu_of "$work"/b$way-*.time)
    rss_b=$(rss_of "$work"/b$way-*.time)
    case $way in default) label="threads: the default ($(nproc), one per CPU)" ;; *) label="threads: 1 a task (--threads 1)" ;; esac
    echo "-- $label"
    echo "b. S = 4, one task at a time:   wall $wall_b s, CPU $cpu_b s, peak RSS of a task $rss_b MiB"
    echo "   CPU b / a:        $(ratio "$cpu_b" "$cpu_a")  (target <= 1.15)"
    echo "   peak RSS b / a:   $(ratio "$rss_b" "$rss_a")  (target <= 1.00)"
    echo "   per task:"
    for f in "$work"/b$way-*.time; do
        printf '     %-18s wall %6s s  CPU %6s s  RSS %5d MiB\n' "$(basename "$f" .time)" "$(awk '{print $1}' "$f")" "$(cpu_of "$f")" "$(( $(awk '{print $2}' "$f") / 1024 ))"
    done
    echo "c. S = 4, two tasks at a time:  wall $wall_c s, CPU $(cpu_of "$work"/c$way-*.time) s"
    echo "   wall c / b:       $(ratio "$wall_c" "$wall_b")  (target <= 0.60)"
done
grep -E '^(scheduled|segment )' "$work/one.report" | sed 's/^/   a: /'
for j in 0 1 2 3; do grep -E '^scheduled' "$work/bone-reduce-$j.report" | sed "s/^/   b reduce $j: /"; done
