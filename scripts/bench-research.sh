#!/usr/bin/env bash
# Benchmarks of the research outputs (a script, not a timed test).
#
#   scripts/bench-research.sh [text|index|rounds|all]      (default: all)
#
# 1. text: the visible-text reader (the text of WET records) on every HTML
#    page of the Rust documentation (the fetched run bench-segment.sh docs
#    makes, 48,625 pages, reused from target/bench-segment/ if it is
#    there), one thread, against resiliparse's extract_plain_text over the
#    same pages in the same run (scripts/research-text-compare.py): MB/s of
#    HTML of each and their ratio (target: ours >= 1.0 x); the median
#    per-page Jaccard similarity of the two word multisets (target >= 0.95)
#    and every page below 0.8 with the words only one side has.
# 2. index: the flat web's 20,000 captures (500 hosts x 40 pages of 10 KB,
#    served by the bench_server example, fetched by the fetcher with its
#    defaults): `segmenter research` writing the Parquet index alone, then
#    with WET and WAT: rows/s, bytes per capture of each output; then
#    `segmenter parquet` and a DuckDB `GROUP BY url_host_name` over the set
#    (three runs: min-max of the query's time).
# 3. rounds: the CPU of the fetch and of the segment round of the same
#    flat web with the outputs off (research_index = false, the default),
#    with the index on and with all three on, each round on its own
#    copy of the crawl; and of the Rust documentation's round the same way.
#    The fetch does not change: the fetcher writes none of the outputs.
#
# Each step prints its figures beside their targets, and the machine's
# load (other work slows every figure). Disk: the docs run (about 130 MB,
# shared with bench-segment.sh) and, while it runs, about 300 MB under
# TMPDIR, removed at the end.
set -euo pipefail

mode=${1:-all}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
# shellcheck source=scripts/bench-lib.sh
. "$root/scripts/bench-lib.sh"
bin="${CARGO_TARGET_DIR:-$root/target}/release"
python=${PYTHON:-$root/.venv/bin/python}
bench_dir=${BENCH_DIR:-$root/target/bench-segment}
gnutime=/usr/bin/time

case "$mode" in text | index | rounds | all) ;; *)
  echo "usage: $0 [text|index|rounds|all]" >&2
  exit 2
  ;;
esac
"$python" -c 'import duckdb, fastwarc, resiliparse' 2>/dev/null || {
  echo "bench-research: $python lacks duckdb, fastwarc or resiliparse: run scripts/test.sh once (it installs them)" >&2
  exit 1
}
cargo build --release --quiet -p segmenter --bin segmenter --example docs-warc --example bench_text
if [[ "$mode" != text ]]; then
  cargo build --release --quiet -p fetcher --bin fetcher --example bench_server
fi
examples="${CARGO_TARGET_DIR:-$root/target}/release/examples"

bench_scratch bench-research
server_dir=$work/flat

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
echo "machine: $(nproc) CPUs, load average $(loadavg)"

# "WALL CPU" of a command (its stderr to $TIMED_ERR if set).
timed() {
  "$gnutime" -f '%e %U %S' -o "$work/timed" "$@" 2>"${TIMED_ERR:-/dev/null}" >/dev/null ||
    { cat "${TIMED_ERR:-/dev/null}" >&2; return 1; }
  awk '{ printf "%.2f %.2f\n", $1, $2 + $3 }' "$work/timed"
}

# The Rust documentation as one fetched run (as bench-segment.sh makes it).
docs_run() {
  local html template=$bench_dir/docs-template
  html=$(rustc --print sysroot)/share/doc/rust/html
  if [ ! -f "$template/fetched/00001/DONE" ]; then
    [ -d "$html" ] || { echo "bench-research: no Rust documentation (rustup component add rust-docs)" >&2; return 1; }
    echo "writing WARC files from $html ..." >&2
    rm -rf "$template"
    mkdir -p "$template/fetched"
    "$examples/docs-warc" "$html" "$template/fetched/00001" https://doc.rust-lang.org/ 128MB >&2
    echo doc.rust-lang.org >"$template/scope.seeds"
  fi
  echo "$template"
}

