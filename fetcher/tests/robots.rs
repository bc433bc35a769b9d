//! robots.txt as the server sees it: status policy, redirects, Crawl-delay
//! cap, wildcard rules and the group for our product token.

mod support;

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
    let out = run(fetch_cmd(&crawl, &server).args([
        "--max-crawl-delay",
        "60s",
        "--robots-retry-delay",
        "100ms",
    ]));
    assert_exit(&out, 0);

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

    // Skipped and unavailable hosts' URLs wait in the leftover file.
    let left: Vec<String> = leftover(&crawl, "00001")
        .into_iter()
        .map(|r| r.url)
        .collect();
    for host in ["down.test", "slow.test"] {
        for p in paths {
            assert!(
                left.contains(&server.url(host, p)),
                "{host}{p} not in leftover"
            );
        }
    }
    assert_eq!(left.len(), 2 * paths.len());
    warcio_check(&crawl, "00001");
}

#[test]
fn robots_txt_is_reused_from_the_host_state() {
    let server = Server::builder()
        .host(
            "a.test",
            pages(
                Routes::new().route(
                    "/robots.txt",
                    Response::text("User-agent: *\nDisallow: /b\n"),
                ),
                &["/a", "/b"],
            ),
        )
        .start()
        .unwrap();
    let crawl = crawl_dir("robots-cache");
    write_segment(&crawl, "00001", &server, &[("a.test", "/a")]);
    assert_exit(&run(&mut fetch_cmd(&crawl, &server)), 0);
    write_segment(&crawl, "00002", &server, &[("a.test", "/b")]);
    assert_exit(&run(&mut fetch_cmd(&crawl, &server)), 0);
    let robots = server
        .log("a.test")
        .iter()
        .filter(|e| e.target == "/robots.txt")
        .count();
    assert_eq!(robots, 1, "robots.txt fetched again within 24 h");
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
}
