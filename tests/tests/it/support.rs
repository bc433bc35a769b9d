//! What the end-to-end tests share: a demo web served in-process with a
//! crawl directory set up for it (in a `testkit::TempDir`),
//! `scripts/crawl.sh` run as a real process, killing a process tree, and
//! reading back what a crawl left (crawl logs, WARC records, segments).

#![allow(dead_code)] // each test file uses its own part of this module

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::config::FilterConfig;
use common::crawllog::{LogLine, Status};
use common::warc::{WarcReader, WarcRecord};
use testkit::TempDir;
use testkit::bins::{self, Finished};
use testkit::demo::{Demo, DemoServer, HostRole, Limits};
use testkit::server::LogEntry;

/// Numbers the output files of `crawl.sh` runs.
static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// How long one `crawl.sh` run may take in a test before it is killed.
pub const CRAWL_TIMEOUT: Duration = Duration::from_secs(240);

/// Runs `segmenter inject CRAWL SEEDS` to success within `bound` (with a
/// report on failure, files listed from `dir`).
pub fn inject(crawl: &Path, seeds: &Path, dir: &Path, bound: Duration) -> Finished {
    bins::run_within(
        bins::segmenter_cmd()
            .arg("inject")
            .arg(crawl)
            .arg(seeds)
            .args(["--min-free-disk", "0"]),
        dir,
        0,
        bound,
    )
}

/// A scratch directory named `name` with an empty crawl directory for the
/// hosts `server` serves (and those of `extra_hosts`, lines of a hosts
/// file): its `crawl.toml` names an agent, lets the fetcher reach loopback
/// through that hosts file, then adds `fetcher` (more `[fetcher]` keys) and
/// `sections` (other sections, whole). Returns the scratch directory and
/// the crawl directory.
pub fn loopback_crawl(
    name: &str,
    server: &testkit::server::Server,
    extra_hosts: &str,
    fetcher: &str,
    sections: &str,
) -> (TempDir, PathBuf) {
    let scratch = TempDir::new(name);
    let crawl = scratch.path().join("crawl");
    std::fs::create_dir_all(&crawl).unwrap();
    let hosts = scratch.path().join("hosts");
    std::fs::write(&hosts, format!("{}{extra_hosts}", server.hosts_file())).unwrap();
    std::fs::write(
        crawl.join("crawl.toml"),
        format!(
            "[agent]\nname = \"testbot\"\nurl = \"https://example.org/testbot.html\"\n\
             [fetcher]\nallow_private = true\nhosts_file = \"{}\"\n{fetcher}{sections}",
            hosts.display()
        ),
    )
    .unwrap();
    (scratch, crawl)
}

/// Runs `scripts/crawl.sh CRAWL --seeds SEEDS` (from `dir`) within
/// `bound`, expecting exit code `code`.
pub fn crawl_sh_seeds(
    crawl: &Path,
    seeds: &Path,
    dir: &Path,
    code: i32,
    bound: Duration,
) -> Finished {
    bins::run_within(
        Command::new(crawl_sh())
            .arg(crawl)
            .arg("--bin")
            .arg(bins::bin_dir())
            .arg("--seeds")
            .arg(seeds),
        dir,
        code,
        bound,
    )
}

/// Runs `scripts/crawl.sh CRAWL --seeds SEEDS` (from `scratch`) until the
/// crawl ends by itself, within `bound`, expecting exit code 0.
pub fn crawl_seeds_to_the_end(
    scratch: &Path,
    crawl: &Path,
    seeds: &Path,
    bound: Duration,
) -> Finished {
    let out = crawl_sh_seeds(crawl, seeds, scratch, 0, bound);
    assert_crawl_ended(&out);
    out
}

/// `scripts/crawl.sh`.
pub fn crawl_sh() -> PathBuf {
    testkit::repo_root().join("scripts").join("crawl.sh")
}

