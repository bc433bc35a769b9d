//! Recrawl end to end: a site whose pages change between rounds, crawled
//! by the real fetcher and segmenter round after round. A refetch sends its
//! validators; a 304 is stored as a `revisit` record (server-not-modified),
//! an unchanged 200 from a server that ignores validators as one
//! (identical-payload-digest); `warcio check` accepts both; a changed page
//! gets a shorter interval, a page that became 404 is retired after two
//! answers, a 301 at once; and nothing is fetched before it is due.

use crate::support;

use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::warc::{WarcReader, WarcRecord};
use testkit::bins::{self, fetcher_cmd, segmenter_cmd};
use testkit::report::figure;
use testkit::server::{Request, Response, Routes, Server};
use testkit::warcio;

use testkit::TempDir;

/// The site: which round it is in, and how many conditional requests it saw.
#[derive(Default)]
struct Site {
    round: AtomicUsize,
    conditional: AtomicUsize,
}

impl Site {
    fn answer(&self, req: &Request) -> Response {
        let round = self.round.load(Ordering::SeqCst);
        let inm = req.header("if-none-match").map(str::to_string);
        if inm.is_some() || req.header("if-modified-since").is_some() {
            self.conditional.fetch_add(1, Ordering::SeqCst);
        }
        // A page that honours If-None-Match.
        let page = |etag: String, body: String| {
            if inm.as_deref() == Some(etag.as_str()) {
                Response::status(304).header("ETag", etag)
            } else {
                Response::html(body).header("ETag", etag)
            }
        };
        match req.path() {
            "/robots.txt" => Response::not_found(),
            "/" => page(
                "\"home\"".into(),
                "<a href=/a>a</a> <a href=/b>b</a> <a href=/gone>g</a> <a href=/moved>m</a>".into(),
            ),
            // Changes every round.
            "/a" => page(
                format!("\"a{round}\""),
                format!("<p>a, version {round}</p>"),
            ),
            // Never changes; the server ignores validators.
            "/b" => {
                Response::html("<p>b</p>").header("Last-Modified", "Tue, 24 Nov 2026 10:00:00 GMT")
            }
            "/gone" if round == 0 => Response::html("<p>here</p>"),
            "/gone" => Response::not_found(),
            "/moved" if round == 0 => Response::html("<p>here</p>"),
            "/moved" => Response::redirect(301, "/new"),
            "/new" => Response::html("<p>new</p>"),
            _ => Response::not_found(),
        }
    }
}

/// A crawl directory driven one command at a time.
pub(crate) struct Crawl {
    pub(crate) root: PathBuf,
}

impl Crawl {
    pub(crate) fn segmenter(&self, args: &[&str]) -> String {
        let out = bins::run(
            segmenter_cmd().args(args).env_remove("SEGMENTER_PAUSE_AT"),
            &self.root,
        );
        out.stderr
    }

    pub(crate) fn run(&self) -> String {
        self.segmenter(&["run", self.root.to_str().unwrap()])
    }

    /// Fetches the next segment; returns its ID.
    pub(crate) fn fetch(&self) -> String {
        self.fetch_with(&[])
    }

    /// [`Crawl::fetch`] with more fetcher flags.
    pub(crate) fn fetch_with(&self, flags: &[&str]) -> String {
        let out = bins::run(
            segmenter_cmd().args(["status", self.root.to_str().unwrap()]),
            &self.root,
        )
        .stdout;
        let next = out
            .lines()
            .find_map(|l| l.strip_prefix("next: "))
            .unwrap_or_default()
            .to_string();
        assert!(!next.is_empty(), "no segment to fetch:\n{out}");
        bins::run_within(
            fetcher_cmd()
                .args(["fetch", self.root.to_str().unwrap(), &next])
                .args(["--progress", "none"])
                .args(flags),
            &self.root,
            0,
            Duration::from_secs(60),
        );
        next
    }

    fn records(&self, id: &str) -> Vec<WarcRecord> {
        let mut out = Vec::new();
        for file in self.warcs(id) {
            let mut r = WarcReader::open(&file, 1 << 20).unwrap();
            let mut rec = WarcRecord::default();
            while r.read_next(&mut rec).unwrap() {
                out.push(rec.clone());
            }
        }
        out
    }

