//! Every decision of the cycle, on crawl states written out by hand.

use std::collections::HashMap;

use super::*;

const NOW: i64 = 1_772_366_400_000;
/// When the driver of these tests started.
const SINCE: i64 = NOW - 60_000;

/// The answers of the files, by hand.
#[derive(Default)]
struct Files {
    fetched: HashMap<String, RunStatus>,
    segments: HashMap<String, SegmentFacts>,
    figures: HashMap<String, Figures>,
    backlog: u64,
    history: HistoryFacts,
    /// `max_retry_after` (the default if unset).
    held_wait_limit: Option<std::time::Duration>,
}

impl Lookup for Files {
    fn fetched(&self, id: &str) -> Result<Option<RunStatus>, String> {
        Ok(self.fetched.get(id).cloned())
    }
    fn segment(&self, id: &str) -> Result<SegmentFacts, String> {
        self.segments
            .get(id)
            .copied()
            .ok_or_else(|| format!("segments/{id}.v5.tsv.zst: no such file"))
    }
    fn figures(&self, id: &str) -> Result<Figures, String> {
        Ok(self.figures.get(id).copied().unwrap_or_default())
    }
    fn backlog_urls(&self) -> Result<u64, String> {
        Ok(self.backlog)
    }
    fn history(&self) -> Result<HistoryFacts, String> {
        Ok(self.history)
    }
    fn held_wait_limit(&self) -> Result<std::time::Duration, String> {
        Ok(self
            .held_wait_limit
            .unwrap_or(std::time::Duration::from_secs(600)))
    }
}

impl Files {
    fn with_segment(mut self, id: &str, urls: u64) -> Files {
        self.segments.insert(
            id.into(),
            SegmentFacts {
                urls,
                ..SegmentFacts::default()
            },
        );
        self
    }

    /// `fetched/ID/`: complete with `stop_reason` (empty: cut), and `pages`.
    fn with_run(mut self, id: &str, stop_reason: &str, pages: u64) -> Files {
        self.fetched.insert(
            id.into(),
            RunStatus {
                segment: id.into(),
                done: !stop_reason.is_empty(),
                stop_reason: stop_reason.into(),
                pages,
                ..RunStatus::default()
            },
        );
        self
    }
}

/// A crawl with segments 00001 (fetched, consumed) and 00002 (waiting), 3
/// rounds in the journal, nothing open.
fn facts() -> Facts {
    Facts {
        crawl: CrawlDir::new("/c"),
        now_ms: NOW,
        since_ms: SINCE,
        exit_code: 0,
        stop_file: false,
        segments: vec!["00001".into(), "00002".into()],
        pending: vec!["00002".into()],
        unconsumed: vec![],
        state: DriverState::default(),
        rounds: vec![],
        next_number: 4,
        sharded: false,
    }
}

fn step(kind: Kind, arg: Option<&str>, round: Option<u64>, started_ms: i64) -> Step {
    Step {
        kind,
        arg: arg.map(str::to_string),
        round,
        started_ms,
    }
}

fn open(number: u64, segment: Option<&str>) -> OpenRound {
    OpenRound {
        number,
        started_ms: NOW - 50_000,
        segment: segment.map(str::to_string),
        urls: segment.map(|_| 10),
        ..OpenRound::default()
    }
}

/// A round of the journal that ended at `ended_ms`.
fn journal_round(number: u64, pages: u64, stop_reason: &str, ended_ms: i64) -> Round {
    Round {
        number,
        segment: Some(format!("{number:05}")),
        started_ms: ended_ms - 10_000,
        ended_ms,
        end: End::Done,
        urls: Some(5),
        pages,
        figures: Figures {
            new_urls: 5,
            new_segments: 1,
            ..Figures::default()
        },
        stop_reason: Some(stop_reason.into()),
        fetch_ms: 9000,
        segmenter_ms: 500,
    }
}

