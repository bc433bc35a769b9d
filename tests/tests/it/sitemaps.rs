//! Sitemaps end to end, with the real fetcher and segmenter on loopback
//! sites: robots.txt names a sitemap index and a sitemap on another host;
//! the index lists a gzip sitemap, a plain one, one in a directory, an
//! index (one level too deep), a malformed one and one over the size limit.
//! Pages listed only in sitemaps are fetched; URLs a sitemap may not list
//! (another directory, a host whose robots.txt does not name it), trap URLs
//! and URLs past the limits are not; the bad sitemaps are named on stderr
//! and the rounds go on; the report's counts match; `warcio check` passes.

use crate::support;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use testkit::bins::{self, segmenter_cmd};
use testkit::report::{figure, line};
use testkit::server::{Request, Response, Routes, Server};
use testkit::warcio;

use testkit::TempDir;
use testkit::gzip;

/// A `<urlset>` of `paths` on `host` (absolute URLs, port from the request).
fn urlset(port: u16, entries: &[(&str, &str)]) -> String {
    let mut s = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for (host, path) in entries {
        s.push_str(&format!(
            "  <url><loc>http://{host}:{port}{path}</loc><lastmod>2026-01-01</lastmod></url>\n"
        ));
    }
    s.push_str("</urlset>\n");
    s
}

/// A `<sitemapindex>` of sitemaps on `a.test`.
fn index(port: u16, paths: &[&str]) -> String {
    let mut s = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for path in paths {
        s.push_str(&format!(
            "  <sitemap><loc>http://a.test:{port}{path}</loc></sitemap>\n"
        ));
    }
    s.push_str("</sitemapindex>\n");
    s
}

fn xml(body: String) -> Response {
    Response::status(200)
        .header("Content-Type", "application/xml")
        .body(body.into_bytes())
}

/// `a.test`: the site with the sitemaps.
fn site_a(req: &Request) -> Response {
    let port = req.local_addr().port();
    match req.path() {
        "/robots.txt" => Response::text(format!(
            "User-agent: *\nDisallow: /private/\n\n\
             Sitemap: http://a.test:{port}/sitemap-index.xml\n\
             Sitemap: http://cdn.test:{port}/a-sitemap.xml\n"
        )),
        "/" => Response::html("<a href=\"/linked\">linked</a>"),
        "/linked" => Response::html("<p>linked from the home page</p>"),
        "/sitemap-index.xml" => xml(index(
            port,
            &[
                "/pages.xml.gz",
                "/more.xml",
                "/blog/sitemap.xml",
                "/nested-index.xml",
                "/bad.xml",
                "/big.xml",
            ],
        )),
        "/pages.xml.gz" => Response::status(200)
            .header("Content-Type", "application/x-gzip")
            .body(gzip(urlset(
                port,
                &[
                    ("a.test", "/only-in-sitemap-1"),
                    ("a.test", "/only-in-sitemap-2"),
                    ("a.test", "/linked"),
                    // Disallowed by robots.txt: scheduled, never fetched.
                    ("a.test", "/private/secret"),
                    // A crawler trap: refused by the filters.
                    ("a.test", "/x/x/x/x/trap"),
                    // b.test's robots.txt names this sitemap: allowed.
                    ("b.test", "/from-a-sitemap"),
                    // c.test's robots.txt does not: refused (protocol).
                    ("c.test", "/not-authorized"),
                    ("elsewhere.example", "/not-authorized"),
                ],
            ))),
        // Says /only-in-sitemap-1 changed after the crawl fetches it (it
        // is fetched in the same round as this sitemap): it is due again.
        "/more.xml" => {
            let later = std::time::SystemTime::now() + Duration::from_secs(3600);
            xml(format!(
                "<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n\
                 <url><loc>http://a.test:{port}/only-in-more</loc></url>\n\
                 <url><loc>http://a.test:{port}/only-in-sitemap-1</loc><lastmod>{}</lastmod></url>\n\
                 </urlset>\n",
                common::timefmt::iso_seconds(later)
            ))
        }
        "/blog/sitemap.xml" => xml(urlset(
            port,
            &[("a.test", "/blog/post-1"), ("a.test", "/outside-the-blog")],
        )),
        "/nested-index.xml" => xml(index(port, &["/too-deep.xml"])),
        "/too-deep.xml" => xml(urlset(port, &[("a.test", "/never")])),
        "/bad.xml" => xml(format!(
            "<?xml version=\"1.0\"?>\n<urlset>\n  <url><loc>http://a.test:{port}/before-the-fault</loc></url>\n  <url><loc>http://a.test:{port}/x</loc></oops>\n</urlset>\n"
        )),
        "/big.xml" => {
            // 200 entries, far more than the 4 KiB the test allows.
            let entries: Vec<String> = (0..200).map(|i| format!("/big/{i:03}")).collect();
            let pairs: Vec<(&str, &str)> = entries.iter().map(|p| ("a.test", p.as_str())).collect();
            xml(urlset(port, &pairs))
        }
        p if p.starts_with("/only-") || p.starts_with("/blog/post") || p.starts_with("/big/") => {
            Response::html(format!("<p>{p}</p>"))
        }
        _ => Response::not_found(),
    }
}

