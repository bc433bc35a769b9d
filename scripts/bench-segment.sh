#!/usr/bin/env bash
# Benchmarks of the segmenter (a script, not a timed test).
#
#   scripts/bench-segment.sh [docs|urls|backlog|history|history-rounds|sitemap|bloom|all]      (default: all)
#
# 1. docs: every HTML page of the Rust documentation on this machine
#    ($(rustc --print sysroot)/share/doc/rust/html) stored as WARC response
#    records in a fetched run, then `segmenter run` over it. Prints MB/s of
#    HTML, links/s, and the time of plain `zcat` over the same WARC files.
#    Target: >= 200 MB/s of HTML on 2 cores.
# 2. urls: 10,000,000 synthetic URLs over 100,000 hosts (skewed, with
#    repeats and trap URLs) through `segmenter inject` with an open scope:
#    canonical form, filters, dedup, per-host cap, sort and segments.
#    Targets: >= 1,000,000 URLs/s end to end, peak RSS <= 1 GB with
#    --memory 512MB, Bloom filter <= 10 bits per URL at 1 %.
# 3. backlog: the gap a round costs as the backlog grows: synthetic URLs
#    (1 M and 10 M over 10,000 and 100,000 hosts) injected with
#    --max-per-host 10, so that most wait in the backlog, then one
#    `segmenter run` after an empty fetched run: the round schedules the
#    backlog's next share and writes the rest back. Prints the round's time
#    per backlog size and per million waiting URLs. Target (issue: the gap
#    between rounds does not grow with the backlog beyond what the new data
#    needs): not met; the backlog is read and written once per round, so the
#    figure printed is what it costs.
# 4. history: the fetch history merge at scale: a synthetic history of
#    10,000,000 URLs over 100,000 hosts (1 % due now) and one `segmenter
#    run` after an empty fetched run, against the same run without the
#    history. Prints the merge's URLs/s, the round's extra time and peak
#    RSS, and the history's bytes per URL. Targets: >= 1,000,000 URLs/s,
#    peak RSS <= 1 GB with --memory 512MB.
#    history-rounds (not in `all`): the bytes the history merge writes per
#    round as the crawl ages: a synthetic history of HISTORY_URLS (default
#    1,000,000) URLs over HISTORY_HOSTS (10,000) hosts, due evenly over the
#    next HISTORY_SPREAD (3600) seconds, then HISTORY_ROUNDS (12) `segmenter
#    run`s, each after an empty fetched run: each round hands out the URLs
#    that came due since the one before (its work) and writes what changed.
#    Prints per round the URLs due, the entries and bytes the history
#    writes (the round's generation and any compaction), the generations,
#    and the whole history as one file: what every round wrote before the
#    generations. Target: the bytes follow the round's due URLs, not the
#    history's size. PROFILE=debug uses the debug build (bytes do not
#    depend on it; times do).
# 5. sitemap: sitemap parsing on 20 generated sitemaps of 50,000 URLs with
#    <lastmod> each, read in memory as plain XML and as .xml.gz (one
#    thread), against `zcat` over the same .gz files. Prints sitemap URLs/s
#    and the ratio to zcat. Target (our own): >= 1,000,000 URLs/s for
#    uncompressed XML.
# 6. bloom: the seen-set at scale. (a) Growth: a crawl whose exact sets
#    hold 10,000,000 URLs (a synthetic history of 8 M, 2 M URLs injected
#    with --max-per-host 10 so that nearly all wait in the backlog), its
#    filter rebuilt for twice that (what a growth does), alone
#    (examples/bloom-bench.rs rebuild): wall time, URLs/s, peak RSS.
#    Targets: >= 1,000,000 URLs/s, peak RSS <= 256 MB + the new filter.
#    (b) A round after an empty fetched run with the filter just past its
#    design load (it grows) against the same round with a roomy filter.
#    (c) Bytes a round's commit writes for the filter, at 10 M and 100 M
#    URLs (filters filled with synthetic URLs at half their design load),
#    over 8 rounds each adding 100,000 URLs (`inject`): per round, and
#    against the whole filter (what the commit wrote before journals) and
#    an in-place write (every page the new bits touch). Target:
#    proportional to the URLs added, not to the filter's size. (d) The
#    rescue's cost: the Rust docs read a second time (every link seen
#    before) beside the 8 M-URL history; with BASELINE=path to another
#    segmenter build (one without the rescue), the same round with it, for
#    comparison. (e) The design not chosen, a scalable Bloom filter (layers
#    from 1 M URLs), against one rebuilt filter, with 10 M URLs: bytes,
#    false-positive rate, lookup time.
#    Disk: about 1.5 GB under BENCH_DIR while it runs (the 100 M filter is
#    240 MB); the crawls are deleted at the end.
#
# Inputs are generated once under target/bench-segment/ (set BENCH_DIR to
# put them elsewhere) and reused; each run works on a fresh crawl directory.
# Needs GNU time (/usr/bin/time) for the peak RSS.
set -euo pipefail

