#!/usr/bin/env bash
# bench-scale.sh: the whole crawl cycle at scale, round after round, on a web
# that has to be discovered: what each step costs per round, and what grows
# with the crawl's age rather than with the round's work.
#
#   scripts/bench-scale.sh [OPTIONS]
#
# Serves the scale web (scale-web serve: HOSTS hosts x PAGES pages of about
# 4 KB, links computed from each URL, skewed towards a few hubs with a long
# tail, redirects, 404s, robots.txt variants, a slow host; one loopback
# address per host, names from a hosts file: no name server is asked) and
# crawls it from its three seeds to the end:
#   one     scripts/crawl.sh on one crawl directory;
#   shards  SHARDS shards under the Slurm driver (scripts/slurm/crawl.sh) on
#           the Slurm named by SLURM_CONF, else on a single-node Slurm this
#           script starts (scripts/slurm/testbed.sh, as root), else skipped;
#   ref     the reference: fetcher fetch alone over the URLs the one-machine
#           crawl fetched, listed in one segment.
# Every fetcher and segmenter run goes through a wrapper that records its
# wall time, CPU, peak RSS and I/O; after each round the crawl directory's
# bytes are counted (WARC, index, state, logs). Then prints, for each crawl,
# one line per round (pages; wall, CPU and peak RSS of fetch, segment or
# map and reduce, report; the other steps' CPU; bytes per page so far) and
# the totals, and each figure beside its target:
#   - the whole one-machine crawl within 1.3 x the fetcher alone (wall);
#   - segmenter report and segmenter status on the finished crawl < 10 s;
#   - the server's counts: URLs asked twice, robots.txt asked twice,
#     disallowed URLs asked, politeness violations (overlaps, and requests
#     closer than the delay): 0;
#   - SHARDS shards against one machine: the same URLs, total CPU <= 1.15 x;
#   - the segmenter's share of a round, from the first full round (at least
#     90 % of PER_ROUND pages) to the last: <= 1.5 x;
#   - peak RSS of every step <= 512 MB;
# and what grows with the crawl's age: each step's CPU and bytes written
# per page in the first and last full rounds, and the state files rewritten
# whole each round with their sizes.
#
# Options (or the environment variable in capitals):
#   --hosts N       HOSTS: hosts of the web (default 10000)
#   --pages N       PAGES: pages per host (default 100)
#   --per-round N   PER_ROUND: pages a round holds at most, by the
#                   segmenter's max_per_host = N / HOSTS (default 100000)
#   --delay S       DELAY: the crawl's min_delay in seconds (default 0)
#   --tail-share X  TAIL_SHARE: the fetcher's tail_share (default 0: every
#                   round fetched whole; see below)
#   --shards S      SHARDS: shards of the Slurm crawl; 0 skips it (default 4)
#   --seed N        SEED: which web (default 1)
#   --timeout S     TIMEOUT: the most one crawl may take (default 7200)
#   --bin DIR       use the fetcher, segmenter, scale-web and run-meter in
#                   DIR instead of building them (release)
#   --work DIR      work there (created; kept) instead of a temporary
#                   directory removed at the end
#   --keep          keep the temporary work directory (its path is printed)
#   --keep-warc     keep each crawl's WARC files (by default they are
#                   removed once the crawl is measured: a crawl of
#                   1,000,000 pages holds about 3.5 GB of them)
#
# tail_share is 0 by default: at min_delay 0 a host's pace is one request
# per response time, so the hosts done early (answered in a millisecond,
# before the fetcher's crew grew) outweigh thousands of hosts with work
# whose answers the crawler's own 1,024 requests in flight have slowed,
# and the fetcher's tail rule ends rounds after a tenth of their URLs
# (measured: rounds of 100,000 URLs ended after 5 s with 8,000 fetched,
# and every round of the 4 shards so). The benchmark measures whole
# rounds; --tail-share 0.25 (the fetcher's default) shows the rule.
#
# The script exits 1 when a crawl is wrong (it did not end; the server
# counted a fault; a URL a correct crawl fetches was not fetched, or one was
# fetched that it does not, or one twice; the shards fetched other URLs than
# one machine), never for a figure: a figure beside its target says PASS or
# FAIL. It writes summary.json in the work directory (what the tests read).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=scripts/bench-lib.sh
. "$root/scripts/bench-lib.sh"

