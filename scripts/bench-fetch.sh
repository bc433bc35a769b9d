#!/usr/bin/env bash
# Benchmark of the fetcher against a fast local server (testkit's loopback
# server, one address per host, run by the bench_server example).
#
#   scripts/bench-fetch.sh [throughput|big|polite]
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
#
# Environment: THREADS (fetcher workers, default 64), BODY (bytes per page,
# default 2000). Everything runs on loopback and stops by itself.
set -euo pipefail

mode=${1:-throughput}
threads=${THREADS:-64}
body=${BODY:-2000}
case "$mode" in
  throughput) hosts=200;   per_host=100; delay=0 ;;
  big)        hosts=10000; per_host=100; delay=0 ;;
  polite)     hosts=100;   per_host=50;  delay=0.2 ;;
  *) echo "usage: $0 [throughput|big|polite]" >&2; exit 2 ;;
esac

root=$(git rev-parse --show-toplevel)
cd "$root"
cargo build --quiet --release -p fetcher --bin fetcher --example bench_server
bin="$root/target/release"

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-fetch.XXXXXX")
crawl="$work/crawl"
server_pid=""
cleanup() {
  if [[ -n "$server_pid" ]] && kill -0 "$server_pid" 2>/dev/null; then
    touch "$crawl/bench-stop"
    for _ in $(seq 50); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.1; done
    kill "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# CPU seconds (user + system) of a live process, from /proc (100 ticks/s).
cpu_of() { awk '{ print ($14 + $15) / 100 }' "/proc/$1/stat"; }

"$bin/examples/bench_server" "$crawl" "$hosts" "$per_host" "$body" >"$work/server.out" &
server_pid=$!
for _ in $(seq 1200); do
  grep -q '^ready' "$work/server.out" 2>/dev/null && break
  kill -0 "$server_pid" 2>/dev/null || { echo "bench server failed" >&2; exit 1; }
  sleep 0.5
done
grep -q '^ready' "$work/server.out" || { echo "bench server not ready after 10 minutes" >&2; exit 1; }
urls=$(awk '/^ready/ { print $2 }' "$work/server.out")
server_cpu0=$(cpu_of "$server_pid")

echo "mode $mode: $urls URLs over $hosts hosts, body $body bytes, delay ${delay}s, $threads threads"
start=$(date +%s.%N)
"$bin/fetcher" fetch "$crawl" 00001 \
  --agent-name benchbot --agent-url http://bench.test/about \
  --hosts-file "$crawl/hosts" --allow-private \
  --min-delay "$delay" --delay-factor 0 --threads "$threads" \
  --progress plain 2>"$work/fetcher.err" || { cat "$work/fetcher.err" >&2; exit 1; }
end=$(date +%s.%N)
server_cpu1=$(cpu_of "$server_pid")

python3 - "$crawl/fetched/00001/stats.json" "$start" "$end" "$server_cpu0" "$server_cpu1" \
  "$mode" "$hosts" "$per_host" "$delay" <<'PY'
import json, sys
stats = json.load(open(sys.argv[1]))
start, end, s0, s1 = map(float, sys.argv[2:6])
mode, hosts, per_host, delay = sys.argv[6], int(sys.argv[7]), int(sys.argv[8]), float(sys.argv[9])
wall = end - start
pages = stats["responses"] - stats["robots_responses"]
fetch_cpu = stats["cpu_seconds"]
server_cpu = s1 - s0
print(f"pages            {pages} ({stats['outcomes']})")
print(f"wall time        {wall:.2f} s (fetch loop {stats['seconds']:.2f} s)")
print(f"pages/s          {pages / wall:.0f}")
print(f"MB/s             {stats['payload_bytes'] / wall / 1e6:.1f} (payload)")
print(f"CPU s/1000 pages {1000 * fetch_cpu / max(pages, 1):.3f} fetcher, "
      f"{1000 * server_cpu / max(pages, 1):.3f} server, "
      f"{1000 * (fetch_cpu + server_cpu) / max(pages, 1):.3f} total")
print(f"peak RSS         {stats['peak_rss_bytes'] / 1e6:.1f} MB (fetcher)")
if mode == "polite":
    floor = per_host * delay
    print(f"politeness floor {floor:.2f} s (max over hosts of URLs × delay)")
    print(f"duration/floor   {wall / floor:.3f} ({100 * (wall / floor - 1):+.1f} %)")
PY