/// The crawl settings the tests vary.
#[derive(Debug, Clone)]
pub struct CrawlSettings {
    /// `[fetcher] min_delay`.
    pub min_delay: Duration,
    /// `[fetcher] delay_factor`.
    pub delay_factor: f64,
    /// `[fetcher] max_crawl_delay`: also how long a host whose robots.txt a
    /// killed fetcher was reading waits after the kill.
    pub max_crawl_delay: Duration,
    /// `[filter]`, also used to compute the expected crawl.
    pub filter: FilterConfig,
    /// `[crawl] round_time`.
    pub round_time: Duration,
    /// `[fetcher] tail_time`.
    pub tail_time: Duration,
    /// `[fetcher] first_byte_timeout`.
    pub first_byte_timeout: Duration,
    /// Lines added to `[fetcher]`.
    pub fetcher_extra: String,
    /// `[segmenter] sitemap_max_entries`, also used to compute the expected
    /// crawl: below the demo's long sitemap, so that it is over the limit.
    pub sitemap_max_entries: usize,
}

impl Default for CrawlSettings {
    /// Delays far below the real web's; a round ends once its tail would
    /// wait more than a second; the demo's black hole costs a round at most
    /// a second.
    fn default() -> Self {
        CrawlSettings {
            min_delay: Duration::from_millis(20),
            delay_factor: 0.5,
            max_crawl_delay: Duration::from_secs(2),
            filter: FilterConfig::default(),
            round_time: Duration::from_secs(60),
            tail_time: Duration::from_secs(1),
            first_byte_timeout: Duration::from_secs(1),
            fetcher_extra: String::new(),
            sitemap_max_entries: testkit::demo::BULK_PAGES - 10,
        }
    }
}

/// A demo web served in-process and a crawl directory set up to crawl it
/// (`crawl.toml`, seeds file, hosts file), in a scratch directory.
pub struct DemoCrawl {
    /// Where everything goes (kept if the test fails).
    pub scratch: TempDir,
    /// The crawl directory.
    pub crawl: PathBuf,
    /// The seeds file.
    pub seeds: PathBuf,
    /// The settings written to `crawl.toml`.
    pub settings: CrawlSettings,
    /// The demo being served.
    pub web: DemoServer,
}

impl DemoCrawl {
    /// Serves `demo` and writes the crawl's files.
    pub fn start(name: &str, demo: &Demo, settings: CrawlSettings) -> DemoCrawl {
        let scratch = TempDir::new(name);
        let web = demo.serve().expect("cannot serve the demo web");
        let seeds = scratch.path().join("seeds.txt");
        std::fs::write(&seeds, web.seeds_file()).unwrap();
        let hosts = scratch.path().join("hosts");
        std::fs::write(&hosts, web.hosts_file()).unwrap();
        let crawl = scratch.path().join("crawl");
        std::fs::create_dir_all(&crawl).unwrap();
        std::fs::write(
            crawl.join("crawl.toml"),
            crawl_toml(&demo.params().agent, &hosts, &settings),
        )
        .unwrap();
        DemoCrawl {
            scratch,
            crawl,
            seeds,
            settings,
            web,
        }
    }

    /// The limits the crawl runs with, for [`DemoServer::expected`].
    pub fn limits(&self) -> Limits {
        Limits {
            filter: self.settings.filter.clone(),
            agent: self.web.demo().params().agent.clone(),
            sitemap_max_entries: self.settings.sitemap_max_entries,
            max_crawl_delay: self.settings.max_crawl_delay,
            ..Limits::default()
        }
    }

    /// `crawl.sh CRAWL --bin BIN_DIR --seeds SEEDS` followed by `args`.
    pub fn crawl_sh(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(crawl_sh());
        cmd.arg(&self.crawl)
            .arg("--bin")
            .arg(bins::bin_dir())
            .arg("--seeds")
            .arg(&self.seeds)
            .args(args);
        cmd
    }

    /// Runs `crawl.sh` with `args` to its end (at most [`CRAWL_TIMEOUT`],
    /// then it is killed with everything it started).
    pub fn run_crawl_sh(&self, args: &[&str]) -> Finished {
        let n = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Background::start(
            self.crawl_sh(args),
            self.scratch.path(),
            &format!("crawl-sh-{n}"),
        )
        .finish(CRAWL_TIMEOUT)
    }

