//! Rules per host at work in a whole crawl: a domain's rule gives its host
//! a longer delay (seen in the server's request log) and a smaller cap per
//! round (seen in the segments), while a host without a rule keeps the
//! crawl's; `segmenter status --host` says where each value comes from; a
//! bad rule stops both programs with its line; a rule changed between
//! rounds holds from the next round on, for the URLs already waiting too.

use crate::support;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use common::crawldir::CrawlDir;
use testkit::bins;
use testkit::server::{Request, Response, Server};

/// Pages of each host besides its home page.
const PAGES: usize = 9;
/// The rule's delay and cap, and the crawl's delay.
const RULE_DELAY: Duration = Duration::from_millis(300);
const RULE_CAP: usize = 3;
const CRAWL_DELAY: Duration = Duration::from_millis(20);
/// Bound of one program run.
const STEP: Duration = Duration::from_secs(120);

const RULES: &str = "# the crawl's rules\n[[rule]]\ndomain = \"rules.test\"\n\
                     min_delay = \"300ms\"\nmax_per_host = 3\n";

/// A host of `PAGES` pages, all linked from its home page.
pub(crate) fn site(req: &Request) -> Response {
    match req.path() {
        "/robots.txt" => Response::not_found(),
        "/" => Response::html(
            (0..PAGES)
                .map(|i| format!("<a href=/p{i}>p</a>"))
                .collect::<String>(),
        ),
        p if p.starts_with("/p") => Response::html(format!("<p>{p}</p>")),
        _ => Response::not_found(),
    }
}

/// For each segment, the URLs of each host it holds.
fn segment_hosts(crawl: &CrawlDir) -> Vec<BTreeMap<String, usize>> {
    let mut out = Vec::new();
    for id in crawl.segment_ids().unwrap() {
        let mut hosts: BTreeMap<String, usize> = BTreeMap::new();
        for line in support::zstdcat(&crawl.segment_path(&id)).lines() {
            let url = url::Url::parse(line.split('\t').nth(1).unwrap()).unwrap();
            *hosts
                .entry(url.host_str().unwrap().to_string())
                .or_default() += 1;
        }
        out.push(hosts);
    }
    out
}

#[test]
fn a_domain_rule_sets_its_host_delay_and_cap_and_others_keep_the_crawl_s() {
    let server = Server::builder()
        .host("www.rules.test", site)
        .host("plain.test", site)
        .start()
        .unwrap();
    let (scratch, crawl) = support::loopback_crawl(
        "host-rules",
        &server,
        "",
        &format!(
            "min_delay = \"{}ms\"\ndelay_factor = 0\n",
            CRAWL_DELAY.as_millis()
        ),
        "[crawl]\nmin_free_disk = 0\n",
    );
    std::fs::write(crawl.join(common::rules::RULES_FILE), RULES).unwrap();
    let seeds = scratch.path().join("seeds.txt");
    let text = format!(
        "{}\n{}\n",
        server.url("www.rules.test", "/"),
        server.url("plain.test", "/")
    );
    std::fs::write(&seeds, text).unwrap();
    support::crawl_seeds_to_the_end(scratch.path(), &crawl, &seeds, STEP);

    // Every page of both hosts, once.
    let logs = server.logs();
    for host in ["www.rules.test", "plain.test"] {
        let pages = logs
            .iter()
            .filter(|e| *e.host == *host && e.target.starts_with("/p"))
            .count();
        assert_eq!(pages, PAGES, "pages of {host} asked for");
    }
    // The rule's delay on its host, the crawl's on the other (measured
    // from the server's clock: the end of a response to the next request).
    let slow = testkit::server::politeness_violations(&logs, |host| match host {
        "www.rules.test" => RULE_DELAY.saturating_sub(support::CLOCK_SLACK),
        _ => CRAWL_DELAY.saturating_sub(support::CLOCK_SLACK),
    });
    assert!(
        slow.is_empty(),
        "requests too close: {}",
        support::some(&slow, 5)
    );
    let shortest_gap = |host: &str| {
        let mut starts: Vec<_> = logs.iter().filter(|e| *e.host == *host).collect();
        starts.sort_by_key(|e| e.start);
        starts
            .windows(2)
            .map(|w| w[1].start.saturating_duration_since(w[0].end))
            .min()
            .unwrap()
    };
    assert!(
        shortest_gap("plain.test") < RULE_DELAY / 2,
        "the host without a rule waited {:?} at least: the rule reached it",
        shortest_gap("plain.test")
    );
    // The rule's cap in every segment; the other host took more at once.
    let segments = segment_hosts(&CrawlDir::new(&crawl));
    let most = |host: &str| {
        segments
            .iter()
            .map(|s| s.get(host).copied().unwrap_or(0))
            .max()
            .unwrap_or(0)
    };
    assert_eq!(most("www.rules.test"), RULE_CAP, "segments: {segments:?}");
    assert_eq!(most("plain.test"), PAGES, "segments: {segments:?}");

    // `status --host` says which rule sets each value of a host.
    let explain = |host: &str| {
        let out = bins::run_within(
            Command::new(bins::bin_path("segmenter"))
                .args(["status", "--host", host])
                .arg(&crawl),
            scratch.path(),
            0,
            STEP,
        );
        out.stdout
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
    };
    let ruled = explain("WWW.rules.test");
    for want in [
        "line 2 domain rules.test",
        "min_delay 300ms line 2 (domain rules.test)",
        "max_per_host 3 line 2 (domain rules.test)",
    ] {
        assert!(ruled.iter().any(|l| l == want), "no `{want}` in {ruled:#?}");
    }
    let plain = explain("plain.test");
    assert!(
        plain
            .iter()
            .any(|l| l.starts_with("min_delay 20ms crawl-wide")),
        "{plain:#?}"
    );

    // A bad rule stops both programs before they do anything, naming the
    // file, the line and the key.
    std::fs::write(
        crawl.join(common::rules::RULES_FILE),
        format!("{RULES}\n[[rule]]\nhost = \"plain.test\"\nmin_delay = \"soon\"\n"),
    )
    .unwrap();
    let want = format!("{}:9: min_delay", common::rules::RULES_FILE);
    for (program, cmd) in [("segmenter", "run"), ("fetcher", "fetch")] {
        let out = bins::run_within(
            Command::new(bins::bin_path(program)).arg(cmd).arg(&crawl),
            scratch.path(),
            2,
            STEP,
        );
        assert!(
            out.stderr.contains(&want),
            "{program} {cmd}: no `{want}` in:\n{}",
            out.stderr
        );
    }
}

