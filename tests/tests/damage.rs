//! A damage campaign: a real crawl of a small demo web (two rounds, then
//! one more segment fetched and not yet segmented), then, one file at a
//! time, each file the segmenter's round reads is cut at several offsets,
//! emptied, flipped, given garbage at its end or replaced by a file of
//! another kind, and `segmenter run` is run on it. Each case must end in
//! one of:
//! - **refused**: a non-zero exit, a message naming the file, and no file
//!   of the crawl directory changed;
//! - **recovered**: exit 0 and a message naming the file;
//! - **harmless**: exit 0 and the same URLs scheduled (segment + backlog)
//!   as from the undamaged directory.
//!
//! Anything else (exit 0 with URLs lost or added and no word about the
//! file; a refusal that changed files) is a failure. The table of outcomes
//! is printed (`cargo test --test damage -- --nocapture`). The kinds listed
//! in [`UNGUARDED`] are measured and printed, not asserted: their damage
//! cannot be told from an edit (see the README, "When a file is damaged").

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::segment::{SegmentReader, SegmentRecord};
use testkit::bins::{self, Finished, bin_path};
use testkit::demo::{Demo, DemoParams};

use support::{CrawlSettings, DemoCrawl};

/// Kinds whose damage cannot always be detected: hand-written settings,
/// and files the round does not depend on for what it schedules.
const UNGUARDED: [&str; 1] = ["crawl.toml"];

/// How a case ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Verdict {
    Refused,
    Recovered,
    Harmless,
    /// Exit 0, URLs missing or added, no message naming the file.
    Silent,
    /// A refusal that changed files, or did not name the file.
    BadRefusal,
}

/// Turns a file's bytes into damaged ones.
type Apply = Box<dyn Fn(&[u8]) -> Vec<u8>>;

/// One way to damage a file.
struct Damage {
    name: String,
    apply: Apply,
}

fn damages(len: usize, other: &[u8]) -> Vec<Damage> {
    let mut out: Vec<Damage> = Vec::new();
    let mut cuts: BTreeSet<usize> = [1, len / 3, len / 2, len.saturating_sub(5), len - 1]
        .into_iter()
        .filter(|&c| c > 0 && c < len)
        .collect();
    cuts.insert(0);
    for cut in cuts {
        let name = if cut == 0 {
            "empty".to_string()
        } else {
            format!("cut at {cut}")
        };
        out.push(Damage {
            name,
            apply: Box::new(move |b: &[u8]| b[..cut].to_vec()),
        });
    }
    for at in [len / 2, len * 3 / 4] {
        out.push(Damage {
            name: format!("flip byte {at}"),
            apply: Box::new(move |b: &[u8]| {
                let mut b = b.to_vec();
                b[at] ^= 0x5a;
                b
            }),
        });
    }
    out.push(Damage {
        name: "garbage appended".into(),
        apply: Box::new(|b: &[u8]| [b, b"garbage\n\x00\xff\xfe line\n".as_slice()].concat()),
    });
    let other = other.to_vec();
    out.push(Damage {
        name: "another file".into(),
        apply: Box::new(move |_: &[u8]| other.clone()),
    });
    out
}