    /// Runs `crawl.sh` until it stops by itself, expecting exit code 0.
    pub fn crawl_to_the_end(&self) -> Finished {
        let out = self.run_crawl_sh(&[]);
        bins::assert_code(&out, 0, Some(&self.crawl));
        assert_crawl_ended(&out);
        out
    }

    /// Everything the crawl left.
    pub fn outcome(&self) -> Outcome {
        Outcome::read(&self.crawl)
    }

    /// From the servers' request logs, every pair of requests that breaks
    /// politeness: overlapping on a host, or closer than the crawl's delay
    /// (the `Crawl-delay` on the demo's host that sets one), across every
    /// round and run. Empty if the crawl was polite.
    pub fn politeness_violations(&self) -> Vec<testkit::server::Violation> {
        let slow = &self.web.demo().host_with_role(HostRole::CrawlDelay).name;
        let crawl_delay = self
            .web
            .crawl_delay(slow)
            .expect("the Crawl-delay host has one");
        let logs = self.web.logs();
        assert!(
            logs.iter()
                .any(|e| *e.host == **slow && e.target != "/robots.txt"),
            "the Crawl-delay host was never crawled"
        );
        testkit::server::politeness_violations(&logs, |host| {
            let delay = if host == slow {
                crawl_delay
            } else {
                self.settings.min_delay
            };
            delay.saturating_sub(CLOCK_SLACK)
        })
    }
}

/// Slack for the servers' clock against the crawler's: a correct crawler is
/// seen with gaps slightly longer than its delay, never shorter by more
/// than scheduling noise.
pub const CLOCK_SLACK: Duration = Duration::from_millis(3);

/// Panics unless `crawl.sh`'s output says the crawl ended by itself.
pub fn assert_crawl_ended(out: &Finished) {
    assert!(
        out.stdout.contains("nothing left to fetch") || out.stdout.contains("nothing fetchable"),
        "crawl.sh stopped without saying the crawl ended:\n{}",
        bins::report(out, None)
    );
}

/// The `crawl.toml` of a demo crawl.
pub fn crawl_toml(agent: &str, hosts: &Path, s: &CrawlSettings) -> String {
    let f = &s.filter;
    // `[segmenter]` goes last; a test's extra lines may open it already.
    let limit = format!(
        "\n[segmenter]\nsitemap_max_entries = {}\n",
        s.sitemap_max_entries
    );
    let extra = if s.fetcher_extra.contains("\n[segmenter]\n") {
        s.fetcher_extra.replacen("\n[segmenter]\n", &limit, 1)
    } else {
        format!("{}{limit}", s.fetcher_extra)
    };
    format!(
        "[agent]\nname = \"{agent}\"\nurl = \"https://example.org/{agent}.html\"\n\n\
         [filter]\nmax_url_length = {}\nmax_path_segments = {}\nmax_repeated_segment = {}\n\
         max_hops = {}\nmax_query_params = {}\nmax_years_ahead = {}\n\n\
         [crawl]\nround_time = \"{}ms\"\nmin_free_disk = 0\n\n\
         [fetcher]\nallow_private = true\nhosts_file = \"{}\"\nmin_delay = \"{}ms\"\n\
         backoff_max = \"1s\"\nmax_crawl_delay = \"{}ms\"\n\
         delay_factor = {}\nrobots_retry_delay = \"200ms\"\nconnect_timeout = \"2s\"\n\
         first_byte_timeout = \"{}ms\"\ntail_time = \"{}ms\"\n{}",
        f.max_url_length,
        f.max_path_segments,
        f.max_repeated_segment,
        f.max_hops,
        f.max_query_params,
        f.max_years_ahead,
        s.round_time.as_millis(),
        hosts.display(),
        s.min_delay.as_millis(),
        s.max_crawl_delay.as_millis(),
        s.delay_factor,
        s.first_byte_timeout.as_millis(),
        s.tail_time.as_millis(),
        extra
    )
}

