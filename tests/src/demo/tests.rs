//! The demo's generator, its expected-set walk on its own, and serving.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use common::config::FilterConfig;
use common::filter::Reject;

use super::*;

/// The port the model tests pretend the demo is served on.
const PORT: u16 = 8080;

fn url(host: &str, target: &str) -> String {
    format!("http://{host}.demo.test:{PORT}{target}")
}

/// The full demo with its calendar starting in 2026 (the year the tests'
/// limits count from), whatever today's date.
fn demo(seed: u64) -> Demo {
    Demo::with_params(DemoParams {
        calendar_year: 2026,
        ..DemoParams::new(seed)
    })
}

fn limits(year: i64) -> Limits {
    Limits {
        current_year: year,
        ..Limits::default()
    }
}

#[test]
fn the_same_seed_gives_the_same_web() {
    let a = demo(7);
    let b = demo(7);
    let c = demo(8);
    assert_eq!(a.pages(PORT), b.pages(PORT));
    let links = |d: &Demo| -> Vec<Vec<Link>> {
        d.pages(PORT)
            .iter()
            .map(|p| d.links_of(p).unwrap())
            .collect()
    };
    assert_eq!(links(&a), links(&b));
    let ea = a.expected(&limits(2026), PORT);
    let eb = b.expected(&limits(2026), PORT);
    assert_eq!(ea.fetch, eb.fetch);
    assert_eq!(ea.excluded, eb.excluded);
    assert_ne!(links(&a), links(&c), "another seed, another web");
}

#[test]
fn the_full_demo_has_the_announced_size() {
    let demo = demo(1);
    let hosts = demo.hosts();
    assert_eq!(hosts.len(), 58);
    assert_eq!(
        hosts
            .iter()
            .filter(|h| h.name.ends_with(".demo.test"))
            .count(),
        57
    );
    assert_eq!(hosts[0].name, "news.demo.test");
    let pages = demo.pages(PORT).len();
    assert!((3000..=4500).contains(&pages), "{pages} pages");
    let expected = demo.expected(&limits(2026), PORT);
    assert!(expected.fetch.len() > 3000, "{}", expected.fetch.len());
    // Every role is present exactly once, except content and tiny hosts.
    for role in [
        HostRole::Portal,
        HostRole::Big,
        HostRole::Calendar,
        HostRole::RobotsUnavailable,
        HostRole::RobotsServerError,
        HostRole::Refuses,
        HostRole::BlackHole,
        HostRole::OutOfScope,
    ] {
        assert_eq!(
            hosts.iter().filter(|h| h.role == role).count(),
            1,
            "{role:?}"
        );
    }
    assert_eq!(
        hosts.iter().filter(|h| h.role == HostRole::Tiny).count(),
        20
    );
    // One loopback address each, from 127.0.0.10, below 127.0.0.254.
    let web = demo.serve().unwrap();
    let last = web.addr(&hosts[hosts.len() - 1].name).unwrap();
    assert_eq!(last, std::net::Ipv4Addr::new(127, 0, 0, 67));
}

/// URLs a correct crawl fetches on each host, and the deepest of them.
fn per_host(e: &Expected) -> BTreeMap<String, (usize, u32)> {
    let mut out: BTreeMap<String, (usize, u32)> = BTreeMap::new();
    for (u, f) in &e.fetch {
        let host = url::Url::parse(u).unwrap().host_str().unwrap().to_string();
        let entry = out.entry(host).or_default();
        entry.0 += 1;
        entry.1 = entry.1.max(f.hops);
    }
    out
}

