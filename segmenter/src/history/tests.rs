use std::time::Duration;

use super::*;

fn obs(ms: i64, status: u16, kind: Kind, digest: &str) -> Observation {
    Observation {
        fetched_ms: ms,
        hops: 1,
        status,
        robots: false,
        kind,
        digest: digest.into(),
        etag: "\"e\"".into(),
        last_modified: String::new(),
        record_id: String::new(),
        record_ms: None,
        canonical: String::new(),
    }
}

/// A fetch stored as record `id`: a full response's own ID and date, or
/// the ones a revisit refers to (`refers`, `None` for a revisit naming none).
fn stored(ms: i64, kind: Kind, digest: &str, refers: Option<(&str, i64)>) -> Observation {
    let (record_id, record_ms) = match refers {
        Some((id, at)) => (id.to_string(), Some(at)),
        None => (String::new(), None),
    };
    Observation {
        record_id,
        record_ms,
        ..obs(
            ms,
            if kind == Kind::NotModified { 304 } else { 200 },
            kind,
            digest,
        )
    }
}

fn schedule() -> Schedule {
    Schedule {
        interval: Duration::from_secs(100),
        min: Duration::from_secs(10),
        max: Duration::from_secs(1000),
        gone_after: 2,
        failed: Duration::from_secs(500),
    }
}

#[test]
fn interval_shrinks_when_changed_and_grows_when_not() {
    let s = schedule();
    let mut e = s.first(
        "a.test",
        "http://a.test/",
        &obs(1000, 200, Kind::Full, "sha1:A"),
    );
    assert_eq!((e.interval_s, e.due_ms), (100, 101_000));
    assert_eq!(
        s.apply(&mut e, &obs(2000, 200, Kind::Full, "sha1:B"), false),
        Outcome::Changed
    );
    assert_eq!(
        (e.interval_s, e.changes, e.digest.as_str()),
        (50, 1, "sha1:B")
    );
    assert_eq!(
        s.apply(&mut e, &obs(3000, 304, Kind::NotModified, ""), false),
        Outcome::Unchanged
    );
    assert_eq!((e.interval_s, e.digest.as_str()), (75, "sha1:B"));
    assert_eq!(
        s.apply(&mut e, &obs(4000, 200, Kind::Identical, "sha1:B"), false),
        Outcome::Unchanged
    );
    assert_eq!(e.interval_s, 113);
    for _ in 0..10 {
        s.apply(&mut e, &obs(5000, 200, Kind::Full, "sha1:B"), false);
    }
    assert_eq!(e.interval_s, 1000, "bounded by max");
    for i in 0..10 {
        s.apply(
            &mut e,
            &obs(6000, 200, Kind::Full, &format!("sha1:{i}")),
            false,
        );
    }
    assert_eq!(e.interval_s, 10, "bounded by min");
}

#[test]
fn gone_moved_and_robots_retire() {
    let s = schedule();
    let mut e = s.first(
        "a.test",
        "http://a.test/",
        &obs(1000, 200, Kind::Full, "sha1:A"),
    );
    assert_eq!(
        s.apply(&mut e, &obs(2000, 404, Kind::Full, ""), false),
        Outcome::Failed
    );
    assert_eq!(e.state, State::Active);
    assert_eq!(
        s.apply(&mut e, &obs(3000, 410, Kind::Full, ""), false),
        Outcome::Retired
    );
    assert_eq!((e.state, e.strikes), (State::Gone, 2));
    let mut m = s.first("a.test", "http://a.test/m", &obs(1000, 200, Kind::Full, ""));
    s.apply(&mut m, &obs(2000, 301, Kind::Full, ""), false);
    assert_eq!(m.state, State::Moved);
    let r = s.first(
        "a.test",
        "http://a.test/r",
        &Observation {
            fetched_ms: 5,
            robots: true,
            ..Observation::default()
        },
    );
    assert_eq!((r.state, r.status.as_str()), (State::Robots, "robots"));
}

