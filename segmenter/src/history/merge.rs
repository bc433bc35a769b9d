//! The history merge: the old history and the round's observations, both
//! sorted by (domain, host, URL), read side by side into the new history,
//! one entry in memory at a time (like a CrawlDb update).

use std::cmp::Ordering;
use std::collections::HashMap;

use crate::error::Error;
use crate::round::backlog::host_key;
use crate::round::candidates::{Meta, split_key};
use crate::round::sort::Merger;

use super::generations::Written;
use super::{
    Entry, HISTORY_REPAIR, HistoryError, HistoryOut, HistoryReader, Kind, Observation, Outcome,
    Schedule, State, SummaryCounter,
};

/// What a merge did (the history figures of the round's report).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct HistoryCounts {
    /// Entries in the new history.
    pub entries: u64,
    /// URLs fetched for the first time.
    pub new: u64,
    /// URLs fetched again and found unchanged (304, identical payload).
    pub unchanged: u64,
    /// URLs fetched again and found changed.
    pub changed: u64,
    /// URLs retired this round because they are gone (404/410 N times).
    pub gone: u64,
    /// URLs retired this round because they moved for good (301/308).
    pub moved: u64,
    /// URLs retired this round because robots.txt disallows them.
    pub robots: u64,
    /// Fetches with another answer (5xx, a first 404, a temporary redirect).
    pub failed: u64,
    /// Observations older than the history's last fetch of their URL
    /// (a run read twice): ignored.
    pub stale: u64,
    /// Active URLs due now, handed to the round's selection.
    pub due: u64,
    /// Of them, URLs made due by a sitemap's `<lastmod>` newer than their
    /// last fetch.
    pub due_by_lastmod: u64,
    /// Active URLs not yet due.
    pub waiting: u64,
    /// Retired URLs in the history.
    pub retired: u64,
    /// URLs whose retries ran out this round: kept as `failed`, due again
    /// at `recrawl_failed` (never dropped).
    pub gave_up: u64,
    /// `failed` URLs in the history (due or not).
    pub failing: u64,
    /// URLs whose interval was outside `recrawl_min..recrawl_max` (the
    /// bounds changed since it was set): clamped, their due time moved.
    pub rescheduled: u64,
}

impl HistoryCounts {
    /// URLs retired this round.
    pub fn retired_now(&self) -> u64 {
        self.gone + self.moved + self.robots
    }

    fn count(&mut self, outcome: Outcome, state: State) {
        match outcome {
            Outcome::New => self.new += 1,
            Outcome::Unchanged => self.unchanged += 1,
            Outcome::Changed => self.changed += 1,
            Outcome::Failed => self.failed += 1,
            Outcome::Retired => match state {
                State::Gone => self.gone += 1,
                State::Moved => self.moved += 1,
                State::Robots => self.robots += 1,
                State::Active | State::Failed => {}
            },
        }
    }
}

/// URLs of the fetch history per host and per registrable domain (those
/// retired by robots.txt aside: never asked), what the page budgets
/// (`max_host_pages`, `max_domain_pages`) count.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageCounts {
    /// By host.
    pub hosts: HashMap<String, u64>,
    /// By registrable domain.
    pub domains: HashMap<String, u64>,
}

impl PageCounts {
    fn add(&mut self, prefix: &[u8], host: &str) {
        let domain = std::str::from_utf8(prefix)
            .ok()
            .and_then(|p| p.split('\t').next())
            .unwrap_or_default();
        // (No allocation for a name already counted: most entries.)
        for (map, name) in [(&mut self.hosts, host), (&mut self.domains, domain)] {
            match map.get_mut(name) {
                Some(n) => *n += 1,
                None => {
                    map.insert(name.to_string(), 1);
                }
            }
        }
    }
}

/// The next observation out of the sort.
struct Next {
    prefix: Vec<u8>,
    host: String,
    url: String,
    obs: Observation,
}