/// A crawl directory `scratch/name` for the pages of `server` (its hosts
/// file written beside), crawled as `agent` with no delay.
pub fn crawl_of_server(
    server: &testkit::server::Server,
    scratch: &Path,
    name: &str,
    agent: &str,
) -> PathBuf {
    let root = scratch.join(name);
    std::fs::create_dir_all(&root).unwrap();
    let hosts = scratch.join("hosts");
    std::fs::write(&hosts, server.hosts_file()).unwrap();
    std::fs::write(
        root.join("crawl.toml"),
        format!(
            "[agent]\nname = \"{agent}\"\nurl = \"https://example.org/bot.html\"\n\n\
             [fetcher]\nallow_private = true\nhosts_file = \"{}\"\nmin_delay = \"0ms\"\n\
             delay_factor = 0\n",
            hosts.display()
        ),
    )
    .unwrap();
    root
}

/// A response record found in a WARC file.
#[derive(Debug, Clone)]
pub struct Stored {
    /// The fetched run (`00003`).
    pub run: String,
    /// The WARC file.
    pub file: PathBuf,
    /// `WARC-Target-URI`.
    pub url: String,
    /// The HTTP status in the record.
    pub status: u16,
    /// `X-Crawl-Via`: how the fetcher came to fetch it (`robots` for
    /// robots.txt and the redirects followed to read it).
    pub via: String,
}

/// What a crawl directory holds once crawled.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Every crawl-log line, with its run.
    pub log: Vec<(String, LogLine)>,
    /// Every response record.
    pub stored: Vec<Stored>,
    /// Every WARC file.
    pub warc_files: Vec<PathBuf>,
    /// Every segment file (`segments/`, leftover files, the backlog).
    pub segment_files: Vec<PathBuf>,
}

impl Outcome {
    /// Reads `crawl`; panics on a crawl-log line or a WARC record that does
    /// not read (nothing a crawl leaves may be torn once it has ended).
    pub fn read(crawl: &Path) -> Outcome {
        let mut out = Outcome::default();
        let mut runs: Vec<PathBuf> = match std::fs::read_dir(crawl.join("fetched")) {
            Ok(rd) => rd.map(|e| e.unwrap().path()).collect(),
            Err(_) => Vec::new(),
        };
        runs.sort();
        for dir in runs {
            let run = dir.file_name().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(dir.join("crawl.log")).unwrap_or_default();
            for (n, line) in text.lines().enumerate() {
                let parsed = common::crawllog::parse_line(line).unwrap_or_else(|e| {
                    panic!("{}/crawl.log line {}: {e}: {line:?}", dir.display(), n + 1)
                });
                out.log.push((run.clone(), parsed));
            }
            for file in testkit::warcio::warc_files(&dir) {
                let mut reader = WarcReader::open(&file, 1 << 20).unwrap();
                let mut rec = WarcRecord::default();
                loop {
                    match reader.read_next(&mut rec) {
                        Ok(true) => {}
                        Ok(false) => break,
                        Err(e) => panic!("{}: {e}", file.display()),
                    }
                    if rec.record_type() != Some("response") {
                        continue;
                    }
                    let url = rec.target_uri().unwrap_or_default().to_string();
                    out.stored.push(Stored {
                        run: run.clone(),
                        file: file.clone(),
                        url,
                        status: http_status(&rec.block),
                        via: rec.header("X-Crawl-Via").unwrap_or_default().to_string(),
                    });
                }
                out.warc_files.push(file);
            }
            let leftover = dir.join("leftover.v5.tsv.zst");
            if leftover.exists() {
                out.segment_files.push(leftover);
            }
        }
        if let Ok(rd) = std::fs::read_dir(crawl.join("segments")) {
            let mut segs: Vec<PathBuf> = rd
                .map(|e| e.unwrap().path())
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .and_then(common::crawldir::segment_id_of_file_name)
                        .is_some()
                })
                .collect();
            segs.sort();
            out.segment_files.extend(segs);
        }
        let backlog = crawl.join("backlog.v5.tsv.zst");
        if backlog.exists() {
            out.segment_files.push(backlog);
        }
        out
    }

    /// Response records of pages (robots.txt fetches left out: those with
    /// `X-Crawl-Via: robots`), by URL.
    pub fn pages_stored(&self) -> BTreeMap<&str, Vec<&Stored>> {
        let mut m: BTreeMap<&str, Vec<&Stored>> = BTreeMap::new();
        for s in &self.stored {
            if s.via != "robots" {
                m.entry(s.url.as_str()).or_default().push(s);
            }
        }
        m
    }

    /// Pages the crawl logs hold: lines of an HTTP response, robots.txt
    /// fetches left out.
    pub fn pages_logged(&self) -> u64 {
        self.log
            .iter()
            .filter(|(_, l)| {
                matches!(l.status, Status::Http(_)) && l.via != common::segment::Via::Robots
            })
            .count() as u64
    }

    /// Crawl-log lines by URL.
    pub fn log_by_url(&self) -> HashMap<&str, Vec<&LogLine>> {
        let mut m: HashMap<&str, Vec<&LogLine>> = HashMap::new();
        for (_, l) in &self.log {
            m.entry(l.url.as_str()).or_default().push(l);
        }
        m
    }
}