what=${1:-all}
root=$(git rev-parse --show-toplevel)
cd "$root"
work=${BENCH_DIR:-$root/target/bench-segment}
mkdir -p "$work"

profile=${PROFILE:-release}
echo "building $profile binaries..." >&2
cargo build $([ "$profile" = release ] && echo --release) --quiet -p segmenter --bin segmenter \
    --example docs-warc --example synth-urls --example synth-history --example bloom-bench
target=${CARGO_TARGET_DIR:-$root/target}
bin=$target/$profile/segmenter
examples=$target/$profile/examples
gnutime=/usr/bin/time
[ -x "$gnutime" ] || { echo "bench-segment: $gnutime (GNU time) is needed for the peak RSS" >&2; exit 1; }

# `key: value` figure from a segmenter report.
figure() { awk -v k="$1" 'index($0, k) == 1 { sub(k, ""); print $1; exit }' "$2"; }
# Seconds, peak RSS (KB) and CPU seconds written by GNU time -f '%e %M %U %S'.
secs() { tail -n 1 "$1" | awk '{print $1}'; }
rss_kb() { tail -n 1 "$1" | awk '{print $2}'; }
cpu() { tail -n 1 "$1" | awk '{printf "%.2f", $3 + $4}'; }

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
echo "machine: $(nproc) CPUs, load average $(loadavg) (other work on the machine slows every figure)"

# The Rust documentation as one fetched run, in $work/docs-template.
docs_template() {
    local html sysroot
    sysroot=$(rustc --print sysroot)
    html=$sysroot/share/doc/rust/html
    [ -d "$html" ] || { echo "bench-segment: $html: no Rust documentation installed (rustup component add rust-docs)" >&2; return 1; }
    template=$work/docs-template
    if [ ! -f "$template/fetched/00001/DONE" ]; then
        echo "writing WARC files from $html ..." >&2
        rm -rf "$template"
        mkdir -p "$template/fetched"
        "$examples/docs-warc" "$html" "$template/fetched/00001" https://doc.rust-lang.org/ 128MB >&2
        echo doc.rust-lang.org >"$template/scope.seeds"
    fi
}

