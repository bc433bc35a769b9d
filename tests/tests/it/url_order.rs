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

/// The home page links `/p0`..`/p8` and `/x`; the pages a first round takes
/// (`/p0`..`/p2`, by URL) each link `/x`.
fn late_site(req: &Request) -> Response {
    match req.path() {
        "/robots.txt" => Response::not_found(),
        "/" => Response::html(
            (0..FIRST)
                .map(|i| format!("<a href=/p{i}>p</a>"))
                .chain(std::iter::once("<a href=/x>x</a>".to_string()))
                .collect::<String>(),
        ),
        p if p.starts_with("/p") => {
            let i: usize = p[2..].parse().unwrap_or(usize::MAX);
            match i < CAP {
                true => Response::html("<a href=/x>x</a>"),
                false => Response::html(format!("<p>{p}</p>")),
            }
        }
        "/x" => Response::html("<p>x</p>"),
        _ => Response::not_found(),
    }
}

/// The round reports' JSON (`logs/segmenter-*.json`) of `crawl`.
fn round_reports(crawl: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_dir(crawl.join("logs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with("segmenter-") && name.ends_with(".json")
        })
        .map(|p| serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap())
        .collect()
}

#[test]
fn a_url_waiting_in_the_backlog_gains_the_links_later_rounds_find_to_it() {
    let server = Server::builder()
        .host("www.order.test", late_site)
        .start()
        .unwrap();
    let (scratch, crawl) = support::loopback_crawl(
        "order-late",
        &server,
        "",
        "min_delay = \"10ms\"\ndelay_factor = 0\n",
        &format!(
            "[crawl]\nmin_free_disk = 0\n[segmenter]\nmax_per_host = {CAP}\norder = \"score\"\n"
        ),
    );
    let seeds = scratch.path().join("seeds.txt");
    std::fs::write(&seeds, format!("{}\n", server.url("www.order.test", "/"))).unwrap();
    support::crawl_seeds_to_the_end(scratch.path(), &crawl, &seeds, STEP);
    let by_round = segments(&CrawlDir::new(&crawl));
    // Round 2 takes /p0../p2 (one in-link each, like /x then); they link
    // /x, which waits in the backlog: its 1 + 3 in-links put it first in
    // round 3, ahead of /p3.. (without what it gained, it would come last,
    // by its URL).
    assert!(by_round.len() >= 3, "{by_round:?}");
    assert_eq!(
        by_round[1],
        BTreeSet::from(["/p0".into(), "/p1".into(), "/p2".into()]),
        "{by_round:?}"
    );
    assert!(by_round[2].contains("/x"), "{by_round:?}");
    let x = support::zstdcat(
        &CrawlDir::new(&crawl).segment_path(&CrawlDir::new(&crawl).segment_ids().unwrap()[2]),
    )
    .lines()
    .find(|l| l.split('\t').nth(1).is_some_and(|u| u.ends_with("/x")))
    .map(|l| l.split('\t').nth(3).unwrap().to_string());
    assert_eq!(
        x.as_deref(),
        Some("4"),
        "its score in the segment: its in-links"
    );
    // The round report counts the links added.
    let added: Vec<u64> = round_reports(&crawl)
        .iter()
        .filter_map(|v| v.pointer("/selection/waiting_links")?.as_u64())
        .collect();
    assert!(added.contains(&3), "{added:?}");
}

/// A page linking `/p0` .. `/p{n-1}`.
fn links_to_pages(n: usize) -> Response {
    Response::html(
        (0..n)
            .map(|i| format!("<a href=/p{i}>p</a>"))
            .collect::<String>(),
    )
}

/// Two hosts whose home pages each link `/p0`..`/p5`.
fn two_hosts_site(req: &Request) -> Response {
    match req.path() {
        "/robots.txt" => Response::not_found(),
        "/" => links_to_pages(6),
        p => Response::html(format!("<p>{p}</p>")),
    }
}

