//! Many short rounds, as a crawl run from cron for weeks makes them, with
//! every source a segment merges at work at once: refetches come due every
//! second (`recrawl_interval` 1 s), each fetch is cut after a few requests
//! per host (`time_limit`) so that every round leaves URLs over, and a
//! small per-host cap (`max_per_host`) keeps a backlog. Each segment must
//! hold each URL once, and no URL may be asked twice in one round (from the
//! server's own request log), on one machine (`scripts/crawl.sh`) and in
//! every shard of a sharded crawl (`fetcher fetch --shard J` and `segmenter
//! run`).

use crate::support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::crawldir::CrawlDir;
use testkit::TempDir;
use testkit::bins;
use testkit::server::{ClockBase, Request, Response, Server};

use support::{crawl_sh, zstdcat};

/// Hosts of the web, and pages of each.
const HOSTS: [&str; 3] = ["a.test", "b.test", "c.test"];
const PAGES: usize = 24;
/// Rounds crawled.
const ROUNDS: usize = 16;
/// Bound of one program run.
const STEP: Duration = Duration::from_secs(120);

/// A host of `PAGES` pages: the home page links to all, each page to the
/// next two.
fn site(req: &Request) -> Response {
    let link = |i: usize| format!("<a href=/p{}>p</a>", i % PAGES);
    match req.path() {
        "/robots.txt" => Response::not_found(),
        "/" => Response::html((0..PAGES).map(link).collect::<String>()),
        p => match p.strip_prefix("/p").and_then(|n| n.parse::<usize>().ok()) {
            Some(i) => Response::html(format!("<p>{i}</p>{}{}", link(i + 1), link(i + 2))),
            None => Response::not_found(),
        },
    }
}

/// The web, a crawl directory set up for it (with `shards` shards when
/// more than one) and its seeds injected.
fn setup(name: &str, shards: u32) -> (Server, TempDir, PathBuf) {
    let mut builder = Server::builder();
    for host in HOSTS {
        builder = builder.host(host, site);
    }
    let server = builder.start().unwrap();
    // The segmenter plans 2 s rounds of one request per 100 ms and host
    // (about 19 URLs), of which `max_per_host` take 6; the fetcher stops
    // after 400 ms (about 4 requests per host): every round leaves URLs
    // over and keeps a backlog, and a page is due again a second after
    // its fetch.
    let (scratch, crawl) = support::loopback_crawl(
        name,
        &server,
        "",
        "min_delay = \"100ms\"\ndelay_factor = 0\ntime_limit = \"400ms\"\n",
        "[crawl]\nround_time = \"2s\"\nmin_free_disk = 0\n\
         [segmenter]\nmax_per_host = 6\nrecrawl_interval = \"1s\"\nrecrawl_min = \"1s\"\n\
         recrawl_max = \"4s\"\n",
    );
    let seeds = scratch.path().join("seeds.txt");
    let text: String = HOSTS
        .iter()
        .map(|h| format!("{}\n", server.url(h, "/")))
        .collect();
    std::fs::write(&seeds, text).unwrap();
    let mut inject = Command::new(bins::bin_path("segmenter"));
    inject.arg("inject").arg(&crawl).arg(&seeds);
    if shards > 1 {
        inject.args(["--shards", &shards.to_string()]);
    }
    bins::run_within(&mut inject, scratch.path(), 0, STEP);
    (server, scratch, crawl)
}

/// The crawl's views: the crawl itself, or each of its shards.
fn views(crawl: &Path, shards: u32) -> Vec<CrawlDir> {
    let top = CrawlDir::new(crawl);
    match shards {
        1 => vec![top],
        n => (0..n).map(|j| top.shard(j)).collect(),
    }
}

/// What the segments of `views` held: for each segment, the URLs it
/// holds more than once with the `via` of each copy; and the lines of
/// each `via` over all segments (`lines` for all, `urls` for the distinct
/// URLs of each segment, summed).
fn segment_lines(views: &[CrawlDir]) -> (Vec<String>, BTreeMap<String, usize>) {
    let mut twice = Vec::new();
    let mut vias: BTreeMap<String, usize> = BTreeMap::new();
    for view in views {
        for id in view.segment_ids().unwrap() {
            let path = view.segment_path(&id);
            let mut copies: BTreeMap<String, Vec<String>> = BTreeMap::new();
            let text = zstdcat(&path);
            *vias.entry("lines".into()).or_default() += text.lines().count();
            for line in text.lines() {
                let f: Vec<&str> = line.split('\t').collect();
                *vias.entry(f[4].to_string()).or_default() += 1;
                copies
                    .entry(f[1].to_string())
                    .or_default()
                    .push(format!("{} (digest {})", f[4], f[9]));
            }
            *vias.entry("urls".into()).or_default() += copies.len();
            for (url, c) in copies.into_iter().filter(|(_, c)| c.len() > 1) {
                twice.push(format!("{}: {url} as {}", path.display(), c.join(", ")));
            }
        }
    }
    (twice, vias)
}

