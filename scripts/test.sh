#!/usr/bin/env bash
# Runs the whole test suite: installs the Python `warcio` tool (used by the
# tests to check our WARC files independently) and `warcprox` (a WARC
# writer whose files the import tests read) into .venv/ when they are
# missing, then runs `cargo test` on the workspace. Extra arguments go to
# `cargo test` (e.g. `scripts/test.sh warc` runs the tests whose name holds
# "warc").
set -euo pipefail

WARCIO_VERSION=1.8.1
# warcio decodes `Content-Encoding: br` when a `brotli` module is there; the
# fetcher stores bodies as received, brotli included. warcio 1.8.1 needs the
# module of `brotlipy` (it sets an attribute that the `brotli` package's
# decompressor refuses).
BROTLI_VERSION=0.7.0
# warcprox, the Internet Archive's archiving proxy: an independent WARC
# writer for segmenter/tests/it/foreign_warcs.rs (its pip dependencies are
# pure Python or prebuilt wheels; no compiler is needed).
WARCPROX_VERSION=2.13.1

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

if [[ ! -x .venv/bin/warcio ]] || [[ ! -x .venv/bin/warcprox ]] ||
    ! .venv/bin/python -c 'import brotli' 2>/dev/null; then
    echo "test.sh: installing warcio $WARCIO_VERSION, brotlipy $BROTLI_VERSION" \
        "and warcprox $WARCPROX_VERSION into .venv/" >&2
    python3 -m venv .venv
    .venv/bin/pip install --quiet --disable-pip-version-check \
        "warcio==$WARCIO_VERSION" "brotlipy==$BROTLI_VERSION" \
        "warcprox==$WARCPROX_VERSION"
fi
export WARCIO="$root/.venv/bin/warcio"
export WARCPROX="$root/.venv/bin/warcprox"

cargo test --workspace --locked "$@"
