//! Which of a host's waiting URLs enter a round first (`[segmenter]
//! order`): a page many fetched pages link to, one hop further than pages
//! that wait with one in-link each, goes ahead of them under `score` and
//! after them under `discovery`; both crawls end with the same pages.

use crate::support;

use std::collections::BTreeSet;
use std::time::Duration;

use common::crawldir::CrawlDir;
use testkit::server::{Request, Response, Server};

/// The per-host cap of the test's crawls.
const CAP: usize = 3;
/// Pages the home page links to (one in-link each).
const FIRST: usize = 9;
/// Bound of one crawl.
const STEP: Duration = Duration::from_secs(120);

/// Home links `/p0`..`/p8`; the first `CAP` of them (which round 2 takes,
/// by URL) each link `/hub`, so that round 3 finds it with `CAP` in-links
/// at hop 2, beside six pages of hop 1 with one in-link each.
fn site(req: &Request) -> Response {
    match req.path() {
        "/robots.txt" => Response::not_found(),
        "/" => Response::html(
            (0..FIRST)
                .map(|i| format!("<a href=/p{i}>p</a>"))
                .collect::<String>(),
        ),
        p if p.starts_with("/p") => {
            let i: usize = p[2..].parse().unwrap_or(usize::MAX);
            match i < CAP {
                true => Response::html("<a href=/hub>hub</a>"),
                false => Response::html(format!("<p>{p}</p>")),
            }
        }
        "/hub" => Response::html("<p>hub</p>"),
        _ => Response::not_found(),
    }
}

/// The paths of each segment, in segment order.
fn segments(crawl: &CrawlDir) -> Vec<BTreeSet<String>> {
    crawl
        .segment_ids()
        .unwrap()
        .iter()
        .map(|id| {
            support::zstdcat(&crawl.segment_path(id))
                .lines()
                .map(|line| {
                    let url = url::Url::parse(line.split('\t').nth(1).unwrap()).unwrap();
                    url.path().to_string()
                })
                .collect()
        })
        .collect()
}

/// Crawls the site to its end with `order`; the paths of each segment and
/// the paths the server was asked for.
fn crawl(order: &str) -> (Vec<BTreeSet<String>>, BTreeSet<String>) {
    let server = Server::builder()
        .host("www.order.test", site)
        .start()
        .unwrap();
    let (scratch, crawl) = support::loopback_crawl(
        &format!("order-{order}"),
        &server,
        "",
        "min_delay = \"10ms\"\ndelay_factor = 0\n",
        &format!(
            "[crawl]\nmin_free_disk = 0\n[segmenter]\nmax_per_host = {CAP}\n\
             order = \"{order}\"\n"
        ),
    );
    let seeds = scratch.path().join("seeds.txt");
    std::fs::write(&seeds, format!("{}\n", server.url("www.order.test", "/"))).unwrap();
    support::crawl_seeds_to_the_end(scratch.path(), &crawl, &seeds, STEP);
    let asked = server
        .logs()
        .iter()
        .filter(|e| e.target != "/robots.txt")
        .map(|e| e.target.to_string())
        .collect();
    (segments(&CrawlDir::new(&crawl)), asked)
}

#[test]
fn the_score_order_takes_the_most_linked_page_first_and_ends_with_the_same_pages() {
    let (by_score, asked_by_score) = crawl("score");
    let (by_discovery, asked_by_discovery) = crawl("discovery");
    let hub = "/hub".to_string();
    // Round 3 (the third segment): the hub and two pages of hop 1 under
    // `score`; three pages of hop 1 under `discovery`.
    assert!(by_score.len() >= 3 && by_discovery.len() >= 3);
    assert_eq!(
        by_score[2],
        BTreeSet::from([hub.clone(), "/p3".into(), "/p4".into()]),
        "score: {by_score:?}"
    );
    assert_eq!(
        by_discovery[2],
        BTreeSet::from(["/p3".into(), "/p4".into(), "/p5".into()]),
        "discovery: {by_discovery:?}"
    );
    // Every page once, whatever the order.
    assert_eq!(asked_by_score, asked_by_discovery);
    assert_eq!(asked_by_score.len(), 1 + FIRST + 1);
    assert!(asked_by_score.contains(&hub));
}
