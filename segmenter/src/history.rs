//! The fetch history: one line per URL ever fetched, kept by the segmenter
//! from every fetched run it consumes, and the refetch schedule it decides.
//!
//! `CRAWL/history.v5.list` names the history's generation files
//! ([`generations`]: a round writes only the entries it changed, and the
//! history reads as the generations merged, the newest entry of a URL
//! winning). Each generation, `CRAWL/history.v5.NNNNNN.tsv.zst`, is
//! zstd-compressed UTF-8 text, framed like the list files (a header line,
//! then a counted, hashed end line, so that a cut or changed file is told
//! from a short one):
//!
//! ```text
//! # history v5
//! host  url  hops  fetched  status  interval  changes  strikes  due  state  digest  etag  last_modified  record_id  record_date  canonical
//! # end 1 xxh3 5f0c9e1b7a3d2c44
//! ```
//! (fields separated by one tab; `-` for a missing value). Lines are sorted
//! by registrable domain, host, then URL (the order of segments and of the
//! backlog), so a round merges the history with its new fetches in one
//! stream, never holding it in memory.
//!
//! - `hops`: links followed from a seed to the URL (the fewest seen).
//! - `fetched`: the time of the last fetch (`WARC-Date`), ISO 8601 UTC.
//! - `status`: its HTTP status, or `robots` (disallowed by robots.txt), or
//!   `-` (a URL that never got an answer before its retries ran out).
//! - `interval`: seconds from one fetch to the next, adapted by [`Schedule`].
//! - `changes`: how often the page changed between two fetches.
//! - `strikes`: 404/410 answers in a row.
//! - `due`: when the URL is to be fetched again (pushed one interval on when
//!   a round schedules it).
//! - `state`: `active`; `failed` (its retries ran out: `--max-tries` failed
//!   rounds; it is due again `recrawl_failed` later, and back to `active`
//!   once a fetch answers); or why the URL is retired: `gone`, `moved`
//!   (a redirect, or a host rule added since spells the URL otherwise:
//!   its refetch went out under the new spelling), `robots`.
//! - `digest`, `etag`, `last_modified`: the payload digest and the
//!   validators of the last full response, sent back in conditional requests.
//! - `record_id`, `record_date`: the `WARC-Record-ID` and `WARC-Date` of
//!   the response that holds that payload (`-`: unknown), what a `revisit`
//!   record of the URL names in `WARC-Refers-To` and `WARC-Refers-To-Date`.
//!   A revisit leaves them as they were (or takes the ones it refers to),
//!   so that a chain of revisits points at the response, not at the
//!   revisit before.
//! - `canonical`: the URL the page named as its canonical one at its last
//!   full fetch (`<link rel=canonical>` or a `Link` header; `-`: none), a
//!   hint kept for users of the crawl: never used to merge URLs or hosts.
//!
//! Version 4 (`history.v4.tsv.zst`, header `# history v4`: the same
//! columns, the history whole in one file) is still read; the first round
//! writes it whole as the first generation of version 5 and keeps the
//! older file as `history.v5.list.prev`. A build before version 5 does not
//! read the list.
//!
//! Version 3 (`history.v3.tsv.zst`, header `# history v3`: the first
//! fifteen columns) is still read, its hints unknown until a page is
//! fetched whole again. Version 2 (`history.v2.tsv.zst`, header `# history
//! v2`: the first thirteen columns) and version 1 (`history.v1.tsv.zst`,
//! header `# history v1`: the same, without the state `failed`) are still
//! read, their record IDs unknown (a revisit of such a URL has no
//! `WARC-Refers-To` until the page is stored whole again); a round
//! converts them as version 4.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::atomic::AtomicFile;
use common::segment::push_decimal;
use common::timefmt::{from_unix_millis, parse_iso_millis};
use xxhash_rust::xxh3::Xxh3;

pub mod generations;
mod merge;
mod observe;
mod summary;

pub use generations::{HistoryOut, HistoryReader};
pub use merge::{HistoryCounts, Lookup, Merge, PageCounts};
pub use observe::{Kind, Observation};
pub use summary::{HistorySummary, SavedSummary, SummaryCounter, summary_path};

