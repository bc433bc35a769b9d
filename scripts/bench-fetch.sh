#!/usr/bin/env bash
# Benchmark of the fetcher against a local server (one loopback address per
# host, run by the bench_server example).
#
#   scripts/bench-fetch.sh [throughput|big|polite|flat|latency]
#
#   throughput  200 hosts × 100 URLs (20,000), no delay: pages/s, MB/s,
#               CPU seconds per 1,000 pages, peak RSS            (default)
#   big         10,000 hosts × 100 URLs (1,000,000), no delay: peak RSS.
#               10,000 hosts are 10,000 loopback addresses (127.0.0.2 up),
#               so that each host is a separate server as on the web and the
#               fetcher's per-host connections, robots.txt and queues are
#               all exercised; the whole 127/8 block is loopback on Linux.
#   polite      100 hosts × 50 URLs with a 0.2 s delay per host: the run's
#               duration against the politeness floor (max over hosts of
#               URLs × delay).
#   flat        500 hosts × 40 URLs of 10,000 bytes, no delay, every
#               response written to WARC; then GNU Wget2 fetches the same
#               URLs from the same server (64 threads, bodies discarded) as
#               the reference: pages/s and CPU s per 1,000 pages of both,
#               and their ratio (target: the fetcher at least as fast).
#               Then the run is packaged as WACZ (segmenter wacz) and its
#               files zipped by `zip -0` (installed with apt-get if
#               missing), both from the page cache and both synced to disk
#               at the end: MB/s of each and their ratio (target: WACZ at
#               least half as fast). To weigh the
#               CDXJ indexes and metadata records, run it with
#               FETCH_ARGS="--metadata-records false" (or
#               "--metadata-outlinks false": the records without the
#               pages' links), and with FETCHER set to a build from before
#               them. With PROFILE=1 the fetcher runs under `perf record`
#               and its CPU per page is split into deflate (libdeflate),
#               SHA-1 (the WARC digests), link reading (the HTML parser,
#               URL resolution and canonical form, charsets; not the
#               allocations it makes) and everything else, each beside
#               Wget2's whole CPU per page (Wget2 discards the bodies; it
#               neither compresses, digests nor writes them).
#               Last, `segmenter run` makes the next round from the
#               run twice, on two copies of the crawl: taking the pages'
#               links from the metadata records (where the fetcher listed
#               them) and parsing every page (--metadata-outlinks false):
#               scan time and CPU of each, their ratio, and the CPU of a
#               whole round (fetch + segment) per 1,000 pages.
#   latency     4,000 hosts × 20 URLs whose server answers 200 ms after each
#               request: pages/s (target ≥ 5,000), peak RSS (target
#               ≤ 300 MB) and, counted by the server, the most requests in
#               flight on one host (must be 1) and on all hosts together.
#
# In flat and latency modes the URLs are literal loopback addresses
# (http://127.0.0.2:PORT/...): neither client resolves a name, so nothing
# is asked of the machine's DNS servers and nothing leaves loopback; the
# script checks that the server counted every request.
#
# Environment: THREADS (fetcher workers; default 64 in the first three
# modes, the fetcher's own default in flat and latency), BODY (bytes per
# page), HOSTS and PER_HOST (the shape), LATENCY_MS (latency mode), FETCHER
# (another fetcher binary to measure, e.g. one built from an older commit),
# SEGMENTER (likewise, the segmenter that packages the WACZ in flat mode),
# FETCH_ARGS (more fetcher flags, e.g. "--warc-level 1"), PROFILE=1 (flat
# mode: the fetcher's CPU split by a profile; needs `perf`).
set -euo pipefail

mode=${1:-throughput}
latency=""
case "$mode" in
  throughput) hosts=200;   per_host=100; delay=0;   body=2000;  threads=64 ;;
  big)        hosts=10000; per_host=100; delay=0;   body=2000;  threads=64 ;;
  polite)     hosts=100;   per_host=50;  delay=0.2; body=2000;  threads=64 ;;
  flat)       hosts=500;   per_host=40;  delay=0;   body=10000; threads="";  latency=0 ;;
  latency)    hosts=4000;  per_host=20;  delay=0;   body=10000; threads="";  latency=${LATENCY_MS:-200} ;;
  *) echo "usage: $0 [throughput|big|polite|flat|latency]" >&2; exit 2 ;;
