//! `scripts/crawl.sh` as cron and a user run it: rounds, per-round logs and
//! summary lines, the lock, the STOP file, signals, usage errors and a
//! failing step named.

use crate::support;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use testkit::TempDir;
use testkit::bins::{self, report};
use testkit::demo::{Demo, DemoParams};
use testkit::server::{Request, Response, Server};

use support::{Background, CRAWL_TIMEOUT, CrawlSettings, DemoCrawl, crawl_toml};

fn small_demo() -> Demo {
    Demo::with_params(DemoParams {
        crawl_delay: 0.2,
        ..DemoParams::small(3)
    })
}

/// The `round N: ...` lines, split into their figures.
#[derive(Debug)]
struct RoundLine {
    round: u32,
    segment: String,
    urls: u64,
    pages: u64,
    scheduled: u64,
}

fn round_lines(stdout: &str) -> Vec<RoundLine> {
    stdout
        .lines()
        .filter(|l| l.starts_with("round "))
        .map(|l| {
            // round 2: segment 00002, 42 URLs, 39 pages fetched, 105 URLs scheduled in 1
            // segment(s); fetch 0.9s (complete), segmenter 0.1s; 1s
            let words: Vec<&str> = l.split([' ', ',', ':']).filter(|w| !w.is_empty()).collect();
            let num = |i: usize| -> u64 {
                words
                    .get(i)
                    .and_then(|w| w.parse().ok())
                    .unwrap_or_else(|| panic!("word {i} of {l:?} is not a number"))
            };
            assert_eq!(
                (words[2], words[5], words[7], words[11], words[12]),
                ("segment", "URLs", "pages", "scheduled", "in"),
                "not a summary line: {l:?}"
            );
            assert!(
                words[words.len() - 1].ends_with('s'),
                "no duration at the end: {l:?}"
            );
            RoundLine {
                round: num(1) as u32,
                segment: words[3].to_string(),
                urls: num(4),
                pages: num(6),
                scheduled: num(9),
            }
        })
        .collect()
}

fn segment_urls(crawl: &Path, id: &str) -> u64 {
    let path = common::crawldir::CrawlDir::new(crawl).segment_path(id);
    common::segment::SegmentSummary::compute(&path, 1)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .urls
}

fn pages_in_log(crawl: &Path, id: &str) -> u64 {
    let text = std::fs::read_to_string(crawl.join("fetched").join(id).join("crawl.log")).unwrap();
    text.lines()
        .map(|l| common::crawllog::parse_line(l).unwrap())
        .filter(|l| {
            matches!(l.status, common::crawllog::Status::Http(_))
                && l.via != common::segment::Via::Robots
        })
        .count() as u64
}

