//! `segmenter inspect history.v5.list`: how many URLs the history holds,
//! how many are due when, and the hosts with the most due now. One pass over
//! the file; memory holds one host and the top list.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{Entry, HistoryError, HistoryReader, State};

/// The summary of a history file.
#[derive(Debug, Default, Clone, Serialize, Deserialize)]
pub struct HistorySummary {
    /// The file.
    pub file: String,
    /// URLs in it.
    pub urls: u64,
    /// Hosts in it.
    pub hosts: u64,
    /// URLs still refetched.
    pub active: u64,
    /// URLs whose retries ran out, due again at `recrawl_failed` (also
    /// counted in `due`).
    pub failed: u64,
    /// Retired: gone (404/410), moved (301/308), robots.txt.
    pub gone: u64,
    /// See `gone`.
    pub moved: u64,
    /// See `gone`.
    pub robots: u64,
    /// Active and failed URLs due now, within an hour, a day, a week, 30 days, later
    /// (each bucket excludes the ones before).
    pub due: DueBuckets,
    /// When the first active or failed URL not due now comes due (Unix
    /// ms; `None`: there is none).
    pub next_due_ms: Option<i64>,
    /// Pages seen to change at least once.
    pub changed_urls: u64,
    /// Hosts with the most URLs due now: (host, URLs, due now).
    pub top_hosts: Vec<(String, u64, u64)>,
}

/// Active URLs by when they are due.
#[derive(Debug, Default, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DueBuckets {
    /// Due now.
    pub now: u64,
    /// Within the next hour.
    pub hour: u64,
    /// Within a day.
    pub day: u64,
    /// Within a week.
    pub week: u64,
    /// Within 30 days.
    pub month: u64,
    /// Later.
    pub later: u64,
}

impl HistorySummary {
    /// Reads `path` as of `now_ms`, keeping the `top` hosts with the most
    /// URLs due now.
    pub fn compute(path: &Path, now_ms: i64, top: usize) -> Result<HistorySummary, HistoryError> {
        let Some(mut r) = HistoryReader::open(path)? else {
            return Err(HistoryError::Io {
                path: path.to_path_buf(),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
            });
        };
        let mut counter = SummaryCounter::new(now_ms, top, false);
        while let Some(e) = r.next_entry()? {
            counter.add(&e);
        }
        let mut s = counter.finish().0;
        s.file = path.display().to_string();
        Ok(s)
    }
}

/// Hour, in ms.
const H: i64 = 3_600_000;
/// Where the due buckets end, after now: an hour, a day, a week, 30 days.
/// A URL is in the first bucket whose end its due time does not pass (now
/// itself is the end of the bucket `now`).
const BUCKET_ENDS: [i64; 5] = [0, H, 24 * H, 7 * 24 * H, 30 * 24 * H];

/// Counts a history's entries, in the file's order, into a
/// [`HistorySummary`]: what [`HistorySummary::compute`] does over a file
/// and the history merge over the entries it writes.
pub struct SummaryCounter {
    s: HistorySummary,
    /// The host being counted: name, URLs, due now.
    host: (String, u64, u64),
    top: usize,
    now_ms: i64,
    /// With `kept`: for each bucket end, the [`KEPT_DUE`] earliest due
    /// times after it (what moves from bucket to bucket as time passes).
    after: Option<[std::collections::BinaryHeap<i64>; 5]>,
}

impl SummaryCounter {
    /// Counts as of `now_ms`, keeping the `top` hosts with the most URLs
    /// due now; with `kept`, also the due times a [`SavedSummary`] needs.
    pub fn new(now_ms: i64, top: usize, kept: bool) -> SummaryCounter {
        SummaryCounter {
            s: HistorySummary::default(),
            host: (String::new(), 0, 0),
            top,
            now_ms,
            after: kept.then(Default::default),
        }
    }

    fn end_host(&mut self) {
        let (s, host, top) = (&mut self.s, &mut self.host, self.top);
        if host.1 == 0 {
            return;
        }
        s.hosts += 1;
        if top > 0 {
            let item = (std::mem::take(&mut host.0), host.1, host.2);
            let at = s
                .top_hosts
                .partition_point(|t| (t.2, t.1) >= (item.2, item.1));
            if at < top {
                s.top_hosts.insert(at, item);
                s.top_hosts.truncate(top);
            }
        }
        *host = (String::new(), 0, 0);
    }

