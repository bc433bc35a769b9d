#!/usr/bin/env bash
# pywb-collection.sh: makes a pywb collection of a crawl, in the current
# directory, for `wayback` to replay: every WARC file of the crawl linked
# into collections/NAME/archive/ (by absolute path: CRAWL may be given
# relative or absolute) and the crawl's merged index (CRAWL/index.cdxj,
# written by `segmenter index CRAWL`) copied into collections/NAME/indexes/.
# Run again after more rounds: new files are linked, the index replaced.
#
# Usage: scripts/pywb-collection.sh CRAWL NAME
#
# Exit codes: 0 done (then: wayback -b 127.0.0.1), 1 nothing to replay (no
# WARC file under CRAWL/fetched/, or no CRAWL/index.cdxj) or a tool failed,
# 2 usage.
set -euo pipefail

prog=pywb-collection.sh
case "${1:-}" in
    -h|--help) sed -n '2,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
[ $# -eq 2 ] || { echo "$prog: usage: $prog CRAWL NAME (try --help)" >&2; exit 2; }
crawl=$1 name=$2
case "$name" in
    ''|*/*|.*) echo "$prog: '$name': a collection name is one word (letters, digits, - and _)" >&2; exit 2 ;;
esac
[ -d "$crawl" ] || { echo "$prog: $crawl: no such crawl directory" >&2; exit 2; }
crawl=$(cd "$crawl" && pwd)

# The crawl's WARC files: those kept in fetched/ID/ (a sharded crawl's
# shards/JJJ/fetched/ID/ too). Files that went to an object store are not
# here: `segmenter wacz` packages those.
shopt -s nullglob
warcs=("$crawl"/fetched/*/*.warc.gz "$crawl"/shards/*/fetched/*/*.warc.gz)
shopt -u nullglob
if [ ${#warcs[@]} -eq 0 ]; then
    echo "$prog: $crawl: no WARC file under fetched/ to link (a crawl whose files went to an object store is packaged by \`segmenter wacz\` instead)" >&2
    exit 1
fi
if [ ! -f "$crawl/index.cdxj" ]; then
    echo "$prog: $crawl/index.cdxj: missing; make it first with: segmenter index $crawl" >&2
    exit 1
fi
command -v wb-manager >/dev/null 2>&1 || { echo "$prog: wb-manager not found: install pywb (pip install pywb)" >&2; exit 1; }

coll=collections/$name
[ -d "$coll" ] || wb-manager init "$name"
for w in "${warcs[@]}"; do
    ln -sfn "$w" "$coll/archive/"
done
cp "$crawl/index.cdxj" "$coll/indexes/index.cdxj"
echo "$coll: ${#warcs[@]} WARC file(s) linked, index.cdxj copied; replay with: wayback -b 127.0.0.1 (then http://127.0.0.1:8080/$name/)"