    fn warcs(&self, id: &str) -> Vec<PathBuf> {
        warcio::warc_files(&self.root.join("fetched").join(id))
    }

    pub(crate) fn history_line(&self, url: &str) -> Vec<String> {
        let text = support::history_text(&self.root);
        text.lines()
            .map(|l| l.split('\t').map(str::to_string).collect::<Vec<_>>())
            .find(|f| f.len() > 1 && f[1] == url)
            .unwrap_or_else(|| panic!("{url} not in the history:\n{text}"))
    }
}

fn revisits<'a>(records: &'a [WarcRecord], profile: &str) -> Vec<&'a WarcRecord> {
    records
        .iter()
        .filter(|r| {
            r.record_type() == Some("revisit")
                && r.header("WARC-Profile")
                    .is_some_and(|p| p.ends_with(profile))
        })
        .collect()
}

fn wait_until_due(seconds: f64) {
    std::thread::sleep(Duration::from_secs_f64(seconds));
}

/// The site's server, and a crawl directory for it whose URLs come due 4 s
/// after their first fetch; returns the seeds file too.
fn setup(name: &str) -> (Arc<Site>, Server, TempDir, PathBuf, PathBuf) {
    let site = Arc::new(Site::default());
    let handler = site.clone();
    let server = Server::builder()
        .host(
            "site.test",
            Routes::new().fallback(move |r: &Request| handler.answer(r)),
        )
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
            "[agent]\nname = \"recrawlbot\"\nurl = \"https://example.org/bot.html\"\n\n\
             [fetcher]\nallow_private = true\nhosts_file = \"{}\"\nmin_delay = \"0ms\"\n\
             delay_factor = 0\n\n\
             [segmenter]\nrecrawl_interval = \"4s\"\nrecrawl_min = \"1s\"\n\
             recrawl_max = \"100s\"\nrecrawl_gone_after = 2\n",
            hosts.display()
        ),
    )
    .unwrap();
    let seeds = scratch.path().join("seeds.txt");
    std::fs::write(&seeds, format!("{}\n", server.url("site.test", "/"))).unwrap();
    (site, server, scratch, root, seeds)
}

#[test]
fn pages_are_refetched_conditionally_and_the_history_follows_them() {
    let (site, server, _scratch, root, seeds) = setup("recrawl");
    let c = Crawl { root: root.clone() };
    c.segmenter(&["inject", root.to_str().unwrap(), seeds.to_str().unwrap()]);
    let url = |p: &str| server.url("site.test", p);

    // Round 0: the home page, then its four links.
    c.fetch();
    c.run();
    c.fetch();
    let report = c.run();
    assert_eq!(figure(&report, "fetched new:"), 4, "{report}");
    assert_eq!(
        figure(&report, "due in:"),
        0,
        "nothing is due yet: {report}"
    );
    assert_eq!(site.conditional.load(Ordering::SeqCst), 0);

    // The site changes; the five pages come due.
    site.round.store(1, Ordering::SeqCst);
    wait_until_due(4.2);
    let report = c.run();
    assert_eq!(figure(&report, "refetches scheduled:"), 5, "{report}");
    let id = c.fetch();
    // Validators went out for the three pages that had some.
    assert_eq!(site.conditional.load(Ordering::SeqCst), 3);
    let records = c.records(&id);
    let not_modified = revisits(&records, "/server-not-modified");
    assert_eq!(not_modified.len(), 1, "the home page answered 304");
    assert_eq!(not_modified[0].target_uri(), Some(url("/").as_str()));
    assert_eq!(
        not_modified[0].header("WARC-Refers-To-Target-URI"),
        Some(url("/").as_str())
    );
    assert!(not_modified[0].header("WARC-Refers-To-Date").is_some());
    let identical = revisits(&records, "/identical-payload-digest");
    assert_eq!(identical.len(), 1, "/b is the same page");
    assert_eq!(identical[0].target_uri(), Some(url("/b").as_str()));
    assert!(identical[0].header("WARC-Payload-Digest").is_some());
    warcio::check(&c.warcs(&id)).unwrap();

    let report = c.run();
    assert_eq!(figure(&report, "revisit records:"), 2, "{report}");
    assert_eq!(figure(&report, "refetched unchanged:"), 2, "{report}");
    assert_eq!(figure(&report, "refetched changed:"), 1, "{report}");
    assert_eq!(figure(&report, "retired:"), 1, "the 301: {report}");
    // Intervals: the changed page halves, the unchanged ones grow by half.
    assert_eq!(c.history_line(&url("/a"))[5], "2");
    assert_eq!(c.history_line(&url("/b"))[5], "6");
    assert_eq!(c.history_line(&url("/"))[5], "6");
    assert_eq!(c.history_line(&url("/moved"))[9], "moved");
    assert_eq!(c.history_line(&url("/gone"))[9], "active", "one 404 so far");

    // The redirect's target is new; then the gone page's second 404.
    c.fetch();
    c.run();
    wait_until_due(4.2);
    let report = c.run();
    assert!(figure(&report, "refetches scheduled:") >= 2, "{report}");
    c.fetch();
    let report = c.run();
    assert_eq!(figure(&report, "retired:"), 1, "the 404: {report}");
    assert_eq!(c.history_line(&url("/gone"))[9], "gone");
    // Retired URLs are never asked for again.
    let asked = |path: &str| {
        server
            .log("site.test")
            .iter()
            .filter(|e| e.target == path)
            .count()
    };
    let (gone, moved) = (asked("/gone"), asked("/moved"));
    wait_until_due(4.2);
    c.run();
    c.fetch();
    assert_eq!((asked("/gone"), asked("/moved")), (gone, moved));
}

