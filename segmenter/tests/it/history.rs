//! The fetch history (`history.v5.list` and its generations): what each
//! round records from
//! the fetched runs it consumes, how the refetch interval adapts, which URLs
//! are retired, and that a damaged history is refused.

use crate::support;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use support::*;
use testkit::bins;

const FLAGS: [&str; 8] = [
    "--recrawl-interval",
    "1000s",
    "--recrawl-min",
    "10s",
    "--recrawl-max",
    "10000s",
    "--recrawl-gone-after",
    "2",
];

/// The history's entries by URL (its generations merged, as `segmenter
/// inspect --entries` prints them): the columns by name.
fn history(crawl: &TempCrawl) -> BTreeMap<String, BTreeMap<&'static str, String>> {
    let text = history_text(crawl.root());
    let names = [
        "host",
        "url",
        "hops",
        "fetched",
        "status",
        "interval",
        "changes",
        "strikes",
        "due",
        "state",
        "digest",
        "etag",
        "last_modified",
        "record_id",
        "record_date",
        "canonical",
    ];
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split('\t').collect();
        assert_eq!(fields.len(), names.len(), "{line}");
        let entry: BTreeMap<&'static str, String> = names
            .iter()
            .zip(&fields)
            .map(|(n, f)| (*n, f.to_string()))
            .collect();
        out.insert(fields[1].to_string(), entry);
    }
    out
}

fn page(url: &str, body: &str, etag: &str) -> Page {
    let mut p = Page::html(url, 1, &[]);
    p.body = body.as_bytes().to_vec();
    p.headers = vec![
        ("ETag".into(), etag.into()),
        (
            "Last-Modified".into(),
            "Tue, 24 Nov 2026 10:00:00 GMT".into(),
        ),
    ];
    p
}

fn status(url: &str, code: u16) -> Page {
    let mut p = Page::html(url, 1, &[]);
    p.status = code;
    p
}

/// A crawl whose seed is `http://a.test/`.
fn seeded(name: &str) -> TempCrawl {
    let crawl = TempCrawl::new(name);
    inject(&crawl, "http://a.test/\n", &[]);
    crawl
}

/// Run `id` done, its `pages` fetched at `at` (WARC files of up to 1 MiB).
fn fetched(crawl: &TempCrawl, id: &str, pages: &[Page], at: SystemTime) {
    write_fetched_at(crawl, id, pages, 1 << 20, true, at);
}

fn ago(secs: u64) -> SystemTime {
    SystemTime::now() - Duration::from_secs(secs)
}

fn field<'a>(
    h: &'a BTreeMap<String, BTreeMap<&'static str, String>>,
    url: &str,
    name: &str,
) -> &'a str {
    &h.get(url)
        .unwrap_or_else(|| panic!("{url} not in the history: {h:?}"))[name]
}

