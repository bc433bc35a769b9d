//! robots.txt as the server sees it: status policy, redirects, Crawl-delay
//! cap, wildcard rules and the group for our product token.

use crate::support;

use std::time::Duration;

use common::crawllog::{ErrorCode, Status};
use common::segment::Via;
use support::*;
use testkit::server::{Response, Routes, Server};

fn pages(r: Routes, paths: &[&str]) -> Routes {
    paths
        .iter()
        .fold(r, |r, p| r.route(*p, Response::html(format!("page {p}"))))
}

fn fetched_paths(server: &Server, host: &str) -> Vec<String> {
    let mut v: Vec<String> = server
        .log(host)
        .into_iter()
        .map(|e| e.target)
        .filter(|t| !t.ends_with("robots.txt"))
        .collect();
    v.sort();
    v
}

/// How many times `host`'s robots.txt was asked for.
fn robots_fetches(server: &Server, host: &str) -> usize {
    server
        .log(host)
        .iter()
        .filter(|e| e.target == "/robots.txt")
        .count()
}

#[test]
fn status_policy_redirects_and_rules() {
    let paths = [
        "/a",
        "/b",
        "/private/x",
        "/page.php",
        "/page.php?x=1",
        "/mine",
    ];
    let server = Server::builder()
        // 404: everything allowed.
        .host("gone.test", pages(Routes::new().route("/robots.txt", Response::not_found()), &paths))
        // 503: nothing fetched now; the URLs are left for a later run.
        .host("down.test", pages(Routes::new().route("/robots.txt", Response::status(503)), &paths))
        // robots.txt redirected to another path on the host: followed.
        .host(
            "moved.test",
            pages(
                Routes::new()
                    .route("/robots.txt", Response::redirect(301, "/real-robots.txt"))
                    .route("/real-robots.txt", Response::text("User-agent: *\nDisallow: /private\n")),
                &paths,
            ),
        )
        // Wildcards: `*` and `$`.
        .host(
            "wild.test",
            pages(
                Routes::new().route(
                    "/robots.txt",
                    Response::text("User-agent: *\nDisallow: /*.php$\nDisallow: /priv*/\n"),
                ),
                &paths,
            ),
        )
        // A group for our token wins over `*`; longest match wins, Allow on a tie.
        .host(
            "token.test",
            pages(
                Routes::new().route(
                    "/robots.txt",
                    Response::text(
                        "User-agent: *\nDisallow: /\n\nUser-agent: TestBot\nDisallow: /a\nDisallow: /mine\nAllow: /mine\n",
                    ),
                ),
                &paths,
            ),
        )
        // Crawl-delay over the cap: host skipped, URLs logged and left over.
        .host(
            "slow.test",
            pages(
                Routes::new().route("/robots.txt", Response::text("User-agent: *\nCrawl-delay: 120\n")),
                &paths,
            ),
        )
        .start()
        .unwrap();
    let hosts = [
        "gone.test",
        "down.test",
        "moved.test",
        "wild.test",
        "token.test",
        "slow.test",
    ];
    let crawl = crawl_dir("robots");
    let urls: Vec<(&str, &str)> = hosts
        .iter()
        .flat_map(|h| paths.iter().map(move |p| (*h, *p)))
        .collect();
    write_segment(&crawl, "00001", &server, &urls);
    fetch(
        fetch_cmd(&crawl, &server).args([
            "--max-crawl-delay",
            "60s",
            "--robots-retry-delay",
            "100ms",
        ]),
        &crawl,
        0,
    );

    let all: Vec<String> = {
        let mut v: Vec<String> = paths.iter().map(|p| p.to_string()).collect();
        v.sort();
        v
    };
    assert_eq!(fetched_paths(&server, "gone.test"), all, "4xx: allow all");
    assert!(
        fetched_paths(&server, "down.test").is_empty(),
        "5xx: disallow all"
    );
    assert!(
        server.log("down.test").len() >= 2,
        "robots.txt asked again later in the run"
    );
    assert_eq!(
        fetched_paths(&server, "moved.test"),
        ["/a", "/b", "/mine", "/page.php", "/page.php?x=1"],
        "redirected robots.txt followed and applied"
    );
    assert_eq!(
        fetched_paths(&server, "wild.test"),
        ["/a", "/b", "/mine", "/page.php?x=1"],
        "`*` and `$`"
    );
    assert_eq!(
        fetched_paths(&server, "token.test"),
        ["/b", "/mine", "/page.php", "/page.php?x=1", "/private/x"],
        "our group, longest match, Allow wins the tie"
    );
    assert!(
        fetched_paths(&server, "slow.test").is_empty(),
        "Crawl-delay over the cap"
    );

    let log = crawl_log(&crawl, "00001");
    let code_of = |url: &str| {
        log.iter()
            .find(|l| l.url == url && l.via != Via::Robots)
            .unwrap_or_else(|| panic!("{url} not in the crawl log"))
            .status
    };
    assert_eq!(
        code_of(&server.url("wild.test", "/page.php")),
        Status::Error(ErrorCode::Robots)
    );
    assert_eq!(
        code_of(&server.url("token.test", "/a")),
        Status::Error(ErrorCode::Robots)
    );
    assert_eq!(
        code_of(&server.url("slow.test", "/a")),
        Status::Error(ErrorCode::CrawlDelay)
    );
    assert_eq!(
        code_of(&server.url("down.test", "/a")),
        Status::Error(ErrorCode::RobotsUnavailable)
    );
    // The redirect of robots.txt is stored and logged too.
    assert!(log.iter().any(|l| l.via == Via::Robots
        && l.url == server.url("moved.test", "/robots.txt")
        && l.status == Status::Http(301)));

    // Skipped and unavailable hosts' URLs wait in the leftover file: those
    // of a host skipped for its Crawl-delay as retries with one more try
    // counted, so that a host that stays so runs out of tries instead of
    // coming back every round; those of a host whose robots.txt failed
    // with their tries (the host is down: its backoff holds it).
    let left = leftover(&crawl, "00001");
    for (host, via, tries) in [
        ("down.test", Via::Leftover, 0),
        ("slow.test", Via::Retry, 1),
    ] {
        for p in paths {
            let url = server.url(host, p);
            assert!(
                left.iter()
                    .any(|r| r.url == url && r.via == via && r.tries == tries),
                "{url} not in leftover as {via:?} with {tries} tries: {left:?}"
            );
        }
    }
    assert_eq!(left.len(), 2 * paths.len());
    warcio_check(&crawl, "00001");
}

