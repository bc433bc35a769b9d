#!/usr/bin/env bash
# demo.sh: the first command of the README's quick start. Builds the release binaries, serves the
# project's demo web on loopback addresses (no internet needed), runs three
# rounds of scripts/crawl.sh against it with low delays, stops the server and
# prints where to look.
#
# Usage: scripts/demo.sh [--rounds N] [--seed N] [--out DIR] [--bin DIR] [--resume]
#
#   --rounds N   crawl rounds (default 3; with --resume, until the end)
#   --seed N     which demo web to generate (default 1)
#   --out DIR    where everything goes (default demo/ at the repository root,
#                ignored by git); each run starts a fresh crawl there
#   --bin DIR    use the binaries in DIR instead of building target/release
#   --resume     go on with the crawl in DIR instead (the demo web is served
#                again, on the port its URLs hold)
set -euo pipefail

prog=demo.sh
rounds=""
seed=1
resume=0
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$root/demo
bin=""
need_value() { [ "$2" -ge 2 ] || { echo "$prog: $1 needs a value" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
    case "$1" in
        -h|--help)
            sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
            exit 0 ;;
        --resume) resume=1; shift ;;
        --rounds) need_value "$1" $#; rounds=$2; shift 2 ;;
        --seed) need_value "$1" $#; seed=$2; shift 2 ;;
        --out) need_value "$1" $#; out=$2; shift 2 ;;
        --bin) need_value "$1" $#; bin=$2; shift 2 ;;
        *) echo "$prog: unknown argument '$1' (try --help)" >&2; exit 2 ;;
    esac
done
case "$rounds" in ''|*[!0-9]*|0*) [ -z "$rounds" ] || { echo "$prog: --rounds takes a whole number above 0" >&2; exit 2; } ;; esac
[ -n "$rounds" ] || [ "$resume" = 1 ] || rounds=3
case "$seed" in ''|*[!0-9]*) echo "$prog: --seed takes a whole number" >&2; exit 2 ;; esac
port=""
if [ "$resume" = 1 ]; then
    # The demo web and port the crawl was started with.
    if [ ! -e "$out/crawl/crawl.toml" ] || [ ! -e "$out/demo.env" ]; then
        echo "$prog: no demo crawl to go on with in $out; run $prog without --resume first" >&2
        exit 2
    fi
    seed=$(sed -n 's/^seed=//p' "$out/demo.env")
    port=$(sed -n 's/^port=//p' "$out/demo.env")