#[test]
fn the_tail_is_a_big_host_many_tiny_ones_and_hosts_that_give_nothing() {
    let demo = demo(1);
    let e = demo.expected(&limits(2026), PORT);
    let hosts = per_host(&e);
    // The big host: five times a content host, not too deep.
    let (big, big_depth) = hosts["big.demo.test"];
    for h in demo.hosts().iter().filter(|h| h.role == HostRole::Content) {
        let (n, _) = hosts[&h.name];
        assert!(big >= 4 * n, "big.demo.test {big}, {} {n}", h.name);
    }
    assert!(big_depth <= 5, "big.demo.test goes {big_depth} hops deep");
    // Twenty tiny hosts of 3 to 6 pages, their home one hop from the portal.
    for i in 1..=20 {
        let name = format!("tiny{i}.demo.test");
        let (n, deepest) = hosts[&name];
        assert!((3..=6).contains(&n), "{name}: {n} pages");
        assert!(deepest <= 3, "{name}: {deepest} hops");
        assert_eq!(e.fetch[&url(&format!("tiny{i}"), "/")].hops, 1);
    }
    // A robots.txt answering 500, a host that never answers: nothing is
    // fetched there, their robots.txt is asked for, their URLs are left out
    // as unavailable.
    assert_eq!(
        demo.robots_allows("broken.demo.test", "/", "demobot"),
        RobotsVerdict::Unavailable
    );
    assert_eq!(
        demo.robots_allows("hole.demo.test", "/", "demobot"),
        RobotsVerdict::NoAnswer
    );
    for name in ["broken", "hole"] {
        assert!(!hosts.contains_key(&format!("{name}.demo.test")), "{name}");
        assert!(e.robots.contains(&url(name, "/robots.txt")), "{name}");
        assert_eq!(
            e.excluded.get(&url(name, "/")),
            Some(&Exclusion::RobotsUnavailable),
            "{name}"
        );
        let linked = e
            .excluded
            .keys()
            .filter(|u| u.contains(&format!("//{name}.demo.test")))
            .count();
        assert!(linked > 1, "{name}: linked from {linked} pages only");
    }
    assert_eq!(demo.status_of(&url("hole", "/")), None);
    assert!(e.refused.keys().all(|u| u.contains("//gone.demo.test")));
}

#[test]
fn plain_links_resolve_to_their_recorded_targets() {
    // Apart from the page of deliberate odd spellings, every href resolved
    // the way a browser does (the URL standard, as the `url` crate does it)
    // must give exactly the canonical target the model records.
    let demo = demo(3);
    let mut checked = 0;
    for page in demo.pages(PORT) {
        if page.ends_with("/spellings.html") {
            continue;
        }
        let Some(Resource::Html(html)) = demo
            .inner
            .parse_url(&page)
            .and_then(|(l, _)| demo.inner.resolve(&l))
        else {
            continue;
        };
        let base = match &html.base {
            Some(b) => url::Url::parse(&render::href_text(b, PORT)).unwrap(),
            None => url::Url::parse(&page).unwrap(),
        };
        for link in demo.links_of(&page).unwrap() {
            let Some(target) = &link.url else {
                continue;
            };
            let resolved = base.join(&link.href).unwrap();
            assert_eq!(resolved.as_str(), target, "{} on {page}", link.href);
            checked += 1;
        }
    }
    assert!(checked > 5000, "{checked} links checked");
}

#[test]
fn the_projects_canonical_form_agrees_with_every_recorded_target() {
    // common::urlnorm is what the segmenter uses: each link of the demo,
    // odd spellings included, must canonicalize to the URL the model says,
    // and links a crawler does not follow must be refused.
    let demo = demo(3);
    let mut checked = 0;
    for page in demo.pages(PORT) {
        let Some(Resource::Html(html)) = demo
            .inner
            .parse_url(&page)
            .and_then(|(l, _)| demo.inner.resolve(&l))
        else {
            continue;
        };
        let base = match &html.base {
            Some(b) => url::Url::parse(&render::href_text(b, PORT)).unwrap(),
            None => url::Url::parse(&page).unwrap(),
        };
        for link in demo.links_of(&page).unwrap() {
            let got = common::urlnorm::canonicalize_relative(&base, &link.href);
            match &link.url {
                Some(want) => {
                    let got = got.unwrap_or_else(|e| panic!("{} on {page}: {e}", link.href));
                    assert_eq!(got.as_str(), want, "{} on {page}", link.href);
                }
                None => assert!(got.is_err(), "{} on {page} was accepted", link.href),
            }
            checked += 1;
        }
    }
    assert!(checked > 5000, "{checked} links checked");
}

