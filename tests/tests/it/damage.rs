//! A damage campaign: a real crawl of a small demo web (two rounds, then
//! one more segment fetched and not yet segmented), then, one file at a
//! time, each file is cut at several offsets, emptied, flipped, given
//! garbage at its end or replaced by a file of another kind, and the
//! program that reads it is run: `segmenter run` for the state files and
//! the fetched run; `fetcher fetch` for the segment waiting, hosts.db and
//! crawl.toml; the fetcher's resume for the WARC file, crawl log and work
//! file of a run killed before its end; `segmenter repair` for the `.prev`
//! generations; `segmenter run` for the files a round killed after its
//! commit marker left in `.segmenter-staging/`. Each case must end in one
//! of:
//! - **refused**: a non-zero exit, a message naming the file, and no file
//!   of the crawl directory changed;
//! - **recovered**: exit 0 and a message naming the file (for the resume
//!   and the staged round, also the check below);
//! - **harmless**: exit 0 and the same outcome as from the undamaged
//!   directory: the same URLs scheduled (segment + backlog) after a round;
//!   every URL of the segment logged or left over after a fetch; and after
//!   a resume, also a crawl log that agrees with the WARC files.
//!
//! Anything else (exit 0 with URLs lost or added and no word about the
//! file; a refusal that changed files) is a failure. The table of outcomes
//! is printed (`cargo test -p crawl-tests --test it damage:: --
//! --nocapture`). The kinds listed in [`UNGUARDED`] are measured and
//! printed, not asserted: their damage
//! cannot be told from an edit (see docs/operations.md, "When a file is damaged").

