#!/usr/bin/env bash
# bench-order.sh: what is fetched first. Crawls the scale web with a page
# budget, once with [segmenter] order = "discovery" and once with
# order = "score", and prints the share of the web's PageRank that the
# pages each crawl fetched hold.
#
#   scripts/bench-order.sh [OPTIONS]
#
# Serves the scale web (scale-web serve: HOSTS hosts x PAGES pages, links
# skewed towards a few hubs and the first pages of each host, with a long
# tail; one loopback address per host, names from a hosts file: no name
# server is asked), known in full to the benchmark (scale-web pagerank
# computes the PageRank of everything a correct crawl fetches). For each
# budget (10 % and 25 % of the web's URLs by default) and each order, a
# crawl with scripts/crawl.sh from the web's seeds, with max_crawl_pages =
# the budget and max_per_host = PER_HOST, to its end (the budget spent).
# Then prints one line per budget: the pages fetched and the PageRank share
# under discovery and under score, their ratio, the best share any crawl
# of that many pages could have (the pages highest by PageRank: what
# bounds the ratio on this web), and the targets:
#   - at the first budget (10 %): score >= 1.5 x discovery;
#   - at every budget: score >= discovery.
#
# Options (or the environment variable in capitals):
#   --hosts N        HOSTS: hosts of the web (default 200)
#   --pages N        PAGES: pages per host (default 50)
#   --budgets LIST   BUDGETS: page budgets in % of the web's URLs,
#                    comma-separated (default 10,25)
#   --per-host N     PER_HOST: the segmenter's max_per_host (default 2)
#   --pace SHARE     PACE: the segmenter's budget_pace, the share of what is
#                    left of the budget a round of the score crawl may
#                    schedule (default: the segmenter's, 0.5)
#   --seed N         SEED: which web (default 1)
#   --timeout S      TIMEOUT: the most one crawl may take (default 1800)
#   --bin DIR        use the fetcher, segmenter and scale-web in DIR
#                    instead of building them (release)
#   --work DIR       work there (created; kept) instead of a temporary
#                    directory removed at the end
#   --keep           keep the temporary work directory (its path is printed)
#
# The script exits 1 when a crawl is wrong (it did not end, a fetched URL is
# not of the web, a URL was fetched twice, more URLs than the budget were
# fetched), never for a figure: a figure beside its target says PASS or
# FAIL. It writes summary.json in the work directory (what the tests read).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/bench-lib.sh
. "$root/scripts/bench-lib.sh"

prog=bench-order.sh
hosts=${HOSTS:-200}
pages=${PAGES:-50}
budgets=${BUDGETS:-10,25}
per_host=${PER_HOST:-2}
seed=${SEED:-1}
timeout=${TIMEOUT:-1800}
pace=${PACE:-}
bin="" work="" keep=0

while [ $# -gt 0 ]; do
    case "$1" in
        -h|--help) usage; exit 0 ;;
        --hosts) need "$1" $#; whole "$1" "$2"; hosts=$2; shift 2 ;;
        --pages) need "$1" $#; whole "$1" "$2"; pages=$2; shift 2 ;;
        --budgets) need "$1" $#; budgets=$2; shift 2 ;;
        --per-host) need "$1" $#; whole "$1" "$2"; per_host=$2; shift 2 ;;
        --seed) need "$1" $#; whole "$1" "$2"; seed=$2; shift 2 ;;
        --pace) need "$1" $#; pace=$2; shift 2 ;;
        --timeout) need "$1" $#; whole "$1" "$2"; timeout=$2; shift 2 ;;
        --bin) need "$1" $#; bin=$2; shift 2 ;;
        --work) need "$1" $#; work=$2; shift 2 ;;
        --keep) keep=1; shift ;;
        *) die "unknown argument '$1' (try --help)" ;;
    esac
done
for v in hosts pages per_host seed timeout; do whole "--${v//_/-}" "${!v}"; done
[ "$hosts" -ge 2 ] && [ "$pages" -ge 1 ] && [ "$per_host" -ge 1 ] ||
    die "--hosts must be at least 2, --pages and --per-host at least 1"
