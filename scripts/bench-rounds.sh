#!/usr/bin/env bash
# bench-rounds.sh: whole crawls, round after round, against what politeness
# allows them: is a crawl as slow as its slowest host?
#
#   scripts/bench-rounds.sh [floor|recall] [OPTIONS]
#
#   floor   (default) serves the rounds web (demo-web rounds-web: one large
#           host, many small ones, every home page a seed), crawls it with
#           scripts/crawl.sh until the crawl ends by itself, and compares the
#           wall time with the politeness floor F = the largest host's
#           requests (robots.txt included) x the delay. Target:
#           wall <= 1.3 x F + 10 s. Prints every round's fetch time and the
#           gap from the end of one fetch to the start of the next.
#   recall  serves the full demo web (demo-web serve), crawls it for
#           --seconds T, then prints the share of the URLs a correct crawl
#           fetches that were fetched within T (recall), the most politeness
#           allows in T (ceiling: the sum over hosts of
#           min(pages, T / delay) over all pages, delay = max(--delay, the
#           host's Crawl-delay)), and recall / ceiling.
#
# Both modes count, from the server's request log, the pairs of requests to
# one host closer than its delay (should be 0).
#
# Options:
#   --delay S         min_delay of the crawl in seconds (default 1)
#   --large-pages N   floor: pages of the large host (default 60)
#   --small-hosts N   floor: number of small hosts (default 200)
#   --tail            floor: add a black hole, a robots.txt 500, a refused
#                     host and a Crawl-delay host, met in every round
#   --crawl-delay S   Crawl-delay of slow.rounds.test (floor --tail, default
#                     3) or of slow.demo.test (recall, default 1)
#   --timeout S       floor: stop the crawl after S seconds (default
#                     5 x F + 300); the run then FAILs
#   --seconds T       recall: how long to crawl (default 600)
#   --seed N          which web to generate (default 1)
#   --set LINE        one more line for crawl.toml's [fetcher] section
#                     (repeatable): --set 'robots_retry_delay = "5s"'
#   --bin DIR         use the binaries in DIR instead of building them
#   --keep            keep the work directory (its path is printed)
#
# Floor mode runs with low timeouts (connect and first byte 2 s, download
# 10 s); recall mode with the fetcher's defaults but min_delay and a
# delay_factor of 0, so that the tail costs what it costs on the web. Every
# server and crawl runs on loopback addresses; every wait is bounded.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/bench-lib.sh
. "$root/scripts/bench-lib.sh"

prog=bench-rounds.sh
mode=floor
delay=1
large_pages=60
small_hosts=200
tail=0
crawl_delay=""
timeout=""
seconds=600
seed=1
extra=()
bin=""
keep=0


case "${1:-}" in
    floor|recall) mode=$1; shift ;;
esac
while [ $# -gt 0 ]; do
    case "$1" in
        -h|--help) usage; exit 0 ;;
        --delay) need "$1" $#; number "$1" "$2"; delay=$2; shift 2 ;;
        --large-pages) need "$1" $#; whole "$1" "$2"; large_pages=$2; shift 2 ;;
        --small-hosts) need "$1" $#; whole "$1" "$2"; small_hosts=$2; shift 2 ;;
        --tail) tail=1; shift ;;
        --crawl-delay) need "$1" $#; number "$1" "$2"; crawl_delay=$2; shift 2 ;;
        --timeout) need "$1" $#; whole "$1" "$2"; timeout=$2; shift 2 ;;
        --seconds) need "$1" $#; whole "$1" "$2"; seconds=$2; shift 2 ;;
        --seed) need "$1" $#; whole "$1" "$2"; seed=$2; shift 2 ;;
        --set) need "$1" $#; extra+=("$2"); shift 2 ;;
        --bin) need "$1" $#; bin=$2; shift 2 ;;
        --keep) keep=1; shift ;;
        *) die "unknown argument '$1' (try --help)" ;;
    esac
done
[ "$seconds" -gt 0 ] || die "--seconds must be above 0"
command -v python3 >/dev/null 2>&1 || die "python3 is needed for the figures"