prog=bench-scale.sh
hosts=${HOSTS:-10000}
pages=${PAGES:-100}
per_round=${PER_ROUND:-100000}
delay=${DELAY:-0}
tail_share=${TAIL_SHARE:-0}
shards=${SHARDS:-4}
seed=${SEED:-1}
timeout=${TIMEOUT:-7200}
bin="" work="" keep=0 keep_warc=0

while [ $# -gt 0 ]; do
    case "$1" in
        -h|--help) usage; exit 0 ;;
        --hosts) need "$1" $#; whole "$1" "$2"; hosts=$2; shift 2 ;;
        --pages) need "$1" $#; whole "$1" "$2"; pages=$2; shift 2 ;;
        --per-round) need "$1" $#; whole "$1" "$2"; per_round=$2; shift 2 ;;
        --delay) need "$1" $#; [[ "$2" =~ ^[0-9]+([.][0-9]+)?$ ]] || die "--delay takes seconds"; delay=$2; shift 2 ;;
        --tail-share) need "$1" $#; [[ "$2" =~ ^[0-9]+([.][0-9]+)?$ ]] || die "--tail-share takes a number"; tail_share=$2; shift 2 ;;
        --shards) need "$1" $#; whole "$1" "$2"; shards=$2; shift 2 ;;
        --seed) need "$1" $#; whole "$1" "$2"; seed=$2; shift 2 ;;
        --timeout) need "$1" $#; whole "$1" "$2"; timeout=$2; shift 2 ;;
        --bin) need "$1" $#; bin=$2; shift 2 ;;
        --work) need "$1" $#; work=$2; shift 2 ;;
        --keep) keep=1; shift ;;
        --keep-warc) keep_warc=1; shift ;;
        *) die "unknown argument '$1' (try --help)" ;;
    esac
done
for v in hosts pages per_round shards seed timeout; do whole "--${v//_/-}" "${!v}"; done
[ "$hosts" -ge 1 ] && [ "$pages" -ge 1 ] || die "--hosts and --pages must be at least 1"
[ "$shards" -ne 1 ] || die "--shards 1 is the one-machine crawl: give 0 (skip) or 2 and more"
command -v python3 >/dev/null 2>&1 || die "python3 is needed for the measurements"
# Loopback only: no proxy from the environment.
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY
# 10,000 listeners and the connections of up to four fetchers.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

bin=$(bench_bin_dir "$root" "$bin" fetcher segmenter scale-web run-meter) || exit $?
bench_work_dir bench-scale
server_pid="" slurm_dir="" driver_pid="" driving=""

cleanup() {
    stop_driver
    stop_pid "$server_pid"
    if [ -n "$slurm_dir" ]; then
        SLURM_CONF="$slurm_dir/slurm.conf" scancel --name crawl-fetch >/dev/null 2>&1 || true
        SLURM_CONF="$slurm_dir/slurm.conf" scancel --name crawl-reduce >/dev/null 2>&1 || true
        bash "$root/scripts/slurm/testbed.sh" stop "$slurm_dir" || true
    fi
    if [ "$temporary" = 1 ] && [ "$keep" = 0 ]; then
        rm -rf "$work"
    else
        echo "work directory kept: $work"
    fi
}
trap cleanup EXIT
trap 'echo "$prog: interrupted" >&2; exit 130' INT TERM HUP

# --- Every fetcher and segmenter run, measured. --------------------------
# $work/bin/NAME runs $bin/NAME through run-meter, which appends one JSON
# line to steps.jsonl: the program, its arguments, start and end, user and
# system CPU, peak RSS and its I/O (/proc/PID/io). It starts in about a
# millisecond, passes signals on and exits with the program's code.
mkdir -p "$work/bin"
for b in fetcher segmenter; do
    printf '#!/bin/sh\nexec "%s" "%s" "%s" "$@"\n' "$bin/run-meter" "$work/steps.jsonl" "$bin/$b" >"$work/bin/$b"
    chmod +x "$work/bin/$b"
done

# --- Counting a crawl directory's bytes (after each round). --------------
cat >"$work/snapshot.py" <<'PY'
"""Appends to OUT one JSON line: the time, the bytes of CRAWL by kind
(warc, index, state, logs) and, for each state file, its size, inode and
mtime (to see which are rewritten whole each round)."""
import json, os, sys, time