#[test]
fn the_file_round_trips_and_damage_is_refused() {
    let dir = common::testutil::TempDir::new("history-round-trip");
    let path = dir.join(FILE_NAME);
    let s = schedule();
    let mut a = s.first(
        "a.test",
        "http://a.test/",
        &obs(1000, 200, Kind::Full, "sha1:A"),
    );
    a.last_modified = "Tue, 24 Nov 2026 10:00:00 GMT".into();
    let b = s.first("a.test", "http://a.test/b", &obs(1000, 404, Kind::Full, ""));
    let mut w = HistoryWriter::create(&path).unwrap();
    w.write(&a).unwrap();
    w.write(&b).unwrap();
    assert_eq!(w.finish().unwrap(), 2);
    let mut r = HistoryReader::open(&path).unwrap().unwrap();
    assert_eq!(r.next_entry().unwrap(), Some(a.clone()));
    assert_eq!(r.next_entry().unwrap(), Some(b));
    assert_eq!(r.next_entry().unwrap(), None);

    // The same text without its last entry: the end line no longer matches.
    let text =
        String::from_utf8(zstd::decode_all(std::fs::File::open(&path).unwrap()).unwrap()).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.remove(2);
    let cut = lines.join("\n") + "\n";
    std::fs::write(&path, zstd::encode_all(cut.as_bytes(), 3).unwrap()).unwrap();
    let mut r = HistoryReader::open(&path).unwrap().unwrap();
    assert_eq!(r.next_entry().unwrap(), Some(a));
    let err = r.next_entry().unwrap_err().to_string();
    assert!(
        err.contains("does not match") && err.contains(FILE_NAME),
        "{err}"
    );
}

#[test]
fn a_url_whose_retries_ran_out_is_kept_as_failed_and_comes_back() {
    let s = schedule();
    let gave_up = Observation {
        fetched_ms: 10_000,
        hops: 2,
        kind: Kind::Exhausted,
        ..Observation::default()
    };
    // Never fetched: a new entry, no status, due at `failed`.
    let e = s.first_failed("a.test", "http://a.test/x", &gave_up);
    assert_eq!(
        (e.state, e.status.as_str(), e.hops, e.due_ms),
        (State::Failed, "", 2, 510_000)
    );
    assert!(e.state.refetched(), "a failed URL comes due again");
    // Fetched before: keeps its validators, due at `failed` from now.
    let mut a = s.first(
        "a.test",
        "http://a.test/",
        &obs(1000, 200, Kind::Full, "sha1:A"),
    );
    assert!(s.give_up(&mut a, &gave_up));
    assert_eq!(
        (a.state, a.digest.as_str(), a.due_ms),
        (State::Failed, "sha1:A", 510_000)
    );
    // A retired URL stays retired.
    let mut g = s.first("a.test", "http://a.test/g", &obs(1000, 410, Kind::Full, ""));
    s.apply(&mut g, &obs(2000, 410, Kind::Full, ""), false);
    assert!(!s.give_up(&mut g, &gave_up));
    assert_eq!(g.state, State::Gone);
}