/// `b.test`: its robots.txt names a.test's gzip sitemap.
fn site_b(req: &Request) -> Response {
    let port = req.local_addr().port();
    match req.path() {
        "/robots.txt" => Response::text(format!(
            "User-agent: *\nAllow: /\nSitemap: http://a.test:{port}/pages.xml.gz\n"
        )),
        "/" | "/from-a-sitemap" => Response::html("<p>b</p>"),
        _ => Response::not_found(),
    }
}

/// `c.test`: names no sitemap; `cdn.test`: hosts a sitemap a.test names.
fn site_c(req: &Request) -> Response {
    match req.path() {
        "/" | "/not-authorized" => Response::html("<p>c</p>"),
        _ => Response::not_found(),
    }
}

fn site_cdn(req: &Request) -> Response {
    let port = req.local_addr().port();
    match req.path() {
        "/a-sitemap.xml" => xml(urlset(
            port,
            &[("a.test", "/via-cdn"), ("cdn.test", "/cdn-page")],
        )),
        "/cdn-page" => Response::html("<p>cdn</p>"),
        _ => Response::not_found(),
    }
}

fn site_elsewhere(req: &Request) -> Response {
    match req.path() {
        "/" | "/not-authorized" => Response::html("<p>elsewhere</p>"),
        _ => Response::not_found(),
    }
}

struct Crawl {
    root: PathBuf,
    hosts: PathBuf,
}

impl Crawl {
    /// `segmenter run`: its stderr (report and warnings).
    fn run(&self) -> String {
        bins::run_within(
            segmenter_cmd()
                .arg("run")
                .arg(&self.root)
                .env_remove("SEGMENTER_PAUSE_AT"),
            &self.root,
            0,
            Duration::from_secs(60),
        )
        .stderr
    }

    /// Fetches every pending segment.
    fn fetch(&self) {
        let crawl = common::crawldir::CrawlDir::new(&self.root);
        for id in crawl.pending_segments().unwrap() {
            bins::run_within(
                bins::fetch_cmd(&self.root, &self.hosts).arg(&id),
                &self.root,
                0,
                Duration::from_secs(60),
            );
        }
    }

    fn warcs(&self) -> Vec<PathBuf> {
        let mut all = Vec::new();
        for id in common::crawldir::CrawlDir::new(&self.root)
            .completed_runs()
            .unwrap()
        {
            all.extend(warcio::warc_files(&self.root.join("fetched").join(id)));
        }
        all
    }
}