/// Where the merge's next entry came from, and so how to tell whether it
/// changed (only changed entries go into the round's generation).
#[derive(Debug, Clone, Copy)]
enum Taken {
    /// A URL new to the history: written.
    New,
    /// An old entry with observations this round: compared with the entry
    /// as read.
    Observed,
    /// An old entry without observations (most of them): changed only if
    /// the schedule's bounds moved it (`rescaled`) or it was handed out
    /// (its due time, or its state, is another), which is cheaper to
    /// tell than comparing a copy.
    Untouched {
        /// Its interval was clamped to changed bounds.
        rescaled: bool,
    },
}

/// One history merge.
pub struct Merge<'a> {
    /// The current history, if there is one.
    pub old: Option<HistoryReader>,
    /// The round's observations, sorted.
    pub observations: Merger,
    /// The new history (staged): the entries the merge changes, or every
    /// entry when the history read is not kept in generations.
    pub out: HistoryOut,
    /// The schedule.
    pub schedule: &'a Schedule,
    /// The crawl's host rules: their `recrawl_min` and `recrawl_max` bound
    /// the schedule of the URLs they match ([`Merge::schedule_of`]).
    pub rules: &'a common::rules::HostRules,
    /// Now, Unix ms: URLs due before it are handed out.
    pub now_ms: i64,
    /// Spread the first refetch of URLs new to the history over their
    /// interval from now (a history built from old runs: no refetch storm).
    pub spread_new: bool,
    /// URLs to look up in the new history as it is written.
    pub lookup: Option<Lookup<'a>>,
    /// Count the URLs per host and domain ([`PageCounts`]).
    pub count_pages: bool,
}

/// What [`Lookup`] hands each URL to: its sort key, its meta, and whether
/// the history holds it.
pub type LookedUp<'a> = &'a mut dyn FnMut(&[u8], &Meta, bool) -> Result<(), Error>;

/// URLs looked up in the history as a merge writes it (the seen-set's
/// suspects, `crate::round::seen::rescue`), in the history's order: each is
/// handed to `each` with whether the history holds it, without a second
/// read of the history.
pub struct Lookup<'a> {
    urls: Merger,
    each: LookedUp<'a>,
    key: Vec<u8>,
    meta: Meta,
    /// (Suspects carry nothing: they are links, not refetches.)
    carried: Vec<u8>,
    have: bool,
    /// Where the URL of `key` starts, and the end of its `domain TAB host
    /// TAB` prefix (found once per URL, not once per history entry).
    url_at: usize,
    prefix_end: usize,
}