#[test]
fn odd_spellings_name_pages_that_exist() {
    let demo = demo(3);
    let links = demo.links_of(&url("markup", "/spellings.html")).unwrap();
    assert_eq!(links.len(), 12);
    for link in links {
        let target = link.url.unwrap();
        assert_ne!(link.href, target);
        assert_eq!(demo.status_of(&target), Some(200), "{target}");
    }
}

#[test]
fn the_only_broken_links_are_the_deliberate_ones() {
    let demo = demo(5);
    let expected = demo.expected(&limits(2026), PORT);
    let broken: Vec<&str> = expected.with_status(404).collect();
    assert!(!broken.is_empty());
    for u in broken {
        assert!(u.ends_with("-draft.html"), "unexpected 404: {u}");
    }
    let statuses: BTreeSet<u16> = expected.fetch.values().map(|f| f.status).collect();
    assert_eq!(
        statuses,
        BTreeSet::from([200, 301, 302, 303, 307, 308, 404])
    );
}

#[test]
fn robots_rules_decide_what_is_fetched() {
    let demo = demo(2);
    let e = demo.expected(&limits(2026), PORT);
    let excluded = |u: &str| e.excluded.get(u).copied();
    // A Disallow section.
    assert_eq!(
        excluded(&url("shop", "/cart/")),
        Some(Exclusion::RobotsDisallowed)
    );
    assert_eq!(
        excluded(&url("shop", "/account/login.html")),
        Some(Exclusion::RobotsDisallowed)
    );
    assert!(e.fetch.contains_key(&url("shop", "/")));
    // Links behind a disallowed page are never found.
    assert!(!e.excluded.contains_key(&url("shop", "/cart/item-1.html")));
    // The group for our token lets us in, except one room...
    assert!(e.fetch.contains_key(&url("agents", "/")));
    assert_eq!(
        excluded(&url("agents", "/not-for-demobot/secret.html")),
        Some(Exclusion::RobotsDisallowed)
    );
    // ...and another crawler falls back to `*`, which shuts everything.
    let stranger = demo.expected(
        &Limits {
            agent: "anybot".into(),
            ..limits(2026)
        },
        PORT,
    );
    assert_eq!(
        stranger.excluded.get(&url("agents", "/")),
        Some(&Exclusion::RobotsDisallowed)
    );
    // Wildcards and end anchors.
    for (target, allowed) in [
        ("/files/notes.bak", false),
        ("/files/notes.bak.html", true),
        ("/list?sort=asc", false),
        ("/list?page=2", true),
        ("/archive/", false),
        ("/archive/2019/index.html", true),
        ("/archive/2019/notes.html", false),
        ("/archive/2019/index.html?print=1", false),
        ("/archive/2020/index.html", true),
        ("/archive/2019/photos.html", false),
    ] {
        let u = url("wild", target);
        assert_eq!(e.fetch.contains_key(&u), allowed, "{target}");
        assert_eq!(
            demo.robots_allows("wild.demo.test", target, "demobot") == RobotsVerdict::Allowed,
            allowed
        );
    }
    // 404 and 403 robots allow everything; 503 and 500 allow nothing.
    assert!(e.fetch.contains_key(&url("open", "/about.html")));
    assert!(e.fetch.contains_key(&url("members", "/about.html")));
    assert_eq!(
        excluded(&url("down", "/")),
        Some(Exclusion::RobotsUnavailable)
    );
    assert!(e.fetch.keys().all(|u| !u.contains("//down.demo.test")));
    assert!(e.robots.contains(&url("down", "/robots.txt")));
    assert_eq!(
        excluded(&url("broken", "/")),
        Some(Exclusion::RobotsUnavailable)
    );
    // Crawl-delay: honoured when reasonable, the host skipped when not.
    assert_eq!(
        demo.crawl_delay("slow.demo.test", "demobot"),
        Some(Duration::from_secs(1))
    );
    assert!(e.fetch.contains_key(&url("slow", "/")));
    assert_eq!(
        excluded(&url("slow", "/tmp/scratch.html")),
        Some(Exclusion::RobotsDisallowed)
    );
    assert_eq!(
        excluded(&url("sleepy", "/")),
        Some(Exclusion::CrawlDelayTooHigh)
    );
    let patient = demo.expected(
        &Limits {
            max_crawl_delay: Duration::from_secs(7200),
            ..limits(2026)
        },
        PORT,
    );
    assert!(patient.fetch.contains_key(&url("sleepy", "/")));
    // robots.txt behind two redirects, and one on another host.
    for t in ["/robots.txt", "/robots/current", "/robots/rules.txt"] {
        assert!(e.robots.contains(&url("moved", t)), "{t}");
    }
    assert_eq!(
        excluded(&url("moved", "/secret/plans.html")),
        Some(Exclusion::RobotsDisallowed)
    );
    assert!(e.robots.contains(&url("old", "/robots.txt")));
    assert!(e.robots.contains(&url("new", "/robots.txt")));
    // Nothing a crawler may request is outside fetch + robots.
    assert!(e.may_request(&url("moved", "/robots/current")));
    assert!(!e.may_request(&url("shop", "/cart/")));
}

