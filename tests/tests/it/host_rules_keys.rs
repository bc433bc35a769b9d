//! Rules per host, one key at a time, in whole crawls on loopback: a host's
//! byte budget holds it while another host is crawled whole, and a budget
//! raised between rounds lets its waiting URLs in; a rule on an address
//! lets a crawl that refuses private addresses reach that one host; the
//! headers a rule adds are sent to its host alone and kept in the WARC
//! request records; a path rule turns conditional requests off for its
//! URLs; recrawl bounds set between rounds bring the refetch of URLs
//! already scheduled nearer; a host's own canonical form merges its
//! spellings while another host keeps them apart, and, added between
//! rounds, respells the URLs already waiting (backlog, refetches due).

use crate::host_rules::{crawl_sh, site};
use crate::recrawl::Crawl;
use crate::support;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::warc::{WarcReader, WarcRecord};
use testkit::server::{Request, Response, Server};

/// What the server was asked: `host path` → times.
fn asked(server: &Server) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for e in server.logs() {
        *out.entry(format!("{} {}", e.host, e.target)).or_default() += 1;
    }
    out
}

/// How many of `host`'s pages (`/p…`) the server was asked for.
fn pages_asked(server: &Server, host: &str) -> usize {
    (server.logs().iter())
        .filter(|e| *e.host == *host && e.target.starts_with("/p"))
        .count()
}

/// Writes a seeds file of `urls` in `dir`.
fn seeds(dir: &Path, urls: &[String]) -> String {
    let path = dir.join("seeds.txt");
    std::fs::write(&path, urls.join("\n") + "\n").unwrap();
    path.to_str().unwrap().to_string()
}

/// Two hosts on loopback that `handler` answers, and a crawl named
/// `name` seeded with their home pages (polite at 1 ms), with `fetcher`
/// in its `[fetcher]` section: the server, the scratch directory, the
/// crawl and the seeds file.
pub(crate) fn two_host_crawl(
    name: &str,
    hosts: [&str; 2],
    handler: fn(&Request) -> Response,
    fetcher: &str,
) -> (Server, testkit::TempDir, std::path::PathBuf, String) {
    let server = Server::builder()
        .host(hosts[0], handler)
        .host(hosts[1], handler)
        .start()
        .unwrap();
    let (scratch, crawl) = support::loopback_crawl(
        name,
        &server,
        "",
        &format!("min_delay = \"1ms\"\ndelay_factor = 0\n{fetcher}"),
        "[crawl]\nmin_free_disk = 0\n",
    );
    let homes = hosts.map(|h| server.url(h, "/"));
    let seeds = seeds(scratch.path(), &homes);
    (server, scratch, crawl, seeds)
}

#[test]
fn a_host_byte_budget_holds_its_host_and_a_raised_one_lets_its_waiting_urls_in() {
    let (server, scratch, crawl, seeds) = two_host_crawl(
        "host-rules-bytes",
        ["www.bytes.test", "plain.test"],
        site,
        "",
    );
    let rules = crawl.join(common::rules::RULES_FILE);
    // One byte: the host's first response spends it.
    std::fs::write(
        &rules,
        "[[rule]]\nhost = \"www.bytes.test\"\nmax_host_bytes = 1\n",
    )
    .unwrap();
    crawl_sh(
        &crawl,
        scratch.path(),
        &["--seeds", seeds.as_str(), "--rounds", "3"],
    );
    assert_eq!(
        pages_asked(&server, "plain.test"),
        9,
        "{:#?}",
        asked(&server)
    );
    assert_eq!(
        pages_asked(&server, "www.bytes.test"),
        0,
        "the host over its budget was crawled: {:#?}",
        asked(&server)
    );

    // The operator lifts the host's budget: what waits is fetched, once.
    std::fs::write(
        &rules,
        "[[rule]]\nhost = \"www.bytes.test\"\nmax_host_bytes = 0\n",
    )
    .unwrap();
    crawl_sh(&crawl, scratch.path(), &[]);
    let all = asked(&server);
    for i in 0..9 {
        for host in ["www.bytes.test", "plain.test"] {
            assert_eq!(all.get(&format!("{host} /p{i}")), Some(&1), "{all:#?}");
        }
    }
    assert_eq!(all.get("www.bytes.test /"), Some(&1), "{all:#?}");
}