/// The history's file name in the crawl directory: the list of its
/// generations ([`generations`]).
pub const FILE_NAME: &str = generations::LIST_FILE_NAME;
/// The file names of the older versions still read (when there is no
/// current file), newest first.
pub const OLD_FILE_NAMES: [&str; 4] = [
    "history.v4.tsv.zst",
    "history.v3.tsv.zst",
    "history.v2.tsv.zst",
    "history.v1.tsv.zst",
];
/// The format version written.
pub const VERSION: u32 = 5;
const HEADER: &str = "# history v5";
/// The header lines read, with their format versions.
const HEADERS: [(&str, u32); 5] = [
    (HEADER, VERSION),
    ("# history v4", 4),
    ("# history v3", 3),
    ("# history v2", 2),
    ("# history v1", 1),
];
/// zstd level of the history's files: level 1, as for segments (with
/// level 3 a whole merge of 10 M URLs took 7.65 s of CPU instead of
/// 6.64 s, `scripts/bench-segment.sh history`; compaction still rewrites
/// the largest generation now and then).
const ZSTD_LEVEL: i32 = 1;
const COLUMNS: usize = 16;
/// The columns of version 3 (the first fifteen).
const V3_COLUMNS: usize = 15;
/// The columns of versions 1 and 2 (the first thirteen).
const OLD_COLUMNS: usize = 13;
/// The column names, in order (for messages and docs/formats.md).
pub const COLUMN_NAMES: &str = "host url hops fetched status interval changes strikes due state \
    digest etag last_modified record_id record_date canonical";

/// How to repair a damaged history.
pub const HISTORY_REPAIR: &str = "Repair: `segmenter repair CRAWL --accept-loss` always \
    works: it restores the .prev when that reads whole, or else keeps the generations that \
    read and has the next round read the consumed runs under them, and names what is lost. \
    By hand: copy history.v5.list.prev (the history of the round before, whose generations \
    are kept with it: the fetches of the last consumed run are not in it, and their URLs are \
    fetched again when due) over history.v5.list (for an older version's single file, its \
    own .prev over it), which fails when the damaged generation is one the .prev names too; \
    or rename the list (to history.v5.list.old, say: a generation any \
    history.v5.list* file names is kept, one only a list moved out of the crawl directory \
    names is deleted after the next round): the next run rebuilds the history from the \
    consumed runs still in fetched/ (intervals and change counts start again)";

/// Whether a URL is still refetched, or why not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum State {
    /// Fetched again when due.
    #[default]
    Active,
    /// Answered 404 or 410 `gone_after` times in a row.
    Gone,
    /// Answered 301 or 308: its target is the URL now.
    Moved,
    /// Disallowed by robots.txt.
    Robots,
    /// Its retries ran out (`--max-tries` failed rounds): due again at
    /// [`Schedule::failed`], active again once a fetch gets an answer.
    Failed,
}

impl State {
    /// The word in the file.
    pub fn as_str(self) -> &'static str {
        match self {
            State::Active => "active",
            State::Gone => "gone",
            State::Moved => "moved",
            State::Robots => "robots",
            State::Failed => "failed",
        }
    }

    /// The word in a file of format `version` (1 has no `failed`).
    fn parse(s: &str, version: u32) -> Option<State> {
        Some(match s {
            "active" => State::Active,
            "gone" => State::Gone,
            "moved" => State::Moved,
            "robots" => State::Robots,
            "failed" if version >= 2 => State::Failed,
            _ => return None,
        })
    }

    /// True for a URL that is fetched again when due (`active`, `failed`).
    pub fn refetched(self) -> bool {
        matches!(self, State::Active | State::Failed)
    }
}

/// One URL's history (one line of the file).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Entry {
    /// Queue key: the URL's host.
    pub host: String,
    /// Canonical URL.
    pub url: String,
    /// Hops from a seed.
    pub hops: u32,
    /// Last fetch, Unix ms.
    pub fetched_ms: i64,
    /// Its HTTP status, or a word (`robots`).
    pub status: String,
    /// Seconds between fetches.
    pub interval_s: u64,
    /// Times the page changed between two fetches.
    pub changes: u32,
    /// 404/410 answers in a row.
    pub strikes: u32,
    /// Next fetch due, Unix ms.
    pub due_ms: i64,
    /// Refetched or retired.
    pub state: State,
    /// `WARC-Payload-Digest` of the last full response (empty: none).
    pub digest: String,
    /// Its `ETag` (empty: none).
    pub etag: String,
    /// Its `Last-Modified` (empty: none).
    pub last_modified: String,
    /// The `WARC-Record-ID` of the response holding the payload of
    /// `digest` (empty: unknown).
    pub record_id: String,
    /// That response's `WARC-Date`, Unix ms (`None`: unknown).
    pub record_ms: Option<i64>,
    /// The canonical URL the page named at its last full fetch, a hint
    /// (empty: none, or unknown).
    pub canonical: String,
}

fn dash(s: &str) -> &[u8] {
    if s.is_empty() { b"-" } else { s.as_bytes() }
}

fn undash(s: &str) -> &str {
    if s == "-" { "" } else { s }
}

