#!/usr/bin/env bash
# Runs the whole test suite: installs the Python `warcio` tool (used by the
# tests to check our WARC files independently) into .venv/ when it is
# missing, then runs `cargo test` on the workspace. Extra arguments go to
# `cargo test` (e.g. `scripts/test.sh warc` runs the tests whose name holds
# "warc").
set -euo pipefail

WARCIO_VERSION=1.8.1

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

if [[ ! -x .venv/bin/warcio ]]; then
    echo "test.sh: installing warcio $WARCIO_VERSION into .venv/" >&2
    python3 -m venv .venv
    .venv/bin/pip install --quiet --disable-pip-version-check "warcio==$WARCIO_VERSION"
fi
export WARCIO="$root/.venv/bin/warcio"

cargo test --workspace --locked "$@"