#[test]
fn an_address_rule_lets_a_crawl_without_allow_private_reach_its_hosts_alone() {
    let (server, scratch, crawl, seeds) = two_host_crawl(
        "host-rules-private",
        ["open.private.test", "shut.private.test"],
        site,
        "",
    );
    // The crawl refuses private addresses (loopback among them)...
    let toml = crawl.join("crawl.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    let text = text.replace("allow_private = true", "allow_private = false");
    std::fs::write(&toml, text).unwrap();
    // ...but for the network of one host.
    let open = server.addr("open.private.test").ip();
    std::fs::write(
        crawl.join(common::rules::RULES_FILE),
        format!("[[rule]]\naddresses = \"{open}/32\"\nallow_private = true\n"),
    )
    .unwrap();
    crawl_sh(
        &crawl,
        scratch.path(),
        &["--seeds", seeds.as_str(), "--rounds", "2"],
    );
    assert_eq!(
        pages_asked(&server, "open.private.test"),
        9,
        "{:#?}",
        asked(&server)
    );
    assert!(
        server.log("shut.private.test").is_empty(),
        "a host outside the rule's network was reached: {:#?}",
        asked(&server)
    );
    // The refusal is in the crawl log, with its reason.
    let log: String = (glob_files(&crawl.join("fetched"), "crawl.log").iter())
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert!(
        log.lines()
            .any(|l| l.contains("shut.private.test") && l.contains("private")),
        "{log}"
    );
}

/// Files named `name` in the directories under `dir`.
fn glob_files(dir: &Path, name: &str) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path().join(name);
        if path.is_file() {
            out.push(path);
        }
    }
    out
}

/// One request as the site saw it: host, path, its `If-None-Match`, its
/// `Cookie`.
type Seen = (String, String, Option<String>, Option<String>);

/// A site whose pages carry an ETag and answer 304 to it; `/` links to
/// `/cond/1` and `/nocond/1`. Every request is noted in `seen`.
fn validating_site(
    host: &'static str,
    seen: Arc<Mutex<Vec<Seen>>>,
) -> impl Fn(&Request) -> Response {
    move |req: &Request| {
        let inm = req.header("if-none-match").map(str::to_string);
        let cookie = req.header("cookie").map(str::to_string);
        seen.lock().unwrap().push((
            host.to_string(),
            req.path().to_string(),
            inm.clone(),
            cookie,
        ));
        let etag = format!("\"e{}\"", req.path());
        let body = match req.path() {
            "/robots.txt" => return Response::not_found(),
            "/" => "<a href=/cond/1>c</a> <a href=/nocond/1>n</a>".to_string(),
            p => format!("<p>{p}</p>"),
        };
        match inm.as_deref() == Some(etag.as_str()) {
            true => Response::status(304).header("ETag", etag),
            false => Response::html(body).header("ETag", etag),
        }
    }
}

/// The request records of the crawl's WARC files, by target URI.
fn request_records(crawl: &Path) -> Vec<WarcRecord> {
    let mut out = Vec::new();
    for run in std::fs::read_dir(crawl.join("fetched")).unwrap() {
        for file in testkit::warcio::warc_files(&run.unwrap().path()) {
            let mut reader = WarcReader::open(&file, 1 << 20).unwrap();
            let mut rec = WarcRecord::default();
            while reader.read_next(&mut rec).unwrap() {
                if rec.record_type() == Some("request") {
                    out.push(rec.clone());
                }
            }
        }
    }
    out
}