impl Entry {
    /// Makes `self` a copy of `other`, reusing its strings (the derived
    /// `clone_from` allocates anew).
    pub fn copy_from(&mut self, other: &Entry) {
        for (to, from) in [
            (&mut self.host, &other.host),
            (&mut self.url, &other.url),
            (&mut self.status, &other.status),
            (&mut self.digest, &other.digest),
            (&mut self.etag, &other.etag),
            (&mut self.last_modified, &other.last_modified),
            (&mut self.record_id, &other.record_id),
            (&mut self.canonical, &other.canonical),
        ] {
            to.clone_from(from);
        }
        self.hops = other.hops;
        self.fetched_ms = other.fetched_ms;
        self.interval_s = other.interval_s;
        self.changes = other.changes;
        self.strikes = other.strikes;
        self.due_ms = other.due_ms;
        self.state = other.state;
        self.record_ms = other.record_ms;
    }

    /// Appends the line (with its newline) to `out`.
    pub fn encode_line(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.host.as_bytes());
        out.push(b'\t');
        out.extend_from_slice(self.url.as_bytes());
        out.push(b'\t');
        push_decimal(out, u64::from(self.hops));
        out.push(b'\t');
        push_time(out, self.fetched_ms);
        out.push(b'\t');
        out.extend_from_slice(dash(&self.status));
        out.push(b'\t');
        push_decimal(out, self.interval_s);
        out.push(b'\t');
        push_decimal(out, u64::from(self.changes));
        out.push(b'\t');
        push_decimal(out, u64::from(self.strikes));
        out.push(b'\t');
        push_time(out, self.due_ms);
        out.push(b'\t');
        out.extend_from_slice(self.state.as_str().as_bytes());
        for v in [
            &self.digest,
            &self.etag,
            &self.last_modified,
            &self.record_id,
        ] {
            out.push(b'\t');
            out.extend_from_slice(dash(v));
        }
        out.push(b'\t');
        match self.record_ms {
            Some(ms) => push_time(out, ms),
            None => out.push(b'-'),
        }
        out.push(b'\t');
        out.extend_from_slice(dash(&self.canonical));
        out.push(b'\n');
    }

    /// The time of the response holding the payload: `record_ms`, or for
    /// an entry that does not know it (an older history), the last fetch.
    pub fn payload_ms(&self) -> i64 {
        self.record_ms.unwrap_or(self.fetched_ms)
    }

    /// Parses one line (without its newline) of a file of format `version`
    /// into `self`, reusing its strings; on error `self` is left in an
    /// unspecified state.
    pub fn parse_into(&mut self, line: &str, version: u32) -> Result<(), String> {
        let (fields, count) = split_fields(line);
        let expected = match version {
            4.. => COLUMNS,
            3 => V3_COLUMNS,
            _ => OLD_COLUMNS,
        };
        if count != expected {
            let names = match COLUMN_NAMES.match_indices(' ').nth(expected - 1) {
                Some((end, _)) => &COLUMN_NAMES[..end],
                None => COLUMN_NAMES,
            };
            return Err(format!(
                "expected {expected} tab-separated fields ({names}), found {count}"
            ));
        }
        let [
            host,
            url,
            hops,
            fetched,
            status,
            interval,
            changes,
            strikes,
            due,
            state,
            digest,
            etag,
            last_modified,
            record_id,
            record_date,
            canonical,
        ] = fields;
        if host.is_empty() || url.is_empty() {
            return Err("host or URL is empty".into());
        }
        let time = |name: &str, s: &str| {
            parse_time(s)
                .ok_or_else(|| format!("{name} is not a time like 2026-11-24T10:00:05.250Z: {s:?}"))
        };
        let number = |name: &str, s: &str| {
            common::parse_digits(s.as_bytes())
                .ok_or_else(|| format!("{name} is not a number: {s:?}"))
        };
        let small = |name: &str, s: &str| {
            u32::try_from(number(name, s)?).map_err(|_| format!("{name} is too large: {s}"))
        };
        self.hops = small("hops", hops)?;
        self.fetched_ms = time("fetched", fetched)?;
        self.interval_s = number("interval", interval)?;
        self.changes = small("changes", changes)?;
        self.strikes = small("strikes", strikes)?;
        self.due_ms = time("due", due)?;
        self.record_ms = match record_date {
            "-" => None,
            s => Some(time("record_date", s)?),
        };
        self.state = State::parse(state, version).ok_or_else(|| {
            let words = match version {
                1 => "active, gone, moved, robots",
                _ => "active, failed, gone, moved, robots",
            };
            format!("state {state:?} is none of {words}")
        })?;
        for (slot, v) in [
            (&mut self.host, host),
            (&mut self.url, url),
            (&mut self.status, undash(status)),
            (&mut self.digest, undash(digest)),
            (&mut self.etag, undash(etag)),
            (&mut self.last_modified, undash(last_modified)),
            (&mut self.record_id, undash(record_id)),
            (&mut self.canonical, undash(canonical)),
        ] {
            slot.clear();
            slot.push_str(v);
        }
        Ok(())
    }
}

