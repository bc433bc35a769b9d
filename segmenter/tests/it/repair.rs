//! `segmenter repair`: a sound crawl is reported sound; damaged state files
//! are each named, nothing is changed without `--accept-loss`, and with it
//! each is replaced (its `.prev`, what still decodes, an empty state, or
//! for `seen.bloom` a filter rebuilt from the exact sets), the damaged file
//! kept, and the next round runs.

use crate::support;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use support::*;
use testkit::bins::{self, Finished};

/// A crawl after two rounds: every state file there, and a `.prev` of each
/// that a round replaces; a segment waiting; a hosts.db.
fn prepare(tag: &str) -> TempCrawl {
    let crawl = TempCrawl::new(tag);
    inject(&crawl, "http://a.test/\nhttp://b.test/\n", &[]);
    let links: Vec<String> = (0..40)
        .map(|i| format!("http://{}.test/p{i}", if i % 2 == 0 { "a" } else { "b" }))
        .collect();
    let refs: Vec<&str> = links.iter().map(String::as_str).collect();
    write_done(
        &crawl,
        "00001",
        &[Page::html("http://a.test/", 0, &refs[..20])],
    );
    run_round(&crawl, &["--max-per-host", "3"]);
    write_done(
        &crawl,
        "00002",
        &[Page::html("http://b.test/p1", 1, &refs[20..])],
    );
    run_round(&crawl, &["--max-per-host", "3"]);
    drop(common::hoststate::HostDb::open(crawl.dir.hosts_db_path()).unwrap());
    crawl
}

fn repair(crawl: &TempCrawl, accept_loss: bool) -> Finished {
    let root = crawl.root().to_str().unwrap();
    let mut args = vec!["repair", root];
    if accept_loss {
        args.push("--accept-loss");
    }
    bins::run_with_timeout(
        &mut segmenter_cmd(&args),
        std::time::Duration::from_secs(60),
    )
    .unwrap()
}

/// Every file of the crawl but the lock files, SQLite's shared-memory
/// index and an empty write-ahead log, with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = testkit::files::snapshot(dir, testkit::files::is_lock_or_index);
    // An empty write-ahead log (SQLite makes one for a reader) holds no data.
    files.retain(|p, bytes| !(p.to_string_lossy().ends_with("-wal") && bytes.is_empty()));
    files
        .into_iter()
        .map(|(rel, bytes)| (dir.join(rel), bytes))
        .collect()
}

/// The files of `dir` added, removed or changed since `before`.
fn changed(before: &BTreeMap<PathBuf, Vec<u8>>, dir: &Path) -> Vec<String> {
    let now = snapshot(dir);
    let mut out: Vec<String> = now
        .iter()
        .filter(|(p, b)| before.get(*p) != Some(*b))
        .map(|(p, _)| p.display().to_string())
        .collect();
    out.extend(
        before
            .keys()
            .filter(|p| !now.contains_key(*p))
            .map(|p| format!("{} (removed)", p.display())),
    );
    out
}

/// The report line of `path`.
fn line_of<'a>(out: &'a Finished, path: &Path) -> &'a str {
    let prefix = format!("{}: ", path.display());
    out.stdout
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no line for {}:\n{}", path.display(), out.stdout))
}

fn prev(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_os_string();
    p.push(".prev");
    PathBuf::from(p)
}

fn damaged(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_os_string();
    p.push(".damaged");
    PathBuf::from(p)
}

#[test]
fn a_sound_crawl_is_reported_sound_and_left_alone() {
    let crawl = prepare("repair-sound");
    let before = snapshot(crawl.root());
    let out = repair(&crawl, false);
    bins::assert_code(&out, 0, Some(crawl.root()));
    let d = &crawl.dir;
    for path in [
        d.scope_seeds_path(),
        d.consumed_path(),
        d.backlog_path(),
        d.bloom_path(),
        d.hosts_db_path(),
        d.root().join(HISTORY_LIST),
        d.segment_path("00003"),
    ] {
        assert!(line_of(&out, &path).contains(": sound"), "{}", out.stdout);
    }
    assert!(out.stdout.contains("every state file is sound"));
    let out = repair(&crawl, true);
    bins::assert_code(&out, 0, Some(crawl.root()));
    assert_eq!(
        changed(&before, crawl.root()),
        [""; 0],
        "a sound crawl was changed"
    );
}