[[ "$budgets" =~ ^[0-9]+(,[0-9]+)*$ ]] || die "--budgets takes percentages separated by commas, not '$budgets'"
[ -z "$pace" ] || [[ "$pace" =~ ^(0?\.[0-9]+|1(\.0*)?)$ ]] || die "--pace takes a share above 0 and at most 1, not '$pace'"
command -v python3 >/dev/null 2>&1 || die "python3 is needed for the figures"
pace_args=()
[ -z "$pace" ] || pace_args=(--segmenter-arg "--budget-pace=$pace")
# Loopback only: no proxy from the environment.
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

bin=$(bench_bin_dir "$root" "$bin" fetcher segmenter scale-web) || exit $?
bench_work_dir bench-order
server_pid="" driver_pid="" driving=""

cleanup() {
    stop_driver
    stop_pid "$server_pid"
    if [ "$temporary" = 1 ] && [ "$keep" = 0 ]; then
        rm -rf "$work"
    else
        echo "work directory kept: $work"
    fi
}
trap cleanup EXIT
trap 'echo "$prog: interrupted" >&2; exit 130' INT TERM HUP

# --- The web. -------------------------------------------------------------
web_args=(--seed "$seed" --hosts "$hosts" --pages "$pages")
serve_scale_web "$bin" "$work" "${web_args[@]}"
"$bin/scale-web" describe "${web_args[@]}" --port "$port" >"$work/web.json"
web_urls=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["expected"]["urls"])' "$work/web.json")
load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "$prog: the scale web (seed $seed): $hosts hosts x $pages pages on loopback port $port," \
    "$web_urls URLs a correct crawl fetches; max_per_host $per_host; budget_pace ${pace:-default}; $(nproc) CPUs, load average $(load)"

# Crawls with order $1 and a budget of $2 URLs, into $work/$1-$2; prints
# the URLs it fetched (HTTP status, robots.txt left out) into NAME.urls.
crawl() {
    local order=$1 budget=$2 name=$1-$2 start rc=0
    local dir=$work/$name
    mkdir -p "$dir"
    {
        scale_crawl_toml "$work/hosts" 0 0
        printf '\n[segmenter]\nmax_per_host = %s\nmax_crawl_pages = %s\norder = "%s"\n' \
            "$per_host" "$budget" "$order"
    } >"$dir/crawl.toml"
    start=$(date +%s)
    driving=$dir
    "$root/scripts/crawl.sh" "$dir" --seeds "$work/seeds.txt" --bin "$bin" "${pace_args[@]}" \
        </dev/null >"$work/$name.out" 2>"$work/$name.err" &
    driver_pid=$!
    while kill -0 "$driver_pid" 2>/dev/null; do
        if [ $(( $(date +%s) - start )) -ge "$timeout" ]; then
            echo "$prog: $name: no end after $timeout s; stopping it (STOP file)" >&2
            stop_driver
            kill "$driver_pid" 2>/dev/null || true
            wait "$driver_pid" 2>/dev/null || true
            echo "$prog: $name did not end: no figures" >&2
            exit 1
        fi
        sleep 0.2
    done
    wait "$driver_pid" || rc=$?
    driver_pid="" driving=""
    [ "$rc" = 0 ] || { echo "$prog: $name: crawl.sh exited $rc:" >&2; tail -n 5 "$work/$name.err" >&2; exit 1; }
    fetched_urls "$dir" >"$work/$name.urls"
    echo "$(( $(date +%s) - start ))" >"$work/$name.seconds"
    "$bin/segmenter" status "$dir" --json >"$work/$name.status.json"
    find "$dir" -name '*.warc.gz' -delete
    printf '  %-16s %6d URLs fetched in %s s, %s rounds\n' "$name" "$(wc -l <"$work/$name.urls")" \
        "$(cat "$work/$name.seconds")" "$(grep -c '^round ' "$work/$name.out" || true)"
}