crawl, out = sys.argv[1], sys.argv[2]
kinds = {"warc": 0, "index": 0, "state": 0, "logs": 0}
state = {}
for top, dirs, files in os.walk(crawl):
    for name in files:
        path = os.path.join(top, name)
        rel = os.path.relpath(path, crawl)
        try:
            st = os.stat(path)
        except OSError:
            continue
        parts = rel.split(os.sep)
        if name.endswith((".warc.gz", ".warc.zst", ".warc")):
            kind = "warc"
        elif name.endswith(".cdxj"):
            kind = "index"
        elif (parts[0] in ("logs", "slurm", "contacts") or name in ("crawl.log", "stats.json", "report.html")
              or name.startswith("crawl.log.")):
            kind = "logs"
        else:
            kind = "state"
        kinds[kind] += st.st_size
        if kind == "state":
            state[rel] = [st.st_size, st.st_ino, st.st_mtime_ns]
with open(out, "a") as f:
    f.write(json.dumps({"t": time.time(), "bytes": kinds, "state": state}) + "\n")
PY

# --- The web. -------------------------------------------------------------
web_args=(--seed "$seed" --hosts "$hosts" --pages "$pages")
serve_scale_web "$bin" "$work" "${web_args[@]}" --min-delay "$delay" --tally-out "$work/tally.json"
"$bin/scale-web" describe "${web_args[@]}" --port "$port" >"$work/web.json"
"$bin/scale-web" describe "${web_args[@]}" --port "$port" --urls | cut -f1 >"$work/expected.txt"

# The server's counts since the last call, into $1 (counting starts afresh).
take_tally() {
    rm -f "$work/tally.json"
    kill -USR1 "$server_pid"
    for _ in $(seq 300); do [ -e "$work/tally.json" ] && break; sleep 0.1; done
    [ -e "$work/tally.json" ] || { echo "$prog: scale-web wrote no counts" >&2; exit 1; }
    mv "$work/tally.json" "$1"
}

max_per_host=$(( per_round / hosts ))
[ "$max_per_host" -ge 1 ] || max_per_host=1
# crawl.toml of a crawl directory $1.
write_toml() {
    mkdir -p "$1"
    {
        scale_crawl_toml "$work/hosts" "$delay" "$tail_share"
        printf '\n[segmenter]\nmax_per_host = %s\n' "$max_per_host"
    } >"$1/crawl.toml"
}

load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "$prog: the scale web (seed $seed): $hosts hosts x $pages pages on loopback port $port;" \
    "$(python3 -c 'import json, sys
e = json.load(open(sys.argv[1]))["expected"]
print("%(urls)d URLs a correct crawl fetches (%(pages)d pages, %(redirects)d redirects, %(gone)d 404s), %(max_hops)d hops deep" % e)' "$work/web.json")"
echo "$prog: min_delay ${delay}s, tail_share $tail_share, max_per_host $max_per_host (rounds of $per_round pages at most); $(nproc) CPUs, load average $(load)"

# Runs a driver ($2...) for crawl $1 (its name under $work), each stdout
# line timestamped onto NAME.out; after each round line, the crawl
# directory is counted. At most $timeout seconds (then a STOP file ends
# it); returns the driver's exit code, 124 if it was stopped.
run_driver() {
    local name=$1 start
    shift
    start=$(date +%s)
    driving=$work/$name
    # The snapshot runs beside the loop (one at a time, in order), so that
    # the next lines are timestamped when they come.
    { "$@" </dev/null 2>"$work/$name.err"; echo $? >"$work/$name.rc"; } | {
        while IFS= read -r line; do
            printf '%s\t%s\n' "$EPOCHREALTIME" "$line" >>"$work/$name.out"
            case "$line" in
                "round "*)
                    [ -z "${snap:-}" ] || wait "$snap"
                    python3 "$work/snapshot.py" "$driving" "$work/$name.disk.jsonl" &
                    snap=$!
                    printf '  %s\n' "${line:0:150}" ;;
            esac
        done
        wait
    } &
    driver_pid=$!
    while kill -0 "$driver_pid" 2>/dev/null; do
        if [ $(( $(date +%s) - start )) -ge "$timeout" ]; then
            echo "$prog: $name: no end after $timeout s; stopping it (STOP file)" >&2
            stop_driver
            echo 124 >"$work/$name.rc"
            break
        fi
        sleep 0.5
    done
    wait "$driver_pid" 2>/dev/null || true
    driver_pid="" driving=""
    tail -n 3 "$work/$name.err" | sed 's/^/    /'
    return "$(cat "$work/$name.rc" 2>/dev/null || echo 1)"
}