/// Runs `scripts/crawl.sh CRAWL` (from `dir`) with `args`, to exit code 0.
pub(crate) fn crawl_sh(crawl: &std::path::Path, dir: &std::path::Path, args: &[&str]) {
    bins::run_within(
        Command::new(support::crawl_sh())
            .arg(crawl)
            .arg("--bin")
            .arg(bins::bin_dir())
            .args(args),
        dir,
        0,
        STEP,
    );
}

/// A crawl named `name` seeded with the home page of `host`, with
/// `fetcher` in its `[fetcher]` section and the host rules `rules`, after
/// its first round: the scratch directory, the crawl and its rules file.
fn first_round(
    server: &Server,
    name: &str,
    host: &str,
    fetcher: &str,
    rules: &str,
) -> (testkit::TempDir, PathBuf, PathBuf) {
    let (scratch, crawl) =
        support::loopback_crawl(name, server, "", fetcher, "[crawl]\nmin_free_disk = 0\n");
    let rules_file = crawl.join(common::rules::RULES_FILE);
    std::fs::write(&rules_file, rules).unwrap();
    let seeds = scratch.path().join("seeds.txt");
    std::fs::write(&seeds, format!("{}\n", server.url(host, "/"))).unwrap();
    let seeds_arg = seeds.to_str().unwrap();
    crawl_sh(
        &crawl,
        scratch.path(),
        &["--seeds", seeds_arg, "--rounds", "1"],
    );
    (scratch, crawl, rules_file)
}

#[test]
fn a_rule_changed_between_rounds_applies_from_the_next_round_to_the_urls_waiting() {
    let server = Server::builder()
        .host("www.rules.test", site)
        .start()
        .unwrap();
    // Round 1 fetches the home page and plans 2 of its 9 links: 7 wait in
    // the backlog.
    let (scratch, crawl, rules) = first_round(
        &server,
        "host-rules-changed",
        "www.rules.test",
        &format!(
            "min_delay = \"{}ms\"\ndelay_factor = 0\n",
            CRAWL_DELAY.as_millis()
        ),
        "[[rule]]\nhost = \"www.rules.test\"\nmax_per_host = 2\n",
    );
    let dir = CrawlDir::new(&crawl);
    let counts = |segments: &[BTreeMap<String, usize>]| -> Vec<usize> {
        let per = |s: &BTreeMap<String, usize>| s.get("www.rules.test").copied().unwrap_or(0);
        segments.iter().map(per).collect()
    };
    assert_eq!(counts(&segment_hosts(&dir)), [1, 2], "after round 1");

    // The operator raises the host's cap and delay; the next rounds take
    // the waiting URLs 5 at a time, at the new delay.
    std::fs::write(
        &rules,
        "[[rule]]\nhost = \"www.rules.test\"\nmax_per_host = 5\nmin_delay = \"300ms\"\n",
    )
    .unwrap();
    crawl_sh(&crawl, scratch.path(), &[]);
    assert_eq!(counts(&segment_hosts(&dir)), [1, 2, 5, 2], "whole crawl");

    let logs = server.logs();
    let asked = |prefix: &str| -> Vec<_> {
        let mut hits: Vec<_> = (logs.iter())
            .filter(|e| e.target.starts_with(prefix))
            .cloned()
            .collect();
        hits.sort_by_key(|e| e.start);
        hits
    };
    let pages = asked("/p");
    assert_eq!(pages.len(), PAGES, "pages asked for");
    // Round 1, before the change: robots.txt then the home page at the
    // crawl's delay.
    let (robots, home) = (asked("/robots.txt"), asked("/"));
    let gap = home[0].start.saturating_duration_since(robots[0].end);
    assert!(
        gap < RULE_DELAY.saturating_sub(support::CLOCK_SLACK),
        "round 1 waited {gap:?} before the home page"
    );
    // Every later request at the changed rule's delay.
    let close = testkit::server::politeness_violations(&pages, |_| {
        RULE_DELAY.saturating_sub(support::CLOCK_SLACK)
    });
    assert!(
        close.is_empty(),
        "requests closer than the changed rule's delay: {}",
        support::some(&close, 5)
    );
}

