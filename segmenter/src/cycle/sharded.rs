//! A sharded crawl as one crawl for [`super::decide`]: the same rules and
//! round lines as for one machine, over every shard at once. A round of a
//! sharded crawl is two arrays of tasks: a fetch (each shard fetches the
//! round's segment if it waits there, then maps its complete runs) and a
//! reduce (each shard writes its next segment), so that:
//!
//! - a round fetches one segment ID in every shard that has it (the
//!   oldest waiting in some shard): each shard numbers its own segments,
//!   and one that had no URL for a round numbers them behind the others,
//!   until it catches up;
//! - a segment ID waits to be fetched ([`Facts::pending`]) while some shard
//!   has not fetched it to its end, or fetched it without mapping the run
//!   (the fetch task maps it: it is not done before);
//! - a fetched run waits to be consumed ([`Facts::unconsumed`]) once every
//!   shard that has its segment fetched and mapped it and some shard's
//!   reduce has not consumed it yet: the `segment` step is the reduce array;
//! - the [`Lookup`] answers add up the shards (URLs, pages, figures, the
//!   backlog, the fetch history) that fetch the segment in the round open
//!   (a shard's run that ended before the round opened is an earlier
//!   round's, and a segment written after it opened, by its reduce, is the
//!   next round's); a run is complete when it is in every such shard, and ends
//!   for the reason that says most (a signal, the disk, a budget; held
//!   only when every shard was held).
//!
//! The round journal, `round.json`, `STOP` and the round logs are the
//! crawl root's, as for one machine.

use std::collections::BTreeSet;

use common::crawldir::CrawlDir;
use common::fetched::RunStatus;
use common::rounds::Figures;
use common::shards::Shards;

use super::read::on_disk;
use super::{Facts, HistoryFacts, Lookup, SegmentFacts};
use crate::error::Error;

/// Which shards a question is about: every shard (the crawl as one, the
/// Slurm driver's view), or one shard alone (`segmenter next --shard J`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// Every shard.
    All,
    /// Shard J alone.
    Shard(u32),
}

impl Part {
    /// The shard views of `crawl` this part covers.
    fn views(self, crawl: &CrawlDir, shards: &Shards) -> Vec<CrawlDir> {
        match self {
            Part::All => shards.views(crawl),
            Part::Shard(j) => vec![crawl.shard(j)],
        }
    }

    /// True if shard `j` is in this part.
    fn covers(self, j: u32) -> bool {
        self == Part::All || self == Part::Shard(j)
    }
}

/// Reads the [`Facts`] of the sharded crawl `crawl` (its root) from the
/// shards of `part`; `since_ms` and `exit_code` are the driver's. The
/// segments are every shard's, whatever the part (a shard with none of
/// its own is not a crawl to inject).
pub fn facts(
    crawl: &CrawlDir,
    shards: &Shards,
    part: Part,
    since_ms: i64,
    exit_code: i32,
) -> Result<Facts, Error> {
    let mut facts = super::read::facts(crawl, since_ms, exit_code)?;
    facts.sharded = true;
    let mut segments = BTreeSet::new();
    let mut pending = BTreeSet::new();
    let mut waiting = BTreeSet::new();
    for j in 0..shards.shards {
        let view = crawl.shard(j);
        let (ids, not_fetched, unconsumed) = crate::state::runs::segments_and_runs(&view)?;
        segments.extend(ids);
        if !part.covers(j) {
            continue;
        }
        pending.extend(not_fetched);
        for id in unconsumed {
            if crate::state::mapped::is_mapped(&view, &id) {
                waiting.insert(id);
            } else {
                pending.insert(id);
            }
        }
    }
    facts.segments = segments.into_iter().collect();
    facts.unconsumed = waiting.difference(&pending).cloned().collect();
    facts.pending = pending.into_iter().collect();
    Ok(facts)
}

/// The answers of [`Lookup`] for a sharded crawl: the shards', added up.
pub struct OnShards {
    views: Vec<CrawlDir>,
    /// When the round open began, Unix milliseconds (none open: `i64::MAX`,
    /// every segment waiting is the next round's, no complete run is).
    round_ms: i64,
}

