//! Host updates: the per-host state kept across runs (`hosts.db`, see
//! [`common::hoststate`]) is loaded for the hosts of the segment at the
//! start, updated by workers through a channel, and written back in batches
//! by one thread (SQLite connections are not shared).
//!
//! Every request ends with the host's next allowed contact, so that the next
//! run (or one resumed after a crash, with [`crate::contacts`]) starts each
//! host in the penalty box where this one left it.

use std::collections::{HashMap, HashSet};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, TryRecvError, channel};
use std::thread::JoinHandle;
use std::time::Duration;

use common::hoststate::{HostDb, HostDbError, HostState, RobotsEntry};

use crate::clock::now_ms;

/// An update for one host.
#[derive(Debug)]
pub enum HostUpdate {
    /// A request for a page ended: response time (if it got a response),
    /// whether it failed (a failure in a row backs the host off, across
    /// runs), and when the host may be asked again.
    Request {
        /// The host.
        host: String,
        /// Time to the end of the response.
        response_ms: Option<u32>,
        /// A failure (timeout, refused, 5xx).
        failed: bool,
        /// No request to the host before this (Unix ms).
        next_contact_ms: i64,
        /// WARC bytes stored for it (`bytes_total`, `max_host_bytes`).
        stored_bytes: u64,
    },
    /// A request for a robots.txt (or a redirect followed to read one)
    /// ended: when the host may be asked again.
    Contact {
        /// The host.
        host: String,
        /// No request to the host before this (Unix ms).
        next_contact_ms: i64,
    },
    /// robots.txt was fetched (kept as [`crate::robots_cache::entry`] makes it).
    Robots {
        /// The host.
        host: String,
        /// Status and body.
        entry: RobotsEntry,
        /// Crawl-delay for our agent.
        crawl_delay_ms: Option<u64>,
    },
}

/// Loads the state of `hosts` (those not in the database are absent).
pub fn load(
    db: &HostDb,
    hosts: impl IntoIterator<Item = String>,
) -> Result<HashMap<String, HostState>, HostDbError> {
    let mut out = HashMap::new();
    for h in hosts {
        if let Some(s) = db.get(&h)? {
            out.insert(h, s);
        }
    }
    Ok(out)
}

/// The thread that applies host updates and writes them to `hosts.db`.
pub struct HostWriter {
    tx: Option<Sender<HostUpdate>>,
    thread: Option<JoinHandle<Result<bool, HostDbError>>>,
}

impl HostWriter {
    /// Starts the writer with the states loaded at the start.
    pub fn start(db: HostDb, states: HashMap<String, HostState>) -> HostWriter {
        let (tx, rx) = channel();
        let thread = std::thread::Builder::new()
            .name("hosts".into())
            .spawn(move || run(db, states, rx))
            .expect("spawn the host-state thread");
        HostWriter {
            tx: Some(tx),
            thread: Some(thread),
        }
    }

    /// A sender for workers.
    pub fn sender(&self) -> Sender<HostUpdate> {
        self.tx.clone().expect("host writer is running")
    }

    /// Writes what is pending, folds the write-ahead log into `hosts.db`
    /// and stops; true if `hosts.db` alone is now whole
    /// ([`HostDb::checkpoint`]).
    pub fn finish(mut self) -> Result<bool, HostDbError> {
        drop(self.tx.take());
        self.thread
            .take()
            .expect("finish once")
            .join()
            .unwrap_or(Ok(false))
    }

    /// [`HostWriter::finish`], waiting at most `limit` for the thread (a
    /// run ending on an error, whose workers may not all have ended: their
    /// senders keep the thread going). `None` if it had not ended by then.
    pub fn finish_within(mut self, limit: Duration) -> Option<Result<bool, HostDbError>> {
        drop(self.tx.take());
        let thread = self.thread.take().expect("finish once");
        let started = std::time::Instant::now();
        while !thread.is_finished() && started.elapsed() < limit {
            std::thread::sleep(Duration::from_millis(5));
        }
        thread
            .is_finished()
            .then(|| thread.join().unwrap_or(Ok(false)))
    }
}

const BATCH_EVERY: Duration = Duration::from_secs(2);

