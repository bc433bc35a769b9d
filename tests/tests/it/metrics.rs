//! The metrics files a monitoring system reads (Prometheus' text format,
//! for node_exporter's textfile collector), read by Prometheus' own parser
//! (`testkit::prom`): the fetcher's, taken while a real fetch runs against
//! hosts on loopback and after it, against the crawl log it wrote; the
//! driver's, after rounds of `scripts/crawl.sh`, against the round journal
//! and `segmenter status`; and a sharded crawl's, one file per task.

use crate::support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use common::crawllog::{ErrorCode, LogLine, Status, parse_line};
use common::segment::Via;
use testkit::bins;
use testkit::demo::{Demo, DemoParams};
use testkit::prom::{self, Parsed};
use testkit::server::{Request, Response, Server};
use testkit::tempdir::TempCrawl;

use support::{Background, CrawlSettings, DemoCrawl};

/// Pages of each host (besides its 404s, 500s, redirect, robots.txt-denied
/// and silent URLs).
const PAGES: usize = 10;

/// A host of `PAGES` pages and one of each other answer; robots.txt keeps
/// `/private/` out, `/silent` never answers.
fn host(req: &Request) -> Response {
    match req.path() {
        "/robots.txt" => Response::text("User-agent: *\nDisallow: /private/\n"),
        "/broken" | "/broken2" => Response::status(500).body("oops\n"),
        "/moved" => Response::redirect(301, "/p0"),
        "/silent" => Response::never_answer(),
        p if p.starts_with("/missing") => Response::not_found(),
        p => Response::html(format!("<p>{p}</p>")),
    }
}

/// The URLs of one host in the segment.
fn urls(server: &Server, name: &str, silent: bool) -> Vec<(String, String)> {
    let mut paths: Vec<String> = (0..PAGES).map(|i| format!("/p{i}")).collect();
    paths.extend(["/missing1", "/missing2", "/broken", "/broken2", "/moved"].map(String::from));
    paths.extend(["/private/a", "/private/b"].map(String::from));
    if silent {
        paths.push("/silent".into());
    }
    paths
        .iter()
        .map(|p| (name.to_string(), server.url(name, p)))
        .collect()
}

/// What a prefix of a crawl log adds up to, counted here from the lines
/// (the test's own reading of the documented format).
#[derive(Debug, Clone, Default, PartialEq)]
struct Figures {
    attempts: u64,
    pages: u64,
    page_bytes: u64,
    robots: u64,
    classes: BTreeMap<String, u64>,
    errors: BTreeMap<String, u64>,
    /// Milliseconds since 1970 of the newest page line (0: none).
    last_page_ms: i64,
}

impl Figures {
    fn add(&mut self, l: &LogLine) {
        self.attempts += 1;
        match (l.status, l.via) {
            (Status::Http(_), Via::Robots) => self.robots += 1,
            (Status::Http(code), _) => {
                self.pages += 1;
                self.page_bytes += l.bytes;
                *self.classes.entry(format!("{}xx", code / 100)).or_default() += 1;
                let ms = common::timefmt::unix_millis(l.time);
                self.last_page_ms = self.last_page_ms.max(ms);
            }
            (Status::Error(code), _) => *self.errors.entry(code.as_str().into()).or_default() += 1,
        }
    }

    /// The figures of every prefix of the crawl log at `path`, the empty
    /// one first.
    fn prefixes(path: &Path) -> Vec<Figures> {
        let text = std::fs::read_to_string(path).unwrap();
        let mut all = vec![Figures::default()];
        for line in text.lines() {
            let mut next = all.last().unwrap().clone();
            next.add(&parse_line(line).unwrap_or_else(|e| panic!("{line:?}: {e}")));
            all.push(next);
        }
        all
    }