#[test]
fn redirects_are_walked_hop_by_hop() {
    let demo = demo(2);
    let e = demo.expected(&limits(2026), PORT);
    let hops = |t: &str| e.fetch[&url("moved", t)].hops;
    assert_eq!(e.fetch[&url("moved", "/chain/start")].status, 302);
    assert_eq!(hops("/chain/middle"), hops("/chain/start") + 1);
    assert_eq!(hops("/chain/end.html"), hops("/chain/start") + 2);
    assert_eq!(e.fetch[&url("moved", "/loop/a")].status, 302);
    assert_eq!(e.fetch[&url("moved", "/loop/b")].status, 302);
    // A seed on the host that moved: 301 at hop 0, its target at hop 1.
    assert_eq!(
        e.fetch[&url("old", "/")],
        Fetched {
            status: 301,
            hops: 0
        }
    );
    assert_eq!(e.fetch[&url("new", "/")].hops, 1);
    let links = demo.links_of(&url("old", "/s1/")).unwrap();
    assert_eq!(links[0].kind, LinkKind::Redirect);
    assert_eq!(links[0].url.as_deref(), Some(url("new", "/s1/").as_str()));
    // Redirects that do not count as hops.
    let flat = demo.expected(
        &Limits {
            redirect_is_hop: false,
            ..limits(2026)
        },
        PORT,
    );
    assert_eq!(flat.fetch[&url("new", "/")].hops, 0);
    let f = |t: &str| flat.fetch[&url("moved", t)].hops;
    assert_eq!(f("/chain/end.html"), f("/chain/start"));
}

#[test]
fn traps_stop_at_the_limits() {
    let demo = demo(4);
    let e = demo.expected(&limits(2026), PORT);
    let excluded = |u: &str| e.excluded.get(u).copied();
    // The calendar: no year past 2027 (one ahead of 2026) is fetched.
    assert!(e.fetch.contains_key(&url("calendar", "/cal/2027/12/")));
    for m in ["01", "07", "12"] {
        assert_eq!(
            excluded(&url("calendar", &format!("/cal/2028/{m}/"))),
            Some(Exclusion::Filter(Reject::Calendar))
        );
    }
    let calendar_pages = e.fetch.keys().filter(|u| u.contains("/cal/")).count();
    assert_eq!(
        calendar_pages,
        1 + 2 * 12,
        "the index and the months of two years"
    );
    // Without the calendar rule, only the hop limit stops it.
    let no_year_rule = demo.expected(
        &Limits {
            filter: FilterConfig {
                max_years_ahead: 1000,
                ..FilterConfig::default()
            },
            ..limits(2026)
        },
        PORT,
    );
    assert!(
        no_year_rule
            .fetch
            .contains_key(&url("calendar", "/cal/2030/05/"))
    );
    assert!(
        no_year_rule
            .excluded
            .values()
            .any(|x| *x == Exclusion::Filter(Reject::TooManyHops))
    );
    assert!(no_year_rule.fetch.values().all(|f| f.hops <= 10));
    // Repeated segments.
    assert!(e.fetch.contains_key(&url("tags", "/tags/red/red/")));
    assert!(
        e.fetch
            .contains_key(&url("tags", "/tags/red/blue/blue/red/"))
    );
    assert_eq!(
        excluded(&url("tags", "/tags/red/red/red/")),
        Some(Exclusion::Filter(Reject::RepeatedSegment))
    );
    assert_eq!(
        excluded(&url("tags", "/docs/docs/docs/")),
        Some(Exclusion::Filter(Reject::RepeatedSegment))
    );
    let tag_pages = e.fetch.keys().filter(|u| u.contains("/tags/")).count();
    assert_eq!(
        tag_pages,
        1 + 2 + 4 + 6 + 6,
        "tag sequences with each tag at most twice"
    );
    // Too long, too many parameters, too many segments.
    let reasons: BTreeSet<String> = e
        .excluded
        .iter()
        .filter(|(u, _)| u.contains("//tags.demo.test"))
        .map(|(_, r)| format!("{r:?}"))
        .collect();
    for want in [
        "TooLong",
        "TooManyParams",
        "TooManySegments",
        "RepeatedSegment",
    ] {
        assert!(
            reasons.iter().any(|r| r.contains(want)),
            "{want} missing from {reasons:?}"
        );
    }
    // Out of scope.
    assert_eq!(
        e.excluded.get(&format!("http://elsewhere.example:{PORT}/")),
        Some(&Exclusion::Filter(Reject::Scope))
    );
    // A lower hop limit cuts everything beyond it.
    let near = demo.expected(
        &Limits {
            filter: FilterConfig {
                max_hops: 2,
                ..FilterConfig::default()
            },
            ..limits(2026)
        },
        PORT,
    );
    assert!(near.fetch.values().all(|f| f.hops <= 2));
    assert!(near.fetch.len() < e.fetch.len());
}