# Times segmenter report and status on a finished crawl (through the
# wrapper: their lines in steps.jsonl are tagged by the crawl's path).
final_reads() {
    echo "$EPOCHREALTIME" >"$work/$1.final_start"
    "$work/bin/segmenter" report "$work/$1" >/dev/null 2>&1 || echo "$prog: segmenter report $1 failed" >&2
    "$work/bin/segmenter" status "$work/$1" >/dev/null 2>&1 || echo "$prog: segmenter status $1 failed" >&2
    python3 "$work/snapshot.py" "$work/$1" "$work/$1.final.jsonl"
}

# Removes a measured crawl's WARC files, unless --keep-warc.
drop_warc() {
    [ "$keep_warc" = 0 ] || return 0
    find "$work/$1" -name '*.warc.gz' -delete
}

# --- One machine. ---------------------------------------------------------
echo "one machine: scripts/crawl.sh (load average $(load))"
write_toml "$work/one"
one_rc=0
: >"$work/one.out"
run_driver one "$root/scripts/crawl.sh" "$work/one" --seeds "$work/seeds.txt" --bin "$work/bin" || one_rc=$?
take_tally "$work/one.tally.json"
final_reads one
# What it fetched: every URL with an HTTP status, robots.txt left out.
fetched_urls "$work/one" >"$work/one.urls"
drop_warc one

# --- Shards under Slurm. --------------------------------------------------
shards_rc=skipped
if [ "$shards" -gt 1 ]; then
    conf=${SLURM_CONF:-}
    if [ -z "$conf" ] || [ ! -f "$conf" ]; then
        conf=""
        if [ "$(id -u)" = 0 ] && { command -v slurmctld >/dev/null 2>&1 || [ -x /usr/sbin/slurmctld ]; }; then
            slurm_dir=$work/slurm-testbed
            if bash "$root/scripts/slurm/testbed.sh" start "$slurm_dir" >/dev/null; then
                conf=$slurm_dir/slurm.conf
            else
                echo "$prog: the single-node Slurm did not start (logs in $slurm_dir/log/)" >&2
            fi
        fi
    fi
    if [ -n "$conf" ]; then
        export SLURM_CONF=$conf
        echo "$shards shards: scripts/slurm/crawl.sh on the Slurm of $conf (load average $(load))"
        write_toml "$work/shards"
        "$work/bin/segmenter" inject "$work/shards" "$work/seeds.txt" --shards "$shards" >/dev/null 2>"$work/shards.inject.err" ||
            { cat "$work/shards.inject.err" >&2; exit 1; }
        : >"$work/shards.out"
        # A round that fails (a task cancelled: another user's scancel of
        # the same job name on a shared test Slurm) is what the driver's
        # rerun is for: as an operator would, run it again (at most twice).
        for attempt in 1 2 3; do
            shards_rc=0
            run_driver shards "$root/scripts/slurm/crawl.sh" "$work/shards" --bin "$work/bin" || shards_rc=$?
            [ "$shards_rc" = 1 ] && [ "$attempt" -lt 3 ] || break
            echo "  the driver failed a round (attempt $attempt): running it again"
        done
        take_tally "$work/shards.tally.json"
        final_reads shards
        fetched_urls "$work/shards" >"$work/shards.urls"
        drop_warc shards
    else
        echo "$shards shards: skipped (no Slurm: set SLURM_CONF, or run as root where Debian's slurmctld, slurmd, slurm-client and munge are installed)"
    fi
fi

# --- The reference: the fetcher alone over the same URLs, one segment. ---
echo "reference: fetcher fetch over the $(wc -l <"$work/one.urls") URLs the one-machine crawl fetched, in one segment (load average $(load))"
write_toml "$work/ref"
sort -u "$work/one.urls" >"$work/ref.seeds"
"$bin/segmenter" inject "$work/ref" "$work/ref.seeds" --max-per-host 100000000 \
    --max-segment-size 100000000 --progress none >/dev/null 2>"$work/ref.inject.err" ||
    { cat "$work/ref.inject.err" >&2; exit 1; }