impl<'a> Lookup<'a> {
    /// Looks up `urls` (keys `domain TAB host TAB` + a zero hash + the URL,
    /// sorted).
    pub fn new(urls: Merger, each: LookedUp<'a>) -> Result<Lookup<'a>, Error> {
        let mut l = Lookup {
            urls,
            each,
            key: Vec::new(),
            meta: Meta::decode(&[0; Meta::ENCODED_LEN]),
            carried: Vec::new(),
            have: false,
            url_at: 0,
            prefix_end: 0,
        };
        l.advance()?;
        Ok(l)
    }

    fn advance(&mut self) -> Result<(), Error> {
        loop {
            self.have = self
                .urls
                .next_into(&mut self.key, &mut self.meta, &mut self.carried)?;
            if !self.have {
                return Ok(());
            }
            let Some(parts) = split_key(&self.key) else {
                continue;
            };
            self.url_at = self.key.len() - parts.url.len();
            self.prefix_end = crate::round::candidates::host_prefix(&self.key).len();
            return Ok(());
        }
    }

    /// Hands on the URLs before (`prefix`, `url`), an entry of the history,
    /// as not held, and one equal to it as held.
    fn up_to(&mut self, prefix: &[u8], url: &str) -> Result<(), Error> {
        while self.have {
            let order = (&self.key[..self.prefix_end], &self.key[self.url_at..])
                .cmp(&(prefix, url.as_bytes()));
            if order == Ordering::Greater {
                return Ok(());
            }
            (self.each)(&self.key, &self.meta, order == Ordering::Equal)?;
            self.advance()?;
        }
        Ok(())
    }

    /// Hands on the URLs after the last entry, as not held.
    fn finish(&mut self) -> Result<(), Error> {
        while self.have {
            (self.each)(&self.key, &self.meta, false)?;
            self.advance()?;
        }
        Ok(())
    }
}

/// The old history as the merge reads it: the next entry, its `domain
/// TAB host TAB` prefix and host (the prefix is made once per host).
#[derive(Default)]
struct OldEntries {
    entry: Entry,
    prefix: Vec<u8>,
    host: String,
    /// False at the end of the old history (or without one).
    have: bool,
}

/// The round's observations as the merge reads them: the next one, and
/// the buffers its key is read into.
struct Observations {
    next: Option<Next>,
    key: Vec<u8>,
    meta: Meta,
}

impl Observations {
    /// Before the first observation is read.
    fn new() -> Observations {
        Observations {
            next: None,
            key: Vec::new(),
            meta: Meta::decode(&[0; Meta::ENCODED_LEN]),
        }
    }
}

/// Fails when (`prefix`, `url`) does not sort after the last entry written:
/// the history is out of order.
fn check_order(prefix: &[u8], url: &str, last_prefix: &[u8], last_url: &str) -> Result<(), Error> {
    if !last_url.is_empty() && (prefix, url) <= (last_prefix, last_url) {
        return Err(damaged(HistoryError::Damaged {
            path: std::path::PathBuf::from(super::FILE_NAME),
            problem: format!(
                "{url} is out of order (the file is sorted by registrable domain, host, \
                 URL; was it edited, or written by a build with another public suffix \
                 list?)"
            ),
        }));
    }
    Ok(())
}

fn damaged(e: HistoryError) -> Error {
    Error::damaged(HISTORY_REPAIR)(e)
}

impl Merge<'_> {
    /// Runs the merge. Each active URL due by now goes to `due` (its `due`
    /// time then moves one interval on: it is scheduled). Returns what it
    /// did, and the URLs per host and domain if asked for.
    ///
    /// For each URL, in order: take the old entry or the first observation,
    /// whichever sorts first; apply the later observations of that URL;
    /// check the order; hand it out if due; write it if it changed (into
    /// the round's generation, [`HistoryOut`]). The new history's summary,
    /// counted from every entry, is saved beside it
    /// ([`super::SavedSummary`]): what `status` and the report read
    /// instead of the whole history.
    pub fn run(
        mut self,
        mut due: impl FnMut(&Entry) -> Result<(), Error>,
    ) -> Result<(HistoryCounts, PageCounts, Written), Error> {
        let mut counts = HistoryCounts::default();
        let mut pages = PageCounts::default();
        let mut obs = Observations::new();
        self.advance_observations(&mut obs)?;
        let mut old = OldEntries::default();
        self.advance_old(&mut old)?;
        // The entry being written and its prefix; the last one written.
        // Buffers are reused from entry to entry: the history is read and
        // written whole every round.
        let (mut entry, mut prefix) = (Entry::default(), Vec::new());
        let (mut last_prefix, mut last_url) = (Vec::new(), String::new());
        let mut summary = SummaryCounter::new(self.now_ms, 0, true);
        // The entry as the history read holds it, for an observed one, to
        // write only what changed.
        let mut before = Entry::default();
        while let Some(taken) = self.take_next(
            &mut old,
            &mut obs,
            &mut entry,
            &mut prefix,
            &mut counts,
            &mut before,
        )? {
            // (What `hand_out` may change of an entry not observed.)
            let scheduled = (entry.due_ms, entry.state);
            let hinted = self.apply_observations(&mut entry, &prefix, &mut obs, &mut counts)?;
            check_order(&prefix, &entry.url, &last_prefix, &last_url)?;
            counts.failing += u64::from(entry.state == State::Failed);
            if self.count_pages && entry.state != State::Robots {
                pages.add(&prefix, &entry.host);
            }
            self.hand_out(&mut entry, hinted, &mut due, &mut counts)?;
            if let Some(l) = &mut self.lookup {
                l.up_to(&prefix, &entry.url)?;
            }
            let changed = match taken {
                Taken::New => true,
                Taken::Observed => before != entry,
                Taken::Untouched { rescaled } => {
                    rescaled || scheduled != (entry.due_ms, entry.state)
                }
            };
            if self.out.whole() || changed {
                // (A failed write is an I/O error, not damage.)
                self.out.write(&entry)?;
            }
            summary.add(&entry);
            counts.entries += 1;
            last_prefix.clone_from(&prefix);
            last_url.clone_from(&entry.url);
        }
        if let Some(l) = &mut self.lookup {
            l.finish()?;
        }
        let bounds = self.schedule.bounds_key(self.rules);
        let written = (self.out).finish(self.now_ms, summary, bounds)?;
        Ok((counts, pages, written))
    }