#[test]
fn each_fetch_is_recorded_and_the_interval_adapts() {
    let crawl = seeded("history-adapt");
    let first = [
        page("http://a.test/", "<p>one</p>", "\"v1\""),
        page("http://a.test/same", "<p>same</p>", "\"s\""),
        status("http://a.test/old", 404),
        Page::redirect("http://a.test/moved", 1, "/new"),
    ];
    fetched(&crawl, "00001", &first, ago(300));
    let report = run_round(&crawl, &FLAGS);
    assert_eq!(figure(&report, "fetched new:"), 4, "{report}");
    let h = history(&crawl);
    assert_eq!(h.len(), 4, "{h:?}");
    assert_eq!(field(&h, "http://a.test/", "etag"), "\"v1\"");
    assert_eq!(
        field(&h, "http://a.test/", "last_modified"),
        "Tue, 24 Nov 2026 10:00:00 GMT"
    );
    assert!(field(&h, "http://a.test/", "digest").starts_with("sha1:"));
    assert_eq!(field(&h, "http://a.test/", "interval"), "1000");
    assert_eq!(field(&h, "http://a.test/", "state"), "active");
    assert_eq!(field(&h, "http://a.test/old", "strikes"), "1");
    assert_eq!(field(&h, "http://a.test/old", "state"), "active");
    assert_eq!(field(&h, "http://a.test/moved", "state"), "moved");
    assert_eq!(field(&h, "http://a.test/moved", "status"), "301");
    assert_eq!(figure(&report, "retired:"), 1, "{report}");

    // The next run: one page changed, one did not, the 404 again.
    let second = [
        page("http://a.test/", "<p>two</p>", "\"v2\""),
        page("http://a.test/same", "<p>same</p>", "\"s\""),
        status("http://a.test/old", 410),
    ];
    let second_time = ago(200);
    fetched(&crawl, "00002", &second, second_time);
    let report = run_round(&crawl, &FLAGS);
    assert_eq!(figure(&report, "refetched changed:"), 1, "{report}");
    assert_eq!(figure(&report, "refetched unchanged:"), 1, "{report}");
    assert_eq!(figure(&report, "retired:"), 1, "{report}");
    let h = history(&crawl);
    assert_eq!(
        field(&h, "http://a.test/", "interval"),
        "500",
        "halved: it changed"
    );
    assert_eq!(field(&h, "http://a.test/", "changes"), "1");
    assert_eq!(field(&h, "http://a.test/", "etag"), "\"v2\"");
    assert_eq!(
        field(&h, "http://a.test/same", "interval"),
        "1500",
        "grown by half"
    );
    assert_eq!(field(&h, "http://a.test/same", "changes"), "0");
    assert_eq!(field(&h, "http://a.test/old", "state"), "gone");
    assert_eq!(field(&h, "http://a.test/old", "status"), "410");
    // The history of the round before is kept for repair.
    assert!(crawl.root().join("history.v5.list.prev").is_file());

    // `segmenter inspect` tells the states and when URLs are due.
    let path = crawl.root().join(HISTORY_LIST);
    let out = bins::run(
        &mut segmenter_cmd(&["inspect", path.to_str().unwrap()]),
        crawl.root(),
    )
    .stdout;
    assert!(out.contains("urls:      4 on 1 hosts"), "{out}");
    assert!(
        out.contains("retired:   2 (gone 1, moved 1, robots 0)"),
        "{out}"
    );
    assert!(out.contains("due:       now 0, within 1h 2,"), "{out}");

    // The same run read again (a second copy under another ID) changes nothing.
    let before = history(&crawl);
    fetched(&crawl, "00003", &second, second_time);
    let report = run_round(&crawl, &FLAGS);
    assert_eq!(figure(&report, "refetched changed:"), 0, "{report}");
    assert_eq!(history(&crawl), before);
}

fn files(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    testkit::files::snapshot(root, |p| {
        p.parent() != Some(Path::new("")) || p == Path::new(".segmenter.lock")
    })
}

/// A crawl after two rounds: the first fetched `n` pages (`http://a.test/pI`),
/// the second fetched the first `changed` again, which makes a small
/// generation of its own beside the first one. Returns the pages too.
fn two_generations(name: &str, n: usize, changed: usize) -> (TempCrawl, Vec<Page>) {
    let crawl = seeded(name);
    let pages: Vec<Page> = (0..n)
        .map(|i| {
            page(
                &format!("http://a.test/p{i}"),
                &format!("<p>{i}</p>"),
                "\"x\"",
            )
        })
        .collect();
    fetched(&crawl, "00001", &pages, ago(100));
    run_round(&crawl, &FLAGS);
    fetched(&crawl, "00002", &pages[..changed], ago(50));
    run_round(&crawl, &FLAGS);
    (crawl, pages)
}