/// `f` two seconds after the driver was given `d` (a segmenter run): the
/// run consumed fetched run 00002 and wrote segment 00003.
fn segmented(f: &Facts, d: Decision) -> Facts {
    let mut after = f.clone();
    after.state = d.state;
    after.now_ms = NOW + 2_000;
    after.unconsumed = vec![];
    after.segments.push("00003".into());
    after.pending = vec!["00003".into()];
    after
}

fn answer(d: &Decision) -> (Kind, Option<&str>) {
    (d.kind, d.arg.as_deref())
}

#[test]
fn a_waiting_segment_is_fetched_in_a_new_round_numbered_from_the_journal() {
    let d = decide(&facts(), &Files::default().with_segment("00002", 42));
    assert_eq!(answer(&d), (Kind::Fetch, Some("00002")));
    assert_eq!(d.round, Some(4));
    assert_eq!(
        d.log(&CrawlDir::new("/c")).unwrap(),
        std::path::Path::new("/c/logs/round-00004.log")
    );
    let open = d.state.open.unwrap();
    assert_eq!(
        (
            open.number,
            open.segment.as_deref(),
            open.urls,
            open.started_ms
        ),
        (4, Some("00002"), Some(42), NOW)
    );
    let step = d.state.step.unwrap();
    assert_eq!((step.kind, step.started_ms), (Kind::Fetch, NOW));
}

#[test]
fn a_fetch_that_was_cut_is_resumed_in_its_round() {
    let mut f = facts();
    // Opened by a driver killed with -9 during the fetch: its step is not
    // this driver's, so it is neither timed nor trusted.
    f.state.open = Some(open(4, Some("00002")));
    f.state.step = Some(step(Kind::Fetch, Some("00002"), Some(4), SINCE - 1));
    let files = Files::default()
        .with_segment("00002", 42)
        .with_run("00002", "", 0);
    let d = decide(&f, &files);
    assert_eq!(answer(&d), (Kind::Resume, Some("00002")));
    let open = d.state.open.unwrap();
    assert_eq!((open.number, open.urls, open.fetch_ms), (4, Some(10), 0));
}

#[test]
fn the_fetched_run_is_segmented_and_then_the_round_ends_with_its_line() {
    let mut f = facts();
    f.state.open = Some(open(4, Some("00002")));
    f.state.step = Some(step(Kind::Fetch, Some("00002"), Some(4), NOW - 30_000));
    f.pending = vec![];
    f.unconsumed = vec!["00002".into()];
    let mut files = Files::default().with_run("00002", "tail", 9);
    let d = decide(&f, &files);
    assert_eq!(answer(&d), (Kind::Segment, None));
    assert_eq!(d.round, Some(4));
    assert_eq!(d.state.open.as_ref().unwrap().fetch_ms, 30_000);

    // The segmenter consumed it and wrote segment 00003.
    let f2 = segmented(&f, d);
    files.figures.insert(
        "00002".into(),
        Figures {
            new_urls: 17,
            new_segments: 1,
            history_new: 9,
            ..Figures::default()
        },
    );
    let d = decide(&f2, &files);
    assert_eq!(answer(&d), (Kind::Round, Some("4")));
    let round = d.ended.clone().unwrap();
    assert_eq!(
        (round.number, round.pages, round.figures.new_urls, round.end),
        (4, 9, 17, End::Done)
    );
    assert_eq!((round.fetch_ms, round.segmenter_ms), (30_000, 2_000));
    assert_eq!(round.stop_reason.as_deref(), Some("tail"));
    assert!(
        d.reason.starts_with(
            "round 4: segment 00002, 10 URLs, 9 pages fetched, 17 URLs scheduled in 1 segment(s); \
             history: 9 new,"
        ),
        "{}",
        d.reason
    );
    assert_eq!(d.state.open, None);
}