esac
threads=${THREADS:-$threads}
body=${BODY:-$body}
hosts=${HOSTS:-$hosts}
per_host=${PER_HOST:-$per_host}

if [[ "$mode" == flat ]] && ! command -v zip >/dev/null; then
  echo "flat mode compares WACZ packaging with zip -0; installing zip with apt-get" >&2
  sudo=""
  [[ $(id -u) == 0 ]] || sudo=sudo
  $sudo apt-get install -y -qq zip >&2 || { echo "install zip (apt-get install zip)" >&2; exit 2; }
fi
if [[ "$mode" == flat ]] && ! command -v wget2 >/dev/null; then
  echo "flat mode compares with GNU Wget2, which is not installed:" >&2
  echo "  sudo apt-get install wget2     (Debian, Ubuntu; the package is 'wget2')" >&2
  exit 2
fi
# Both clients talk to loopback only: no proxy from the environment.
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY

root=$(git rev-parse --show-toplevel)
cd "$root"
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh
cargo build --quiet --release -p fetcher --bin fetcher --example bench_server \
  -p segmenter --bin segmenter
bin="${CARGO_TARGET_DIR:-$root/target}/release"
fetcher=${FETCHER:-$bin/fetcher}
segmenter=${SEGMENTER:-$bin/segmenter}

bench_scratch bench-fetch
crawl="$work/crawl"
server_dir=$crawl

# Asks the server for its counts (requests served, most in flight on one
# host, most in flight in all, since the last mark) and prints them.
mark() {
  local before
  before=$(grep -c '^mark' "$work/server.out" || true)
  touch "$crawl/bench-mark"
  for _ in $(seq 100); do
    [[ $(grep -c '^mark' "$work/server.out" || true) -gt $before ]] && break
    sleep 0.1
  done
  grep '^mark' "$work/server.out" | tail -1 | cut -d' ' -f2-
}

# Runs a command; prints "WALL CPU MAXRSS_KB" of it (children's rusage).
timed() {
  python3 - "$@" <<'PY'
import os, resource, subprocess, sys, time
t0 = time.monotonic()
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
if os.environ.get("TIMED_STDERR"):
    open(os.environ["TIMED_STDERR"], "wb").write(r.stderr)
wall = time.monotonic() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
if r.returncode != 0:
    sys.stderr.write(r.stderr.decode(errors="replace")[-4000:])
    sys.stderr.write(f"{sys.argv[1]} exited with {r.returncode}\n")
    sys.exit(1)
print(f"{wall:.3f} {ru.ru_utime + ru.ru_stime:.3f} {ru.ru_maxrss}")
PY
}

"$bin/examples/bench_server" "$crawl" "$hosts" "$per_host" "$body" $latency >"$work/server.out" &
server_pid=$!
urls=$(wait_ready "$server_pid" "$work/server.out" 600)

fetch_args=(fetch "$crawl" 00001
  --agent-name benchbot --agent-url http://bench.test/about --allow-private
  --min-delay "$delay" --delay-factor 0 --progress plain)
[[ -n "$threads" ]] && fetch_args+=(--threads "$threads")
[[ -z "$latency" ]] && fetch_args+=(--hosts-file "$crawl/hosts")
read -r -a extra <<<"${FETCH_ARGS:-}"
fetch_args+=("${extra[@]}")

echo "mode $mode: $urls URLs over $hosts hosts, body $body bytes, delay ${delay}s," \
  "${latency:+latency ${latency} ms, }threads ${threads:-default}${FETCH_ARGS:+, $FETCH_ARGS}"