/// The segmenter's JSON reports in `logs` (`segmenter-*.json`), oldest
/// first.
pub fn segmenter_reports(logs: &Path) -> Vec<PathBuf> {
    let mut reports: Vec<PathBuf> = std::fs::read_dir(logs)
        .unwrap_or_else(|e| panic!("{}: {e}", logs.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with("segmenter-") && n.ends_with(".json")
        })
        .collect();
    reports.sort();
    reports
}

/// Runs `script` with the test environment's Python (`scripts/test.sh`
/// installs DuckDB, warcio and FastWARC into `.venv/`), `args` after it;
/// its standard output is one JSON value.
pub fn python_json(script: &str, args: &[&Path]) -> serde_json::Value {
    let python = testkit::warcio::python_tool("python", "PYTHON");
    let out = Command::new(&python)
        .arg("-c")
        .arg(script)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", python.display()));
    assert!(
        out.status.success(),
        "the Python check failed (scripts/test.sh installs duckdb, warcio and fastwarc into .venv/):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

/// The fetch history of `crawl`, its generations merged, one line per URL
/// (what `segmenter inspect --entries` prints; empty without a history).
pub fn history_text(crawl: &Path) -> String {
    let list = crawl.join("history.v5.list");
    if !list.exists() {
        return String::new();
    }
    bins::run(
        bins::segmenter_cmd().args(["inspect".as_ref(), list.as_os_str(), "--entries".as_ref()]),
        crawl,
    )
    .stdout
}

/// What `segmenter status --json` prints for `crawl`.
pub fn status_json(crawl: &Path) -> serde_json::Value {
    let out = bins::run(
        bins::segmenter_cmd().args(["status".as_ref(), crawl.as_os_str(), "--json".as_ref()]),
        crawl,
    );
    serde_json::from_str(&out.stdout)
        .unwrap_or_else(|e| panic!("{}: status --json: {e}\n{}", crawl.display(), out.stdout))
}

/// Whether `url` is a robots.txt URL (`/robots.txt` at the root).
pub fn is_robots(url: &str) -> bool {
    url::Url::parse(url).is_ok_and(|u| u.path() == "/robots.txt" && u.query().is_none())
}

/// The status of the HTTP response in a WARC response block.
fn http_status(block: &[u8]) -> u16 {
    let line_end = block
        .iter()
        .position(|&b| b == b'\n')
        .unwrap_or(block.len());
    let line = String::from_utf8_lossy(&block[..line_end]);
    line.split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// The URL a server log entry was for.
pub fn requested_url(web: &DemoServer, e: &LogEntry) -> String {
    web.url(&e.host, &e.target)
}

/// `url` without its port (`http://a.test:8080/x` → `http://a.test/x`), to
/// compare crawls of demo webs served on different ports.
pub fn without_port(url: &str) -> String {
    let mut u = url::Url::parse(url).unwrap_or_else(|e| panic!("{url}: {e}"));
    let _ = u.set_port(None);
    u.to_string()
}

/// A list for a failure message: at most `max` items, then a count.
pub fn some<T: std::fmt::Display>(items: impl IntoIterator<Item = T>, max: usize) -> String {
    let mut out = String::new();
    let mut n = 0;
    for item in items {
        if n < max {
            let _ = writeln!(out, "  {item}");
        }
        n += 1;
    }
    if n > max {
        let _ = writeln!(out, "  ... and {} more", n - max);
    }
    out
}

/// Whether `program` is on `PATH`.
pub fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
}

/// Runs `zstdcat FILE` and returns its output; panics with instructions
/// when `zstdcat` is not installed.
pub fn zstdcat(file: &Path) -> String {
    let out = Command::new("zstdcat")
        .arg(file)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run `zstdcat` ({e}): the tests read segments with the zstd command-line \
                 tool, as users do; install it (Debian/Ubuntu: `apt-get install zstd`; .ci/run \
                 installs it when missing)"
            )
        });
    assert!(
        out.status.success(),
        "zstdcat {}: {}\n{}",
        file.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap_or_else(|e| panic!("zstdcat {}: not UTF-8: {e}", file.display()))
}