#[test]
fn a_failed_step_stops_naming_it_and_its_log_and_the_round_stays_open() {
    let mut f = facts();
    f.state.open = Some(open(4, Some("00002")));
    f.state.step = Some(step(Kind::Fetch, Some("00002"), Some(4), NOW - 1000));
    f.exit_code = 1;
    let d = decide(&f, &Files::default());
    assert_eq!(answer(&d), (Kind::Stop, Some("1")));
    assert_eq!(
        d.reason,
        "fetcher fetch 00002 failed with exit code 1; see /c/logs/round-00004.log"
    );
    assert_eq!(d.state.open.as_ref().unwrap().number, 4);
    f.exit_code = 137;
    let d = decide(&f, &Files::default());
    assert!(
        d.reason
            .contains("failed with exit code 137 (killed by signal 9)"),
        "{}",
        d.reason
    );
    // The injection's log is its own.
    f.state.step = Some(step(Kind::Inject, None, None, NOW - 1000));
    f.exit_code = 2;
    let d = decide(&f, &Files::default());
    assert_eq!(
        d.reason,
        "segmenter inject failed with exit code 2; see /c/logs/inject.log"
    );
}

#[test]
fn too_little_disk_space_stops_with_exit_code_3() {
    // The segmenter refused to start a round.
    let mut f = facts();
    f.state.open = Some(open(4, Some("00002")));
    f.state.step = Some(step(Kind::Segment, None, Some(4), NOW - 1000));
    f.exit_code = 3;
    let d = decide(&f, &Files::default());
    assert_eq!(answer(&d), (Kind::Stop, Some("3")));
    assert!(d.reason.contains("free space"), "{}", d.reason);
    // The fetch ended at the free-disk floor: stop before segmenting.
    f.exit_code = 0;
    f.state.step = Some(step(Kind::Fetch, Some("00002"), Some(4), NOW - 1000));
    f.pending = vec![];
    f.unconsumed = vec!["00002".into()];
    let d = decide(&f, &Files::default().with_run("00002", "disk", 3));
    assert_eq!(answer(&d), (Kind::Stop, Some("3")));
    assert!(
        d.reason.contains("free-disk floor") && d.reason.contains("free space"),
        "{}",
        d.reason
    );
    assert_eq!(d.ended, None);
    assert!(
        d.state.open.is_some(),
        "the next run goes on with the round"
    );
}

#[test]
fn stop_ends_the_crawl_but_lets_a_completed_fetch_be_segmented_first() {
    let mut f = facts();
    f.stop_file = true;
    let d = decide(&f, &Files::default());
    assert_eq!(answer(&d), (Kind::Stop, Some("0")));
    assert_eq!(d.reason, "/c/STOP exists; stopping (remove it to go on)");
    assert_eq!(d.ended, None);

    // A fetch this driver completed: the round's segmenter run first.
    f.state.open = Some(open(4, Some("00002")));
    f.state.step = Some(step(Kind::Fetch, Some("00002"), Some(4), NOW - 1000));
    f.pending = vec![];
    f.unconsumed = vec!["00002".into()];
    let mut files = Files::default().with_run("00002", "signal", 2);
    let d = decide(&f, &files);
    assert_eq!(answer(&d), (Kind::Segment, None));
    // Once segmented, the round ends as stopped (its fetch was cut), with
    // its round line and figures; then the crawl stops.
    let mut segmented = segmented(&f, d);
    files.figures.insert("00002".into(), Figures::default());
    let d = decide(&segmented, &files);
    assert_eq!(answer(&d), (Kind::Round, Some("4")));
    let round = d.ended.unwrap();
    assert_eq!((round.end, round.pages), (End::Stop, 2));
    assert_eq!(round.stop_reason.as_deref(), Some("signal"));
    segmented.state = d.state;
    assert_eq!(answer(&decide(&segmented, &files)), (Kind::Stop, Some("0")));

    // A fetch that did not complete: the round ends there, as stopped.
    f.pending = vec!["00002".into()];
    f.unconsumed = vec![];
    let files = Files::default().with_run("00002", "", 1);
    let d = decide(&f, &files);
    assert_eq!(answer(&d), (Kind::Stop, Some("0")));
    let round = d.ended.unwrap();
    assert_eq!((round.number, round.end, round.pages), (4, End::Stop, 1));
    assert_eq!(round.stop_reason, None);
    assert_eq!(d.state.open, None);
}