fn setup(name: &str, extra: &str) -> (Server, TempDir, Crawl) {
    let server = Server::builder()
        .host("a.test", Routes::new().fallback(site_a))
        .host("b.test", Routes::new().fallback(site_b))
        .host("c.test", Routes::new().fallback(site_c))
        .host("cdn.test", Routes::new().fallback(site_cdn))
        .host("elsewhere.example", Routes::new().fallback(site_elsewhere))
        .start()
        .unwrap();
    let scratch = TempDir::new(name);
    let root = scratch.path().join("crawl");
    std::fs::create_dir_all(&root).unwrap();
    let hosts = scratch.path().join("hosts");
    std::fs::write(&hosts, server.hosts_file()).unwrap();
    std::fs::write(
        root.join("crawl.toml"),
        format!(
            "[agent]\nname = \"testbot\"\nurl = \"http://bot.test/about\"\n\n\
             [fetcher]\nallow_private = true\nhosts_file = \"{}\"\nmin_delay = \"0ms\"\n\
             delay_factor = 0\n\n\
             [scope]\nmode = \"list\"\nhosts = [\"a.test\", \"b.test\", \"c.test\", \"cdn.test\"]\n\n\
             [segmenter]\nsitemap_max_bytes = \"4KiB\"\n{extra}",
            hosts.display()
        ),
    )
    .unwrap();
    let seeds = scratch.path().join("seeds.txt");
    std::fs::write(
        &seeds,
        ["a.test", "b.test", "c.test"]
            .iter()
            .map(|h| format!("{}\n", server.url(h, "/")))
            .collect::<String>(),
    )
    .unwrap();
    support::inject(&root, &seeds, &root, Duration::from_secs(60));
    (server, scratch, Crawl { root, hosts })
}

fn requested(server: &Server, host: &str) -> BTreeSet<String> {
    server.log(host).iter().map(|e| e.target.clone()).collect()
}

