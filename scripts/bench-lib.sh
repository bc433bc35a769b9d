# Sourced by the benchmark scripts: their options, and what they all do with the loopback
# servers they start.
# shellcheck shell=bash

# Options of the benchmark scripts ($prog names the script in messages):
# usage prints the script's head comment; die says what is wrong (exit 2);
# need FLAG $# checks a flag has its value; whole and number check it.
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
die() { echo "$prog: $*" >&2; exit 2; }
need() { [ "$2" -ge 2 ] || die "$1 needs a value"; }
whole() { [[ "$2" =~ ^[0-9]+$ ]] || die "$1 takes a whole number, not '$2'"; }
number() { [[ "$2" =~ ^[0-9]+([.][0-9]+)?$ ]] || die "$1 takes a number, not '$2'"; }

# stop_server PID DIR: ask the benchmark server PID to stop (it watches for
# DIR/bench-stop), give it 5 s to finish, then kill it.
stop_server() {
  local pid=$1 dir=$2
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 0
  touch "$dir/bench-stop"
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill "$pid" 2>/dev/null || true
}

# bench_scratch NAME: makes the scratch directory $work (NAME.XXXXXX under
# TMPDIR) and arms the exit trap that stops the benchmark server
# $server_pid, if one runs (stop_server, with $server_dir: $work unless the
# script sets another), then removes $work.
bench_scratch() {
  work=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
  server_pid="" server_dir=$work
  trap 'stop_server "$server_pid" "$server_dir"; rm -rf "$work"' EXIT
}

# cpu_of PID: CPU seconds (user + system) of a live process, from /proc
# (100 ticks/s).
cpu_of() { awk '{ print ($14 + $15) / 100 }' "/proc/$1/stat"; }

# wait_ready PID FILE SECONDS: wait (at most SECONDS) for the benchmark
# server PID to write its `ready URLS ...` line to FILE, then print URLS;
# fails, saying why, if the server dies or is not ready in time.
wait_ready() {
  local pid=$1 file=$2 secs=$3
  for _ in $(seq $((secs * 2))); do
    grep -q '^ready' "$file" 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || { echo "bench server failed" >&2; return 1; }
    sleep 0.5
  done
  grep -q '^ready' "$file" || { echo "bench server not ready after $secs s" >&2; return 1; }
  awk '/^ready/ { print $2 }' "$file"
}

# bench_bin_dir ROOT DIR PROG...: the directory of the programs PROG...,
# absolute: DIR if given, else ROOT's release build (built now); fails
# (exit 2) naming a program that is not there.
bench_bin_dir() {
  local root=$1 dir=$2 b
  shift 2
  if [[ -z "$dir" ]]; then
    (cd "$root" && cargo build --release --locked --quiet "${@/#/--bin=}") || exit 1
    dir=${CARGO_TARGET_DIR:-$root/target}/release
  fi
  for b in "$@"; do
    [[ -x "$dir/$b" ]] || { echo "$dir/$b: not found or not executable" >&2; exit 2; }
  done
  (cd "$dir" && pwd)
}

# bench_work_dir NAME: the work directory: $work made absolute (created),
# or, when empty, a new temporary directory NAME.XXXXXX (then
# temporary=1, else 0).
bench_work_dir() {
  temporary=0
  if [[ -z "$work" ]]; then
    work=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
    temporary=1
  else
    mkdir -p "$work"
    work=$(cd "$work" && pwd)
  fi
}

# serve_scale_web BIN WORK ARGS...: starts `scale-web serve ARGS` (from
# BIN), its seeds, hosts file, ready file and log in WORK, and waits (at
# most 120 s) until every host listens; sets server_pid and port. Exits 1
# with the server's log if it does not start.
serve_scale_web() {
  local bin=$1 work=$2
  shift 2
  "$bin/scale-web" serve "$@" --seeds-out "$work/seeds.txt" --hosts-out "$work/hosts" \
    --ready-file "$work/ready" </dev/null 2>"$work/server.log" &
  server_pid=$!
  for _ in $(seq 1200); do
    [[ -e "$work/ready" ]] && break
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  [[ -e "$work/ready" ]] || { echo "scale-web did not start within 120 s:" >&2; cat "$work/server.log" >&2; exit 1; }
  port=$(sed -n 's/^port=//p' "$work/ready")
}

# stop_pid PID: asks PID to end (SIGTERM), waits 10 s at most, then kills it.
stop_pid() {
  local pid=$1
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -KILL "$pid" 2>/dev/null || true
}

# stop_driver: asks the running crawl driver $driver_pid (crawl directory
# $driving) to stop with a STOP file (both drivers stop at their next
# step) and waits for it, at most 10 minutes.
stop_driver() {
  [[ -n "$driver_pid" ]] && [[ -n "$driving" ]] || return 0
  touch "$driving/STOP"
  for _ in $(seq 6000); do kill -0 "$driver_pid" 2>/dev/null || break; sleep 0.1; done
}

# fetched_urls CRAWL: the URLs CRAWL's crawl logs give an HTTP status
# (robots.txt left out), one a line.
fetched_urls() {
  find "$1" -name crawl.log -path '*/fetched/*' -exec cat {} + |
    awk -F'\t' '$2 ~ /^[0-9]+$/ && $7 != "robots" { print $6 }'
}

# scale_crawl_toml HOSTS DELAY TAIL_SHARE: the start of the crawl.toml of a
# crawl of the scale web (its agent, filter and fetcher sections) for the
# hosts file HOSTS, a min_delay of DELAY seconds and the fetcher's
# tail_share TAIL_SHARE; the caller adds its [segmenter] section.
scale_crawl_toml() {
  cat <<TOML
[agent]
name = "scalebot"
url = "https://example.org/scalebot.html"

[filter]
# A round holds at most max_per_host URLs of a host: a URL may be found
# later than by its shortest path, and its hops count that path.
max_hops = 100

[fetcher]
allow_private = true
hosts_file = "$1"
min_delay = "${2}s"
delay_factor = 0
tail_share = $3
TOML
}