bench_text() {
  local template warcs ours theirs
  template=$(docs_run)
  warcs=("$template"/fetched/00001/*.warc.gz)
  echo "== text: the Rust documentation, one thread (target: >= 1.0 x resiliparse; median Jaccard >= 0.95)"
  for n in 1 2 3; do
    ours=$("$examples/bench_text" "$work/ours.jsonl" "${warcs[@]}")
    "$python" scripts/research-text-compare.py "$work/ours.jsonl" "${warcs[@]}" >"$work/compare.txt"
    theirs=$(grep '^resiliparse' "$work/compare.txt")
    awk -v n="$n" -v o="$ours" -v t="$theirs" 'BEGIN {
      split(o, a, " "); split(t, b, " ");
      printf "run %d: ours %.1f MB/s (%d pages, %.2f s), resiliparse %.1f MB/s (%.2f s): %.2f x\n",
        n, a[8], a[2], a[6], b[9], b[7], a[8] / b[9] }'
  done
  grep '^jaccard' "$work/compare.txt"
  grep '^  ' "$work/compare.txt" || true
}

# The flat web fetched once into $work/flat (20,000 pages).
flat_crawl() {
  [ -f "$work/flat/fetched/00001/DONE" ] && return 0
  "$examples/bench_server" "$work/flat" 500 40 10000 >"$work/server.out" &
  server_pid=$!
  wait_ready "$server_pid" "$work/server.out" 600 >/dev/null
  printf '[agent]\nname = "benchbot"\nurl = "http://bench.test/about"\n' >"$work/flat/crawl.toml"
  fetch_t=$(timed "$bin/fetcher" fetch "$work/flat" 00001 --agent-name benchbot \
    --agent-url http://bench.test/about --allow-private --min-delay 0 --delay-factor 0 \
    --progress none --hosts-file "$work/flat/hosts")
  stop_server "$server_pid" "$work/flat"
  server_pid=""
  echo "fetch of the flat web: $fetch_t (wall s, CPU s); the fetcher writes none of the outputs"
}

bench_index() {
  local run rows t size
  flat_crawl
  run=$work/flat/fetched/00001
  echo "== index: the flat web's captures"
  t=$(timed "$bin/segmenter" research "$work/flat" --wet false --wat false --force)
  rows=$("$python" -c "import duckdb,sys; print(duckdb.sql(\"select count(*) from read_parquet('$run/*.parquet')\").fetchall()[0][0])")
  size=$(cat "$run"/*.parquet | wc -c)
  awk -v t="$t" -v r="$rows" -v s="$size" 'BEGIN { split(t, a, " ");
    printf "Parquet index alone: %d rows in %.2f s (CPU %.2f s): %.0f rows/s; %.0f bytes per capture\n",
      r, a[1], a[2], r / a[1], s / r }'
  t=$(timed "$bin/segmenter" research "$work/flat" --force)
  awk -v t="$t" -v r="$rows" -v wet="$(cat "$run"/*.wet.gz | wc -c)" -v wat="$(cat "$run"/*.wat.gz | wc -c)" \
    -v warc="$(cat "$run"/*.warc.gz | wc -c)" 'BEGIN { split(t, a, " ");
    printf "index + WET + WAT: %.2f s (CPU %.2f s): %.0f captures/s; WET %.0f, WAT %.0f bytes per capture (WARC %.0f)\n",
      a[1], a[2], r / a[1], wet / r, wat / r, warc / r }'
  "$bin/segmenter" parquet "$work/flat" 2>/dev/null
  "$python" - "$work/flat/parquet" <<'PY'
import sys, time, duckdb
q = f"select url_host_name, count(*) from read_parquet('{sys.argv[1]}/*.parquet') group by 1"
times = []
for _ in range(3):
    con = duckdb.connect()
    t = time.perf_counter()
    n = len(con.sql(q).fetchall())
    times.append(time.perf_counter() - t)
print(f"DuckDB GROUP BY url_host_name over the set: {n} hosts, "
      f"{min(times) * 1000:.1f}-{max(times) * 1000:.1f} ms (3 runs)")
PY
}

# segment_round CRAWL LABEL FLAGS...: a round on a copy of CRAWL.
segment_round() {
  local crawl=$1 label=$2
  shift 2
  rm -rf "$work/round"
  cp -a "$crawl" "$work/round"
  find "$work/round/fetched" \( -name '*.parquet' -o -name '*.wet.gz' -o -name '*.wat.gz' \) -delete
  t=$(timed "$bin/segmenter" run "$work/round" --scope any --progress none "$@")
  echo "  $label: $t (wall s, CPU s)"
  rm -rf "$work/round"
}

bench_rounds() {
  flat_crawl
  echo "== rounds: the segment round's wall and CPU time, outputs off (the default) / the index on / all on"
  echo "flat web (20,000 pages):"
  segment_round "$work/flat" "off     " --research-index false
  segment_round "$work/flat" "index on" --research-index true
  segment_round "$work/flat" "all on  " --research-wet true --research-wat true
  local template
  template=$(docs_run)
  echo "Rust documentation (48,625 pages):"
  segment_round "$template" "off     " --research-index false
  segment_round "$template" "index on" --research-index true
  segment_round "$template" "all on  " --research-wet true --research-wat true
  echo "zcat over the documentation's WARC files (reading them again): $(timed bash -c 'zcat "$0"/fetched/00001/*.warc.gz' "$template")"
}

case "$mode" in
text) bench_text ;;
index) bench_index ;;
rounds) bench_rounds ;;
all) bench_text; bench_index; bench_rounds ;;
esac
echo "load average at the end: $(loadavg)"
