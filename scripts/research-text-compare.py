"""The text of WET records against resiliparse's extract_plain_text, for
scripts/bench-research.sh.

    research-text-compare.py OURS.jsonl FILE.warc.gz...

Reads the 2xx HTML pages of the WARC files with FastWARC, runs
resiliparse's HTMLTree.parse_from_bytes and extract_plain_text on each
(one thread; only those two calls are timed, in CPU seconds), then compares
each page's text with ours (OURS.jsonl, written by the bench_text example
over the same files): the Jaccard similarity of the two word multisets
(lower-case runs of letters and digits; the title, which a WET record
starts with, is added to resiliparse's text). Prints resiliparse's MB/s of
HTML, the median and the quantiles of the similarity, and every page below
0.8 with the words that only one side has.
"""

import json
import re
import statistics
import sys
import time
from collections import Counter

from fastwarc.warc import ArchiveIterator, WarcRecordType
from resiliparse.extract.html2text import extract_plain_text
from resiliparse.parse.html import HTMLTree

WORD = re.compile(r"\w+")


def pages(files):
    for f in files:
        with open(f, "rb") as stream:
            for rec in ArchiveIterator(stream, record_types=WarcRecordType.response):
                http = rec.http_headers
                if http is None or not 200 <= http.status_code < 300:
                    continue
                ctype = http.get("Content-Type", "")
                if "html" not in ctype:
                    continue
                yield rec.headers["WARC-Target-URI"], rec.reader.read()


def words(text):
    return Counter(WORD.findall(text.lower()))


def jaccard(a, b):
    union = sum((a | b).values())
    return 1.0 if union == 0 else sum((a & b).values()) / union


def main():
    ours = {}
    with open(sys.argv[1], encoding="utf-8") as f:
        for line in f:
            p = json.loads(line)
            ours[p["url"]] = (p["title"] or "") + "\n" + p["text"]
    docs = list(pages(sys.argv[2:]))
    html_bytes = sum(len(b) for _, b in docs)
    theirs = {}
    spent = 0.0
    for url, body in docs:
        start = time.process_time()
        tree = HTMLTree.parse_from_bytes(body, "utf-8")
        text = extract_plain_text(
            tree, preserve_formatting=True, list_bullets=False, alt_texts=False
        )
        spent += time.process_time() - start
        theirs[url] = (tree.title or "") + "\n" + text
    print(f"resiliparse pages {len(docs)} html_bytes {html_bytes} seconds {spent:.3f} "
          f"mb_per_s {html_bytes / 1e6 / spent:.1f}")
    scores = []
    low = []
    for url, text in theirs.items():
        if url not in ours:
            continue
        a, b = words(ours[url]), words(text)
        s = jaccard(a, b)
        scores.append(s)
        if s < 0.8:
            only_ours = [w for w, _ in (a - b).most_common(6)]
            only_theirs = [w for w, _ in (b - a).most_common(6)]
            low.append((s, url, sum(a.values()), sum(b.values()), only_ours, only_theirs))
    scores.sort()
    q = lambda p: scores[min(len(scores) - 1, int(p * len(scores)))]
    print(f"jaccard pages {len(scores)} median {statistics.median(scores):.4f} "
          f"p1 {q(0.01):.3f} p5 {q(0.05):.3f} p25 {q(0.25):.3f} below_0.8 {len(low)}")
    for s, url, na, nb, oa, ob in sorted(low):
        print(f"  {s:.3f} {url} words ours {na} theirs {nb}; only ours: {' '.join(oa)}; "
              f"only theirs: {' '.join(ob)}")


if __name__ == "__main__":
    main()