    /// The next URL of the new history into `entry` and its `prefix`: the
    /// old entry or the first observation of a new URL, whichever sorts
    /// first (a hint about a URL the history does not hold is passed
    /// over); an old entry that has observations also as read into
    /// `before`. `None` when both sides are at their end.
    fn take_next(
        &mut self,
        old: &mut OldEntries,
        obs: &mut Observations,
        entry: &mut Entry,
        prefix: &mut Vec<u8>,
        counts: &mut HistoryCounts,
        before: &mut Entry,
    ) -> Result<Option<Taken>, Error> {
        loop {
            let order = match (old.have, &obs.next) {
                (false, None) => return Ok(None),
                (true, None) => Ordering::Less,
                (false, Some(_)) => Ordering::Greater,
                (true, Some(n)) => (old.prefix.as_slice(), old.entry.url.as_str())
                    .cmp(&(n.prefix.as_slice(), n.url.as_str())),
            };
            if order == Ordering::Greater
                && obs.next.as_ref().is_some_and(|n| n.obs.kind == Kind::Hint)
            {
                // A hint about a URL the history does not hold: it went the
                // new-URL way; the hint adds nothing.
                self.advance_observations(obs)?;
                continue;
            }
            if order == Ordering::Greater {
                let n = obs.next.take().expect("an observation");
                *entry = self.first_entry(&n, counts);
                *prefix = n.prefix;
                self.advance_observations(obs)?;
                return Ok(Some(Taken::New));
            }
            std::mem::swap(entry, &mut old.entry);
            // (Equal: the next observation is of this URL.)
            let observed = order == Ordering::Equal;
            if observed {
                before.copy_from(entry);
            }
            // recrawl_min/recrawl_max (the crawl's or a rule's) changed
            // since: they apply now.
            let schedule = self.schedule_of(&entry.host, &entry.url);
            let rescaled = schedule.rescale(entry);
            counts.rescheduled += u64::from(rescaled);
            prefix.clone_from(&old.prefix);
            self.advance_old(old)?;
            return Ok(Some(match observed {
                true => Taken::Observed,
                false => Taken::Untouched { rescaled },
            }));
        }
    }

    /// Applies to `entry` every (later) observation of its URL, oldest
    /// first, counted. True when a sitemap's hint made it due now.
    fn apply_observations(
        &mut self,
        entry: &mut Entry,
        prefix: &[u8],
        obs: &mut Observations,
        counts: &mut HistoryCounts,
    ) -> Result<bool, Error> {
        let mut hinted = false;
        while let Some(n) = &obs.next {
            if n.prefix != prefix || n.url != entry.url {
                break;
            }
            if n.obs.kind == Kind::Hint {
                // Changed (says a sitemap) after the last fetch: due now.
                if n.obs.fetched_ms > entry.fetched_ms
                    && entry.state == State::Active
                    && entry.due_ms > self.now_ms
                {
                    entry.due_ms = self.now_ms;
                    hinted = true;
                }
            } else if n.obs.kind == Kind::Exhausted {
                // Its retries ran out: kept, due again much later.
                counts.gave_up += u64::from(self.schedule.give_up(entry, &n.obs));
            } else if n.obs.fetched_ms <= entry.fetched_ms {
                counts.stale += 1;
            } else {
                if entry.state != State::Active && !n.obs.robots {
                    // A retired URL fetched again (a seed, a link from
                    // a page that was not retired): it is back.
                    entry.state = State::Active;
                    entry.strikes = 0;
                }
                let schedule = self.schedule_of(&entry.host, &entry.url);
                let outcome = schedule.apply(entry, &n.obs, false);
                counts.count(outcome, entry.state);
            }
            self.advance_observations(obs)?;
        }
        Ok(hinted)
    }