/// Appends `2026-11-24T10:00:05.250Z` for Unix ms `ms` (as
/// `timefmt::iso_millis`, without its allocation).
fn push_time(out: &mut Vec<u8>, ms: i64) {
    let (y, mo, d, h, mi, sec, milli) = common::timefmt::civil(from_unix_millis(ms));
    let y = y.clamp(0, 9999) as u32;
    out.extend_from_slice(&[
        b'0' + (y / 1000) as u8,
        b'0' + (y / 100 % 10) as u8,
        b'0' + (y / 10 % 10) as u8,
        b'0' + (y % 10) as u8,
    ]);
    for (sep, v) in [(b'-', mo), (b'-', d), (b'T', h), (b':', mi), (b':', sec)] {
        out.extend_from_slice(&[sep, b'0' + (v / 10) as u8, b'0' + (v % 10) as u8]);
    }
    out.extend_from_slice(&[
        b'.',
        b'0' + (milli / 100) as u8,
        b'0' + (milli / 10 % 10) as u8,
        b'0' + (milli % 10) as u8,
        b'Z',
    ]);
}

/// A time as written by [`push_time`], in Unix ms.
fn parse_time(s: &str) -> Option<i64> {
    parse_iso_millis(s)
}

/// The tab-separated fields of a line (an older version's missing columns
/// read as `-`) and how many it has, in one pass over the line
/// ([`tabs`]): `str::split` searched each tab anew, the largest cost of
/// reading the history.
fn split_fields(line: &str) -> ([&str; COLUMNS], usize) {
    let mut fields = ["-"; COLUMNS];
    let (mut count, mut start) = (0, 0);
    tabs(line.as_bytes(), |tab| {
        if count < COLUMNS {
            // (A tab is ASCII: a char boundary.)
            fields[count] = &line[start..tab];
        }
        count += 1;
        start = tab + 1;
    });
    if count < COLUMNS {
        fields[count] = &line[start..];
    }
    (fields, count + 1)
}

/// Hands each tab's offset in `bytes` to `each`, in order, eight bytes at
/// a time (a word's tabs found with a few operations: the fields of a
/// history line are short, and `memchr`'s setup per call cost more than
/// the search).
fn tabs(bytes: &[u8], mut each: impl FnMut(usize)) {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    const TABS: u64 = 0x0909_0909_0909_0909;
    let mut words = bytes.chunks_exact(8);
    for (k, word) in words.by_ref().enumerate() {
        let x = u64::from_le_bytes(word.try_into().expect("8 bytes")) ^ TABS;
        // The high bit of each byte that is zero (a tab), exactly.
        let mut zero = !(((x & LOW7) + LOW7) | x | LOW7);
        while zero != 0 {
            each(k * 8 + zero.trailing_zeros() as usize / 8);
            zero &= zero - 1;
        }
    }
    let at = bytes.len() - words.remainder().len();
    for (i, &b) in words.remainder().iter().enumerate() {
        if b == b'\t' {
            each(at + i);
        }
    }
}

/// The refetch schedule: the settings `recrawl_*` (their defaults are
/// declared with them, in `common::config::segmenter`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Schedule {
    /// Interval of a URL fetched for the first time.
    pub interval: Duration,
    /// Shortest interval.
    pub min: Duration,
    /// Longest interval.
    pub max: Duration,
    /// 404/410 answers in a row that retire a URL.
    pub gone_after: u32,
    /// When a URL whose retries ran out is due again (`recrawl_failed`).
    pub failed: Duration,
}

/// The interval is multiplied by this when the page changed...
pub const SHRINK: f64 = 0.5;
/// ...and by this when it did not.
pub const GROW: f64 = 1.5;

impl Schedule {
    fn clamp(&self, secs: f64) -> u64 {
        let (min, max) = (self.min.as_secs_f64(), self.max.as_secs_f64());
        secs.clamp(min, max.max(min)).round().max(1.0) as u64
    }