elif [ -e "$out" ] && [ -n "$(ls -A "$out" 2>/dev/null)" ] \
    && [ ! -e "$out/demo.env" ] && [ ! -e "$out/crawl/crawl.toml" ]; then
    # A fresh demo every time: the previous one is removed, but only from a
    # directory that is empty or that this script filled.
    echo "$prog: $out exists and is not a demo directory; choose another with --out" >&2
    exit 2
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$root"
crawl=$out/crawl
# Paths as printed: relative to the repository root when inside it.
show() { case "$1" in "$root"/*) echo "${1#"$root"/}" ;; *) echo "$1" ;; esac; }

if [ -z "$bin" ]; then
    bin=$root/target/release
    echo "==> building the release binaries (cargo build --release)"
    cargo build --release --locked --bin fetcher --bin segmenter --bin demo-web
fi
for b in fetcher segmenter demo-web; do
    [ -x "$bin/$b" ] || { echo "$prog: $bin/$b: not found or not executable" >&2; exit 2; }
done
bin=$(cd "$bin" && pwd)
[ "$resume" = 1 ] || find "$out" -mindepth 1 -delete

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

# How to go on with this crawl later (to its end, or --rounds N).
resume_hint() {
    local cmd="scripts/demo.sh --resume"
    [ "$out" = "$root/demo" ] || cmd="$cmd --out $(show "$out")"
    [ "$bin" = "$root/target/release" ] || cmd="$cmd --bin $(show "$bin")"
    echo "    to go on with this crawl: $cmd"
}
# On Ctrl-C the crawl stops cleanly by itself (crawl.sh gets the signal too);
# this script then stops the server (on exit) and says how to go on.
on_interrupt() {
    echo "$prog: interrupted; the demo web is stopped" >&2
    [ ! -e "$out/demo.env" ] || resume_hint >&2
    exit 130
}
trap on_interrupt INT TERM

echo "==> serving the demo web (seed $seed) on 127.0.0.10 and up"
# Its own process group: a Ctrl-C stops the crawl first, then the server.
set -m
"$bin/demo-web" serve --seed "$seed" ${port:+--port "$port"} \
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

if [ "$resume" = 0 ]; then
    printf 'seed=%s\nport=%s\n' "$seed" "$port" >"$out/demo.env"
    mkdir -p "$crawl"
    cat >"$crawl/crawl.toml" <<EOF
# Settings of the demo crawl (written by scripts/demo.sh). The delays are far
# lower than the defaults, which are meant for the real web.
[agent]
name = "demobot"
url = "https://example.org/demobot.html"

[crawl]
min_free_disk = "100MB"       # the demo is a few MB (the default floor is 1GB)

[fetcher]
allow_private = true          # the demo web lives on 127.0.0.x
backoff_max = "2s"            # failing demo hosts are asked again soon (default 1h)
hosts_file = "$out/hosts"     # names of the demo hosts -> their addresses
min_delay = "50ms"
delay_factor = 0.5
robots_retry_delay = "1s"
connect_timeout = "2s"
first_byte_timeout = "2s"     # hole.demo.test never answers: do not wait 30 s for it

[segmenter]
sitemap_max_entries = 20      # below maps.demo.test's long sitemap (30 URLs): shows the limit
EOF
fi

args=("$crawl" --bin "$bin")
[ "$resume" = 1 ] || args+=(--seeds "$out/seeds.txt")
[ -z "$rounds" ] || args+=(--rounds "$rounds")
echo "==> crawling: scripts/crawl.sh $(show "$crawl")${rounds:+ --rounds $rounds}"
start=$(date +%s)
set +e
scripts/crawl.sh "${args[@]}"
rc=$?
set -e
seconds=$(( $(date +%s) - start ))
stop_server
if [ "$rc" != 0 ]; then
    echo "$prog: scripts/crawl.sh exited with code $rc; its logs are in $(show "$crawl")/logs/" >&2
    exit "$rc"
fi

# Figures, from the crawl's files: rounds (the round journal's rounds that
# ended done), HTTP responses other than robots.txt, and the hosts that gave
# at least one.
cat_logs() { cat "$crawl"/fetched/*/crawl.log 2>/dev/null; }
done_rounds=$(awk -F'\t' '!/^#/ && $5 == "done"' "$crawl/rounds.v1.tsv" 2>/dev/null | wc -l)
pages=$(cat_logs | awk -F'\t' '$2 ~ /^[0-9]+$/ && $7 != "robots"' | wc -l)
hosts=$(cat_logs | awk -F'\t' '$2 ~ /^[0-9]+$/ && $7 != "robots" { split($6, u, "/"); print u[3] }' | sort -u | wc -l)
ok=$(cat_logs | awk -F'\t' '$2 ~ /^2/ && $7 != "robots"' | wc -l)
warcs=$(find "$crawl/fetched" -name '*.warc.gz' | wc -l)
sitemaps=$(cat_logs | awk -F'\t' '$2 ~ /^2/ && $7 == "sitemap-file"' | wc -l)
by_sitemap=$(cat_logs | awk -F'\t' '$2 ~ /^2/ && $7 == "sitemap"' | wc -l)
bytes=$(du -sh "$crawl" | cut -f1)
last=$(cd "$crawl/segments" && find . -name '*.v5.tsv.zst' | sort | tail -n 1 | sed 's|^\./||')
first_run=$(cd "$crawl/fetched" && find . -mindepth 1 -maxdepth 1 -type d | sort | head -n 1 | sed 's|^\./||')
c=$(show "$crawl")

cat <<EOF

==> demo crawl done: $done_rounds rounds in all, $pages pages fetched ($ok with status 2xx) from $hosts hosts in ${seconds}s
    Sitemaps: $sitemaps fetched, $by_sitemap pages fetched that were found through a sitemap (via "sitemap" in crawl.log)
    The demo web (port $port) was stopped. Rerunning scripts/demo.sh starts a fresh crawl;
$(resume_hint)

Where to look (crawl directory $c, $bytes, $warcs WARC files; commands for the repository root):

  segments     $c/segments/*.v5.tsv.zst (the next one to fetch: $last)
               zstdcat $c/segments/$last | cut -f1 | uniq -c | sort -rn | head
               $(show "$bin")/segmenter inspect $c/segments/$last

  WARC         $c/fetched/ID/*.warc.gz (every response, robots.txt included)
               zcat $c/fetched/$first_run/*.warc.gz | grep -a '^WARC-Target-URI' | head

  crawl log    $c/fetched/ID/crawl.log (one line per URL attempted)
               cut -f2 $c/fetched/*/crawl.log | sort | uniq -c | sort -rn

  host state   $c/hosts.db (SQLite: robots.txt, Crawl-delay, response times, errors)
               sqlite3 $c/hosts.db 'select host, robots_status, crawl_delay_ms, pages_total from hosts'

  rounds       $c/rounds.v1.tsv (one line per round: its figures and times)
  logs         $c/logs/round-*.log (one per round: every step's output), segmenter-*.json (reports)
  server side  $(show "$out")/requests.tsv (host, path, start ms, end ms, status of every request served)

==> the crawl report (rebuilt after every round; open it in a browser):
    $c/report.html
EOF