/// The [`Lookup`] of the shards of `part` of `crawl`, whose [`Facts`] are
/// `facts`.
pub fn on_shards(crawl: &CrawlDir, shards: &Shards, part: Part, facts: &Facts) -> OnShards {
    let journaled = facts.rounds.last().map_or(0, |r| r.number);
    let open = facts.state.open.as_ref().filter(|o| o.number > journaled);
    OnShards {
        views: part.views(crawl, shards),
        round_ms: open.map_or(i64::MAX, |o| o.started_ms),
    }
}

/// A shard that fetches a segment in the round open, with the text of its
/// run's `DONE` file (`None`: not complete, or not started), read once.
struct Having<'a> {
    view: &'a CrawlDir,
    done: Option<String>,
}

impl OnShards {
    /// The shards that fetch segment `id` in this round: its run is not
    /// complete, or was completed since the round began, or it waits there
    /// since before the round began (not written by the round's reduce).
    /// Each `DONE` is read once, here; the error names it.
    fn having(&self, id: &str) -> Result<Vec<Having<'_>>, String> {
        let mut having = Vec::new();
        for view in &self.views {
            let done = common::fetched::read_done(view, id).map_err(|e| e.to_string())?;
            let fetches = match &done {
                Some(text) => finished_ms(text).is_none_or(|ms| ms >= self.round_ms),
                None if view.fetched_dir(id).exists() => true,
                None => {
                    let written =
                        std::fs::metadata(view.segment_path(id)).and_then(|m| m.modified());
                    written.is_ok_and(|t| common::timefmt::unix_millis(t) < self.round_ms)
                }
            };
            if fetches {
                having.push(Having { view, done });
            }
        }
        Ok(having)
    }
}

/// When a run ended, from its `DONE` file's `finished` line.
fn finished_ms(done: &str) -> Option<i64> {
    let at = common::fetched::done_field(done, "finished ")?;
    common::timefmt::parse_iso(at.trim()).map(common::timefmt::unix_millis)
}

impl Lookup for OnShards {
    fn fetched(&self, id: &str) -> Result<Option<RunStatus>, String> {
        let mut runs = Vec::new();
        let mut done = true;
        for Having { view, done: text } in self.having(id)? {
            let run =
                RunStatus::read_with_done(view, id, text.as_deref()).map_err(|e| e.to_string())?;
            match run {
                Some(run) => {
                    let mapped = run.done && crate::state::mapped::is_mapped(view, id);
                    done &= mapped || view_consumed(view, id)?;
                    runs.push(run);
                }
                None => done = false,
            }
        }
        if runs.is_empty() {
            return Ok(None);
        }
        Ok(Some(sum_runs(id, &runs, done)))
    }

    fn segment(&self, id: &str) -> Result<SegmentFacts, String> {
        let mut sum = SegmentFacts::default();
        for Having { view, .. } in self.having(id)? {
            if !view.segment_path(id).exists() {
                // (Pruned after its fetch.)
                continue;
            }
            let s = on_disk(view).segment(id)?;
            sum.urls += s.urls;
            sum.held_urls += s.held_urls;
            sum.earliest_not_before_ms =
                earliest(sum.earliest_not_before_ms, s.earliest_not_before_ms);
        }
        Ok(sum)
    }

    fn figures(&self, id: &str) -> Result<Figures, String> {
        let mut sum = Figures::default();
        for Having { view, .. } in self.having(id)? {
            let f = on_disk(view).figures(id)?;
            add_figures(&mut sum, &f);
        }
        Ok(sum)
    }

    fn backlog_urls(&self) -> Result<u64, String> {
        let mut sum = 0;
        for view in &self.views {
            sum += on_disk(view).backlog_urls()?;
        }
        Ok(sum)
    }

    fn held_wait_limit(&self) -> Result<std::time::Duration, String> {
        // (crawl.toml is the crawl root's, the same from every view.)
        match self.views.first() {
            Some(view) => on_disk(view).held_wait_limit(),
            None => Ok(common::politeness::Policy::default().max_retry_after),
        }
    }

    fn history(&self) -> Result<HistoryFacts, String> {
        let mut sum = HistoryFacts::default();
        for view in &self.views {
            let h = on_disk(view).history()?;
            sum.urls += h.urls;
            sum.due_now += h.due_now;
            sum.next_due_ms = earliest(sum.next_due_ms, h.next_due_ms);
        }
        Ok(sum)
    }
}

