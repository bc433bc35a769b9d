//! Watching a run: the progress display, the stopping criteria (signals,
//! the round's tail ([`crate::round_end`]), `--time-limit`, `--min-hosts`,
//! the free-disk floor and the byte budgets ([`crate::budget`])), the grace
//! period for requests in flight, and a failed writer, which stops
//! everything at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use std::path::PathBuf;

use common::disk::DiskFloor;
use common::human::bytes_precise as human;

use crate::budget::{Cut, Spend};
use crate::crew::Crew;
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
    /// The free disk space fell to `min_free_disk`.
    Disk,
    /// `max_run_bytes` reached.
    RunBytes,
    /// `max_crawl_bytes` reached.
    CrawlBytes,
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
            Stop::Disk => "disk",
            Stop::RunBytes => "run-bytes",
            Stop::CrawlBytes => "crawl-bytes",
            Stop::Failed => "failed",
        }
    }

    /// The cut a stop makes to the rest of the segment, if it is one.
    pub fn cut(self) -> Option<Cut> {
        match self {
            Stop::Disk => Some(Cut::Disk),
            Stop::RunBytes => Some(Cut::RunBytes),
            Stop::CrawlBytes => Some(Cut::CrawlBytes),
            _ => None,
        }
    }
}

/// How often the free disk space is looked at (a `statvfs` call: a few
/// microseconds). The floor must hold what the run writes meanwhile and
/// what its requests in flight bring: far less than the default 1 GB.
const DISK_EVERY: Duration = Duration::from_millis(100);

/// What a run watches on disk: the filesystems of the crawl directory and
/// of the run's output, and the floor kept free on them.
pub struct DiskWatch {
    /// Paths on the filesystems to watch.
    pub paths: Vec<PathBuf>,
    /// The floor.
    pub floor: DiskFloor,
}