#[test]
fn a_version_1_file_is_read_and_refuses_the_state_failed() {
    let dir = common::testutil::TempDir::new("history-v1");
    let s = schedule();
    let a = s.first(
        "a.test",
        "http://a.test/",
        &obs(1000, 200, Kind::Full, "sha1:A"),
    );
    let mut line = Vec::new();
    a.encode_line(&mut line);
    // Versions 1 and 2 end before the record's two columns.
    let line = String::from_utf8(line)
        .unwrap()
        .replace("\t-\t-\t-\n", "\n")
        .into_bytes();
    let write = |text: &str| {
        let path = dir.join(OLD_FILE_NAMES[3]);
        let hash = xxhash_rust::xxh3::xxh3_64(text.as_bytes());
        let n = text.lines().count();
        let whole = format!("# history v1\n{text}# end {n} xxh3 {hash:016x}\n");
        std::fs::write(&path, zstd::encode_all(whole.as_bytes(), 1).unwrap()).unwrap();
        path
    };
    let path = write(std::str::from_utf8(&line).unwrap());
    assert_eq!(
        current_path(dir.path()),
        path,
        "no version 3 nor 2: the version 1 file"
    );
    let mut r = HistoryReader::open_in(dir.path()).unwrap().unwrap();
    assert_eq!(r.next_entry().unwrap(), Some(a.clone()));
    assert_eq!(r.next_entry().unwrap(), None);
    let failed = String::from_utf8(line)
        .unwrap()
        .replace("\tactive\t", "\tfailed\t");
    write(&failed);
    let mut r = HistoryReader::open_in(dir.path()).unwrap().unwrap();
    let err = r.next_entry().unwrap_err().to_string();
    assert!(err.contains("state \"failed\""), "{err}");
}

#[test]
fn changed_bounds_apply_to_urls_already_in_the_history() {
    let s = schedule();
    let mut e = Entry {
        interval_s: 5000,
        fetched_ms: 1_000_000,
        due_ms: 1_000_000 + 5_000_000,
        ..Entry::default()
    };
    // recrawl_max lowered to 1000 s: due 4000 s sooner.
    assert!(s.rescale(&mut e));
    assert_eq!((e.interval_s, e.due_ms), (1000, 1_000_000 + 1_000_000));
    assert!(!s.rescale(&mut e), "within the bounds: unchanged");
    // recrawl_min raised above the interval: due later.
    let mut short = Entry {
        interval_s: 2,
        due_ms: 50_000,
        ..Entry::default()
    };
    assert!(s.rescale(&mut short));
    assert_eq!((short.interval_s, short.due_ms), (10, 58_000));
}

#[test]
fn a_version_2_file_is_read_with_no_record_and_a_v3_line_keeps_it() {
    let dir = common::testutil::TempDir::new("history-v2");
    let line = "a.test\thttp://a.test/\t1\t2026-11-24T10:00:05.250Z\t200\t100\t0\t0\t\
                2026-11-24T10:01:45.250Z\tactive\tsha1:A\t\"e\"\t-\n";
    let text = format!(
        "# history v2\n{line}# end 1 xxh3 {:016x}\n",
        xxhash_rust::xxh3::xxh3_64(line.as_bytes())
    );
    let path = dir.join(OLD_FILE_NAMES[2]);
    std::fs::write(&path, zstd::encode_all(text.as_bytes(), 1).unwrap()).unwrap();
    assert_eq!(current_path(dir.path()), path);
    let mut r = HistoryReader::open_in(dir.path()).unwrap().unwrap();
    let e = r.next_entry().unwrap().unwrap();
    assert_eq!((e.digest.as_str(), e.etag.as_str()), ("sha1:A", "\"e\""));
    assert_eq!((e.record_id.as_str(), e.record_ms), ("", None));
    assert_eq!(
        e.payload_ms(),
        e.fetched_ms,
        "unknown: the last fetch's date"
    );
    assert_eq!(r.next_entry().unwrap(), None);
    // Written in version 4: three more columns, `-` while unknown.
    let mut out = Vec::new();
    e.encode_line(&mut out);
    assert_eq!(
        String::from_utf8(out).unwrap(),
        line.replace("\n", "\t-\t-\t-\n")
    );
    // A version 3 line must have all fifteen.
    let mut back = Entry::default();
    let err = back.parse_into(line.trim_end(), 3).unwrap_err();
    assert!(
        err.contains("expected 15") && err.contains("record_date"),
        "{err}"
    );
}

