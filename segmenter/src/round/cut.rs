//! The round's cuts across hosts: what the round may schedule in all,
//! when a host's cap is not the only limit, and which URLs then wait.
//!
//! Two cuts take the best URLs of the whole round rather than of one host:
//! - `crawl-pages`: the crawl's page budget (`max_crawl_pages`) lets in
//!   what is left of it (under `order = "score"`, its pace: [`paced`];
//!   the URLs the pace holds back are counted under this cut too): the
//!   URLs of the fetch history and of the segments not yet fetched count
//!   against it, refetches are not limited;
//! - `segment-size`: with `order = "score"`, the round holds at most
//!   `max_segment_size` × `partitions` URLs (partitions are uneven, so
//!   one may still get more than `max_segment_size`, written as several
//!   segments; with `order = "discovery"` a larger round is written as
//!   several segments instead, as before).
//!
//! The selection goes host by host and cannot know the best URLs of hosts
//! it has not read yet, so the cut is a second pass: while the segments
//! are written, [`Ranks`] counts the new URLs by rank ([`crate::round::score::rank`]:
//! the weighted score under `score`, the hops under `discovery`), in one
//! counter per distinct rank. If more came than the cut lets in, the
//! lowest rank let in (and how many of its URLs) follows from the counts;
//! [`cut`] then reads the staged segments once more, in host order, keeps
//! the URLs above that rank and the first of those at it, and sends the
//! rest to the backlog, merged into the staged one host by host. The extra
//! cost, only in a round that is cut, is one more read and write of its
//! segments and its backlog.

use std::path::{Path, PathBuf};

use common::segment::{FILE_SUFFIX, SegmentReader, SegmentRecord, Via};

use crate::error::Error;
use crate::round::backlog::host_key;
use crate::round::caps::Fate;
use crate::round::output::{Output, Written};
use crate::round::report::HeldBack;
use crate::round::score::{Ranks, Weights, rank};

/// Which cut left URLs waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// The crawl's page budget (`max_crawl_pages`), paced or not.
    CrawlPages,
    /// The round's size (`max_segment_size`, under `order = "score"`).
    SegmentSize,
}

impl Cut {
    /// Its name in the report.
    pub fn name(self) -> &'static str {
        match self {
            Cut::CrawlPages => "crawl-pages",
            Cut::SegmentSize => "segment-size",
        }
    }
}

/// What the round may schedule, and the cut that says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quota {
    /// New URLs the round may schedule in all.
    pub urls: u64,
    /// The cut.
    pub cut: Cut,
}

impl Quota {
    /// The smaller of the page budget's room and the round's size (either
    /// may be absent); `None` when neither applies.
    pub fn of(budget_left: Option<u64>, size_left: Option<u64>) -> Option<Quota> {
        match (budget_left, size_left) {
            (Some(b), Some(s)) if s < b => Some(Quota {
                urls: s,
                cut: Cut::SegmentSize,
            }),
            (Some(b), _) => Some(Quota {
                urls: b,
                cut: Cut::CrawlPages,
            }),
            (None, Some(s)) => Some(Quota {
                urls: s,
                cut: Cut::SegmentSize,
            }),
            (None, None) => None,
        }
    }
}

/// What a round under `order = "score"` may schedule of the `left` URLs
/// of a page budget of `max`: `pace` of what is left, at least a
/// sixteenth of the budget (and at least one URL), at most what is left.
///
/// Spending the whole budget in the first rounds that can fill it lets the
/// per-host caps choose (every host its best few, the tail's as much as the
/// hubs'), with the in-links of the few pages fetched by then. Spent over
/// more rounds, each round's cut across hosts ranks the waiting URLs with
/// the in-links of every page fetched before it: the budget's halves go to
/// the URLs best linked by then. The floor bounds the rounds it adds: about
/// log2(16) = 4 at a pace of one half.
pub fn paced(left: u64, max: u64, pace: f64) -> u64 {
    if !(pace > 0.0 && pace < 1.0) {
        return left;
    }
    let share = (left as f64 * pace).ceil() as u64;
    share.max(max.div_ceil(16)).max(1).min(left)
}