    /// The schedule of `url` (canonical, of `host`): this one, within the
    /// bounds the host rules that match the URL set (`recrawl_min`,
    /// `recrawl_max`), if any does.
    pub fn for_url(&self, rules: &common::rules::HostRules, host: &str, url: &str) -> Schedule {
        let mut schedule = *self;
        if !rules.sets(common::rules::Key::RecrawlMin)
            && !rules.sets(common::rules::Key::RecrawlMax)
        {
            // (No rule bounds the schedule: no lookup, per history entry.)
            return schedule;
        }
        let after_scheme = url.find("://").map_or(0, |i| i + 3);
        let path = url[after_scheme..]
            .find('/')
            .map_or("/", |i| &url[after_scheme + i..]);
        (schedule.min, schedule.max) = rules.recrawl_bounds(host, path, self.min, self.max);
        schedule
    }

    /// What names the bounds of this schedule for every URL (`recrawl_min`
    /// and `recrawl_max`), kept with the history's saved summary: a later
    /// reader under the same bounds can take its count of URLs due as the
    /// merge's ([`SavedSummary::due_now`]). `None` when host rules set
    /// bounds of their own (then the history is read whole).
    pub fn bounds_key(&self, rules: &common::rules::HostRules) -> Option<String> {
        use common::rules::Key;
        if rules.sets(Key::RecrawlMin) || rules.sets(Key::RecrawlMax) {
            return None;
        }
        Some(format!(
            "recrawl {} ms to {} ms",
            self.min.as_millis(),
            self.max.as_millis()
        ))
    }

    /// Brings a URL of the history under this schedule's bounds: an
    /// interval outside `min..max` (set when the bounds were others) is
    /// clamped, and its due time moves by as much as the interval did (a
    /// lowered `recrawl_max` brings far refetches nearer, a raised
    /// `recrawl_min` pushes near ones back). True if it changed.
    pub fn rescale(&self, e: &mut Entry) -> bool {
        // A failed URL's due time is `recrawl_failed` after its last try,
        // not an interval: it stays.
        if e.state != State::Active {
            return false;
        }
        let clamped = self.clamp(e.interval_s as f64);
        if clamped == e.interval_s {
            return false;
        }
        let shift = (clamped as i64 - e.interval_s as i64).saturating_mul(1000);
        e.due_ms = e.due_ms.saturating_add(shift);
        e.interval_s = clamped;
        true
    }

    /// The history of a URL fetched for the first time.
    pub fn first(&self, host: &str, url: &str, obs: &Observation) -> Entry {
        let mut e = Entry {
            host: host.to_string(),
            url: url.to_string(),
            hops: obs.hops,
            interval_s: self.clamp(self.interval.as_secs_f64()),
            ..Entry::default()
        };
        self.apply(&mut e, obs, true);
        e
    }

    /// The history of a URL whose retries ran out before it was ever
    /// fetched (`obs` a [`Kind::Exhausted`]): `failed`, no status, due at
    /// [`Schedule::failed`].
    pub fn first_failed(&self, host: &str, url: &str, obs: &Observation) -> Entry {
        let mut e = Entry {
            host: host.to_string(),
            url: url.to_string(),
            hops: obs.hops,
            interval_s: self.clamp(self.interval.as_secs_f64()),
            fetched_ms: obs.fetched_ms,
            ..Entry::default()
        };
        self.give_up(&mut e, obs);
        e
    }

    /// A URL whose retries ran out (`obs` a [`Kind::Exhausted`]): an
    /// active one becomes `failed`, due again [`Schedule::failed`] after
    /// `obs`; its last fetch and validators are kept. A retired URL stays
    /// retired. Returns true if the URL is `failed` now.
    pub fn give_up(&self, e: &mut Entry, obs: &Observation) -> bool {
        if !e.state.refetched() {
            return false;
        }
        e.state = State::Failed;
        e.hops = e.hops.min(obs.hops);
        let wait = i64::try_from(self.failed.as_millis()).unwrap_or(i64::MAX);
        e.due_ms = obs.fetched_ms.saturating_add(wait);
        true
    }