#[test]
fn the_page_budget_takes_the_best_of_all_hosts_and_a_host_weight_puts_its_urls_first() {
    let server = Server::builder()
        .host("a.order.test", two_hosts_site)
        .host("b.order.test", two_hosts_site)
        .start()
        .unwrap();
    let (scratch, crawl) = support::loopback_crawl(
        "order-budget",
        &server,
        "",
        "min_delay = \"10ms\"\ndelay_factor = 0\n",
        "[crawl]\nmin_free_disk = 0\n[segmenter]\nmax_per_host = 100\norder = \"score\"\n\
         max_crawl_pages = 6\n",
    );
    // Every page has one in-link: without the weight, a.order.test's come
    // first (the order of hosts); with it, b.order.test's.
    std::fs::write(
        crawl.join("host-rules.toml"),
        "version = 1\n\n[[rule]]\nhost = \"b.order.test\"\nweight = 2\n",
    )
    .unwrap();
    let seeds = scratch.path().join("seeds.txt");
    std::fs::write(
        &seeds,
        format!(
            "{}\n{}\n",
            server.url("a.order.test", "/"),
            server.url("b.order.test", "/")
        ),
    )
    .unwrap();
    let out = support::crawl_sh_seeds(&crawl, &seeds, scratch.path(), 0, STEP);
    assert!(out.stdout.contains("held by a budget"), "{}", out.stdout);
    let asked: BTreeSet<String> = server
        .logs()
        .iter()
        .filter(|e| e.target != "/robots.txt")
        .map(|e| format!("{}{}", e.host, e.target))
        .collect();
    let on = |host: &str| asked.iter().filter(|a| a.starts_with(host)).count();
    // The two home pages, then the four pages the budget leaves room for,
    // all of the weighted host.
    assert_eq!(
        (on("a.order.test"), on("b.order.test")),
        (1, 5),
        "{asked:?}"
    );
    let status = support::status_json(&crawl);
    assert_eq!(status["history_urls"], 6, "{status}");
    assert_eq!(status["backlog_urls"], 8, "{status}");
    let cut: Vec<u64> = round_reports(&crawl)
        .iter()
        .filter_map(|v| v.pointer("/selection/cut/crawl-pages/urls")?.as_u64())
        .collect();
    assert!(cut.contains(&8), "the round that cut: {cut:?}");
    assert!(
        status["round_waiting_score_p50"].as_u64().is_some(),
        "{status}"
    );
}