[[ -n "$latency" ]] && mark >/dev/null
server_cpu0=$(cpu_of "$server_pid")
profiled=()
if [[ "$mode" == flat && -n "${PROFILE:-}" ]]; then
  command -v perf >/dev/null || { echo "PROFILE=1 needs perf (apt-get install linux-perf)" >&2; exit 2; }
  profiled=(perf record -q -F 999 -o "$work/perf.data" --)
fi
start=$(date +%s.%N)
"${profiled[@]}" "$fetcher" "${fetch_args[@]}" 2>"$work/fetcher.err" || { cat "$work/fetcher.err" >&2; exit 1; }
end=$(date +%s.%N)
# The fetcher's samples by symbol: `SHARE SYMBOL` lines for the summary.
profile_file="$work/profile.txt"
: >"$profile_file"
if [[ ${#profiled[@]} -gt 0 ]]; then
  # Every sample is the fetcher's (its threads are named net, finisher-N...).
  perf report -q -i "$work/perf.data" --sort sym --no-children 2>/dev/null |
    awk '{ share = $1; sub(/%$/, "", share); $1 = ""; $2 = ""; print share, $0 }' >"$profile_file" || true
fi
server_cpu1=$(cpu_of "$server_pid")
grep -o 'fetcher: [0-9]* workers (from [0-9]*.*' "$work/fetcher.err" || true
fetch_mark=""
[[ -n "$latency" ]] && fetch_mark=$(mark)

wget_line=""
if [[ "$mode" == flat ]]; then
  wget_cpu0=$(cpu_of "$server_pid")
  wget_line=$(timed wget2 --no-config --quiet --max-threads=64 --tries=1 --no-hsts --no-hpkp \
    --no-proxy --input-file="$crawl/urls.txt" --output-document=/dev/null)
  wget_cpu1=$(cpu_of "$server_pid")
  wget_line="$wget_line $(mark) $wget_cpu0 $wget_cpu1"
fi

# WACZ packaging against zip -0 on the same files (read once before, so
# that both read them from the page cache).
pack_line=""
if [[ "$mode" == flat ]]; then
  run_dir="$crawl/fetched/00001"
  # (A fetcher from before the indexes leaves none: wacz then builds them.)
  shopt -s nullglob
  cat "$run_dir"/*.warc.gz "$run_dir"/*.cdxj >/dev/null
  # Both end with the package on disk: segmenter wacz fsyncs it before
  # renaming it into place, so zip's file is synced too.
  sync
  zip_t=$(timed bash -c 'zip -0 -q -j "$0" "${@}" && sync "$0"' "$work/same-files.zip" \
    "$run_dir"/*.warc.gz "$run_dir"/*.cdxj)
  wacz_t=$(timed "$segmenter" wacz "$crawl" --out "$work/bench.wacz")
  pack_line="$zip_t $(stat -c %s "$work/same-files.zip") $wacz_t $(stat -c %s "$work/bench.wacz")"
fi

# The next round from the run: links from the metadata records, then by
# parsing, each on its own copy of the crawl (a round changes the crawl).
seg_line=""
if [[ "$mode" == flat ]]; then
  [[ -f "$crawl/crawl.toml" ]] ||
    printf '[agent]\nname = "benchbot"\nurl = "http://bench.test/about"\n' >"$crawl/crawl.toml"
  cp -a "$crawl" "$work/crawl-listed"
  cp -a "$crawl" "$work/crawl-parsed"
  seg_run() {
    local copy=$1 flag=$2 t
    t=$(TIMED_STDERR="$work/$copy.report" timed "$bin/segmenter" run "$work/$copy" \
      --progress none --scope any --metadata-outlinks "$flag")
    echo "$t $(grep '^elapsed:' "$work/$copy.report" | awk '{ print $5 }')" \
      "$(grep '^pages scanned:' "$work/$copy.report" | awk '{ print $3, substr($4, 2) }')"
  }
  seg_line="$(seg_run crawl-listed true) $(seg_run crawl-parsed false)"
fi

python3 - "$crawl/fetched/00001/stats.json" "$start" "$end" "$server_cpu0" "$server_cpu1" \
  "$mode" "$hosts" "$per_host" "$delay" "$urls" "$fetch_mark" "$wget_line" "$pack_line" \
  "$seg_line" "$profile_file" <<'PY'
import json, os, re, sys
stats = json.load(open(sys.argv[1]))
start, end, s0, s1 = map(float, sys.argv[2:6])
mode, hosts, per_host, delay = sys.argv[6], int(sys.argv[7]), int(sys.argv[8]), float(sys.argv[9])
urls, fetch_mark, wget_line = int(sys.argv[10]), sys.argv[11].split(), sys.argv[12].split()
pack_line = sys.argv[13].split()
seg_line = sys.argv[14].split()
wall = end - start
pages = stats["responses"] - stats["robots_responses"]
fetch_cpu = stats["cpu_seconds"]
server_cpu = s1 - s0
rate = pages / wall
print(f"pages            {pages} ({stats['outcomes']})")
print(f"wall time        {wall:.2f} s (fetch loop {stats['seconds']:.2f} s)")
print(f"pages/s          {rate:.0f}")
print(f"MB/s             {stats['payload_bytes'] / wall / 1e6:.1f} (payload)")
print(f"CPU s/1000 pages {1000 * fetch_cpu / max(pages, 1):.3f} fetcher, "
      f"{1000 * server_cpu / max(pages, 1):.3f} server, "
      f"{1000 * (fetch_cpu + server_cpu) / max(pages, 1):.3f} total")
warc_dir = os.path.dirname(sys.argv[1])
warc_bytes = sum(os.path.getsize(os.path.join(warc_dir, f)) for f in stats["warc_files"])
print(f"WARC             {warc_bytes / 1e3 / max(pages, 1):.2f} KB per page "
      f"({stats['payload_bytes'] / max(pages, 1) / 1e3:.1f} KB of payload)")
rss = stats["peak_rss_bytes"] / 1e6
print(f"peak RSS         {rss:.1f} MB (fetcher)")
ok = True
if mode == "polite":
    floor = per_host * delay
    print(f"politeness floor {floor:.2f} s (max over hosts of URLs × delay)")
    print(f"duration/floor   {wall / floor:.3f} ({100 * (wall / floor - 1):+.1f} %)")
if mode == "latency":
    served, per_host_max, total_max = map(int, fetch_mark)
    print(f"server           {served} requests; at most {per_host_max} in flight on one host, "
          f"{total_max} on all hosts together")
    if per_host_max != 1:
        print("FAIL: more than one request in flight on a host")
        ok = False
if fetch_mark and pages != urls:
    print(f"FAIL: {pages} pages stored of {urls} URLs")
    ok = False
if mode == "latency":
    verdict = lambda good: "PASS" if good else "FAIL"
    print(f"target           pages/s ≥ 5000: {rate:.0f} {verdict(rate >= 5000)}; "
          f"peak RSS ≤ 300 MB: {rss:.0f} MB {verdict(rss <= 300)}; "
          f"one request per host: {verdict(int(fetch_mark[1]) == 1)}")
    ok = ok and rate >= 5000 and rss <= 300
if mode == "flat":
    w_wall, w_cpu, w_rss = float(wget_line[0]), float(wget_line[1]), int(wget_line[2])
    w_served, w_host_max, w_total_max = map(int, wget_line[3:6])
    w_server_cpu = float(wget_line[7]) - float(wget_line[6])
    w_pages = w_served - int(fetch_mark[0])
    w_rate = w_pages / w_wall
    print(f"wget2            {w_pages} pages in {w_wall:.2f} s: {w_rate:.0f} pages/s, "
          f"{1000 * w_cpu / max(w_pages, 1):.3f} CPU s/1000 pages "
          f"(+{1000 * w_server_cpu / max(w_pages, 1):.3f} server), peak RSS {w_rss / 1000:.1f} MB")
    if w_pages != urls:
        print(f"FAIL: the server answered wget2 {w_pages} requests for {urls} URLs")
        ok = False
    ratio = rate / w_rate
    print(f"fetcher/wget2    {ratio:.2f} × the pages/s, "
          f"{(fetch_cpu / max(pages, 1)) / (w_cpu / max(w_pages, 1)):.2f} × the CPU per page "
          f"(target: pages/s ratio ≥ 1: {'PASS' if ratio >= 1 else 'FAIL'})")
    profile = [line.split(None, 1) for line in open(sys.argv[15]) if line.strip()]
    if profile:
        kinds = {"deflate": 0.0, "sha1": 0.0, "links": 0.0, "else": 0.0}
        for share, sym in profile:
            if re.search(r"deflate|huffman|build_tree|compute_length_counts|sort_symbols|"
                         r"heap_sort|matchfinder", sym):
                kinds["deflate"] += float(share)
            elif "sha1" in sym:
                kinds["sha1"] += float(share)
            elif re.search(r"lol_html|common::extract|common::urlnorm|encoding_rs|url::parser|"
                           r"percent_encoding", sym):
                # Reading the pages' links (the outlinks of the metadata
                # records). The allocator and copies it causes stay in
                # "else": a split by self samples cannot tell them apart.
                kinds["links"] += float(share)
            else:
                kinds["else"] += float(share)
        total = sum(kinds.values()) or 1
        us = {k: 1e6 * fetch_cpu / max(pages, 1) * v / total for k, v in kinds.items()}
        w_us = 1e6 * w_cpu / max(w_pages, 1)
        print("profiled         (perf writes its data after the fetch: pages/s understated)")
        print(f"fetcher CPU/page {us['deflate']:.0f} µs deflate + {us['sha1']:.0f} µs SHA-1 + "
              f"{us['links']:.0f} µs link reading + "
              f"{us['else']:.0f} µs everything else (a profile's self samples); "
              f"wget2 {w_us:.0f} µs: everything else {us['else'] / w_us:.2f} × wget2's CPU per page "
              f"(target ≤ 1: {'PASS' if us['else'] <= w_us else 'FAIL'})")
    z_wall, z_cpu, _, z_bytes, p_wall, p_cpu, p_rss, p_bytes = map(float, pack_line)
    z_rate, p_rate = z_bytes / z_wall / 1e6, p_bytes / p_wall / 1e6
    print(f"zip -0 + sync    {z_bytes / 1e6:.1f} MB in {z_wall:.2f} s: {z_rate:.0f} MB/s "
          f"({z_cpu:.2f} CPU s)")
    print(f"segmenter wacz   {p_bytes / 1e6:.1f} MB in {p_wall:.2f} s: {p_rate:.0f} MB/s "
          f"({p_cpu:.2f} CPU s, peak RSS {p_rss / 1000:.1f} MB)")
    print(f"wacz/zip -0      {p_rate / z_rate:.2f} × the MB/s "
          f"(target ≥ 0.5: {'PASS' if p_rate / z_rate >= 0.5 else 'FAIL'})")
    l_wall, l_cpu, _, l_scan, l_pages, l_listed = map(float, seg_line[:6])
    q_wall, q_cpu, _, q_scan, q_pages, q_listed = map(float, seg_line[6:])
    per_k = lambda cpu: 1000 * cpu / max(pages, 1)
    print(f"segmenter run    links from metadata records: scan {l_scan:.2f} s, round {l_wall:.2f} s, "
          f"{per_k(l_cpu):.3f} CPU s/1000 pages ({l_listed:.0f} of {l_pages:.0f} pages listed)")
    print(f"segmenter run    links parsed: scan {q_scan:.2f} s, round {q_wall:.2f} s, "
          f"{per_k(q_cpu):.3f} CPU s/1000 pages ({q_listed:.0f} of {q_pages:.0f} pages listed)")
    print(f"listed/parsed    {l_scan / max(q_scan, 1e-9):.2f} × the scan time, "
          f"{l_cpu / max(q_cpu, 1e-9):.2f} × the round's CPU")
    print(f"whole round      fetch + segment CPU s/1000 pages: {per_k(fetch_cpu + l_cpu):.3f} "
          f"(links from metadata records), {per_k(fetch_cpu + q_cpu):.3f} (parsed)")
sys.exit(0 if ok else 1)
PY