use crate::support;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::segment::{SegmentReader, SegmentRecord};
use testkit::bins::{self, Finished, fetcher_cmd, segmenter_cmd};
use testkit::demo::{Demo, DemoParams};
use testkit::files::{self, copy_tree};
use testkit::warcio::warc_files;

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
        fetcher_cmd().arg("fetch").arg(&c.crawl).arg(&pending),
        &c.crawl,
        0,
        Duration::from_secs(60),
    );
    let run = c.crawl.join("fetched").join(&pending);
    let files: Vec<(&str, PathBuf)> = vec![
        ("consumed.txt", c.crawl.join("consumed.txt")),
        ("scope.seeds", c.crawl.join("scope.seeds")),
        ("backlog", c.crawl.join("backlog.v5.tsv.zst")),
        ("seen.bloom", c.crawl.join("seen.bloom")),
        ("history", c.crawl.join("history.v5.list")),
        ("history generation", first_generation(&c.crawl)),
        ("hosts.db", c.crawl.join("hosts.db")),
        ("crawl.toml", c.crawl.join("crawl.toml")),
        ("leftover", run.join("leftover.v5.tsv.zst")),
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
    // The crawl after that round: a segment waiting for the fetcher.
    let after_round = c.scratch.path().join("after-round");
    copy_tree(&case_dir, &after_round);

    let mut campaign = Campaign {
        case_dir,
        table: BTreeMap::new(),
        failures: Vec::new(),
    };
    let rels: Vec<PathBuf> = files
        .iter()
        .map(|(_, p)| p.strip_prefix(&c.crawl).unwrap().to_path_buf())
        .collect();
    for (i, (kind, _)) in files.iter().enumerate() {
        // "Another file": the next file of the list.
        let other = &rels[(i + 1) % rels.len()];
        campaign.run(
            &Target {
                kind: kind.to_string(),
                base: &pristine,
                rel: &rels[i],
                other: std::fs::read(pristine.join(other)).unwrap(),
                guarded: !UNGUARDED.contains(kind),
                check_even_if_named: false,
            },
            &damages,
            &segment_round,
            &|dir: &Path| scheduled(dir) == expected,
        );
    }

    // The fetcher's files, read by the fetcher: the segment waiting, the
    // host state and the settings.
    let hosts_file = c.scratch.path().join("hosts");
    let next = pending_segment(&after_round);
    let segment_rel = after_round_segment(&after_round, &next);
    let segment_urls: BTreeSet<String> = read_urls(&after_round.join(&segment_rel));
    let fetch = |dir: &Path| fetch_run(dir, &next, &hosts_file);
    let accounted = |dir: &Path| accounted_for(dir, &next, &segment_urls);
    for (kind, rel, guarded) in [
        ("segment (fetcher)", segment_rel.clone(), true),
        ("hosts.db (fetcher)", PathBuf::from("hosts.db"), true),
        ("crawl.toml (fetcher)", PathBuf::from("crawl.toml"), false),
    ] {
        campaign.run(
            &Target {
                kind: kind.to_string(),
                base: &after_round,
                rel: &rel,
                other: std::fs::read(after_round.join("consumed.txt")).unwrap(),
                guarded,
                check_even_if_named: false,
            },
            &few_damages,
            &fetch,
            &accounted,
        );
    }

    // A run killed before its end: its WARC file, crawl log and work file,
    // read by the fetcher's resume. Whatever it says, the crawl log must
    // agree with the WARC files afterwards and no URL may be lost.
    let unfinished = c.scratch.path().join("unfinished");
    copy_tree(&after_round, &unfinished);
    bins::assert_code(&fetch(&unfinished), 0, Some(&unfinished));
    let run_dir = unfinished.join("fetched").join(&next);
    for name in ["DONE", "stats.json", "leftover.v5.tsv.zst"] {
        std::fs::remove_file(run_dir.join(name)).unwrap();
    }
    std::fs::write(run_dir.join(".work.tsv"), b"host\turl\n").unwrap();
    let warc = warc_files(&run_dir).pop().expect("a WARC file");
    let run_rel = PathBuf::from("fetched").join(&next);
    let agrees = |dir: &Path| accounted(dir) && log_agrees(&dir.join("fetched").join(&next));
    for (kind, rel) in [
        ("WARC (resume)", run_rel.join(warc.file_name().unwrap())),
        ("crawl.log (resume)", run_rel.join("crawl.log")),
        ("work file (resume)", run_rel.join(".work.tsv")),
    ] {
        campaign.run(
            &Target {
                kind: kind.to_string(),
                base: &unfinished,
                rel: &rel,
                other: std::fs::read(unfinished.join(&segment_rel)).unwrap(),
                guarded: true,
                check_even_if_named: true,
            },
            &damages,
            &fetch,
            &agrees,
        );
    }

    // The previous generations, read by `segmenter repair` (which restores
    // them): a damaged one is named and nothing changes. (seen.bloom.prev
    // is there only after a fold or a growth of the filter; a flipped bit
    // in its array is found by the count of bits set it records.)
    let repair = |dir: &Path| {
        bins::run_with_timeout(
            segmenter_cmd().arg("repair").arg(dir),
            Duration::from_secs(60),
        )
        .expect("cannot start the segmenter")
    };
    for name in [
        "consumed.txt.prev",
        "backlog.v5.tsv.zst.prev",
        "seen.bloom.prev",
        "scope.seeds.prev",
        "history.v5.list.prev",
    ] {
        if !pristine.join(name).is_file() {
            continue;
        }
        campaign.run(
            &Target {
                kind: name.to_string(),
                base: &pristine,
                rel: Path::new(name),
                other: std::fs::read(pristine.join("crawl.toml")).unwrap(),
                guarded: true,
                check_even_if_named: false,
            },
            &damages,
            &repair,
            &|_: &Path| false,
        );
    }

    // The work files of a segmenter round killed after its commit marker
    // was written (the next run moves them into place).
    let staged = c.scratch.path().join("staged");
    copy_tree(&pristine, &staged);
    kill_at_marker(&staged);
    let staging = PathBuf::from(".segmenter-staging");
    let mut work_files: Vec<PathBuf> = vec![staging.join("COMMIT")];
    for e in std::fs::read_dir(staged.join(&staging)).unwrap().flatten() {
        if e.path().is_file() && e.file_name() != "COMMIT" {
            work_files.push(staging.join(e.file_name()));
        }
    }
    for e in std::fs::read_dir(staged.join(&staging).join("segments"))
        .unwrap()
        .flatten()
    {
        work_files.push(staging.join("segments").join(e.file_name()));
    }
    work_files.sort();
    for rel in &work_files {
        campaign.run(
            &Target {
                kind: format!("{} (staged)", rel.file_name().unwrap().to_string_lossy()),
                base: &staged,
                rel,
                other: std::fs::read(staged.join("crawl.toml")).unwrap(),
                guarded: true,
                // Discarded and done again, or moved in: the same round.
                check_even_if_named: true,
            },
            &few_damages,
            &segment_round,
            &|dir: &Path| scheduled(dir) == expected,
        );
    }

    let text = render_table(&campaign.table);
    println!("{text}");
    if let Some(out) = std::env::var_os("DAMAGE_TABLE") {
        std::fs::write(out, &text).unwrap();
    }
    assert!(
        campaign.failures.is_empty(),
        "{} case(s) lost data or refused badly:\n{}\n{text}",
        campaign.failures.len(),
        campaign.failures.join("\n")
    );
}