#[test]
fn revisits_keep_the_record_of_the_response_that_holds_the_payload() {
    let s = schedule();
    let first = ("<urn:uuid:1>", 1000);
    let mut e = s.first(
        "a.test",
        "http://a.test/",
        &stored(1000, Kind::Full, "sha1:A", Some(first)),
    );
    assert_eq!(
        (e.record_id.as_str(), e.record_ms),
        (first.0, Some(first.1))
    );
    // A revisit that names the response, then one that names none (an
    // older fetcher), then a 304: still the first response.
    for (ms, kind, refers) in [
        (2000, Kind::Identical, Some(first)),
        (3000, Kind::Identical, None),
        (4000, Kind::NotModified, Some(first)),
        (5000, Kind::NotModified, None),
    ] {
        s.apply(&mut e, &stored(ms, kind, "sha1:A", refers), false);
        assert_eq!(e.fetched_ms, ms);
        assert_eq!(
            (e.record_id.as_str(), e.record_ms),
            (first.0, Some(first.1))
        );
        assert_eq!(e.payload_ms(), 1000);
    }
    // The file keeps them.
    let mut line = Vec::new();
    e.encode_line(&mut line);
    let line = String::from_utf8(line).unwrap();
    assert!(
        line.ends_with("\tsha1:A\t\"e\"\t-\t<urn:uuid:1>\t1970-01-01T00:00:01.000Z\t-\n"),
        "{line}"
    );
    let mut back = Entry::default();
    back.parse_into(line.trim_end(), VERSION).unwrap();
    assert_eq!(back, e);
    // A changed page: its new response.
    s.apply(
        &mut e,
        &stored(6000, Kind::Full, "sha1:B", Some(("<urn:uuid:6>", 6000))),
        false,
    );
    assert_eq!(
        (e.record_id.as_str(), e.record_ms),
        ("<urn:uuid:6>", Some(6000))
    );
    // A revisit of another payload naming no record: unknown.
    s.apply(
        &mut e,
        &stored(7000, Kind::Identical, "sha1:C", None),
        false,
    );
    assert_eq!((e.record_id.as_str(), e.record_ms), ("", None));
    // Gone: nothing to refer to.
    s.apply(
        &mut e,
        &stored(8000, Kind::Full, "sha1:D", Some(("<urn:uuid:8>", 8000))),
        false,
    );
    s.apply(&mut e, &obs(9000, 404, Kind::Full, ""), false);
    assert_eq!(
        (e.digest.as_str(), e.record_id.as_str(), e.record_ms),
        ("", "", None)
    );
}

/// A history of `n` URLs on 40 hosts, due every 97 s from `start_ms`
/// (every tenth retired, every seventh failed), written to `path` with its
/// saved summary as of `as_of_ms`.
fn history_with_summary(path: &std::path::Path, n: i64, start_ms: i64, as_of_ms: i64) {
    let s = schedule();
    let mut out = HistoryWriter::create(path).unwrap();
    let mut counter = SummaryCounter::new(as_of_ms, 0, true);
    for i in 0..n {
        let host = format!("h{:02}.test", i * 40 / n);
        let url = format!("http://{host}/{i:06}");
        let mut e = s.first(&host, &url, &obs(1000, 200, Kind::Full, "sha1:A"));
        e.due_ms = start_ms + i * 97_000;
        e.changes = u32::from(i % 3 == 0);
        e.state = match (i % 10, i % 7) {
            (0, _) => State::Gone,
            (_, 0) => State::Failed,
            _ => State::Active,
        };
        out.write(&e).unwrap();
        counter.add(&e);
    }
    out.finish().unwrap();
    SavedSummary::write(path, as_of_ms, counter, Some("bounds".into())).unwrap();
}

