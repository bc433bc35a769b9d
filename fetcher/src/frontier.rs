//! The frontier: one URL queue per key (host, registrable domain or IP), a
//! ready-queue of keys, and the **penalty box** — a min-heap of keys keyed by
//! the time each may next be contacted.
//!
//! Workers take [`Task`]s with [`Frontier::next_tasks`], do the network
//! calls with no lock held, and report back; the key then goes into the penalty box
//! until its delay has passed. The delay counts from the report, made once
//! the worker holds the whole response, which is after the server sent its
//! last byte: the gap a host sees between two requests is never shorter. A key is handed to one worker at a time, so at
//! most one request per key is ever in flight. Workers that find nothing ready
//! block on the condition variable until the earliest penalty-box time (or a
//! report) instead of polling.
//!
//! robots.txt is a request like any other: a redirect of it is fetched
//! through the queue of the target's host ([`RobotsReport::Redirect`]),
//! after that host's delay, while the queue waiting for the rules parks.
//!
//! Queues hold at most a batch of URLs in memory; the rest stays in the work
//! file as byte ranges ([`crate::feed`]) and is read back by a
//! [`Task::Refill`] when the queue runs dry.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use common::crawllog::ErrorCode;
use common::segment::{SegmentRecord, Via};

use common::politeness::{AfterFailure, Policy, Timing};

use crate::budget::Cut;
use crate::robots::Robots;
use crate::round_end::Pace;

/// One URL to fetch: its segment line, and how it was reached in this run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    /// The URL and its fields as in the segment.
    pub rec: SegmentRecord,
    /// Redirects followed in this run to reach it.
    pub redirects: u32,
}

impl Job {
    /// From a segment record.
    pub fn from_record(r: &SegmentRecord) -> Job {
        Job {
            rec: r.clone(),
            redirects: 0,
        }
    }

    /// The same URL to try again in a later run: `via` retry, with one
    /// more try if the failure was its own (see [`crate::outcome::own_failure`]).
    pub fn retry(&self, own_failure: bool) -> Job {
        Job {
            rec: self.to_record(Via::Retry, self.rec.tries + u32::from(own_failure)),
            redirects: self.redirects,
        }
    }

    /// As a segment record with another `via` and `tries`.
    pub fn to_record(&self, via: Via, tries: u32) -> SegmentRecord {
        SegmentRecord {
            via,
            tries,
            ..self.rec.clone()
        }
    }
}

/// Index of a key.
pub type KeyId = usize;

/// A byte range of the work file holding one key's URLs not yet loaded.
pub type Range = (u64, u64);

/// Work handed to a worker.
#[derive(Debug)]
pub enum Task {
    /// Read the key's next URLs from the work file, then call [`Frontier::refilled`].
    Refill {
        /// The key.
        key: KeyId,
        /// Where its next URLs are.
        range: Range,
    },
    /// Fetch `url`, one step of reading the robots.txt of `host` (the
    /// queue `owner` waits for it), then call [`Frontier::robots_done`].
    /// `key` is the queue of the host `url` is on: `owner` for
    /// `/robots.txt` itself, maybe another for a redirect target, so that
    /// every request keeps the politeness of the host it goes to.
    Robots {
        /// The queue the request goes through.
        key: KeyId,
        /// The queue waiting for the rules.
        owner: KeyId,
        /// The host whose rules these are.
        host: String,
        /// What to fetch: `/robots.txt` of `host`, or a redirect target.
        url: String,
        /// Redirects followed to get here.
        hops: u32,
        /// The queue's delay as the request starts.
        delay: Duration,
    },
    /// Fetch a URL, then call [`Frontier::fetch_done`].
    Fetch {
        /// The key.
        key: KeyId,
        /// The URL.
        job: Job,
        /// The queue's delay as the request starts.
        delay: Duration,
    },
}

/// A URL dropped without a request while choosing a task (robots denial);
/// the worker logs it after the lock is released.
#[derive(Debug)]
pub struct Skipped {
    /// The URL.
    pub job: Job,
    /// Why.
    pub code: ErrorCode,
    /// The crawl-log note (the rule that denied it).
    pub note: String,
}

/// How a fetch went, for politeness.
#[derive(Debug, Default)]
pub struct FetchReport {
    /// Time from request to end of response, or to a timeout (None if
    /// no response came otherwise).
    pub response_time: Option<Duration>,
    /// Counts toward dropping the host (timeout, refused, 5xx).
    pub failed: bool,
    /// Wait asked by Retry-After (already capped).
    pub retry_after: Option<Duration>,
    /// The URL to try again in a later run (a transient failure), as it
    /// was asked: it goes to the leftover as a retry, with one more try
    /// unless its host was failing already ([`crate::outcome::own_failure`]).
    pub retry: Option<Job>,
    /// The request was abandoned at shutdown: put the URL back, untried.
    pub interrupted: Option<Job>,
    /// Give the key up for the run with this code (a name that does not resolve).
    pub give_up: Option<ErrorCode>,
    /// A redirect target to queue in this run with its queue key (already
    /// checked for scope).
    pub follow: Option<(String, Job)>,
    /// WARC bytes stored for the response (the queue's byte budgets).
    pub stored_bytes: u64,
}

/// How a robots.txt fetch went.
#[derive(Debug)]
pub enum RobotsReport {
    /// The response redirects: fetch `url` next, through queue `key` (the
    /// queue key of its host), after that queue's delay.
    Redirect {
        /// The queue key of the target's host.
        key: String,
        /// The target.
        url: String,
        /// Redirects followed to reach it.
        hops: u32,
    },
    /// Rules to apply.
    Rules(Arc<Robots>),
    /// Unavailable: ask again later (up to [`ROBOTS_TRIES`] times in all),
    /// or, if not `ask_again`, give the host up for this run at once.
    Unavailable {
        /// False when asking again is pointless (the name does not resolve).
        ask_again: bool,
    },
    /// Abandoned at shutdown.
    Interrupted,
}

/// A snapshot for the progress display.
#[derive(Debug, Clone, Copy, Default)]
pub struct Counts {
    /// Keys ready to be served.
    pub ready: usize,
    /// Keys waiting in the penalty box.
    pub penalty: usize,
    /// Keys with a request in flight (or a refill).
    pub busy: usize,
    /// Hosts whose robots.txt is being fetched.
    pub robots_pending: usize,
    /// Keys that still have work.
    pub with_work: usize,
}

/// A pass over every key, for the metrics file ([`Frontier::census`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Census {
    /// URLs not handed out yet, of keys not given up.
    pub urls_left: u64,
    /// Keys with work that failed since their last success: their delay
    /// is backed off.
    pub backed_off: usize,
}