#[test]
fn every_damaged_file_is_refused_or_recovered_never_lost_in_silence() {
    let demo = Demo::with_params(DemoParams::small(3));
    let settings = CrawlSettings {
        // A cap that binds, so that the backlog holds URLs.
        fetcher_extra: "\n[segmenter]\nmax_per_host = 4\n".into(),
        ..CrawlSettings::default()
    };
    let c = DemoCrawl::start("damage", &demo, settings);
    let out = c.run_crawl_sh(&["--rounds", "2"]);
    bins::assert_code(&out, 0, Some(&c.crawl));
    // One more segment fetched: the run the damaged round reads.
    let pending = pending_segment(&c.crawl);
    bins::run_within(
        Command::new(bin_path("fetcher"))
            .arg("fetch")
            .arg(&c.crawl)
            .arg(&pending),
        &c.crawl,
        0,
        Duration::from_secs(60),
    );
    let run = c.crawl.join("fetched").join(&pending);
    let files: Vec<(&str, PathBuf)> = vec![
        ("consumed.txt", c.crawl.join("consumed.txt")),
        ("scope.seeds", c.crawl.join("scope.seeds")),
        ("backlog", c.crawl.join("backlog.v3.tsv.zst")),
        ("seen.bloom", c.crawl.join("seen.bloom")),
        ("hosts.db", c.crawl.join("hosts.db")),
        ("crawl.toml", c.crawl.join("crawl.toml")),
        ("leftover", run.join("leftover.v3.tsv.zst")),
        ("DONE", run.join("DONE")),
        ("stats.json", run.join("stats.json")),
    ];
    for (kind, path) in &files {
        assert!(path.is_file(), "{kind}: no {}", path.display());
    }
    let pristine = c.scratch.path().join("pristine");
    copy_tree(&c.crawl, &pristine);
    let case_dir = c.scratch.path().join("case");
    copy_tree(&pristine, &case_dir);
    let base = segment_round(&case_dir);
    bins::assert_code(&base, 0, Some(&case_dir));
    let expected = scheduled(&case_dir);
    assert!(!expected.is_empty());

    let mut table: BTreeMap<&str, BTreeMap<Verdict, Vec<String>>> = BTreeMap::new();
    let mut failures = Vec::new();
    for (i, (kind, path)) in files.iter().enumerate() {
        let rel = path.strip_prefix(&c.crawl).unwrap().to_path_buf();
        let good = std::fs::read(pristine.join(&rel)).unwrap();
        // "Another file": the next file of the list.
        let other_rel = files[(i + 1) % files.len()]
            .1
            .strip_prefix(&c.crawl)
            .unwrap()
            .to_path_buf();
        let other = std::fs::read(pristine.join(&other_rel)).unwrap();
        for d in damages(good.len(), &other) {
            let _ = std::fs::remove_dir_all(&case_dir);
            copy_tree(&pristine, &case_dir);
            std::fs::write(case_dir.join(&rel), (d.apply)(&good)).unwrap();
            let before = snapshot(&case_dir);
            let out = segment_round(&case_dir);
            let named = mentions(&out, &case_dir, &rel);
            let verdict = if out.code() != Some(0) {
                if named && snapshot(&case_dir) == before {
                    Verdict::Refused
                } else {
                    Verdict::BadRefusal
                }
            } else if named {
                Verdict::Recovered
            } else if scheduled(&case_dir) == expected {
                Verdict::Harmless
            } else {
                Verdict::Silent
            };
            if verdict >= Verdict::Silent && !UNGUARDED.contains(kind) {
                failures.push(format!(
                    "{kind} ({}): {}: {verdict:?}\n{}",
                    rel.display(),
                    d.name,
                    bins::report(&out, None)
                ));
            }
            table
                .entry(kind)
                .or_default()
                .entry(verdict)
                .or_default()
                .push(d.name);
        }
    }
    let text = render_table(&table);
    println!("{text}");
    if let Some(out) = std::env::var_os("DAMAGE_TABLE") {
        std::fs::write(out, &text).unwrap();
    }
    assert!(
        failures.is_empty(),
        "{} case(s) lost data or refused badly:\n{}\n{text}",
        failures.len(),
        failures.join("\n")
    );
}

/// `segmenter run CRAWL`, bounded in time.
fn segment_round(crawl: &Path) -> Finished {
    bins::run_with_timeout(
        Command::new(bin_path("segmenter")).arg("run").arg(crawl),
        Duration::from_secs(60),
    )
    .expect("cannot start the segmenter")
}

