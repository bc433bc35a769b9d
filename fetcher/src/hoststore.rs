//! The per-host state kept across runs (`hosts.db`): loaded for the hosts of
//! the segment at the start, updated by workers through a channel, and
//! written back in batches by one thread (SQLite connections are not shared).

use std::collections::{HashMap, HashSet};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::hoststate::{HostDb, HostDbError, HostState, RobotsEntry};

/// How long a stored robots.txt is trusted.
pub const ROBOTS_TTL: Duration = Duration::from_secs(24 * 3600);

/// An update for one host.
#[derive(Debug)]
pub enum HostUpdate {
    /// A request ended: response time (if it got a response) and whether it failed.
    Request {
        /// The host.
        host: String,
        /// Time to the end of the response.
        response_ms: Option<u32>,
        /// A failure (timeout, refused, 5xx).
        failed: bool,
    },
    /// robots.txt was fetched (status 0: unreachable).
    Robots {
        /// The host.
        host: String,
        /// Status and body.
        entry: RobotsEntry,
        /// Crawl-delay for our agent.
        crawl_delay_ms: Option<u64>,
    },
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
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

/// True if a stored robots.txt is recent enough to use.
pub fn robots_fresh(entry: &RobotsEntry, now_ms: i64) -> bool {
    entry.status != 0
        && !(500..600).contains(&entry.status)
        && entry.status != 429
        && now_ms.saturating_sub(entry.fetched_ms) < ROBOTS_TTL.as_millis() as i64
}

/// The writer thread.
pub struct HostStore {
    tx: Option<Sender<HostUpdate>>,
    thread: Option<JoinHandle<Result<u64, HostDbError>>>,
}

impl HostStore {
    /// Starts the writer with the states loaded at the start.
    pub fn start(db: HostDb, states: HashMap<String, HostState>) -> HostStore {
        let (tx, rx) = channel();
        let thread = std::thread::Builder::new()
            .name("hosts".into())
            .spawn(move || run(db, states, rx))
            .expect("spawn the host-state thread");
        HostStore {
            tx: Some(tx),
            thread: Some(thread),
        }
    }

    /// A sender for workers.
    pub fn sender(&self) -> Sender<HostUpdate> {
        self.tx.clone().expect("host store is running")
    }

    /// Writes what is pending and stops; returns the number of hosts written.
    pub fn finish(mut self) -> Result<u64, HostDbError> {
        drop(self.tx.take());
        self.thread
            .take()
            .expect("finish once")
            .join()
            .unwrap_or(Ok(0))
    }
}

const BATCH_EVERY: Duration = Duration::from_secs(2);

fn run(
    mut db: HostDb,
    mut states: HashMap<String, HostState>,
    rx: Receiver<HostUpdate>,
) -> Result<u64, HostDbError> {
    let mut dirty: HashSet<String> = HashSet::new();
    let mut written = 0u64;
    let mut last_write = std::time::Instant::now();
    loop {
        let msg = rx.recv_timeout(BATCH_EVERY);
        match msg {
            Ok(u) => apply(&mut states, &mut dirty, u),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        if !dirty.is_empty() && last_write.elapsed() >= BATCH_EVERY {
            written += flush(&mut db, &states, &mut dirty)?;
            last_write = std::time::Instant::now();
        }
    }
    written += flush(&mut db, &states, &mut dirty)?;
    Ok(written)
}

fn apply(states: &mut HashMap<String, HostState>, dirty: &mut HashSet<String>, u: HostUpdate) {
    let host = match &u {
        HostUpdate::Request { host, .. } | HostUpdate::Robots { host, .. } => host.clone(),
    };
    let s = states.entry(host.clone()).or_insert_with(|| HostState {
        host: host.clone(),
        ..HostState::default()
    });
    match u {
        HostUpdate::Request {
            response_ms,
            failed,
            ..
        } => {
            s.last_contact_ms = Some(now_ms());
            if let Some(ms) = response_ms {
                s.push_response_time(ms);
            }
            if failed {
                s.errors_total += 1;
                s.consecutive_errors += 1;
            } else {
                s.consecutive_errors = 0;
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
            s.robots = Some(entry);
        }
    }
    dirty.insert(host);
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