#[test]
fn the_saved_summary_counts_as_the_file_does_until_its_due_times_run_out() {
    let dir = common::testutil::TempDir::new("history-summary");
    let path = dir.path().join(FILE_NAME);
    // 40,000 URLs due from 10 days before the merge to 35 days after it:
    // every bucket has URLs, and more than KEPT_DUE after each end.
    let as_of = 1_700_000_000_000;
    history_with_summary(&path, 40_000, as_of - 10 * 86_400_000, as_of);
    assert!(summary_path(&path).is_file());
    let mut counted = 0;
    for later_s in [0, 1, 96, 97, 98, 3_600, 40_000, 86_400] {
        let now = as_of + later_s * 1000;
        let whole = HistorySummary::compute(&path, now, 0).unwrap();
        match SavedSummary::read(&path, now) {
            Some(saved) => {
                assert_eq!(format!("{saved:?}"), format!("{whole:?}"), "{later_s} s on");
                // The URLs due now, without reading the history, under the
                // bounds the merge applied; not under others.
                let due = SavedSummary::due_now(&path, now, "bounds");
                assert_eq!(due, Some(whole.due.now), "{later_s} s on");
                assert_eq!(SavedSummary::due_now(&path, now, "other bounds"), None);
                counted += 1;
            }
            // KEPT_DUE times at least 97 s apart reach past 397,312 s.
            None => panic!("{later_s} s after the merge: not counted from the file"),
        }
    }
    assert_eq!(counted, 8);
    // Past what its due times cover, or before the merge: read whole.
    assert!(SavedSummary::read(&path, as_of + 1_000_000_000).is_none());
    assert!(SavedSummary::read(&path, as_of - 1).is_none());

    // A history with few URLs: every due time kept, any time counted.
    history_with_summary(&path, 300, as_of - 86_400_000, as_of);
    let now = as_of + 40 * 86_400_000;
    let saved = SavedSummary::read(&path, now).expect("every due time kept");
    let whole = HistorySummary::compute(&path, now, 0).unwrap();
    assert_eq!(format!("{saved:?}"), format!("{whole:?}"));

    // Another history file than the one it describes: not used.
    let copy = dir.path().join("copy");
    std::fs::copy(&path, &copy).unwrap();
    std::fs::rename(&copy, &path).unwrap();
    assert!(SavedSummary::read(&path, as_of).is_none());
}

#[test]
fn a_version_3_file_is_read_with_no_hint_and_a_full_fetch_brings_one() {
    let dir = common::testutil::TempDir::new("history-v3");
    let line = "a.test\thttp://a.test/\t1\t2026-11-24T10:00:05.250Z\t200\t100\t0\t0\t\
                2026-11-24T10:01:45.250Z\tactive\tsha1:A\t\"e\"\t-\t<urn:uuid:1>\t\
                2026-11-24T10:00:05.250Z\n";
    let text = format!(
        "# history v3\n{line}# end 1 xxh3 {:016x}\n",
        xxhash_rust::xxh3::xxh3_64(line.as_bytes())
    );
    let path = dir.join(OLD_FILE_NAMES[1]);
    std::fs::write(&path, zstd::encode_all(text.as_bytes(), 1).unwrap()).unwrap();
    assert_eq!(current_path(dir.path()), path);
    let mut r = HistoryReader::open_in(dir.path()).unwrap().unwrap();
    let mut e = r.next_entry().unwrap().unwrap();
    assert_eq!(
        (e.record_id.as_str(), e.canonical.as_str()),
        ("<urn:uuid:1>", "")
    );
    let mut out = Vec::new();
    e.encode_line(&mut out);
    assert_eq!(String::from_utf8(out).unwrap(), line.replace("\n", "\t-\n"));
    // A full fetch keeps the page's hint; a 404 forgets it.
    let hinted = Observation {
        canonical: "http://www.a.test/".into(),
        ..obs(e.fetched_ms + 1000, 200, Kind::Full, "sha1:B")
    };
    schedule().apply(&mut e, &hinted, false);
    assert_eq!(e.canonical, "http://www.a.test/");
    let mut out = Vec::new();
    e.encode_line(&mut out);
    let back_line = String::from_utf8(out).unwrap();
    assert!(back_line.ends_with("\thttp://www.a.test/\n"), "{back_line}");
    let mut back = Entry::default();
    back.parse_into(back_line.trim_end(), VERSION).unwrap();
    assert_eq!(back, e);
    let gone = obs(e.fetched_ms + 1000, 404, Kind::Full, "");
    schedule().apply(&mut e, &gone, false);
    assert_eq!(e.canonical, "");
}