/// A file to damage, and how to judge what the step that reads it did.
struct Target<'a> {
    /// The row of the table.
    kind: String,
    /// The crawl directory each case starts from (copied).
    base: &'a Path,
    /// The file, relative to it.
    rel: &'a Path,
    /// The bytes of "another file".
    other: Vec<u8>,
    /// Failures are asserted (else only measured: see [`UNGUARDED`]).
    guarded: bool,
    /// The outcome must pass the check even when the damage was named.
    check_even_if_named: bool,
}

/// The cases run so far and their outcomes.
struct Campaign {
    case_dir: PathBuf,
    table: BTreeMap<String, BTreeMap<Verdict, Vec<String>>>,
    failures: Vec<String>,
}

impl Campaign {
    /// Damages `t.rel` in each way of `ways`, runs `step` on a copy of
    /// `t.base` and judges it: `same` tells whether an exit 0 left nothing
    /// lost.
    fn run(
        &mut self,
        t: &Target<'_>,
        ways: &dyn Fn(usize, &[u8]) -> Vec<Damage>,
        step: &dyn Fn(&Path) -> Finished,
        same: &dyn Fn(&Path) -> bool,
    ) {
        let good = std::fs::read(t.base.join(t.rel)).unwrap();
        for d in ways(good.len(), &t.other) {
            let dir = &self.case_dir;
            let _ = std::fs::remove_dir_all(dir);
            copy_tree(t.base, dir);
            std::fs::write(dir.join(t.rel), (d.apply)(&good)).unwrap();
            let before = snapshot(dir);
            let out = step(dir);
            let named = mentions(&out, dir, t.rel);
            let mut changed = Vec::new();
            let verdict = if out.code() != Some(0) {
                changed = changed_files(&before, &snapshot(dir));
                if named && changed.is_empty() {
                    Verdict::Refused
                } else {
                    Verdict::BadRefusal
                }
            } else if t.check_even_if_named && !same(dir) {
                Verdict::Silent
            } else if named {
                Verdict::Recovered
            } else if same(dir) {
                Verdict::Harmless
            } else {
                Verdict::Silent
            };
            if verdict >= Verdict::Silent && t.guarded {
                self.failures.push(format!(
                    "{} ({}): {}: {verdict:?}{}\n{}",
                    t.kind,
                    t.rel.display(),
                    d.name,
                    if changed.is_empty() {
                        String::new()
                    } else {
                        format!(" (files changed: {})", changed.join(", "))
                    },
                    bins::report(&out, None)
                ));
            }
            self.table
                .entry(t.kind.clone())
                .or_default()
                .entry(verdict)
                .or_default()
                .push(d.name);
        }
    }
}

/// Fewer ways, for steps that fetch: empty, cut in the middle, a flipped
/// byte, garbage appended, another file.
fn few_damages(len: usize, other: &[u8]) -> Vec<Damage> {
    damages(len, other)
        .into_iter()
        .filter(|d| {
            d.name == "empty"
                || d.name == format!("cut at {}", len / 2)
                || d.name == format!("flip byte {}", len / 2)
                || d.name == "garbage appended"
                || d.name == "another file"
        })
        .collect()
}

/// `fetcher fetch DIR ID`, with the loopback names and addresses on the
/// command line too (a damaged crawl.toml must not send it to DNS).
fn fetch_run(dir: &Path, id: &str, hosts: &Path) -> Finished {
    bins::run_with_timeout(
        fetcher_cmd()
            .arg("fetch")
            .arg(dir)
            .arg(id)
            .arg("--hosts-file")
            .arg(hosts)
            .args(["--allow-private", "--progress", "none"]),
        Duration::from_secs(60),
    )
    .expect("cannot start the fetcher")
}

/// Runs `segmenter run CRAWL` until it has written its commit marker, and
/// kills it there (`kill -9`).
fn kill_at_marker(crawl: &Path) {
    let mut cmd = segmenter_cmd();
    cmd.arg("run")
        .arg(crawl)
        .env("SEGMENTER_PAUSE_AT", "marked");
    let child = bins::spawn(&mut cmd).expect("cannot start the segmenter");
    let marker = crawl.join(".segmenter-staging").join("COMMIT");
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !marker.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(marker.exists(), "the round never wrote its commit marker");
    // The marker is written whole (renamed into place) just before the
    // pause: the round is then decided and nothing else is written.
    std::thread::sleep(Duration::from_millis(100));
    child.signal(bins::Signal::Kill).unwrap();
    child.finish(Duration::from_secs(10));
}

/// The segment file of `id`, relative to the crawl directory.
fn after_round_segment(crawl: &Path, id: &str) -> PathBuf {
    let path = common::crawldir::CrawlDir::new(crawl).segment_path(id);
    path.strip_prefix(crawl).unwrap().to_path_buf()
}