#[test]
fn a_new_crawl_is_injected_and_says_how_many_urls() {
    let mut f = facts();
    f.segments = vec![];
    f.pending = vec![];
    let d = decide(&f, &Files::default());
    assert_eq!(answer(&d), (Kind::Inject, None));
    assert_eq!(
        d.log(&f.crawl).unwrap(),
        std::path::Path::new("/c/logs/inject.log")
    );
    f.state = d.state;
    // Nothing came of the seeds.
    let d = decide(&f, &Files::default());
    assert_eq!(answer(&d), (Kind::Stop, Some("0")));
    assert!(
        d.reason.starts_with("nothing left to fetch in /c"),
        "{}",
        d.reason
    );
    // Two segments came of them.
    f.segments = vec!["00001".into(), "00002".into()];
    f.pending = f.segments.clone();
    let files = Files::default()
        .with_segment("00001", 3)
        .with_segment("00002", 4);
    let d = decide(&f, &files);
    assert_eq!(answer(&d), (Kind::Injected, Some("7")));
    assert_eq!(d.reason, "injected 7 seed URLs");
    f.state = d.state;
    assert_eq!(answer(&decide(&f, &files)), (Kind::Fetch, Some("00001")));
}

#[test]
fn an_earlier_rounds_run_is_caught_up_before_a_fetch() {
    let mut f = facts();
    f.unconsumed = vec!["00001".into()];
    let d = decide(&f, &Files::default());
    assert_eq!(answer(&d), (Kind::Segment, None));
    assert!(d.reason.starts_with("catching up"), "{}", d.reason);
    assert_eq!(d.round, Some(4));
    // A segmenter that ended well without consuming it: stop, not loop.
    f.state = d.state;
    let d = decide(&f, &Files::default());
    assert_eq!(answer(&d), (Kind::Stop, Some("1")));
    assert!(
        d.reason
            .contains("segmenter run ended without consuming the fetched run(s) 00001"),
        "{}",
        d.reason
    );
}

#[test]
fn a_fetch_that_ends_well_without_done_is_not_run_again() {
    let mut f = facts();
    f.state.open = Some(open(4, Some("00002")));
    f.state.step = Some(step(Kind::Fetch, Some("00002"), Some(4), NOW - 1000));
    let files = Files::default().with_run("00002", "", 0);
    let d = decide(&f, &files);
    assert_eq!(answer(&d), (Kind::Stop, Some("1")));
    assert!(
        d.reason.contains("without completing the run"),
        "{}",
        d.reason
    );
}

/// The state right after this driver's round 3, which ended `held` with no
/// page, segment 00004 waiting with every URL held until `held_until`.
fn after_held_round(held_rounds: usize, held_until: i64) -> (Facts, Files) {
    let mut f = facts();
    f.segments = vec!["00003".into(), "00004".into()];
    f.pending = vec!["00004".into()];
    f.rounds = (0..held_rounds as u64)
        .map(|i| journal_round(i + 1, 0, "held", SINCE + 1000 + i as i64))
        .collect();
    f.next_number = held_rounds as u64 + 1;
    let last = held_rounds as u64;
    f.state.step = Some(step(Kind::Round, Some(&last.to_string()), None, NOW - 10));
    let mut files = Files::default();
    files.segments.insert(
        "00004".into(),
        SegmentFacts {
            urls: 2,
            held_urls: 2,
            earliest_not_before_ms: Some(held_until),
        },
    );
    (f, files)
}

#[test]
fn when_every_host_left_is_held_the_driver_waits_for_the_first() {
    let (mut f, files) = after_held_round(1, NOW + 4_500);
    let d = decide(&f, &files);
    assert_eq!(answer(&d), (Kind::Wait, Some("5")));
    assert_eq!(
        d.reason,
        "every host left is held; waiting 5s for the first of them"
    );
    assert_eq!(d.round, Some(1), "the wait goes to the held round's log");
    // After the wait: the fetch.
    f.state = d.state;
    f.now_ms += 5_000;
    assert_eq!(answer(&decide(&f, &files)), (Kind::Fetch, Some("00004")));
}

