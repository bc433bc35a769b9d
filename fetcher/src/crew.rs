//! The crew: the worker threads of a run, and how many requests they keep
//! in flight. It starts with a few requests in flight and allows more
//! while hosts are ready with no slot free to serve them *and* requests
//! spend their time waiting for slow servers, up to a bound.
//!
//! A request in flight is not a thread: it waits for its server on the
//! HTTP client's connection thread ([`crate::http`]), at the cost of a
//! socket and a buffer. The threads are few and fixed: two *dispatchers*
//! start requests (a task from the frontier, the contact journal, the
//! request), and one *finisher* per core stores their ends (compression,
//! digests, links), which is the CPU of a fetch. A run cannot go faster
//! than the requests in flight ÷ response time: against servers that
//! answer in 200 ms, 64 in flight give at most 320 pages/s, 2,048 give
//! 10,000. On a fast network (responses in a few milliseconds) the few are
//! enough, and more would only hold more responses in memory at once:
//! there the crew does not grow.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Sender, SyncSender};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::host_updates::HostUpdate;
use crate::recorder::Msg;
use crate::worker::{Shared, Worker};

/// Requests in flight at first when their number may grow.
pub const FIRST_WORKERS: usize = 64;
/// How often the crew looks whether it should grow.
const GROW_EVERY: Duration = Duration::from_millis(100);
/// Mean response time from which more requests in flight pay: below it,
/// the requests are CPU-bound and more would only wait for a core.
const SLOW_RESPONSE: Duration = Duration::from_millis(20);
/// Threads that start requests.
const DISPATCHERS: usize = 2;
/// Stack of a worker thread.
const STACK: usize = 512 * 1024;

/// Open files kept apart from connections (WARC file, logs, databases,
/// name servers, listening and spare sockets).
const OTHER_FILES: u64 = 256;

/// Raises the soft limit on open files to the hard one, and returns how
/// many sockets the run may open (requests in flight and connections
/// kept between requests each hold one).
pub fn open_files_room() -> usize {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid rlimit for the call to fill.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return usize::MAX;
    }
    // Linux refuses more than its `nr_open` (1,048,576 by default).
    let wanted = lim.rlim_max.min(1 << 20);
    if lim.rlim_cur < wanted {
        let raised = libc::rlimit {
            rlim_cur: wanted,
            rlim_max: lim.rlim_max,
        };
        // SAFETY: `raised` is a valid rlimit; a refusal leaves the limit as it was.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            lim.rlim_cur = wanted;
        }
    }
    let room = lim.rlim_cur.saturating_sub(OTHER_FILES);
    usize::try_from(room).unwrap_or(usize::MAX).max(32)
}

/// The worker threads of a run.
pub struct Crew {
    dispatchers: Vec<JoinHandle<()>>,
    finishers: Vec<JoinHandle<()>>,
    grower: Option<JoinHandle<()>>,
    done: Arc<AtomicBool>,
    shared: Arc<Shared>,
}

impl Crew {
    /// Starts the threads with `first` requests in flight at most (at
    /// least one), and, if `most` is larger, a thread that allows more up
    /// to `most` while the run needs them.
    pub fn start(
        shared: &Arc<Shared>,
        recorder: &SyncSender<Msg>,
        hosts: &Sender<HostUpdate>,
        first: usize,
        most: usize,
    ) -> io::Result<Crew> {
        let first = first.clamp(1, most.max(1));
        shared.flight.set_limit(first);
        let worker = || Worker::new(shared.clone(), recorder.clone(), hosts.clone());
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let mut finishers = Vec::with_capacity(cores);
        for i in 0..cores.max(2) {
            let w = worker();
            finishers.push(spawn(format!("finisher-{i}"), move || w.finish())?);
        }
        let mut dispatchers = Vec::with_capacity(DISPATCHERS);
        for i in 0..DISPATCHERS {
            let w = worker();
            dispatchers.push(spawn(format!("dispatcher-{i}"), move || w.dispatch())?);
        }
        let done = Arc::new(AtomicBool::new(false));
        let grower = if most > first {
            let (shared, done) = (shared.clone(), done.clone());
            Some(spawn("crew".into(), move || grow(&shared, &done, most))?)
        } else {
            None
        };
        Ok(Crew {
            dispatchers,
            finishers,
            grower,
            done,
            shared: shared.clone(),
        })
    }

    /// True once every worker thread has ended (only a bug ends them
    /// before the frontier is idle).
    pub fn all_ended(&self) -> bool {
        self.dispatchers
            .iter()
            .chain(&self.finishers)
            .all(JoinHandle::is_finished)
    }

    /// The most requests in flight allowed so far.
    pub fn count(&self) -> usize {
        self.shared.flight.limit()
    }

    /// Stops growing and waits for every thread to end: the dispatchers
    /// when the frontier has no more work or is stopping, the finishers
    /// once the requests in flight are stored.
    pub fn join(mut self) {
        self.done.store(true, Ordering::SeqCst);
        if let Some(g) = self.grower.take() {
            let _ = g.join();
        }
        for d in self.dispatchers.drain(..) {
            let _ = d.join();
        }
        self.shared.flight.close();
        for f in self.finishers.drain(..) {
            let _ = f.join();
        }
    }
}

fn spawn(name: String, f: impl FnOnce() + Send + 'static) -> io::Result<JoinHandle<()>> {
    std::thread::Builder::new()
        .name(name)
        .stack_size(STACK)
        .spawn(f)
}

/// Every [`GROW_EVERY`]: if hosts are ready, no slot is free for them,
/// responses were slow and the finishers keep up (fewer ends wait for them
/// than an eighth of the slots: more requests in flight would only make
/// more answers wait in memory), doubles the requests in flight (up to
/// `most`).
fn grow(shared: &Shared, done: &AtomicBool, most: usize) {
    let mut n = shared.flight.limit();
    while !done.load(Ordering::SeqCst) && n < most {
        std::thread::sleep(GROW_EVERY);
        let mean = shared.response_clock.take_mean();
        let slow = mean.is_some_and(|m| m >= SLOW_RESPONSE);
        let keeping_up = shared.flight.ends_waiting() < n / 8;
        if slow && keeping_up && shared.frontier.short_of_workers() {
            n = (n * 2).min(most);
            shared.flight.set_limit(n);
        }
    }
}