    /// Counts the next entry (entries come sorted by host, as in the file).
    pub fn add(&mut self, e: &Entry) {
        if e.host != self.host.0 {
            self.end_host();
            self.host.0.clone_from(&e.host);
        }
        let s = &mut self.s;
        self.host.1 += 1;
        s.urls += 1;
        s.changed_urls += u64::from(e.changes > 0);
        match e.state {
            State::Gone => s.gone += 1,
            State::Moved => s.moved += 1,
            State::Robots => s.robots += 1,
            State::Active | State::Failed => {
                if e.state == State::Active {
                    s.active += 1;
                } else {
                    s.failed += 1;
                }
                let wait = e.due_ms - self.now_ms;
                if wait > 0 {
                    s.next_due_ms = Some(s.next_due_ms.map_or(e.due_ms, |t| t.min(e.due_ms)));
                }
                if let Some(after) = &mut self.after {
                    for (heap, end) in after.iter_mut().zip(BUCKET_ENDS) {
                        let past = wait - end;
                        if past > 0 && (heap.len() < KEPT_DUE || heap.peek() > Some(&past)) {
                            heap.push(past);
                            if heap.len() > KEPT_DUE {
                                heap.pop();
                            }
                        }
                    }
                }
                let b = &mut s.due;
                let slot = BUCKET_ENDS.iter().position(|&end| wait <= end);
                match slot {
                    Some(0) => {
                        b.now += 1;
                        self.host.2 += 1;
                    }
                    Some(1) => b.hour += 1,
                    Some(2) => b.day += 1,
                    Some(3) => b.week += 1,
                    Some(_) => b.month += 1,
                    None => b.later += 1,
                }
            }
        }
    }

    /// The summary, and (with `kept`) the due times after each bucket
    /// end, earliest first, and whether each list is whole.
    pub fn finish(mut self) -> (HistorySummary, Option<KeptDue>) {
        self.end_host();
        let kept = self.after.map(|after| {
            let whole = after.each_ref().map(|h| h.len() < KEPT_DUE);
            (after.map(|h| h.into_sorted_vec()), whole)
        });
        (self.s, kept)
    }
}

/// For each bucket end, the due times after it (ms after it, earliest
/// first), and whether that list is whole.
pub type KeptDue = ([Vec<i64>; 5], [bool; 5]);

/// Due times kept after each bucket end in a [`SavedSummary`]: how far a
/// report may run after the merge and still be counted from the file.
pub const KEPT_DUE: usize = 4096;

/// The saved summary's file name, beside the history.
pub const SUMMARY_FILE_NAME: &str = "history-summary.v1.json";
/// Its format version.
pub const SUMMARY_VERSION: u32 = 1;

/// The history's summary as the merge that wrote the history counted it
/// (`history-summary.v1.json`, see docs/formats.md): what `status` and the
/// report take instead of reading the whole history each round. It names
/// the history file it describes by size and modification time; any other
/// file (a copy put back by hand, an older build's merge) is read whole.
#[derive(Debug, Serialize, Deserialize)]
pub struct SavedSummary {
    /// [`SUMMARY_VERSION`].
    pub version: u32,
    /// The history file's name, size in bytes and modification time (ns
    /// since the Unix epoch).
    pub history_file: String,
    /// See `history_file`.
    pub history_bytes: u64,
    /// See `history_file`.
    pub history_mtime_ns: u64,
    /// When the counts were made (Unix ms): the merge's now.
    pub as_of_ms: i64,
    /// The counts as of `as_of_ms`, as `segmenter inspect --json` gives
    /// them (its `file` empty, no hosts listed).
    pub counts: HistorySummary,
    /// For each bucket end (now, 1 hour, 1 day, 7 days, 30 days after
    /// `as_of_ms`): the due times after it, in ms after it, earliest first,
    /// at most [`KEPT_DUE`].
    pub due_after: [Vec<i64>; 5],
    /// For each list of `due_after`: true when it holds every due time
    /// after its end (fewer than [`KEPT_DUE`] there).
    pub due_after_whole: [bool; 5],
    /// The refetch bounds the merge applied to every URL
    /// ([`super::Schedule::bounds_key`]; absent: unknown, or set by host
    /// rules).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bounds: Option<String>,
}

/// The size and modification time (ns) of `path`.
fn identity(path: &Path) -> std::io::Result<(u64, u64)> {
    let meta = std::fs::metadata(path)?;
    let mtime = meta
        .modified()?
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
    Ok((meta.len(), mtime))
}

impl SavedSummary {
    /// Writes the summary of the finished history file `history` (counted
    /// by `counter`, made with `kept`, under the refetch bounds `bounds`)
    /// beside it, atomically.
    pub fn write(
        history: &Path,
        as_of_ms: i64,
        counter: SummaryCounter,
        bounds: Option<String>,
    ) -> std::io::Result<()> {
        let (s, kept) = counter.finish();
        let (due_after, due_after_whole) = kept.unwrap_or_default();
        let (history_bytes, history_mtime_ns) = identity(history)?;
        let saved = SavedSummary {
            version: SUMMARY_VERSION,
            history_file: history
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            history_bytes,
            history_mtime_ns,
            as_of_ms,
            counts: HistorySummary {
                top_hosts: Vec::new(),
                ..s
            },
            due_after,
            due_after_whole,
            bounds,
        };
        let mut text = serde_json::to_vec(&saved).map_err(std::io::Error::other)?;
        text.push(b'\n');
        common::atomic::write_atomic(summary_path(history), &text)
    }

