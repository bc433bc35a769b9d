//! The frontier: one URL queue per key (host, registrable domain or IP), a
//! ready-queue of keys, and the **penalty box** — a min-heap of keys keyed by
//! the time each may next be contacted.
//!
//! Workers take a [`Task`] with [`Frontier::next_task`], do the network call
//! with no lock held, and report back; the key then goes into the penalty box
//! until its delay has passed. A key is handed to one worker at a time, so at
//! most one request per key is ever in flight. Workers that find nothing ready
//! block on the condition variable until the earliest penalty-box time (or a
//! report) instead of polling.
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

use crate::access::Access;
use crate::politeness::{AfterFailure, Policy, Timing};

/// One URL to fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    /// Host of the URL (the segment's first field).
    pub host: String,
    /// The URL.
    pub url: String,
    /// Hops from a seed.
    pub hops: u32,
    /// In-links, as in the segment.
    pub inlinks: u32,
    /// How it was found.
    pub via: Via,
    /// Earlier failed attempts.
    pub tries: u32,
    /// Redirects followed in this run to reach it.
    pub redirects: u32,
}

impl Job {
    /// From a segment record.
    pub fn from_record(r: &SegmentRecord) -> Job {
        Job {
            host: r.host.clone(),
            url: r.url.clone(),
            hops: r.hops,
            inlinks: r.inlinks,
            via: r.via,
            tries: r.tries,
            redirects: 0,
        }
    }

