#!/usr/bin/env bash
# Benchmark of https against http: the same pages on the same loopback hosts
# (testkit's server, and its TLS front with a certificate per host signed by
# a CA made at start, trusted with --ca-file), fetched over http and then
# over https by the same fetcher build, with the fetcher's and the servers'
# CPU time. The https figures include one TLS handshake per host and the
# front's relaying (which runs on the same two cores).
#
#   scripts/bench-tls.sh
#
# Target: https reaches at least half the pages/s of http.
# Environment: HOSTS (default 200), PER_HOST (default 100), THREADS
# (fetcher workers, default 64), BODY (bytes per page, default 2000).
# Everything runs on loopback and stops by itself.
set -euo pipefail

hosts=${HOSTS:-200}
per_host=${PER_HOST:-100}
threads=${THREADS:-64}
body=${BODY:-2000}

root=$(git rev-parse --show-toplevel)
cd "$root"
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh
cargo build --quiet --release -p fetcher --bin fetcher --example bench_tls_server
bin="${CARGO_TARGET_DIR:-$root/target}/release"

bench_scratch bench-tls

"$bin/examples/bench_tls_server" "$work" "$hosts" "$per_host" "$body" >"$work/server.out" &
server_pid=$!
urls=$(wait_ready "$server_pid" "$work/server.out" 300)
echo "$urls URLs over $hosts hosts, body $body bytes, no delay, $threads threads"

results=()
for scheme in http https; do
  crawl="$work/$scheme"
  s0=$(cpu_of "$server_pid")
  start=$(date +%s.%N)
  "$bin/fetcher" fetch "$crawl" 00001 \
    --agent-name benchbot --agent-url http://bench.test/about \
    --hosts-file "$crawl/hosts" --ca-file "$crawl/ca.pem" --allow-private \
    --min-delay 0 --delay-factor 0 --threads "$threads" \
    --progress none 2>"$work/fetcher-$scheme.err" || { cat "$work/fetcher-$scheme.err" >&2; exit 1; }
  end=$(date +%s.%N)
  s1=$(cpu_of "$server_pid")
  results+=("$scheme" "$crawl/fetched/00001/stats.json" "$start" "$end" "$s0" "$s1")
done

python3 - "${results[@]}" <<'PY'
import json, sys
a = sys.argv[1:]
rows = {}
for i in range(0, len(a), 6):
    scheme, stats_path = a[i], a[i + 1]
    start, end, s0, s1 = map(float, a[i + 2:i + 6])
    stats = json.load(open(stats_path))
    pages = stats["responses"] - stats["robots_responses"]
    wall = end - start
    rows[scheme] = dict(pages=pages, wall=wall, rate=pages / wall,
                        fetch=1000 * stats["cpu_seconds"] / max(pages, 1),
                        server=1000 * (s1 - s0) / max(pages, 1),
                        rss=stats["peak_rss_bytes"] / 1e6, outcomes=stats["outcomes"])
for scheme, r in rows.items():
    print(f"{scheme:5}  {r['pages']} pages in {r['wall']:.2f} s: {r['rate']:.0f} pages/s; "
          f"CPU s per 1000 pages {r['fetch']:.3f} fetcher, {r['server']:.3f} server; "
          f"peak RSS {r['rss']:.1f} MB; {r['outcomes']}")
h, s = rows["http"], rows["https"]
ratio = s["rate"] / h["rate"]
print(f"https/http pages/s {ratio:.2f} (target >= 0.50: {'PASS' if ratio >= 0.5 else 'FAIL'}); "
      f"fetcher CPU per page {s['fetch'] / h['fetch']:.2f} x http")
PY