#[test]
fn robots_txt_is_reused_from_the_host_state_for_a_day() {
    let robots = Response::text("User-agent: *\nDisallow: /b\n");
    let server = Server::builder()
        .host(
            "a.test",
            pages(Routes::new().route("/robots.txt", robots), &["/a", "/b"]),
        )
        .start()
        .unwrap();
    let crawl = crawl_dir("robots-cache");
    write_segment(&crawl, "00001", &server, &[("a.test", "/a")]);
    fetch(&mut fetch_cmd(&crawl, &server), &crawl, 0);
    write_segment(&crawl, "00002", &server, &[("a.test", "/b")]);
    fetch(&mut fetch_cmd(&crawl, &server), &crawl, 0);
    assert_eq!(
        robots_fetches(&server, "a.test"),
        1,
        "robots.txt fetched again within 24 h"
    );
    assert!(
        fetched_paths(&server, "a.test") == ["/a"],
        "the cached rules were applied"
    );
    let lines = crawl_log(&crawl, "00002");
    assert_eq!(lines[0].status, Status::Error(ErrorCode::Robots));

    // The host state holds what the runs learned.
    let db = common::hoststate::HostDb::open(crawl.hosts_db_path()).unwrap();
    let state = db.get("a.test").unwrap().expect("a.test in hosts.db");
    let robots = state.robots.expect("robots.txt kept");
    assert_eq!(robots.status, 200);
    assert!(String::from_utf8_lossy(&robots.body).contains("Disallow: /b"));
    assert_eq!(state.pages_total, 1);
    assert_eq!(state.response_times_ms.len(), 1);
    assert!(state.last_contact_ms.is_some());
    drop(db);

    // Once the kept copy is more than a day old, robots.txt is fetched
    // again (the copy is also made to allow everything, to see which
    // rules apply).
    {
        let mut db = common::hoststate::HostDb::open(crawl.hosts_db_path()).unwrap();
        let mut state = db.get("a.test").unwrap().unwrap();
        let robots = state.robots.as_mut().unwrap();
        robots.body = b"User-agent: *\nDisallow:\n".to_vec();
        robots.fetched_ms -= 25 * 3600 * 1000;
        db.put_many(&[state]).unwrap();
    }
    write_segment(&crawl, "00003", &server, &[("a.test", "/b")]);
    fetch(&mut fetch_cmd(&crawl, &server), &crawl, 0);
    assert_eq!(
        robots_fetches(&server, "a.test"),
        2,
        "a day-old robots.txt is not trusted"
    );
    assert!(
        fetched_paths(&server, "a.test") == ["/a"],
        "the fresh rules were applied, not the stale copy"
    );
}