    /// Counts `entry` as due, waiting or retired. A due one goes to `due`,
    /// and its due time moves one interval on (it is scheduled).
    fn hand_out(
        &self,
        entry: &mut Entry,
        hinted: bool,
        due: &mut impl FnMut(&Entry) -> Result<(), Error>,
        counts: &mut HistoryCounts,
    ) -> Result<(), Error> {
        if !entry.state.refetched() {
            counts.retired += 1;
        } else if entry.due_ms <= self.now_ms {
            match self.rules.respelled(&entry.url) {
                // A host rule changed the URL's canonical form since it was
                // fetched: it is handed out under the new spelling (where it
                // meets the page's other spellings), whose fetch starts an
                // entry of its own; this one is retired as `moved`.
                Some(url) => {
                    due(&Entry {
                        url,
                        ..entry.clone()
                    })?;
                    entry.state = State::Moved;
                }
                None => due(entry)?,
            }
            counts.due += 1;
            counts.due_by_lastmod += u64::from(hinted);
            entry.due_ms = self
                .now_ms
                .saturating_add((entry.interval_s as i64).saturating_mul(1000));
        } else {
            counts.waiting += 1;
        }
        Ok(())
    }

    /// The schedule of `url` (of `host`): [`Schedule::for_url`].
    fn schedule_of(&self, host: &str, url: &str) -> Schedule {
        self.schedule.for_url(self.rules, host, url)
    }

    /// Moves `old` on to the next entry of the old history.
    fn advance_old(&mut self, old: &mut OldEntries) -> Result<(), Error> {
        old.have = self.next_old(&mut old.entry, &mut old.prefix, &mut old.host)?;
        Ok(())
    }

    /// Moves `obs` on to the next observation.
    fn advance_observations(&mut self, obs: &mut Observations) -> Result<(), Error> {
        obs.next = self.next_observation(&mut obs.key, &mut obs.meta)?;
        Ok(())
    }

    /// The entry of a URL new to the history, from its first observation
    /// (a fetch, or its retries running out), counted.
    fn first_entry(&self, n: &Next, counts: &mut HistoryCounts) -> Entry {
        if n.obs.kind == Kind::Exhausted {
            counts.gave_up += 1;
            return self.schedule.first_failed(&n.host, &n.url, &n.obs);
        }
        let schedule = self.schedule_of(&n.host, &n.url);
        let mut entry = schedule.first(&n.host, &n.url, &n.obs);
        if !n.obs.robots {
            counts.count(Outcome::New, entry.state);
        }
        if entry.state != State::Active {
            counts.count(Outcome::Retired, entry.state);
        }
        if self.spread_new && entry.state == State::Active {
            // A stable place in the interval, from the URL.
            let span = (entry.interval_s as i64).saturating_mul(1000).max(1);
            let at = (xxhash_rust::xxh3::xxh3_64(entry.url.as_bytes()) % span as u64) as i64;
            entry.due_ms = entry.due_ms.max(self.now_ms.saturating_add(at));
        }
        entry
    }

    /// Reads the next old entry into `e`; false at the end.
    fn next_old(
        &mut self,
        e: &mut Entry,
        prefix: &mut Vec<u8>,
        host: &mut String,
    ) -> Result<bool, Error> {
        let Some(r) = &mut self.old else {
            return Ok(false);
        };
        if !r.read_into(e).map_err(damaged)? {
            return Ok(false);
        }
        if e.host != *host {
            host_key(&e.host, prefix);
            host.clone_from(&e.host);
        }
        Ok(true)
    }

    fn next_observation(
        &mut self,
        key: &mut Vec<u8>,
        meta: &mut Meta,
    ) -> Result<Option<Next>, Error> {
        // (Observations carry nothing besides their key: empty, no allocation.)
        let mut carried = Vec::new();
        while self.observations.next_into(key, meta, &mut carried)? {
            let Some(parts) = split_key(key) else {
                continue;
            };
            let Some((url, obs)) = Observation::decode(parts.url) else {
                continue;
            };
            let prefix = crate::round::candidates::host_prefix(key).to_vec();
            return Ok(Some(Next {
                prefix,
                host: parts.host.to_string(),
                url: url.to_string(),
                obs,
            }));
        }
        Ok(None)
    }
}