fn run(
    mut db: HostDb,
    mut states: HashMap<String, HostState>,
    rx: Receiver<HostUpdate>,
) -> Result<bool, HostDbError> {
    let mut dirty: HashSet<String> = HashSet::new();
    let mut last_write = std::time::Instant::now();
    // While updates keep coming, take them in batches with a pause between
    // (as the recorder does), so that a worker's send rarely has to wake
    // this thread.
    let mut busy = false;
    loop {
        let msg = if busy {
            match rx.try_recv() {
                Ok(u) => Ok(u),
                Err(TryRecvError::Empty) => {
                    busy = false;
                    std::thread::sleep(crate::recorder::BATCH_PAUSE);
                    continue;
                }
                Err(TryRecvError::Disconnected) => Err(RecvTimeoutError::Disconnected),
            }
        } else {
            rx.recv_timeout(BATCH_EVERY)
        };
        busy = msg.is_ok();
        match msg {
            Ok(u) => apply(&db, &mut states, &mut dirty, u),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        if !dirty.is_empty() && last_write.elapsed() >= BATCH_EVERY {
            flush(&mut db, &states, &mut dirty)?;
            last_write = std::time::Instant::now();
        }
    }
    flush(&mut db, &states, &mut dirty)?;
    db.checkpoint()
}

/// Applies an update to the host's state: the one loaded at the start, or
/// else the one in the database (a host met on the way: a redirect target,
/// a second host of a domain queue), or else a new one. Starting from an
/// empty state instead would overwrite what earlier runs stored.
fn apply(
    db: &HostDb,
    states: &mut HashMap<String, HostState>,
    dirty: &mut HashSet<String>,
    u: HostUpdate,
) {
    let host = match &u {
        HostUpdate::Request { host, .. }
        | HostUpdate::Robots { host, .. }
        | HostUpdate::Contact { host, .. } => host.clone(),
    };
    let s = states.entry(host.clone()).or_insert_with(|| {
        db.get(&host).ok().flatten().unwrap_or_else(|| HostState {
            host: host.clone(),
            ..HostState::default()
        })
    });
    match u {
        HostUpdate::Request {
            response_ms,
            failed,
            next_contact_ms,
            stored_bytes,
            ..
        } => {
            s.last_contact_ms = Some(now_ms());
            s.bytes_total = s.bytes_total.saturating_add(stored_bytes);
            s.next_contact_ms = s.next_contact_ms.max(Some(next_contact_ms));
            if let Some(ms) = response_ms {
                s.push_response_time(ms);
            }
            if failed {
                note_failure(s);
            } else {
                note_success(s);
                s.pages_total += 1;
            }
        }
        HostUpdate::Robots {
            entry,
            crawl_delay_ms,
            ..
        } => {
            s.last_contact_ms = Some(entry.fetched_ms);
            s.crawl_delay_ms = crawl_delay_ms;
            // Unreachable, 5xx, 429: the host failed (and backs off).
            if entry.status == 0 || entry.status == 429 || entry.status >= 500 {
                note_failure(s);
            } else {
                note_success(s);
            }
            s.robots = Some(entry);
        }
        HostUpdate::Contact {
            next_contact_ms, ..
        } => {
            s.last_contact_ms = Some(now_ms());
            // Updates can arrive out of order: the latest hold wins.
            s.next_contact_ms = s.next_contact_ms.max(Some(next_contact_ms));
        }
    }
    dirty.insert(host);
}

/// A failure in a row: counted, and when the row began kept (a host
/// failing for `park_after` is parked).
fn note_failure(s: &mut HostState) {
    s.errors_total += 1;
    s.consecutive_errors = s.consecutive_errors.saturating_add(1);
    s.failing_since_ms.get_or_insert_with(now_ms);
}

/// An answer: the backoff ends.
fn note_success(s: &mut HostState) {
    s.consecutive_errors = 0;
    s.failing_since_ms = None;
}

fn flush(
    db: &mut HostDb,
    states: &HashMap<String, HostState>,
    dirty: &mut HashSet<String>,
) -> Result<u64, HostDbError> {
    if dirty.is_empty() {
        return Ok(0);
    }
    let batch: Vec<HostState> = dirty
        .drain()
        .filter_map(|h| states.get(&h).cloned())
        .collect();
    db.put_many(&batch)?;
    Ok(batch.len() as u64)
}