/// The one segment written and not yet fetched.
fn pending_segment(crawl: &Path) -> String {
    let ids: Vec<String> = std::fs::read_dir(crawl.join("segments"))
        .unwrap()
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            let id = common::crawldir::segment_id_of_file_name(&name)?.to_string();
            (!crawl.join("fetched").join(&id).join("DONE").exists()).then_some(id)
        })
        .collect();
    assert_eq!(ids.len(), 1, "one segment waiting: {ids:?}");
    ids[0].clone()
}

/// Every URL the crawl has scheduled or holds back: the segments not yet
/// fetched and the backlog.
fn scheduled(crawl: &Path) -> BTreeSet<String> {
    let mut files = vec![crawl.join("backlog.v3.tsv.zst")];
    for e in std::fs::read_dir(crawl.join("segments")).unwrap() {
        let path = e.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        if let Some(id) = common::crawldir::segment_id_of_file_name(&name)
            && !crawl.join("fetched").join(id).join("DONE").exists()
        {
            files.push(path);
        }
    }
    let mut urls = BTreeSet::new();
    for f in files {
        let Ok(mut r) = SegmentReader::open(&f) else {
            continue;
        };
        let mut rec = SegmentRecord::default();
        loop {
            match r.read_next(&mut rec) {
                Ok(true) => {
                    urls.insert(rec.url.clone());
                }
                Ok(false) => break,
                Err(e) if e.is_fatal() => break,
                Err(_) => {}
            }
        }
    }
    urls
}

/// True if the run's stderr or a warning of its log names the damaged file.
fn mentions(out: &Finished, crawl: &Path, rel: &Path) -> bool {
    let name = rel.file_name().unwrap().to_str().unwrap();
    if out.stderr.contains(name) {
        return true;
    }
    let Ok(logs) = std::fs::read_dir(crawl.join("logs")) else {
        return false;
    };
    logs.flatten().any(|e| {
        std::fs::read_to_string(e.path())
            .unwrap_or_default()
            .lines()
            .any(|l| l.contains(name) && l.contains("warning"))
    })
}

/// Every file under `dir` with its contents, except the run logs, lock
/// files (a refused run still writes its log) and SQLite's shared-memory
/// index (`hosts.db-shm`, rebuilt by every reader, not data).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let path = e.path();
            let rel = path.strip_prefix(dir).unwrap().to_path_buf();
            let name = rel.to_string_lossy();
            if rel.starts_with("logs") || name.ends_with(".lock") || name.ends_with("-shm") {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                out.insert(rel, std::fs::read(&path).unwrap_or_default());
            }
        }
    }
    out
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

fn render_table(table: &BTreeMap<&str, BTreeMap<Verdict, Vec<String>>>) -> String {
    let mut text = String::from(
        "| file | cases | refused | recovered | harmless | lost or changed in silence |\n\
         |---|---|---|---|---|---|\n",
    );
    let count = |m: &BTreeMap<Verdict, Vec<String>>, v: Verdict| m.get(&v).map_or(0, Vec::len);
    let mut totals = [0usize; 5];
    for (kind, m) in table {
        let n: usize = m.values().map(Vec::len).sum();
        let silent: Vec<&String> = [Verdict::Silent, Verdict::BadRefusal]
            .iter()
            .filter_map(|v| m.get(v))
            .flatten()
            .collect();
        let row = [
            n,
            count(m, Verdict::Refused),
            count(m, Verdict::Recovered),
            count(m, Verdict::Harmless),
            silent.len(),
        ];
        for (t, r) in totals.iter_mut().zip(row) {
            *t += r;
        }
        let detail = if silent.is_empty() {
            String::new()
        } else {
            format!(
                " ({})",
                silent
                    .iter()
                    .map(|s| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let _ = writeln!(
            text,
            "| {kind} | {} | {} | {} | {} | {}{detail} |",
            row[0], row[1], row[2], row[3], row[4]
        );
    }
    let _ = writeln!(
        text,
        "| all | {} | {} | {} | {} | {} |",
        totals[0], totals[1], totals[2], totals[3], totals[4]
    );
    text
}