#[test]
fn headers_conditional_requests_and_recrawl_bounds_hold_url_by_url() {
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let server = Server::builder()
        .host("keys.test", validating_site("keys.test", seen.clone()))
        .host("plain.test", validating_site("plain.test", seen.clone()))
        .start()
        .unwrap();
    let (scratch, root) = support::loopback_crawl(
        "host-rules-url-keys",
        &server,
        "",
        "min_delay = \"0ms\"\ndelay_factor = 0\n",
        "[crawl]\nmin_free_disk = 0\n[segmenter]\nrecrawl_interval = \"100s\"\nrecrawl_min = \"1s\"\n\
         recrawl_max = \"1000s\"\n",
    );
    let rules = root.join(common::rules::RULES_FILE);
    let host_rule = "[[rule]]\nhost = \"keys.test\"\n\
                     headers = { Cookie = \"session=abc\", Accept-Language = \"fr\" }\n";
    let path_rule = "\n[[rule]]\nsurt = \"test,keys,)/nocond/\"\nconditional_requests = false\n";
    std::fs::write(&rules, format!("{host_rule}{path_rule}")).unwrap();
    let homes = [server.url("keys.test", "/"), server.url("plain.test", "/")];
    let seeds = seeds(scratch.path(), &homes);
    let c = Crawl { root: root.clone() };
    c.segmenter(&["inject", root.to_str().unwrap(), seeds.as_str()]);
    // Round 0 the home pages, round 1 their links.
    c.fetch();
    c.run();
    c.fetch();
    c.run();
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 8, "{seen:#?}");
        for (host, path, _, cookie) in seen.iter() {
            let want = (host == "keys.test").then_some("session=abc");
            assert_eq!(cookie.as_deref(), want, "{host}{path}");
        }
    }
    // The WARC request record keeps the headers as sent.
    let records = request_records(&root);
    let page = server.url("keys.test", "/cond/1");
    let sent = (records.iter())
        .find(|r| r.target_uri() == Some(page.as_str()))
        .map(|r| String::from_utf8_lossy(&r.block).into_owned())
        .unwrap_or_else(|| panic!("no request record of {page}"));
    assert!(
        sent.contains("\r\nCookie: session=abc\r\n")
            && sent.contains("\r\nAccept-Language: fr\r\n"),
        "{sent}"
    );

    // The operator bounds the host's refetch interval to 1 s: its URLs,
    // scheduled 100 s on, come due at the next round; the other host's
    // stay where they were.
    std::fs::write(
        &rules,
        format!("{host_rule}recrawl_max = \"1s\"\n{path_rule}"),
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    seen.lock().unwrap().clear();
    let report = c.run();
    assert_eq!(
        testkit::report::figure(&report, "refetches scheduled:"),
        3,
        "{report}"
    );
    c.fetch();
    let mut refetched: Vec<(String, bool)> = (seen.lock().unwrap().iter())
        .filter(|s| s.1 != "/robots.txt")
        .map(|(host, path, inm, _)| (format!("{host}{path}"), inm.is_some()))
        .collect();
    refetched.sort();
    assert_eq!(
        refetched,
        [
            ("keys.test/".to_string(), true),
            ("keys.test/cond/1".to_string(), true),
            // The path rule: no validators, a full answer.
            ("keys.test/nocond/1".to_string(), false),
        ]
    );
    c.run();
    assert_eq!(c.history_line(&page)[5], "1", "the rule's interval");
    let other = server.url("plain.test", "/cond/1");
    assert_eq!(c.history_line(&other)[5], "100", "the crawl's interval");
}

/// A site whose home page links to three spellings of `/page?a=1&b=2`
/// (a tracking parameter of its own, the query's order, the path's case)
/// and to `/go`, a redirect to a spelling of `/other`.
fn spelled_site(req: &Request) -> Response {
    match req.path() {
        "/robots.txt" => Response::not_found(),
        "/" => Response::html(
            "<a href=\"/Page?b=2&a=1&ref=x\">1</a> <a href=\"/page?a=1&b=2\">2</a> \
             <a href=\"/PAGE?ref=y&a=1&b=2\">3</a> <a href=/go>r</a>",
        ),
        "/go" => Response::redirect(302, "/Other?ref=1"),
        p => Response::html(format!("<p>{p}</p>")),
    }
}

#[test]
fn a_host_canonical_form_merges_its_spellings_and_another_host_keeps_them() {
    let (server, scratch, crawl, seeds) = two_host_crawl(
        "host-rules-canon",
        ["canon.test", "plain.test"],
        spelled_site,
        "follow_redirects = 2\n",
    );
    std::fs::write(
        crawl.join(common::rules::RULES_FILE),
        "[[rule]]\nhost = \"canon.test\"\ndrop_params = [\"ref\"]\nsort_query = true\n\
         lowercase_path = true\n",
    )
    .unwrap();
    crawl_sh(&crawl, scratch.path(), &["--seeds", seeds.as_str()]);
    let all = asked(&server);
    let of = |host: &str| -> BTreeMap<&str, usize> {
        (all.iter())
            .filter_map(|(k, n)| k.strip_prefix(host).map(|t| (t.trim_start(), *n)))
            .filter(|(t, _)| *t != "/robots.txt" && *t != "/")
            .collect()
    };
    // Each page once, under the host's own spelling; the redirect's target
    // too (the fetcher followed it in that spelling).
    let canon: BTreeMap<&str, usize> = [("/go", 1), ("/other", 1), ("/page?a=1&b=2", 1)].into();
    assert_eq!(of("canon.test"), canon, "{all:#?}");
    let plain: BTreeMap<&str, usize> = [
        ("/Other?ref=1", 1),
        ("/PAGE?ref=y&a=1&b=2", 1),
        ("/Page?b=2&a=1&ref=x", 1),
        ("/go", 1),
        ("/page?a=1&b=2", 1),
    ]
    .into();
    assert_eq!(of("plain.test"), plain, "{all:#?}");
}