ref_start=$EPOCHREALTIME
# (--tail-share 0: the slow host's URLs too, however long they take.)
"$work/bin/fetcher" fetch "$work/ref" --progress none --tail-share 0 2>"$work/ref.err" >/dev/null ||
    { echo "$prog: the reference fetch failed:" >&2; tail -n 5 "$work/ref.err" >&2; exit 1; }
ref_end=$EPOCHREALTIME
take_tally "$work/ref.tally.json"
python3 "$work/snapshot.py" "$work/ref" "$work/ref.final.jsonl"
drop_warc ref

# --- The figures. ---------------------------------------------------------
python3 - "$work" "$one_rc" "$shards_rc" "$ref_start" "$ref_end" "$per_round" <<'PY'
import datetime, glob, json, os, sys

work, rcs = sys.argv[1], {"one": sys.argv[2], "shards": sys.argv[3]}
ref_start, ref_end, per_round = float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
MB = 1024 * 1024
STEPS = [json.loads(line) for line in open(os.path.join(work, "steps.jsonl"))]
EXPECTED = set(line.strip() for line in open(os.path.join(work, "expected.txt")) if line.strip())
problems = []
summary = {"web": json.load(open(os.path.join(work, "web.json")))["expected"], "crawls": {}}


def path(*names):
    return os.path.join(work, *names)


def epoch(text):
    t = datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ")
    return t.replace(tzinfo=datetime.timezone.utc).timestamp()


def kind(s):
    """fetch, segment (run), map, reduce, report, status, or other."""
    sub = s["args"][0] if s["args"] else ""
    if s["prog"] == "fetcher":
        return "fetch" if sub == "fetch" else "other"
    if sub in ("map", "reduce", "report", "status"):
        return sub
    return "segment" if sub == "run" else "other"


def crawl_of(s):
    return os.path.basename(os.path.normpath(s["args"][1])) if len(s["args"]) > 1 else ""


def cpu(s):
    return s["utime"] + s["stime"]


def crawl_log(name):
    """(time, url) of each crawl-log line with an HTTP status, robots.txt
    left out."""
    out = []
    for p in glob.glob(path(name, "**", "crawl.log"), recursive=True):
        for line in open(p, encoding="utf-8", errors="replace"):
            f = line.rstrip("\n").split("\t")
            if len(f) >= 7 and f[1].isdigit() and f[6] != "robots":
                out.append((epoch(f[0]), f[5]))
    return out


def jsonl(p):
    return [json.loads(line) for line in open(p)] if os.path.exists(p) else []


def fig(ss):
    """(wall from the first start to the last end, CPU, peak RSS MB) of runs."""
    if not ss:
        return None
    wall = max(s["end"] for s in ss) - min(s["start"] for s in ss)
    return wall, sum(cpu(s) for s in ss), max(s["maxrss_kb"] for s in ss) / 1024


def busy(runs, lo, hi):
    """Seconds of [lo, hi] during which at least one of `runs` ran."""
    total, reach = 0.0, lo
    for a, b in sorted((max(s["start"], lo), min(s["end"], hi)) for s in runs):
        if b > reach:
            total += b - max(a, reach)
            reach = b
    return total


def round_ends(name):
    """When each round ended: from the round journal where the driver keeps
    one (crawl.sh: written before its round line, so before the round's
    report starts), else when the driver printed its round line."""
    journal = path(name, "rounds.v1.tsv")
    if os.path.exists(journal):
        head, *rows = [line.rstrip("\n").split("\t") for line in open(journal)]
        ended = head.index("ended")
        return [epoch(r[ended]) for r in rows if len(r) > ended]
    return [float(line.split("\t", 1)[0]) for line in open(path(name + ".out"))
            if line.split("\t", 1)[1].startswith("round ")]