#[test]
fn pages_listed_only_in_sitemaps_are_fetched_and_nothing_the_protocol_refuses() {
    let (server, _scratch, c) = setup("sitemaps", "");

    // Round 1: the seeds, and the robots.txt files naming the sitemaps:
    // two on a.test, one on b.test (a.test's gzip sitemap).
    c.fetch();
    let report = c.run();
    assert_eq!(
        line(&report, "sitemaps named:"),
        "3 (robots.txt), 0 guessed",
        "{report}"
    );
    // Round 2: the index, the cdn sitemap and the gzip sitemap.
    c.fetch();
    let report = c.run();
    assert_eq!(figure(&report, "sitemaps read:"), 3, "{report}");
    assert!(
        line(&report, "sitemaps read:").contains("urlset 2, sitemapindex 1"),
        "{report}"
    );
    // The index lists six sitemaps (one, the gzip one, already scheduled);
    // the cdn sitemap two pages (a.test's robots.txt lets it list a.test's);
    // the gzip sitemap eight URLs: two pages found nowhere else, a linked
    // page (already scheduled), a disallowed page, a trap, a b.test page
    // (b.test's robots.txt names the sitemap), and two pages of hosts
    // whose robots.txt does not.
    assert_eq!(figure(&report, "sitemap urls:"), 16, "{report}");
    assert_eq!(figure(&report, "sitemap urls new:"), 5 + 2 + 4, "{report}");
    let rejected = line(&report, "sitemap urls rejected:");
    assert!(
        rejected.starts_with("3 (protocol 2, filters 1, limits 0, depth 0, invalid 0)"),
        "{report}"
    );
    assert_eq!(figure(&report, "bad sitemaps:"), 0, "{report}");
    // `segmenter inspect` of the new segment counts them by via: the five
    // sitemaps of the index not yet scheduled, the six pages admitted
    // (two cdn ones, four of the gzip sitemap).
    let ids = common::crawldir::CrawlDir::new(&c.root)
        .segment_ids()
        .unwrap();
    let newest = common::crawldir::CrawlDir::new(&c.root).segment_path(ids.last().unwrap());
    let out = bins::run(
        segmenter_cmd().arg("inspect").arg("--json").arg(&newest),
        &c.root,
    );
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["via"]["sitemap-file"], 5, "{}", out.stdout);
    assert_eq!(v["via"]["sitemap"], 6, "{}", out.stdout);
    assert_eq!(v["format_version"], 5);

    // Round 3: the five other sitemaps of the index.
    c.fetch();
    let report = c.run();
    assert_eq!(figure(&report, "sitemaps read:"), 5, "{report}");
    assert!(
        line(&report, "sitemaps read:").contains("sitemapindex 1"),
        "{report}"
    );
    assert_eq!(figure(&report, "bad sitemaps:"), 1, "{report}");
    assert!(
        line(&report, "bad sitemaps:").contains("over the limits 1"),
        "{report}"
    );
    // The malformed one is named with the WARC file, the record and the
    // parser's byte offset; the one over the limit too.
    let warning = report
        .lines()
        .find(|l| l.contains("/bad.xml") && l.contains("bad sitemap"))
        .unwrap_or_else(|| panic!("no warning about bad.xml:\n{report}"));
    assert!(
        warning.contains(".warc.gz: offset ") && warning.contains("at byte "),
        "{warning}"
    );
    assert!(
        report.contains("/big.xml: sitemap over the limits"),
        "{report}"
    );
    let rejected = line(&report, "sitemap urls rejected:");
    // /outside-the-blog is not under /blog/; too-deep.xml is listed by an
    // index listed in an index.
    assert!(rejected.contains("(protocol 1, filters 0,"), "{rejected}");
    assert!(rejected.contains("depth 1,"), "{rejected}");
    // The lastmod of more.xml makes /only-in-sitemap-1 due again, though
    // its recrawl interval (30 days by default) is far from over.
    assert_eq!(figure(&report, "sitemap lastmod hints:"), 1, "{report}");
    assert!(
        line(&report, "history:").contains("1 by a sitemap's lastmod"),
        "{report}"
    );
    assert_eq!(figure(&report, "refetches scheduled:"), 1, "{report}");
    // Round 4: the pages.
    c.fetch();
    c.run();

    let a = requested(&server, "a.test");
    for page in [
        "/only-in-sitemap-1",
        "/only-in-sitemap-2",
        "/only-in-more",
        "/blog/post-1",
        "/via-cdn",
        "/before-the-fault",
        "/big/000",
    ] {
        assert!(a.contains(page), "{page} not fetched: {a:?}");
    }
    for never in [
        "/private/secret",
        "/x/x/x/x/trap",
        "/outside-the-blog",
        "/too-deep.xml",
        "/never",
        "/big/199",
    ] {
        assert!(!a.contains(never), "{never} fetched: {a:?}");
    }
    let fetches = |path: &str| {
        server
            .log("a.test")
            .iter()
            .filter(|e| e.target == path)
            .count()
    };
    assert_eq!(
        fetches("/only-in-sitemap-1"),
        2,
        "fetched, then due by lastmod"
    );
    assert_eq!(fetches("/only-in-sitemap-2"), 1);
    assert!(requested(&server, "b.test").contains("/from-a-sitemap"));
    assert!(!requested(&server, "c.test").contains("/not-authorized"));
    assert!(server.log("elsewhere.example").is_empty());
    assert!(requested(&server, "cdn.test").contains("/cdn-page"));

    // The segments say how each URL was found.
    let mut vias = BTreeSet::new();
    for f in std::fs::read_dir(c.root.join("segments")).unwrap() {
        let text = support::zstdcat(&f.unwrap().path());
        for l in text.lines() {
            let fields: Vec<&str> = l.split('\t').collect();
            vias.insert((
                fields[1].rsplit_once('/').unwrap().1.to_string(),
                fields[4].to_string(),
            ));
        }
    }
    assert!(
        vias.contains(&("only-in-sitemap-1".into(), "sitemap".into())),
        "{vias:?}"
    );
    assert!(
        vias.contains(&("sitemap-index.xml".into(), "sitemap-file".into())),
        "{vias:?}"
    );
    assert!(vias.contains(&("linked".into(), "link".into())), "{vias:?}");

    // hosts.db keeps what each robots.txt names.
    let db = common::hoststate::HostDb::open_read_only(c.root.join("hosts.db"))
        .unwrap()
        .unwrap();
    let named = |host: &str| db.get(host).unwrap().unwrap().robots.unwrap().sitemaps;
    assert_eq!(
        named("a.test"),
        [
            server.url("a.test", "/sitemap-index.xml"),
            server.url("cdn.test", "/a-sitemap.xml")
        ]
    );
    assert_eq!(named("b.test"), [server.url("a.test", "/pages.xml.gz")]);
    assert!(named("c.test").is_empty());
    warcio::check(&c.warcs()).unwrap();
}