cd "$root"
if [ -z "$bin" ]; then
    cargo build --release --locked --bin fetcher --bin segmenter --bin demo-web
    bin=$root/target/release
fi
for b in fetcher segmenter demo-web; do
    [ -x "$bin/$b" ] || die "$bin/$b: not found or not executable"
done
bin=$(cd "$bin" && pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/bench-rounds.XXXXXX")
crawl=$work/crawl
server_pid=""
crawl_pid=""

# Waits (at most $2 tenths of a second) for process $1 to end.
wait_gone() {
    local i
    for ((i = 0; i < $2; i++)); do
        kill -0 "$1" 2>/dev/null || return 0
        sleep 0.1
    done
    return 1
}

# Stops the crawl: STOP file first (a clean stop), then signals, each
# bounded; last, crawl.sh and the step it runs are killed by their ids.
stop_crawl() {
    [ -n "$crawl_pid" ] || return 0
    if kill -0 "$crawl_pid" 2>/dev/null; then
        touch "$crawl/STOP"
        if ! wait_gone "$crawl_pid" 600; then
            kill -TERM "$crawl_pid" 2>/dev/null || true
            if ! wait_gone "$crawl_pid" 150; then
                kill -TERM "$crawl_pid" 2>/dev/null || true
                if ! wait_gone "$crawl_pid" 100; then
                    local child
                    for child in $(pgrep -P "$crawl_pid" 2>/dev/null || true); do
                        kill -KILL "$child" 2>/dev/null || true
                    done
                    kill -KILL "$crawl_pid" 2>/dev/null || true
                fi
            fi
        fi
    fi
    wait "$crawl_pid" 2>/dev/null || true
    crawl_pid=""
}

stop_server() {
    [ -n "$server_pid" ] || return 0
    if kill -0 "$server_pid" 2>/dev/null; then
        kill -TERM "$server_pid" 2>/dev/null || true
        wait_gone "$server_pid" 100 || kill -KILL "$server_pid" 2>/dev/null || true
    fi
    wait "$server_pid" 2>/dev/null || true
    server_pid=""
}

cleanup() {
    stop_crawl
    stop_server
    if [ "$keep" = 1 ]; then
        echo "work directory kept: $work"
    else
        rm -rf "$work"
    fi
}
trap cleanup EXIT
trap 'echo "$prog: interrupted" >&2; exit 130' INT TERM HUP

# Starts the server ("$@" = demo-web arguments) and waits for it (bounded).
start_server() {
    "$bin/demo-web" "$@" --ready-file "$work/ready" --request-log "$work/requests.tsv" \
        </dev/null 2>"$work/server.log" &
    server_pid=$!
    local i
    for ((i = 0; i < 600; i++)); do
        [ -e "$work/ready" ] && break
        kill -0 "$server_pid" 2>/dev/null || break
        sleep 0.1
    done
    if [ ! -e "$work/ready" ]; then
        echo "$prog: demo-web did not start within 60 s:" >&2
        sed 's/^/  /' "$work/server.log" >&2
        exit 1
    fi
    port=$(sed -n 's/^port=//p' "$work/ready")
}

# crawl.toml: $1 = agent name, then [fetcher] lines.
write_toml() {
    local agent=$1 line
    shift
    mkdir -p "$crawl"
    {
        printf '[agent]\nname = "%s"\nurl = "https://example.org/%s.html"\n\n' "$agent" "$agent"
        printf '[fetcher]\nallow_private = true\nhosts_file = "%s"\n' "$work/hosts"
        printf 'min_delay = "%ss"\ndelay_factor = 0\n' "$delay"
        for line in "$@" ${extra[@]+"${extra[@]}"}; do
            printf '%s\n' "$line"
        done
    } >"$crawl/crawl.toml"
}

# Starts crawl.sh in the background; its output goes to crawl.out.
start_crawl() {
    crawl_start=$(date +%s.%N)
    "$root/scripts/crawl.sh" "$crawl" --seeds "$work/seeds.txt" --bin "$bin" \
        </dev/null >"$work/crawl.out" 2>&1 &
    crawl_pid=$!
}

# Waits for the crawl to end by itself, at most $1 seconds; returns 1 if it
# had to be stopped. Prints each round's line as crawl.sh prints it.
await_crawl() {
    local limit=$1 shown=0 lines n
    local deadline
    deadline=$(awk -v s="$crawl_start" -v l="$limit" 'BEGIN { printf "%d", s + l }')
    while kill -0 "$crawl_pid" 2>/dev/null; do
        lines=$(grep -c '^round ' "$work/crawl.out" 2>/dev/null || true)
        if [ "${lines:-0}" -gt "$shown" ]; then
            grep '^round ' "$work/crawl.out" | tail -n "+$((shown + 1))" | sed 's/^/  /'
            shown=$lines
        fi
        if [ "$(date +%s)" -ge "$deadline" ]; then
            return 1
        fi
        sleep 0.5
    done
    n=$(grep -c '^round ' "$work/crawl.out" 2>/dev/null || true)
    [ "${n:-0}" -le "$shown" ] || grep '^round ' "$work/crawl.out" | tail -n "+$((shown + 1))" | sed 's/^/  /'
    return 0
}

# The figures: stats.json of every fetched run, the crawl logs, the server's
# request log. Arguments: MODE CRAWL WEB_JSON REQUEST_LOG START END DELAY
# ENDED [SECONDS].
report() {
    python3 - "$@" <<'PY'
import datetime, glob, json, os, sys

mode, crawl, web_json, request_log = sys.argv[1:5]
start, end, delay = float(sys.argv[5]), float(sys.argv[6]), float(sys.argv[7])
ended = sys.argv[8] == "1"
web = json.load(open(web_json))
SLACK = 0.003  # the server's clock against the crawler's (ms rounding, scheduling)


def epoch(text):
    """Seconds since the epoch of an ISO 8601 UTC time (2026-11-23T04:27:02.123Z)."""
    for fmt in ("%Y-%m-%dT%H:%M:%S.%fZ", "%Y-%m-%dT%H:%M:%SZ"):
        try:
            t = datetime.datetime.strptime(text, fmt)
            return t.replace(tzinfo=datetime.timezone.utc).timestamp()
        except ValueError:
            pass
    raise ValueError(f"not an ISO 8601 UTC time: {text!r}")


def runs():
    out = []
    for d in sorted(glob.glob(os.path.join(crawl, "fetched", "*", ""))):
        path = os.path.join(d, "stats.json")
        if not os.path.exists(path):
            continue
        s = json.load(open(path))
        out.append({
            "id": os.path.basename(os.path.dirname(d)),
            "urls": s.get("segment_urls"),
            "started": epoch(s["started"]),
            "finished": epoch(s["finished"]),
            "startup": s.get("startup_seconds"),
            "stop": s.get("stop_reason", "?"),
        })
    return out


def crawl_log_pages():
    """(time, url) of every page fetched: an HTTP status, not robots.txt."""
    out = []
    for path in sorted(glob.glob(os.path.join(crawl, "fetched", "*", "crawl.log"))):
        for line in open(path, encoding="utf-8", errors="replace"):
            f = line.rstrip("\n").split("\t")
            if len(f) >= 7 and f[1].isdigit() and f[6] != "robots":
                out.append((epoch(f[0]), f[5]))
    return out


def politeness(delay_of, fetch_runs):
    """Pairs of requests to one host closer than its delay, from the log."""
    by_host = {}
    total = 0
    for line in open(request_log, encoding="utf-8", errors="replace"):
        f = line.rstrip("\n").split("\t")
        if len(f) < 5:
            continue
        by_host.setdefault(f[0], []).append((int(f[2]) / 1000, int(f[3]) / 1000, f[1]))
        total += 1
    bad, across, worst = 0, 0, None
    ends = [r["finished"] for r in fetch_runs]
    for host, reqs in by_host.items():
        reqs.sort()
        need = delay_of(host)
        last_end = None
        for s, e, target in reqs:
            if last_end is not None:
                gap = s - last_end
                if gap < need - SLACK:
                    bad += 1
                    if any(last_end <= t <= s for t in ends):
                        across += 1
                    if worst is None or gap < worst[0]:
                        worst = (gap, host, target, need)
            last_end = e if last_end is None else max(last_end, e)
    return total, bad, across, worst


def print_politeness(delay_of, fetch_runs):
    total, bad, across, worst = politeness(delay_of, fetch_runs)
    print(f"politeness       {bad} pairs of requests to one host closer than its delay "
          f"({total} requests in the server's log; {across} of the pairs across a round boundary)")
    if worst:
        gap, host, target, need = worst
        print(f"                 closest: {host}{target} {gap * 1000:.0f} ms after the previous "
              f"request ended (delay {need:g} s)")


def print_rounds(fetch_runs):
    print(f"rounds           {len(fetch_runs)}")
    if not fetch_runs:
        return
    has_startup = any(r["startup"] is not None for r in fetch_runs)
    head = "  round  URLs    fetch s   gap s"
    print(head + ("   startup s" if has_startup else ""))
    gaps = []
    for i, r in enumerate(fetch_runs):
        nxt = fetch_runs[i + 1] if i + 1 < len(fetch_runs) else None
        gap = nxt["started"] - r["finished"] if nxt else None
        if gap is not None:
            gaps.append(gap)
        line = (f"  {r['id']:<6} {r['urls'] if r['urls'] is not None else '?':>5} "
                f"{r['finished'] - r['started']:>10.2f} "
                f"{'' if gap is None else f'{gap:.2f}':>7}")
        if has_startup:
            line += f" {'-' if r['startup'] is None else format(r['startup'], '.2f'):>11}"
        if r["stop"] != "complete":
            line += f"   (stopped: {r['stop']})"
        print(line)
    if gaps:
        print(f"mean gap         {sum(gaps) / len(gaps):.2f} s over {len(gaps)} gaps "
              "(end of one fetch to the start of the next: segmenter, crawl.sh, fetcher start)")
    if has_startup:
        ups = [r["startup"] for r in fetch_runs if r["startup"] is not None]
        print(f"mean startup     {sum(ups) / len(ups):.2f} s (fetcher loading before its first request)")


wall = end - start
fetch_runs = runs()
if mode == "floor":
    hosts = {h["name"]: h for h in web["per_host"]}
    delay_of = lambda h: max(delay, (hosts.get(h) or {}).get("crawl_delay") or 0)
    floor = max(h["requests"] * delay_of(h["name"]) for h in web["per_host"])
    setter = max(web["per_host"], key=lambda h: h["requests"] * delay_of(h["name"]))
    target = 1.3 * floor + 10
    fetched = {u for _, u in crawl_log_pages()}
    ok = ended and wall <= target
    print(f"wall time        {wall:.1f} s (scripts/crawl.sh, seeds to its end)")
    print(f"floor F          {floor:.1f} s ({setter['name']}: {setter['requests']} requests "
          f"x {delay_of(setter['name']):g} s)")
    print(f"wall/F           {wall / floor:.2f}")
    print(f"target: wall <= 1.3 x F + 10 s = {target:.1f} s: {'PASS' if ok else 'FAIL'}"
          + ("" if ended else " (the crawl did not end by itself)"))
    print(f"pages            {len(fetched)} fetched of {web['total_pages']} a correct crawl fetches")
    print_rounds(fetch_runs)
    print_politeness(delay_of, fetch_runs)
else:
    seconds = float(sys.argv[9])
    expected = {f["url"] for f in web["fetch"]}
    hosts = {h["name"]: h for h in web["hosts"]}
    delay_of = lambda h: max(delay, (hosts.get(h) or {}).get("crawl_delay") or 0)
    pages = crawl_log_pages()
    in_time = {u for t, u in pages if t <= start + seconds and u in expected}
    all_fetched = {u for _, u in pages}
    stray = all_fetched - expected
    recall = len(in_time) / len(expected)
    ceiling = sum(min(h["fetch"], seconds / delay_of(h["name"])) for h in web["hosts"]) / len(expected)
    print(f"crawl time       {seconds:.0f} s allowed, {wall:.1f} s until crawl.sh ended"
          + ("" if not ended else " (the crawl ended by itself)"))
    print(f"pages            {len(in_time)} of the {len(expected)} a correct crawl fetches, within "
          f"{seconds:.0f} s ({len(all_fetched)} pages in all, {len(stray)} a correct crawl does not fetch)")
    print(f"recall           {recall:.3f}")
    print(f"ceiling          {ceiling:.3f} (sum over hosts of min(pages, T / delay) / pages; "
          f"delay = max({delay:g} s, Crawl-delay))")
    print(f"recall/ceiling   {recall / ceiling:.3f}")
    print_rounds(fetch_runs)
    print_politeness(delay_of, fetch_runs)
PY
}

if [ "$mode" = floor ]; then
    args=(rounds-web --seed "$seed" --large-pages "$large_pages" --small-hosts "$small_hosts"
        --seeds-out "$work/seeds.txt" --hosts-out "$work/hosts" --describe-out "$work/web.json")
    [ "$tail" = 0 ] || args+=(--tail)
    [ -z "$crawl_delay" ] || args+=(--crawl-delay "$crawl_delay")
    start_server "${args[@]}"
    floor=$(python3 - "$work/web.json" "$delay" <<'PY'
import json, sys
web = json.load(open(sys.argv[1]))
d = float(sys.argv[2])
print(max(h["requests"] * max(d, h["crawl_delay"] or 0) for h in web["per_host"]))
PY
)
    [ -n "$timeout" ] || timeout=$(awk -v f="$floor" 'BEGIN { printf "%d", 5 * f + 300 }')
    write_toml benchbot 'connect_timeout = "2s"' 'first_byte_timeout = "2s"' 'download_timeout = "10s"'
    python3 - "$work/web.json" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))