/// A process of the system: its id and command name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proc {
    /// Process id.
    pub pid: i32,
    /// Parent process id.
    pub ppid: i32,
    /// The command name (`fetcher`, `segmenter`, `bash`, ...).
    pub name: String,
    /// Its command line (empty if it could not be read).
    pub args: Vec<String>,
}

impl Proc {
    /// `fetcher` for a `fetcher fetch`, `segmenter` for a `segmenter run`
    /// or `inject` (not for an `inspect`): a step of a crawl round.
    pub fn step(&self) -> Option<&'static str> {
        match (self.name.as_str(), self.args.get(1).map(String::as_str)) {
            ("fetcher", Some("fetch")) => Some("fetcher"),
            ("segmenter", Some("run" | "inject")) => Some("segmenter"),
            _ => None,
        }
    }
}

fn all_procs() -> Vec<Proc> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return out;
    };
    for entry in rd.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // `PID (COMM) STATE PPID ...`; COMM may hold spaces and parentheses.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let name = stat[open + 1..close].to_string();
        let mut rest = stat[close + 1..].split_whitespace();
        let state = rest.next().unwrap_or("");
        if state == "Z" {
            continue;
        }
        let Some(ppid) = rest.next().and_then(|s| s.parse().ok()) else {
            continue;
        };
        let args = std::fs::read(entry.path().join("cmdline"))
            .map(|b| {
                b.split(|&c| c == 0)
                    .filter(|a| !a.is_empty())
                    .map(|a| String::from_utf8_lossy(a).into_owned())
                    .collect()
            })
            .unwrap_or_default();
        out.push(Proc {
            pid,
            ppid,
            name,
            args,
        });
    }
    out
}

/// The living descendants of `pid` (children, their children, ...).
pub fn descendants(pid: i32) -> Vec<Proc> {
    let procs = all_procs();
    let mut out = Vec::new();
    let mut frontier = vec![pid];
    while let Some(p) = frontier.pop() {
        for c in procs.iter().filter(|c| c.ppid == p) {
            frontier.push(c.pid);
            out.push(c.clone());
        }
    }
    out
}

/// `kill -9` of `root` and of every descendant it had, repeated until none
/// is left (a child may be starting while we look). Returns the
/// descendants that were killed.
pub fn kill_tree(root: &mut Child) -> Vec<Proc> {
    let pid = i32::try_from(root.id()).unwrap();
    let mut killed: Vec<Proc> = Vec::new();
    // Freeze the parent first, so that it starts nothing new while its
    // children are found and killed (once it is dead they would be moved
    // under init, out of sight).
    // SAFETY: kill(2) has no memory-safety preconditions; the pid is our
    // child's, reserved until we wait for it.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    for _ in 0..20 {
        let found = descendants(pid);
        if found.is_empty() {
            break;
        }
        for p in found {
            // SAFETY: as above; a pid of a process we just saw under ours.
            unsafe { libc::kill(p.pid, libc::SIGKILL) };
            if !killed.iter().any(|k| k.pid == p.pid) {
                killed.push(p);
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    // SAFETY: as above.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let _ = root.wait();
    // SIGKILL is delivered, not done: a process with many threads takes a
    // moment to exit and close its files (the crawl directory's lock among
    // them). Wait until each victim is gone or a zombie (which holds no
    // file), so that a run started next does not find the lock held.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while killed.iter().any(|p| alive(p.pid)) && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(2));
    }
    killed
}

/// True while process `pid` exists and is not a zombie.
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name, which is in parentheses.
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z') && !rest.starts_with('X')),
        Err(_) => false,
    }
}

