//! Watching a run: the progress display, the stopping criteria (signals,
//! the round's tail ([`crate::round_end`]), `--time-limit`, `--min-hosts`),
//! the grace period for requests in flight, and a failed writer, which
//! stops everything at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::progress::Progress;
use crate::recorder::Recorder;
use crate::round_end::Ending;
use crate::settings::Settings;
use crate::worker::Shared;
use common::progress::Pacer;
use common::runlog::RunLog;

/// How the supervised part of a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Every URL was handled.
    Complete,
    /// The hosts left would mostly make the round wait ([`crate::round_end`]).
    Tail,
    /// Every host left is held beyond its delay ([`crate::round_end`]).
    Held,
    /// `--time-limit` reached.
    TimeLimit,
    /// Fewer than `--min-hosts` queues had work.
    MinHosts,
    /// SIGINT or SIGTERM.
    Signal,
    /// Output could not be written (or the work file read): stop at once.
    Failed,
}

impl Stop {
    /// The `stop_reason` of `stats.json` and `DONE`.
    pub fn reason(self) -> &'static str {
        match self {
            Stop::Complete => "complete",
            Stop::Tail => "tail",
            Stop::Held => "held",
            Stop::TimeLimit => "time-limit",
            Stop::MinHosts => "min-hosts",
            Stop::Signal => "signal",
            Stop::Failed => "failed",
        }
    }
}

/// What [`supervise`] watches.
pub struct Supervised<'a> {
    /// The run's settings.
    pub settings: &'a Settings,
    /// `--min-hosts` as it applies to this segment (0: off).
    pub min_hosts: usize,
    /// When the run started, for `--time-limit`.
    pub started: Instant,
    /// What the workers share.
    pub shared: &'a Shared,
    /// The writer thread, which may fail.
    pub recorder: &'a Recorder,
    /// SIGINT and SIGTERM received.
    pub signals: &'a AtomicU32,
    /// The worker threads.
    pub workers: &'a [JoinHandle<()>],
    /// Where to say what happens.
    pub log: &'a RunLog,
}

/// Watches the run until the frontier is idle: draws progress, and on a
/// stopping criterion stops handing out work, waits for requests in
/// flight up to `--stop-grace`, then interrupts them. A failed writer (or
/// work file) stops everything at once.
pub fn supervise(run: &Supervised) -> Stop {
    let &Supervised {
        settings: s,
        min_hosts,
        started,
        shared,
        recorder,
        signals,
        workers,
        log,
    } = run;
    let frontier = &shared.frontier;
    let mut pacer = Pacer::new(s.progress, s.progress_interval);
    let mut progress = Progress::new();
    let mut stop = Stop::Complete;
    let mut grace_ends: Option<Instant> = None;
    // The tail rule looks at every key: a few times a second is enough.
    let mut next_pace = Instant::now();
    loop {
        if frontier.wait_idle(Duration::from_millis(100)) {
            break;
        }
        if workers.iter().all(|w| w.is_finished()) {
            // Only reachable if workers died (a bug): stop rather than wait forever.
            log.info("every worker thread has ended; writing what is left to leftover");
            break;
        }
        if stop != Stop::Failed && (recorder.failed() || shared.failed()) {
            pacer.clear(log);
            stop = Stop::Failed;
            shared.stopping.store(true, Ordering::SeqCst);
            frontier.stop();
            shared.client.shutdown();
            continue;
        }
        pacer.tick(log, |window| {
            progress.line(window, Instant::now(), &shared.counters, frontier.counts())
        });
        if stop == Stop::Complete {
            let mut why = String::new();
            stop = if signals.load(Ordering::SeqCst) > 0 {
                why.push_str("signal received; a second one exits at once");
                Stop::Signal
            } else if s.time_limit.is_some_and(|t| started.elapsed() >= t) {
                why.push_str("time limit reached");
                Stop::TimeLimit
            } else if min_hosts > 0 && frontier.counts().with_work < min_hosts {
                why.push_str("too few hosts left with work");
                Stop::MinHosts
            } else if Instant::now() >= next_pace
                && let Some(ending) = {
                    next_pace = Instant::now() + PACE_EVERY;
                    let pace = frontier.pace();
                    let ending = s.tail.ends_round(&pace);
                    if ending.is_some() {
                        why = format!("end of the round: {}", s.tail.explain(&pace));
                    }
                    ending
                }
            {
                match ending {
                    Ending::Tail => Stop::Tail,
                    Ending::Held => Stop::Held,
                }
            } else {
                continue;
            };
            pacer.clear(log);
            log.info(format!(
                "stopping ({why}): finishing requests in flight, at most {:?}",
                s.stop_grace
            ));
            if stop != Stop::Signal {
                // The round ends: a request that gets no answer within the
                // grace period counts as a timeout, and hosts that already
                // failed in this run are not waited for.
                shared.ending_round.store(true, Ordering::SeqCst);
            }
            shared.stopping.store(true, Ordering::SeqCst);
            frontier.stop();
            if stop != Stop::Signal {
                for key in frontier.busy_failing() {
                    shared.client.abort(key);
                }
            }
            grace_ends = Some(Instant::now() + s.stop_grace);
        } else if grace_ends.is_some_and(|t| Instant::now() >= t) {
            log.info("grace period over: abandoning requests in flight");
            shared.client.shutdown();
            grace_ends = None;
        }
    }
    pacer.clear(log);
    stop
}

/// How often the tail rule is checked.
const PACE_EVERY: Duration = Duration::from_millis(250);

/// Counts SIGINT and SIGTERM in `count`; a second one exits at once
/// (131), leaving files the next run resumes from.
pub fn install_signals(count: Arc<AtomicU32>) -> std::io::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            for _ in signals.forever() {
                if count.fetch_add(1, Ordering::SeqCst) >= 1 {
                    common::runlog::say("second signal: exiting now; run fetch again to resume");
                    common::exit::Exit::Killed.now();
                }
            }
        })?;
    Ok(())
}