#[test]
fn damaged_files_are_named_and_replaced_only_with_accept_loss() {
    let crawl = prepare("repair-damaged");
    let d = &crawl.dir;
    let (consumed, backlog, bloom, hosts) = (
        d.consumed_path(),
        d.backlog_path(),
        d.bloom_path(),
        d.hosts_db_path(),
    );
    let segment = d.segment_path("00003");
    let history = d.root().join(HISTORY_LIST);
    for p in [&consumed, &backlog, &history] {
        assert!(prev(p).is_file(), "no {}", prev(p).display());
    }
    let segment_urls = urls(&read_records(&segment));
    // Cut, flipped, emptied, another file.
    let cut = |p: &Path| {
        let b = fs::read(p).unwrap();
        fs::write(p, &b[..b.len() / 2]).unwrap();
    };
    cut(&consumed);
    let mut b = fs::read(&backlog).unwrap();
    let mid = b.len() / 2;
    b[mid] ^= 0x5a;
    fs::write(&backlog, b).unwrap();
    fs::write(&bloom, b"").unwrap();
    fs::write(&hosts, fs::read(&consumed).unwrap()).unwrap();
    cut(&segment);
    cut(&history);

    let before = snapshot(crawl.root());
    let out = repair(&crawl, false);
    bins::assert_code(&out, 1, Some(crawl.root()));
    for p in [&consumed, &backlog, &bloom, &hosts, &segment, &history] {
        assert!(line_of(&out, p).contains("DAMAGED"), "{}", out.stdout);
    }
    assert!(line_of(&out, &d.scope_seeds_path()).contains(": sound"));
    assert!(out.stdout.contains("nothing was changed"), "{}", out.stdout);
    assert_eq!(
        changed(&before, crawl.root()),
        [""; 0],
        "changed without --accept-loss"
    );

    let out = repair(&crawl, true);
    bins::assert_code(&out, 0, Some(crawl.root()));
    let report = &out.stdout;
    // The .prev generations are restored, and the losses named.
    for p in [&consumed, &backlog, &history] {
        assert_eq!(fs::read(p).unwrap(), fs::read(prev(p)).unwrap());
        let damaged_copy = fs::read(damaged(p)).unwrap();
        assert_eq!(&damaged_copy, &before[p], "the damaged file is kept");
        assert!(
            report.contains(&format!("{}: repaired: restored from", p.display())),
            "{report}"
        );
    }
    assert!(report.contains("lost: "), "{report}");
    // The filter is rebuilt from the exact sets, once they are repaired:
    // it holds every URL of the history, the backlog and the segment
    // waiting.
    assert_eq!(fs::read(damaged(&bloom)).unwrap(), b"");
    assert!(
        report.contains(&format!(
            "{}: repaired: rebuilt from the exact sets",
            bloom.display()
        )),
        "{report}"
    );
    assert_rebuilt(&crawl);
    // hosts.db is moved away: the politeness state is lost.
    assert!(!hosts.exists() && damaged(&hosts).is_file());
    assert!(report.contains("politeness state"), "{report}");
    // The segment keeps what decodes.
    let kept = urls(&read_records(&segment));
    assert!(kept.iter().all(|u| segment_urls.contains(u)));
    assert!(kept.len() < segment_urls.len());
    assert!(
        line_of(&out, &segment).contains("DAMAGED")
            && report.contains(&format!(
                "{}: repaired: kept the {}",
                segment.display(),
                kept.len()
            )),
        "{report}"
    );

    // Sound again, and the next round runs on it.
    let out = repair(&crawl, false);
    bins::assert_code(&out, 0, Some(crawl.root()));
    mark_fetched_empty(&crawl, "00003");
    run_round(&crawl, &["--max-per-host", "3"]);
}

/// Checks that `seen.bloom` holds every URL of the exact sets (history,
/// backlog, the segments whose run consumed.txt does not list), and
/// nothing else.
fn assert_rebuilt(crawl: &TempCrawl) {
    let d = &crawl.dir;
    let consumed = list_entries(&d.consumed_path());
    let mut known: std::collections::BTreeSet<String> =
        urls(&read_records(&d.backlog_path())).into_iter().collect();
    for id in d.segment_ids().unwrap() {
        if !consumed.lines().any(|l| l == id) {
            known.extend(urls(&read_records(&d.segment_path(&id))));
        }
    }
    known.extend(
        history_text(d.root())
            .lines()
            .map(|l| l.split('\t').nth(1).unwrap().to_string()),
    );
    assert!(known.len() > 10, "{known:?}");
    let filter = common::bloom::BloomFilter::open_read_only(d.bloom_path()).unwrap();
    for u in &known {
        assert!(filter.contains(u.as_bytes()), "{u} missing");
    }
    assert_eq!(filter.items(), known.len() as u64, "{known:?}");
}