bench_docs() {
    local template crawl
    docs_template || return 1
    local warcs=("$template"/fetched/00001/*.warc.gz)
    local warc_bytes
    warc_bytes=$(cat "${warcs[@]}" | wc -c)

    # Plain decompression of the same files, warm cache, single thread.
    cat "${warcs[@]}" >/dev/null
    "$gnutime" -f '%e %M %U %S' -o "$work/zcat.time" zcat "${warcs[@]}" >/dev/null

    crawl=$work/docs-crawl
    rm -rf "$crawl"
    cp -r "$template" "$crawl"
    "$gnutime" -f '%e %M %U %S' -o "$work/docs.time" \
        "$bin" run "$crawl" --scope any --memory 512MB --progress-interval 0 2>"$work/docs.report"
    local t html_bytes links pages zt
    t=$(secs "$work/docs.time")
    zt=$(secs "$work/zcat.time")
    html_bytes=$(figure "html bytes:" "$work/docs.report")
    links=$(figure "links found:" "$work/docs.report")
    pages=$(figure "pages scanned:" "$work/docs.report")
    echo
    echo "== 1. Rust documentation: $pages HTML pages, $((html_bytes / 1000000)) MB of HTML, $((warc_bytes / 1000000)) MB of WARC in ${#warcs[@]} files"
    echo "segmenter run:   $t s  ->  $(awk -v b="$html_bytes" -v t="$t" 'BEGIN{printf "%.0f", b/1e6/t}') MB/s of HTML, $(awk -v l="$links" -v t="$t" 'BEGIN{printf "%.0f", l/t}') links/s ($links links), peak RSS $(( $(rss_kb "$work/docs.time") / 1024 )) MiB, $(cpu "$work/docs.time") s of CPU"
    echo "zcat:            $zt s  ->  $(awk -v b="$html_bytes" -v t="$zt" 'BEGIN{printf "%.0f", b/1e6/t}') MB/s of HTML equivalent, $(cpu "$work/zcat.time") s of CPU"
    echo "segmenter/zcat:  $(awk -v a="$t" -v b="$zt" 'BEGIN{printf "%.2f", a/b}') x the time of zcat"
    grep -E '^(elapsed|scheduled|segment |bloom|history):' "$work/docs.report" | sed 's/^/    /'
    if [ -f "$crawl/history.v5.list" ]; then
        local hb hn
        hb=$(cat "$crawl"/history.v5.*.tsv.zst | wc -c)
        hn=$(figure "history:" "$work/docs.report")
        echo "history file:    $hb bytes for $hn URLs  ->  $(awk -v b="$hb" -v n="$hn" 'BEGIN{printf "%.1f", b/n}') bytes/URL"
    fi
    echo "load average after: $(loadavg)"
}

bench_urls() {
    local n=10000000 hosts=100000 urls crawl
    urls=$work/urls-$n.txt
    if [ ! -f "$urls" ]; then
        echo "writing $n synthetic URLs..." >&2
        "$examples/synth-urls" $n $hosts "$urls"
    fi
    cat "$urls" >/dev/null
    crawl=$work/urls-crawl
    rm -rf "$crawl"
    "$gnutime" -f '%e %M %U %S' -o "$work/urls.time" \
        "$bin" inject "$crawl" "$urls" --scope any --memory 512MB \
        --bloom-items $n --bloom-fp 0.01 --progress-interval 0 2>"$work/urls.report"
    local t rss bloom_bytes bits
    t=$(secs "$work/urls.time")
    rss=$(rss_kb "$work/urls.time")
    bloom_bytes=$(stat -c %s "$crawl/seen.bloom")
    bits=$(awk -v b="$bloom_bytes" -v n="$n" 'BEGIN{printf "%.2f", (b-64)*8/n}')
    echo
    echo "== 2. $n synthetic URLs over $hosts hosts ($(( $(stat -c %s "$urls") / 1000000 )) MB), inject --scope any --memory 512MB"
    echo "end to end:      $t s  ->  $(awk -v n="$n" -v t="$t" 'BEGIN{printf "%.0f", n/t}') URLs/s ($(cpu "$work/urls.time") s of CPU)"
    echo "peak RSS:        $((rss / 1024)) MiB"
    echo "Bloom filter:    $bloom_bytes bytes for $n URLs at 1 %  ->  $bits bits/URL"
    grep -E '^(elapsed|rejected [a-z-]+|dupes|unique urls|new urls|scheduled|capped hosts|to backlog|sort spills|bloom):' "$work/urls.report" |
        grep -v ' 0$' | sed 's/^/    /'
    echo "    segments: $(grep -c '^segment ' "$work/urls.report")"
    echo "load average after: $(loadavg)"
}

bench_backlog() {
    echo
    echo "== 3. a round's time against the size of the backlog (run after an empty fetched run)"
    local n hosts urls crawl waiting t
    for n in 1000000 10000000; do
        hosts=$((n / 100))
        urls=$work/urls-$n-$hosts.txt
        if [ ! -f "$urls" ]; then
            echo "writing $n synthetic URLs over $hosts hosts..." >&2
            "$examples/synth-urls" $n $hosts "$urls"
        fi
        crawl=$work/backlog-crawl
        rm -rf "$crawl"
        "$bin" inject "$crawl" "$urls" --scope any --max-per-host 10 --bloom-items $n \
            --progress-interval 0 2>"$work/backlog-inject.report"
        mkdir -p "$crawl/fetched/00001"
        : >"$crawl/fetched/00001/DONE"
        "$gnutime" -f '%e %M %U %S' -o "$work/backlog.time" \
            "$bin" run "$crawl" --scope any --max-per-host 10 --progress-interval 0 \
            2>"$work/backlog.report"
        waiting=$(figure "backlog in:" "$work/backlog.report")
        t=$(secs "$work/backlog.time")
        printf 'backlog %9d URLs over %6d hosts: round %5.2f s (%.2f s per million waiting URLs), peak RSS %d MiB, %s s of CPU\n' \
            "$waiting" "$hosts" "$t" "$(awk -v t="$t" -v w="$waiting" 'BEGIN{printf "%.3f", t/w*1e6}')" \
            $(( $(rss_kb "$work/backlog.time") / 1024 )) "$(cpu "$work/backlog.time")"
    done
    echo "target: the gap does not grow with the backlog: NOT MET (it grows by the figure per million above)"
    echo "load average after: $(loadavg)"
}

bench_history() {
    local n=10000000 hosts=100000 history crawl t0 t1 merge due
    history=$work/history-$n.tsv.zst
    if [ ! -f "$history" ]; then
        echo "writing a history of $n URLs..." >&2
        "$examples/synth-history" $n $hosts 1 "$history"
    fi
    echo
    echo "== 4. the fetch history: $n URLs over $hosts hosts ($(( $(stat -c %s "$history") / 1000000 )) MB, $(awk -v b="$(stat -c %s "$history")" -v n="$n" 'BEGIN{printf "%.1f", b/n}') bytes/URL), one run after an empty fetched run"
    for with in without with; do
        crawl=$work/history-crawl
        rm -rf "$crawl"
        mkdir -p "$crawl/fetched/00001"
        : >"$crawl/fetched/00001/DONE"
        [ "$with" = with ] && cp "$history" "$crawl/history.v1.tsv.zst"
        "$gnutime" -f '%e %M %U %S' -o "$work/history-$with.time" \
            "$bin" run "$crawl" --scope any --memory 512MB --progress-interval 0 \
            2>"$work/history-$with.report"
    done
    t0=$(secs "$work/history-without.time")
    t1=$(secs "$work/history-with.time")
    merge=$(grep '^history:' "$work/history-with.report" | sed 's/.*), \([0-9.]*\) s$/\1/')
    due=$(figure "due in:" "$work/history-with.report")
    echo "round without a history: $t0 s, peak RSS $(( $(rss_kb "$work/history-without.time") / 1024 )) MiB"
    echo "round with the history:  $t1 s, peak RSS $(( $(rss_kb "$work/history-with.time") / 1024 )) MiB (target <= 1024), $(cpu "$work/history-with.time") s of CPU"
    echo "history merge:           $merge s  ->  $(awk -v n="$n" -v t="$merge" 'BEGIN{printf "%.0f", n/t}') URLs/s (target >= 1000000), $due URLs due scheduled"
    grep -E '^(history|due in|refetches scheduled|scheduled|to backlog|elapsed):' "$work/history-with.report" | sed 's/^/    /'
    echo "load average after: $(loadavg)"
}

bench_history_rounds() {
    local n=${HISTORY_URLS:-1000000} hosts=${HISTORY_HOSTS:-10000} rounds=${HISTORY_ROUNDS:-12}
    local spread=${HISTORY_SPREAD:-3600} crawl r id due entries compacted bytes gens whole
    local total_bytes=0 total_whole=0 total_due=0
    crawl=$work/history-rounds
    rm -rf "$crawl"
    mkdir -p "$crawl/fetched/00001"
    : >"$crawl/fetched/00001/DONE"
    "$examples/synth-history" "$n" "$hosts" 0 "$crawl/history.v1.tsv.zst" "$spread"
    echo
    echo "== 4b. the history's bytes per round: $n URLs over $hosts hosts, due evenly over $spread s, $rounds rounds after empty fetched runs ($profile build)"
    printf '%5s %8s %9s %10s %12s %5s %14s\n' round due written compacted "bytes" gens "whole history"
    for r in $(seq 1 "$rounds"); do
        id=$(printf %05d "$r")
        mkdir -p "$crawl/fetched/$id"
        : >"$crawl/fetched/$id/DONE"
        "$bin" run "$crawl" --scope any --memory 256MB --progress-interval 0 2>"$work/history-rounds.report"
        due=$(figure "due in:" "$work/history-rounds.report")
        read -r entries compacted bytes gens < <(awk '/^history written:/ { print $3, $9, $13, $15 }' "$work/history-rounds.report")
        # The whole history as one file, as every round wrote it before.
        whole=$("$bin" inspect --entries "$crawl/history.v5.list" | zstd -1 -c | wc -c)
        printf '%5d %8d %9d %10d %12d %5d %14d\n' "$r" "$due" "$entries" "$compacted" "$bytes" "$gens" "$whole"
        if [ "$r" -gt 1 ]; then
            total_bytes=$((total_bytes + bytes)); total_whole=$((total_whole + whole)); total_due=$((total_due + due))
        fi
    done
    echo "rounds 2-$rounds: $total_bytes bytes written for $total_due URLs due ($(awk -v b="$total_bytes" -v n="$total_due" 'BEGIN{printf "%.1f", b/n}') bytes per due URL); the whole history each round: $total_whole bytes ($(awk -v a="$total_whole" -v b="$total_bytes" 'BEGIN{printf "%.1f", a/b}') x)"
    echo "load average after: $(loadavg)"
    rm -rf "$crawl"
}

bench_sitemap() {
    echo
    echo "== 5. sitemap parsing (single thread, files in memory)"
    cargo build --release --quiet -p segmenter --example bench_sitemap
    "$examples/bench_sitemap" "$work/sitemaps" 20 50000
    echo "load average after: $(loadavg)"
}

# `bloom commit:` of a segmenter report: "KIND BYTES".
bloom_commit() { awk '/^bloom commit:/ { gsub(",", ""); print $3, $4; exit }' "$1"; }

bench_bloom() {
    local n=10000000 crawl base history urls t rss filter_bytes
    history=$work/history-8000000.tsv.zst
    urls=$work/urls-2000000-20000.txt
    [ -f "$history" ] || "$examples/synth-history" 8000000 80000 0 "$history"
    [ -f "$urls" ] || "$examples/synth-urls" 2000000 20000 "$urls"
    base=$work/bloom-base
    rm -rf "$base"
    "$bin" inject "$base" "$urls" --scope any --max-per-host 10 --bloom-items 40000000 \
        --progress-interval 0 2>/dev/null
    cp "$history" "$base/history.v1.tsv.zst"
    mkdir -p "$base/fetched/00001"
    : >"$base/fetched/00001/DONE"
    echo
    echo "== 6. the seen-set: a crawl whose history (8 M URLs), backlog and segment (2 M injected) hold about $(( n / 1000000 )) M URLs"

    # (a) The growth's work alone: the exact sets read into a filter for 2 n.
    "$gnutime" -f '%e %M %U %S' -o "$work/bloom-rebuild.time" \
        "$examples/bloom-bench" rebuild "$base" $((2 * n)) >"$work/bloom-rebuild.out"
    t=$(secs "$work/bloom-rebuild.time")
    rss=$(rss_kb "$work/bloom-rebuild.time")
    filter_bytes=$(stat -c %s "$base/seen.bloom")
    local read
    read=$(awk '{for (i = 1; i < NF; i++) if ($i == "from") { print $(i + 1); exit }}' "$work/bloom-rebuild.out")
    echo "(a) growth (rebuild for $((2 * n)) URLs): $t s, $(awk -v n="$read" -v t="$t" 'BEGIN{printf "%.0f", n/t}') URLs/s (target >= 1000000), $(cpu "$work/bloom-rebuild.time") s of CPU;"
    echo "    peak RSS $((rss / 1024)) MiB (target <= 256 MiB + the new filter's $((filter_bytes / 1048576)) MiB = $((256 + filter_bytes / 1048576)) MiB)"
    sed 's/^/    /' "$work/bloom-rebuild.out"

    # (b) A round that grows the filter against one that does not.
    local design with
    for with in grows roomy; do
        crawl=$work/bloom-round
        rm -rf "$crawl"
        cp -r "$base" "$crawl"
        # Just past its design load, or four times as large.
        if [ "$with" = grows ]; then design=$((read * 9 / 10)); else design=$((4 * n)); fi
        "$examples/bloom-bench" rebuild "$crawl" "$design" >/dev/null
        "$gnutime" -f '%e %M %U %S' -o "$work/bloom-$with.time" \
            "$bin" run "$crawl" --scope any --max-per-host 10 --memory 256MB --progress-interval 0 \
            2>"$work/bloom-$with.report"
    done
    echo "(b) a round after an empty fetched run (history merge of 8 M URLs, 2 M waiting):"
    echo "    with the growth:    $(secs "$work/bloom-grows.time") s, peak RSS $(( $(rss_kb "$work/bloom-grows.time") / 1024 )) MiB; $(grep '^bloom growth:' "$work/bloom-grows.report" | sed 's/^bloom growth: *//')"
    echo "    without (roomy):    $(secs "$work/bloom-roomy.time") s, peak RSS $(( $(rss_kb "$work/bloom-roomy.time") / 1024 )) MiB; commit: $(bloom_commit "$work/bloom-roomy.report")"
    rm -rf "$crawl" "$base"

    # (c) Bytes written per round by the commit, at 10 M and 100 M URLs.
    echo "(c) bytes written for seen.bloom by a round's commit, rounds of 100,000 new URLs:"
    local items batch r kind bytes total size old inplace
    for items in 10000000 100000000; do
        crawl=$work/bloom-commit
        rm -rf "$crawl"
        mkdir -p "$crawl"
        "$examples/bloom-bench" fill "$crawl/seen.bloom" $((2 * items)) "$items" >/dev/null
        size=$(stat -c %s "$crawl/seen.bloom")
        total=0
        local kinds="" added=0
        for r in 1 2 3 4 5 6 7 8; do
            batch=$work/bloom-batch.txt
            head -n 100000 "$urls" | sed "s|^\(https*\)://|\1://r$r-|" >"$batch"
            "$bin" inject "$crawl" "$batch" --scope any --progress-interval 0 2>"$work/bloom-commit.report"
            read -r kind bytes < <(bloom_commit "$work/bloom-commit.report")
            total=$((total + bytes))
            added=$((added + $(figure "new urls:" "$work/bloom-commit.report")))
            kinds="$kinds $kind:$bytes"
        done
        inplace=$("$examples/bloom-bench" pages $((2 * items)) 100000 | awk '{print $(NF - 2)}')
        echo "    $((items / 1000000)) M URLs (filter $size bytes):$kinds"
        echo "        mean $((total / 8)) bytes a round for $((added / 8)) new URLs: $(awk -v b="$total" -v n="$added" 'BEGIN{printf "%.1f", b/n}') bytes per URL added (target: proportional to the URLs added; at most 16 x (1 + 4) = 80 once folds are amortized);"
        echo "        before (the whole filter copied each round): $size bytes a round; in place (the pages the new bits touch): $inplace bytes"
        rm -rf "$crawl"
    done
    rm -f "$work/bloom-batch.txt"

    # (d) The rescue's cost: the Rust docs read a second time (consumed.txt
    # removed: every link was seen), with the 8 M-URL history.
    local template
    docs_template || return 1
    crawl=$work/bloom-docs
    rm -rf "$crawl"
    cp -r "$template" "$crawl"
    cp "$history" "$crawl/history.v1.tsv.zst"
    "$bin" run "$crawl" --scope any --progress-interval 0 2>/dev/null
    rm "$crawl/consumed.txt"
    echo "(d) the rescue's cost: the Rust docs read again (every link seen before), with the 8 M-URL history:"
    local b label
    for b in "$bin" ${BASELINE:+"$BASELINE"}; do
        label=this
        [ "$b" = "$bin" ] || label="BASELINE ($BASELINE)"
        for r in 1 2; do
            rm -rf "$crawl.run"
            cp -r "$crawl" "$crawl.run"
            "$gnutime" -f '%e %M %U %S' -o "$work/bloom-docs.time" \
                "$b" run "$crawl.run" --scope any --progress-interval 0 2>"$work/bloom-docs.report"
            echo "    $label: $(secs "$work/bloom-docs.time") s, $(cpu "$work/bloom-docs.time") s of CPU, peak RSS $(( $(rss_kb "$work/bloom-docs.time") / 1024 )) MiB; $(grep '^rescued:' "$work/bloom-docs.report" | sed 's/^rescued: *//')"
        done
    done
    [ -n "${BASELINE:-}" ] || echo "    (BASELINE=another segmenter build, one without the rescue, runs the same for comparison)"
    rm -rf "$crawl" "$crawl.run"

    # (e) The design not chosen.
    echo "(e) a scalable Bloom filter (layers doubling from 1 M URLs) against one rebuilt filter, 10 M URLs:"
    "$examples/bloom-bench" layers "$n" 1000000 | sed 's/^/    /'
    echo "load average after: $(loadavg)"
}

case $what in
docs) bench_docs ;;
urls) bench_urls ;;
backlog) bench_backlog ;;
history) bench_history ;;
history-rounds) bench_history_rounds ;;
sitemap) bench_sitemap ;;
bloom) bench_bloom ;;
all) bench_docs; bench_urls; bench_backlog; bench_history; bench_sitemap; bench_bloom ;;
*) echo "usage: $0 [docs|urls|backlog|history|history-rounds|sitemap|bloom|all]" >&2; exit 2 ;;
esac
