//! Step 3 of a run: the writer thread, the client and the workers, watched
//! by [`crate::supervise`] until the frontier is idle, and what they leave
//! for [`super::finish`].

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::SyncSender;
use std::time::Duration;

use common::runlog::RunLog;

use super::Run;
use super::holds::HostFiles;
use super::load::Segment;
use super::queue::Queued;
use super::shared::{client, share};
use super::writer::start_recorder;
use crate::crew::{self, Crew};
use crate::error::Error;
use crate::host_updates::HostWriter;
use crate::recorder::{Msg, Recorder, Spare};
use crate::settings::Settings;
use crate::supervise::{DiskWatch, Stop, Supervised, supervise};
use crate::worker::Shared;

/// What the workers left for [`super::finish`].
pub(super) struct Ran {
    pub(super) stop: Stop,
    /// What a disk or budget stop says.
    pub(super) stop_detail: Option<String>,
    pub(super) recorder: Recorder,
    pub(super) tx: SyncSender<Msg>,
    pub(super) hosts: HostFiles,
    pub(super) shared: Arc<Shared>,
    /// The segment's counts, for `stats.json`.
    pub(super) segment: SegmentCounts,
    /// Time from the start to the first worker.
    pub(super) startup: Duration,
}

/// What `stats.json` tells of the segment.
pub(super) struct SegmentCounts {
    pub(super) lines: u64,
    pub(super) malformed: u64,
    pub(super) queues: usize,
    pub(super) already_done: u64,
}

/// Step 3: the writer threads, the client and the workers, watched by
/// [`supervise`] until the frontier is idle.
pub(super) fn run_workers(
    run: &Run,
    segment: Segment,
    queued: Queued,
    signals: &AtomicU32,
) -> Result<Ran, Error> {
    let (s, crawl, log) = (run.s, run.crawl, run.log);
    let Segment {
        loaded,
        resumed,
        already_done,
        dns,
        tls,
        key_of,
        ..
    } = segment;
    let queues = loaded.keys.len();
    let (idle_connections, most_workers) = sockets(s, queues, log);
    let spare = Spare::default();
    let recorder = start_recorder(run, resumed.next_serial(), most_workers, spare.clone())?;
    let tx = recorder.sender();
    for line in resumed.missing_lines {
        let _ = tx.send(Msg::Log(line));
    }
    let hosts = HostFiles {
        holds: queued.holds,
        writer: Some(HostWriter::start(queued.db, queued.host_states)),
    };
    let client = client(s, dns.clone(), tls, idle_connections).map_err(Error::Start)?;
    let shared = share(
        run,
        queued.frontier,
        client,
        loaded.work,
        queued.journal,
        key_of,
        spare,
    )?;
    if shared.spend.spent_at_start() {
        // Nothing may be stored: no request is made.
        shared.frontier.stop();
    }

    let startup = run.started.elapsed();
    let first_workers = match s.options.threads {
        Some(_) => most_workers,
        None => most_workers.min(crew::FIRST_WORKERS),
    };
    let crew = Crew::start(&shared, &tx, &hosts.sender(), first_workers, most_workers)
        .map_err(Error::Start)?;
    let disk = DiskWatch {
        paths: vec![crawl.root().to_path_buf(), run.out.clone()],
        floor: s.disk_floor,
    };
    let (stop, stop_detail) = supervise(&Supervised {
        settings: s,
        min_hosts: min_hosts(s, queues, log),
        started: run.started,
        shared: &shared,
        recorder: &recorder,
        signals,
        crew: &crew,
        log,
        disk: &disk,
    });
    let workers = crew.count();
    crew.join();
    if workers > first_workers {
        log.info(format!(
            "{workers} workers (from {first_workers}: requests were slow and hosts waited for a \
             worker; at most {most_workers} for {queues} queues)"
        ));
    }
    let c = dns.counts();
    log.info(format!(
        "dns: {} lookups, {} answers from the cache",
        c.lookups.load(Ordering::Relaxed),
        c.cached.load(Ordering::Relaxed)
    ));
    Ok(Ran {
        stop,
        stop_detail,
        recorder,
        tx,
        hosts,
        shared,
        segment: SegmentCounts {
            lines: loaded.lines,
            malformed: loaded.malformed,
            queues,
            already_done,
        },
        startup,
    })
}

/// The sockets of a run for `queues` queues: the connections kept idle
/// between requests (one per queue, at most half the sockets the run may
/// open), and the most workers, for requests in flight in the rest (fewer
/// than the settings ask when the limit on open files leaves no room, said
/// in the log).
fn sockets(s: &Settings, queues: usize, log: &RunLog) -> (usize, usize) {
    // A connection kept per queue between its requests, at most half the
    // sockets the run may open; the rest for requests in flight.
    let sockets = crew::open_files_room();
    let idle_connections = queues.clamp(16, 8192).min(sockets / 2);
    let room = sockets - idle_connections;
    let most_workers = s.workers(queues);
    if most_workers > room {
        log.info(format!(
            "at most {room} requests in flight, not {most_workers}: the limit on open files \
             (ulimit -n) leaves room for no more connections"
        ));
    }
    (idle_connections, most_workers.min(room))
}

/// `--min-hosts`, unless the segment has fewer queues (then 0, said in
/// the log): stopping early would leave it unfetched round after round.
fn min_hosts(s: &Settings, queues: usize, log: &RunLog) -> usize {
    if s.options.min_hosts > queues {
        log.info(format!(
            "--min-hosts {} ignored: the segment has only {} queues, so stopping early \
             would leave it unfetched round after round",
            s.options.min_hosts, queues
        ));
        0
    } else {
        s.options.min_hosts
    }
}
