#!/usr/bin/env bash
# Benchmark of name resolution: the fetcher's resolver (hickory-resolver
# behind a per-name cache) against the system resolver (getaddrinfo), and
# `fetcher fetch --key ip` resolving a segment's names before fetching.
#
#   scripts/bench-dns.sh
#
# Runs in a network namespace of its own (`unshare`, so root): only its
# loopback exists, and its /etc/resolv.conf (bind-mounted, in a mount
# namespace of its own) names 127.0.0.1, where testkit's DNS server answers
# every name after LATENCY_MS. Nothing leaves the machine; nothing outside
# the namespaces changes.
#
# Environment: NAMES (default 1000), LATENCY_MS (default 20).
# Target: `--key ip` resolves NAMES names in at most 2 × NAMES × LATENCY /
# 64 (64 lookups in flight), where one after another takes NAMES × LATENCY.
set -euo pipefail

names=${NAMES:-1000}
latency=${LATENCY_MS:-20}
if [[ $(id -u) -ne 0 ]]; then
  echo "bench-dns.sh needs root (unshare of a network and a mount namespace)" >&2
  exit 2
fi

root=$(git rev-parse --show-toplevel)
cd "$root"
cargo build --quiet --release -p fetcher --bin fetcher --example bench_dns
bin="${CARGO_TARGET_DIR:-$root/target}/release"

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-dns.XXXXXX")
trap 'rm -rf "$work"' EXIT
printf 'nameserver 127.0.0.1\noptions timeout:5 attempts:1\n' >"$work/resolv.conf"

# Inside the namespaces: loopback up, our resolv.conf, the server in the
# background, the measurements, the server stopped.
unshare --net --mount bash -s "$bin" "$names" "$latency" "$work" <<'INNER' | tee "$work/out"
set -euo pipefail
bin=$1 names=$2 latency=$3 work=$4
ip link set lo up
mount --bind "$work/resolv.conf" /etc/resolv.conf
"$bin/examples/bench_dns" serve "$names" "$latency" >"$work/server.out" &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q ready "$work/server.out" 2>/dev/null && break; sleep 0.1; done
"$bin/examples/bench_dns" measure "$bin/fetcher" "$names" "$latency" "$work"
INNER

# The wall time of a way: the first field that is a number of seconds.
seconds_of() {
  awk -v way="$1" 'index($0, way) == 1 {
    for (i = 1; i <= NF; i++) if ($i ~ /^[0-9.]+s$/) { print $i + 0; exit }
  }' "$work/out"
}
key_ip=$(seconds_of "fetcher fetch --key ip")
sequential=$(seconds_of "getaddrinfo, one after another")
target=$(awk -v n="$names" -v l="$latency" 'BEGIN { printf "%.2f", 2 * n * l / 1000 / 64 }')
echo
echo "--key ip: ${key_ip}s for $names names (target <= ${target}s; one after another: ${sequential}s)"
awk -v k="$key_ip" -v t="$target" 'BEGIN { exit !(k + 0 <= t + 0) }' && echo "target met" || echo "target MISSED"