#[test]
fn the_default_hop_limit_binds_nowhere() {
    // Traps end by their own rules before ten hops, so a crawl whose hop
    // accounting differs a little still meets the same set, in few rounds.
    let demo = demo(6);
    let strict = demo.expected(&limits(2026), PORT);
    let loose = demo.expected(
        &Limits {
            filter: FilterConfig {
                max_hops: 1000,
                ..FilterConfig::default()
            },
            ..limits(2026)
        },
        PORT,
    );
    let urls = |e: &Expected| -> BTreeSet<String> { e.fetch.keys().cloned().collect() };
    assert_eq!(urls(&strict), urls(&loose));
    assert!(
        strict
            .excluded
            .values()
            .all(|x| *x != Exclusion::Filter(Reject::TooManyHops))
    );
    assert!(
        strict.max_hops() <= 7,
        "deepest page at {} hops",
        strict.max_hops()
    );
}

#[test]
fn markup_and_charsets_are_followed_as_the_design_says() {
    let demo = demo(9);
    let e = demo.expected(&limits(2026), PORT);
    let fetched = |t: &str| e.fetch.contains_key(&url("markup", t));
    for t in [
        "/manual/intro.html",
        "/manual/chapter/one.html",
        "/rooted.html",
        "/area-target.html",
        "/iframe-target.html",
        "/frame-left.html",
        "/canonical-target.html",
        "/refresh-target.html",
        "/followed.html",
        "/~spelled-5.html",
        "/spelled-%E2%9C%93.html",
        "/query.html?a=1&b=2",
    ] {
        assert!(fetched(t), "{t} not fetched");
    }
    for t in [
        "/nofollow-target.html",
        "/behind-meta.html",
        "/behind-header.html",
        "/unlinked-1.html",
    ] {
        assert!(
            !fetched(t) && !e.excluded.contains_key(&url("markup", t)),
            "{t}"
        );
    }
    for t in [
        "/caf%C3%A9.html",
        "/na%C3%AFve/r%C3%A9sum%C3%A9.html",
        "/%E2%82%ACuro.html",
        "/%C5%93uvre.html",
        "/%E6%97%A5%E6%9C%AC.html",
        "/gr%C3%BC%C3%9Fe.html",
    ] {
        assert!(e.fetch.contains_key(&url("latin", t)), "{t}");
    }
    assert!(e.fetch.contains_key(&url("files", "/report.pdf")));
    assert!(!e.fetch.contains_key(&url("files", "/from-text.html")));
    // Unlinked articles are never reached; the refusing host is tried.
    assert!(!e.refused.is_empty());
    assert!(e.refused.keys().all(|u| u.contains("//gone.demo.test")));
}