#[test]
fn a_changed_bit_in_the_filter_is_found_and_the_filter_rebuilt() {
    let crawl = prepare("repair-bloom-bit");
    let bloom = crawl.dir.bloom_path();
    let before = fs::read(&bloom).unwrap();
    // A bit cleared in the array: a URL scheduled would be new again.
    let mut b = before.clone();
    let set = (64..b.len()).find(|&i| b[i] != 0).unwrap();
    b[set] &= b[set] - 1;
    fs::write(&bloom, &b).unwrap();
    mark_fetched_empty(&crawl, "00003");
    let root = crawl.root().to_str().unwrap();
    let out = bins::run_with_timeout(
        &mut segmenter_cmd(&["run", root]),
        std::time::Duration::from_secs(60),
    )
    .unwrap();
    bins::assert_code(&out, 1, Some(crawl.root()));
    assert!(
        out.stderr.contains("bits were changed") && out.stderr.contains("segmenter repair"),
        "{}",
        out.stderr
    );
    let out = repair(&crawl, false);
    bins::assert_code(&out, 1, Some(crawl.root()));
    assert!(
        line_of(&out, &bloom).contains("bits were changed"),
        "{}",
        out.stdout
    );
    let out = repair(&crawl, true);
    bins::assert_code(&out, 0, Some(crawl.root()));
    // No history file was damaged: nothing is said of one.
    assert!(
        out.stdout
            .contains("1 damaged file(s) repaired; each damaged file was kept as NAME.damaged\n"),
        "{}",
        out.stdout
    );
    assert_eq!(fs::read(damaged(&bloom)).unwrap(), b);
    assert_rebuilt(&crawl);
    assert!(
        repair(&crawl, false)
            .stdout
            .contains("every state file is sound")
    );
}

#[test]
fn what_has_no_sound_previous_generation_is_rebuilt_or_left_to_the_user() {
    let crawl = prepare("repair-no-prev");
    let d = &crawl.dir;
    let (consumed, scope) = (d.consumed_path(), d.scope_seeds_path());
    // No previous generation to restore from.
    fs::remove_file(prev(&consumed)).unwrap();
    let _ = fs::remove_file(prev(&scope));
    fs::write(&consumed, b"").unwrap();
    let scope_text = fs::read(&scope).unwrap();
    fs::write(&scope, [scope_text.as_slice(), b"garbage\n"].concat()).unwrap();

    let out = repair(&crawl, true);
    bins::assert_code(&out, 1, Some(crawl.root()));
    let report = &out.stdout;
    // consumed.txt: reset to an empty list, every fetched run read again.
    let entries = list_entries(&consumed);
    assert_eq!(entries, "", "{report}");
    assert!(
        line_of(&out, &consumed).contains("DAMAGED")
            && report.contains("complete fetched runs are all read again"),
        "{report}"
    );
    // scope.seeds: only the user knows the seeds; left as it was.
    assert!(
        report.contains(&format!("{}: NOT repaired", scope.display())),
        "{report}"
    );
    assert_eq!(
        fs::read(&scope).unwrap(),
        [scope_text.as_slice(), b"garbage\n"].concat()
    );
}

#[test]
fn accept_loss_waits_for_an_interrupted_round_to_be_finished() {
    let crawl = prepare("repair-staging");
    let consumed = crawl.dir.consumed_path();
    fs::write(&consumed, b"").unwrap();
    fs::create_dir_all(crawl.root().join(".segmenter-staging")).unwrap();
    let before = snapshot(crawl.root());
    let out = repair(&crawl, true);
    bins::assert_code(&out, 2, Some(crawl.root()));
    assert!(
        out.stderr.contains(".segmenter-staging") && out.stderr.contains("segmenter run"),
        "{}",
        out.stderr
    );
    assert_eq!(changed(&before, crawl.root()), [""; 0]);
    // Checking alone still reports.
    let out = repair(&crawl, false);
    bins::assert_code(&out, 1, Some(crawl.root()));
    assert!(line_of(&out, &consumed).contains("DAMAGED"));
}