#[test]
fn rounds_each_have_a_log_and_a_summary_line() {
    let c = DemoCrawl::start("rounds", &small_demo(), CrawlSettings::default());
    // Program flags go to the program they belong to: --min-delay to both
    // (the segmenter plans with it), --stop-grace to the fetcher,
    // --max-per-host to the segmenter.
    let out = c.run_crawl_sh(&[
        "--rounds",
        "2",
        "--min-delay",
        "30ms",
        "--stop-grace=3s",
        "--max-per-host",
        "500",
    ]);
    bins::assert_code(&out, 0, Some(&c.crawl));
    let log = std::fs::read_to_string(c.crawl.join("logs/round-00001.log")).unwrap();
    let step = |name: &str| {
        log.lines()
            .find(|l| l.starts_with("=== ") && l.contains(name))
            .unwrap_or_else(|| panic!("no {name} step in:\n{log}"))
            .to_string()
    };
    let fetch = step(" fetcher fetch 00001: ");
    assert!(
        fetch.ends_with(" --min-delay 30ms --stop-grace=3s"),
        "{fetch}"
    );
    let segment = step(" segmenter run: ");
    assert!(
        segment.ends_with(" --min-delay 30ms --max-per-host 500"),
        "{segment}"
    );
    assert!(
        out.stdout.starts_with(&format!(
            "injected 3 seed URLs from {}\n",
            c.seeds.display()
        )),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .ends_with("2 round(s) done; run again to go on\n"),
        "{}",
        out.stdout
    );
    let lines = round_lines(&out.stdout);
    assert_eq!(lines.len(), 2, "{}", out.stdout);
    for (i, l) in lines.iter().enumerate() {
        let id = format!("{:05}", i + 1);
        let next = format!("{:05}", i + 2);
        assert_eq!(l.round, i as u32 + 1);
        assert_eq!(l.segment, id);
        assert_eq!(l.urls, segment_urls(&c.crawl, &id), "{l:?}");
        assert_eq!(l.pages, pages_in_log(&c.crawl, &id), "{l:?}");
        assert_eq!(l.scheduled, segment_urls(&c.crawl, &next), "{l:?}");
        let log = std::fs::read_to_string(c.crawl.join(format!("logs/round-{id}.log"))).unwrap();
        assert!(log.contains(&format!(" fetcher fetch {id}: ")), "{log}");
        assert!(log.contains(" segmenter run: "), "{log}");
        assert!(log.contains(&format!("fetching segment {id}")), "{log}");
    }
    assert_eq!(lines[0].urls, 3);
    assert_eq!(lines[0].pages, 3);
    assert!(lines[1].scheduled > lines[1].urls);
    let inject = std::fs::read_to_string(c.crawl.join("logs/inject.log")).unwrap();
    assert!(inject.contains(" segmenter inject: "), "{inject}");

    // The next run goes on where this one stopped, numbering on.
    let out = c.run_crawl_sh(&["--rounds", "1"]);
    bins::assert_code(&out, 0, Some(&c.crawl));
    assert!(
        out.stdout.contains("already has segments; --seeds"),
        "{}",
        out.stdout
    );
    let lines = round_lines(&out.stdout);
    assert_eq!(lines.len(), 1, "{}", out.stdout);
    assert_eq!((lines[0].round, lines[0].segment.as_str()), (3, "00003"));
    assert!(c.crawl.join("logs/round-00003.log").is_file());
    assert!(!c.crawl.join("fetched/00004").exists());
}

#[test]
fn usage_errors_exit_2_and_say_what_is_wrong() {
    let scratch = TempDir::new("usage");
    let dir = scratch.path();
    let bin = bins::bin_dir();
    let crawl = dir.join("crawl");
    let cases: Vec<(Vec<&std::ffi::OsStr>, &str)> = vec![
        (vec![], "missing the crawl directory"),
        (
            vec![
                crawl.as_ref(),
                "--bin".as_ref(),
                bin.as_ref(),
                "--frobnicate".as_ref(),
            ],
            "unknown option --frobnicate (not a flag of crawl.sh, fetcher fetch or segmenter run)",
        ),
        (
            vec![
                crawl.as_ref(),
                "--bin".as_ref(),
                bin.as_ref(),
                "--threads".as_ref(),
                "4".as_ref(),
            ],
            "--threads is a flag of both fetcher fetch and segmenter run, with different \
             meanings: give it with --fetcher-arg or --segmenter-arg",
        ),
        (
            vec![
                crawl.as_ref(),
                "--bin".as_ref(),
                bin.as_ref(),
                "--min-delay".as_ref(),
            ],
            "--min-delay needs a value",
        ),
        (
            vec![crawl.as_ref(), "--rounds".as_ref(), "0".as_ref()],
            "--rounds takes a whole number above 0, not '0'",
        ),
        (
            vec![crawl.as_ref(), "--rounds".as_ref(), "two".as_ref()],
            "not 'two'",
        ),
        (
            vec![crawl.as_ref(), "--rounds".as_ref()],
            "--rounds needs a number",
        ),
        (
            vec![
                crawl.as_ref(),
                "--seeds".as_ref(),
                "no-such-seeds.txt".as_ref(),
            ],
            "no-such-seeds.txt: no such seeds file",
        ),
        (
            vec![crawl.as_ref(), "--bin".as_ref(), dir.as_ref()],
            "/fetcher: not found or not executable",
        ),
        (
            vec![crawl.as_ref(), "--bin".as_ref(), bin.as_ref()],
            "crawl: no such crawl directory; start a crawl there with: ",
        ),
        (
            // The programs' flag lists tell flag values from words.
            vec![
                crawl.as_ref(),
                "--bin".as_ref(),
                bin.as_ref(),
                "other".as_ref(),
            ],
            "one crawl directory only",
        ),
    ];
    for (args, message) in cases {
        let out = bins::run_with_timeout(
            std::process::Command::new(support::crawl_sh()).args(&args),
            Duration::from_secs(60),
        )
        .unwrap();
        bins::assert_code(&out, 2, Some(dir));
        assert!(
            out.stderr.starts_with("crawl.sh: ") && out.stderr.contains(message),
            "expected {message:?}:\n{}",
            report(&out, None)
        );
    }
    let help = bins::run(
        std::process::Command::new(support::crawl_sh()).arg("--help"),
        dir,
    );
    assert!(
        help.stdout.contains("Exit codes: 0 done"),
        "{}",
        help.stdout
    );
}