#[test]
fn a_damaged_history_is_refused_and_nothing_changes() {
    let (crawl, pages) = two_generations("history-damage", 50, 5);
    let names = history_generations(&crawl.root().join(HISTORY_LIST));
    assert_eq!(names.len(), 2, "{names:?}");
    let first = crawl.root().join(&names[0]);
    fetched(&crawl, "00003", &pages[..5], ago(20));
    let whole = fs::read(&first).unwrap();
    // Cut: the zstd frame ends early. Replaced: a valid stream, one line lost.
    let text = zstd::decode_all(&whole[..]).unwrap();
    let text = String::from_utf8(text).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.remove(7);
    let short = zstd::encode_all((lines.join("\n") + "\n").as_bytes(), 3).unwrap();
    // Another generation's file in place of the second: sound in itself,
    // not what the list names.
    let second = crawl.root().join(&names[1]);
    let second_whole = fs::read(&second).unwrap();
    let root = crawl.root().to_str().unwrap().to_string();
    for (what, path, damaged) in [
        ("cut", &first, whole[..whole.len() / 2].to_vec()),
        ("line lost", &first, short),
        ("another generation", &second, whole.clone()),
    ] {
        fs::write(path, &damaged).unwrap();
        let before = files(crawl.root());
        let mut args = vec!["run", root.as_str()];
        args.extend_from_slice(&FLAGS);
        let out = bins::run_expecting(&mut segmenter_cmd(&args), crawl.root(), 1);
        let name = path.file_name().unwrap().to_str().unwrap();
        assert!(
            out.stderr.contains(name)
                && out
                    .stderr
                    .contains("Repair: `segmenter repair CRAWL --accept-loss` always"),
            "{what}: {}",
            out.stderr
        );
        assert_eq!(files(crawl.root()), before, "{what}: nothing changed");
        let out = bins::run_expecting(
            &mut segmenter_cmd(&["repair", root.as_str()]),
            crawl.root(),
            1,
        );
        assert!(
            out.stdout.contains("DAMAGED") && out.stdout.contains(name),
            "{what}: {}",
            out.stdout
        );
        fs::write(&first, &whole).unwrap();
        fs::write(&second, &second_whole).unwrap();
    }
    // Put back whole, the round goes on.
    let report = run_round(&crawl, &FLAGS);
    assert_eq!(figure(&report, "refetched unchanged:"), 5, "{report}");
}

#[test]
fn a_damaged_generation_both_lists_name_is_salvaged_from_the_others_and_the_runs() {
    let (crawl, _) = two_generations("history-salvage", 30, 3);
    let before = history(&crawl);
    // The second run deleted since: only the kept generation knows its
    // fetches.
    fs::remove_dir_all(crawl.dir.fetched_dir("00002")).unwrap();
    // The first generation is named by the list and by its .prev: cut, it
    // leaves no sound list to restore.
    let names = history_generations(&crawl.root().join(HISTORY_LIST));
    assert_eq!(names.len(), 2, "{names:?}");
    let first = crawl.root().join(&names[0]);
    let whole = fs::read(&first).unwrap();
    fs::write(&first, &whole[..whole.len() / 2]).unwrap();
    let root = crawl.root().to_str().unwrap().to_string();
    let repair = ["repair", root.as_str(), "--accept-loss"];
    let list = crawl.root().join(HISTORY_LIST);
    let listed = fs::read(&list).unwrap();
    let unchanged = |out: &bins::Finished| {
        assert_eq!(fs::read(&list).unwrap(), listed, "{}", out.stderr);
        assert!(!crawl.root().join("history.v5.list.damaged").exists());
    };
    // A generation that cannot be read (an I/O error, here a directory in
    // its place) is not known to be damaged: the repair stops, naming it,
    // and changes nothing.
    let second = crawl.root().join(&names[1]);
    let saved = crawl.root().join("second.saved");
    fs::rename(&second, &saved).unwrap();
    fs::create_dir(&second).unwrap();
    let out = bins::run_expecting(&mut segmenter_cmd(&repair), crawl.root(), 1);
    assert!(
        out.stderr.contains(&second.display().to_string())
            && out.stderr.contains("nothing was changed"),
        "{}",
        out.stderr
    );
    unchanged(&out);
    assert!(!crawl.root().join("history.v5.rebuild").exists());
    fs::remove_dir(&second).unwrap();
    fs::rename(&saved, &second).unwrap();
    // A step that fails after the check (the mark cannot be written: a
    // directory holds its name) leaves the damaged list in place: running
    // the repair again still finds it.
    let mark = crawl.root().join("history.v5.rebuild");
    fs::create_dir(&mark).unwrap();
    fs::write(mark.join("x"), b"x").unwrap();
    let out = bins::run_expecting(&mut segmenter_cmd(&repair), crawl.root(), 1);
    unchanged(&out);
    fs::remove_dir_all(&mark).unwrap();
    let out = bins::run(&mut segmenter_cmd(&repair), crawl.root());
    assert!(
        out.stdout
            .contains("rebuilt from the 1 of its 2 generations")
            && out
                .stdout
                .contains(&format!("lost: 30 entries of {}", first.display())),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("(a damaged history generation under its own name"),
        "{}",
        out.stdout
    );
    assert_eq!(
        history_generations(&crawl.root().join(HISTORY_LIST)),
        [names[1].clone()]
    );
    // The next round reads the consumed runs under what was kept: every
    // URL has its entry again, the newer ones of the kept generation won.
    let new = page("http://a.test/new", "<p>n</p>", "\"n\"");
    fetched(&crawl, "00003", &[new], ago(10));
    run_round(&crawl, &FLAGS);
    let after = history(&crawl);
    assert_eq!(after.len(), before.len() + 1);
    for (url, e) in &before {
        for column in ["fetched", "status", "digest", "record_id", "interval"] {
            assert_eq!(after[url][column], e[column], "{url} {column}");
        }
    }
    assert!(!crawl.root().join("history.v5.rebuild").exists());
}

