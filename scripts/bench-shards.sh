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
#   c. S = 4, two tasks at a time on the 2 cores (maps, then reduces).
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
task() { "$gnutime" -f '%e %M %U %S' -o "$work/$3.time" "$bin" "$1" "$2" --shard "$4" "${flags[@]}" 2>"$work/$3.report"; }
four=$work/shards-four
four_crawl "$four"
start=$(date +%s.%N)
for j in 0 1 2 3; do task map "$four" "b-map-$j" "$j"; done
for j in 0 1 2 3; do task reduce "$four" "b-reduce-$j" "$j"; done
wall_b=$(echo "$(date +%s.%N) - $start" | bc)

four_crawl "$four"
start=$(date +%s.%N)
for pair in "0 1" "2 3"; do
    for j in $pair; do task map "$four" "c-map-$j" "$j" & done
    wait
done
for pair in "0 1" "2 3"; do
    for j in $pair; do task reduce "$four" "c-reduce-$j" "$j" & done
    wait
done
wall_c=$(echo "$(date +%s.%N) - $start" | bc)

cpu_of() { cat "$@" | awk '{s += $3 + $4} END {printf "%.2f", s}'; }
rss_of() { cat "$@" | awk '$2 > m {m = $2} END {printf "%d", m / 1024}'; }
wall_a=$(awk '{print $1}' "$work/one.time")
cpu_a=$(cpu_of "$work/one.time")
cpu_b=$(cpu_of "$work"/b-*.time)
rss_a=$(rss_of "$work/one.time")
rss_b=$(rss_of "$work"/b-*.time)
echo
echo "== $(ls "$dealt"/runs/*/*.warc.gz | wc -l) WARC files ($(cat "$dealt"/runs/*/*.warc.gz | wc -c | awk '{printf "%.0f", $1/1e6}') MB) in 4 fetched runs"
echo "a. S = 1, segmenter run:        wall $wall_a s, CPU $cpu_a s, peak RSS $rss_a MiB"
echo "b. S = 4, one task at a time:   wall $wall_b s, CPU $cpu_b s, peak RSS of a task $rss_b MiB"
echo "   CPU b / a:        $(awk -v b="$cpu_b" -v a="$cpu_a" 'BEGIN{printf "%.2f", b/a}')  (target <= 1.15)"
echo "   peak RSS b / a:   $(awk -v b="$rss_b" -v a="$rss_a" 'BEGIN{printf "%.2f", b/a}')  (target <= 1.00)"
echo "   per task:"
for f in "$work"/b-*.time; do
    printf '     %-12s wall %6s s  CPU %6s s  RSS %5d MiB\n' "$(basename "$f" .time)" "$(awk '{print $1}' "$f")" "$(cpu_of "$f")" "$(( $(awk '{print $2}' "$f") / 1024 ))"
done
echo "c. S = 4, two tasks at a time:  wall $wall_c s"
echo "   wall c / b:       $(awk -v c="$wall_c" -v b="$wall_b" 'BEGIN{printf "%.2f", c/b}')  (target <= 0.60)"
grep -E '^(scheduled|segment )' "$work/one.report" | sed 's/^/   a: /'
for j in 0 1 2 3; do grep -E '^scheduled' "$work/b-reduce-$j.report" | sed "s/^/   b reduce $j: /"; done