print(f"mode floor: the rounds web (seed {w['seed']}{', with its tail' if w['tail'] else ''}): "
      f"{w['hosts']} hosts, {w['total_pages']} pages to fetch, {w['max_depth']} links deep; "
      f"the largest host {w['largest_host']} has {w['largest_host_requests']} requests")
PY
    echo "crawling with scripts/crawl.sh until the crawl ends (at most ${timeout} s), min_delay ${delay} s:"
else
    args=(serve --seed "$seed" --seeds-out "$work/seeds.txt" --hosts-out "$work/hosts")
    [ -z "$crawl_delay" ] || args+=(--crawl-delay "$crawl_delay")
    start_server "${args[@]}"
    "$bin/demo-web" describe --json --seed "$seed" --port "$port" \
        ${crawl_delay:+--crawl-delay "$crawl_delay"} >"$work/web.json"
    timeout=$seconds
    write_toml demobot
    python3 - "$work/web.json" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))
print(f"mode recall: the demo web (seed {w['seed']}): {len(w['hosts'])} hosts, "
      f"{len(w['fetch'])} URLs a correct crawl fetches")
PY
    echo "crawling with scripts/crawl.sh for ${seconds} s, min_delay ${delay} s:"
fi

start_crawl
ended=1
await_crawl "$timeout" || ended=0
if [ "$ended" = 0 ]; then
    [ "$mode" = recall ] || echo "  (stopped after ${timeout} s: the crawl did not end by itself)"
    stop_crawl
fi
crawl_end=$(date +%s.%N)
rc=0
[ -z "$crawl_pid" ] || { wait "$crawl_pid" 2>/dev/null || rc=$?; }
crawl_pid=""
stop_server
if [ "$ended" = 1 ] && [ "$rc" != 0 ]; then
    echo "$prog: scripts/crawl.sh exited with code $rc:" >&2
    tail -n 20 "$work/crawl.out" | sed 's/^/  /' >&2
    exit 1
fi
grep -v '^round ' "$work/crawl.out" | tail -n 2 | sed 's/^/  /'
echo
report "$mode" "$crawl" "$work/web.json" "$work/requests.tsv" "$crawl_start" "$crawl_end" \
    "$delay" "$ended" "$seconds"