/// True if shard `view`'s reduce consumed its run `id`.
fn view_consumed(view: &CrawlDir, id: &str) -> Result<bool, String> {
    let consumed =
        crate::state::runs::read_consumed(&view.consumed_path()).map_err(|e| e.to_string())?;
    Ok(consumed.iter().any(|c| c == id))
}

/// The earlier of two times (either may be missing).
fn earliest(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The shards' runs of segment `id` as one run, complete if `done`.
pub fn sum_runs(id: &str, runs: &[RunStatus], done: bool) -> RunStatus {
    let mut sum = RunStatus {
        segment: id.to_string(),
        done,
        ..RunStatus::default()
    };
    for run in runs {
        sum.attempts += run.attempts;
        sum.pages += run.pages;
        sum.robots += run.robots;
        sum.errors += run.errors;
        sum.bad_lines += run.bad_lines;
        sum.uploaded += run.uploaded;
        for (to, from) in [
            (&mut sum.stop_detail, &run.stop_detail),
            (&mut sum.cuts, &run.cuts),
        ] {
            if !from.is_empty() {
                if !to.is_empty() {
                    to.push(' ');
                }
                to.push_str(from);
            }
        }
    }
    if done {
        sum.stop_reason = stop_reason(runs);
    }
    sum
}

/// Why the shards' runs ended, as one reason: the first of a signal, the
/// disk floor or a budget that some shard met; else `held` if every shard
/// was held; else the first reason other than `held`.
fn stop_reason(runs: &[RunStatus]) -> String {
    let reasons: Vec<&str> = runs.iter().map(|r| r.stop_reason.as_str()).collect();
    for strong in ["signal", "disk", "crawl-bytes", "run-bytes"] {
        if reasons.contains(&strong) {
            return strong.to_string();
        }
    }
    reasons
        .iter()
        .find(|r| **r != "held" && !r.is_empty())
        .or(reasons.first())
        .map_or_else(String::new, |r| r.to_string())
}

/// Adds the figures of one shard's reduce to `sum`; the segments written
/// are counted as one shard's (each shard numbers its own alike).
fn add_figures(sum: &mut Figures, f: &Figures) {
    sum.new_urls += f.new_urls;
    sum.new_segments = sum.new_segments.max(f.new_segments);
    sum.history_new += f.history_new;
    sum.refreshed_unchanged += f.refreshed_unchanged;
    sum.refreshed_changed += f.refreshed_changed;
    sum.retired += f.retired;
    sum.sitemaps_read += f.sitemaps_read;
    sum.sitemap_urls += f.sitemap_urls;
    sum.sitemap_urls_new += f.sitemap_urls_new;
    sum.sitemap_urls_rejected += f.sitemap_urls_rejected;
    sum.bad_sitemaps += f.bad_sitemaps;
}

#[cfg(test)]
mod tests {
    use common::crawldir::CONSUMED_LIST;
    use common::listfile;
    use common::testutil::TempDir;

    use super::*;
    use crate::cycle::{Decision, Kind, decide};

    /// A crawl of 4 shards, every one with segment 00001 waiting.
    fn crawl(tag: &str) -> (TempDir, CrawlDir, Shards) {
        let tmp = TempDir::new(&format!("cycle-sharded-{tag}"));
        let toml = "version = 1\nshards = 4\nkey = \"host\"\n";
        std::fs::write(tmp.join("shards.toml"), toml).unwrap();
        let crawl = CrawlDir::new(tmp.path());
        let shards = Shards::load(tmp.path()).unwrap();
        for j in 0..4 {
            segment(&crawl, j, "00001");
        }
        (tmp, crawl, shards)
    }

    /// Shard `j` gets segment `id` (its URLs are not read by these rules).
    fn segment(crawl: &CrawlDir, j: u32, id: &str) {
        let path = crawl.shard(j).segment_path(id);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, b"").unwrap();
    }

    /// Shard `j` fetched `id` to its end, and mapped it if `mapped`.
    fn fetched(crawl: &CrawlDir, j: u32, id: &str, mapped: bool) {
        fetched_at(crawl, j, id, mapped, "2099-01-01T00:00:00Z", 0);
    }

    /// Shard `j` fetched `id` to its end at `finished`, getting `pages`
    /// HTTP responses, and mapped it if `mapped`.
    fn fetched_at(crawl: &CrawlDir, j: u32, id: &str, mapped: bool, finished: &str, pages: u32) {
        let dir = crawl.shard(j).fetched_dir(id);
        std::fs::create_dir_all(dir.join("mapped")).unwrap();
        let log: String = (0..pages)
            .map(|n| {
                format!("{finished}\t200\t10\t5\ttext/html\thttp://h{j}.test/{n}\tlink\t1\t-\n")
            })
            .collect();
        std::fs::write(dir.join("crawl.log"), log).unwrap();
        let done = format!("segment {id}\nstop_reason complete\nfinished {finished}\n");
        std::fs::write(dir.join("DONE"), done).unwrap();
        if mapped {
            std::fs::write(dir.join("mapped/DONE"), "segmenter-mapped v3\n").unwrap();
        }
    }

    /// Shard `j`'s reduce consumed its run `id`.
    fn consumed(crawl: &CrawlDir, j: u32, id: &str) {
        let path = crawl.shard(j).consumed_path();
        let mut ids = crate::state::runs::read_consumed(&path).unwrap();
        ids.push(id.to_string());
        std::fs::write(path, listfile::render(&CONSUMED_LIST, ids)).unwrap();
    }

    /// What the driver is told now, its last step (recorded in `last`)
    /// having ended with `exit_code`.
    fn ask(crawl: &CrawlDir, shards: &Shards, last: &Decision, exit_code: i32) -> Decision {
        let mut facts = facts(crawl, shards, Part::All, 0, exit_code).unwrap();
        facts.state = last.state.clone();
        decide(&facts, &on_shards(crawl, shards, Part::All, &facts))
    }

    /// What `next --shard` says for the shards of `part`, the driver
    /// having been told `last`: as the driver (`--since` before it), or
    /// as anyone else (a task, an operator: `own` false).
    fn ask_part(
        crawl: &CrawlDir,
        shards: &Shards,
        part: Part,
        last: &Decision,
        own: bool,
    ) -> Decision {
        let since = if own { 0 } else { i64::MAX };
        let mut facts = facts(crawl, shards, part, since, 0).unwrap();
        facts.state = last.state.clone();
        decide(&facts, &on_shards(crawl, shards, part, &facts))
    }

    #[test]
    fn a_round_is_a_fetch_array_then_a_reduce_array_judged_from_the_files() {
        let (_tmp, crawl, shards) = crawl("round");
        let first = ask(&crawl, &shards, &blank(), 0);
        assert_eq!(
            (first.kind, first.arg.as_deref()),
            (Kind::Fetch, Some("00001"))
        );
        assert_eq!(first.round, Some(1));
        // The fetch array ended well, but shard 3 did not map its run.
        for j in 0..4 {
            fetched(&crawl, j, "00001", j != 3);
        }
        let d = ask(&crawl, &shards, &first, 0);
        assert_eq!(
            (d.kind, d.arg.as_deref()),
            (Kind::Stop, Some("1")),
            "{}",
            d.reason
        );
        assert!(
            d.reason.starts_with(
                "the fetch array of 00001 ended without completing the run (in every shard \
                 that has it: fetched/00001/DONE and fetched/00001/mapped/DONE under "
            ),
            "{}",
            d.reason
        );
        // Once every shard mapped it: the reduce array.
        fetched(&crawl, 3, "00001", true);
        let reduce = ask(&crawl, &shards, &first, 0);
        assert_eq!(reduce.kind, Kind::Segment, "{}", reduce.reason);
        assert_eq!(reduce.round, Some(1));
        // Shard 3's reduce was cancelled before it ran: the array is gone
        // from the queue, but the round is not done.
        for j in 0..3 {
            consumed(&crawl, j, "00001");
        }
        let d = ask(&crawl, &shards, &reduce, 0);
        assert_eq!(
            (d.kind, d.arg.as_deref()),
            (Kind::Stop, Some("1")),
            "{}",
            d.reason
        );
        assert!(
            d.reason
                .starts_with("the reduce array ended without consuming the fetched run(s) 00001"),
            "{}",
            d.reason
        );
        // Asked shard by shard, the one behind says so; the others have
        // ended their part of the round.
        let d = ask_part(&crawl, &shards, Part::Shard(3), &reduce, true);
        assert_eq!((d.kind, d.arg.as_deref()), (Kind::Stop, Some("1")));
        assert!(d.reason.contains("without consuming"), "{}", d.reason);
        let d = ask_part(&crawl, &shards, Part::Shard(3), &reduce, false);
        assert_eq!(d.kind, Kind::Segment, "{}", d.reason);
        let d = ask_part(&crawl, &shards, Part::Shard(1), &reduce, true);
        assert_eq!((d.kind, d.arg.as_deref()), (Kind::Round, Some("1")));
        // A driver started afresh runs the reduce again.
        let again = ask(&crawl, &shards, &blank(), 0);
        assert_eq!(again.kind, Kind::Segment, "{}", again.reason);
        consumed(&crawl, 3, "00001");
        let end = ask(&crawl, &shards, &reduce, 0);
        assert_eq!((end.kind, end.arg.as_deref()), (Kind::Round, Some("1")));
        assert!(
            end.reason.starts_with("round 1: segment 00001"),
            "{}",
            end.reason
        );
        let round = end.ended.as_ref().expect("a journal line");
        assert_eq!(round.segment.as_deref(), Some("00001"));
        // A second run numbers its round on from the journal.
        crate::cycle::read::record(&crawl, &end).unwrap();
        for j in 0..4 {
            segment(&crawl, j, "00002");
        }
        let next = ask(&crawl, &shards, &blank(), 0);
        assert_eq!(
            (next.kind, next.arg.as_deref()),
            (Kind::Fetch, Some("00002"))
        );
        assert_eq!(next.round, Some(2));
    }

    #[test]
    fn a_shard_behind_is_fetched_before_the_others_go_on() {
        let (_tmp, crawl, shards) = crawl("behind");
        for j in 0..4 {
            fetched(&crawl, j, "00001", true);
            consumed(&crawl, j, "00001");
        }
        for j in 1..4 {
            segment(&crawl, j, "00002");
        }
        // Shard 0 is a round behind: its run of 00001 was cut.
        std::fs::remove_file(crawl.shard(0).fetched_dir("00001").join("DONE")).unwrap();
        let d = ask(&crawl, &shards, &blank(), 0);
        assert_eq!(
            (d.kind, d.arg.as_deref()),
            (Kind::Resume, Some("00001")),
            "{}",
            d.reason
        );
    }

    #[test]
    fn a_shard_numbering_its_segments_behind_is_counted_in_its_own_round() {
        let (_tmp, crawl, shards) = crawl("out-of-step");
        // Round 1: shards 0 and 1 had the seeds and fetched 00001; their
        // reduce wrote 00002, and the first segment of shards 2 and 3.
        for j in 0..2 {
            fetched_at(&crawl, j, "00001", true, "2020-01-01T00:00:00Z", 5);
            consumed(&crawl, j, "00001");
            segment(&crawl, j, "00002");
        }
        let ended = common::rounds::Round {
            number: 1,
            segment: Some("00001".into()),
            started_ms: 0,
            ended_ms: 1,
            end: common::rounds::End::Done,
            urls: Some(2),
            pages: 10,
            figures: Figures::default(),
            stop_reason: Some("complete".into()),
            fetch_ms: 0,
            segmenter_ms: 0,
        };
        common::rounds::append(&crawl, &ended).unwrap();
        // Round 2 fetches 00001 where it waits: shards 2 and 3.
        let fetch = ask(&crawl, &shards, &blank(), 0);
        assert_eq!(
            (fetch.kind, fetch.arg.as_deref()),
            (Kind::Fetch, Some("00001"))
        );
        assert_eq!(fetch.round, Some(2));
        for j in 2..4 {
            fetched_at(&crawl, j, "00001", true, "2099-01-01T00:00:00Z", 3);
        }
        let reduce = ask(&crawl, &shards, &fetch, 0);
        assert_eq!(reduce.kind, Kind::Segment, "{}", reduce.reason);
        for j in 2..4 {
            consumed(&crawl, j, "00001");
        }
        let end = ask(&crawl, &shards, &reduce, 0);
        assert_eq!((end.kind, end.arg.as_deref()), (Kind::Round, Some("2")));
        // Its pages are those of shards 2 and 3, not round 1's again.
        assert_eq!(end.ended.as_ref().unwrap().pages, 6, "{}", end.reason);
    }

    #[test]
    fn one_shard_is_asked_by_the_same_rules_over_its_own_files() {
        let (_tmp, crawl, shards) = crawl("one-shard");
        // Round 1 fetches 00001 everywhere; shards 0 and 2 are done with
        // it, shard 1 is fetching, shard 3's run was cut and waits.
        let fetch = ask(&crawl, &shards, &blank(), 0);
        for j in [0, 2] {
            fetched_at(&crawl, j, "00001", true, "2099-01-01T00:00:00Z", 4);
        }
        std::fs::create_dir_all(crawl.shard(1).fetched_dir("00001")).unwrap();
        let part = |j, own| ask_part(&crawl, &shards, Part::Shard(j), &fetch, own);
        // Shard 0 is mapped and waits for its reduce; its round line is its own.
        assert_eq!(
            part(0, true).kind,
            Kind::Segment,
            "{}",
            part(0, true).reason
        );
        consumed(&crawl, 0, "00001");
        let d = part(0, true);
        assert_eq!((d.kind, d.arg.as_deref()), (Kind::Round, Some("1")));
        assert_eq!(d.ended.as_ref().unwrap().pages, 4, "shard 0's pages only");
        // What shards 1 and 3's fetch tasks are told: fetch on.
        assert_eq!(
            (part(1, false).kind, part(1, false).arg.as_deref()),
            (Kind::Resume, Some("00001"))
        );
        assert_eq!(
            (part(3, false).kind, part(3, false).arg.as_deref()),
            (Kind::Fetch, Some("00001"))
        );
        let whole = ask(&crawl, &shards, &blank(), 0);
        assert_eq!(
            (whole.kind, whole.arg.as_deref()),
            (Kind::Resume, Some("00001"))
        );
        // A shard with nothing of its own is not a crawl to inject: it
        // has nothing to do.
        let tmp = TempDir::new("cycle-sharded-empty-shard");
        std::fs::write(
            tmp.join("shards.toml"),
            "version = 1\nshards = 2\nkey = \"host\"\n",
        )
        .unwrap();
        let (crawl, shards) = (CrawlDir::new(tmp.path()), Shards::load(tmp.path()).unwrap());
        segment(&crawl, 0, "00001");
        crawl.shard(1).create_subdirs().unwrap();
        let d = ask_part(&crawl, &shards, Part::Shard(1), &blank(), false);
        assert_eq!((d.kind, d.arg.as_deref()), (Kind::Stop, Some("0")));
        assert!(
            d.reason.starts_with("nothing left to fetch"),
            "{}",
            d.reason
        );
        let d = ask_part(&crawl, &shards, Part::Shard(0), &blank(), false);
        assert_eq!((d.kind, d.arg.as_deref()), (Kind::Fetch, Some("00001")));
    }

    #[test]
    fn the_shards_runs_end_for_the_reason_that_says_most() {
        let run = |reason: &str, pages| RunStatus {
            done: true,
            stop_reason: reason.into(),
            pages,
            ..RunStatus::default()
        };
        let sum = sum_runs("00004", &[run("held", 0), run("held", 0)], true);
        assert_eq!((sum.stop_reason.as_str(), sum.pages), ("held", 0));
        let sum = sum_runs("00004", &[run("held", 0), run("complete", 7)], true);
        assert_eq!((sum.stop_reason.as_str(), sum.pages), ("complete", 7));
        let sum = sum_runs("00004", &[run("complete", 3), run("signal", 2)], true);
        assert_eq!((sum.stop_reason.as_str(), sum.pages), ("signal", 5));
        let sum = sum_runs("00004", &[run("complete", 3), run("", 2)], false);
        assert_eq!((sum.stop_reason.as_str(), sum.done), ("", false));
    }

    /// No step handed out yet.
    fn blank() -> Decision {
        Decision {
            kind: Kind::Stop,
            arg: None,
            round: None,
            reason: String::new(),
            state: crate::cycle::DriverState::default(),
            ended: None,
            discarded: None,
        }
    }
}
