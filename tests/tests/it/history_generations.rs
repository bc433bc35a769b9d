//! The fetch history kept in generations (format version 5), end to end: a
//! crawl of the demo web to its end, whose history must read as one merge
//! of its generation files (a later file's line of a URL replacing the
//! earlier ones), whose rounds write only the entries they change, and a
//! crawl whose history is of version 4 (an earlier build's), which goes on
//! with every entry carried forward.

use crate::support;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;
use testkit::bins;
use testkit::demo::{Demo, DemoParams};

use support::{CrawlSettings, DemoCrawl};

fn small_demo() -> Demo {
    Demo::with_params(DemoParams {
        crawl_delay: 0.2,
        ..DemoParams::small(28)
    })
}

/// The generations the list at `list` names, with their entry counts
/// (none if there is no such file).
fn listed(list: &Path) -> Vec<(String, u64)> {
    if !list.exists() {
        return Vec::new();
    }
    let text = std::fs::read_to_string(list).unwrap_or_else(|e| panic!("{}: {e}", list.display()));
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("# history v5 generations"), "{text}");
    lines
        .take_while(|l| !l.starts_with("# end "))
        .map(|l| {
            let (name, n) = l.split_once('\t').expect("NAME TAB ENTRIES");
            (name.to_string(), n.parse().expect("a count"))
        })
        .collect()
}

/// URL -> line of the history of `crawl`, read as the merge of its
/// generation files done here (with `zstdcat`: a later file wins), after
/// checking that each file holds the entries its list says.
fn merged_by_hand(crawl: &Path) -> BTreeMap<String, String> {
    let mut merged = BTreeMap::new();
    for (name, entries) in listed(&crawl.join("history.v5.list")) {
        let text = support::zstdcat(&crawl.join(&name));
        let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(lines.len() as u64, entries, "{name}");
        assert!(text.starts_with("# history v5\n"), "{name}");
        for line in lines {
            let url = line.split('\t').nth(1).expect("a URL column");
            merged.insert(url.to_string(), line.to_string());
        }
    }
    merged
}

/// URL -> line of the history as the segmenter reads it, checking each
/// URL is there once.
fn as_read(crawl: &Path) -> BTreeMap<String, String> {
    let text = support::history_text(crawl);
    let mut read = BTreeMap::new();
    for line in text.lines() {
        let url = line.split('\t').nth(1).expect("a URL column");
        assert!(
            read.insert(url.to_string(), line.to_string()).is_none(),
            "{url} read twice"
        );
    }
    read
}

/// The generation files in `crawl`.
fn generation_files(crawl: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(crawl)
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().into_string().ok())
        .filter(|n| n.starts_with("history.v5.") && n.ends_with(".tsv.zst"))
        .collect();
    names.sort();
    names
}

#[test]
fn the_history_in_generations_reads_as_one_merge_and_rounds_write_what_they_change() {
    let c = DemoCrawl::start(
        "history-generations",
        &small_demo(),
        CrawlSettings::default(),
    );
    c.crawl_to_the_end();
    let read = as_read(&c.crawl);
    assert!(read.len() > 50, "{} URLs in the history", read.len());
    assert_eq!(read, merged_by_hand(&c.crawl));
    // Every file is named by the list or by the one kept before it.
    let mut names: Vec<String> = listed(&c.crawl.join("history.v5.list"))
        .into_iter()
        .chain(listed(&c.crawl.join("history.v5.list.prev")))
        .map(|(n, _)| n)
        .collect();
    names.sort();
    names.dedup();
    assert_eq!(generation_files(&c.crawl), names);
    assert!(!c.crawl.join("history.v4.tsv.zst").exists());

    // Each round wrote the entries it changed, not the whole history: the
    // last rounds, which fetch the few pages left, wrote far fewer than
    // the history holds.
    let mut rounds = 0;
    let mut small_rounds = 0;
    for path in support::segmenter_reports(&c.crawl.join("logs")) {
        let report: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        let (Some(h), Some(w)) = (
            report["history"].as_object(),
            report["history_written"].as_object(),
        ) else {
            continue;
        };
        let n = |k: &str| h[k].as_u64().unwrap();
        let changed = ["new", "unchanged", "changed", "failed", "gone", "moved"]
            .iter()
            .chain(&["robots", "gave_up", "due", "rescheduled"])
            .map(|k| n(k))
            .sum::<u64>();
        let written = w["entries"].as_u64().unwrap();
        assert!(
            written <= changed,
            "{}: {written} entries written, {changed} changed",
            path.display()
        );
        rounds += 1;
        let rewritten = written + w["compacted"].as_u64().unwrap();
        small_rounds += u64::from(rewritten * 2 < n("entries"));
    }
    assert!(rounds >= 3, "{rounds} rounds merged the history");
    assert!(
        small_rounds >= 1,
        "every round rewrote half the history or more"
    );
}

/// Writes `lines` (the history's, one per URL, in order) as a version 4
/// history file, as an earlier build wrote it.
fn write_v4(path: &Path, lines: &[&str]) {
    let mut text = String::from("# history v4\n");
    let mut body = String::new();
    for l in lines {
        body.push_str(l);
        body.push('\n');
    }
    let hash = xxhash_rust::xxh3::xxh3_64(body.as_bytes());
    text.push_str(&body);
    text.push_str(&format!("# end {} xxh3 {hash:016x}\n", lines.len()));
    let mut zstd = Command::new("zstd")
        .args(["-q", "-f", "-o"])
        .arg(path)
        .stdin(Stdio::piped())
        .spawn()
        .expect("the zstd command-line tool");
    zstd.stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    assert!(zstd.wait().unwrap().success());
}