def analyse(name):
    """The crawl's rounds: its runs, pages and bytes on disk per round."""
    ends = round_ends(name)
    final_at = float(open(path(name + ".final_start")).read())
    runs = [s for s in STEPS if crawl_of(s) == name]
    if not ends:
        ends = [final_at]
    rounds = [{"steps": {}, "pages": 0} for _ in ends]
    final = {}
    for s in runs:
        k = kind(s)
        if s["start"] >= final_at:
            final[k] = s
            continue
        if k == "report":  # crawl.sh rebuilds the report after the round's line
            r = max([i for i, t in enumerate(ends) if t <= s["start"]], default=0)
        else:
            r = next((i for i, t in enumerate(ends) if s["start"] < t), len(ends) - 1)
        rounds[r]["steps"].setdefault(k, []).append(s)
    for t, _ in crawl_log(name):
        rounds[next((i for i, e in enumerate(ends) if t < e), len(ends) - 1)]["pages"] += 1
    disks = jsonl(path(name + ".disk.jsonl"))
    begin = min((s["start"] for s in runs), default=ends[0])
    for i, r in enumerate(rounds):
        r["disk"] = disks[i] if i < len(disks) else None
        r["wall"] = ends[i] - (ends[i - 1] if i else begin)
        r["idle"] = r["wall"] - busy(runs, ends[i - 1] if i else begin, ends[i])
    return {"rounds": rounds, "final": final, "runs": runs, "wall": ends[-1] - begin}


def print_rounds(rounds):
    sharded = any("map" in r["steps"] for r in rounds)
    cols = ["fetch", "map", "reduce"] if sharded else ["fetch", "segment", "report"]
    head = "".join(f"{c + ': wall CPU s, RSS MB':>28}" for c in cols)
    print(f"  {'round':>5} {'pages':>8} {'wall s':>7}{head} {'other':>6} {'idle':>6}  "
          "bytes/page so far: WARC index state logs")
    done = 0
    for i, r in enumerate(rounds):
        done += r["pages"]
        cells = ""
        for c in cols:
            f = fig(r["steps"].get(c, []))
            cells += f"{'-':>27}" if f is None else f"{f[0]:>10.2f} {f[1]:>7.2f} {f[2]:>7.0f}  "
        other = sum(cpu(s) for k, ss in r["steps"].items() if k not in cols for s in ss)
        disk = ""
        if r["disk"] and done:
            b = r["disk"]["bytes"]
            disk = " ".join(f"{b[k] / done:>6.0f}" for k in ("warc", "index", "state", "logs"))
        print(f"  {i + 1:>5} {r['pages']:>8} {r['wall']:>7.1f}{cells} {other:>6.2f} {r['idle']:>6.2f}  {disk}")


def check(name, runs_code):
    """What a user checks: the crawl ended, fetched what it should, once,
    and the server saw no fault."""
    fetched = [u for _, u in crawl_log(name)]
    seen = set(fetched)
    tally = json.load(open(path(name + ".tally.json")))
    faults = {k: tally[k] for k in ("urls_asked_twice", "robots_asked_twice", "disallowed", "unknown",
                                    "overlaps", "too_close")}
    c = {"ended": runs_code == "0", "urls": len(seen), "fetched_twice": len(fetched) - len(seen),
         "missing": len(EXPECTED - seen), "extra": len(seen - EXPECTED), "faults": faults}
    if not c["ended"]:
        problems.append(f"{name}: the crawl did not end by itself (driver exit code {runs_code})")
    for k, v in faults.items():
        if v:
            examples = tally["twice_examples" if "twice" in k else "close_examples"][:3]
            problems.append(f"{name}: the server counted {k} = {v} (e.g. {examples})")
    if c["fetched_twice"]:
        problems.append(f"{name}: {c['fetched_twice']} fetches of a URL already fetched (crawl logs)")
    if c["missing"] or c["extra"]:
        problems.append(f"{name}: {c['missing']} URLs a correct crawl fetches not fetched, "
                        f"{c['extra']} fetched that it does not")
    return c, seen, tally


def verdict(ok):
    return "PASS" if ok else "FAIL"