IFS=, read -r -a percents <<<"$budgets"
for pct in "${percents[@]}"; do
    budget=$(( web_urls * pct / 100 ))
    [ "$budget" -ge 1 ] || budget=1
    echo "budget $pct %: $budget URLs (load average $(load))"
    for order in discovery score; do
        crawl "$order" "$budget"
        "$bin/scale-web" pagerank "${web_args[@]}" --port "$port" \
            --fetched "$work/$order-$budget.urls" >"$work/$order-$budget.share"
    done
    # The best any crawl of as many pages could do.
    most=$(wc -l "$work"/{discovery,score}-"$budget".urls | awk '$2 != "total" && $1 > m { m = $1 } END { print m + 0 }')
    "$bin/scale-web" pagerank "${web_args[@]}" --port "$port" --top "$most" |
        awk -F'\t' '{ s += $2 } END { printf "%.6f %d\n", s, NR }' >"$work/best-$budget.share"
done

# --- The figures. ---------------------------------------------------------
python3 - "$work" "$budgets" "$web_urls" <<'PY'
import json, sys

work, budgets, web_urls = sys.argv[1], sys.argv[2], int(sys.argv[3])
rows, wrong = [], []
for i, pct in enumerate(int(p) for p in budgets.split(",")):
    budget = max(1, web_urls * pct // 100)
    row = {"percent": pct, "budget": budget}
    for order in ("discovery", "score"):
        name = "%s-%d" % (order, budget)
        urls = [u for u in open("%s/%s.urls" % (work, name)).read().split("\n") if u]
        share, matched, read = open("%s/%s.share" % (work, name)).read().split()
        if len(set(urls)) != len(urls):
            wrong.append("%s: %d URLs fetched twice" % (name, len(urls) - len(set(urls))))
        if int(matched) != int(read):
            wrong.append("%s: %d fetched URLs are not of the web" % (name, int(read) - int(matched)))
        if len(urls) > budget:
            wrong.append("%s: %d URLs fetched, over the budget of %d" % (name, len(urls), budget))
        row[order] = {"share": float(share), "fetched": len(urls),
                      "seconds": int(open("%s/%s.seconds" % (work, name)).read())}
    best, pages = open("%s/best-%d.share" % (work, budget)).read().split()
    row["best"] = {"share": float(best), "pages": int(pages)}
    d, s = row["discovery"]["share"], row["score"]["share"]
    row["ratio"] = s / d if d > 0 else None
    row["best_ratio"] = float(best) / d if d > 0 else None
    row["first"] = i == 0
    rows.append(row)

print("PageRank share of the pages fetched (of the web's %d URLs):" % web_urls)
print("  %-8s %-8s %-24s %-24s %-7s %-24s %s" % ("budget", "URLs", "discovery", "score", "ratio",
                                              "best possible (ratio)", "target"))
targets = []
for r in rows:
    d, s = r["discovery"], r["score"]
    ratio = r["ratio"]
    if r["first"]:
        ok = ratio is not None and ratio >= 1.5
        target = "score >= 1.5 x discovery: %s" % ("PASS" if ok else "FAIL")
    else:
        ok = s["share"] >= d["share"]
        target = "score >= discovery: %s" % ("PASS" if ok else "FAIL")
    if r["first"] and s["share"] < d["share"]:
        target += "; score >= discovery: FAIL"
    targets.append(ok)
    best = "%.4f (%s)" % (r["best"]["share"],
                          "-" if r["best_ratio"] is None else "%.2f" % r["best_ratio"])
    print("  %-8s %-8d %-24s %-24s %-7s %-24s %s" % (
        "%d %%" % r["percent"], r["budget"],
        "%.4f (%d pages)" % (d["share"], d["fetched"]),
        "%.4f (%d pages)" % (s["share"], s["fetched"]),
        "-" if ratio is None else "%.2f" % ratio, best, target))
json.dump({"web_urls": web_urls, "rows": rows, "wrong": wrong},
          open("%s/summary.json" % work, "w"), indent=1)
for w in wrong:
    print("WRONG: " + w)
sys.exit(1 if wrong else 0)
PY