#[test]
fn sitemaps_off_reads_nothing_and_guess_asks_for_sitemap_xml() {
    let (server, _scratch, c) = setup("sitemaps-off", "sitemaps = false\n");
    c.fetch();
    let report = c.run();
    assert_eq!(
        line(&report, "sitemaps named:"),
        "0 (robots.txt), 0 guessed"
    );
    c.fetch();
    c.run();
    assert!(!requested(&server, "a.test").contains("/sitemap-index.xml"));

    let (server, _scratch, c) = setup("sitemaps-guess", "sitemap_guess = true\n");
    c.fetch();
    let report = c.run();
    // c.test's robots.txt is a 404 and names nothing: /sitemap.xml is
    // guessed for it alone.
    assert_eq!(
        line(&report, "sitemaps named:"),
        "3 (robots.txt), 1 guessed",
        "{report}"
    );
    c.fetch();
    let c_asked = requested(&server, "c.test");
    assert!(c_asked.contains("/sitemap.xml"), "{c_asked:?}");
    assert!(!requested(&server, "a.test").contains("/sitemap.xml"));
}

#[test]
fn crawl_sh_says_what_sitemaps_gave_each_round() {
    let (_server, _scratch, c) = setup("sitemaps-sh", "");
    let out = bins::run_within(
        Command::new(support::crawl_sh())
            .arg(&c.root)
            .arg("--bin")
            .arg(bins::bin_dir())
            .args(["--rounds", "3"]),
        &c.root,
        0,
        Duration::from_secs(120),
    );
    let rounds: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("round "))
        .collect();
    assert_eq!(rounds.len(), 3, "{}", out.stdout);
    // The seeds' round reads no sitemap; the next reads three (see the
    // test above for what they list).
    assert!(
        rounds[0].contains("; sitemaps: 0 read, 0 URLs, 0 new, 0 rejected, 0 bad;"),
        "{}",
        rounds[0]
    );
    assert!(
        rounds[1].contains("; sitemaps: 3 read, 16 URLs, 11 new, 3 rejected, 0 bad;"),
        "{}",
        rounds[1]
    );
    assert!(rounds[2].contains("; sitemaps: 5 read, "), "{}", rounds[2]);
    assert!(rounds[2].contains(" 1 bad;"), "{}", rounds[2]);
}

/// `r.test`: robots.txt names a sitemap that moved (301 to an index), a
/// text sitemap that `l.test` links to, and two sitemaps larger than the
/// fetcher's `max_body` (a urlset and a text list).
fn site_r(req: &Request) -> Response {
    let port = req.local_addr().port();
    let url = |path: &str| format!("http://r.test:{port}{path}");
    match req.path() {
        "/robots.txt" => Response::text(format!(
            "User-agent: *\nAllow: /\n\
             Sitemap: {}\nSitemap: {}\nSitemap: {}\nSitemap: {}\n",
            url("/sitemap.xml"),
            url("/list.txt"),
            url("/cut.xml"),
            url("/cut.txt"),
        )),
        "/sitemap.xml" => Response::status(301).header("Location", url("/sitemap_index.xml")),
        "/sitemap_index.xml" => xml(format!(
            "<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n\
             <sitemap><loc>{}</loc></sitemap>\n</sitemapindex>\n",
            url("/child.xml")
        )),
        "/child.xml" => xml(urlset(port, &[("r.test", "/from-child")])),
        // No robots.txt names it: found by l.test's link.
        "/linked-index.xml" => xml(format!(
            "<sitemapindex xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n\
             <sitemap><loc>{}</loc></sitemap>\n</sitemapindex>\n",
            url("/child2.xml")
        )),
        "/child2.xml" => xml(urlset(port, &[("r.test", "/from-child2")])),
        "/list.txt" => Response::text(format!("{}\n", url("/from-list"))),
        "/cut.xml" => {
            let entries: Vec<String> = (0..100).map(|i| format!("/x/{i:03}")).collect();
            let pairs: Vec<(&str, &str)> = entries.iter().map(|p| ("r.test", p.as_str())).collect();
            xml(urlset(port, &pairs))
        }
        "/cut.txt" => Response::text(
            (0..200)
                .map(|i| format!("{}\n", url(&format!("/t/{i:03}"))))
                .collect::<String>(),
        ),
        "/" | "/from-child" | "/from-child2" | "/from-list" => Response::html("<p>r</p>"),
        p if p.starts_with("/x/") || p.starts_with("/t/") => Response::html("<p>r</p>"),
        _ => Response::not_found(),
    }
}