#[test]
fn due_urls_go_into_the_next_segment_with_their_validators() {
    let crawl = seeded("history-due");
    let flags = [
        "--recrawl-interval",
        "60s",
        "--recrawl-min",
        "10s",
        "--recrawl-max",
        "1000s",
    ];
    let pages = [
        page("http://a.test/", "<p>home</p>", "\"v1\""),
        page("http://a.test/later", "<p>later</p>", "\"l\""),
    ];
    // Fetched 100 s ago with a 60 s interval: due now.
    fetched(&crawl, "00001", &pages[..1], ago(100));
    // Fetched 10 s ago: due in 50 s.
    fetched(&crawl, "00001b", &pages[1..], ago(10));
    let report = run_round(&crawl, &flags);
    assert_eq!(figure(&report, "due in:"), 1, "{report}");
    assert_eq!(figure(&report, "refetches scheduled:"), 1, "{report}");
    let segs = segments(&crawl);
    let seg = &segs["00002"];
    assert_eq!(seg.len(), 1, "{seg:?}");
    assert_eq!(seg[0].url, "http://a.test/");
    assert_eq!(seg[0].via, common::segment::Via::Recrawl);
    assert_eq!(seg[0].etag, "\"v1\"");
    assert_eq!(seg[0].last_modified, "Tue, 24 Nov 2026 10:00:00 GMT");
    // Scheduled: due again one interval from now, not at the next round.
    let h = history(&crawl);
    let due = common::timefmt::parse_iso(field(&h, "http://a.test/", "due")).unwrap();
    assert!(due > SystemTime::now() + Duration::from_secs(30), "{h:?}");
    mark_fetched_empty(&crawl, "00002");
    let report = run_round(&crawl, &flags);
    assert_eq!(figure(&report, "due in:"), 0, "{report}");
    assert!(!crawl.dir.segment_path("00003").exists());
}

#[test]
fn with_nothing_new_a_round_still_serves_due_urls() {
    let crawl = seeded("history-nothing-new");
    let flags = ["--recrawl-interval", "2s", "--recrawl-min", "1s"];
    fetched(
        &crawl,
        "00001",
        &[page("http://a.test/", "<p>home</p>", "\"v1\"")],
        SystemTime::now(),
    );
    let report = run_round(&crawl, &flags);
    assert_eq!(figure(&report, "due in:"), 0, "{report}");
    assert!(
        !crawl.dir.segment_path("00002").exists(),
        "the page has no links"
    );
    // Nothing new, nothing waiting: the run says so and writes nothing...
    let log = run_round(&crawl, &flags);
    assert!(log.contains("no URL is due"), "{log}");
    // ...until the page is due (2 s after its fetch).
    std::thread::sleep(Duration::from_millis(2100));
    let report = run_round(&crawl, &flags);
    assert_eq!(figure(&report, "refetches scheduled:"), 1, "{report}");
}