/// The word-at-a-time field split reads every line as `str::split` on tabs
/// does: tabs at either end, in a row, on each side of a word boundary,
/// bytes that differ from a tab in the high bit only (`\u{89}` is 0xC2
/// 0x89 in UTF-8), more fields than there are columns, none.
#[test]
fn fields_split_as_str_split_does() {
    fn by_split(line: &str) -> ([&str; COLUMNS], usize) {
        let mut fields = ["-"; COLUMNS];
        let mut count = 0;
        for f in line.split('\t') {
            if count < COLUMNS {
                fields[count] = f;
            }
            count += 1;
        }
        (fields, count)
    }
    let mut lines: Vec<String> = vec![
        String::new(),
        "\t".into(),
        "\t\t\t".into(),
        "a\tb".into(),
        "\tleading".into(),
        "trailing\t".into(),
        "\u{89}\t\u{89}\u{89}\t\u{489}x".into(),
        "é\tü\t\u{1f600}\t".into(),
        vec!["f"; 40].join("\t"),
    ];
    for len in 0..40 {
        for at in 0..len {
            let mut b = vec![b'x'; len];
            b[at] = b'\t';
            lines.push(String::from_utf8(b.clone()).unwrap());
            b[len - 1 - at] = b'\t';
            lines.push(String::from_utf8(b).unwrap());
        }
    }
    for line in &lines {
        assert_eq!(split_fields(line), by_split(line), "{line:?}");
    }
}

/// Numbers read as digits only, up to `u64::MAX`, as `str::parse` after a
/// digit check did.
#[test]
fn numbers_read_digits_only() {
    for s in ["0", "7", "0042", "18446744073709551615"] {
        assert_eq!(
            common::parse_digits(s.as_bytes()),
            s.parse::<u64>().ok(),
            "{s}"
        );
    }
    for s in [
        "",
        "+1",
        "-1",
        "1 ",
        "1e3",
        "18446744073709551616",
        "99999999999999999999",
    ] {
        assert_eq!(common::parse_digits(s.as_bytes()), None, "{s}");
    }
}

/// The entries a merge writes into its generation are exactly those that
/// differ from the history read, over every path that changes an entry:
/// the merge compares only entries with observations and trusts that
/// nothing but a rescale or [`Merge::hand_out`] changes the others.
mod written_entries {
    use std::collections::BTreeMap;
    use std::path::Path;

    use super::super::generations::{Generation, GenerationList, LIST_FILE_NAME, generation_name};
    use super::super::*;
    use crate::round::candidates::Meta;
    use crate::round::sort::{Sorter, SpillDir, merge};
    use common::bloom::BloomHash;

    const NOW: i64 = 10_000_000_000;

    fn e(host: &str, path: &str, interval_s: u64, due_ms: i64, state: State) -> Entry {
        Entry {
            host: host.into(),
            url: format!("http://{host}{path}"),
            hops: 1,
            fetched_ms: NOW - 50_000_000,
            status: "200".into(),
            interval_s,
            due_ms,
            state,
            digest: "sha1:A".into(),
            ..Entry::default()
        }
    }