/// A minimal HTTP/1.1 GET over a fresh connection.
fn http_get(addr: std::net::SocketAddr, target: &str) -> (u16, Vec<(String, String)>, Vec<u8>) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut r = BufReader::new(s);
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    let status = line.split(' ').nth(1).unwrap().parse().unwrap();
    let mut headers = Vec::new();
    loop {
        line.clear();
        r.read_line(&mut line).unwrap();
        if line.trim_end().is_empty() {
            break;
        }
        let (n, v) = line.trim_end().split_once(": ").unwrap();
        headers.push((n.to_ascii_lowercase(), v.to_string()));
    }
    let mut body = Vec::new();
    r.read_to_end(&mut body).unwrap();
    (status, headers, body)
}

#[test]
fn served_answers_match_the_model() {
    let demo = Demo::with_params(DemoParams {
        calendar_year: 2026,
        ..DemoParams::small(11)
    });
    let web = demo.serve().unwrap();
    let e = web.expected(&limits(2026));
    assert!(e.fetch.len() > 200, "{}", e.fetch.len());
    // Every URL to fetch answers over HTTP with the status the model says.
    for (u, f) in &e.fetch {
        let parsed = url::Url::parse(u).unwrap();
        let host = parsed.host_str().unwrap();
        let addr = std::net::SocketAddr::from((web.addr(host).unwrap(), web.port()));
        let target =
            &u[u.find(&format!(":{}/", web.port())).unwrap() + 1 + web.port().to_string().len()..];
        let (status, headers, _) = http_get(addr, target);
        assert_eq!(status, f.status, "{u}");
        if (300..400).contains(&status) {
            let location = headers.iter().find(|(n, _)| n == "location").unwrap();
            let next = url::Url::parse(u).unwrap().join(&location.1).unwrap();
            let link = &demo.links_of(u).unwrap()[0];
            assert_eq!(Some(next.as_str()), link.url.as_deref(), "{u}");
        }
    }
    // The server saw each of them once, and nothing else.
    let log = web.logs();
    assert_eq!(log.len(), e.fetch.len());

    // Encodings on the wire.
    let latin = std::net::SocketAddr::from((web.addr("latin.demo.test").unwrap(), web.port()));
    let (_, headers, body) = http_get(latin, "/latin1.html");
    assert!(headers.contains(&(
        "content-type".into(),
        "text/html; charset=iso-8859-1".into()
    )));
    assert!(body.windows(11).any(|w| w == b"href=\"/caf\xe9"));
    let (_, _, body) = http_get(latin, "/sjis.html");
    let (text, _, bad) = encoding_rs::SHIFT_JIS.decode(&body);
    assert!(!bad && text.contains("href=\"/日本.html\""));
    let (_, _, body) = http_get(latin, "/bom.html");
    assert!(body.starts_with(b"\xEF\xBB\xBF<!DOCTYPE html>"));
    let markup = std::net::SocketAddr::from((web.addr("markup.demo.test").unwrap(), web.port()));
    let (_, headers, _) = http_get(markup, "/header-nofollow.html");
    assert!(headers.contains(&("x-robots-tag".into(), "nofollow".into())));
    let (_, _, body) = http_get(markup, "/spellings.html");
    let body = String::from_utf8(body).unwrap();
    assert!(body.contains(&format!(
        "href=\"HTTP://MARKUP.DEMO.TEST:{}/spelled-1.html\"",
        web.port()
    )));
    assert!(body.contains("href=\"/query.html?a=1&amp;b=2\""));

    // The refusing host has an address in the hosts file but no listener.
    let gone = web.addr("gone.demo.test").unwrap();
    assert!(
        web.hosts_file()
            .contains(&format!("{gone} gone.demo.test\n"))
    );
    let err = TcpStream::connect((gone, web.port())).unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::ConnectionRefused);
    assert_eq!(web.seeds_file().lines().count(), web.seeds().len());
    assert_eq!(
        web.crawl_delay("slow.demo.test"),
        Some(Duration::from_secs(1))
    );

    // The black hole accepts, reads the request, never answers; dropping
    // the server closes the connection at once.
    let hole = std::net::SocketAddr::from((web.addr("hole.demo.test").unwrap(), web.port()));
    let mut held = TcpStream::connect(hole).unwrap();
    write!(
        held,
        "GET /robots.txt HTTP/1.1\r\nHost: hole.demo.test\r\n\r\n"
    )
    .unwrap();
    held.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut byte = [0u8; 1];
    assert!(held.read(&mut byte).is_err(), "the black hole answered");
    let dropping = std::time::Instant::now();
    drop(web);
    assert!(dropping.elapsed() < Duration::from_secs(2), "drop hung");
    held.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    assert_eq!(held.read(&mut byte).unwrap_or(0), 0, "still held");
}

