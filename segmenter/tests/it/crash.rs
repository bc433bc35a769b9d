//! `kill -9` at any moment, then the same command again, gives the same
//! segments, Bloom filter, backlog and consumed list as an uninterrupted run:
//! in an ordinary round, and in one that grows the Bloom filter.

use crate::support;

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::segment::Via;
use support::*;
use testkit::Rng;

const FLAGS: [&str; 8] = [
    "--memory",
    "64KiB",
    "--max-per-host",
    "40",
    "--partitions",
    "2",
    "--max-segment-size",
    "300",
];

/// A crawl with one fetched run to consume: 50 hosts, 600 pages of 30
/// links, and a leftover list; `inject` made it with `extra` flags.
fn prepare(tag: &str, extra: &[&str]) -> TempCrawl {
    let crawl = TempCrawl::new(tag);
    let seeds: String = (0..50).map(|h| format!("http://h{h}.test/\n")).collect();
    let flags: Vec<&str> = FLAGS.iter().copied().chain(extra.iter().copied()).collect();
    inject(&crawl, &seeds, &flags);
    let mut rng = Rng::new(11);
    let mut pages = Vec::new();
    for i in 0..600 {
        let links: Vec<String> = (0..30)
            .map(|_| format!("http://h{}.test/p{}", rng.below(50), rng.below(300)))
            .collect();
        let refs: Vec<&str> = links.iter().map(String::as_str).collect();
        pages.push(Page::html(
            &format!("http://h{}.test/", i % 50),
            rng.below(3) as u32,
            &refs,
        ));
    }
    let leftover: Vec<_> = (0..100)
        .map(|i| {
            rec(
                &format!("http://h{}.test/left{i}", i % 50),
                1,
                Via::Leftover,
                0,
            )
        })
        .collect();
    write_leftover(&crawl, "00001-p01", &leftover);
    write_fetched(&crawl, "00001-p01", &pages, 200_000, true);
    crawl
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// What must be the same: every segment and the backlog (decoded),
/// `seen.bloom` and `consumed.txt` (bytes), the history's list (text) and
/// entries (read through its generations), and no staging left over.
fn snapshot(crawl: &TempCrawl) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (id, recs) in segments(crawl) {
        out.insert(format!("segment {id}"), format!("{recs:?}"));
    }
    out.insert("backlog".into(), format!("{:?}", backlog(crawl)));
    let bloom = fs::read(crawl.dir.bloom_path()).unwrap();
    out.insert(
        "seen.bloom".into(),
        format!("{} bytes, fnv {:x}", bloom.len(), fnv(&bloom)),
    );
    let history = history_text(crawl.root());
    out.insert(
        "history".into(),
        format!("{} bytes, fnv {:x}", history.len(), fnv(history.as_bytes())),
    );
    out.insert(
        "history list".into(),
        fs::read_to_string(crawl.root().join(HISTORY_LIST)).unwrap_or_default(),
    );
    out.insert(
        "consumed".into(),
        fs::read_to_string(crawl.dir.consumed_path()).unwrap_or_default(),
    );
    let leftovers: Vec<String> = fs::read_dir(crawl.root())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".segmenter-staging") || n.contains(".tmp"))
        .collect();
    out.insert("staging left".into(), format!("{leftovers:?}"));
    out
}

