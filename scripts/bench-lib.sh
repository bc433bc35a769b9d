# Sourced by the benchmark scripts: what they all do with the loopback
# servers they start.
# shellcheck shell=bash

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