#[test]
fn pages_only_sitemaps_lead_to_are_expected_within_the_protocol() {
    let demo = demo(3);
    let e = demo.expected(
        &Limits {
            sitemap_max_entries: 20,
            ..limits(2026)
        },
        PORT,
    );
    let maps = |t: &str| url("maps", t);
    // Named by robots.txt (maps's index; mapped's names a gzip sitemap),
    // then what the index lists, except the sitemap of the nested index.
    for sm in [
        "/sitemap-index.xml",
        "/pages-1.xml.gz",
        "/pages-2.xml.gz",
        "/news/sitemap.xml",
        "/nested-index.xml",
        "/broken.xml",
        "/bulk.xml",
    ] {
        assert!(e.sitemaps.contains(&maps(sm)), "{sm} read");
    }
    assert_eq!(e.fetch[&maps("/sitemap-index.xml")].hops, 0);
    assert_eq!(e.fetch[&maps("/pages-2.xml.gz")].hops, 0, "named by mapped");
    assert!(!e.fetch.contains_key(&maps("/too-deep.xml")));
    // Pages no page links to.
    for page in [
        "/hidden/1.html",
        "/news/item-2.html",
        "/before-the-fault.html",
        "/bulk/20.html",
    ] {
        assert!(e.fetch.contains_key(&maps(page)), "{page}");
        assert!(e.by_sitemap.contains(&maps(page)), "{page}");
    }
    assert!(e.by_sitemap.contains(&url("mapped", "/from-maps-1.html")));
    assert!(!e.by_sitemap.contains(&maps("/")), "linked from the portal");
    assert_eq!(
        e.excluded.get(&maps("/private/listed.html")),
        Some(&Exclusion::RobotsDisallowed)
    );
    assert!(matches!(
        e.excluded.get(&maps("/x/x/x/x/trap.html")),
        Some(Exclusion::Filter(_))
    ));
    // Refused by the protocol, past the fault, past the limit, too deep:
    // never met at all.
    for never in [
        maps("/outside-news.html"),
        maps("/after-the-fault.html"),
        maps("/bulk/21.html"),
        maps("/never.html"),
        url("shop", "/listed-by-maps.html"),
        format!("http://elsewhere.example:{PORT}/listed-by-maps.html"),
    ] {
        assert!(
            !e.fetch.contains_key(&never) && !e.excluded.contains_key(&never),
            "{never}"
        );
    }
    // Served as the sitemaps protocol has it.
    let web = demo.serve().unwrap();
    let get = |host: &str, target: &str| {
        let addr = web.addr(host).unwrap();
        let mut s = TcpStream::connect((addr, web.port())).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        write!(
            s,
            "GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut out = Vec::new();
        s.read_to_end(&mut out).unwrap();
        out
    };
    let robots = String::from_utf8(get("maps.demo.test", "/robots.txt")).unwrap();
    assert!(
        robots.contains(&format!(
            "Sitemap: http://maps.demo.test:{}/sitemap-index.xml\n",
            web.port()
        )),
        "{robots}"
    );
    let gz = get("maps.demo.test", "/pages-1.xml.gz");
    let text = String::from_utf8_lossy(&gz);
    assert!(text.contains("Content-Type: application/x-gzip"), "{text}");
    assert!(!text.contains("Content-Encoding"), "{text}");
    let body = &gz[gz.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4..];
    assert_eq!(&body[..2], &[0x1f, 0x8b]);
}