#[test]
fn held_rounds_are_waited_out_a_few_times_only() {
    let (f, files) = after_held_round(MAX_HELD_WAITS, NOW + 1000);
    assert_eq!(answer(&decide(&f, &files)).0, Kind::Wait);
    let (f, files) = after_held_round(MAX_HELD_WAITS + 1, NOW + 1000);
    let d = decide(&f, &files);
    assert_eq!(answer(&d), (Kind::Stop, Some("0")));
    assert!(
        d.reason
            .starts_with("nothing fetchable now in /c: every host left in segment"),
        "{}",
        d.reason
    );
    // A host held longer than a wait may last (parked for a day): stop.
    let (f, files) = after_held_round(1, NOW + 86_400_000);
    let d = decide(&f, &files);
    assert_eq!(answer(&d), (Kind::Stop, Some("0")), "{}", d.reason);
    let (f, files) = after_held_round(1, NOW + 599_000);
    assert_eq!(answer(&decide(&f, &files)).0, Kind::Wait);
    // Held rounds of an earlier driver do not count: this one waits.
    let (mut f, files) = after_held_round(MAX_HELD_WAITS + 1, NOW + 1000);
    for r in &mut f.rounds[..MAX_HELD_WAITS] {
        r.ended_ms = SINCE - 1;
    }
    assert_eq!(answer(&decide(&f, &files)).0, Kind::Wait);
}

#[test]
fn a_wait_for_held_hosts_lasts_the_crawls_max_retry_after_at_most() {
    // max_retry_after = 5s: a Retry-After of 5 s is waited out (the wait
    // counts one second past the first not-before time), a longer hold
    // (a robots.txt retry of a minute) is left to the next run.
    let (f, mut files) = after_held_round(1, NOW + 5_000);
    files.held_wait_limit = Some(std::time::Duration::from_secs(5));
    assert_eq!(answer(&decide(&f, &files)), (Kind::Wait, Some("6")));
    let (f, mut files) = after_held_round(1, NOW + 6_000);
    files.held_wait_limit = Some(std::time::Duration::from_secs(5));
    let d = decide(&f, &files);
    assert_eq!(answer(&d), (Kind::Stop, Some("0")), "{}", d.reason);
    assert!(
        d.reason.contains(
            "is held (robots.txt to ask again, Retry-After; see /c/logs/) for 7s more, longer \
             than a wait for held hosts lasts (max_retry_after, 5s); the next run goes on"
        ),
        "{}",
        d.reason
    );
    // An hour's max_retry_after: a hold of half an hour is waited out.
    let (f, mut files) = after_held_round(1, NOW + 1_800_000);
    files.held_wait_limit = Some(std::time::Duration::from_secs(3600));
    assert_eq!(answer(&decide(&f, &files)), (Kind::Wait, Some("1801")));
}

#[test]
fn the_held_wait_limit_is_read_from_crawl_toml_when_a_wait_is_decided() {
    let tmp = common::testutil::TempDir::new("cycle-held-limit");
    let crawl = CrawlDir::create(tmp.path()).unwrap();
    let limit = |crawl: &CrawlDir| read::on_disk(crawl).held_wait_limit();
    assert_eq!(
        limit(&crawl),
        Ok(std::time::Duration::from_secs(600)),
        "the default"
    );
    std::fs::write(
        crawl.config_path(),
        "[fetcher]\nmax_retry_after = \"90s\"\nmin_delay = \"1s\"\n",
    )
    .unwrap();
    assert_eq!(limit(&crawl), Ok(std::time::Duration::from_secs(90)));
    // A mistake in the file stops the crawl naming it, when a wait is
    // decided (another step reports it as its own).
    std::fs::write(
        crawl.config_path(),
        "[fetcher]\nmax_retry_after = \"soon\"\n",
    )
    .unwrap();
    let e = limit(&crawl).unwrap_err();
    assert!(
        e.contains("crawl.toml") && e.contains("max_retry_after"),
        "{e}"
    );
    assert!(read::facts(&crawl, i64::MAX, 0).is_ok());
}