#[test]
fn robots_txt_redirects_are_followed_five_times_politely_and_no_more() {
    // five.test: robots.txt → /r1 → ... → /r5 (five redirects), which has
    // the rules. six.test: one redirect more, so robots.txt counts as
    // unavailable, which allows everything. old.test: robots.txt moved to
    // new.test, whose rules then apply to old.test too.
    let chain = |hops: usize| {
        let mut r = Routes::new();
        for i in 0..hops {
            let from = if i == 0 {
                "/robots.txt".to_string()
            } else {
                format!("/r{i}")
            };
            r = r.route(from, Response::redirect(302, format!("/r{}", i + 1)));
        }
        let rules = Response::text("User-agent: *\nDisallow: /private\n");
        pages(r.route(format!("/r{hops}"), rules), &["/a", "/private"])
    };
    let server = Server::builder()
        .host("five.test", chain(5))
        .host("six.test", chain(6))
        .host(
            "old.test",
            Routes::new()
                .route_fn("/robots.txt", |req: &testkit::server::Request| {
                    let port = req.local_addr().port();
                    Response::redirect(301, format!("http://new.test:{port}/robots.txt"))
                })
                .route("/a", Response::html("a"))
                .route("/private", Response::html("private")),
        )
        .host(
            "new.test",
            pages(
                Routes::new().route(
                    "/robots.txt",
                    Response::text("User-agent: *\nDisallow: /private\n"),
                ),
                &["/a", "/private"],
            ),
        )
        .start()
        .unwrap();
    let crawl = crawl_dir("robots-redirects");
    let urls: Vec<(&str, &str)> = ["five.test", "six.test", "old.test", "new.test"]
        .iter()
        .flat_map(|h| [(*h, "/a"), (*h, "/private")])
        .collect();
    write_segment(&crawl, "00001", &server, &urls);
    fetch(
        fetch_cmd(&crawl, &server).args(["--min-delay", "40ms"]),
        &crawl,
        0,
    );

    assert_eq!(
        fetched_paths(&server, "five.test"),
        ["/a", "/r1", "/r2", "/r3", "/r4", "/r5"]
    );
    let six = fetched_paths(&server, "six.test");
    assert_eq!(
        six,
        ["/a", "/private", "/r1", "/r2", "/r3", "/r4", "/r5"],
        "the sixth redirect is not followed; robots.txt counts as unavailable"
    );
    assert_eq!(
        fetched_paths(&server, "old.test"),
        ["/a"],
        "new.test's rules"
    );
    assert_eq!(fetched_paths(&server, "new.test"), ["/a"]);
    // Every step of a chain waits its host's delay, like any request, and
    // the step to new.test keeps new.test's own delay.
    testkit::server::assert_polite(&server.logs(), Duration::from_millis(40));
    // Every hop is logged (and stored) as a robots.txt fetch.
    let log = crawl_log(&crawl, "00001");
    let hops = log
        .iter()
        .filter(|l| l.via == Via::Robots && l.url.contains("five.test"))
        .count();
    assert_eq!(hops, 6);
    warcio_check(&crawl, "00001");
}

#[test]
fn hosts_met_on_the_way_keep_what_earlier_runs_stored() {
    let site = |name: &str| {
        pages(
            Routes::new().route(
                "/robots.txt",
                Response::text(format!("User-agent: *\nDisallow: /{name}-private\n")),
            ),
            &["/1", "/2"],
        )
    };
    let server = Server::builder()
        .host("a.site.test", site("a"))
        .host("b.site.test", site("b"))
        .start()
        .unwrap();
    let crawl = crawl_dir("host-state-kept");
    write_segment(&crawl, "00001", &server, &[("b.site.test", "/1")]);
    fetch(&mut fetch_cmd(&crawl, &server), &crawl, 0);

    // One queue for the domain: a.site.test comes first, so b.site.test's
    // state is not loaded with the queue but found when it is updated.
    write_segment(
        &crawl,
        "00002",
        &server,
        &[("a.site.test", "/1"), ("b.site.test", "/2")],
    );
    fetch(
        fetch_cmd(&crawl, &server).args(["--key", "domain"]),
        &crawl,
        0,
    );
    let db = common::hoststate::HostDb::open(crawl.hosts_db_path()).unwrap();
    let b = db
        .get("b.site.test")
        .unwrap()
        .expect("b.site.test in hosts.db");
    assert_eq!(
        b.pages_total, 2,
        "the first run's page was forgotten: {b:?}"
    );
    assert_eq!(b.response_times_ms.len(), 2, "{b:?}");
    let robots = b.robots.expect("robots.txt kept");
    assert!(String::from_utf8_lossy(&robots.body).contains("/b-private"));
}