/// Where the cut rewrites the round's files.
pub struct Staged<'a> {
    /// The staged segments' directory.
    pub segments_dir: &'a Path,
    /// The staged backlog.
    pub backlog: &'a Path,
    /// A scratch directory of the round's.
    pub scratch: &'a Path,
    /// The round's first segment number, partitions and segment size.
    pub number: u32,
    pub partitions: u32,
    pub max_size: u64,
}

/// Cuts the staged round, whose files are `written`, to `quota` new URLs,
/// the best by `ranks`; `written` then says what the files hold after the
/// cut. Returns the hosts and URLs the cut sent to the backlog, or `None`
/// if the round holds no more than the quota (nothing is rewritten).
pub fn cut(
    staged: &Staged,
    written: &mut Written,
    ranks: &Ranks,
    quota: Quota,
) -> Result<Option<HeldBack>, Error> {
    let Some((lowest, mut ties)) = ranks.threshold(quota.urls) else {
        return Ok(None);
    };
    std::fs::create_dir_all(staged.scratch).map_err(Error::io(staged.scratch))?;
    // The segments as the selection wrote them, moved aside.
    let mut uncut = Vec::new();
    for (id, _) in &written.segments {
        let from = staged.segments_dir.join(format!("{id}{FILE_SUFFIX}"));
        let to = staged.scratch.join(format!("uncut-{id}{FILE_SUFFIX}"));
        std::fs::rename(&from, &to).map_err(Error::io(&from))?;
        uncut.push(to);
    }
    let demoted = staged.scratch.join(format!("demoted{FILE_SUFFIX}"));
    let mut out = Output::new(
        staged.segments_dir,
        &demoted,
        staged.number,
        staged.partitions,
        staged.max_size,
    )?;
    let mut weights = Weights::new(ranks.rules().clone());
    let mut held = HeldBack::default();
    let mut host = (String::new(), 0u64);
    let mut merge = PrefixMerge::open(&uncut)?;
    let mut rec = SegmentRecord::default();
    while merge.next(&mut rec)? {
        let mut keep = rec.via == Via::Recrawl;
        if !keep {
            let r = rank(ranks.order(), &rec, weights.of(&rec.host));
            keep = r > lowest || (r == lowest && ties > 0);
            ties -= u64::from(keep && r == lowest);
        }
        if keep {
            out.write(Fate::Segment, &rec)?;
            continue;
        }
        if host.0 != rec.host {
            if host.1 > 0 {
                held.add(&host.0, host.1);
            }
            host = (rec.host.clone(), 0);
        }
        host.1 += 1;
        rec.via = match rec.via {
            Via::SitemapFile => Via::SitemapFile,
            _ => Via::Backlog,
        };
        rec.not_before = None;
        out.write(Fate::Backlog, &rec)?;
    }
    if host.1 > 0 {
        held.add(&host.0, host.1);
    }
    let mut after = out.finish()?;
    for path in &uncut {
        std::fs::remove_file(path).map_err(Error::io(path))?;
    }
    // The backlog: the selection's, and the URLs cut, host by host.
    let merged = staged.scratch.join(format!("backlog{FILE_SUFFIX}"));
    let mut writer = common::segment::SegmentWriter::create(&merged)?;
    let mut both = PrefixMerge::open(&[staged.backlog.to_path_buf(), demoted.clone()])?;
    while both.next(&mut rec)? {
        writer.write(&rec)?;
    }
    after.backlog = writer.finish()?;
    std::fs::rename(&merged, staged.backlog).map_err(Error::io(staged.backlog))?;
    std::fs::remove_file(&demoted).map_err(Error::io(&demoted))?;
    // The scores: those cut were counted as scheduled in the first pass.
    after.waiting_scores.merge(&written.waiting_scores);
    *written = after;
    Ok(Some(held))
}

/// The URLs of segments not yet fetched that count against the page
/// budget: all but the refetches, whose URLs the fetch history counts.
pub fn lines_in(paths: &[PathBuf]) -> Result<u64, Error> {
    let mut n = 0;
    let mut rec = SegmentRecord::default();
    for path in paths {
        let mut r = SegmentReader::open(path)?;
        loop {
            match r.read_next(&mut rec) {
                Ok(true) => n += u64::from(rec.via != Via::Recrawl),
                Ok(false) => break,
                Err(e) if !e.is_fatal() => n += 1,
                Err(e) => return Err(e.into()),
            }
        }
    }
    Ok(n)
}