/// A `crawl.sh` started in the background, its output going to files; it is
/// killed with its whole process tree if dropped while running.
pub struct Background {
    /// The process.
    pub child: Child,
    /// Where its stdout goes.
    pub stdout: PathBuf,
    /// Where its stderr goes.
    pub stderr: PathBuf,
    command: String,
    started: Instant,
}

impl Background {
    /// Starts `cmd` with its output in `dir/NAME.stdout` and `.stderr`.
    pub fn start(mut cmd: Command, dir: &Path, name: &str) -> Background {
        use std::os::unix::process::CommandExt;
        let stdout = dir.join(format!("{name}.stdout"));
        let stderr = dir.join(format!("{name}.stderr"));
        let command = bins::command_line(&cmd);
        cmd.stdin(Stdio::null())
            .stdout(File::create(&stdout).unwrap())
            .stderr(File::create(&stderr).unwrap())
            .process_group(0);
        // A test run from a background job of a non-interactive shell
        // (`cmd &`) inherits SIGINT and SIGQUIT ignored, and a shell cannot
        // trap a signal ignored when it started: put back the defaults a
        // terminal's user has, so that Ctrl-C tests behave the same there.
        // SAFETY: between fork and exec only signal(2), which is
        // async-signal-safe, is called.
        unsafe {
            cmd.pre_exec(|| {
                libc::signal(libc::SIGINT, libc::SIG_DFL);
                libc::signal(libc::SIGQUIT, libc::SIG_DFL);
                Ok(())
            });
        }
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {command}: {e}"));
        Background {
            child,
            stdout,
            stderr,
            command,
            started: Instant::now(),
        }
    }

    /// Waits (bounded) until a descendant that is the step `step`
    /// (`fetcher` or `segmenter`, see [`Proc::step`]) runs; false if the
    /// process ended first or the time ran out.
    pub fn wait_for_step(&mut self, step: &str, timeout: Duration) -> bool {
        let pid = i32::try_from(self.child.id()).unwrap();
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if descendants(pid).iter().any(|p| p.step() == Some(step)) {
                return true;
            }
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        false
    }

    /// Waits for the end (at most `timeout`; then it is killed and the
    /// status is `None`) and returns what it printed.
    pub fn finish(mut self, timeout: Duration) -> Finished {
        let status = bins::wait_timeout(&mut self.child, timeout);
        if status.is_none() {
            kill_tree(&mut self.child);
        }
        self.finished(status)
    }

    /// Kills the whole tree now; returns the descendants killed, and what
    /// it printed.
    pub fn kill(mut self) -> (Vec<Proc>, Finished) {
        let killed = kill_tree(&mut self.child);
        let status = self.child.try_wait().ok().flatten();
        (killed, self.finished(status))
    }

    fn finished(&self, status: Option<std::process::ExitStatus>) -> Finished {
        Finished {
            command: self.command.clone(),
            status,
            stdout: std::fs::read_to_string(&self.stdout).unwrap_or_default(),
            stderr: std::fs::read_to_string(&self.stderr).unwrap_or_default(),
            elapsed: self.started.elapsed(),
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            kill_tree(&mut self.child);
        }
    }
}

/// The status of every `Status::Http` line, and the code word otherwise.
pub fn status_word(s: Status) -> String {
    match s {
        Status::Http(c) => c.to_string(),
        Status::Error(e) => e.as_str().to_string(),
    }
}
