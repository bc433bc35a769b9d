//! The crew: the worker threads of a run. It starts with a few and adds
//! more while hosts are ready with no worker free to serve them *and*
//! requests spend their time waiting for slow servers, up to a bound.
//!
//! A blocking worker serves one request at a time, so a run cannot go
//! faster than workers ÷ response time. Against servers that answer in
//! 200 ms, 64 workers give at most 320 pages/s; a thousand give 5,000. On a
//! fast network (responses in a few milliseconds) the few are enough, and
//! more would only contend for the same cores and locks: there the crew
//! does not grow.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Sender, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::host_updates::HostUpdate;
use crate::recorder::Msg;
use crate::worker::{Shared, Worker};

/// Workers started at first when the number may grow.
pub const FIRST_WORKERS: usize = 64;
/// How often the crew looks whether it should grow.
const GROW_EVERY: Duration = Duration::from_millis(100);
/// Mean response time from which more workers pay: below it, the requests
/// are CPU-bound and more threads only contend.
const SLOW_RESPONSE: Duration = Duration::from_millis(20);
/// Stack of a worker thread (reserved; only the pages used are resident).
const STACK: usize = 256 * 1024;

/// The worker threads of a run.
pub struct Crew {
    first: Vec<JoinHandle<()>>,
    grower: Option<JoinHandle<Vec<JoinHandle<()>>>>,
    done: Arc<AtomicBool>,
    count: Arc<Mutex<usize>>,
}

impl Crew {
    /// Starts `first` workers (at least one), and, if `most` is larger, a
    /// thread that adds workers up to `most` while the run needs them.
    pub fn start(
        shared: &Arc<Shared>,
        recorder: &SyncSender<Msg>,
        hosts: &Sender<HostUpdate>,
        first: usize,
        most: usize,
    ) -> io::Result<Crew> {
        let first = first.clamp(1, most.max(1));
        let mut handles = Vec::with_capacity(first);
        for i in 0..first {
            handles.push(spawn(i, shared, recorder, hosts)?);
        }
        let done = Arc::new(AtomicBool::new(false));
        let count = Arc::new(Mutex::new(first));
        let grower = if most > first {
            let (shared, recorder, hosts) = (shared.clone(), recorder.clone(), hosts.clone());
            let (done, count) = (done.clone(), count.clone());
            Some(
                std::thread::Builder::new()
                    .name("crew".into())
                    .spawn(move || grow(&shared, &recorder, &hosts, &done, &count, most))?,
            )
        } else {
            None
        };
        Ok(Crew {
            first: handles,
            grower,
            done,
            count,
        })
    }

    /// The workers started first (they live as long as the run).
    pub fn first(&self) -> &[JoinHandle<()>] {
        &self.first
    }

    /// Workers started so far.
    pub fn count(&self) -> usize {
        *self.count.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Stops growing and waits for every worker to end (they end when the
    /// frontier has no more work or is stopping).
    pub fn join(mut self) {
        self.done.store(true, Ordering::SeqCst);
        let grown = self
            .grower
            .take()
            .map(|g| g.join().unwrap_or_default())
            .unwrap_or_default();
        for w in self.first.drain(..).chain(grown) {
            let _ = w.join();
        }
    }
}

fn spawn(
    i: usize,
    shared: &Arc<Shared>,
    recorder: &SyncSender<Msg>,
    hosts: &Sender<HostUpdate>,
) -> io::Result<JoinHandle<()>> {
    let w = Worker::new(shared.clone(), recorder.clone(), hosts.clone());
    std::thread::Builder::new()
        .name(format!("worker-{i}"))
        .stack_size(STACK)
        .spawn(move || w.run())
}

/// Every [`GROW_EVERY`]: if hosts are ready, no worker waits for work and
/// responses were slow, doubles the workers (up to `most`). Returns the
/// workers it started.
fn grow(
    shared: &Arc<Shared>,
    recorder: &SyncSender<Msg>,
    hosts: &Sender<HostUpdate>,
    done: &AtomicBool,
    count: &Mutex<usize>,
    most: usize,
) -> Vec<JoinHandle<()>> {
    let mut started = Vec::new();
    let mut n = *count.lock().unwrap_or_else(|e| e.into_inner());
    while !done.load(Ordering::SeqCst) && n < most {
        std::thread::sleep(GROW_EVERY);
        let mean = shared.response_clock.take_mean();
        let slow = mean.is_some_and(|m| m >= SLOW_RESPONSE);
        if !(slow && shared.frontier.short_of_workers()) {
            continue;
        }
        let more = n.min(most - n);
        for _ in 0..more {
            match spawn(n, shared, recorder, hosts) {
                Ok(h) => {
                    started.push(h);
                    n += 1;
                }
                // Out of threads or memory: the run goes on with those it has.
                Err(_) => {
                    *count.lock().unwrap_or_else(|e| e.into_inner()) = n;
                    return started;
                }
            }
        }
        *count.lock().unwrap_or_else(|e| e.into_inner()) = n;
    }
    started
}