    fn old_history() -> Vec<Entry> {
        let later = NOW + 500_000;
        let mut v = vec![
            e("a.test", "/untouched", 100, later, State::Active),
            e("a.test", "/due", 100, NOW - 5, State::Active),
            e("a.test", "/due-now-exactly", 100, NOW, State::Active),
            e("a.test", "/zero-interval", 0, NOW, State::Active),
            e("a.test", "/rescaled-up", 5000, later, State::Active),
            e("a.test", "/rescaled-down", 2, later, State::Active),
            e("a.test", "/fetched", 100, later, State::Active),
            e("a.test", "/hinted", 100, later, State::Active),
            e("a.test", "/hint-old", 100, later, State::Active),
            e("a.test", "/hint-due", 100, NOW - 1, State::Active),
            e("a.test", "/exhausted", 100, later, State::Active),
            e("a.test", "/exhausted-retired", 100, later, State::Gone),
            e("a.test", "/back", 100, later, State::Gone),
            e("a.test", "/stale", 100, later, State::Active),
            e("a.test", "/failed-due", 100, NOW - 7, State::Failed),
            e("a.test", "/failed-rescale", 5000, NOW - 7, State::Failed),
            e("a.test", "/moved", 100, NOW - 7, State::Moved),
            e("b.test", "/p?ref=1", 100, NOW - 3, State::Active),
            e("b.test", "/q?ref=1", 100, later, State::Active),
            e("b.test", "/r?ref=1", 100, NOW - 3, State::Failed),
            e("b.test", "/s?ref=1", 100, NOW - 3, State::Gone),
            e("c.test", "/ruled", 500, later, State::Active),
            e("c.test", "/ruled-due", 50, NOW - 2, State::Active),
            e("c.test", "/ruled-in", 60, later, State::Active),
        ];
        // Filler: the round's generation stays under half the base one.
        for i in 0..200 {
            v.push(e(
                "d.test",
                &format!("/filler{i:03}"),
                100,
                later,
                State::Active,
            ));
        }
        let key = |e: &Entry| {
            let mut p = Vec::new();
            crate::round::backlog::host_key(&e.host, &mut p);
            (p, e.url.clone())
        };
        v.sort_by_key(key);
        v
    }

    fn observation(ms: i64, status: u16, kind: Kind) -> Observation {
        Observation {
            fetched_ms: ms,
            hops: 1,
            status,
            kind,
            digest: if kind == Kind::Full {
                "sha1:B".into()
            } else {
                String::new()
            },
            ..Observation::default()
        }
    }

    fn observations(spills: &std::sync::Arc<SpillDir>) -> crate::round::sort::Merger {
        let fresh = NOW - 1000;
        let list: Vec<(&str, &str, Observation)> = vec![
            ("a.test", "/fetched", observation(fresh, 200, Kind::Full)),
            ("a.test", "/hinted", observation(fresh, 0, Kind::Hint)),
            (
                "a.test",
                "/hint-old",
                observation(NOW - 90_000_000, 0, Kind::Hint),
            ),
            ("a.test", "/hint-due", observation(fresh, 0, Kind::Hint)),
            (
                "a.test",
                "/exhausted",
                observation(fresh, 0, Kind::Exhausted),
            ),
            (
                "a.test",
                "/exhausted-retired",
                observation(fresh, 0, Kind::Exhausted),
            ),
            ("a.test", "/back", observation(fresh, 200, Kind::Full)),
            (
                "a.test",
                "/stale",
                observation(NOW - 60_000_000, 200, Kind::Full),
            ),
            ("a.test", "/new", observation(fresh, 200, Kind::Full)),
            ("a.test", "/hint-unknown", observation(fresh, 0, Kind::Hint)),
            ("b.test", "/new?ref=2", observation(fresh, 200, Kind::Full)),
        ];
        let mut sorter = Sorter::new(spills.clone(), 1 << 20).unwrap();
        let mut text = String::new();
        for (host, path, o) in list {
            o.encode(&format!("http://{host}{path}"), &mut text);
            let meta = Meta {
                hops: 0,
                inlinks: 1,
                tries: 0,
                via: common::segment::Via::Link,
                exempt: false,
                fetched: false,
                rescued: false,
                not_before_s: 0,
            };
            sorter.push(host, &text, BloomHash(0, 0), meta).unwrap();
        }
        merge(vec![sorter.finish()], spills, 8).unwrap()
    }

    fn read_all(path: &Path) -> Vec<Entry> {
        let mut r = HistoryReader::open(path).unwrap().unwrap();
        let mut v = Vec::new();
        while let Some(e) = r.next_entry().unwrap() {
            v.push(e);
        }
        v
    }