#[test]
fn a_crawl_with_a_version_4_history_goes_on_with_every_entry_carried_forward() {
    let c = DemoCrawl::start(
        "history-v4-goes-on",
        &small_demo(),
        CrawlSettings::default(),
    );
    let out = c.run_crawl_sh(&["--rounds", "2"]);
    bins::assert_code(&out, 0, Some(&c.crawl));
    // The history as an earlier build left it: one version 4 file.
    let text = support::history_text(&c.crawl);
    let lines: Vec<&str> = text.lines().collect();
    assert!(!lines.is_empty());
    for name in generation_files(&c.crawl) {
        std::fs::remove_file(c.crawl.join(name)).unwrap();
    }
    for name in [
        "history.v5.list",
        "history.v5.list.prev",
        "history-summary.v1.json",
    ] {
        let _ = std::fs::remove_file(c.crawl.join(name));
    }
    write_v4(&c.crawl.join("history.v4.tsv.zst"), &lines);
    let status = support::status_json(&c.crawl);
    assert_eq!(status["history_urls"], lines.len() as u64, "read as it is");

    c.crawl_to_the_end();
    assert!(!c.crawl.join("history.v4.tsv.zst").exists());
    let read = as_read(&c.crawl);
    assert_eq!(read, merged_by_hand(&c.crawl));
    // Nothing was due again (the demo's intervals are days): every entry
    // of the version 4 file is carried forward as it was.
    for line in &lines {
        let url = line.split('\t').nth(1).unwrap();
        assert_eq!(read.get(url).map(String::as_str), Some(*line), "{url}");
    }
    assert!(read.len() > lines.len(), "the crawl went on");
    let status = support::status_json(&c.crawl);
    assert_eq!(status["history_urls"], read.len() as u64);
}

/// Runs `segmenter run CRAWL` until it pauses at `point`, and kills it
/// there (`kill -9`).
fn kill_at(crawl: &Path, scratch: &Path, point: &str) {
    let mut cmd = testkit::bins::segmenter_cmd();
    cmd.arg("run").arg(crawl).env("SEGMENTER_PAUSE_AT", point);
    let run = support::Background::start(cmd, scratch, &format!("killed-at-{point}"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let said = format!("paused at {point}");
    while !std::fs::read_to_string(&run.stderr)
        .unwrap_or_default()
        .contains(&said)
    {
        assert!(
            std::time::Instant::now() < deadline,
            "the round never reached {point}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    run.kill();
}

#[test]
fn killed_at_any_point_of_its_commit_a_round_leaves_a_history_that_reads() {
    let c = DemoCrawl::start("history-kill", &small_demo(), CrawlSettings::default());
    let out = c.run_crawl_sh(&["--rounds", "2"]);
    bins::assert_code(&out, 0, Some(&c.crawl));
    // A fetched run waiting for its round.
    let status = support::status_json(&c.crawl);
    let next = status["next"].as_str().expect("a segment to fetch");
    let fetched = bins::run(
        testkit::bins::fetcher_cmd()
            .args(["fetch".as_ref(), c.crawl.as_os_str(), next.as_ref()])
            .args(["--progress", "none"]),
        &c.crawl,
    );
    bins::assert_code(&fetched, 0, Some(&c.crawl));
    let base = c.scratch.path().join("base");
    testkit::files::copy_tree(&c.crawl, &base);

    // The round uninterrupted.
    let reference = c.scratch.path().join("reference");
    testkit::files::copy_tree(&base, &reference);
    let run = bins::run(
        testkit::bins::segmenter_cmd().arg("run").arg(&reference),
        &reference,
    );
    bins::assert_code(&run, 0, Some(&reference));
    let expected = as_read(&reference);
    assert!(expected.len() > as_read(&base).len());

    for point in [
        "history",
        "staged",
        "marked",
        "moving",
        "generations",
        "prev",
        "moved",
    ] {
        let case = c.scratch.path().join(format!("case-{point}"));
        testkit::files::copy_tree(&base, &case);
        kill_at(&case, c.scratch.path(), point);
        // Before anything recovers it, the history in place reads whole:
        // the one before the round, or the round's.
        let read = as_read(&case);
        assert_eq!(read, merged_by_hand(&case), "killed at {point}");
        assert!(
            read == as_read(&base) || read == expected,
            "killed at {point}: the history is neither the one before the round nor the \
             round's"
        );
        // The next run finishes the round, or does it again.
        let run = bins::run(testkit::bins::segmenter_cmd().arg("run").arg(&case), &case);
        bins::assert_code(&run, 0, Some(&case));
        assert_eq!(as_read(&case), expected, "killed at {point}, then run");
        assert_eq!(as_read(&case), merged_by_hand(&case));
        let mut names: Vec<String> = listed(&case.join("history.v5.list"))
            .into_iter()
            .chain(listed(&case.join("history.v5.list.prev")))
            .map(|(n, _)| n)
            .collect();
        names.sort();
        names.dedup();
        assert_eq!(generation_files(&case), names, "killed at {point}");
    }
}
