#!/usr/bin/env bash
# demo.sh: the README's first command. Builds the release binaries, serves the
# project's demo web on loopback addresses (no internet needed), runs three
# rounds of scripts/crawl.sh against it with low delays, stops the server and
# prints where to look.
#
# Usage: scripts/demo.sh [--rounds N] [--seed N]
#
# Everything goes to demo/ at the repository root (ignored by git); each run
# starts a fresh crawl there.
set -euo pipefail

prog=demo.sh
rounds=3
seed=1
while [ $# -gt 0 ]; do
    case "$1" in
        -h|--help)
            sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
            exit 0 ;;
        --rounds) [ $# -ge 2 ] || { echo "$prog: --rounds needs a number" >&2; exit 2; }; rounds=$2; shift 2 ;;
        --seed) [ $# -ge 2 ] || { echo "$prog: --seed needs a number" >&2; exit 2; }; seed=$2; shift 2 ;;
        *) echo "$prog: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    esac
done
case "$rounds" in ''|*[!0-9]*|0*) echo "$prog: --rounds takes a whole number above 0" >&2; exit 2 ;; esac
case "$seed" in ''|*[!0-9]*) echo "$prog: --seed takes a whole number" >&2; exit 2 ;; esac

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
out=$root/demo
crawl=$out/crawl
bin=$root/target/release

echo "==> building the release binaries (cargo build --release)"
cargo build --release --locked --bin fetcher --bin segmenter --bin demo-web

# A fresh demo every time: the previous crawl directory and server files go.
rm -rf "$out"
mkdir -p "$out"

server_pid=""
stop_server() {
    [ -n "$server_pid" ] || return 0
    if kill -0 "$server_pid" 2>/dev/null; then
        kill -TERM "$server_pid" 2>/dev/null || true
        for _ in $(seq 50); do
            kill -0 "$server_pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$server_pid" 2>/dev/null || true
    fi
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
}
trap stop_server EXIT
# On Ctrl-C the crawl stops cleanly by itself (crawl.sh gets the signal too);
# this script then stops the server and exits.
port=""
# How to go on with this crawl later: the URLs hold the port, so the demo web
# must be served on the same one.
resume_hint() {
    echo "    to go on with this crawl: target/release/demo-web serve --seed $seed --port $port \\"
    echo "        --seeds-out demo/seeds.txt --hosts-out demo/hosts &"
    echo "      scripts/crawl.sh demo/crawl; kill %1"
}
on_interrupt() {
    echo "$prog: interrupted; the demo web is stopped" >&2
    [ -z "$port" ] || resume_hint >&2
    exit 130
}
trap on_interrupt INT TERM

echo "==> serving the demo web (seed $seed) on 127.0.0.10 and up"
# Its own process group: a Ctrl-C stops the crawl first, then the server.
set -m
"$bin/demo-web" serve --seed "$seed" \
    --seeds-out "$out/seeds.txt" --hosts-out "$out/hosts" \
    --ready-file "$out/server.ready" --request-log "$out/requests.tsv" \
    </dev/null 2>"$out/server.log" &
server_pid=$!
set +m
ready=0
for _ in $(seq 300); do
    if [ -e "$out/server.ready" ]; then ready=1; break; fi
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
done
if [ "$ready" = 0 ]; then
    echo "$prog: the demo web did not start within 30 s:" >&2
    sed 's/^/  /' "$out/server.log" >&2
    exit 1
fi
port=$(sed -n 's/^port=//p' "$out/server.ready")

mkdir -p "$crawl"
cat >"$crawl/crawl.toml" <<EOF
# Settings of the demo crawl (written by scripts/demo.sh). The delays are far
# lower than the defaults, which are meant for the real web.
[agent]
name = "demobot"
url = "https://example.org/demobot.html"

[fetcher]
allow_private = true          # the demo web lives on 127.0.0.x
hosts_file = "$out/hosts"     # names of the demo hosts -> their addresses
min_delay = "50ms"
delay_factor = 0.5
robots_retry_delay = "1s"
connect_timeout = "2s"
EOF

echo "==> crawling for $rounds rounds: scripts/crawl.sh demo/crawl --seeds demo/seeds.txt --rounds $rounds"
start=$(date +%s)
set +e
scripts/crawl.sh "$crawl" --seeds "$out/seeds.txt" --rounds "$rounds" --bin "$bin"
rc=$?
set -e
seconds=$(( $(date +%s) - start ))
stop_server
if [ "$rc" != 0 ]; then
    echo "$prog: scripts/crawl.sh exited with code $rc; its logs are in demo/crawl/logs/" >&2
    exit "$rc"
fi

# Figures, from the crawl logs: HTTP responses other than robots.txt, and the
# hosts that gave at least one.
cat_logs() { cat "$crawl"/fetched/*/crawl.log 2>/dev/null; }
pages=$(cat_logs | awk -F'\t' '$2 ~ /^[0-9]+$/ && $7 != "robots"' | wc -l)
hosts=$(cat_logs | awk -F'\t' '$2 ~ /^[0-9]+$/ && $7 != "robots" { split($6, u, "/"); print u[3] }' | sort -u | wc -l)
ok=$(cat_logs | awk -F'\t' '$2 ~ /^2/ && $7 != "robots"' | wc -l)
warcs=$(find "$crawl/fetched" -name '*.warc.gz' | wc -l)
bytes=$(du -sh "$crawl" | cut -f1)
last=$(cd "$crawl/segments" && find . -name '*.v1.tsv.zst' | sort | tail -n 1 | sed 's|^\./||')
first_run=$(cd "$crawl/fetched" && find . -mindepth 1 -maxdepth 1 -type d | sort | head -n 1 | sed 's|^\./||')

cat <<EOF

==> demo crawl done: $rounds rounds, $pages pages fetched ($ok with status 2xx) from $hosts hosts in ${seconds}s
    The demo web (port $port) was stopped. Rerunning scripts/demo.sh starts a fresh crawl;
$(resume_hint)

Where to look (crawl directory demo/crawl, $bytes, $warcs WARC files):

  segments     demo/crawl/segments/*.v1.tsv.zst (the next one to fetch: $last)
               zstdcat demo/crawl/segments/$last | cut -f1 | uniq -c | sort -rn | head
               target/release/segmenter inspect demo/crawl/segments/$last

  WARC         demo/crawl/fetched/ID/*.warc.gz (every response, robots.txt included)
               zcat demo/crawl/fetched/$first_run/*.warc.gz | grep -a '^WARC-Target-URI' | head

  crawl log    demo/crawl/fetched/ID/crawl.log (one line per URL attempted)
               cut -f2 demo/crawl/fetched/*/crawl.log | sort | uniq -c | sort -rn

  host state   demo/crawl/hosts.db (SQLite: robots.txt, Crawl-delay, response times, errors)
               sqlite3 demo/crawl/hosts.db 'select host, robots_status, crawl_delay_ms, pages_total from hosts'

  logs         demo/crawl/logs/round-*.log (one per round), fetcher-*.log, segmenter-*.log
  server side  demo/requests.tsv (host, path, start ms, end ms, status of every request served)
EOF