    /// Updates `e` with a later fetch; returns what it was.
    pub fn apply(&self, e: &mut Entry, obs: &Observation, first: bool) -> Outcome {
        let outcome = if obs.robots {
            e.state = State::Robots;
            Outcome::Retired
        } else {
            match obs.status {
                200..=299 | 304 => {
                    let unchanged = match obs.kind {
                        Kind::NotModified | Kind::Identical | Kind::Hint | Kind::Exhausted => true,
                        Kind::Full => {
                            e.digest.is_empty() || obs.digest.is_empty() || e.digest == obs.digest
                        }
                    };
                    e.strikes = 0;
                    e.state = State::Active;
                    if obs.kind == Kind::Full {
                        e.canonical.clone_from(&obs.canonical);
                    }
                    if obs.kind == Kind::Full || obs.kind == Kind::Identical {
                        if !obs.digest.is_empty() {
                            keep_record(e, obs);
                            e.digest.clone_from(&obs.digest);
                        }
                        e.etag.clone_from(&obs.etag);
                        e.last_modified.clone_from(&obs.last_modified);
                    } else {
                        if obs.kind == Kind::NotModified && !obs.record_id.is_empty() {
                            keep_record(e, obs);
                        }
                        // A 304 may send fresh validators; it keeps the others.
                        if !obs.etag.is_empty() {
                            e.etag.clone_from(&obs.etag);
                        }
                        if !obs.last_modified.is_empty() {
                            e.last_modified.clone_from(&obs.last_modified);
                        }
                    }
                    if first {
                        Outcome::New
                    } else if unchanged {
                        e.interval_s = self.clamp(e.interval_s as f64 * GROW);
                        Outcome::Unchanged
                    } else {
                        e.changes = e.changes.saturating_add(1);
                        e.interval_s = self.clamp(e.interval_s as f64 * SHRINK);
                        Outcome::Changed
                    }
                }
                404 | 410 => {
                    e.strikes = e.strikes.saturating_add(1);
                    e.digest.clear();
                    e.record_id.clear();
                    e.record_ms = None;
                    e.etag.clear();
                    e.last_modified.clear();
                    e.canonical.clear();
                    if e.strikes >= self.gone_after.max(1) {
                        e.state = State::Gone;
                        Outcome::Retired
                    } else {
                        Outcome::Failed
                    }
                }
                301 | 308 => {
                    e.state = State::Moved;
                    Outcome::Retired
                }
                _ => Outcome::Failed,
            }
        };
        e.fetched_ms = obs.fetched_ms;
        e.hops = e.hops.min(obs.hops);
        e.status.clear();
        if obs.robots {
            e.status.push_str("robots");
        } else {
            e.status.push_str(&obs.status.to_string());
        }
        e.due_ms = obs
            .fetched_ms
            .saturating_add((e.interval_s as i64).saturating_mul(1000));
        outcome
    }
}

/// Sets the record holding the payload of `obs` (a full response, or a
/// revisit whose payload digest goes into `e`): a full response's own, the
/// one a revisit names; a revisit that names none leaves `e`'s as it is when
/// the digest is the same (the payload is still in that record), unknown
/// when it is another.
fn keep_record(e: &mut Entry, obs: &Observation) {
    if obs.kind == Kind::Full || !obs.record_id.is_empty() {
        e.record_id.clone_from(&obs.record_id);
        e.record_ms = obs.record_ms;
    } else if obs.digest != e.digest {
        e.record_id.clear();
        e.record_ms = None;
    }
}

/// What one fetch did to a URL's history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Fetched for the first time.
    New,
    /// Fetched again, the same page (304, identical digest).
    Unchanged,
    /// Fetched again, a different page.
    Changed,
    /// Retired by rule (gone, moved, robots).
    Retired,
    /// Another answer (5xx, a temporary redirect, a first 404): kept as it was.
    Failed,
}

/// A problem with the history file.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// Reading or writing failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// The file is not what the segmenter writes.
    #[error("{path}: damaged: {problem}")]
    Damaged {
        /// The file.
        path: PathBuf,
        /// What is wrong, where.
        problem: String,
    },
}

impl From<HistoryError> for crate::error::Error {
    /// A damaged history is refused with its repair said
    /// ([`HISTORY_REPAIR`]); a read or write that fails (a full disk:
    /// `ENOSPC`, or `EFBIG` past a file-size limit) is a plain I/O error
    /// naming the file, as for every other file a round writes: the
    /// history is not damaged, and the same command run again with room
    /// goes on.
    fn from(e: HistoryError) -> Self {
        match e {
            HistoryError::Io { path, source } => crate::error::Error::Io { path, source },
            damaged @ HistoryError::Damaged { .. } => {
                crate::error::Error::damaged(HISTORY_REPAIR)(damaged)
            }
        }
    }
}

/// Reads one history file (a generation, or the whole history of version
/// 4 and before) entry by entry, checking its framing: a damaged file is
/// an error, at the latest at its end (never read as a shorter history).
pub struct FileReader {
    path: PathBuf,
    /// The format version of the file (1 to 5).
    version: u32,
    input: BufReader<zstd::stream::read::Decoder<'static, BufReader<File>>>,
    line: String,
    number: u64,
    entries: u64,
    hash: Xxh3,
    /// Entry lines read and not hashed yet (with their newlines).
    unhashed: Vec<u8>,
    ended: bool,
}

/// Bytes of entry lines a [`FileReader`] hashes at a time.
const HASH_BLOCK: usize = 64 * 1024;