#[test]
fn urls_robots_txt_denies_are_retired_from_the_crawl_log() {
    use common::crawllog::{ErrorCode, LogLine, Status, format_line};
    let crawl = seeded("history-robots");
    fetched(
        &crawl,
        "00001",
        &[page("http://a.test/", "<p>home</p>", "\"v1\"")],
        ago(100),
    );
    let mut text = String::new();
    for url in ["http://a.test/private/1", "http://a.test/private/2"] {
        format_line(
            &LogLine {
                time: ago(90),
                status: Status::Error(ErrorCode::Robots),
                bytes: 0,
                duration_ms: 0,
                content_type: String::new(),
                url: url.into(),
                via: common::segment::Via::Link,
                hops: 1,
                note: String::new(),
            },
            &mut text,
        );
    }
    fs::write(crawl.dir.fetched_dir("00001").join("crawl.log"), text).unwrap();
    let report = run_round(&crawl, &FLAGS);
    assert_eq!(figure(&report, "fetched new:"), 1, "{report}");
    assert_eq!(figure(&report, "retired:"), 2, "{report}");
    assert!(report.contains("robots 2)"), "{report}");
    let h = history(&crawl);
    assert_eq!(field(&h, "http://a.test/private/1", "state"), "robots");
    assert_eq!(field(&h, "http://a.test/private/2", "status"), "robots");
}

#[test]
fn a_crawl_from_before_the_history_gains_one_without_a_refetch_storm() {
    let crawl = seeded("history-upgrade");
    let old: Vec<Page> = (0..20)
        .map(|i| {
            let body = format!("<a href=/linked{i}>a link</a>");
            page(&format!("http://a.test/old{i}"), &body, "\"o\"")
        })
        .collect();
    // Fetched long ago: without spreading, every page would be due at once.
    fetched(&crawl, "00001", &old, ago(50_000));
    run_round(&crawl, &FLAGS);
    // As a crawl made before the history: consumed runs, no history.
    remove_history(&crawl);
    fetched(
        &crawl,
        "00002",
        &[page("http://a.test/new", "<p>new</p>", "\"n\"")],
        ago(10),
    );
    let report = run_round(&crawl, &FLAGS);
    assert_eq!(figure(&report, "due in:"), 0, "{report}");
    let h = history(&crawl);
    assert_eq!(h.len(), 21, "{h:?}");
    let now = SystemTime::now();
    let dues: Vec<SystemTime> = (0..20)
        .map(|i| {
            common::timefmt::parse_iso(field(&h, &format!("http://a.test/old{i}"), "due")).unwrap()
        })
        .collect();
    // Spread over the next interval (1000 s), not all at once.
    assert!(
        dues.iter()
            .all(|d| *d > now - Duration::from_secs(5) && *d < now + Duration::from_secs(1000)),
        "{dues:?}"
    );
    let mut distinct = dues.clone();
    distinct.sort();
    distinct.dedup();
    assert!(distinct.len() > 15, "{dues:?}");
    // No link was taken from the old run again (they would be dupes now).
    assert_eq!(figure(&report, "dupes:"), 0, "{report}");
    assert_eq!(figure(&report, "links found:"), 0, "{report}");
}

#[test]
fn a_refetch_waiting_in_the_backlog_is_not_handed_out_twice() {
    // The pages were scheduled (they are seeds) before they were fetched.
    let crawl = TempCrawl::new("history-once");
    inject(
        &crawl,
        "http://a.test/p0\nhttp://a.test/p1\nhttp://a.test/p2\n",
        &[],
    );
    let flags = [
        "--recrawl-interval",
        "1s",
        "--recrawl-min",
        "1s",
        "--max-per-host",
        "1",
    ];
    let pages: Vec<Page> = (0..3)
        .map(|i| page(&format!("http://a.test/p{i}"), "<p>p</p>", "\"p\""))
        .collect();
    fetched(&crawl, "00001", &pages, ago(100));
    // All three due: one to the segment, two wait in the backlog.
    let report = run_round(&crawl, &flags);
    assert_eq!(figure(&report, "refetches scheduled:"), 1, "{report}");
    assert_eq!(backlog(&crawl).len(), 2);
    // A refetch waits with the record its revisit would name.
    let h = history(&crawl);
    let names_its_response = |r: &common::segment::SegmentRecord| {
        r.record_id.starts_with("<urn:uuid:")
            && r.record_id == field(&h, &r.url, "record_id")
            && r.fetched
                .map(|ms| common::timefmt::iso_millis(common::timefmt::from_unix_millis(ms)))
                == Some(field(&h, &r.url, "record_date").to_string())
    };
    for r in backlog(&crawl) {
        assert!(names_its_response(&r), "{r:?} {h:?}");
    }
    mark_fetched_empty(&crawl, "00002");
    // Due again while two of them still wait.
    std::thread::sleep(Duration::from_millis(1100));
    let report = run_round(&crawl, &flags);
    // The history hands all three out again; the two that wait in the
    // backlog keep their waiting copy, their new one is dropped.
    assert_eq!(figure(&report, "due in:"), 3, "{report}");
    let json = newest_json_report(&crawl);
    assert_eq!(json["counts"]["waiting_copies"], 2, "{json}");
    let waiting_recs = backlog(&crawl);
    let segments = segments(&crawl);
    let later: Vec<_> = segments
        .iter()
        .filter(|(id, _)| id.as_str() > "00002")
        .flat_map(|(_, recs)| recs.iter().cloned())
        .collect();
    for r in waiting_recs.iter().chain(&later) {
        assert!(names_its_response(r), "backlog and due: {r:?}");
    }
    let mut waiting = urls(&waiting_recs);
    let scheduled = urls(&later);
    waiting.extend(scheduled);
    waiting.sort();
    assert_eq!(
        waiting,
        ["http://a.test/p0", "http://a.test/p1", "http://a.test/p2"],
        "each URL once"
    );
}