#[test]
fn a_failing_step_is_named_with_its_log() {
    let c = DemoCrawl::start("failing", &small_demo(), CrawlSettings::default());
    let scratch = c.scratch.path();

    // A segmenter that refuses its settings fails the injection.
    let toml = c.crawl.join("crawl.toml");
    let good = std::fs::read_to_string(&toml).unwrap();
    // (The demo's crawl.toml has a [segmenter] section already.)
    let bad = good.replacen("[segmenter]\n", "[segmenter]\nmax_per_hots = 3\n", 1);
    assert_ne!(bad, good);
    std::fs::write(&toml, bad).unwrap();
    let out = c.run_crawl_sh(&[]);
    bins::assert_code(&out, 1, Some(&c.crawl));
    let log = c.crawl.join("logs/inject.log");
    assert!(
        out.stderr.contains(&format!(
            "crawl.sh: segmenter inject failed with exit code 2; see {}\n",
            log.display()
        )) && out.stderr.contains("max_per_hots"),
        "{}",
        report(&out, None)
    );
    std::fs::write(&toml, good).unwrap();

    // A fetcher that breaks: crawl.sh names the step, its exit code and log,
    // and shows the end of the log.
    let fake = fake_fetcher(
        scratch,
        "echo \"fetcher: $2: broken on purpose\" >&2\nexit 1",
    );
    let mut cmd = std::process::Command::new(support::crawl_sh());
    cmd.arg(&c.crawl)
        .arg("--bin")
        .arg(&fake)
        .arg("--seeds")
        .arg(&c.seeds);
    let out = bins::run_with_timeout(&mut cmd, CRAWL_TIMEOUT).unwrap();
    bins::assert_code(&out, 1, Some(&c.crawl));
    let log = c.crawl.join("logs/round-00001.log");
    assert!(
        out.stderr.contains(&format!(
            "crawl.sh: fetcher fetch 00001 failed with exit code 1; see {}\n",
            log.display()
        )) && out.stderr.contains(&format!(
            "crawl.sh:   fetcher: {}: broken on purpose",
            c.crawl.display()
        )),
        "{}",
        report(&out, None)
    );
    assert!(!c.crawl.join("fetched/00001/DONE").exists());

    // With the real fetcher back, the crawl goes on from there.
    let out = c.run_crawl_sh(&["--rounds", "1"]);
    bins::assert_code(&out, 0, Some(&c.crawl));
    assert!(
        out.stdout.contains("segment 00001, 3 URLs"),
        "{}",
        out.stdout
    );
}

/// A `--bin` directory with the real segmenter and, as the fetcher, a
/// shell script with `body`.
fn fake_fetcher(dir: &Path, body: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let fake = dir.join("fake-bin");
    std::fs::create_dir_all(&fake).unwrap();
    std::os::unix::fs::symlink(bins::bin_path("segmenter"), fake.join("segmenter")).unwrap();
    let fetcher = fake.join("fetcher");
    // crawl.sh asks each program for its flags first.
    std::fs::write(
        &fetcher,
        format!("#!/bin/sh\n[ \"$1\" = flags ] && exit 0\n{body}\n"),
    )
    .unwrap();
    std::fs::set_permissions(&fetcher, std::fs::Permissions::from_mode(0o755)).unwrap();
    fake
}