impl FileReader {
    /// Opens `path`; `None` if there is no such file.
    pub fn open(path: &Path) -> Result<Option<FileReader>, HistoryError> {
        let io = |source| HistoryError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = match File::open(path) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(e)),
        };
        let decoder = zstd::stream::read::Decoder::new(file).map_err(io)?;
        let mut r = FileReader {
            path: path.to_path_buf(),
            version: VERSION,
            input: BufReader::with_capacity(256 * 1024, decoder),
            line: String::new(),
            number: 0,
            entries: 0,
            hash: Xxh3::new(),
            unhashed: Vec::with_capacity(HASH_BLOCK + 4096),
            ended: false,
        };
        let header = r.read_line()?.and_then(|complete| {
            HEADERS
                .iter()
                .find(|(h, _)| complete && r.line == *h)
                .map(|(_, v)| *v)
        });
        match header {
            Some(version) => {
                r.version = version;
                Ok(Some(r))
            }
            None => Err(r.damaged(format!(
                "line 1 is not `{HEADER}` (or `# history v4`, `# history v3`, `# history v2`, \
                 `# history v1`)"
            ))),
        }
    }

    /// The file read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Entries read so far (all of them once the end line is read).
    pub fn entries_read(&self) -> u64 {
        self.entries
    }

    fn damaged(&self, problem: String) -> HistoryError {
        HistoryError::Damaged {
            path: self.path.clone(),
            problem,
        }
    }

    /// Reads the next line into `self.line` (without its newline); `None`
    /// at the end, `Some(false)` for a last line without a newline.
    fn read_line(&mut self) -> Result<Option<bool>, HistoryError> {
        let n = self.read_raw_line().map_err(|e| {
            // An error of the system (EIO, EACCES, EISDIR) says nothing of
            // the file's bytes: it is not damage.
            if e.raw_os_error().is_some() {
                return HistoryError::Io {
                    path: self.path.clone(),
                    source: e,
                };
            }
            let hint = if e.kind() == io::ErrorKind::UnexpectedEof {
                "the file is cut"
            } else {
                "the file is damaged or not zstd-compressed text"
            };
            self.damaged(format!("reading after line {}: {e} ({hint})", self.number))
        })?;
        if n == 0 {
            return Ok(None);
        }
        self.number += 1;
        let complete = self.line.ends_with('\n');
        if complete {
            self.line.pop();
        }
        Ok(Some(complete))
    }

    /// `BufRead::read_line` into `self.line`, with `memchr` for the
    /// newline (the standard library's search costs more per line): the
    /// bytes up to and with the next newline, checked as UTF-8 once.
    fn read_raw_line(&mut self) -> io::Result<usize> {
        let mut bytes = std::mem::take(&mut self.line).into_bytes();
        bytes.clear();
        let read = loop {
            let buf = match self.input.fill_buf() {
                Ok(buf) => buf,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => break Err(e),
            };
            let (take, done) = match memchr::memchr(b'\n', buf) {
                Some(i) => (i + 1, true),
                None => (buf.len(), buf.is_empty()),
            };
            bytes.extend_from_slice(&buf[..take]);
            self.input.consume(take);
            if done {
                break Ok(bytes.len());
            }
        };
        match String::from_utf8(bytes) {
            Ok(line) => {
                self.line = line;
                read
            }
            Err(e) => {
                // (The buffer is kept for the next line.)
                let mut bytes = e.into_bytes();
                bytes.clear();
                self.line = String::from_utf8(bytes).expect("empty");
                read.and(Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "stream did not contain valid UTF-8",
                )))
            }
        }
    }

    /// Reads the next entry into `e` (reusing its strings); false after the
    /// end line (which is checked).
    pub fn read_into(&mut self, e: &mut Entry) -> Result<bool, HistoryError> {
        if !self.next_line()? {
            return Ok(false);
        }
        e.parse_into(&self.line, self.version)
            .map(|()| true)
            .map_err(|e| self.damaged(format!("line {}: {e}", self.number)))
    }

    /// The host and URL of the next entry, without parsing the rest of its
    /// line (the framing is checked as by [`FileReader::read_into`]);
    /// `None` after the end line.
    pub fn read_host_url(&mut self) -> Result<Option<(&str, &str)>, HistoryError> {
        if !self.next_line()? {
            return Ok(None);
        }
        let mut fields = self.line.splitn(3, '\t');
        match (fields.next(), fields.next()) {
            (Some(host), Some(url)) if !host.is_empty() && !url.is_empty() => Ok(Some((host, url))),
            _ => Err(HistoryError::Damaged {
                path: self.path.clone(),
                problem: format!("line {}: no host and URL", self.number),
            }),
        }
    }

    /// Reads the next entry's line into `self.line`, adding it to the
    /// count and hash; false after the end line, which is checked.
    fn next_line(&mut self) -> Result<bool, HistoryError> {
        if self.ended {
            return Ok(false);
        }
        match self.read_line()? {
            None => Err(self.damaged(format!(
                "no end line after {} entries (the file is cut)",
                self.entries
            ))),
            Some(false) => Err(self.damaged(format!("line {} is cut", self.number))),
            Some(true) if self.line.starts_with("# end ") => {
                self.hash.update(&self.unhashed);
                self.unhashed.clear();
                let expected = format!("# end {} xxh3 {:016x}", self.entries, self.hash.digest());
                if self.line != expected {
                    return Err(self.damaged(format!(
                        "the end line `{}` does not match the {} entries read (`{expected}`)",
                        self.line, self.entries
                    )));
                }
                if self.read_line()?.is_some() {
                    return Err(
                        self.damaged(format!("line {}: text after the end line", self.number))
                    );
                }
                self.ended = true;
                Ok(false)
            }
            Some(true) => {
                // (Hashed in blocks: per line, the hash's own buffering cost
                // more than the hashing.)
                self.unhashed.extend_from_slice(self.line.as_bytes());
                self.unhashed.push(b'\n');
                if self.unhashed.len() >= HASH_BLOCK {
                    self.hash.update(&self.unhashed);
                    self.unhashed.clear();
                }
                self.entries += 1;
                Ok(true)
            }
        }
    }
}

