#!/usr/bin/env bash
# Runs the whole test suite: installs the Python `warcio` tool (used by the
# tests to check our WARC files independently), `warcprox` (a WARC writer
# whose files the import tests read), `cdxj-indexer`, `pywb` and `wacz`
# (the replay and packaging tools) into .venv/ when they are missing, then
# installs Debian's chromium (headless, for the HTML report's browser test)
# when missing, then runs `cargo test` on the workspace. Extra arguments go to
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
# The replay and packaging tools an archivist uses on a crawl, for
# tests/tests/it/archive_tools.rs: cdxj-indexer (the index our .cdxj files
# must equal), pywb (replays the crawl from our own index, on loopback) and
# wacz (`wacz validate` judges our packages). With the tools above they
# install in about 35 s (measured on the 2-core machine; wheels only).
CDXJ_INDEXER_VERSION=1.5.0
PYWB_VERSION=2.10.0
WACZ_VERSION=0.6.0
# moto, an S3 server on loopback for tests/tests/it/warc_store.rs (the WARC
# store): its `s3` extra with flask and flask-cors, what `moto_server`
# needs for S3 alone (about 10 s to install; wheels only).
MOTO_VERSION=5.2.5
FLASK_VERSION=3.1.3
FLASK_CORS_VERSION=6.0.5
# prometheus_client, Prometheus' own Python client: its parser of the text
# exposition format reads the metrics files in tests/tests/it/metrics.rs
# (pure Python, no dependency; about 2 s to install).
PROMETHEUS_CLIENT_VERSION=0.26.0
# The research outputs' readers, for tests/tests/it/research.rs: DuckDB
# queries the Parquet index, FastWARC reads the WET and WAT files beside
# warcio (wheels only, about 10 s to install); resiliparse is the text
# extractor scripts/bench-research.sh compares ours with.
DUCKDB_VERSION=2.0.0
FASTWARC_VERSION=2.0.0
RESILIPARSE_VERSION=2.0.0

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

# Installs Debian packages with apt-get, quietly: what apt-get and dpkg say
# (some 45 lines for Slurm) goes to a log that is shown only if the install
# fails.
apt_install() {
    local sudo="" log
    [ "$(id -u)" = 0 ] || sudo=sudo
    log=$(mktemp "${TMPDIR:-/tmp}/crawl-test-apt.XXXXXX")
    if { $sudo apt-get update -qq &&
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
            --no-install-recommends "$@"; } >"$log" 2>&1; then
        rm -f "$log"
    else
        echo "test.sh: apt-get install $* failed; its output:" >&2
        sed 's/^/  /' "$log" >&2
        rm -f "$log"
        exit 1
    fi
}

if [[ ! -x .venv/bin/warcio ]] || [[ ! -x .venv/bin/warcprox ]] ||
    [[ ! -x .venv/bin/cdxj-indexer ]] || [[ ! -x .venv/bin/wayback ]] ||
    [[ ! -x .venv/bin/wacz ]] ||
    ! .venv/bin/python -c 'import brotli' 2>/dev/null; then
    echo "test.sh: installing warcio $WARCIO_VERSION, brotlipy $BROTLI_VERSION," \
        "warcprox $WARCPROX_VERSION, cdxj-indexer $CDXJ_INDEXER_VERSION," \
        "pywb $PYWB_VERSION and wacz $WACZ_VERSION into .venv/" >&2
    python3 -m venv .venv
    .venv/bin/pip install --quiet --disable-pip-version-check \
        "warcio==$WARCIO_VERSION" "brotlipy==$BROTLI_VERSION" \
        "warcprox==$WARCPROX_VERSION" "cdxj-indexer==$CDXJ_INDEXER_VERSION" \
        "pywb==$PYWB_VERSION" "wacz==$WACZ_VERSION"
fi
if [[ ! -x .venv/bin/moto_server ]]; then
    echo "test.sh: installing moto $MOTO_VERSION (S3 server) into .venv/" >&2
    [[ -x .venv/bin/pip ]] || python3 -m venv .venv
    .venv/bin/pip install --quiet --disable-pip-version-check \
        "moto[s3]==$MOTO_VERSION" "flask==$FLASK_VERSION" "flask-cors==$FLASK_CORS_VERSION"
fi
if ! .venv/bin/python -c 'import prometheus_client' 2>/dev/null; then
    echo "test.sh: installing prometheus_client $PROMETHEUS_CLIENT_VERSION into .venv/" >&2
    [[ -x .venv/bin/pip ]] || python3 -m venv .venv
    .venv/bin/pip install --quiet --disable-pip-version-check \
        "prometheus-client==$PROMETHEUS_CLIENT_VERSION"
fi
if ! .venv/bin/python -c 'import duckdb, fastwarc, resiliparse' 2>/dev/null; then
    echo "test.sh: installing duckdb $DUCKDB_VERSION, fastwarc $FASTWARC_VERSION and" \
        "resiliparse $RESILIPARSE_VERSION into .venv/" >&2
    [[ -x .venv/bin/pip ]] || python3 -m venv .venv
    .venv/bin/pip install --quiet --disable-pip-version-check \
        "duckdb==$DUCKDB_VERSION" "fastwarc==$FASTWARC_VERSION" "resiliparse==$RESILIPARSE_VERSION"
fi
# Debian's chromium, headless, for tests/tests/it/report_html.rs (renders the
# HTML report, takes a screenshot, dumps the DOM). Installed once with
# apt-get when missing (about 35 s with the package lists' update).
if ! command -v chromium >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1; then
        echo "test.sh: installing chromium with apt-get" >&2
        apt_install chromium
    else
        echo "test.sh: chromium is missing and apt-get is not here: install chromium" >&2
        exit 1
    fi
fi
export CHROMIUM
CHROMIUM=$(command -v chromium)

export WARCIO="$root/.venv/bin/warcio"
export WARCPROX="$root/.venv/bin/warcprox"
export CDXJ_INDEXER="$root/.venv/bin/cdxj-indexer"
export WAYBACK="$root/.venv/bin/wayback"
export WACZ="$root/.venv/bin/wacz"
export MOTO_SERVER="$root/.venv/bin/moto_server"
export METRICS_PYTHON="$root/.venv/bin/python"

# A real single-node Slurm for tests/tests/it/slurm.rs: Debian's packages
# (installed when missing and this runs as root, ~10 s), the daemons
# started under a temporary directory by scripts/slurm/testbed.sh and
# stopped by their pids when the tests end. Without them the Slurm test
# says it skipped, unless CRAWL_TEST_SLURM=required (set by .ci/run).
slurm_packages="munge slurmctld slurmd slurm-client"
if ! command -v slurmctld >/dev/null 2>&1 && ! [ -x /usr/sbin/slurmctld ] &&
    [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "test.sh: installing $slurm_packages (apt-get, --no-install-recommends)" >&2
    # shellcheck disable=SC2086
    apt_install $slurm_packages
fi
if [ -x /usr/sbin/slurmctld ] && [ "$(id -u)" = 0 ]; then
    slurm_dir=$(mktemp -d "${TMPDIR:-/tmp}/crawl-test-slurm.XXXXXX")
    trap 'bash "$root/scripts/slurm/testbed.sh" stop "$slurm_dir"; rm -rf "$slurm_dir"' EXIT
    if bash scripts/slurm/testbed.sh start "$slurm_dir" >/dev/null; then
        export SLURM_CONF="$slurm_dir/slurm.conf"
    else
        echo "test.sh: the test Slurm did not start (logs in $slurm_dir/log/)" >&2
    fi
fi

cargo test --workspace --locked "$@"