    /// What a fetch file says.
    fn of_file(p: &Parsed) -> Figures {
        let classes = p
            .samples("crawl_fetch_responses_total")
            .into_iter()
            .map(|s| (s.labels["class"].clone(), s.value() as u64))
            .filter(|(_, n)| *n > 0)
            .collect();
        let errors = ErrorCode::ALL
            .iter()
            .map(|c| {
                let n = p.value_where("crawl_fetch_errors_total", "code", c.as_str()) as u64;
                (c.as_str().to_string(), n)
            })
            .filter(|(_, n)| *n > 0)
            .collect();
        Figures {
            attempts: p.value("crawl_fetch_attempts_total") as u64,
            pages: p.value("crawl_fetch_pages_total") as u64,
            page_bytes: p.value("crawl_fetch_page_bytes_total") as u64,
            robots: p.value("crawl_fetch_robots_responses_total") as u64,
            classes,
            errors,
            last_page_ms: (p.value("crawl_fetch_last_page_timestamp_seconds") * 1000.0).round()
                as i64,
        }
    }
}

/// What node_exporter and Prometheus' conventions ask of a file: every
/// family has its help and a type, a counter's samples end in `_total`,
/// every sample carries `labels`, no series is written twice.
fn assert_conventional(p: &Parsed, labels: &[(&str, &str)], text: &str) {
    let mut series = BTreeSet::new();
    for f in &p.families {
        assert!(!f.help.is_empty(), "{}: no help in\n{text}", f.name);
        assert!(
            f.kind == "counter" || f.kind == "gauge",
            "{}: type {} in\n{text}",
            f.name,
            f.kind
        );
        for s in &f.samples {
            if f.kind == "counter" {
                assert!(s.name.ends_with("_total"), "{}: a counter", s.name);
            }
            for (k, v) in labels {
                assert_eq!(s.labels.get(*k).map(String::as_str), Some(*v), "{s:?}");
            }
            assert!(
                series.insert(format!("{}{:?}", s.name, s.labels)),
                "{s:?} twice"
            );
        }
    }
}