#[test]
fn the_history_facts_come_from_the_saved_summary_when_its_bounds_are_in_force() {
    use crate::history::{Entry, SavedSummary, SummaryCounter};
    let tmp = common::testutil::TempDir::new("cycle-history-summary");
    let crawl = CrawlDir::create(tmp.path()).unwrap();
    // A list whose generation is missing: a whole read fails, so facts
    // that come back were taken from the summary beside it.
    let list = crawl.root().join(crate::history::FILE_NAME);
    let gone = crate::history::generations::GenerationList {
        generations: vec![crate::history::generations::Generation {
            name: crate::history::generations::generation_name(1),
            entries: 2,
        }],
    };
    gone.write(&list).unwrap();
    let now = common::timefmt::unix_millis(std::time::SystemTime::now());
    let mut counter = SummaryCounter::new(now, 0, true);
    for (url, due_ms) in [
        ("http://a.test/", now - 1000),
        ("http://a.test/b", now + 60_000),
    ] {
        counter.add(&Entry {
            host: "a.test".into(),
            url: url.into(),
            due_ms,
            ..Entry::default()
        });
    }
    let settings =
        crate::settings::Settings::load(crawl.clone(), &crate::flags::RoundFlags::default())
            .unwrap();
    let bounds = settings.schedule.bounds_key(&settings.host_rules);
    SavedSummary::write(&list, now, counter, bounds).unwrap();
    let h = read::on_disk(&crawl).history().unwrap();
    assert_eq!((h.urls, h.due_now), (2, 1), "{h:?}");
    assert_eq!(h.next_due_ms, Some(now + 60_000));
    // Other refetch bounds in force: their change moves due times, so the
    // history is read whole (and its missing generation said).
    std::fs::write(crawl.config_path(), "[segmenter]\nrecrawl_max = \"400d\"\n").unwrap();
    let e = read::on_disk(&crawl).history().unwrap_err();
    assert!(e.contains("missing"), "{e}");
}

#[test]
fn a_spent_crawl_byte_budget_stops_with_exit_code_0() {
    let mut f = facts();
    f.state.open = Some(open(4, Some("00002")));
    f.state.step = Some(step(Kind::Fetch, Some("00002"), Some(4), NOW - 1000));
    f.pending = vec![];
    f.unconsumed = vec!["00002".into()];
    let d = decide(&f, &Files::default().with_run("00002", "crawl-bytes", 3));
    assert_eq!(answer(&d), (Kind::Stop, Some("0")));
    assert!(d.reason.contains("max_crawl_bytes"), "{}", d.reason);
    assert!(d.state.open.is_some(), "the next run segments the run");
}

#[test]
fn a_held_round_with_nothing_left_to_wait_for_stops() {
    let (mut f, files) = after_held_round(1, NOW + 1000);
    f.pending = vec![];
    let d = decide(&f, &Files { ..files });
    assert_eq!(answer(&d), (Kind::Stop, Some("0")));
    assert!(
        d.reason
            .contains("every host left in segment 00001 is held")
    );
}

#[test]
fn held_wait_counts_whole_seconds_past_the_first_not_before() {
    let all_held = |at: i64| SegmentFacts {
        urls: 3,
        held_urls: 3,
        earliest_not_before_ms: Some(at),
    };
    assert_eq!(held_wait(&all_held(NOW + 4_500), NOW), Some(5));
    assert_eq!(held_wait(&all_held(NOW - 10), NOW), Some(1));
    let some_free = SegmentFacts {
        held_urls: 1,
        ..all_held(NOW + 60_000)
    };
    assert_eq!(held_wait(&some_free, NOW), Some(0));
    assert_eq!(held_wait(&SegmentFacts::default(), NOW), None);
}