    /// The summary of the history file `history` as of `now_ms`, from the
    /// file beside it, with no hosts listed; `None` when that file is
    /// absent, of another version or history file, unreadable, or older
    /// than its due times cover (then the history is read whole).
    pub fn read(history: &Path, now_ms: i64) -> Option<HistorySummary> {
        SavedSummary::load(history)?.of_file(history, now_ms)
    }

    /// The URLs of the history file `history` due now (`now_ms`) under the
    /// refetch bounds `bounds` ([`super::Schedule::bounds_key`]), from the
    /// file beside it: `None` as for [`SavedSummary::read`], or when the
    /// merge applied other bounds (their change moves due times).
    pub fn due_now(history: &Path, now_ms: i64, bounds: &str) -> Option<u64> {
        Some(SavedSummary::read_under(history, now_ms, bounds)?.due.now)
    }

    /// The summary of the history file `history` as of `now_ms`, as
    /// [`SavedSummary::read`] gives it, when the merge that saved it
    /// applied the refetch bounds `bounds` (its URLs due now are then
    /// those the next merge finds): `None` as for `read`, or under other
    /// bounds.
    pub fn read_under(history: &Path, now_ms: i64, bounds: &str) -> Option<HistorySummary> {
        let saved = SavedSummary::load(history)?;
        if saved.bounds.as_deref() != Some(bounds) {
            return None;
        }
        saved.of_file(history, now_ms)
    }

    /// The counts as of `now_ms` ([`SavedSummary::as_of`]), naming the
    /// history file `history` they describe.
    fn of_file(&self, history: &Path, now_ms: i64) -> Option<HistorySummary> {
        self.as_of(now_ms).map(|mut s| {
            s.file = history.display().to_string();
            s
        })
    }

    /// The summary beside the history file `history`, if it describes it.
    fn load(history: &Path) -> Option<SavedSummary> {
        let text = std::fs::read(summary_path(history)).ok()?;
        let saved: SavedSummary = serde_json::from_slice(&text).ok()?;
        let name = history.file_name()?.to_string_lossy();
        (saved.version == SUMMARY_VERSION
            && saved.history_file == name
            && identity(history).ok()? == (saved.history_bytes, saved.history_mtime_ns))
            .then_some(saved)
    }

    /// The counts moved on from `as_of_ms` to `now_ms`: the URLs whose due
    /// time passed a bucket's end move to the bucket before. `None` when a
    /// list of due times does not reach that far (or `now_ms` is earlier).
    fn as_of(&self, now_ms: i64) -> Option<HistorySummary> {
        let passed = now_ms.checked_sub(self.as_of_ms).filter(|&d| d >= 0)?;
        let mut moved = [0u64; 5];
        for (i, list) in self.due_after.iter().enumerate() {
            let reaches = self.due_after_whole[i] || list.last().is_some_and(|&t| t > passed);
            if !reaches {
                return None;
            }
            moved[i] = list.partition_point(|&t| t <= passed) as u64;
        }
        let d = &self.counts.due;
        let due = DueBuckets {
            now: d.now + moved[0],
            hour: (d.hour + moved[1]).checked_sub(moved[0])?,
            day: (d.day + moved[2]).checked_sub(moved[1])?,
            week: (d.week + moved[3]).checked_sub(moved[2])?,
            month: (d.month + moved[4]).checked_sub(moved[3])?,
            later: d.later.checked_sub(moved[4])?,
        };
        let next_due_ms = self.due_after[0]
            .iter()
            .find(|&&t| t > passed)
            .map(|t| self.as_of_ms + t);
        Some(HistorySummary {
            file: String::new(),
            due,
            next_due_ms,
            top_hosts: Vec::new(),
            ..self.counts.clone()
        })
    }
}

/// Where the saved summary of the history file `history` is kept.
pub fn summary_path(history: &Path) -> std::path::PathBuf {
    history.with_file_name(SUMMARY_FILE_NAME)
}

impl std::fmt::Display for HistorySummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let d = &self.due;
        writeln!(f, "file:      {}", self.file)?;
        writeln!(f, "urls:      {} on {} hosts", self.urls, self.hosts)?;
        writeln!(
            f,
            "active:    {} ({} changed at least once)",
            self.active, self.changed_urls
        )?;
        writeln!(
            f,
            "failed:    {} (retries ran out; due again at recrawl_failed)",
            self.failed
        )?;
        writeln!(
            f,
            "retired:   {} (gone {}, moved {}, robots {})",
            self.gone + self.moved + self.robots,
            self.gone,
            self.moved,
            self.robots
        )?;
        writeln!(
            f,
            "due:       now {}, within 1h {}, 1d {}, 7d {}, 30d {}, later {}",
            d.now, d.hour, d.day, d.week, d.month, d.later
        )?;
        if !self.top_hosts.is_empty() {
            writeln!(f, "hosts with the most URLs due now (due / urls):")?;
            for (host, urls, due) in &self.top_hosts {
                writeln!(f, "  {due:>10} / {urls:<10} {host}")?;
            }
        }
        Ok(())
    }
}