#[test]
fn crawl_sh_keeps_serving_due_urls_and_says_what_the_history_learnt() {
    let (site, _server, _scratch, root, seeds) = setup("recrawl-sh");
    let crawl_sh = |rounds: &str| {
        let out = bins::run_within(
            Command::new(support::crawl_sh())
                .arg(&root)
                .arg("--bin")
                .arg(bins::bin_dir())
                .arg("--seeds")
                .arg(&seeds)
                .args(["--rounds", rounds]),
            &root,
            0,
            Duration::from_secs(120),
        );
        out.stdout
    };
    // The home page, then its links; then nothing is new and nothing due.
    let out = crawl_sh("5");
    assert!(
        out.contains("history: 1 new, 0 refreshed (0 unchanged, 0 changed), 0 retired"),
        "{out}"
    );
    assert!(
        out.contains("history: 4 new, 0 refreshed (0 unchanged, 0 changed), 0 retired"),
        "{out}"
    );
    assert!(
        out.contains("none of the 5 URL(s) of the fetch history is due"),
        "{out}"
    );
    // Once they are due, a run refetches them: two unchanged (a 304 and an
    // identical page), one changed, the 301 retired.
    site.round.store(1, Ordering::SeqCst);
    wait_until_due(4.2);
    let out = crawl_sh("1");
    assert!(
        out.contains("history: 0 new, 3 refreshed (2 unchanged, 1 changed), 1 retired"),
        "{out}"
    );
}

#[test]
fn a_refetch_left_over_keeps_its_validators_into_the_next_segment() {
    let (site, server, _scratch, root, seeds) = setup("recrawl-leftover");
    let c = Crawl { root: root.clone() };
    c.segmenter(&["inject", root.to_str().unwrap(), seeds.to_str().unwrap()]);
    let page = server.url("site.test", "/a");
    c.fetch();
    c.run();
    c.fetch();
    c.run();
    wait_until_due(4.2);
    let report = c.run();
    assert_eq!(figure(&report, "refetches scheduled:"), 5, "{report}");

    // The round ends (its time limit) while the host waits out its delay
    // after its first refetch (the home page, fewest hops): the other
    // four go to the leftover.
    let id = c.fetch_with(&["--min-delay", "3s", "--time-limit", "1s"]);
    assert_eq!(
        site.conditional.load(Ordering::SeqCst),
        1,
        "only / was asked"
    );
    let leftover = support::zstdcat(&root.join("fetched").join(&id).join("leftover.v5.tsv.zst"));
    let line = |text: &str| -> Vec<String> {
        text.lines()
            .map(|l| l.split('\t').map(str::to_string).collect::<Vec<_>>())
            .find(|f| f.len() > 1 && f[1] == page)
            .unwrap_or_else(|| panic!("{page} is not in:\n{text}"))
    };
    let left = line(&leftover);
    assert_eq!(left[7], "\"a0\"", "the leftover keeps the ETag: {left:?}");
    assert!(
        left[11].starts_with("<urn:uuid:"),
        "and the record ID: {left:?}"
    );

    // The next segment carries the validators, digest and fetch time on.
    c.run();
    let next = root
        .join("segments")
        .join(format!("{:05}.v5.tsv.zst", id.parse::<u32>().unwrap() + 1));
    let carried = line(&support::zstdcat(&next));
    assert_eq!(
        carried[7..],
        left[7..],
        "etag, last_modified, digest, fetched, record_id"
    );
    assert!(carried[9].starts_with("sha1:"), "{carried:?}");

    // And the fetcher asks conditionally: the server sees the validators
    // of the two left-over pages that had some, and /a is a revisit.
    let id = c.fetch();
    assert_eq!(site.conditional.load(Ordering::SeqCst), 3);
    let asked: Vec<_> = server
        .log("site.test")
        .into_iter()
        .filter(|e| e.target == "/a")
        .collect();
    assert_eq!(asked.len(), 2, "fetched once, then refetched once");
    let records = c.records(&id);
    let not_modified = revisits(&records, "/server-not-modified");
    assert_eq!(not_modified.len(), 1, "/a answered 304");
    assert_eq!(not_modified[0].target_uri(), Some(page.as_str()));
    assert_eq!(
        not_modified[0].header("WARC-Refers-To"),
        Some(left[11].as_str()),
        "the revisit names the response the leftover carried"
    );
}