/// The URLs the server was asked more than once during one fetcher run
/// (between its `stats.json`'s `started` and `finished`), robots.txt aside.
fn asked_twice_in_a_round(server: &Server, clock: &ClockBase, views: &[CrawlDir]) -> Vec<String> {
    let mut windows = Vec::new();
    for view in views {
        for id in view.completed_runs().unwrap() {
            let text = std::fs::read_to_string(view.fetched_dir(&id).join("stats.json")).unwrap();
            let stats: serde_json::Value = serde_json::from_str(&text).unwrap();
            let at = |k: &str| {
                let s = stats[k].as_str().unwrap();
                let t = common::timefmt::parse_iso(s).unwrap_or_else(|| panic!("{k}: {s}"));
                common::timefmt::unix_millis(t)
            };
            windows.push((
                view.root().display().to_string(),
                id,
                at("started"),
                at("finished"),
            ));
        }
    }
    let mut twice = Vec::new();
    for (root, id, started, finished) in windows {
        let mut asked: BTreeMap<String, usize> = BTreeMap::new();
        for host in HOSTS {
            for e in server.log(host) {
                let t = clock.unix_millis(e.start) as i64;
                if e.target != "/robots.txt" && t >= started && t <= finished {
                    *asked.entry(format!("{host}{}", e.target)).or_default() += 1;
                }
            }
        }
        for (url, n) in asked.into_iter().filter(|(_, n)| *n > 1) {
            twice.push(format!("{root} run {id}: {url} asked {n} times"));
        }
    }
    twice
}

/// Checks the crawl after its rounds: one line per URL in every segment,
/// no URL asked twice in a round, and every source at work.
fn check(server: &Server, clock: &ClockBase, views: &[CrawlDir]) {
    let (twice, vias) = segment_lines(views);
    let asked = asked_twice_in_a_round(server, clock, views);
    eprintln!("segment lines (all, distinct URLs, by via): {vias:?}");
    assert!(
        twice.is_empty() && asked.is_empty(),
        "{} URL(s) twice in a segment:\n{}\n{} URL(s) asked twice in a round:\n{}",
        twice.len(),
        support::some(&twice, 30),
        asked.len(),
        support::some(&asked, 30)
    );
    for via in ["recrawl", "leftover", "backlog"] {
        assert!(
            vias.get(via).copied().unwrap_or(0) > 0,
            "no segment line came as {via}: {vias:?}"
        );
    }
    testkit::server::assert_polite_by_host(&server.logs(), |_| Duration::from_millis(97));
}

#[test]
fn each_url_once_in_every_segment_over_many_short_rounds() {
    let clock = ClockBase::now();
    let (server, scratch, crawl) = setup("short-rounds", 1);
    // As from cron: several runs of crawl.sh, a few rounds each.
    let mut rounds = 0;
    while rounds < ROUNDS {
        let out = bins::run_within(
            Command::new(crawl_sh())
                .arg(&crawl)
                .arg("--bin")
                .arg(bins::bin_dir())
                .args(["--rounds", "4"]),
            scratch.path(),
            0,
            STEP,
        );
        let done = out
            .stdout
            .lines()
            .filter(|l| l.starts_with("round "))
            .count();
        assert!(done > 0, "no round:\n{}", out.stdout);
        rounds += done;
    }
    check(&server, &clock, &views(&crawl, 1));
}

#[test]
fn each_url_once_in_every_segment_of_every_shard() {
    const SHARDS: u32 = 2;
    let clock = ClockBase::now();
    let (server, scratch, crawl) = setup("short-rounds-shards", SHARDS);
    let views = views(&crawl, SHARDS);
    for _ in 0..ROUNDS {
        for (j, view) in views.iter().enumerate() {
            if !view.pending_segments().unwrap().is_empty() {
                bins::run_within(
                    Command::new(bins::bin_path("fetcher"))
                        .arg("fetch")
                        .arg(&crawl)
                        .args(["--progress", "none", "--shard", &j.to_string()]),
                    scratch.path(),
                    0,
                    STEP,
                );
            }
        }
        bins::run_within(
            Command::new(bins::bin_path("segmenter"))
                .arg("run")
                .arg(&crawl),
            scratch.path(),
            0,
            STEP,
        );
    }
    check(&server, &clock, &views);
}