/// A site whose home page links to `/p1` and `/p1` to `/p2` and `/p3`,
/// each under spellings other than the one a rule of `drop_params =
/// ["ref"]` and `sort_query = true` makes (`/pN?a=1&b=2`): the home page
/// under one, `/p1` under three.
fn respelled_site(req: &Request) -> Response {
    let spellings = |i: u32| {
        format!(
            "<a href=\"/p{i}?b=2&a=1&ref=x\">1</a> <a href=\"/p{i}?ref=y&a=1&b=2\">2</a> \
             <a href=\"/p{i}?b=2&a=1\">3</a>\n"
        )
    };
    match req.path() {
        "/robots.txt" => Response::not_found(),
        "/" => Response::html("<a href=\"/p1?b=2&a=1&ref=x\">1</a>"),
        "/p1" => Response::html(spellings(2) + &spellings(3)),
        p => Response::html(format!("<p>{p}</p>")),
    }
}

/// What the server was asked for, but robots.txt: `path` → times.
fn pages(server: &Server) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for e in server.logs() {
        if e.target != "/robots.txt" {
            *out.entry(e.target.clone()).or_default() += 1;
        }
    }
    out
}

#[test]
fn a_canonical_form_added_between_rounds_respells_the_urls_already_waiting() {
    let server = Server::builder()
        .host("canon.test", respelled_site)
        .start()
        .unwrap();
    let (scratch, root) = support::loopback_crawl(
        "host-rules-respell",
        &server,
        "",
        "min_delay = \"1ms\"\ndelay_factor = 0\n",
        "[crawl]\nmin_free_disk = 0\n[segmenter]\nmax_per_host = 1\n\
         recrawl_interval = \"1000s\"\nrecrawl_min = \"100s\"\nrecrawl_max = \"1000s\"\n",
    );
    let seeds = seeds(scratch.path(), &[server.url("canon.test", "/")]);
    let c = Crawl { root: root.clone() };
    // Round 0 the home page; round 1 `/p1`, whose refetch the history
    // schedules; round 2 one of the six spellings of `/p2` and `/p3` (the
    // cap), the five others waiting in the backlog, each in the spelling
    // it was found.
    c.segmenter(&["inject", root.to_str().unwrap(), seeds.as_str()]);
    for _ in 0..2 {
        c.fetch();
        c.run();
    }
    c.fetch();
    let before = pages(&server);
    let second: Vec<&String> = (before.keys())
        .filter(|k| k.starts_with("/p2?") || k.starts_with("/p3?"))
        .collect();
    assert_eq!(
        before.len(),
        3,
        "the home page, /p1 and one more: {before:#?}"
    );
    assert_eq!(before.get("/p1?b=2&a=1&ref=x"), Some(&1), "{before:#?}");
    assert_eq!(second.len(), 1, "{before:#?}");
    // The page fetched in round 2, and the one never fetched.
    let (fresh, never) = match second[0].starts_with("/p2") {
        true => ("/p2", "/p3"),
        false => ("/p3", "/p2"),
    };

    // The operator adds the host's canonical form, and brings its pages'
    // refetch near so that the two fetched under an old spelling come due
    // at the next round, beside the backlog's spellings.
    let rules = root.join(common::rules::RULES_FILE);
    let canon = "[[rule]]\nhost = \"canon.test\"\ndrop_params = [\"ref\"]\nsort_query = true\n";
    std::fs::write(
        &rules,
        format!("{canon}recrawl_min = \"1s\"\nrecrawl_max = \"1s\"\n"),
    )
    .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let report = c.run();
    // Back to the crawl's refetch interval; the crawl runs to its end.
    std::fs::write(&rules, canon).unwrap();
    crawl_sh(&root, scratch.path(), &[]);

    // From then on, each page once under its canonical spelling, and no
    // old spelling asked again: the home page and `/p1` refetched (they
    // were due), the page never fetched fetched; but the page fetched in
    // round 2, just before the rule, which its fetch recorded under its
    // canonical spelling, and whose other spellings waiting met that.
    let mut after = pages(&server);
    for (path, n) in &before {
        *after.get_mut(path).unwrap() -= n;
    }
    after.retain(|_, n| *n > 0);
    let want: BTreeMap<String, usize> = ["/", "/p1?a=1&b=2", &format!("{never}?a=1&b=2")]
        .into_iter()
        .map(|p| (p.to_string(), 1))
        .collect();
    assert_eq!(
        after, want,
        "before the rule {before:#?} ({fresh} fetched last)"
    );
    // The round said so.
    assert!(
        testkit::report::figure(&report, "backlog respelled:") > 0,
        "{report}"
    );
}