/// The home page of `www.scope.test`: links to four pages under each of
/// `/a/`, `/b/` and `/private/`, to `/go` (a redirect to `/b/9`, linked
/// from nowhere), and to two pages under each of `/docs/` and `/else/` of
/// `docs.other.test`, a host outside the crawl's scope.
fn scoped_site(req: &Request) -> Response {
    let port = req.local_addr().port();
    match req.path() {
        "/robots.txt" => Response::not_found(),
        "/" => {
            let mut links = String::from("<a href=/go>x</a>\n");
            for dir in ["a", "b", "private"] {
                for i in 0..4 {
                    links += &format!("<a href=/{dir}/{i}>x</a>\n");
                }
            }
            for dir in ["docs", "else"] {
                for i in 0..2 {
                    links += &format!("<a href=http://docs.other.test:{port}/{dir}/{i}>x</a>\n");
                }
            }
            Response::html(links)
        }
        "/go" => Response::redirect(302, "/b/9"),
        p => Response::html(format!("<p>{p}</p>")),
    }
}

#[test]
fn allow_and_deny_patterns_widen_and_narrow_the_scope_of_waiting_urls_too() {
    let server = Server::builder()
        .host("www.scope.test", scoped_site)
        .host("docs.other.test", scoped_site)
        .start()
        .unwrap();
    let rules_text = |deny: &str| {
        format!(
            "[[rule]]\nhost = \"www.scope.test\"\nmax_per_host = 2\ndeny = [{deny}]\n\n\
             [[rule]]\nhost = \"docs.other.test\"\nallow = [\"/docs/\"]\n"
        )
    };
    // Round 1: `/b/` is out of scope (the fetcher does not follow the
    // redirect there either); 2 of the 9 pages left are planned,
    // the others (every `/private/` page among them) wait in the backlog.
    let (scratch, crawl, rules) = first_round(
        &server,
        "host-rules-scope",
        "www.scope.test",
        "min_delay = \"1ms\"\ndelay_factor = 0\nfollow_redirects = 2\n",
        &rules_text("\"/b/\""),
    );
    let backlog = support::zstdcat(&CrawlDir::new(&crawl).backlog_path());
    let waiting = backlog.lines().filter(|l| l.contains("/private/")).count();
    assert_eq!(waiting, 4, "backlog after round 1:\n{backlog}");

    // The operator denies `/private/` too: the URLs waiting are dropped.
    std::fs::write(&rules, rules_text("\"/b/\", \"/private/\"")).unwrap();
    crawl_sh(&crawl, scratch.path(), &[]);

    let mut asked: BTreeMap<String, usize> = BTreeMap::new();
    for e in server.logs() {
        if e.target != "/robots.txt" && e.target != "/" {
            *asked.entry(format!("{}{}", e.host, e.target)).or_default() += 1;
        }
    }
    let mut want: Vec<String> = (0..4).map(|i| format!("www.scope.test/a/{i}")).collect();
    want.push("www.scope.test/go".into());
    want.extend((0..2).map(|i| format!("docs.other.test/docs/{i}")));
    want.sort();
    assert_eq!(
        asked.keys().cloned().collect::<Vec<_>>(),
        want,
        "pages asked for: {asked:?}"
    );
    assert!(asked.values().all(|&n| n == 1), "{asked:?}");
    // Both keys are applied: `status --host` does not mark them, no log
    // warns of them.
    let out = bins::run_within(
        Command::new(bins::bin_path("segmenter"))
            .args(["status", "--host", "www.scope.test"])
            .arg(&crawl),
        scratch.path(),
        0,
        STEP,
    );
    let deny = out.stdout.lines().find(|l| l.starts_with("deny "));
    assert!(
        deny.is_some_and(|l| l.contains("\"/private/\"") && !l.contains("not applied")),
        "{}",
        out.stdout
    );
    for entry in std::fs::read_dir(crawl.join("logs")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            !text.contains("not applied"),
            "{}: warns of keys applied:\n{text}",
            path.display()
        );
    }
}