    /// As a segment record with another `via` and `tries`.
    pub fn to_record(&self, via: Via, tries: u32) -> SegmentRecord {
        SegmentRecord {
            host: self.host.clone(),
            url: self.url.clone(),
            hops: self.hops,
            inlinks: self.inlinks,
            via,
            tries,
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
    /// Fetch robots.txt for `host` (its first URL is `sample_url`), then
    /// call [`Frontier::robots_done`].
    Robots {
        /// The key.
        key: KeyId,
        /// The host.
        host: String,
        /// A URL of the host (gives scheme and port).
        sample_url: String,
    },
    /// Fetch a URL, then call [`Frontier::fetch_done`].
    Fetch {
        /// The key.
        key: KeyId,
        /// The URL.
        job: Job,
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
}

/// How a fetch went, for politeness.
#[derive(Debug, Default)]
pub struct FetchReport {
    /// Time from request to end of response (None if no response came).
    pub response_time: Option<Duration>,
    /// Counts toward dropping the host (timeout, refused, 5xx).
    pub failed: bool,
    /// Wait asked by Retry-After (already capped).
    pub retry_after: Option<Duration>,
    /// The URL to write to leftover as a retry (transient failure).
    pub retry: Option<Job>,
    /// The request was abandoned at shutdown: put the URL back, untried.
    pub interrupted: Option<Job>,
    /// A redirect target to queue in this run with its queue key (already
    /// checked for scope).
    pub follow: Option<(String, Job)>,
}

/// How a robots.txt fetch went.
#[derive(Debug)]
pub enum RobotsReport {
    /// Rules to apply.
    Rules(Arc<Access>),
    /// Unavailable: ask again later.
    Unavailable,
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

/// What is left of one key when the run ends.
#[derive(Debug)]
pub struct KeyLeftover {
    /// The key's name.
    pub name: String,
    /// Why the key was given up, if it was.
    pub abandoned: Option<ErrorCode>,
    /// URLs to retry later.
    pub retries: Vec<Job>,
    /// URLs loaded but not attempted.
    pub queued: Vec<Job>,
    /// Work-file ranges never loaded.
    pub ranges: Vec<Range>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Ready,
    Busy,
    Penalty,
    Done,
}

#[derive(Debug)]
struct Key {
    name: String,
    queue: VecDeque<Job>,
    ranges: VecDeque<Range>,
    status: Status,
    timing: Timing,
    abandoned: Option<ErrorCode>,
    retries: Vec<Job>,
}

#[derive(Debug)]
enum RobotsState {
    Fetching,
    Known(Arc<Access>),
    Unavailable { tries: u32, retry_at: Instant },
}

/// Added to every non-zero delay: the next request must not reach the
/// server sooner than the delay after the server finished answering, and
/// the server may finish (and a host may measure) a little after we have
/// read the last byte.
pub const DELAY_HEADROOM: Duration = Duration::from_millis(2);

/// The time a key may be contacted again after waiting `wait` from `now`.
fn after(now: Instant, wait: Duration) -> Instant {
    if wait.is_zero() {
        now
    } else {
        now + wait + DELAY_HEADROOM
    }
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
    stopping: bool,
    finished: bool,
}

/// The frontier. Shared by all workers behind one mutex.
#[derive(Debug)]
pub struct Frontier {
    state: Mutex<State>,
    /// Workers wait here for a key to become ready.
    cond: Condvar,
    /// The supervising thread waits here for the end (kept apart so that it
    /// never swallows a wake-up meant for a worker).
    idle: Condvar,
    policy: Policy,
    robots_retry_delay: Duration,
}

/// Longest a waiting worker sleeps before looking again, as a bound.
const MAX_WAIT: Duration = Duration::from_secs(1);

impl Frontier {
    /// An empty frontier.
    pub fn new(policy: Policy, robots_retry_delay: Duration) -> Frontier {
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
                stopping: false,
                finished: false,
            }),
            cond: Condvar::new(),
            idle: Condvar::new(),
            policy,
            robots_retry_delay,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A worker that panicked holding the lock leaves the state as it was
        // between two whole updates; carrying on is safe.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a key with its work-file ranges and its remembered response
    /// times; it becomes ready at once.
    pub fn add_key(&self, name: &str, ranges: Vec<Range>, response_times_ms: &[u32]) -> KeyId {
        let mut st = self.lock();
        let id = st.keys.len();
        st.keys.push(Key {
            name: name.to_string(),
            queue: VecDeque::new(),
            ranges: ranges.into(),
            status: Status::Ready,
            timing: Timing::with_history(response_times_ms),
            abandoned: None,
            retries: Vec::new(),
        });
        st.by_name.insert(name.to_string(), id);
        st.ready.push_back(id);
        st.with_work += 1;
        id
    }

    /// Adds a URL already attempted by an earlier run (resume) that must be
    /// retried later: it goes straight to the key's leftover.
    pub fn add_retry(&self, key: KeyId, job: Job) {
        self.lock().keys[key].retries.push(job);
    }

    /// Sets the robots.txt rules of a host known from the host state or an
    /// earlier run; returns false if its Crawl-delay is over the cap (the
    /// key is then given up).
    pub fn set_robots(&self, key: KeyId, host: &str, access: Arc<Access>) -> bool {
        let mut st = self.lock();
        self.apply_rules(&mut st, key, access, host)
    }

    fn apply_rules(&self, st: &mut State, key: KeyId, access: Arc<Access>, host: &str) -> bool {
        let ok = match access.crawl_delay() {
            Some(cd) if !self.policy.crawl_delay_acceptable(cd) => {
                st.keys[key].abandoned = Some(ErrorCode::CrawlDelay);
                false
            }
            Some(cd) => {
                st.keys[key].timing.note_crawl_delay(cd);
                true
            }
            None => true,
        };
        st.robots
            .insert(host.to_string(), RobotsState::Known(access));
        ok
    }

    /// Blocks until there is a task, or returns `None` when the run is over
    /// (everything done, or stopping). URLs denied by robots.txt on the way
    /// are appended to `skipped` for the caller to log.
    pub fn next_task(&self, skipped: &mut Vec<Skipped>) -> Option<Task> {
        let mut st = self.lock();
        loop {
            if st.stopping || st.finished {
                return None;
            }
            let now = Instant::now();
            while let Some(&Reverse((at, id))) = st.penalty.peek() {
                if at > now {
                    break;
                }
                st.penalty.pop();
                st.keys[id].status = Status::Ready;
                st.ready.push_back(id);
            }
            if let Some(id) = st.ready.pop_front() {
                if let Some(task) = self.task_for(&mut st, id, now, skipped) {
                    st.busy += 1;
                    if !st.ready.is_empty() || !st.penalty.is_empty() {
                        // Pass the wake-up on: another waiter may have
                        // something to do (or a nearer time to wait for).
                        self.cond.notify_one();
                    }
                    return Some(task);
                }
                continue;
            }
            let wait = match st.penalty.peek() {
                Some(&Reverse((at, _))) => at.saturating_duration_since(now).min(MAX_WAIT),
                None if st.busy > 0 => MAX_WAIT,
                None => {
                    st.finished = true;
                    self.cond.notify_all();
                    self.idle.notify_all();
                    return None;
                }
            };
            st = self
                .cond
                .wait_timeout(st, wait)
                .unwrap_or_else(|e| e.into_inner())
                .0;
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
            if st.keys[id].abandoned.is_some() {
                self.settle_done(st, id);
                return None;
            }
            let Some(job) = st.keys[id].queue.front() else {
                if let Some(range) = st.keys[id].ranges.pop_front() {
                    st.keys[id].status = Status::Busy;
                    return Some(Task::Refill { key: id, range });
                }
                self.settle_done(st, id);
                return None;
            };
            let host = job.host.clone();
            match st.robots.get_mut(&host) {
                None => {
                    let sample_url = job.url.clone();
                    st.robots.insert(host.clone(), RobotsState::Fetching);
                    st.robots_pending += 1;
                    st.keys[id].status = Status::Busy;
                    return Some(Task::Robots {
                        key: id,
                        host,
                        sample_url,
                    });
                }
                Some(RobotsState::Fetching) => {
                    // Cannot happen: a key is served by one worker at a time.
                    self.to_penalty(st, id, now + self.robots_retry_delay);
                    return None;
                }
                Some(RobotsState::Unavailable { retry_at, .. }) => {
                    if *retry_at > now {
                        let at = *retry_at;
                        self.to_penalty(st, id, at);
                        return None;
                    }
                    // Ask again; `robots_done` counts the attempts.
                    let sample_url = job.url.clone();
                    st.robots_pending += 1;
                    st.keys[id].status = Status::Busy;
                    return Some(Task::Robots {
                        key: id,
                        host,
                        sample_url,
                    });
                }
                Some(RobotsState::Known(access)) => {
                    let allowed = url::Url::parse(&job.url)
                        .map(|u| access.allows(&crate::access::path_and_query(&u)))
                        .unwrap_or(true);
                    let job = st.keys[id].queue.pop_front().expect("front exists");
                    if allowed {
                        st.keys[id].status = Status::Busy;
                        return Some(Task::Fetch { key: id, job });
                    }
                    skipped.push(Skipped {
                        job,
                        code: ErrorCode::Robots,
                    });
                }
            }
        }
    }

    fn settle_done(&self, st: &mut State, id: KeyId) {
        if st.keys[id].status != Status::Done {
            st.keys[id].status = Status::Done;
            st.with_work -= 1;
        }
    }

    fn to_penalty(&self, st: &mut State, id: KeyId, at: Instant) {
        st.keys[id].status = Status::Penalty;
        st.penalty.push(Reverse((at, id)));
        self.cond.notify_one();
    }

    /// After a key's task: back to the ready-queue at once (`at` = None) or
    /// into the penalty box until `at`.
    fn release(&self, st: &mut State, id: KeyId, at: Option<Instant>) {
        st.busy -= 1;
        if st.stopping {
            st.keys[id].status = Status::Ready;
            if st.busy == 0 {
                self.idle.notify_all();
            }
            return;
        }
        let key = &st.keys[id];
        if key.abandoned.is_some() || (key.queue.is_empty() && key.ranges.is_empty()) {
            self.settle_done(st, id);
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
                self.cond.notify_one();
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

    /// A robots.txt fetch for `host` ended after `elapsed`.
    pub fn robots_done(
        &self,
        key: KeyId,
        host: &str,
        report: RobotsReport,
        elapsed: Option<Duration>,
    ) {
        let mut st = self.lock();
        st.robots_pending -= 1;
        let now = Instant::now();
        if let Some(t) = elapsed {
            st.keys[key].timing.push_response_time(t);
        }
        let at = match report {
            RobotsReport::Rules(access) => {
                self.apply_rules(&mut st, key, access, host);
                after(now, self.policy.delay(&st.keys[key].timing))
            }
            RobotsReport::Unavailable => {
                let tries = match st.robots.get(host) {
                    Some(RobotsState::Unavailable { tries, .. }) => *tries,
                    _ => 0,
                } + 1;
                if tries >= ROBOTS_TRIES {
                    st.keys[key].abandoned = Some(ErrorCode::RobotsUnavailable);
                }
                let retry_at = now + self.robots_retry_delay;
                st.robots.insert(
                    host.to_string(),
                    RobotsState::Unavailable { tries, retry_at },
                );
                after(now, self.policy.delay(&st.keys[key].timing))
            }
            RobotsReport::Interrupted => {
                st.robots.remove(host);
                now
            }
        };
        self.release(&mut st, key, Some(at));
    }

    /// A fetch ended; applies politeness and queues what the report says.
    /// Returns false if the key has no more work (its connection can go).
    pub fn fetch_done(&self, key: KeyId, report: FetchReport) -> bool {
        let mut st = self.lock();
        let now = Instant::now();
        if let Some(job) = report.interrupted {
            st.keys[key].queue.push_front(job);
        }
        if let Some(job) = report.retry {
            st.keys[key].retries.push(job);
        }
        {
            let timing = &mut st.keys[key].timing;
            if report.failed {
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
        let wait = report
            .retry_after
            .unwrap_or_else(|| self.policy.delay(&st.keys[key].timing));
        self.release(&mut st, key, Some(after(now, wait)));
        st.keys[key].status != Status::Done
    }

    fn queue_followed(&self, st: &mut State, name: String, job: Job) {
        if !st.seen_in_run.insert(job.url.clone()) {
            return;
        }
        let id = match st.by_name.get(&name) {
            Some(&id) => id,
            None => {
                let id = st.keys.len();
                st.keys.push(Key {
                    name: name.clone(),
                    queue: VecDeque::new(),
                    ranges: VecDeque::new(),
                    status: Status::Done,
                    timing: Timing::default(),
                    abandoned: None,
                    retries: Vec::new(),
                });
                st.by_name.insert(name, id);
                id
            }
        };
        let k = &mut st.keys[id];
        k.queue.push_back(job);
        if k.status == Status::Done && k.abandoned.is_none() {
            k.status = Status::Ready;
            st.ready.push_back(id);
            st.with_work += 1;
            self.cond.notify_one();
        }
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

    /// Takes what is left of every key, in key order (the segment's order),
    /// after the workers have stopped.
    pub fn take_leftovers(&self) -> Vec<KeyLeftover> {
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
                abandoned: k.abandoned,
                retries: std::mem::take(&mut k.retries),
                queued: std::mem::take(&mut k.queue).into(),
                ranges: std::mem::take(&mut k.ranges).into(),
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
        }
    }

    fn job(host: &str, i: u64) -> Job {
        Job {
            host: host.into(),
            url: format!("http://{host}/{i}"),
            hops: 0,
            inlinks: 0,
            via: Via::Seed,
            tries: 0,
            redirects: 0,
        }
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
                            Task::Robots { key, host, .. } => {
                                let a = Access::decide(
                                    crate::access::RobotsOutcome::Status(200),
                                    b"User-agent: *\nDisallow: /3$\n",
                                    "testbot",
                                );
                                let crate::access::Decision::Rules(a) = a else {
                                    panic!("rules expected")
                                };
                                f.robots_done(key, &host, RobotsReport::Rules(Arc::new(a)), None);
                            }
                            Task::Fetch { key, job } => {
                                let start = Instant::now();
                                std::thread::sleep(Duration::from_millis(2));
                                let end = Instant::now();
                                log.lock()
                                    .unwrap()
                                    .push((names[key].clone(), start, end, job.url));
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
            f.add_key(name, vec![(0, 3), (3, 6)], &[]);
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

    #[test]
    fn failures_drop_the_key_and_keep_its_urls() {
        let f = Arc::new(Frontier::new(policy(0), Duration::from_millis(10)));
        let id = f.add_key("bad.test", vec![], &[]);
        f.lock().keys[id]
            .queue
            .extend((0..10).map(|i| job("bad.test", i)));
        f.set_robots(id, "bad.test", Arc::new(Access::allow_all()));
        let mut skipped = Vec::new();
        let mut fetched = 0;
        while let Some(t) = f.next_task(&mut skipped) {
            let Task::Fetch { key, job } = t else {
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
        let id = f.add_key("slow.test", vec![(0, 4)], &[]);
        let crate::access::Decision::Rules(a) = Access::decide(
            crate::access::RobotsOutcome::Status(200),
            b"User-agent: *\nCrawl-delay: 5\n",
            "testbot",
        ) else {
            panic!("rules expected")
        };
        assert!(!f.set_robots(id, "slow.test", Arc::new(a)));
        let mut skipped = Vec::new();
        assert!(f.next_task(&mut skipped).is_none(), "nothing fetched");
        let left = f.take_leftovers();
        assert_eq!(left[0].abandoned, Some(ErrorCode::CrawlDelay));
        assert_eq!(left[0].ranges, vec![(0, 4)]);
    }

    #[test]
    fn retry_after_holds_the_key() {
        let f = Arc::new(Frontier::new(policy(0), Duration::from_millis(10)));
        let id = f.add_key("busy.test", vec![], &[]);
        f.lock().keys[id]
            .queue
            .extend((0..2).map(|i| job("busy.test", i)));
        f.set_robots(id, "busy.test", Arc::new(Access::allow_all()));
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
}