crawls = {}
for name in ("one", "shards"):
    if rcs[name] == "skipped" or not os.path.exists(path(name + ".out")):
        continue
    a = analyse(name)
    c, seen, tally = check(name, rcs[name])
    a.update(check=c, seen=seen)
    crawls[name] = a
    rounds = a["rounds"]
    cpu_by = {}
    for s in a["runs"]:
        if s["start"] < float(open(path(name + ".final_start")).read()):
            k = kind(s)
            cpu_by[k] = cpu_by.get(k, 0) + cpu(s)
    a["cpu"] = sum(cpu_by.values())
    print(f"\n{name}: {len(rounds)} rounds, {sum(r['pages'] for r in rounds)} pages in {a['wall']:.1f} s, "
          f"{a['cpu']:.1f} CPU s ({', '.join(f'{k} {v:.1f}' for k, v in sorted(cpu_by.items()))})")
    print_rounds(rounds)
    print(f"  server: {tally['requests']} requests ({tally['robots']} robots.txt) to {tally['hosts']} hosts, "
          f"{tally['urls']} URLs, at most {tally['max_in_flight']} at once; closest gap on a host "
          f"{'-' if tally['closest_gap_ms'] is None else round(tally['closest_gap_ms'], 2)} ms")
    print(f"  against a correct crawl ({len(EXPECTED)} URLs): fetched {c['urls']}, missing {c['missing']}, "
          f"not expected {c['extra']}, fetched twice {c['fetched_twice']}")
    summary["crawls"][name] = {
        **c, "rounds": len(rounds), "pages": sum(r["pages"] for r in rounds), "wall": a["wall"], "cpu": cpu_by,
        "peak_rss_mb": max((s["maxrss_kb"] for s in a["runs"]), default=0) / 1024,
        "per_round": [{"pages": r["pages"], "wall": r["wall"],
                       "steps": {k: dict(zip(("wall", "cpu", "rss_mb"), fig(ss))) for k, ss in r["steps"].items()},
                       "bytes": r["disk"]["bytes"] if r["disk"] else None} for r in rounds],
    }

ref = [s for s in STEPS if crawl_of(s) == "ref" and kind(s) == "fetch"]
ref_wall, ref_cpu = ref_end - ref_start, sum(cpu(s) for s in ref)
ref_rss = max((s["maxrss_kb"] for s in ref), default=0) / 1024
ref_pages = len(crawl_log("ref"))
summary["reference"] = {"wall": ref_wall, "cpu": ref_cpu, "rss_mb": ref_rss, "urls": ref_pages}
print(f"\nreference: fetcher fetch alone over {ref_pages} URLs in one segment: {ref_wall:.1f} s, "
      f"{ref_cpu:.1f} CPU s, peak RSS {ref_rss:.0f} MB")

print("\ntargets:")
if "one" in crawls:
    one = crawls["one"]
    r = one["wall"] / ref_wall
    print(f"  the whole crawl on one machine: {one['wall']:.1f} s against {ref_wall:.1f} s for the fetcher alone: "
          f"{r:.2f} x (target <= 1.3): {verdict(r <= 1.3)}; CPU {one['cpu']:.1f} against {ref_cpu:.1f} s: "
          f"{one['cpu'] / ref_cpu:.2f} x")
    summary["wall_ratio"], summary["cpu_ratio"] = r, one["cpu"] / ref_cpu
for name, a in crawls.items():
    for k in ("report", "status"):
        s = a["final"].get(k)
        if s:
            w = s["end"] - s["start"]
            print(f"  segmenter {k} on the finished crawl ({name}): {w:.2f} s, {cpu(s):.2f} CPU s, "
                  f"peak RSS {s['maxrss_kb'] / 1024:.0f} MB (target < 10 s): {verdict(w < 10)}")
            summary["crawls"][name][k + "_seconds"] = w
for name, a in crawls.items():
    f = a["check"]["faults"]
    print(f"  server counts ({name}): URLs asked twice {f['urls_asked_twice']}, robots.txt asked twice "
          f"{f['robots_asked_twice']}, disallowed URLs asked {f['disallowed']}, unknown URLs {f['unknown']}, "
          f"overlapping requests {f['overlaps']}, requests closer than the delay {f['too_close']} "
          f"(target 0): {verdict(not any(f.values()))}")
if "one" in crawls and "shards" in crawls:
    one, sh = crawls["one"], crawls["shards"]
    only1, only4 = len(one["seen"] - sh["seen"]), len(sh["seen"] - one["seen"])
    if only1 or only4:
        problems.append(f"shards: {only4} URLs one machine did not fetch, {only1} of its URLs not fetched")
    r = sh["cpu"] / one["cpu"]
    print(f"  shards against one machine: the same URLs: {'yes' if not (only1 or only4) else 'no'} "
          f"({only1} only on one machine, {only4} only in the shards); CPU {sh['cpu']:.1f} against "
          f"{one['cpu']:.1f} s: {r:.2f} x (target <= 1.15): {verdict(r <= 1.15)}; wall {sh['wall']:.1f} "
          f"against {one['wall']:.1f} s")
    summary["shards_cpu_ratio"] = r