/// Segment-format files each sorted by host (`domain TAB host TAB`), read
/// as one in that order; a host in several comes from the first, then the
/// next.
struct PrefixMerge {
    inputs: Vec<Input>,
}

struct Input {
    reader: SegmentReader,
    rec: SegmentRecord,
    prefix: Vec<u8>,
    have: bool,
}

impl Input {
    fn advance(&mut self) -> Result<(), Error> {
        self.have = self.reader.read_next(&mut self.rec)?;
        if self.have {
            host_key(&self.rec.host, &mut self.prefix);
        }
        Ok(())
    }
}

impl PrefixMerge {
    fn open(paths: &[PathBuf]) -> Result<PrefixMerge, Error> {
        let mut inputs = Vec::new();
        for path in paths {
            let mut input = Input {
                reader: SegmentReader::open(path)?,
                rec: SegmentRecord::default(),
                prefix: Vec::new(),
                have: false,
            };
            input.advance()?;
            inputs.push(input);
        }
        Ok(PrefixMerge { inputs })
    }

    /// The next record, into `out`; false at the end.
    fn next(&mut self, out: &mut SegmentRecord) -> Result<bool, Error> {
        let mut best: Option<usize> = None;
        for (i, input) in self.inputs.iter().enumerate() {
            if input.have && best.is_none_or(|b| input.prefix < self.inputs[b].prefix) {
                best = Some(i);
            }
        }
        let Some(i) = best else {
            return Ok(false);
        };
        std::mem::swap(out, &mut self.inputs[i].rec);
        self.inputs[i].advance()?;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quota_is_the_smaller_cut() {
        assert_eq!(Quota::of(None, None), None);
        assert_eq!(Quota::of(Some(5), Some(9)).unwrap().cut, Cut::CrawlPages);
        assert_eq!(Quota::of(Some(9), Some(5)).unwrap().cut, Cut::SegmentSize);
        assert_eq!(Quota::of(None, Some(5)).unwrap().urls, 5);
    }

    #[test]
    fn a_paced_budget_is_spent_by_halves_down_to_a_sixteenth() {
        // Half of what is left, while that is more than a sixteenth.
        assert_eq!(paced(1000, 1600, 0.5), 500);
        assert_eq!(paced(300, 1600, 0.5), 150);
        // Then a sixteenth of the budget, or what is left.
        assert_eq!(paced(150, 1600, 0.5), 100);
        assert_eq!(paced(60, 1600, 0.5), 60);
        assert_eq!(paced(0, 1600, 0.5), 0);
        // A small budget still schedules a URL a round.
        assert_eq!(paced(1, 1, 0.5), 1);
        // A pace of 1 (or one out of range) spends what is left at once.
        assert_eq!(paced(1000, 1600, 1.0), 1000);
        assert_eq!(paced(1000, 1600, f64::NAN), 1000);
        // The rounds a budget of 1,000 takes from the start: a few more.
        let (mut left, mut rounds) = (1000, 0);
        while left > 0 {
            left -= paced(left, 1000, 0.5);
            rounds += 1;
        }
        assert_eq!(rounds, 5);
    }

    #[test]
    fn a_waiting_refetch_is_not_counted_twice_against_the_page_budget() {
        let dir = common::testutil::TempDir::new("cut-lines");
        let path = dir.path().join(format!("00001{FILE_SUFFIX}"));
        let mut w = common::segment::SegmentWriter::create(&path).unwrap();
        for (url, via) in [
            ("/new", Via::Link),
            ("/again", Via::Recrawl),
            ("/b", Via::Backlog),
        ] {
            let rec = SegmentRecord {
                host: "a.test".into(),
                url: format!("http://a.test{url}"),
                via,
                ..SegmentRecord::default()
            };
            w.write(&rec).unwrap();
        }
        w.finish().unwrap();
        // The refetch's URL is in the fetch history, which counts it.
        assert_eq!(lines_in(&[path]).unwrap(), 2);
    }
}