/// What is left of one key when the run ends.
#[derive(Debug)]
pub struct KeyLeftover {
    /// The key's name.
    pub name: String,
    /// Why the key was given up, if it was.
    pub abandoned: Option<ErrorCode>,
    /// The byte budget that stopped the key, if one did (its URLs were not
    /// attempted).
    pub cut: Option<Cut>,
    /// URLs to retry later.
    pub retries: Vec<Job>,
    /// URLs loaded but not attempted.
    pub queued: Vec<Job>,
    /// Work-file ranges never loaded.
    pub ranges: Vec<Range>,
    /// When the key may be contacted again, if that is still to come.
    pub not_before: Option<Instant>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Ready,
    Busy,
    Penalty,
    /// Waiting for the robots.txt of its next URL's host, being read through
    /// another queue (a redirect to another host); woken when it is known.
    Parked,
    Done,
}

#[derive(Debug)]
struct Key {
    name: String,
    queue: VecDeque<Job>,
    ranges: VecDeque<Range>,
    /// Steps of other hosts' robots.txt that go to this queue's host
    /// (served before the queue's own URLs).
    robots_steps: VecDeque<RobotsStep>,
    status: Status,
    timing: Timing,
    abandoned: Option<ErrorCode>,
    /// WARC bytes stored in this run.
    bytes: u64,
    /// The bytes it may store, and the budget that sets them.
    byte_budget: Option<(u64, Cut)>,
    /// The byte budget reached: no more of its URLs in this run.
    cut: Option<Cut>,
    retries: Vec<Job>,
    /// URLs not yet handed out (queued or still in the work file).
    urls_left: u64,
    /// When its task in flight started.
    busy_since: Option<Instant>,
    /// The last time it was put in the penalty box for: when it may be
    /// contacted again.
    next_at: Option<Instant>,
    /// The robots.txt it waits for could not be read in this run (and has
    /// not been since): its URLs count a try when they go to leftover.
    robots_failed: bool,
}

impl Key {
    fn new(
        name: String,
        ranges: VecDeque<Range>,
        urls: u64,
        status: Status,
        timing: Timing,
    ) -> Key {
        Key {
            name,
            queue: VecDeque::new(),
            ranges,
            robots_steps: VecDeque::new(),
            status,
            timing,
            abandoned: None,
            bytes: 0,
            byte_budget: None,
            cut: None,
            retries: Vec::new(),
            urls_left: urls,
            busy_since: None,
            next_at: None,
            robots_failed: false,
        }
    }

    fn has_work(&self) -> bool {
        !(self.queue.is_empty() && self.ranges.is_empty() && self.robots_steps.is_empty())
    }

    /// Given up for the run: after failures, or at a byte budget.
    fn stopped(&self) -> bool {
        self.abandoned.is_some() || self.cut.is_some()
    }
}

/// A redirect of some host's robots.txt, to fetch through the queue of the
/// target's host.
#[derive(Debug)]
struct RobotsStep {
    owner: KeyId,
    host: String,
    url: String,
    hops: u32,
}

#[derive(Debug)]
enum RobotsState {
    /// Being read (`tries` earlier attempts were unavailable).
    Fetching {
        tries: u32,
    },
    Known(Arc<Robots>),
    Unavailable {
        tries: u32,
        retry_at: Instant,
    },
}

/// robots.txt attempts before a host's URLs are left for a later run.
pub const ROBOTS_TRIES: u32 = 3;

#[derive(Debug)]
struct State {
    keys: Vec<Key>,
    by_name: HashMap<String, KeyId>,
    ready: VecDeque<KeyId>,
    penalty: BinaryHeap<Reverse<(Instant, KeyId)>>,
    robots: HashMap<String, RobotsState>,
    seen_in_run: HashSet<String>,
    busy: usize,
    with_work: usize,
    robots_pending: usize,
    /// Requests that ended in this run (not abandoned).
    requests_done: u64,
    /// Hosts whose carried hold was looked up.
    held_hosts: HashSet<String>,
    /// The time one waiting worker sleeps until (the penalty box's head
    /// when it went to sleep); the other waiters sleep until woken, so
    /// that a key coming out of the box wakes one worker, not all of them.
    timer: Option<Instant>,
    /// Workers waiting in [`Frontier::next_task`] (a wake-up is a system
    /// call: none is made when nobody waits).
    waiting: usize,
    stopping: bool,
    finished: bool,
}

/// The frontier. Shared by all workers behind one mutex.
pub struct Frontier {
    state: Mutex<State>,
    /// Workers wait here for a key to become ready.
    cond: Condvar,
    /// The supervising thread waits here for the end (kept apart so that it
    /// never swallows a wake-up meant for a worker).
    idle: Condvar,
    policy: Policy,
    robots_retry_delay: Duration,
    /// The next allowed contact that earlier runs left for a host this run
    /// meets on the way (a redirect target, another host of a key).
    carried: CarriedHold,
}

/// Looks up the next allowed contact carried from earlier runs for a host
/// met under a queue key (`true`: a key new to the run, which also waits for
/// the holds on its other hosts).
pub type CarriedHold = Box<dyn Fn(&str, &str, bool) -> Option<Instant> + Send + Sync>;

impl std::fmt::Debug for Frontier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Frontier")
            .field("policy", &self.policy)
            .finish_non_exhaustive()
    }
}

/// Longest a waiting worker sleeps before looking again, as a bound.
const MAX_WAIT: Duration = Duration::from_secs(1);

impl Frontier {
    /// An empty frontier that knows of no hold from earlier runs.
    #[cfg(test)]
    pub fn new(policy: Policy, robots_retry_delay: Duration) -> Frontier {
        Frontier::with_carried(policy, robots_retry_delay, Box::new(|_, _, _| None))
    }