/// The ordering benchmark (`scripts/bench-order.sh`) run small, so that the
/// script cannot rot: a web of 30 hosts of 20 pages, budgets of 10 % and
/// 25 %, each crawled under both orders. It checks what a user of the
/// benchmark reads: each crawl ended within its budget, fetching only URLs
/// of the web, each once, and under `score` the pages fetched hold no less
/// of the web's PageRank than under `discovery`. No timing is asserted.
#[test]
fn the_ordering_benchmark_runs_and_score_order_holds_no_less_pagerank() {
    let dir = testkit::TempDir::new("order-bench");
    let work = dir.join("work");
    let mut cmd = std::process::Command::new("bash");
    cmd.arg(testkit::repo_root().join("scripts/bench-order.sh"))
        .args(["--hosts", "30", "--pages", "20", "--per-host", "1"])
        .args(["--timeout", "300", "--bin"])
        .arg(testkit::bins::bin_dir())
        .arg("--work")
        .arg(&work);
    let out = testkit::bins::run_within(&mut cmd, &work, 0, Duration::from_secs(900));
    assert!(
        out.stdout.contains("score >= 1.5 x discovery:"),
        "{}",
        out.stdout
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(work.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["wrong"], serde_json::json!([]), "{summary}");
    let rows = summary["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2, "{summary}");
    for row in rows {
        let share = |order: &str| row[order]["share"].as_f64().unwrap();
        let fetched = |order: &str| row[order]["fetched"].as_u64().unwrap();
        let budget = row["budget"].as_u64().unwrap();
        for order in ["discovery", "score"] {
            assert!(
                fetched(order) <= budget && fetched(order) * 10 >= budget * 9,
                "{order}: {} pages for a budget of {budget}",
                fetched(order)
            );
        }
        assert!(share("score") >= share("discovery"), "{row}");
    }
}

/// The home page links `/p0`..`/p7`, and each of them links `/hub`.
fn hub_site(req: &Request) -> Response {
    match req.path() {
        "/robots.txt" => Response::not_found(),
        "/" => links_to_pages(8),
        "/hub" => Response::html("<p>hub</p>"),
        _ => Response::html("<a href=/hub>hub</a>"),
    }
}

/// Crawls `hub_site` to its end under `score` with a budget of 6 URLs and
/// `pace` as `budget_pace` (`None`: the default); the paths asked for.
fn paced_crawl(pace: Option<f64>) -> BTreeSet<String> {
    let server = Server::builder()
        .host("www.order.test", hub_site)
        .start()
        .unwrap();
    let pace = pace.map_or(String::new(), |p| format!("budget_pace = {p:?}\n"));
    let (scratch, crawl) = support::loopback_crawl(
        "order-paced",
        &server,
        "",
        "min_delay = \"10ms\"\ndelay_factor = 0\n",
        &format!(
            "[crawl]\nmin_free_disk = 0\n[segmenter]\nmax_per_host = 100\norder = \"score\"\n\
             max_crawl_pages = 6\n{pace}"
        ),
    );
    let seeds = scratch.path().join("seeds.txt");
    std::fs::write(&seeds, format!("{}\n", server.url("www.order.test", "/"))).unwrap();
    support::crawl_sh_seeds(&crawl, &seeds, scratch.path(), 0, STEP);
    server
        .logs()
        .iter()
        .filter(|e| e.target != "/robots.txt")
        .map(|e| e.target.to_string())
        .collect()
}

/// Spent at once, the budget goes to the first five pages the home page
/// links (one in-link each, by URL), and `/hub`, which they all link, is
/// found too late. Paced (half of what is left a round), the first round
/// takes three of them, and `/hub`, found with three in-links, goes first
/// in the next.
#[test]
fn a_paced_page_budget_chooses_with_the_links_of_earlier_rounds() {
    let paced = paced_crawl(None);
    let at_once = paced_crawl(Some(1.0));
    assert_eq!(paced.len(), 6, "{paced:?}");
    assert_eq!(at_once.len(), 6, "{at_once:?}");
    assert!(paced.contains("/hub"), "{paced:?}");
    assert!(!at_once.contains("/hub"), "{at_once:?}");
}

/// The model of the ordering benchmark's rounds (`scripts/order-model.py`)
/// run on a small scale web's graph, so that it cannot rot: it prints a
/// share of the PageRank and the rounds for each order, and the true
/// PageRank as the score does no worse than discovery.
#[test]
fn the_order_model_plays_each_order_over_the_scale_web() {
    let dir = testkit::TempDir::new("order-model");
    let web = ["--hosts", "30", "--pages", "20", "--port", "80"];
    let scale_web = testkit::bins::bin_dir().join("scale-web");
    let write = |what: &str| {
        let out = std::process::Command::new(&scale_web)
            .arg(what)
            .args(web)
            .output()
            .unwrap();
        assert!(out.status.success(), "scale-web {what}: {out:?}");
        dir.write(&format!("{what}.tsv"), out.stdout)
    };
    let (graph, pagerank) = (write("graph"), write("pagerank"));
    let mut cmd = std::process::Command::new("python3");
    cmd.arg(testkit::repo_root().join("scripts/order-model.py"))
        .arg(&graph)
        .arg(&pagerank)
        .args(["--budget", "60", "--per-host", "1"]);
    let out = testkit::bins::run_within(&mut cmd, dir.path(), 0, Duration::from_secs(120));
    let share = |order: &str| -> f64 {
        let line = out.stdout.lines().find(|l| l.starts_with(order));
        let line = line.unwrap_or_else(|| panic!("no {order} line: {}", out.stdout));
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    for order in ["discovery", "inlinks", "opic", "pagerank"] {
        assert!((0.0..=1.0).contains(&share(order)), "{}", out.stdout);
        assert!(share(order) > 0.0, "{}", out.stdout);
    }
    assert!(share("pagerank") >= share("discovery"), "{}", out.stdout);
}