/// `l.test`: a page linking to r.test's text sitemap (found as a link one
/// round before r.test's robots.txt names it) and to an index no robots.txt
/// names.
fn site_l(req: &Request) -> Response {
    let port = req.local_addr().port();
    match req.path() {
        "/" => Response::html(format!(
            "<a href=\"http://r.test:{port}/list.txt\">list</a>\
             <a href=\"http://r.test:{port}/linked-index.xml\">index</a>"
        )),
        _ => Response::not_found(),
    }
}

#[test]
fn a_sitemap_stays_one_when_it_moves_is_linked_or_is_cut() {
    let server = Server::builder()
        .host("r.test", Routes::new().fallback(site_r))
        .host("l.test", Routes::new().fallback(site_l))
        .start()
        .unwrap();
    let scratch = TempDir::new("sitemaps-kept");
    let root = scratch.path().join("crawl");
    std::fs::create_dir_all(&root).unwrap();
    let hosts = scratch.path().join("hosts");
    std::fs::write(&hosts, server.hosts_file()).unwrap();
    std::fs::write(
        root.join("crawl.toml"),
        format!(
            "[agent]\nname = \"testbot\"\nurl = \"http://bot.test/about\"\n\n\
             [fetcher]\nallow_private = true\nhosts_file = \"{}\"\nmin_delay = \"0ms\"\n\
             delay_factor = 0\nmax_body = \"2KiB\"\n\n\
             [scope]\nmode = \"list\"\nhosts = [\"r.test\", \"l.test\"]\n",
            hosts.display()
        ),
    )
    .unwrap();
    let seeds = scratch.path().join("seeds.txt");
    std::fs::write(&seeds, format!("{}\n", server.url("l.test", "/"))).unwrap();
    support::inject(&root, &seeds, &root, Duration::from_secs(60));
    let c = Crawl { root, hosts };

    let mut reports = Vec::new();
    // 1: l.test/ links to r.test/list.txt. 2: r.test's robots.txt names
    // it and the others; list.txt (come as a link) is read as a sitemap.
    // 3: /sitemap.xml redirects; the cut sitemaps are read. 4: the index
    // it moved to. 5: the index's sitemap. 6: its page.
    for _ in 0..6 {
        c.fetch();
        reports.push(c.run());
    }
    let all = reports.join("\n");
    let r = requested(&server, "r.test");
    assert!(
        r.contains("/from-list"),
        "the linked text sitemap was read: {r:?}\n{all}"
    );
    assert!(r.contains("/sitemap_index.xml"), "{r:?}");
    assert!(
        r.contains("/from-child"),
        "the moved index's sitemap was read: {r:?}\n{all}"
    );
    // An index found by a link counts its levels from itself.
    assert!(
        r.contains("/from-child2"),
        "the linked index's sitemap was read: {r:?}\n{all}"
    );
    for report in &reports {
        assert_eq!(figure(report, "bad sitemaps:"), 0, "{report}");
        assert!(
            line(report, "sitemap urls rejected:").contains("depth 0,"),
            "{report}"
        );
    }
    // The cut sitemaps: read as far as they came, over the limits, the
    // warning names the settings that cut them.
    let cut_round = reports
        .iter()
        .find(|r| r.contains("/cut.xml: sitemap cut before its end"))
        .unwrap_or_else(|| panic!("no warning about cut.xml:\n{all}"));
    assert!(cut_round.contains("--max-body"), "{cut_round}");
    assert!(
        cut_round.contains("/cut.txt: sitemap cut before its end"),
        "{cut_round}"
    );
    assert!(
        line(cut_round, "bad sitemaps:").contains("over the limits 2"),
        "{cut_round}"
    );
    assert!(r.contains("/x/000") && r.contains("/t/000"), "{r:?}");
    // Nothing past 2 KiB, and no partial line taken as a URL.
    assert!(!r.contains("/x/099") && !r.contains("/t/199"), "{r:?}");
    for path in r.iter().filter(|p| p.starts_with("/t/")) {
        assert_eq!(path.len(), "/t/000".len(), "a cut line was fetched: {path}");
    }
}