    /// An empty frontier that asks `carried` for the hold earlier runs left
    /// on each host met on the way (keys added with [`Frontier::add_key`]
    /// come with theirs).
    pub fn with_carried(
        policy: Policy,
        robots_retry_delay: Duration,
        carried: CarriedHold,
    ) -> Frontier {
        Frontier {
            state: Mutex::new(State {
                keys: Vec::new(),
                by_name: HashMap::new(),
                ready: VecDeque::new(),
                penalty: BinaryHeap::new(),
                robots: HashMap::new(),
                seen_in_run: HashSet::new(),
                busy: 0,
                with_work: 0,
                robots_pending: 0,
                requests_done: 0,
                held_hosts: HashSet::new(),
                timer: None,
                waiting: 0,
                stopping: false,
                finished: false,
            }),
            cond: Condvar::new(),
            idle: Condvar::new(),
            policy,
            robots_retry_delay,
            carried,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A worker that panicked holding the lock leaves the state as it was
        // between two whole updates; carrying on is safe.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a key with its work-file ranges (holding `urls` URLs) and what
    /// earlier runs left of its timing (response times, failures in a row:
    /// [`Policy::timing_of`]). It is ready at once, or waits in the penalty
    /// box until `not_before` (its next allowed contact, carried over from
    /// earlier runs).
    pub fn add_key(
        &self,
        name: &str,
        ranges: Vec<Range>,
        urls: u64,
        timing: Timing,
        not_before: Option<Instant>,
    ) -> KeyId {
        let mut st = self.lock();
        let id = st.keys.len();
        st.keys.push(Key::new(
            name.to_string(),
            ranges.into(),
            urls,
            Status::Ready,
            timing,
        ));
        st.by_name.insert(name.to_string(), id);
        st.with_work += 1;
        match not_before.filter(|&at| at > Instant::now()) {
            Some(at) => self.to_penalty(&mut st, id, at),
            None => st.ready.push_back(id),
        }
        id
    }

    /// Lets key `key` store at most `bytes` WARC bytes in this run (the
    /// budget `cut` sets): when reached, its other URLs go to the leftover.
    pub fn set_byte_budget(&self, key: KeyId, bytes: u64, cut: Cut) {
        let mut st = self.lock();
        let k = &mut st.keys[key];
        if k.byte_budget.is_none_or(|(b, _)| bytes < b) {
            k.byte_budget = Some((bytes, cut));
        }
        if bytes == 0 {
            k.cut = Some(cut);
        }
    }

    /// Adds a URL already attempted by an earlier run (resume) that must be
    /// retried later: it goes straight to the key's leftover.
    pub fn add_retry(&self, key: KeyId, job: Job) {
        self.lock().keys[key].retries.push(job);
    }

    /// Sets the robots.txt rules of a host known from the host state or an
    /// earlier run; returns false if its Crawl-delay is over the cap (the
    /// key is then given up).
    pub fn set_robots(&self, key: KeyId, host: &str, robots: Arc<Robots>) -> bool {
        let mut st = self.lock();
        self.apply_rules(&mut st, key, robots, host)
    }

    fn apply_rules(&self, st: &mut State, key: KeyId, robots: Arc<Robots>, host: &str) -> bool {
        let ok = match robots.crawl_delay() {
            Some(cd) if !self.policy.crawl_delay_acceptable(cd) => {
                st.keys[key].abandoned = Some(ErrorCode::CrawlDelay);
                if st.keys[key].status == Status::Penalty {
                    // Nothing to wait for: settled now (its entry in the
                    // penalty box goes stale).
                    self.give_up(st, key, Instant::now());
                }
                false
            }
            Some(cd) => {
                st.keys[key].timing.note_crawl_delay(cd);
                true
            }
            None => true,
        };
        st.robots
            .insert(host.to_string(), RobotsState::Known(robots));
        st.keys[key].robots_failed = false;
        ok
    }

    /// Blocks until there is a task, or returns `None` when the run is over
    /// (everything done, or stopping). URLs denied by robots.txt on the way
    /// are appended to `skipped` for the caller to log.
    #[cfg(test)]
    pub fn next_task(&self, skipped: &mut Vec<Skipped>) -> Option<Task> {
        let mut one = Vec::with_capacity(1);
        self.next_tasks(1, &mut one, skipped);
        one.pop()
    }

    /// Blocks until there is a task, then appends it to `out` with up to
    /// `most - 1` more that are ready at once (one lock for them all);
    /// false, with nothing appended, when the run is over (everything done,
    /// or stopping). URLs denied by robots.txt on the way are appended to
    /// `skipped` for the caller to log.
    pub fn next_tasks(&self, most: usize, out: &mut Vec<Task>, skipped: &mut Vec<Skipped>) -> bool {
        let mut st = self.lock();
        let start = out.len();
        loop {
            if st.stopping || st.finished {
                return false;
            }
            let now = Instant::now();
            while let Some(&Reverse((at, id))) = st.penalty.peek() {
                if at > now {
                    break;
                }
                st.penalty.pop();
                // An entry is stale if its key left the penalty box since
                // (settled while it waited, then woken with new work).
                let key = &mut st.keys[id];
                if key.status == Status::Penalty && key.next_at == Some(at) {
                    key.status = Status::Ready;
                    st.ready.push_back(id);
                }
            }
            while out.len() - start < most.max(1)
                && let Some(id) = st.ready.pop_front()
            {
                if let Some(task) = self.task_for(&mut st, id, now, skipped) {
                    st.busy += 1;
                    out.push(task);
                }
            }
            if out.len() > start {
                if !st.ready.is_empty() || (!st.penalty.is_empty() && st.timer.is_none()) {
                    // Pass the wake-up on: another waiter may have
                    // something to do (or the time to keep, if this
                    // worker was keeping it).
                    self.wake_one(&st);
                }
                return true;
            }
            let (wait, keeping) = match st.penalty.peek() {
                Some(&Reverse((at, _))) if st.with_work > 0 || st.busy > 0 => {
                    if st.timer.is_none_or(|t| at < t) {
                        // Keep the time of the penalty box's head.
                        st.timer = Some(at);
                        (at.saturating_duration_since(now).min(MAX_WAIT), Some(at))
                    } else {
                        // Another waiter keeps it (or a nearer one).
                        (MAX_WAIT, None)
                    }
                }
                None if st.busy > 0 => (MAX_WAIT, None),
                _ => {
                    st.finished = true;
                    self.cond.notify_all();
                    self.idle.notify_all();
                    return false;
                }
            };
            st.waiting += 1;
            st = self
                .cond
                .wait_timeout(st, wait)
                .unwrap_or_else(|e| e.into_inner())
                .0;
            st.waiting -= 1;
            if keeping.is_some() && st.timer == keeping {
                st.timer = None;
            }
        }
    }

    /// Chooses the task for a ready key, or settles the key (done, waiting
    /// for robots.txt) and returns `None`.
    fn task_for(
        &self,
        st: &mut State,
        id: KeyId,
        now: Instant,
        skipped: &mut Vec<Skipped>,
    ) -> Option<Task> {
        loop {
            if st.keys[id].stopped() {
                self.give_up(st, id, now);
                return None;
            }
            if let Some(step) = st.keys[id].robots_steps.pop_front() {
                st.robots_pending += 1;
                self.set_busy(st, id, now);
                return Some(Task::Robots {
                    key: id,
                    owner: step.owner,
                    host: step.host,
                    url: step.url,
                    hops: step.hops,
                    delay: self.policy.delay(&st.keys[id].timing),
                });
            }
            let Some(job) = st.keys[id].queue.front() else {
                if let Some(range) = st.keys[id].ranges.pop_front() {
                    self.set_busy(st, id, now);
                    return Some(Task::Refill { key: id, range });
                }
                self.settle_done(st, id);
                return None;
            };
            let host = job.rec.host.clone();
            match st.robots.get(&host) {
                Some(RobotsState::Fetching { .. }) => {
                    // Being read through another queue (robots.txt redirects
                    // to another host): `robots_done` wakes this one.
                    st.keys[id].status = Status::Parked;
                    return None;
                }
                Some(RobotsState::Unavailable { retry_at, .. }) if *retry_at > now => {
                    let at = *retry_at;
                    self.to_penalty(st, id, at);
                    return None;
                }
                None | Some(RobotsState::Unavailable { .. }) => {
                    // Not asked yet, or time to ask again.
                    let tries = match st.robots.get(&host) {
                        Some(RobotsState::Unavailable { tries, .. }) => *tries,
                        _ => 0,
                    };
                    let Ok(url) = url::Url::parse(&job.rec.url).and_then(|u| u.join("/robots.txt"))
                    else {
                        // Not a URL: it fails (and is logged) when fetched.
                        let rules = RobotsState::Known(Arc::new(Robots::allow_all()));
                        st.robots.insert(host, rules);
                        continue;
                    };
                    st.robots
                        .insert(host.clone(), RobotsState::Fetching { tries });
                    st.robots_pending += 1;
                    self.set_busy(st, id, now);
                    return Some(Task::Robots {
                        key: id,
                        owner: id,
                        host,
                        url: url.to_string(),
                        hops: 0,
                        delay: self.policy.delay(&st.keys[id].timing),
                    });
                }
                Some(RobotsState::Known(robots)) => {
                    let denied = crate::url_parts::path_and_query(&job.rec.url)
                        .and_then(|p| robots.denied_by(&p));
                    let job = st.keys[id].queue.pop_front().expect("front exists");
                    let key = &mut st.keys[id];
                    key.urls_left = key.urls_left.saturating_sub(1);
                    let Some(rule) = denied else {
                        self.set_busy(st, id, now);
                        let delay = self.policy.delay(&st.keys[id].timing);
                        return Some(Task::Fetch {
                            key: id,
                            job,
                            delay,
                        });
                    };
                    skipped.push(Skipped {
                        job,
                        code: ErrorCode::Robots,
                        note: format!("robots.txt: {rule}"),
                    });
                }
            }
        }
    }

    fn set_busy(&self, st: &mut State, id: KeyId, now: Instant) {
        st.keys[id].status = Status::Busy;
        st.keys[id].busy_since = Some(now);
    }

    /// Settles an abandoned key; the robots.txt steps it was to fetch for
    /// other hosts end as unavailable (those hosts ask again later).
    fn give_up(&self, st: &mut State, id: KeyId, now: Instant) {
        for step in std::mem::take(&mut st.keys[id].robots_steps) {
            self.robots_unavailable(st, step.owner, &step.host, true, now);
        }
        self.settle_done(st, id);
    }

    /// Wakes a key parked for a robots.txt that is now settled; it waits
    /// its own delay first.
    fn wake_parked(&self, st: &mut State, id: KeyId, now: Instant) {
        if st.keys[id].status == Status::Parked {
            let at = now + self.policy.delay(&st.keys[id].timing);
            self.to_penalty(st, id, at);
        }
    }

    /// Makes a key with new work (a followed redirect, a robots.txt step)
    /// ready if nothing else will serve it: it was done, or parked.
    /// A key that was done or parked is made ready, or put in the penalty
    /// box until its next allowed contact if that is still to come.
    fn wake(&self, st: &mut State, id: KeyId) {
        let k = &mut st.keys[id];
        if k.stopped() || !matches!(k.status, Status::Done | Status::Parked) {
            return;
        }
        if k.status == Status::Done {
            st.with_work += 1;
        }
        match k.next_at.filter(|&at| at > Instant::now()) {
            Some(at) => self.to_penalty(st, id, at),
            None => {
                k.status = Status::Ready;
                st.ready.push_back(id);
                self.wake_one(st);
            }
        }
    }

    /// The key called `name`, made (done, with no work) if there is none,
    /// for a request to `host`; the hold earlier runs left on the host
    /// applies to the key.
    fn key_named(&self, st: &mut State, name: String, host: &str) -> KeyId {
        let (id, new_key) = match st.by_name.get(&name) {
            Some(&id) => (id, false),
            None => {
                let id = st.keys.len();
                let key = Key::new(
                    name.clone(),
                    VecDeque::new(),
                    0,
                    Status::Done,
                    Timing::default(),
                );
                st.keys.push(key);
                st.by_name.insert(name.clone(), id);
                (id, true)
            }
        };
        if new_key || !st.held_hosts.contains(host) {
            st.held_hosts.insert(host.to_string());
            if let Some(at) = (self.carried)(&name, host, new_key) {
                let k = &mut st.keys[id];
                k.next_at = Some(k.next_at.map_or(at, |t| t.max(at)));
            }
        }
        id
    }

    /// robots.txt of `host` (for queue `owner`) could not be read: count the
    /// attempt, give the owner up after the last one (or at once if asking
    /// again is pointless), and wake it.
    fn robots_unavailable(
        &self,
        st: &mut State,
        owner: KeyId,
        host: &str,
        ask_again: bool,
        now: Instant,
    ) -> Instant {
        let tries = match st.robots.get(host) {
            Some(RobotsState::Fetching { tries } | RobotsState::Unavailable { tries, .. }) => {
                *tries
            }
            _ => 0,
        } + 1;
        if !ask_again {
            // The name does not resolve.
            st.keys[owner].abandoned = Some(ErrorCode::Dns);
        } else if tries >= ROBOTS_TRIES {
            st.keys[owner].abandoned = Some(ErrorCode::RobotsUnavailable);
        }
        st.keys[owner].robots_failed = true;
        let retry_at = now + self.robots_retry_delay;
        st.robots.insert(
            host.to_string(),
            RobotsState::Unavailable { tries, retry_at },
        );
        self.wake_parked(st, owner, now);
        retry_at
    }

    fn settle_done(&self, st: &mut State, id: KeyId) {
        if st.keys[id].status != Status::Done {
            st.keys[id].status = Status::Done;
            st.with_work -= 1;
        }
    }

    fn to_penalty(&self, st: &mut State, id: KeyId, at: Instant) {
        st.keys[id].status = Status::Penalty;
        st.keys[id].next_at = Some(at);
        st.penalty.push(Reverse((at, id)));
        // The waiter keeping the time wakes by itself unless this comes first.
        if st.timer.is_none_or(|t| at < t) {
            self.wake_one(st);
        }
    }

    /// Wakes one waiting worker, if any waits.
    fn wake_one(&self, st: &State) {
        if st.waiting > 0 {
            self.cond.notify_one();
        }
    }

    /// After a key's task: back to the ready-queue at once (`at` = None) or
    /// into the penalty box until `at`.
    fn release(&self, st: &mut State, id: KeyId, at: Option<Instant>) {
        st.busy -= 1;
        st.keys[id].busy_since = None;
        if let Some(at) = at {
            // Remembered even when stopping: it goes to the leftover and
            // to the host state.
            st.keys[id].next_at = Some(at);
        }
        if st.stopping {
            st.keys[id].status = Status::Ready;
            if st.busy == 0 {
                self.idle.notify_all();
            }
            return;
        }
        let key = &st.keys[id];
        if key.stopped() || !key.has_work() {
            self.give_up(st, id, Instant::now());
            if st.busy == 0 {
                // Waiters may now find that nothing is left.
                self.cond.notify_all();
            }
            return;
        }
        match at {
            Some(at) => self.to_penalty(st, id, at),
            None => {
                st.keys[id].status = Status::Ready;
                st.ready.push_front(id);
                self.wake_one(st);
            }
        }
    }

    /// A refill read `jobs`; `rest` is what remains of the range.
    pub fn refilled(&self, key: KeyId, jobs: Vec<Job>, rest: Option<Range>) {
        let mut st = self.lock();
        let k = &mut st.keys[key];
        if let Some(r) = rest {
            k.ranges.push_front(r);
        }
        k.queue.extend(jobs);
        self.release(&mut st, key, None);
    }

    /// A request of a [`Task::Robots`] (through queue `key`, for the
    /// robots.txt of `host` that queue `owner` waits for) ended after
    /// `elapsed`. Returns when the host asked may be contacted again.
    pub fn robots_done(
        &self,
        key: KeyId,
        owner: KeyId,
        host: &str,
        report: RobotsReport,
        elapsed: Option<Duration>,
    ) -> Instant {
        let mut st = self.lock();
        st.robots_pending -= 1;
        let now = Instant::now();
        if let Some(t) = elapsed {
            st.keys[key].timing.push_response_time(t);
        }
        st.requests_done += u64::from(!matches!(report, RobotsReport::Interrupted));
        let mut retry_at = None;
        match report {
            RobotsReport::Redirect {
                key: name,
                url,
                hops,
            } => {
                // The next request goes through the queue of its host, so it
                // waits that host's delay, even on the same host.
                let target_host = url::Url::parse(&url)
                    .map(|u| common::urlnorm::host_of(&u).to_string())
                    .unwrap_or_default();
                let target = self.key_named(&mut st, name, &target_host);
                let step = RobotsStep {
                    owner,
                    host: host.to_string(),
                    url,
                    hops,
                };
                st.keys[target].robots_steps.push_back(step);
                if target != key {
                    self.wake(&mut st, target);
                }
            }
            RobotsReport::Rules(robots) => {
                // An answer: the host's backoff, if any, ends.
                st.keys[key].timing.consecutive_failures = 0;
                st.keys[key].timing.parked = false;
                self.apply_rules(&mut st, owner, robots, host);
                self.wake_parked(&mut st, owner, now);
            }
            RobotsReport::Unavailable { ask_again } => {
                // A failure of the host asked: it backs off (the robots.txt
                // rule gives the host up after its own count of tries).
                let _ = self.policy.failure(&mut st.keys[key].timing);
                let at = self.robots_unavailable(&mut st, owner, host, ask_again, now);
                if key == owner {
                    // Nothing on the host can be asked before its
                    // robots.txt is asked again.
                    retry_at = Some(at);
                }
            }
            RobotsReport::Interrupted => {
                st.robots.remove(host);
            }
        }
        // After the rules: their Crawl-delay counts from this request.
        let delayed = now + self.policy.delay(&st.keys[key].timing);
        let at = retry_at.map_or(delayed, |r| r.max(delayed));
        self.release(&mut st, key, Some(at));
        at
    }

    /// A fetch ended; applies politeness and queues what the report says.
    /// Returns when the key may be contacted again, and whether it has more
    /// work (if not, its connection can go).
    pub fn fetch_done(&self, key: KeyId, report: FetchReport) -> (Instant, bool) {
        let mut st = self.lock();
        let now = Instant::now();
        match report.interrupted {
            Some(job) => {
                st.keys[key].queue.push_front(job);
                st.keys[key].urls_left += 1;
            }
            None => st.requests_done += 1,
        }
        if let Some(job) = report.retry {
            // (Before this failure is counted: was the host failing already?)
            let own = crate::outcome::own_failure(
                report.failed,
                st.keys[key].timing.consecutive_failures,
            );
            st.keys[key].retries.push(job.retry(own));
        }
        if let Some(code) = report.give_up {
            st.keys[key].abandoned.get_or_insert(code);
        }
        {
            let k = &mut st.keys[key];
            k.bytes += report.stored_bytes;
            if let Some((limit, cut)) = k.byte_budget
                && k.bytes >= limit
            {
                k.cut.get_or_insert(cut);
            }
        }
        {
            let timing = &mut st.keys[key].timing;
            if report.failed {
                // A 5xx or a timeout took its time too: the host is that slow.
                if let Some(t) = report.response_time {
                    timing.push_response_time(t);
                }
                if self.policy.failure(timing) == AfterFailure::Drop {
                    st.keys[key].abandoned = Some(ErrorCode::HostDropped);
                }
            } else if let Some(t) = report.response_time {
                self.policy.success(timing, t);
            }
        }
        if let Some((name, job)) = report.follow {
            self.queue_followed(&mut st, name, job);
        }
        // Retry-After may ask for more than the delay, never for less.
        let delay = self.policy.delay(&st.keys[key].timing);
        let wait = report.retry_after.map_or(delay, |r| r.max(delay));
        let at = now + wait;
        self.release(&mut st, key, Some(at));
        (at, st.keys[key].status != Status::Done)
    }

    fn queue_followed(&self, st: &mut State, name: String, job: Job) {
        if !st.seen_in_run.insert(job.rec.url.clone()) {
            return;
        }
        let host = job.rec.host.clone();
        let id = self.key_named(st, name, &host);
        st.keys[id].queue.push_back(job);
        st.keys[id].urls_left += 1;
        self.wake(st, id);
    }

    /// The key id of a key name, if known.
    pub fn key_id(&self, name: &str) -> Option<KeyId> {
        self.lock().by_name.get(name).copied()
    }

    /// Stops handing out tasks; workers return from [`Frontier::next_task`].
    pub fn stop(&self) {
        let mut st = self.lock();
        st.stopping = true;
        self.cond.notify_all();
        self.idle.notify_all();
    }

    /// True once every key is done (or the frontier is stopping) and no task is in flight.
    pub fn wait_idle(&self, timeout: Duration) -> bool {
        let st = self.lock();
        let (st, _) = self
            .idle
            .wait_timeout_while(st, timeout.min(MAX_WAIT), |st| {
                !((st.finished || st.stopping) && st.busy == 0)
            })
            .unwrap_or_else(|e| e.into_inner());
        (st.finished || st.stopping) && st.busy == 0
    }

    /// Counts for the progress display.
    pub fn counts(&self) -> Counts {
        let st = self.lock();
        Counts {
            ready: st.ready.len(),
            penalty: st.penalty.len(),
            busy: st.busy,
            robots_pending: st.robots_pending,
            with_work: st.with_work,
        }
    }

    /// URLs waiting and keys backing off: a pass over every key, so
    /// called once per metrics interval, not per tick.
    pub fn census(&self) -> Census {
        let st = self.lock();
        let mut c = Census::default();
        for k in st.keys.iter().filter(|k| !k.stopped()) {
            c.urls_left += k.urls_left;
            if k.status != Status::Done && k.timing.consecutive_failures > 0 {
                c.backed_off += 1;
            }
        }
        c
    }

    /// True if keys are ready and no worker waits to serve them.
    pub fn short_of_workers(&self) -> bool {
        let st = self.lock();
        !st.ready.is_empty() && st.waiting == 0
    }

    /// How fast the keys that still have work can go, against all the
    /// round's keys (see [`crate::round_end`]).
    pub fn pace(&self) -> Pace {
        let st = self.lock();
        let now = Instant::now();
        let mut pace = Pace {
            requests_done: st.requests_done,
            ..Pace::default()
        };
        for k in &st.keys {
            let delay = self.policy.delay(&k.timing);
            let cycle = self.policy.cycle(&k.timing);
            if k.stopped() {
                // Given up: neither working nor ready for more.
                continue;
            }
            if k.status == Status::Done {
                pace.idle += 1.0 / cycle.as_secs_f64();
                continue;
            }
            // A request in flight for longer than the key's usual cycle
            // stretches it; a key in the penalty box waits first.
            let (wait, cycle) = match (k.status, k.busy_since, k.next_at) {
                (Status::Busy, Some(since), _) => (
                    Duration::ZERO,
                    cycle.max(now.saturating_duration_since(since) + delay),
                ),
                (Status::Penalty, _, Some(at)) => (at.saturating_duration_since(now), cycle),
                _ => (Duration::ZERO, cycle),
            };
            pace.hosts += 1;
            pace.working += 1.0 / (wait + cycle).as_secs_f64();
            // Held longer than its own delay: a robots.txt to ask again, a
            // Retry-After, a backoff after failures, not the host's usual pace.
            if wait > self.policy.base_delay(&k.timing) {
                pace.blocked += 1;
            }
            pace.soonest = Some(pace.soonest.map_or(wait, |s: Duration| s.min(wait)));
            let finish =
                wait + cycle.saturating_mul(u32::try_from(k.urls_left).unwrap_or(u32::MAX));
            pace.finish = pace.finish.max(finish);
        }
        pace
    }

    /// Keys with a request in flight to a host that has failed since its
    /// last success: not worth waiting for when a round ends.
    pub fn busy_failing(&self) -> Vec<KeyId> {
        let st = self.lock();
        st.keys
            .iter()
            .enumerate()
            .filter(|(_, k)| k.status == Status::Busy && k.timing.consecutive_failures > 0)
            .map(|(id, _)| id)
            .collect()
    }

    /// Takes what is left of every key, in key order (the segment's order),
    /// after the workers have stopped.
    pub fn take_leftovers(&self) -> Vec<KeyLeftover> {
        let now = Instant::now();
        let mut st = self.lock();
        st.keys
            .iter_mut()
            .filter(|k| {
                !(k.queue.is_empty()
                    && k.ranges.is_empty()
                    && k.retries.is_empty()
                    && k.abandoned.is_none())
            })
            .map(|k| KeyLeftover {
                name: k.name.clone(),
                cut: k.cut,
                // Waiting for a robots.txt that failed is a failed try.
                abandoned: k
                    .abandoned
                    .or(k.robots_failed.then_some(ErrorCode::RobotsUnavailable)),
                retries: std::mem::take(&mut k.retries),
                queued: std::mem::take(&mut k.queue).into(),
                ranges: std::mem::take(&mut k.ranges).into(),
                not_before: k.next_at.filter(|&at| at > now),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    fn policy(min_delay_ms: u64) -> Policy {
        Policy {
            min_delay: Duration::from_millis(min_delay_ms),
            delay_factor: 0.0,
            max_crawl_delay: Duration::from_secs(1),
            max_retry_after: Duration::from_secs(1),
            max_failures: 3,
            ..Policy::default()
        }
    }

    fn job(host: &str, i: u64) -> Job {
        Job::from_record(&SegmentRecord {
            host: host.into(),
            url: format!("http://{host}/{i}"),
            hops: 0,
            inlinks: 0,
            via: Via::Seed,
            tries: 0,
            not_before: None,
            ..SegmentRecord::default()
        })
    }

    /// Plays workers against the frontier: a refill of range (a, b) yields
    /// URLs a..b; robots.txt allows everything but `/3`; each fetch "takes"
    /// 2 ms. Returns (key name, start, end) of every fetch.
    fn simulate(f: &Arc<Frontier>, workers: usize) -> Vec<(String, Instant, Instant, String)> {
        let log = Arc::new(Mutex::new(Vec::new()));
        let denied = Arc::new(AtomicUsize::new(0));
        let names: Vec<String> = f.lock().keys.iter().map(|k| k.name.clone()).collect();
        std::thread::scope(|s| {
            for _ in 0..workers {
                let f = f.clone();
                let log = log.clone();
                let denied = denied.clone();
                let names = names.clone();
                s.spawn(move || {
                    let mut skipped = Vec::new();
                    while let Some(t) = f.next_task(&mut skipped) {
                        denied.fetch_add(skipped.drain(..).count(), Ordering::SeqCst);
                        match t {
                            Task::Refill { key, range } => {
                                let jobs =
                                    (range.0..range.1).map(|i| job(&names[key], i)).collect();
                                f.refilled(key, jobs, None);
                            }
                            Task::Robots {
                                key, owner, host, ..
                            } => {
                                let rules =
                                    Robots::parse(b"User-agent: *\nDisallow: /3$\n", "testbot");
                                let report = RobotsReport::Rules(Arc::new(rules));
                                f.robots_done(key, owner, &host, report, None);
                            }
                            Task::Fetch { key, job, .. } => {
                                let start = Instant::now();
                                std::thread::sleep(Duration::from_millis(2));
                                let end = Instant::now();
                                log.lock().unwrap().push((
                                    names[key].clone(),
                                    start,
                                    end,
                                    job.rec.url,
                                ));
                                f.fetch_done(key, FetchReport::default());
                            }
                        }
                    }
                });
            }
        });
        assert_eq!(
            denied.load(Ordering::SeqCst),
            names.len(),
            "one /3 per host denied"
        );
        Arc::try_unwrap(log).unwrap().into_inner().unwrap()
    }

    #[test]
    fn one_request_per_key_and_never_sooner_than_the_delay() {
        let f = Arc::new(Frontier::new(policy(20), Duration::from_millis(10)));
        for name in ["a.test", "b.test", "c.test"] {
            f.add_key(name, vec![(0, 3), (3, 6)], 6, Timing::default(), None);
        }
        let log = simulate(&f, 4);
        assert_eq!(log.len(), 3 * 5, "every URL but /3 fetched once");
        for name in ["a.test", "b.test", "c.test"] {
            let mut mine: Vec<_> = log.iter().filter(|l| l.0 == name).collect();
            mine.sort_by_key(|l| l.1);
            for w in mine.windows(2) {
                let gap = w[1].1.saturating_duration_since(w[0].2);
                assert!(
                    w[1].1 >= w[0].2 && gap >= Duration::from_millis(20),
                    "{name}: requests {:?} apart",
                    gap
                );
            }
        }
        // Hosts ran side by side, not one after another.
        let first_b = log
            .iter()
            .filter(|l| l.0 == "b.test")
            .map(|l| l.1)
            .min()
            .unwrap();
        let last_a = log
            .iter()
            .filter(|l| l.0 == "a.test")
            .map(|l| l.2)
            .max()
            .unwrap();
        assert!(first_b < last_a, "b.test waited for a.test to finish");
        assert!(f.take_leftovers().is_empty());
    }

    /// A frontier with one key holding `n` URLs, robots.txt known to allow all.
    fn one_key(name: &str, n: u64) -> Arc<Frontier> {
        let f = Arc::new(Frontier::new(policy(0), Duration::from_millis(10)));
        let id = f.add_key(name, vec![], 0, Timing::default(), None);
        f.lock().keys[id].queue.extend((0..n).map(|i| job(name, i)));
        f.set_robots(id, name, Arc::new(Robots::allow_all()));
        f
    }

    #[test]
    fn failures_drop_the_key_and_keep_its_urls() {
        let f = one_key("bad.test", 10);
        let mut skipped = Vec::new();
        let mut fetched = 0;
        while let Some(t) = f.next_task(&mut skipped) {
            let Task::Fetch { key, job, .. } = t else {
                panic!("fetch expected")
            };
            fetched += 1;
            f.fetch_done(
                key,
                FetchReport {
                    failed: true,
                    retry: Some(job),
                    ..FetchReport::default()
                },
            );
        }
        assert_eq!(fetched, 3, "dropped after max_failures");
        let left = f.take_leftovers();
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].abandoned, Some(ErrorCode::HostDropped));
        assert_eq!(left[0].retries.len(), 3);
        assert_eq!(left[0].queued.len(), 7);
    }

    #[test]
    fn crawl_delay_over_the_cap_skips_the_host() {
        let f = Arc::new(Frontier::new(policy(0), Duration::from_millis(10)));
        let id = f.add_key("slow.test", vec![(0, 4)], 4, Timing::default(), None);
        let rules = Robots::parse(b"User-agent: *\nCrawl-delay: 5\n", "testbot");
        assert!(!f.set_robots(id, "slow.test", Arc::new(rules)));
        let mut skipped = Vec::new();
        assert!(f.next_task(&mut skipped).is_none(), "nothing fetched");
        let left = f.take_leftovers();
        assert_eq!(left[0].abandoned, Some(ErrorCode::CrawlDelay));
        assert_eq!(left[0].ranges, vec![(0, 4)]);
    }

    #[test]
    fn a_key_skipped_while_it_waits_does_not_hold_the_run() {
        // Held for a minute by its next allowed contact, then skipped for
        // its Crawl-delay: the run ends at once instead of waiting.
        let f = Arc::new(Frontier::new(policy(0), Duration::from_millis(10)));
        let later = Instant::now() + Duration::from_secs(60);
        let id = f.add_key("slow.test", vec![(0, 4)], 4, Timing::default(), Some(later));
        let rules = Robots::parse(b"User-agent: *\nCrawl-delay: 5\n", "testbot");
        assert!(!f.set_robots(id, "slow.test", Arc::new(rules)));
        let t0 = Instant::now();
        assert!(f.next_task(&mut Vec::new()).is_none());
        assert!(t0.elapsed() < Duration::from_secs(1), "{:?}", t0.elapsed());
        let left = f.take_leftovers();
        assert_eq!(left[0].abandoned, Some(ErrorCode::CrawlDelay));
        assert_eq!(left[0].not_before, Some(later), "it keeps its wait");
    }

    #[test]
    fn a_key_waits_for_its_next_allowed_contact() {
        let f = Arc::new(Frontier::new(policy(0), Duration::from_millis(10)));
        let at = Instant::now() + Duration::from_millis(150);
        let id = f.add_key("a.test", vec![], 0, Timing::default(), Some(at));
        f.lock().keys[id].queue.push_back(job("a.test", 0));
        f.set_robots(id, "a.test", Arc::new(Robots::allow_all()));
        let Some(Task::Fetch { .. }) = f.next_task(&mut Vec::new()) else {
            panic!("fetch expected")
        };
        assert!(
            Instant::now() >= at,
            "asked before its next allowed contact"
        );
    }

    #[test]
    fn a_host_done_and_met_again_waits_its_delay_and_its_carried_hold() {
        // b.test has fetched its only URL; a.test's robots.txt then
        // redirects to it: the request waits b.test's delay.
        let f = Arc::new(Frontier::new(policy(300), Duration::from_millis(10)));
        let b = f.add_key("b.test", vec![], 0, Timing::default(), None);
        f.lock().keys[b].queue.push_back(job("b.test", 0));
        f.set_robots(b, "b.test", Arc::new(Robots::allow_all()));
        let Some(Task::Fetch { key, .. }) = f.next_task(&mut Vec::new()) else {
            panic!("fetch expected")
        };
        f.fetch_done(key, FetchReport::default());
        let done_at = Instant::now();
        let a = f.add_key("a.test", vec![], 0, Timing::default(), None);
        f.lock().keys[a].queue.push_back(job("a.test", 0));
        let (key, owner, _, _) = robots_task(&f);
        f.robots_done(
            key,
            owner,
            "a.test",
            redirect("b.test", "http://b.test/r", 1),
            None,
        );
        let (key, _, url, _) = robots_task(&f);
        assert_eq!((key, url.as_str()), (b, "http://b.test/r"));
        assert!(
            done_at.elapsed() >= Duration::from_millis(290),
            "{:?}",
            done_at.elapsed()
        );

        // A host met on the way keeps the hold an earlier run left on it.
        let later = Instant::now() + Duration::from_millis(250);
        let f = Arc::new(Frontier::with_carried(
            policy(0),
            Duration::from_millis(10),
            Box::new(move |_, host, _| (host == "held.test").then_some(later)),
        ));
        let a = f.add_key("a.test", vec![], 0, Timing::default(), None);
        f.lock().keys[a].queue.push_back(job("a.test", 0));
        let (key, owner, _, _) = robots_task(&f);
        f.robots_done(
            key,
            owner,
            "a.test",
            redirect("held.test", "http://held.test/r", 1),
            None,
        );
        let (_, _, url, _) = robots_task(&f);
        assert_eq!(url, "http://held.test/r");
        assert!(Instant::now() >= later, "asked before the carried hold");
    }

    #[test]
    fn a_retry_after_shorter_than_the_delay_does_not_shorten_it() {
        let f = Arc::new(Frontier::new(policy(200), Duration::from_millis(10)));
        let id = f.add_key("busy.test", vec![], 0, Timing::default(), None);
        f.lock().keys[id]
            .queue
            .extend([job("busy.test", 0), job("busy.test", 1)]);
        f.set_robots(id, "busy.test", Arc::new(Robots::allow_all()));
        let Some(Task::Fetch { key, .. }) = f.next_task(&mut Vec::new()) else {
            panic!("fetch expected")
        };
        let t0 = Instant::now();
        let (at, _) = f.fetch_done(
            key,
            FetchReport {
                retry_after: Some(Duration::ZERO),
                ..FetchReport::default()
            },
        );
        assert!(at >= t0 + Duration::from_millis(200));
        assert!(matches!(
            f.next_task(&mut Vec::new()),
            Some(Task::Fetch { .. })
        ));
        assert!(t0.elapsed() >= Duration::from_millis(200));
    }

    #[test]
    fn retry_after_holds_the_key() {
        let f = one_key("busy.test", 2);
        let mut skipped = Vec::new();
        let Some(Task::Fetch { key, .. }) = f.next_task(&mut skipped) else {
            panic!("fetch expected")
        };
        let t0 = Instant::now();
        f.fetch_done(
            key,
            FetchReport {
                retry_after: Some(Duration::from_millis(150)),
                ..FetchReport::default()
            },
        );
        assert!(matches!(
            f.next_task(&mut skipped),
            Some(Task::Fetch { .. })
        ));
        assert!(t0.elapsed() >= Duration::from_millis(150));
    }

    #[test]
    fn a_waiting_worker_takes_a_key_as_soon_as_it_is_ready() {
        // One key in the penalty box for a long time, one being refilled:
        // a second worker waits, and must wake when the refill hands the
        // key back, not when its wait times out (MAX_WAIT).
        let f = Arc::new(Frontier::new(policy(0), Duration::from_millis(10)));
        let slow = f.add_key("slow.test", vec![], 0, Timing::default(), None);
        f.lock().keys[slow].queue.push_back(job("slow.test", 0));
        let refilled = f.add_key("b.test", vec![(0, 1)], 1, Timing::default(), None);
        for (id, name) in [(slow, "slow.test"), (refilled, "b.test")] {
            f.set_robots(id, name, Arc::new(Robots::allow_all()));
        }
        let mut skipped = Vec::new();
        let Some(Task::Fetch { key, .. }) = f.next_task(&mut skipped) else {
            panic!("fetch expected")
        };
        f.fetch_done(
            key,
            FetchReport {
                retry_after: Some(Duration::from_secs(30)),
                ..FetchReport::default()
            },
        );
        let Some(Task::Refill { key, .. }) = f.next_task(&mut skipped) else {
            panic!("refill expected")
        };
        let waiter = {
            let f = f.clone();
            std::thread::spawn(move || {
                let mut skipped = Vec::new();
                let task = f.next_task(&mut skipped);
                (task, Instant::now())
            })
        };
        std::thread::sleep(Duration::from_millis(100));
        let handed_back = Instant::now();
        f.refilled(key, vec![job("b.test", 1)], None);
        let (task, woke) = waiter.join().unwrap();
        assert!(matches!(task, Some(Task::Fetch { .. })), "{task:?}");
        assert!(
            woke.duration_since(handed_back) < MAX_WAIT / 2,
            "the waiting worker slept {:?} while a key was ready",
            woke.duration_since(handed_back)
        );
    }

    #[test]
    fn robots_txt_of_a_name_that_does_not_resolve_is_not_asked_again() {
        let f = Arc::new(Frontier::new(policy(0), Duration::from_millis(10)));
        let id = f.add_key("gone.test", vec![], 0, Timing::default(), None);
        f.lock().keys[id].queue.push_back(job("gone.test", 0));
        let mut skipped = Vec::new();
        let Some(Task::Robots {
            key, owner, host, ..
        }) = f.next_task(&mut skipped)
        else {
            panic!("robots.txt first")
        };
        let report = RobotsReport::Unavailable { ask_again: false };
        f.robots_done(key, owner, &host, report, None);
        assert!(f.next_task(&mut skipped).is_none(), "nothing more to do");
        let left = f.take_leftovers();
        assert_eq!(left[0].abandoned, Some(ErrorCode::Dns), "given up as `dns`");
        assert_eq!(left[0].queued.len(), 1);
    }

    /// The next task, which must be a robots.txt request: (key, owner, url, hops).
    fn robots_task(f: &Frontier) -> (KeyId, KeyId, String, u32) {
        match f.next_task(&mut Vec::new()) {
            Some(Task::Robots {
                key,
                owner,
                url,
                hops,
                ..
            }) => (key, owner, url, hops),
            other => panic!("robots.txt request expected, got {other:?}"),
        }
    }

    fn redirect(key: &str, url: &str, hops: u32) -> RobotsReport {
        RobotsReport::Redirect {
            key: key.into(),
            url: url.into(),
            hops,
        }
    }

    #[test]
    fn a_robots_txt_redirect_on_the_same_host_waits_the_delay() {
        let f = Arc::new(Frontier::new(policy(80), Duration::from_millis(10)));
        let id = f.add_key("a.test", vec![], 0, Timing::default(), None);
        f.lock().keys[id].queue.push_back(job("a.test", 0));
        let (key, owner, url, hops) = robots_task(&f);
        assert_eq!(
            (key, owner, url.as_str(), hops),
            (id, id, "http://a.test/robots.txt", 0)
        );
        let t0 = Instant::now();
        f.robots_done(
            key,
            owner,
            "a.test",
            redirect("a.test", "http://a.test/r", 1),
            None,
        );
        let (key, owner, url, hops) = robots_task(&f);
        assert!(
            t0.elapsed() >= Duration::from_millis(80),
            "the hop came too soon"
        );
        assert_eq!(
            (key, owner, url.as_str(), hops),
            (id, id, "http://a.test/r", 1)
        );
        let rules = Robots::parse(b"User-agent: *\nDisallow: /0\n", "testbot");
        f.robots_done(
            key,
            owner,
            "a.test",
            RobotsReport::Rules(Arc::new(rules)),
            None,
        );
        let mut skipped = Vec::new();
        assert!(f.next_task(&mut skipped).is_none());
        assert_eq!(skipped.len(), 1, "the rules at the end of the chain apply");
        assert!(t0.elapsed() >= Duration::from_millis(160));
    }

    #[test]
    fn a_robots_txt_redirect_to_another_host_goes_through_that_hosts_queue() {
        let f = Arc::new(Frontier::new(policy(50), Duration::from_millis(10)));
        let old = f.add_key("old.test", vec![], 0, Timing::default(), None);
        f.lock().keys[old].queue.push_back(job("old.test", 0));
        let (key, owner, _, _) = robots_task(&f);
        assert_eq!((key, owner), (old, old));
        let to_new = redirect("new.test", "http://new.test/robots.txt", 1);
        f.robots_done(key, owner, "old.test", to_new, None);
        // new.test had no queue: one is made for the request, which is
        // served through it for old.test's sake.
        let new = f.key_id("new.test").expect("a queue for new.test");
        let (key, owner, url, hops) = robots_task(&f);
        assert_eq!(
            (key, owner, url.as_str(), hops),
            (new, old, "http://new.test/robots.txt", 1)
        );
        // old.test meanwhile parks instead of asking again.
        let waiting = {
            let f = f.clone();
            std::thread::spawn(move || {
                let mut skipped = Vec::new();
                (f.next_task(&mut skipped), skipped.len())
            })
        };
        let t0 = Instant::now();
        while f.lock().keys[old].status != Status::Parked && t0.elapsed() < Duration::from_secs(10)
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(f.lock().keys[old].status, Status::Parked);
        f.robots_done(
            key,
            owner,
            "old.test",
            RobotsReport::Rules(Arc::new(Robots::allow_all())),
            None,
        );
        let (task, _) = waiting.join().unwrap();
        let Some(Task::Fetch { key, job, .. }) = task else {
            panic!("old.test's page after its rules, got {task:?}")
        };
        assert_eq!((key, job.rec.url.as_str()), (old, "http://old.test/0"));
    }
}