    /// One merge over the crawl at `root`: written whole, or as a
    /// generation; the entries written and the URLs handed out.
    fn run(
        root: &Path,
        rules: &common::rules::HostRules,
        whole: bool,
    ) -> (Vec<Entry>, Vec<String>) {
        let staging = root.join(common::crawldir::SEGMENTER_STAGING_DIR);
        let _ = std::fs::remove_dir_all(&staging);
        std::fs::create_dir_all(&staging).unwrap();
        let spills = SpillDir::new(staging.join("spills")).unwrap();
        let old = HistoryReader::open(&root.join(LIST_FILE_NAME)).unwrap();
        let base = if whole {
            None
        } else {
            old.as_ref().and_then(|r| r.generations().cloned())
        };
        let list_path = staging.join(LIST_FILE_NAME);
        let out = HistoryOut::create(&list_path, root, base).unwrap();
        let schedule = Schedule {
            interval: Duration::from_secs(100),
            min: Duration::from_secs(10),
            max: Duration::from_secs(1000),
            gone_after: 2,
            failed: Duration::from_secs(500),
        };
        let mut due = Vec::new();
        let (_, _, written) = Merge {
            old,
            observations: observations(&spills),
            out,
            schedule: &schedule,
            rules,
            now_ms: NOW,
            spread_new: false,
            lookup: None,
            count_pages: true,
        }
        .run(|e| {
            due.push(e.url.clone());
            Ok(())
        })
        .unwrap();
        assert_eq!(written.compacted, 0, "no compaction in this test");
        let list = GenerationList::read(&list_path).unwrap();
        let last = list.generations.last().unwrap();
        (read_all(&staging.join(&last.name)), due)
    }

    fn check(tag: &str, rules_text: &str) {
        let dir = common::testutil::TempDir::new(tag);
        let root = dir.join("crawl");
        std::fs::create_dir_all(&root).unwrap();
        let old = old_history();
        let mut w = HistoryWriter::create(&root.join(generation_name(1))).unwrap();
        for e in &old {
            w.write(e).unwrap();
        }
        let n = w.finish().unwrap();
        GenerationList {
            generations: vec![Generation {
                name: generation_name(1),
                entries: n,
            }],
        }
        .write(&root.join(LIST_FILE_NAME))
        .unwrap();
        let rules = common::rules::HostRules::parse(rules_text, "r.toml".as_ref()).unwrap();
        let (all, due_whole) = run(&root, &rules, true);
        assert_eq!(all.len(), old.len() + 2, "{tag}: every entry, and 2 new");
        let (generation, due) = run(&root, &rules, false);
        assert_eq!(due, due_whole, "{tag}");
        let before: BTreeMap<&str, &Entry> = old.iter().map(|e| (e.url.as_str(), e)).collect();
        let changed: Vec<&Entry> = all
            .iter()
            .filter(|e| before.get(e.url.as_str()) != Some(e))
            .collect();
        let generation: Vec<&Entry> = generation.iter().collect();
        assert_eq!(generation, changed, "{tag}");
    }

    #[test]
    fn the_generation_holds_exactly_the_changed_entries_without_rules() {
        check("written-plain", "");
    }

    #[test]
    fn the_generation_holds_exactly_the_changed_entries_with_bounds_and_canon() {
        check(
            "written-rules",
            "[[rule]]\nhost = \"b.test\"\ndrop_params = [\"ref\"]\n\n\
             [[rule]]\nhost = \"c.test\"\nrecrawl_max = \"100s\"\nrecrawl_min = \"55s\"\n",
        );
    }

    #[test]
    fn the_generation_holds_exactly_the_changed_entries_with_canon_only() {
        check(
            "written-canon",
            "[[rule]]\nhost = \"b.test\"\ndrop_params = [\"ref\"]\n",
        );
    }
}