#[test]
fn a_round_that_got_no_response_and_found_nothing_new_stops_the_run() {
    let mut f = facts();
    let mut last = journal_round(3, 0, "complete", NOW - 100);
    last.figures.new_urls = 5;
    f.rounds = vec![last];
    f.state.step = Some(step(Kind::Round, Some("3"), None, NOW - 10));
    let files = Files::default().with_segment("00002", 5);
    let d = decide(&f, &files);
    assert_eq!(answer(&d), (Kind::Stop, Some("0")));
    assert_eq!(
        d.reason,
        "nothing fetchable left in /c: no URL of segment 00003 got an HTTP response (see \
         /c/fetched/00003/crawl.log); its 5 URL(s) wait for the next run"
    );
    // A round that ran to its time limit too; not one cut by a budget.
    f.rounds[0].stop_reason = Some("time-limit".into());
    assert_eq!(answer(&decide(&f, &files)).0, Kind::Stop);
    f.rounds[0].stop_reason = Some("run-bytes".into());
    assert_eq!(answer(&decide(&f, &files)).0, Kind::Fetch);
    f.rounds[0].stop_reason = Some("complete".into());
    // Not with URLs in the backlog, nor when it found more than it had.
    let mut with_backlog = Files::default().with_segment("00002", 5);
    with_backlog.backlog = 1;
    assert_eq!(answer(&decide(&f, &with_backlog)).0, Kind::Fetch);
    f.rounds[0].figures.new_urls = 6;
    assert_eq!(answer(&decide(&f, &files)).0, Kind::Fetch);
    // A new driver (that round is not its own) fetches again.
    f.rounds[0].figures.new_urls = 5;
    f.since_ms = NOW;
    f.state.step.as_mut().unwrap().started_ms = NOW - 10_000;
    assert_eq!(answer(&decide(&f, &files)).0, Kind::Fetch);
}

#[test]
fn with_nothing_waiting_the_backlog_is_tried_once_then_the_run_stops() {
    let mut f = facts();
    f.pending = vec![];
    let files = Files {
        backlog: 12,
        ..Files::default()
    };
    let d = decide(&f, &files);
    assert_eq!(answer(&d), (Kind::Segment, None));
    assert_eq!(d.round, Some(4));
    assert!(d.state.open.as_ref().unwrap().tried);
    // The segmenter made nothing of it: stop; the round is given up (its
    // number is taken again, its log removed).
    f.state = d.state;
    let d = decide(&f, &files);
    assert_eq!(answer(&d), (Kind::Stop, Some("0")));
    assert_eq!(
        d.reason,
        "nothing to fetch now in /c: 12 URL(s) wait in the backlog for hosts that may not be \
         asked yet, or held by a budget (the `held` and `left waiting` lines of the last \
         round's log say which); a later run goes on"
    );
    assert_eq!(d.discarded, Some(4));
    assert_eq!(d.state.open, None);
    // A try recorded by an earlier driver does not count: try again.
    f.since_ms = NOW + 1;
    assert_eq!(answer(&decide(&f, &files)).0, Kind::Segment);
}

#[test]
fn with_nothing_waiting_and_nothing_due_the_run_stops_saying_why() {
    let mut f = facts();
    f.pending = vec![];
    let d = decide(&f, &Files::default());
    assert_eq!(
        (answer(&d), d.reason.as_str()),
        ((Kind::Stop, Some("0")), "nothing left to fetch in /c")
    );
    assert_eq!(d.discarded, None);
    let mut files = Files {
        history: HistoryFacts {
            urls: 5,
            due_now: 0,
            next_due_ms: Some(NOW + 86_400_000),
        },
        ..Files::default()
    };
    let d = decide(&f, &files);
    assert_eq!(
        d.reason,
        "nothing left to fetch in /c now: the crawl has ended: no new URL, and none of the 5 \
         URL(s) of the fetch history is due for a refetch before 2026-03-02T12:00:00Z: a run \
         after then refetches them"
    );
    // URLs due: a segment is tried.
    files.history.due_now = 2;
    assert_eq!(answer(&decide(&f, &files)).0, Kind::Segment);
}

