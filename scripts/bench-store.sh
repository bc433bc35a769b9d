#!/usr/bin/env bash
# Benchmark of the WARC store (`warc_store`) against a real S3 server on
# loopback (moto, from .venv/ where scripts/test.sh installs it):
#
#   1. upload: FILES files of FILE_MB MiB of random bytes (WARC-like: they
#      do not compress) uploaded to moto by the store's own code (in 8 MiB
#      parts), against writing the same files into a local directory and
#      syncing each (what the fetcher does with them otherwise); MB/s and
#      CPU seconds per MB of each. moto's own CPU is printed apart: it is
#      the server's cost, a real store's is not on this machine.
#   2. fetch: the fetcher on the flat web of bench-fetch.sh (HOSTS × PER_HOST
#      pages of BODY bytes, no delay), once keeping its WARC files and once
#      uploading them as they close (--warc-store, --warc-max-size
#      WARC_MAX, so that several files go up during the run): pages/s of
#      each, the run's end included (the last upload, DONE).
#      Target: pages/s with the store at least 90 % of without.
#
#   scripts/bench-store.sh
#
# Environment: FILES (default 8), FILE_MB (default 32), HOSTS (default 500),
# PER_HOST (default 40), BODY (default 10000), WARC_MAX (default 16MB).
# Everything runs on loopback and stops by itself.
set -euo pipefail

files=${FILES:-8}
file_mb=${FILE_MB:-32}
hosts=${HOSTS:-500}
per_host=${PER_HOST:-40}
body=${BODY:-10000}
warc_max=${WARC_MAX:-16MB}

root=$(git rev-parse --show-toplevel)
cd "$root"
# shellcheck source=scripts/bench-lib.sh
source scripts/bench-lib.sh
moto="$root/.venv/bin/moto_server"
[[ -x "$moto" ]] || { echo "$moto is missing: run scripts/test.sh once (it installs moto)" >&2; exit 2; }
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY
cargo build --quiet --release -p fetcher --bin fetcher --example bench_server \
  -p common --example bench_store
bin="${CARGO_TARGET_DIR:-$root/target}/release"

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-store.XXXXXX")
crawl="$work/crawl"
moto_pid="" server_pid=""
cleanup() {
  [[ -n "$moto_pid" ]] && kill "$moto_pid" 2>/dev/null || true
  stop_server "$server_pid" "$crawl"
  rm -rf "$work"
}
trap cleanup EXIT

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$moto" -H 127.0.0.1 -p "$port" >"$work/moto.log" 2>&1 &
moto_pid=$!
for _ in $(seq 100); do
  curl -s -o /dev/null "http://127.0.0.1:$port/" 2>/dev/null && break
  sleep 0.2
done
curl -s -f -X PUT "http://127.0.0.1:$port/bench" >/dev/null
export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench AWS_REGION=us-east-1
export AWS_ENDPOINT_URL="http://127.0.0.1:$port" AWS_ALLOW_HTTP=true

# 1. Upload against a local write of the same files (read from the page cache).
mkdir -p "$work/src" "$work/local"
for i in $(seq "$files"); do
  head -c "$((file_mb * 1024 * 1024))" /dev/urandom >"$work/src/f$i.warc.gz"
done
cat "$work/src"/* >/dev/null
local_line=$("$bin/examples/bench_store" local "$work/local" "$work/src"/*)
m0=$(cpu_of "$moto_pid")
store_line=$("$bin/examples/bench_store" "s3://bench/up" "$work/src"/*)
m1=$(cpu_of "$moto_pid")

# 2. The fetcher on the flat web, without and with the store.
"$bin/examples/bench_server" "$crawl" "$hosts" "$per_host" "$body" >"$work/server.out" &
server_pid=$!
urls=$(wait_ready "$server_pid" "$work/server.out" 600)
cp -a "$crawl" "$work/crawl-store"
fetch_line=()
for mode in local store; do
  dir="$crawl"
  args=()
  if [[ $mode == store ]]; then
    dir="$work/crawl-store"
    args=(--warc-store "s3://bench/crawl")
  fi
  start=$(date +%s.%N)
  "$bin/fetcher" fetch "$dir" 00001 --agent-name benchbot --agent-url http://bench.test/about \
    --allow-private --hosts-file "$crawl/hosts" --min-delay 0 --delay-factor 0 \
    --warc-max-size "$warc_max" --progress none "${args[@]}" 2>"$work/fetch-$mode.err" ||
    { cat "$work/fetch-$mode.err" >&2; exit 1; }
  end=$(date +%s.%N)
  fetch_line+=("$dir/fetched/00001/stats.json" "$start" "$end")
done
uploads=$(grep -c warc.gz "$work/crawl-store/fetched/00001/uploads.v1.tsv" || true)

python3 - "$local_line" "$store_line" "$m0" "$m1" "$uploads" "${fetch_line[@]}" "$urls" <<'PY'
import json, sys
a = sys.argv[1:]
lb, lw, lc = map(float, a[0].split())
sb, sw, sc = map(float, a[1].split())
m0, m1, uploads = float(a[2]), float(a[3]), int(a[4])
urls = int(a[11])
ok = True
mb = lb / 1e6
print(f"local write+sync  {mb:.0f} MB in {lw:.2f} s: {mb / lw:.0f} MB/s, {1000 * lc / mb:.2f} CPU ms/MB")
print(f"upload to moto    {sb / 1e6:.0f} MB in {sw:.2f} s: {sb / 1e6 / sw:.0f} MB/s, "
      f"{1000 * sc / (sb / 1e6):.2f} CPU ms/MB (client; moto {1000 * (m1 - m0) / (sb / 1e6):.2f} CPU ms/MB)")
print(f"upload/local      {(sb / sw) / (lb / lw):.2f} × the MB/s (no target: loopback moto is the bound)")
rates = {}
for name, i in (("local", 5), ("store", 8)):
    st = json.load(open(a[i]))
    wall = float(a[i + 2]) - float(a[i + 1])
    pages = st["responses"] - st["robots_responses"]
    rates[name] = pages / wall
    if pages != urls:
        print(f"FAIL: the run with WARC {name} stored {pages} of {urls} pages (a round cut short: "
              f"a loaded machine?); the rates are not comparable")
        ok = False
    print(f"fetch, WARC {name:5} {pages} pages in {wall:.2f} s: {pages / wall:.0f} pages/s, "
          f"{1000 * st['cpu_seconds'] / max(pages, 1):.3f} CPU s/1000 pages")
print(f"fetch uploads     {uploads} WARC files uploaded")
ratio = rates["store"] / rates["local"]
print(f"store/local       {ratio:.2f} × the pages/s (target ≥ 0.90: {'PASS' if ratio >= 0.9 else 'FAIL'})")
sys.exit(0 if ok and ratio >= 0.9 else 1)
PY