/// The URLs of a segment-format file, as far as it reads.
fn read_urls(path: &Path) -> BTreeSet<String> {
    let mut urls = BTreeSet::new();
    let Ok(mut r) = SegmentReader::open(path) else {
        return urls;
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
    urls
}

/// True if run `id` is complete and every URL of `urls` was attempted (a
/// crawl-log line) or left over.
fn accounted_for(crawl: &Path, id: &str, urls: &BTreeSet<String>) -> bool {
    let run = crawl.join("fetched").join(id);
    if !run.join("DONE").is_file() {
        return false;
    }
    let mut seen = read_urls(&run.join("leftover.v5.tsv.zst"));
    let log = std::fs::read_to_string(run.join("crawl.log")).unwrap_or_default();
    for line in log.lines() {
        match common::crawllog::parse_line(line) {
            Ok(l) => {
                seen.insert(l.url);
            }
            Err(_) => return false,
        }
    }
    urls.is_subset(&seen)
}

/// True if every crawl-log line with an HTTP status has its `response`
/// record in the run's WARC files, and every response record its line (a
/// robots.txt fetched again after a redirect has two of each).
fn log_agrees(run: &Path) -> bool {
    let mut logged = BTreeSet::new();
    let log = std::fs::read_to_string(run.join("crawl.log")).unwrap_or_default();
    for line in log.lines() {
        match common::crawllog::parse_line(line) {
            Ok(l) if matches!(l.status, common::crawllog::Status::Http(_)) => {
                logged.insert(l.url);
            }
            Ok(_) => {}
            Err(_) => return false,
        }
    }
    let mut stored = BTreeSet::new();
    for file in warc_files(run) {
        let Ok(r) = common::warc::WarcReader::open(&file, 1024) else {
            continue;
        };
        let mut r = r.resyncing();
        let mut rec = common::warc::WarcRecord::default();
        for _ in 0..1_000_000 {
            match r.read_next(&mut rec) {
                Ok(true) => {
                    if rec.record_type() == Some("response")
                        && let Some(u) = rec.target_uri()
                    {
                        stored.insert(u.to_string());
                    }
                }
                Ok(false) => break,
                Err(_) => {}
            }
        }
    }
    logged == stored
}

/// `segmenter run CRAWL`, bounded in time.
fn segment_round(crawl: &Path) -> Finished {
    bins::run_with_timeout(
        segmenter_cmd().arg("run").arg(crawl),
        Duration::from_secs(60),
    )
    .expect("cannot start the segmenter")
}

/// The oldest generation of the fetch history of `crawl` (its list's
/// first file).
fn first_generation(crawl: &Path) -> PathBuf {
    let list = std::fs::read_to_string(crawl.join("history.v5.list")).unwrap();
    let name = list.lines().nth(1).and_then(|l| l.split('\t').next());
    crawl.join(name.expect("a generation listed"))
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
    let mut files = vec![crawl.join("backlog.v5.tsv.zst")];
    for e in std::fs::read_dir(crawl.join("segments")).unwrap() {
        let path = e.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        if let Some(id) = common::crawldir::segment_id_of_file_name(&name)
            && !crawl.join("fetched").join(id).join("DONE").exists()
        {
            files.push(path);
        }
    }
    files.iter().flat_map(|f| read_urls(f)).collect()
}

/// True if the run's output or a warning of its log names the damaged file.
fn mentions(out: &Finished, crawl: &Path, rel: &Path) -> bool {
    let name = rel.file_name().unwrap().to_str().unwrap();
    if out.stderr.contains(name) || out.stdout.contains(name) {
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

/// The files added, removed or changed from `before` to `after`.
fn changed_files(
    before: &BTreeMap<PathBuf, Vec<u8>>,
    after: &BTreeMap<PathBuf, Vec<u8>>,
) -> Vec<String> {
    let mut paths: BTreeSet<&PathBuf> = before.keys().collect();
    paths.extend(after.keys());
    paths
        .into_iter()
        .filter(|p| before.get(*p) != after.get(*p))
        .map(|p| p.display().to_string())
        .collect()
}

/// Every file under `dir` with its contents, except the run logs, lock
/// files (a refused run still writes its log) and SQLite's shared-memory
/// index (`hosts.db-shm`, rebuilt by every reader, not data).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    files::snapshot(dir, |p| p.starts_with("logs") || files::is_lock_or_index(p))
}

fn render_table(table: &BTreeMap<String, BTreeMap<Verdict, Vec<String>>>) -> String {
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