/// A crawl whose last round (3, of another driver) fetched segment 00003,
/// got no HTTP response and wrote its 5 URLs again into segment 00004;
/// the history's next refetch is a day away.
fn ended_crawl() -> (Facts, Files) {
    let mut f = facts();
    let mut last = journal_round(3, 0, "complete", NOW - 100_000);
    last.figures.new_urls = 5;
    f.rounds = vec![last];
    f.segments = vec![
        "00001".into(),
        "00002".into(),
        "00003".into(),
        "00004".into(),
    ];
    f.pending = vec!["00004".into()];
    let mut files = Files::default().with_segment("00004", 5);
    files.history = HistoryFacts {
        urls: 40,
        due_now: 0,
        next_due_ms: Some(NOW + 86_400_000),
    };
    (f, files)
}

#[test]
fn a_crawl_that_has_ended_says_so_without_a_round() {
    let (f, files) = ended_crawl();
    let d = decide(&f, &files);
    assert_eq!(answer(&d), (Kind::Stop, Some("0")));
    assert_eq!(
        d.reason,
        "nothing left to fetch in /c now: the crawl has ended: round 3 got no HTTP response \
         (see /c/fetched/00003/crawl.log) and found nothing new; its 5 URL(s) left wait in \
         segment(s) 00004 for hosts that did not answer, and none of the 40 URL(s) of the \
         fetch history is due for a refetch before 2026-03-02T12:00:00Z: a run after then \
         tries them again (`fetcher fetch /c` tries them now)"
    );
    assert_eq!((d.ended, d.discarded), (None, None));
    assert_eq!(d.state.open, None, "no round is opened");

    // Any of these and the segment is fetched: a refetch due now; URLs
    // in the backlog; a round that found more than it had, or whose hosts
    // were held; a segment it did not write (seeds injected since).
    let fetches = |f: &Facts, files: &Files| answer(&decide(f, files)).0 == Kind::Fetch;
    let mut due = Files::default().with_segment("00004", 5);
    due.history = HistoryFacts {
        due_now: 1,
        ..files.history
    };
    assert!(fetches(&f, &due));
    let mut backlog = Files::default().with_segment("00004", 5);
    backlog.history = files.history;
    backlog.backlog = 3;
    assert!(fetches(&f, &backlog));
    for change in [
        |f: &mut Facts| f.rounds[0].figures.new_urls = 6,
        |f: &mut Facts| f.rounds[0].pages = 1,
        |f: &mut Facts| f.rounds[0].stop_reason = Some("held".into()),
        |f: &mut Facts| f.pending.push("00005".into()),
    ] {
        let mut g = f.clone();
        change(&mut g);
        let mut files = Files::default()
            .with_segment("00004", 5)
            .with_segment("00005", 1);
        files.history = due.history;
        files.history.due_now = 0;
        assert!(fetches(&g, &files), "{:?}", g.rounds);
    }
    // A fetch of it that was cut goes on.
    let cut = Files {
        history: files.history,
        ..Files::default()
            .with_segment("00004", 5)
            .with_run("00004", "", 0)
    };
    assert_eq!(answer(&decide(&f, &cut)).0, Kind::Resume);
}

#[test]
fn a_round_already_in_the_journal_is_not_open_any_more() {
    let mut f = facts();
    // A crash between the journal's line of round 3 and round.json.
    f.rounds = vec![journal_round(3, 1, "complete", NOW - 100)];
    f.state.open = Some(open(3, Some("00001")));
    let d = decide(&f, &Files::default().with_segment("00002", 5));
    assert_eq!(answer(&d), (Kind::Fetch, Some("00002")));
    assert_eq!(d.state.open.unwrap().number, 4);
}

#[test]
fn errors_reading_a_file_stop_the_crawl_naming_it() {
    let mut f = facts();
    f.state.step = Some(step(Kind::Injected, Some("3"), None, NOW - 10));
    f.state.step.as_mut().unwrap().kind = Kind::Inject;
    let d = decide(&f, &Files::default());
    assert_eq!(answer(&d), (Kind::Stop, Some("1")));
    assert!(
        d.reason.contains("segments/00001.v5.tsv.zst: no such file"),
        "{}",
        d.reason
    );
}
