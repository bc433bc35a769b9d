//! The holds earlier runs left on hosts (the penalty box across runs):
//! the next contacts in hosts.db and the requests in the contacts journals
//! of runs that did not end cleanly, cut to the longest a run can hold a
//! host; and hosts.db as a run holds it while its workers run.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::hoststate::{HostDb, HostState};

use crate::clock::{self, instant_of};
use crate::contacts;
use crate::host_updates::{self, HostWriter};
use crate::queue_key::KeyOf;
use crate::settings::Settings;

/// The holds earlier runs left on hosts: the next contacts in hosts.db and
/// the requests in the contacts journals of runs that did not end cleanly.
pub(super) struct Holds {
    /// The longest a run can hold a host ([`longest_hold`]); a later hold
    /// (a clock set back, a hand edit) is cut to it.
    pub(super) longest: Duration,
    /// hosts.db, read for the hosts met on the way (redirect targets).
    db: Mutex<Option<HostDb>>,
    /// The contacts journals, by host.
    pub(super) journaled: HashMap<String, contacts::LastContact>,
    /// The delay after a journaled request to a host whose robots.txt is
    /// not known now (ms): the longest `Crawl-delay` obeyed, which the
    /// robots.txt a dead run read (or was reading) may have said.
    unknown_crawl_delay_ms: i64,
    /// With `--key domain` or `--key ip`: the hosts held now, in hosts.db
    /// or the journals, by queue key. A key's queue waits for every host
    /// of it, not only for those of this segment.
    pub(super) held_by_key: HashMap<String, Vec<String>>,
    /// The next contacts in hosts.db later than the start of the run (with
    /// `--key domain` or `--key ip`), by host.
    held_in_db: HashMap<String, i64>,
}

impl Holds {
    pub(super) fn new(
        longest: Duration,
        max_crawl_delay: Duration,
        db: Option<HostDb>,
        journaled: HashMap<String, contacts::LastContact>,
        held_in_db: HashMap<String, i64>,
        key_of: Option<&KeyOf>,
    ) -> Holds {
        let mut held_by_key: HashMap<String, Vec<String>> = HashMap::new();
        if let Some(key_of) = key_of {
            let hosts: HashSet<&String> = held_in_db.keys().chain(journaled.keys()).collect();
            for host in hosts {
                held_by_key
                    .entry(key_of(host))
                    .or_default()
                    .push(host.clone());
            }
        }
        Holds {
            longest,
            db: Mutex::new(db),
            journaled,
            unknown_crawl_delay_ms: i64::try_from(max_crawl_delay.as_millis()).unwrap_or(i64::MAX),
            held_by_key,
            held_in_db,
        }
    }