#[test]
fn a_refetch_waiting_in_a_segment_not_yet_fetched_is_not_handed_out_again() {
    let seeds = "http://a.test/p0\nhttp://a.test/p1\nhttp://b.test/p0\nhttp://b.test/p1\n";
    let crawl = TempCrawl::new("history-pending");
    inject(&crawl, seeds, &[]);
    let pages: Vec<Page> = seeds
        .lines()
        .map(|u| page(u, "<p>p</p>", "\"p\""))
        .collect();
    fetched(&crawl, "00001", &pages, ago(100));
    // All four due: a round cut in two segments, a.test's and b.test's.
    let flags = [
        "--recrawl-interval",
        "1s",
        "--recrawl-min",
        "1s",
        "--max-segment-size",
        "2",
    ];
    run_round(&crawl, &flags);
    let hosts_of = |recs: &[common::segment::SegmentRecord]| {
        let mut h: Vec<String> = recs.iter().map(|r| r.host.clone()).collect();
        h.dedup();
        h
    };
    let first = segments(&crawl);
    assert_eq!(hosts_of(&first["00002"]), ["a.test"], "{first:?}");
    assert_eq!(hosts_of(&first["00003"]), ["b.test"], "{first:?}");
    // Segment 00002 fetched (nothing stored), 00003 still waits; all four
    // come due again.
    mark_fetched_empty(&crawl, "00002");
    std::thread::sleep(Duration::from_millis(1100));
    run_round(&crawl, &flags);
    let after = segments(&crawl);
    let new: Vec<String> = after
        .iter()
        .filter(|(id, _)| id.as_str() > "00003")
        .flat_map(|(_, recs)| urls(recs))
        .collect();
    assert_eq!(
        new,
        ["http://a.test/p0", "http://a.test/p1"],
        "b.test's URLs wait in segment 00003: {after:?}"
    );
    assert_eq!(newest_json_report(&crawl)["counts"]["waiting_copies"], 2);
}

#[test]
fn a_url_whose_retries_ran_out_stays_in_the_history_and_comes_back() {
    use common::segment::Via;
    let crawl = seeded("history-failed");
    fetched(
        &crawl,
        "00001",
        &[page("http://a.test/", "<p>home</p>", "\"v1\"")],
        ago(10),
    );
    write_leftover(
        &crawl,
        "00001",
        &[
            rec("http://a.test/down", 1, Via::Retry, 3),
            rec("http://a.test/again", 1, Via::Retry, 1),
        ],
    );
    let flags = ["--max-tries", "3", "--recrawl-failed", "2s"];
    let report = run_round(&crawl, &flags);
    assert_eq!(figure(&report, "retries exhausted:"), 1, "{report}");
    assert_eq!(figure(&report, "kept as failed:"), 1, "{report}");
    let h = history(&crawl);
    assert_eq!(field(&h, "http://a.test/down", "state"), "failed");
    assert_eq!(field(&h, "http://a.test/down", "status"), "-");
    assert_eq!(field(&h, "http://a.test/down", "hops"), "1");
    let seg = &segments(&crawl)["00002"];
    assert_eq!(
        urls(seg),
        ["http://a.test/again"],
        "the other retry goes on"
    );
    // Due again once `recrawl_failed` has passed, as a refetch with its tries
    // from zero.
    mark_fetched_empty(&crawl, "00002");
    std::thread::sleep(Duration::from_millis(2100));
    let report = run_round(&crawl, &flags);
    assert_eq!(figure(&report, "refetches scheduled:"), 1, "{report}");
    let seg = &segments(&crawl)["00003"];
    let back = seg.iter().find(|r| r.url == "http://a.test/down").unwrap();
    assert_eq!((back.via, back.tries), (Via::Recrawl, 0), "{back:?}");
}

