#!/usr/bin/env python3
"""order-model.py: a model of what a crawl with a page budget fetches
first, on a web known in full, to compare orders before building them.

    scale-web graph --hosts 200 --pages 50 >graph.tsv
    scale-web pagerank --hosts 200 --pages 50 >pagerank.tsv
    scripts/order-model.py graph.tsv pagerank.tsv --budget 1095 --per-host 2

It plays the crawl's rounds over the graph (`scale-web graph`: id, status,
hops, URL, links): from the seeds (the URLs at hop 0), each round takes the
best `--per-host` waiting URLs of each host, then the best of those across
hosts up to the round's share of the budget (`--pace`, at least a
sixteenth of the budget, as `budget_pace` does), fetches them and learns
their links, until the budget is spent. It prints, for each order, the
share of the web's PageRank (`scale-web pagerank`) the fetched URLs hold
and the rounds it took. The orders:
  discovery  fewest hops, then most in-links (the segmenter's `discovery`)
  inlinks    most in-links from the pages fetched so far (`score`)
  opic       most cash: each fetched page hands the cash it gathered to its
             links in equal parts, the seeds starting with one unit between
             them (OPIC, Abiteboul et al. 2003); not built in the segmenter
  pagerank   the true PageRank: what a perfect score would do under the
             same caps and pace (the bound of any score)
It is a model: the real crawl also counts robots.txt refusals and the URLs
of a round that fail; on the scale web it gives the benchmark's figures to
within 0.01 (see docs/benchmarks.md, Ordering benchmark).
"""
import argparse
import collections
import math
import re
import sys

ORDERS = ("discovery", "inlinks", "opic", "pagerank")


def read_graph(path):
    """id -> (host, hops, links, url)."""
    nodes = {}
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            cols = line.rstrip("\n").split("\t")
            links = [int(x) for x in cols[4].split(",")] if len(cols) > 4 and cols[4] else []
            host = re.match(r"[a-z]+://([^/:]+)", cols[3]).group(1)
            nodes[int(cols[0])] = (host, int(cols[2]), links, cols[3])
    return nodes


def read_pagerank(path, nodes):
    """id -> PageRank, URLs matched without their port."""
    unport = lambda u: re.sub(r":\d+/", "/", u, count=1)
    by_url = {}
    with open(path) as f:
        for line in f:
            url, value = line.rstrip("\n").split("\t")
            by_url[unport(url)] = float(value)
    return {i: by_url.get(unport(n[3]), 0.0) for i, n in nodes.items()}


def crawl(nodes, rank, budget, per_host, pace, order):
    """The PageRank share the order fetches, and its rounds."""
    seeds = [i for i, n in nodes.items() if n[1] == 0]
    hops = {s: 0 for s in seeds}
    inlinks = collections.Counter()
    cash = collections.defaultdict(float)
    for s in seeds:
        cash[s] = 1.0 / len(seeds)
    fetched, rounds = set(), 0
    keys = {
        "discovery": lambda u: (-hops[u], inlinks[u]),
        "inlinks": lambda u: (inlinks[u], -hops[u]),
        "opic": lambda u: (cash[u], -hops[u]),
        "pagerank": lambda u: (rank[u],),
    }
    key = keys[order]
    best = lambda u: (key(u), -u)
    while len(fetched) < budget:
        waiting = [u for u in hops if u not in fetched]
        if not waiting:
            break
        left = budget - len(fetched)
        quota = left
        if pace < 1 and order != "discovery":
            quota = min(left, max(math.ceil(left * pace), math.ceil(budget / 16), 1))
        by_host = collections.defaultdict(list)
        for u in waiting:
            by_host[nodes[u][0]].append(u)
        chosen = []
        for urls in by_host.values():
            urls.sort(key=best, reverse=True)
            chosen += urls[:per_host]
        chosen.sort(key=best, reverse=True)
        rounds += 1
        for u in chosen[:quota]:
            fetched.add(u)
            links = nodes[u][2]
            given, cash[u] = cash[u], 0.0
            for v in links:
                if v in fetched:
                    continue
                inlinks[v] += 1
                cash[v] += given / len(links)
                hops.setdefault(v, hops[u] + 1)
    return sum(rank[u] for u in fetched), rounds


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("graph", help="the output of `scale-web graph`")
    p.add_argument("pagerank", help="the output of `scale-web pagerank`")
    p.add_argument("--budget", type=int, required=True, help="URLs the crawl may fetch")
    p.add_argument("--per-host", type=int, default=2, help="URLs of a host a round (2)")
    p.add_argument("--pace", type=float, default=0.5,
                   help="share of what is left a round may take, 1 for all (0.5)")
    p.add_argument("--orders", default=",".join(ORDERS), help="orders to play, comma-separated")
    a = p.parse_args()
    orders = a.orders.split(",")
    if any(o not in ORDERS for o in orders) or a.budget < 1 or a.per_host < 1 \
            or not 0 < a.pace <= 1:
        p.error("--orders among %s; --budget, --per-host at least 1; --pace in (0, 1]"
                % ",".join(ORDERS))
    nodes = read_graph(a.graph)
    rank = read_pagerank(a.pagerank, nodes)
    for order in orders:
        share, rounds = crawl(nodes, rank, a.budget, a.per_host, a.pace, order)
        print("%-10s %.4f  %d rounds" % (order, share, rounds))


if __name__ == "__main__":
    sys.exit(main())