    /// Closes hosts.db, opened to read. Done before the host writer ends,
    /// so that the writer's connection is the last one: closing it removes
    /// the emptied write-ahead log, and `hosts.db` is left alone, whole.
    fn close(&self) {
        *self.db.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// The latest next contact earlier runs left on `host` (Unix ms), the
    /// journaled request followed by `delay_ms` at least, or by the longest
    /// `Crawl-delay` obeyed unless `robots_known` says that the host's
    /// robots.txt is known now. (A run killed after it read a robots.txt,
    /// before it kept it anywhere, leaves only the request in its journal:
    /// whatever that robots.txt said, the host waits long enough.)
    pub(super) fn of_host(
        &self,
        host: &str,
        state: Option<&HostState>,
        delay_ms: i64,
        robots_known: impl FnOnce() -> bool,
    ) -> Option<i64> {
        let journaled = self.journaled.get(host).map(|c| {
            let delay_ms = match robots_known() {
                true => delay_ms,
                false => delay_ms.max(self.unknown_crawl_delay_ms),
            };
            c.next_ms(delay_ms)
        });
        [
            state.and_then(|s| s.next_contact_ms),
            self.held_in_db.get(host).copied(),
            journaled,
        ]
        .into_iter()
        .flatten()
        .max()
    }

    /// `ms`, no later than the longest hold from `now_ms`.
    pub(super) fn cut(&self, ms: i64, now_ms: i64) -> i64 {
        let longest = i64::try_from(self.longest.as_millis()).unwrap_or(i64::MAX);
        ms.min(now_ms.saturating_add(longest))
    }

    /// The hold on a host met on the way (not in the segment), under queue
    /// `key`: the host's own, and the other hosts' of the key when the key
    /// is new to the run.
    pub(super) fn of_host_met(
        &self,
        key: &str,
        host: &str,
        new_key: bool,
    ) -> Option<std::time::Instant> {
        let now_ms = clock::now_ms();
        let stored = self
            .db
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .and_then(|db| db.get(host).ok().flatten());
        let others = new_key
            .then(|| self.held_by_key.get(key))
            .flatten()
            .into_iter()
            .flatten();
        let kept = |state: Option<&HostState>| {
            state
                .and_then(|s| s.robots.as_ref())
                .is_some_and(|r| r.reusable(now_ms))
        };
        std::iter::once(self.of_host(host, stored.as_ref(), 0, || kept(stored.as_ref())))
            .chain(others.map(|h| self.of_host(h, None, 0, || false)))
            .flatten()
            .max()
            .map(|ms| self.cut(ms, now_ms))
            .filter(|&ms| ms > now_ms)
            .map(instant_of)
    }
}

/// hosts.db as a run holds it once its workers may start: opened to read
/// for the holds of hosts met on the way, and to write by the host writer.
/// [`HostFiles::close`] closes them in that order, so that the writer's
/// connection is the last and leaves `hosts.db` one plain file, without
/// `-wal` and `-shm` beside it (see [`common::hoststate`]); dropped without
/// it (a run that ends early on an error), it does the same, waiting a
/// bounded time for the writer.
pub(super) struct HostFiles {
    pub(super) holds: Arc<Holds>,
    pub(super) writer: Option<HostWriter>,
}

/// How long a run that ends on an error waits for the host writer to save
/// and close hosts.db.
const HOST_WRITER_GRACE: Duration = Duration::from_secs(10);

impl HostFiles {
    /// A sender of host updates for a worker.
    pub(super) fn sender(&self) -> std::sync::mpsc::Sender<host_updates::HostUpdate> {
        self.writer.as_ref().expect("open").sender()
    }

    /// Saves what is pending and closes hosts.db: true if `hosts.db` alone
    /// is whole ([`HostWriter::finish`]). Call once, when the workers have
    /// ended.
    pub(super) fn close(&mut self) -> Result<bool, common::hoststate::HostDbError> {
        self.holds.close();
        match self.writer.take() {
            Some(w) => w.finish(),
            None => Ok(false),
        }
    }
}

impl Drop for HostFiles {
    fn drop(&mut self) {
        self.holds.close();
        if let Some(w) = self.writer.take() {
            let _ = w.finish_within(HOST_WRITER_GRACE);
        }
    }
}

/// The longest a run can hold a host: a Retry-After (capped), a robots.txt
/// retry, or a delay (a Crawl-delay, capped, or the factor times a response
/// time, at most the download timeout; backed off after failures, or a
/// parked host's day), after a request that may last the download timeout.
pub(super) fn longest_hold(s: &Settings) -> Duration {
    let p = &s.policy;
    let delay = [
        p.max_retry_after,
        s.options.robots_retry_delay,
        p.min_delay,
        p.max_crawl_delay,
        s.options.download_timeout.mul_f64(p.delay_factor),
        rules_longest_delay(s),
        p.backoff_max,
        common::politeness::PARKED_DELAY,
    ]
    .into_iter()
    .max()
    .unwrap_or_default();
    (delay + s.options.download_timeout).min(common::politeness::MAX_HOLD)
}

/// The longest delay a host rule can give a host: its `min_delay`, or
/// its `delay_factor` times a response time (at most the download timeout).
fn rules_longest_delay(s: &Settings) -> Duration {
    use common::rules::{Key, Value};
    let rules = s.host_rules.rules().iter();
    rules
        .flat_map(|r| [r.get(Key::MinDelay), r.get(Key::DelayFactor)])
        .map(|v| match v {
            Some(Value::Duration(d)) => *d,
            Some(Value::Number(f)) => s.options.download_timeout.mul_f64(f.max(0.0)),
            _ => Duration::ZERO,
        })
        .max()
        .unwrap_or_default()
}