/// Removes the history of `crawl`: its lists, generations and summary.
fn remove_history(crawl: &TempCrawl) {
    for e in fs::read_dir(crawl.root()).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        if name.starts_with("history") {
            fs::remove_file(crawl.root().join(name)).unwrap();
        }
    }
}

#[test]
fn a_version_1_history_is_read_and_converted_to_generations() {
    let crawl = seeded("history-v1");
    fetched(
        &crawl,
        "00001",
        &[page("http://a.test/", "<a href=/x>x</a>", "\"v1\"")],
        ago(100),
    );
    run_round(&crawl, &FLAGS);
    let before = history(&crawl);
    assert!(
        before
            .values()
            .all(|e| e["record_id"].starts_with("<urn:uuid:")),
        "{before:?}"
    );
    // As a build before version 2 left it: the first thirteen columns.
    let v1 = crawl.root().join("history.v1.tsv.zst");
    let text = history_text(crawl.root());
    let lines: String = text
        .lines()
        .map(|l| l.split('\t').take(13).collect::<Vec<_>>().join("\t") + "\n")
        .collect();
    let text = format!(
        "# history v1\n{lines}# end {} xxh3 {:016x}\n",
        lines.lines().count(),
        xxhash_rust::xxh3::xxh3_64(lines.as_bytes())
    );
    remove_history(&crawl);
    fs::write(&v1, zstd::encode_all(text.as_bytes(), 1).unwrap()).unwrap();
    let status = bins::run(
        &mut segmenter_cmd(&["status", crawl.root().to_str().unwrap()]),
        crawl.root(),
    )
    .stdout;
    assert!(status.contains("history_urls: 1"), "{status}");
    mark_fetched_empty(&crawl, "00002");
    let report = run_round(&crawl, &FLAGS);
    assert!(report.contains("history:"), "{report}");
    // The entries carried over, their record unknown.
    let unknown = |mut h: BTreeMap<String, BTreeMap<&'static str, String>>| {
        for e in h.values_mut() {
            e.insert("record_id", "-".into());
            e.insert("record_date", "-".into());
        }
        h
    };
    assert_eq!(history(&crawl), unknown(before));
    assert!(!v1.exists(), "the version 1 file is replaced");
    assert_eq!(
        history_generations(&crawl.root().join(HISTORY_LIST)).len(),
        1,
        "converted whole into one generation"
    );
    let prev = crawl.root().join("history.v5.list.prev");
    let kept =
        String::from_utf8(zstd::decode_all(fs::File::open(&prev).unwrap()).unwrap()).unwrap();
    assert!(
        kept.starts_with("# history v1\n"),
        "kept as the .prev: {kept}"
    );

    // An older version's file put back beside the list (from a backup,
    // say) is not what the next round reads: the round keeps the list it
    // replaces as the .prev, and leaves that file alone.
    let list = crawl.root().join(HISTORY_LIST);
    let list_before = fs::read(&list).unwrap();
    let stale = crawl.root().join("history.v4.tsv.zst");
    fs::write(&stale, b"a stale file").unwrap();
    let y = page("http://a.test/y", "<p>y</p>", "\"y\"");
    fetched(&crawl, "00003", &[y], ago(50));
    run_round(&crawl, &FLAGS);
    assert_eq!(fs::read(&prev).unwrap(), list_before, "the list before");
    assert_eq!(fs::read(&stale).unwrap(), b"a stale file");
    assert!(history(&crawl).contains_key("http://a.test/y"));
}