/// The first response of each URL of the site (`WARC-Record-ID`, `WARC-Date`).
fn responses(records: &[WarcRecord]) -> std::collections::HashMap<String, (String, String)> {
    records
        .iter()
        .filter(|r| r.record_type() == Some("response"))
        .map(|r| {
            let field = |name: &str| r.header(name).unwrap_or_default().to_string();
            (
                field("WARC-Target-URI"),
                (field("WARC-Record-ID"), field("WARC-Date")),
            )
        })
        .collect()
}

#[test]
fn every_revisit_refers_to_the_first_response_round_after_round() {
    let (_site, server, _scratch, root, seeds) = setup("recrawl-refers");
    let c = Crawl { root: root.clone() };
    c.segmenter(&["inject", root.to_str().unwrap(), seeds.to_str().unwrap()]);
    // The home page, then its links: the responses revisits will name.
    let mut first = responses(&c.records(&c.fetch()));
    c.run();
    first.extend(responses(&c.records(&c.fetch())));
    c.run();
    // `/` answers 304 to its ETag, `/b` the same page: revisits. The
    // third round's revisits stand for the first responses too, not for
    // the second round's revisits.
    let mut revisited = Vec::new();
    for (round, wait) in [(2, 4.2), (3, 6.2)] {
        wait_until_due(wait);
        let report = c.run();
        assert!(figure(&report, "refetches scheduled:") >= 2, "{report}");
        let id = c.fetch();
        let records = c.records(&id);
        for (path, profile) in [
            ("/", "/server-not-modified"),
            ("/b", "/identical-payload-digest"),
        ] {
            let url = server.url("site.test", path);
            let found = revisits(&records, profile);
            let revisit = found
                .iter()
                .find(|r| r.target_uri() == Some(url.as_str()))
                .unwrap_or_else(|| panic!("round {round}: no revisit of {url}"));
            let (id, date) = &first[&url];
            assert!(id.starts_with("<urn:uuid:"), "{id}");
            assert_eq!(
                revisit.header("WARC-Refers-To"),
                Some(id.as_str()),
                "round {round}: {url}"
            );
            assert_eq!(
                revisit.header("WARC-Refers-To-Date"),
                Some(date.as_str()),
                "round {round}: {url}"
            );
            assert_eq!(
                revisit.header("WARC-Refers-To-Target-URI"),
                Some(url.as_str())
            );
            revisited.push(revisit.header("WARC-Record-ID").unwrap().to_string());
        }
        warcio::check(&c.warcs(&id)).unwrap();
        c.run();
    }
    assert_eq!(revisited.len(), 4);
    // The history names the first response of `/b`, with its date.
    let b = server.url("site.test", "/b");
    let line = c.history_line(&b);
    assert_eq!(
        (line[13].as_str(), line[14].as_str()),
        (first[&b].0.as_str(), first[&b].1.as_str()),
        "{line:?}"
    );
}