/// The history of the crawl directory `root`: its list `history.v5.list`,
/// or an older version's file when only that exists (a crawl made by an
/// older build, until its next round).
pub fn current_path(root: &Path) -> PathBuf {
    let current = root.join(FILE_NAME);
    if current.exists() {
        return current;
    }
    OLD_FILE_NAMES
        .iter()
        .map(|name| root.join(name))
        .find(|p| p.exists())
        .unwrap_or(current)
}

/// Writes a history file atomically (nothing at the path before
/// [`HistoryWriter::finish`]).
pub struct HistoryWriter {
    path: PathBuf,
    encoder: zstd::stream::write::Encoder<'static, AtomicFile>,
    buf: Vec<u8>,
    entries: u64,
    hash: Xxh3,
}

impl HistoryWriter {
    /// Starts the file at `path`.
    pub fn create(path: &Path) -> Result<HistoryWriter, HistoryError> {
        let io = |source| HistoryError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = AtomicFile::create(path).map_err(io)?;
        let mut encoder = zstd::stream::write::Encoder::new(file, ZSTD_LEVEL).map_err(io)?;
        encoder.include_checksum(true).map_err(io)?;
        let mut buf = Vec::with_capacity(256 * 1024);
        buf.extend_from_slice(HEADER.as_bytes());
        buf.push(b'\n');
        Ok(HistoryWriter {
            path: path.to_path_buf(),
            encoder,
            buf,
            entries: 0,
            hash: Xxh3::new(),
        })
    }

    fn io(&self) -> impl FnOnce(io::Error) -> HistoryError {
        let path = self.path.clone();
        move |source| HistoryError::Io { path, source }
    }

    /// Where the file goes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Entries written so far.
    pub fn entries(&self) -> u64 {
        self.entries
    }

    /// Appends an entry.
    pub fn write(&mut self, e: &Entry) -> Result<(), HistoryError> {
        let start = self.buf.len();
        e.encode_line(&mut self.buf);
        self.hash.update(&self.buf[start..]);
        self.entries += 1;
        if self.buf.len() >= 128 * 1024 {
            self.encoder.write_all(&self.buf).map_err(self.io())?;
            self.buf.clear();
        }
        Ok(())
    }

    /// Writes the end line, fsyncs and renames into place; returns the
    /// number of entries.
    pub fn finish(mut self) -> Result<u64, HistoryError> {
        let end = format!("# end {} xxh3 {:016x}\n", self.entries, self.hash.digest());
        self.buf.extend_from_slice(end.as_bytes());
        self.encoder.write_all(&self.buf).map_err(self.io())?;
        let (path, entries) = (self.path, self.entries);
        let io = |source| HistoryError::Io { path, source };
        match self.encoder.finish() {
            Ok(file) => file.commit().map_err(io)?,
            Err(e) => return Err(io(e)),
        }
        Ok(entries)
    }
}

/// A header value kept in the history and in segments: one line, no tab,
/// not `-`; anything else is dropped (it would not round-trip).
pub fn clean_value(v: &str) -> &str {
    let v = v.trim();
    if v == "-" || v.len() > 1024 || v.bytes().any(|b| b < 0x20 || b == 0x7f) {
        ""
    } else {
        v
    }
}

#[cfg(test)]
mod tests;