impl DiskWatch {
    /// The first shortage found, said as a stop detail.
    fn short(&self) -> Option<String> {
        if self.floor.is_off() {
            return None;
        }
        self.paths.iter().find_map(|p| {
            common::disk::check(p, self.floor, 0)
                .ok()
                .flatten()
                .map(|s| s.to_string())
        })
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
    pub crew: &'a Crew,
    /// Where to say what happens.
    pub log: &'a RunLog,
    /// The free-disk floor.
    pub disk: &'a DiskWatch,
}

/// Watches the run until the frontier is idle: draws progress, and on a
/// stopping criterion stops handing out work, waits for requests in
/// flight up to `--stop-grace`, then interrupts them. A failed writer (or
/// work file) stops everything at once. Returns why the run stopped, with
/// a line saying more for a disk or budget stop.
pub fn supervise(run: &Supervised) -> (Stop, Option<String>) {
    let &Supervised {
        settings: s,
        shared,
        recorder,
        crew,
        log,
        ..
    } = run;
    let mut detail = None;
    let frontier = &shared.frontier;
    let mut pacer = Pacer::new(s.progress, s.options.progress_interval);
    let mut progress = Progress::new();
    let mut stop = Stop::Complete;
    let mut grace_ends: Option<Instant> = None;
    let mut clocks = Clocks {
        next_pace: Instant::now(),
        next_disk: Instant::now(),
    };
    loop {
        if frontier.wait_idle(Duration::from_millis(100)) {
            // (A worker that reached a byte budget stopped the frontier.)
            if stop == Stop::Complete
                && let Some(cut) = shared.spend.cut()
            {
                stop = budget_stop(cut);
                detail = Some(budget_detail(&shared.spend, cut));
            }
            break;
        }
        if crew.all_ended() {
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
            let Some((why_stop, why, said)) = criterion(run, &mut clocks) else {
                continue;
            };
            stop = why_stop;
            detail = said;
            pacer.clear(log);
            log.info(format!(
                "stopping ({why}): finishing requests in flight, at most {:?}",
                s.options.stop_grace
            ));
            begin_stop(shared, stop);
            grace_ends = Some(Instant::now() + s.options.stop_grace);
        } else if grace_ends.is_some_and(|t| Instant::now() >= t) {
            log.info("grace period over: abandoning requests in flight");
            shared.client.shutdown();
            grace_ends = None;
        }
    }
    pacer.clear(log);
    (stop, detail)
}

/// When the criteria looked at less often than every tick are due next.
struct Clocks {
    /// The tail rule looks at every key: a few times a second is enough.
    next_pace: Instant,
    /// The free disk space.
    next_disk: Instant,
}

/// The criterion that stops the run now, if one does: the stop, why (for
/// the log), and what a disk or budget stop says.
fn criterion(run: &Supervised, clocks: &mut Clocks) -> Option<(Stop, String, Option<String>)> {
    let s = run.settings;
    let shared = run.shared;
    if run.signals.load(Ordering::SeqCst) > 0 {
        let why = "signal received; a second one exits at once";
        return Some((Stop::Signal, why.into(), None));
    }
    if s.time_limit.is_some_and(|t| run.started.elapsed() >= t) {
        return Some((Stop::TimeLimit, "time limit reached".into(), None));
    }
    if run.min_hosts > 0 && shared.frontier.counts().with_work < run.min_hosts {
        let why = "too few hosts left with work";
        return Some((Stop::MinHosts, why.into(), None));
    }
    if let Some(cut) = shared.spend.cut() {
        let d = budget_detail(&shared.spend, cut);
        return Some((budget_stop(cut), d.clone(), Some(d)));
    }
    let now = Instant::now();
    if now >= clocks.next_disk {
        clocks.next_disk = now + DISK_EVERY;
        if let Some(short) = run.disk.short() {
            let why = format!("free disk space at the floor: {short}");
            return Some((Stop::Disk, why, Some(short)));
        }
    }
    if now >= clocks.next_pace {
        clocks.next_pace = now + PACE_EVERY;
        let pace = shared.frontier.pace();
        if let Some(ending) = s.tail.ends_round(&pace) {
            let why = format!("end of the round: {}", s.tail.explain(&pace));
            let stop = match ending {
                Ending::Tail => Stop::Tail,
                Ending::Held => Stop::Held,
            };
            return Some((stop, why, None));
        }
    }
    None
}

/// Stops handing out work for `stop`. A signal or a budget puts what is in
/// flight back untried; the other stops end the round: a request that gets
/// no answer within the grace period counts as a timeout, and hosts that
/// already failed in this run are not waited for.
fn begin_stop(shared: &Shared, stop: Stop) {
    let ends_round = !matches!(stop, Stop::Signal | Stop::RunBytes | Stop::CrawlBytes);
    if ends_round {
        shared.ending_round.store(true, Ordering::SeqCst);
    }
    shared.stopping.store(true, Ordering::SeqCst);
    shared.frontier.stop();
    if ends_round {
        for key in shared.frontier.busy_failing() {
            shared.client.abort(key);
        }
    }
}

fn budget_stop(cut: Cut) -> Stop {
    match cut {
        Cut::CrawlBytes => Stop::CrawlBytes,
        _ => Stop::RunBytes,
    }
}

/// What a budget stop says: the budget, and where the bytes stood.
fn budget_detail(spend: &Spend, cut: Cut) -> String {
    let limit = spend.limit(cut).unwrap_or(0);
    match cut {
        Cut::CrawlBytes => format!(
            "max_crawl_bytes {} reached: the crawl's WARC files hold {} ({} of them from this \
             run); raise max_crawl_bytes to go on",
            human(limit),
            human(spend.before() + spend.stored()),
            human(spend.stored())
        ),
        _ => format!(
            "max_run_bytes {} reached: {} of WARC records stored by this run (the response \
             that reached it is the last stored); the rest waits in the leftover",
            human(limit),
            human(spend.stored())
        ),
    }
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