if "one" in crawls:
    rounds = crawls["one"]["rounds"]
    full = [i for i, r in enumerate(rounds) if r["pages"] >= 0.9 * per_round]

    def share(i):
        f = fig(rounds[i]["steps"].get("segment", []))
        return (f[0] if f else 0.0) / rounds[i]["wall"]

    if len(full) >= 2:
        a, b = share(full[0]), share(full[-1])
        print(f"  the segmenter's share of a round: round {full[0] + 1} {a:.3f}, round {full[-1] + 1} {b:.3f}: "
              f"{b / a:.2f} x (target <= 1.5): {verdict(b <= 1.5 * a)}")
        summary["segmenter_share"] = [a, b]
    else:
        print(f"  the segmenter's share of a round: fewer than two rounds of {0.9 * per_round:.0f} pages: not measured")
worst = max(STEPS, key=lambda s: s["maxrss_kb"])
print(f"  peak RSS of every step: at most {worst['maxrss_kb'] / 1024:.0f} MB ({worst['prog']} "
      f"{worst['args'][0]} of {crawl_of(worst)}) (target <= 512 MB): {verdict(worst['maxrss_kb'] <= 512 * 1024)}")
summary["peak_rss_mb"] = worst["maxrss_kb"] / 1024


def growth(name, a):
    """Each step's cost per 1,000 pages in the first and last full rounds,
    and the state files rewritten in most rounds."""
    rounds = a["rounds"]
    most = max(r["pages"] for r in rounds)
    full = [i for i, r in enumerate(rounds) if r["pages"] >= min(0.9 * per_round, 0.5 * most)]
    if len(full) < 2:
        return
    i, j = full[0], full[-1]
    print(f"\nwhat grows with the crawl's age ({name}): rounds {i + 1} and {j + 1} (the first and the last "
          f"of {rounds[i]['pages']} and {rounds[j]['pages']} pages), per 1,000 pages of the round")

    def per_k(x, k, what):
        v = sum(cpu(s) if what == "cpu" else (s.get(what) or 0) / MB for s in rounds[x]["steps"].get(k, []))
        return v / max(rounds[x]["pages"], 1) * 1000

    for k in sorted(set(rounds[i]["steps"]) | set(rounds[j]["steps"])):
        c0, c1 = per_k(i, k, "cpu"), per_k(j, k, "cpu")
        rss = [max((s["maxrss_kb"] for s in rounds[x]["steps"].get(k, [])), default=0) / 1024 for x in (i, j)]
        print(f"  {k:<8} CPU {c0:7.3f} -> {c1:7.3f} s ({c1 / c0 if c0 else 0:5.2f} x); "
              f"read {per_k(i, k, 'rchar'):8.2f} -> {per_k(j, k, 'rchar'):8.2f} MB; "
              f"written {per_k(i, k, 'wchar'):8.2f} -> {per_k(j, k, 'wchar'):8.2f} MB; "
              f"peak RSS {rss[0]:5.0f} -> {rss[1]:5.0f} MB")
    disks = [r["disk"] for r in rounds if r["disk"]]
    if len(disks) < 3:
        return
    print(f"  state files replaced (a new file renamed into place) or changed in place at most of the "
          f"{len(disks) - 1} round ends, and their size when first seen and at the end:")
    for p, (size, _, _) in sorted(disks[-1]["state"].items()):
        pairs = [(a0["state"][p], b0["state"][p]) for a0, b0 in zip(disks, disks[1:])
                 if p in a0["state"] and p in b0["state"]]
        replaced = sum(1 for x, y in pairs if x[1] != y[1])
        changed = sum(1 for x, y in pairs if x[1] == y[1] and x[2] != y[2])
        if replaced + changed >= (len(disks) - 1) / 2:
            first = next(d["state"][p][0] for d in disks if p in d["state"])
            print(f"    {p:<44} replaced {replaced:>3} x, changed {changed:>3} x  "
                  f"{first / MB:9.3f} -> {size / MB:9.3f} MB")


for name, a in crawls.items():
    growth(name, a)

summary["problems"] = problems
json.dump(summary, open(path("summary.json"), "w"), indent=1)
if problems:
    print("\nwrong crawls:")
    for p in problems:
        print("  " + p)
    sys.exit(1)
PY