#[test]
fn stop_during_a_fetch_that_cannot_stop_cleanly_leaves_it_to_the_next_run() {
    let c = DemoCrawl::start("stop-early", &small_demo(), CrawlSettings::default());
    // A fetcher that dies of the first SIGTERM, as the real one does in the
    // moment before it handles signals.
    let fake = fake_fetcher(c.scratch.path(), "exec sleep 30");
    let mut cmd = std::process::Command::new(support::crawl_sh());
    cmd.arg(&c.crawl)
        .arg("--bin")
        .arg(&fake)
        .arg("--seeds")
        .arg(&c.seeds);
    let run = Background::start(cmd, c.scratch.path(), "stop-early");
    let log = c.crawl.join("logs/round-00001.log");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !std::fs::read_to_string(&log).is_ok_and(|t| t.contains(" fetcher fetch 00001: ")) {
        assert!(Instant::now() < deadline, "the fetch never started");
        std::thread::sleep(Duration::from_millis(10));
    }
    std::fs::write(c.crawl.join("STOP"), "").unwrap();
    let out = run.finish(Duration::from_secs(20));
    bins::assert_code(&out, 0, Some(&c.crawl));
    assert!(
        out.stdout.contains(
            "fetcher fetch 00001 ended at once on STOP (it was starting); the next run resumes it"
        ),
        "{}",
        report(&out, None)
    );
    assert!(!c.crawl.join("fetched/00001/DONE").exists());

    std::fs::remove_file(c.crawl.join("STOP")).unwrap();
    let out = c.run_crawl_sh(&["--rounds", "1"]);
    bins::assert_code(&out, 0, Some(&c.crawl));
    assert!(
        out.stdout
            .contains("round 2: segment 00001, 3 URLs, 3 pages fetched"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_second_run_exits_at_once_and_stop_ends_the_first_cleanly() {
    let settings = CrawlSettings {
        // Slow enough that the second segment takes seconds.
        min_delay: Duration::from_millis(400),
        ..CrawlSettings::default()
    };
    let c = DemoCrawl::start("lock", &small_demo(), settings);
    let mut first = Background::start(c.crawl_sh(&[]), c.scratch.path(), "first");
    // Mid-fetch: once the fetcher of round 2 has logged a URL.
    let fetching = c.crawl.join("fetched/00002/crawl.log");
    let deadline = Instant::now() + Duration::from_secs(120);
    while std::fs::metadata(&fetching).map_or(true, |m| m.len() == 0) {
        assert!(
            Instant::now() < deadline,
            "the second segment was never fetched"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(first.wait_for_step("fetcher", Duration::from_secs(30)));

    let second = c.run_crawl_sh(&[]);
    bins::assert_code(&second, 75, Some(&c.crawl));
    assert!(
        second.stderr.contains("is being crawled by another run")
            && second.stderr.contains(".crawl.lock"),
        "{}",
        report(&second, None)
    );
    assert!(
        second.elapsed < Duration::from_secs(10),
        "{:?}",
        second.elapsed
    );
    assert!(second.stdout.is_empty(), "{}", second.stdout);

    // STOP: the fetch in progress stops early and cleanly, the round ends,
    // and crawl.sh stops.
    std::fs::write(c.crawl.join("STOP"), "").unwrap();
    let out = first.finish(Duration::from_secs(60));
    bins::assert_code(&out, 0, Some(&c.crawl));
    assert!(
        out.stdout
            .contains("STOP appeared; asking fetcher fetch 00002 to stop early")
            && out
                .stdout
                .contains("STOP exists; stopping (remove it to go on)"),
        "{}",
        report(&out, None)
    );
    let run = c.crawl.join("fetched/00002");
    assert!(run.join("DONE").is_file());
    let stats = std::fs::read_to_string(run.join("stats.json")).unwrap();
    assert!(stats.contains("\"stop_reason\": \"signal\""), "{stats}");
    let leftover =
        common::segment::SegmentSummary::compute(run.join("leftover.v5.tsv.zst"), 1).unwrap();
    assert!(
        leftover.via.get("leftover").is_some_and(|&n| n > 0),
        "{leftover:?}"
    );
    let consumed = std::fs::read_to_string(c.crawl.join("consumed.txt")).unwrap();
    assert!(consumed.lines().any(|l| l == "00002"), "{consumed}");
    // The journal says the round was stopped, and why its fetch ended.
    let journal = common::rounds::read(&common::crawldir::CrawlDir::new(&c.crawl)).unwrap();
    let round = journal
        .iter()
        .find(|r| r.segment.as_deref() == Some("00002"))
        .expect("the round of segment 00002 in the journal");
    assert_eq!(
        (round.end, round.stop_reason.as_deref()),
        (common::rounds::End::Stop, Some("signal")),
        "{round:?}"
    );

    // While STOP is there, runs stop at once.
    let out = c.run_crawl_sh(&[]);
    bins::assert_code(&out, 0, Some(&c.crawl));
    assert!(out.stdout.contains("STOP exists"), "{}", out.stdout);
    assert!(!c.crawl.join("fetched/00004").exists());

    // Without it, the crawl goes on to its end and fetches everything:
    // the URLs left when STOP came are fetched in a later round (with the
    // usual low delay, to be quick).
    std::fs::remove_file(c.crawl.join("STOP")).unwrap();
    let hosts = c.scratch.path().join("hosts");
    let agent = c.web.demo().params().agent.clone();
    std::fs::write(
        c.crawl.join("crawl.toml"),
        crawl_toml(&agent, &hosts, &CrawlSettings::default()),
    )
    .unwrap();
    c.crawl_to_the_end();
    let expected = c.web.expected(&c.limits());
    let stored = c.outcome();
    let stored = stored.pages_stored();
    let missing: Vec<&String> = expected
        .fetch
        .keys()
        .filter(|u| !stored.contains_key(u.as_str()))
        .collect();
    assert!(missing.is_empty(), "{}", support::some(&missing, 20));
    assert!(stored.values().all(|s| s.len() == 1));
}

/// A web whose pages take a while to answer, so that a signal finds
/// requests in flight.
struct SlowWeb {
    server: Server,
    started: Arc<AtomicUsize>,
}

fn slow_web(answer_after: Duration) -> SlowWeb {
    let started = Arc::new(AtomicUsize::new(0));
    let mut builder = Server::builder();
    for host in ["a.slow.test", "b.slow.test"] {
        let started = Arc::clone(&started);
        builder = builder.host(host, move |req: &Request| {
            if req.path() == "/robots.txt" {
                return Response::not_found();
            }
            started.fetch_add(1, Ordering::SeqCst);
            Response::html(format!("<title>{}</title>slow page", req.target())).delay(answer_after)
        });
    }
    let server = builder.start().unwrap();
    SlowWeb { server, started }
}

#[test]
fn an_interrupted_crawl_stops_cleanly_and_resumes() {
    const PAGES: usize = 6;
    let web = slow_web(Duration::from_millis(800));
    let scratch = TempDir::new("signals");
    let dir = scratch.path();
    let seeds = dir.join("seeds.txt");
    let mut list = String::new();
    for host in ["a.slow.test", "b.slow.test"] {
        for i in 0..PAGES {
            list.push_str(&web.server.url(host, &format!("/p{i}.html")));
            list.push('\n');
        }
    }
    std::fs::write(&seeds, &list).unwrap();
    let hosts = dir.join("hosts");
    std::fs::write(&hosts, web.server.hosts_file()).unwrap();
    let crawl = dir.join("crawl");
    std::fs::create_dir_all(&crawl).unwrap();
    std::fs::write(
        crawl.join("crawl.toml"),
        crawl_toml("slowbot", &hosts, &CrawlSettings::default()),
    )
    .unwrap();
    let crawl_sh = || {
        let mut cmd = std::process::Command::new(support::crawl_sh());
        cmd.arg(&crawl)
            .arg("--bin")
            .arg(bins::bin_dir())
            .arg("--seeds")
            .arg(&seeds);
        cmd
    };
    let wait_for_pages = |n: usize| {
        let deadline = Instant::now() + Duration::from_secs(60);
        while web.started.load(Ordering::SeqCst) < n {
            assert!(Instant::now() < deadline, "the pages were never requested");
            std::thread::sleep(Duration::from_millis(5));
        }
    };

    // Ctrl-C on a terminal: SIGINT to the whole foreground process group.
    // The fetch must get one signal (through crawl.sh), finish what is in
    // flight and write DONE, not exit at once as after a second signal.
    let run = Background::start(crawl_sh(), dir, "ctrl-c");
    wait_for_pages(1);
    let pgid = i32::try_from(run.child.id()).unwrap();
    // SAFETY: kill(2) has no memory-safety preconditions; the group is the
    // one our child leads.
    unsafe { libc::kill(-pgid, libc::SIGINT) };
    let out = run.finish(Duration::from_secs(60));
    bins::assert_code(&out, 130, Some(&crawl));
    let round_log = crawl.join("logs/round-00001.log");
    assert!(
        out.stderr.contains(&format!(
            "crawl.sh: interrupted during fetcher fetch 00001; run again to resume (log: {})",
            round_log.display()
        )),
        "{}",
        report(&out, None)
    );
    let log = std::fs::read_to_string(&round_log).unwrap();
    assert!(
        crawl.join("fetched/00001/DONE").is_file() && log.contains("done (signal)"),
        "the fetcher did not stop cleanly after one Ctrl-C:\n{log}"
    );
    assert!(!log.contains("second signal"), "{log}");

    // SIGTERM to crawl.sh alone (what `kill` or a cron timeout sends): the
    // same clean stop, in the round that fetches the leftover.
    let before = web.started.load(Ordering::SeqCst);
    let run = Background::start(crawl_sh(), dir, "sigterm");
    wait_for_pages(before + 1);
    bins::signal(&run.child, bins::Signal::Term).unwrap();
    let out = run.finish(Duration::from_secs(60));
    bins::assert_code(&out, 130, Some(&crawl));
    assert!(
        out.stderr
            .contains("interrupted during fetcher fetch 00002"),
        "{}",
        report(&out, None)
    );
    assert!(crawl.join("fetched/00002/DONE").is_file());

    // Then the crawl ends with every page fetched once.
    let out = bins::run_with_timeout(&mut crawl_sh(), CRAWL_TIMEOUT).unwrap();
    bins::assert_code(&out, 0, Some(&crawl));
    support::assert_crawl_ended(&out);
    let outcome = support::Outcome::read(&crawl);
    let stored = outcome.pages_stored();
    assert_eq!(stored.len(), 2 * PAGES, "{:?}", stored.keys());
    assert!(stored.values().all(|s| s.len() == 1), "{stored:?}");
    let requests = web.server.logs();
    let pages: Vec<_> = requests
        .iter()
        .filter(|e| e.target != "/robots.txt")
        .collect();
    assert_eq!(pages.len(), 2 * PAGES, "{pages:#?}");
}

/// A round that ends with every host held (its robots.txt to ask again)
/// and no page fetched: crawl.sh waits for the first host to be free and
/// goes on, rather than stopping with work it could do a moment later.
#[test]
fn a_round_of_held_hosts_is_waited_out() {
    let robots_asked = Arc::new(AtomicUsize::new(0));
    let server = Server::builder()
        .host("held.test", {
            let robots_asked = Arc::clone(&robots_asked);
            move |req: &Request| match req.path() {
                // Unavailable once: the host is held for the retry delay.
                "/robots.txt" if robots_asked.fetch_add(1, Ordering::SeqCst) == 0 => {
                    Response::status(503)
                }
                "/robots.txt" => Response::not_found(),
                path => Response::html(format!("<title>{path}</title>")),
            }
        })
        .start()
        .unwrap();
    let scratch = TempDir::new("held");
    let dir = scratch.path();
    let seeds = dir.join("seeds.txt");
    std::fs::write(&seeds, format!("{}\n", server.url("held.test", "/a.html"))).unwrap();
    let hosts = dir.join("hosts");
    std::fs::write(&hosts, server.hosts_file()).unwrap();
    let crawl = dir.join("crawl");
    std::fs::create_dir_all(&crawl).unwrap();
    // Held for the robots.txt retry delay (200 ms), longer than the tail
    // time: the first round ends held, with no page.
    let settings = CrawlSettings {
        tail_time: Duration::from_millis(50),
        ..CrawlSettings::default()
    };
    std::fs::write(
        crawl.join("crawl.toml"),
        crawl_toml("heldbot", &hosts, &settings),
    )
    .unwrap();
    let out = bins::run_with_timeout(
        std::process::Command::new(support::crawl_sh())
            .arg(&crawl)
            .arg("--bin")
            .arg(bins::bin_dir())
            .arg("--seeds")
            .arg(&seeds),
        CRAWL_TIMEOUT,
    )
    .unwrap();
    bins::assert_code(&out, 0, Some(&crawl));
    assert!(
        out.stdout.contains("every host left is held; waiting"),
        "{}",
        report(&out, None)
    );
    assert!(
        out.stdout.contains("nothing left to fetch"),
        "{}",
        report(&out, None)
    );
    let pages: Vec<String> = server
        .log("held.test")
        .iter()
        .map(|e| e.target.clone())
        .filter(|t| t != "/robots.txt")
        .collect();
    assert_eq!(pages, ["/a.html"], "{}", report(&out, None));
}

/// The files in `logs/`, sorted.
fn log_files(crawl: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(crawl.join("logs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Rounds are numbered by the round journal (`rounds.v1.tsv`), not by the
/// logs: deleting them changes no number, and a round killed with -9 is
/// finished by the next run under its own number, in the same log. A round
/// adds two files to `logs/` (its log and its segmenter report); its line
/// counts the URLs its own segmenter run wrote, so that the rounds' new
/// URLs and the seeds add up to every segment written.
#[test]
fn rounds_are_numbered_from_the_journal_whatever_happens_to_the_logs() {
    let c = DemoCrawl::start("journal", &small_demo(), CrawlSettings::default());
    let crawl = common::crawldir::CrawlDir::new(&c.crawl);
    let out = c.run_crawl_sh(&["--rounds", "2"]);
    bins::assert_code(&out, 0, Some(&c.crawl));
    let logs = log_files(&c.crawl);
    let (round_logs, reports): (Vec<&String>, Vec<&String>) = logs
        .iter()
        .filter(|n| *n != "inject.log")
        .partition(|n| n.starts_with("round-"));
    assert_eq!(
        round_logs,
        ["round-00001.log", "round-00002.log"],
        "{logs:?}"
    );
    // The injection's report and one per round; nothing else.
    assert_eq!(reports.len(), 3, "{logs:?}");
    assert!(reports.iter().all(|n| n.ends_with(".json")), "{logs:?}");
    // A round's log has each line of its steps once: the programs write
    // their log into it, and their stderr is the same file.
    let log = std::fs::read_to_string(c.crawl.join("logs/round-00001.log")).unwrap();
    for once in [
        "fetching segment 00001",
        "runs consumed:",
        "reading 1 fetched run(s)",
    ] {
        assert_eq!(log.matches(once).count(), 1, "{once:?} in:\n{log}");
    }
    // The journal holds the round lines as printed.
    let printed: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("round "))
        .collect();
    let journal: Vec<String> = common::rounds::read(&crawl)
        .unwrap()
        .iter()
        .map(common::rounds::Round::line)
        .collect();
    assert_eq!(journal, printed, "{}", out.stdout);

    // kill -9 of crawl.sh and its fetch, in round 3.
    let mut run = Background::start(c.crawl_sh(&[]), c.scratch.path(), "killed");
    assert!(run.wait_for_step("fetcher", Duration::from_secs(60)));
    let _ = run.kill();
    // (Rarely, the fetch ended just before the kill: then it is not redone.)
    let cut = !crawl.is_fetched("00003");
    let out = c.run_crawl_sh(&["--rounds", "1"]);
    bins::assert_code(&out, 0, Some(&c.crawl));
    let lines = round_lines(&out.stdout);
    assert_eq!((lines.len(), lines[0].round), (1, 3), "{}", out.stdout);
    assert_eq!(lines[0].segment, "00003");
    let log = std::fs::read_to_string(c.crawl.join("logs/round-00003.log")).unwrap();
    let fetches = log
        .lines()
        .filter(|l| l.starts_with("=== ") && l.contains(" fetcher fetch 00003: "))
        .count();
    assert_eq!(
        fetches,
        if cut { 2 } else { 1 },
        "the killed fetch and its resumption, in one log:\n{log}"
    );

    // Logs deleted: the numbering goes on.
    std::fs::remove_dir_all(c.crawl.join("logs")).unwrap();
    let out = c.run_crawl_sh(&["--rounds", "1"]);
    bins::assert_code(&out, 0, Some(&c.crawl));
    let lines = round_lines(&out.stdout);
    assert_eq!((lines.len(), lines[0].round), (1, 4), "{}", out.stdout);
    assert!(c.crawl.join("logs/round-00004.log").is_file());

    // Every segment was written by the injection or by one round.
    let rounds = common::rounds::read(&crawl).unwrap();
    assert_eq!(
        rounds.iter().map(|r| r.number).collect::<Vec<_>>(),
        [1, 2, 3, 4]
    );
    let written: u64 = rounds.iter().map(|r| r.figures.new_urls).sum();
    let all: u64 = crawl
        .segment_ids()
        .unwrap()
        .iter()
        .map(|id| segment_urls(&c.crawl, id))
        .sum();
    assert_eq!(written + 3, all, "{rounds:#?}");
}