fn fnv(bytes: &[u8]) -> u64 {
    // FNV-1a is enough to compare two files in a test.
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

fn args(root: &Path) -> Vec<String> {
    let mut a = vec!["run".to_string(), root.display().to_string()];
    a.extend(FLAGS.iter().map(|s| s.to_string()));
    a
}

enum Kill {
    /// At a named point of the commit protocol.
    At(&'static str),
    /// After a delay.
    After(Duration),
}

/// Starts a run, kills it with SIGKILL as told, and says whether the kill
/// happened before the process ended on its own.
fn killed_run(root: &Path, how: &Kill) -> bool {
    let mut cmd = segmenter_cmd(&args(root));
    cmd.stdout(Stdio::null()).stderr(Stdio::piped());
    if let Kill::At(point) = how {
        cmd.env("SEGMENTER_PAUSE_AT", point);
    }
    let mut child = cmd.spawn().unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    match how {
        Kill::At(point) => {
            let want = format!("segmenter: paused at {point}");
            let deadline = Instant::now() + Duration::from_secs(60);
            let mut seen = Vec::new();
            loop {
                let left = deadline.saturating_duration_since(Instant::now());
                match rx.recv_timeout(left) {
                    Ok(line) if line == want => break,
                    Ok(line) => seen.push(line),
                    Err(_) => panic!("never reached {point}:\n{}", seen.join("\n")),
                }
            }
        }
        Kill::After(d) => std::thread::sleep(*d),
    }
    let alive = child.try_wait().unwrap().is_none();
    let _ = child.kill();
    child.wait().unwrap();
    reader.join().unwrap();
    alive
}

#[test]
fn kill_at_any_moment_then_rerun_equals_a_clean_run() {
    let base = prepare("crash-base", &[]);
    let points = ["scanned", "history", "staged", "marked", "moving", "moved"];
    let report = kill_campaign(&base, "crash", &points);
    // The workload exercises every part of the round.
    assert!(figure(&report, "sort spills:") > 2, "{report}");
    assert!(figure(&report, "to backlog:") > 0, "{report}");
    assert!(
        report.contains("bloom commit:          appended"),
        "{report}"
    );
}

#[test]
fn kill_during_a_round_that_grows_the_filter_then_rerun_equals_a_clean_run() {
    // A filter made for 2,000 URLs: the round brings ten times as many.
    let base = prepare("growth-base", &["--bloom-items", "2000"]);
    let points = [
        "scanned", "history", "rescued", "growing", "grown", "staged", "marked", "moving", "moved",
    ];
    let report = kill_campaign(&base, "growth", &points);
    assert!(
        report.contains("bloom growth:          from 2000 to"),
        "{report}"
    );
    assert!(report.contains("bloom commit:          grown"), "{report}");
}

/// Runs the round of `base` once cleanly, then killed at each of `points`
/// and at random moments, each time followed by the same command: every
/// result must equal the clean run's. Returns the clean run's report.
fn kill_campaign(base: &TempCrawl, tag: &str, points: &[&'static str]) -> String {
    let clean = TempCrawl::new(&format!("{tag}-clean"));
    copy_dir(base.root(), clean.root());
    let started = Instant::now();
    let a = args(clean.root());
    let argv: Vec<&str> = a.iter().map(String::as_str).collect();
    let report = run_ok(&argv, &clean);
    let clean_time = started.elapsed();
    let expected = snapshot(&clean);
    let new_segments: Vec<&String> = expected
        .keys()
        .filter(|k| k.starts_with("segment ") && !k.starts_with("segment 00001"))
        .collect();
    assert!(new_segments.len() >= 4, "{new_segments:?}");

    let mut trials: Vec<Kill> = points.iter().copied().map(Kill::At).collect();
    // Random moments from several seeds, spread over the clean run's time.
    let span = clean_time.as_micros() as u64 * 11 / 10;
    for seed in [11, 2024, 777] {
        let mut rng = Rng::new(seed);
        for _ in 0..2 {
            trials.push(Kill::After(Duration::from_micros(
                rng.below(span as usize) as u64
            )));
        }
    }
    for (i, how) in trials.iter().enumerate() {
        let crawl = TempCrawl::new(&format!("{tag}-{i}"));
        copy_dir(base.root(), crawl.root());
        let killed = killed_run(crawl.root(), how);
        if let Kill::At(point) = how {
            assert!(killed, "the run ended before it could be killed at {point}");
        }
        let a = args(crawl.root());
        let argv: Vec<&str> = a.iter().map(String::as_str).collect();
        run_ok(&argv, &crawl);
        let got = snapshot(&crawl);
        let label = match how {
            Kill::At(p) => format!("killed at {p}"),
            Kill::After(d) => format!("killed after {d:?}"),
        };
        for (k, v) in &expected {
            // (Not assert_eq: the values are whole segments.)
            assert!(got.get(k) == Some(v), "{label}: {k} differs");
        }
        assert_eq!(got.len(), expected.len(), "{label}: {:?}", got.keys());
    }
    report
}
