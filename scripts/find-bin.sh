# Sourced by crawl.sh and task.sh: `find_bin NAME` prints the path of the
# program NAME (fetcher, segmenter): from `--bin DIR` ($bindir) if given,
# else this repository's release build, else the PATH. On failure it says
# what to do (as $prog) and returns 1.
# shellcheck shell=bash

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

find_bin() {
    local name=$1
    if [ -n "$bindir" ]; then
        [ -x "$bindir/$name" ] || { echo "$prog: $bindir/$name: not found or not executable" >&2; return 1; }
        echo "$bindir/$name"
    elif [ -x "$repo/target/release/$name" ]; then
        echo "$repo/target/release/$name"
    elif command -v "$name" >/dev/null 2>&1; then
        command -v "$name"
    else
        echo "$prog: cannot find '$name': build it with 'cargo build --release' or pass --bin DIR" >&2
        return 1
    fi
}