/// Reads `file` every few milliseconds until `done` says so (or `bound`
/// passes), keeping each new version of it.
fn watch(file: &Path, bound: Duration, mut done: impl FnMut() -> bool) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    let deadline = Instant::now() + bound;
    while Instant::now() < deadline {
        let ended = done();
        if let Ok(text) = std::fs::read_to_string(file)
            && seen.last() != Some(&text)
        {
            seen.push(text);
        }
        if ended {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    seen
}

fn wait_for(bg: &mut Background, what: &str) {
    let status = bins::wait_timeout(&mut bg.child, Duration::from_secs(120))
        .unwrap_or_else(|| panic!("{what} did not end"));
    assert!(
        status.success(),
        "{what}: {status}\n{}",
        std::fs::read_to_string(&bg.stderr).unwrap_or_default()
    );
}

/// Each version of the fetcher's file, read during the crawl or after
/// it, says what a prefix of the crawl log says (`prefixes`), the figures
/// only grow, and at least one was read halfway through the pages.
fn check_versions(
    parsed: &[Parsed],
    texts: &[String],
    prefixes: &[Figures],
    segment_urls: usize,
    before: SystemTime,
) {
    let whole = prefixes.last().unwrap();
    let labels = [("crawl", "crawl")];
    let mut at = 0;
    let mut during = 0;
    for (p, text) in parsed.iter().zip(texts) {
        assert_conventional(p, &labels, text);
        let f = Figures::of_file(p);
        let k = prefixes[at..]
            .iter()
            .position(|x| *x == f)
            .unwrap_or_else(|| {
                panic!("no prefix of the crawl log (from line {at} on) says {f:?}:\n{text}")
            });
        at += k;
        let running = p.value("crawl_fetch_running");
        if running == 1.0 && f.pages > 0 && f.pages < whole.pages {
            during += 1;
            assert!(p.value("crawl_fetch_queues_with_work") >= 1.0, "{text}");
            assert!(
                p.value("crawl_fetch_urls_waiting") <= segment_urls as f64,
                "{text}"
            );
        }
        assert_eq!(
            p.value_where("crawl_fetch_segment_info", "segment", "00001"),
            1.0
        );
        let started = p.value("crawl_fetch_start_timestamp_seconds");
        assert!(
            started >= common::metrics::seconds(before) - 0.001,
            "{text}"
        );
        assert_eq!(p.value("crawl_fetch_interval_seconds"), 0.1);
        let written = p.value("crawl_fetch_written_timestamp_seconds");
        assert!(written >= started && written <= common::metrics::seconds(SystemTime::now()));
    }
    assert!(
        during >= 1,
        "no version read during the crawl had part of its pages: {texts:#?}"
    );
    assert!(
        parsed
            .iter()
            .any(|p| p.value("crawl_fetch_queues_backed_off") >= 1.0),
        "no version saw a host backed off after its 500s"
    );
}

#[test]
fn the_fetchers_file_follows_its_crawl_log_while_it_runs_and_after() {
    let server = Server::builder()
        .host("pages.test", host)
        .host("more.test", host)
        .start()
        .unwrap();
    let crawl = TempCrawl::new("metrics-fetch");
    crawl.create_subdirs().unwrap();
    let hosts = crawl.side("hosts");
    std::fs::write(&hosts, server.hosts_file()).unwrap();
    let mut lines = urls(&server, "pages.test", true);
    lines.extend(urls(&server, "more.test", false));
    testkit::segment::write_links(&crawl.segment_path("00001"), lines.clone());
    let file = crawl.root().join("metrics/crawl-crawl.fetch.prom");
    let fetch = |dir: &Path| {
        let mut cmd = bins::fetch_cmd(crawl.root(), &hosts);
        // `--progress none` shows nothing: the file is written all the same.
        cmd.args(["--min-delay", "100ms", "--progress-interval", "100ms"])
            .args(["--first-byte-timeout", "1s", "--backoff-max", "1s"]);
        Background::start(cmd, dir, "fetch")
    };
    let before = SystemTime::now();
    let mut bg = fetch(crawl.tmp().path());
    let mut texts = watch(&file, Duration::from_secs(120), || {
        matches!(bg.child.try_wait(), Ok(Some(_)))
    });
    wait_for(&mut bg, "fetcher fetch");
    let last = std::fs::read_to_string(&file).unwrap();
    if texts.last() != Some(&last) {
        texts.push(last);
    }
    let parsed = prom::parse(&texts);
    let prefixes = Figures::prefixes(&crawl.crawl_log_path("00001"));
    let whole = prefixes.last().unwrap().clone();
    check_versions(&parsed, &texts, &prefixes, lines.len(), before);

    // After the run: the whole log, nothing running, no queue.
    let end = parsed.last().unwrap();
    assert_eq!(Figures::of_file(end), whole);
    assert_eq!(end.value("crawl_fetch_running"), 0.0);
    for state in ["ready", "busy", "penalty_box"] {
        assert_eq!(end.value_where("crawl_fetch_queues", "state", state), 0.0);
    }
    assert_eq!(end.value("crawl_fetch_urls_waiting"), 0.0);
    assert_eq!(end.value("crawl_fetch_disk_floor_bytes"), 0.0);
    assert!(end.value("crawl_fetch_disk_free_bytes") > 0.0);
    // What the crawl log holds: 2 × 10 pages, 2 × 2 404s, 2 × 2 500s, 2
    // redirects; 2 robots.txt; 4 URLs denied by robots.txt, 1 timeout.
    assert_eq!(whole.pages, 2 * (PAGES as u64 + 5), "{whole:?}");
    assert_eq!(
        (whole.classes.get("4xx"), whole.classes.get("5xx")),
        (Some(&4), Some(&4))
    );
    assert_eq!(whole.robots, 2);
    assert_eq!(whole.errors.get("robots"), Some(&4));
    assert_eq!(whole.errors.get("timeout"), Some(&1));

    // A later run that stores no page keeps the last page's time.
    let denied: Vec<(String, String)> = lines
        .iter()
        .filter(|(_, u)| u.contains("/private/"))
        .cloned()
        .collect();
    testkit::segment::write_links(&crawl.segment_path("00002"), denied);
    let mut bg = fetch(crawl.tmp().path());
    wait_for(&mut bg, "the second fetch");
    let labels = [("crawl", "crawl")];
    let text = std::fs::read_to_string(&file).unwrap();
    let second = &prom::parse(std::slice::from_ref(&text))[0];
    assert_conventional(second, &labels, &text);
    let f = Figures::of_file(second);
    assert_eq!((f.pages, f.errors.get("robots")), (0, Some(&4)), "{text}");
    assert_eq!(f.last_page_ms, whole.last_page_ms, "{text}");
    assert_eq!(
        second.value_where("crawl_fetch_segment_info", "segment", "00002"),
        1.0
    );
}

#[test]
fn crawl_sh_steps_leave_the_driver_file_where_the_journal_and_status_stand() {
    let demo = Demo::with_params(DemoParams {
        crawl_delay: 0.2,
        ..DemoParams::small(3)
    });
    let c = DemoCrawl::start("metrics-crawl-sh", &demo, CrawlSettings::default());
    let cycle = c.crawl.join("metrics/crawl-crawl.cycle.prom");
    let fetch = c.crawl.join("metrics/crawl-crawl.fetch.prom");
    let started = SystemTime::now();
    let mut bg = Background::start(
        c.crawl_sh(&["--rounds", "2", "--min-delay", "30ms"]),
        c.scratch.path(),
        "crawl-sh",
    );
    let texts = watch(&cycle, support::CRAWL_TIMEOUT, || {
        matches!(bg.child.try_wait(), Ok(Some(_)))
    });
    wait_for(&mut bg, "crawl.sh");
    let phases: BTreeSet<String> = prom::parse(&texts)
        .iter()
        .flat_map(|p| p.samples("crawl_phase"))
        .filter(|s| s.value() == 1.0)
        .map(|s| s.labels["phase"].clone())
        .collect();
    assert!(
        phases.contains("fetch") && phases.contains("idle"),
        "phases seen: {phases:?}"
    );

    let (cycle_text, fetch_text) = (
        std::fs::read_to_string(&cycle).unwrap(),
        std::fs::read_to_string(&fetch).unwrap(),
    );
    let both = prom::parse(&[cycle_text.clone(), fetch_text.clone()]);
    let labels = [("crawl", "crawl")];
    assert_conventional(&both[0], &labels, &cycle_text);
    // No series in two files (node_exporter refuses that).
    let mut together = both[0].clone();
    together.families.extend(both[1].families.clone());
    assert_conventional(&together, &labels, &format!("{cycle_text}{fetch_text}"));
    let p = &both[0];
    // crawl.sh stopped after its second round: the last step it was given.
    assert_eq!(p.value_where("crawl_phase", "phase", "idle"), 1.0);
    assert_eq!(p.value_where("crawl_phase", "phase", "fetch"), 0.0);
    let rounds = common::rounds::read(&common::crawldir::CrawlDir::new(&c.crawl)).unwrap();
    assert_eq!(rounds.len(), 2);
    assert_eq!(p.value("crawl_round"), 2.0);
    assert_eq!(p.value("crawl_rounds_total"), 2.0);
    let pages: u64 = rounds.iter().map(|r| r.pages).sum();
    assert_eq!(p.value("crawl_pages_total"), pages as f64);
    assert_eq!(p.value("crawl_last_round_pages"), rounds[1].pages as f64);
    assert_eq!(
        p.value("crawl_start_timestamp_seconds"),
        rounds[0].started_ms as f64 / 1000.0
    );
    let driver = p.value("crawl_driver_start_timestamp_seconds");
    assert!(
        driver >= common::metrics::seconds(started) - 0.01
            && driver <= common::metrics::seconds(SystemTime::now()),
        "{cycle_text}"
    );
    let status = status_json(&c.crawl);
    assert_eq!(
        p.value("crawl_segments_waiting"),
        status["pending"].as_array().unwrap().len() as f64
    );
    assert_eq!(
        p.value("crawl_backlog_urls"),
        status["backlog_urls"].as_u64().unwrap() as f64
    );
    assert_eq!(p.value("crawl_stop_requested"), 0.0);
    assert_eq!(p.value("crawl_disk_floor_bytes"), 0.0, "min_free_disk = 0");

    // The fetcher's file: round 2's fetch, over, with its pages.
    let f = &both[1];
    assert_eq!(f.value("crawl_fetch_running"), 0.0);
    assert_eq!(
        f.value_where("crawl_fetch_segment_info", "segment", "00002"),
        1.0
    );
    assert_eq!(f.value("crawl_fetch_pages_total"), rounds[1].pages as f64);
}

fn status_json(crawl: &Path) -> serde_json::Value {
    let out = bins::run(
        bins::segmenter_cmd().arg("status").arg(crawl).arg("--json"),
        crawl,
    );
    serde_json::from_str(&out.stdout).unwrap()
}

#[test]
fn a_sharded_crawl_has_one_file_per_fetch_task_and_one_for_the_driver() {
    let server = Server::builder()
        .host("pages.test", host)
        .host("more.test", host)
        .host("third.test", host)
        .start()
        .unwrap();
    let crawl = TempCrawl::new("metrics-shards");
    let hosts = crawl.side("hosts");
    std::fs::write(&hosts, server.hosts_file()).unwrap();
    let seeds = crawl.side("seeds.txt");
    let names = ["pages.test", "more.test", "third.test"];
    let seed_lines: String = names
        .iter()
        .map(|n| format!("{}\n", server.url(n, "/p0")))
        .collect();
    std::fs::write(&seeds, seed_lines).unwrap();
    bins::run(
        bins::segmenter_cmd()
            .arg("inject")
            .arg(crawl.root())
            .arg(&seeds)
            .args(["--shards", "2", "--min-free-disk", "0"]),
        crawl.root(),
    );
    let driver = |phase: &str| {
        bins::run(
            bins::segmenter_cmd()
                .arg("metrics")
                .arg(crawl.root())
                .args(["--phase", phase]),
            crawl.root(),
        );
    };
    driver("fetch");
    let metrics = crawl.root().join("metrics");
    let cycle = metrics.join("crawl-crawl.cycle.prom");
    let text = std::fs::read_to_string(&cycle).unwrap();
    let p = &prom::parse(std::slice::from_ref(&text))[0];
    assert_conventional(p, &[("crawl", "crawl")], &text);
    assert_eq!(p.value_where("crawl_phase", "phase", "fetch"), 1.0);
    assert_eq!(p.value("crawl_round"), 1.0, "{text}");
    let shards = common::shards::Shards::load(crawl.root()).unwrap();
    let mut per_shard = [0u64; 2];
    for n in names {
        per_shard[shards.shard_of(n) as usize] += 1;
    }
    for j in 0..2u32 {
        let pending = u64::from(per_shard[j as usize] > 0);
        let shard = j.to_string();
        assert_eq!(
            p.value_where("crawl_segments_waiting", "shard", &shard),
            pending as f64,
            "{text}"
        );
        assert_eq!(
            p.value_where("crawl_segment_urls_waiting", "shard", &shard),
            per_shard[j as usize] as f64,
            "{text}"
        );
    }

    // Each fetch task writes its own file, with its shard's label.
    let mut files: Vec<PathBuf> = vec![cycle.clone()];
    for j in (0..2u32).filter(|j| per_shard[*j as usize] > 0) {
        let mut cmd = bins::fetch_cmd(crawl.root(), &hosts);
        cmd.args(["--shard", &j.to_string()]);
        bins::run(&mut cmd, crawl.root());
        let file = metrics.join(format!("crawl-crawl.fetch-{j:03}.prom"));
        let text = std::fs::read_to_string(&file).unwrap();
        let p = &prom::parse(std::slice::from_ref(&text))[0];
        let shard = j.to_string();
        assert_conventional(p, &[("crawl", "crawl"), ("shard", &shard)], &text);
        let log = crawl.shard(j).crawl_log_path("00001");
        let whole = Figures::prefixes(&log).pop().unwrap();
        assert_eq!(Figures::of_file(p), whole, "{text}");
        assert_eq!(whole.pages, per_shard[j as usize], "{text}");
        files.push(file);
    }
    driver("idle");
    assert_eq!(
        std::fs::read_dir(&metrics).unwrap().count(),
        files.len(),
        "one file per task and one for the driver, no temporary file left"
    );
    let texts: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect();
    let mut together = prom::parse(&texts).remove(0);
    for p in prom::parse(&texts).into_iter().skip(1) {
        together.families.extend(p.families);
    }
    assert_conventional(&together, &[("crawl", "crawl")], &texts.concat());
}
