//! Step 4 of a run: after a failure, what is on disk is kept for the next
//! run; else the leftover, hosts.db saved, the contacts journal removed,
//! `stats.json` and then `DONE`.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, SystemTime};

use common::crawldir::{DONE_FILE, STATS_FILE};

use super::leftover::write_leftover;
use super::workers::{Ran, SegmentCounts};
use super::{Ended, Run};
use crate::error::Error;
use crate::recorder::RecorderTotals;
use crate::stats::{self, Stats};
use crate::supervise::Stop;

/// Step 4: after a failure, keep what is on disk for the next run; else
/// the leftover, the host state, `stats.json` and `DONE`.
pub(super) fn finish(
    run: &Run,
    mut ran: Ran,
    uploads: Option<common::store::Background>,
) -> Result<Ended, Error> {
    let (crawl, id, log) = (run.crawl, run.id, run.log);
    let stop = ran.stop;
    // The workers have ended: every host update is sent. hosts.db is saved
    // and closed first, whatever happens next.
    let saved = ran.hosts.close();
    if stop == Stop::Failed {
        // Nothing more can be stored (or read): keep what is on disk for
        // the next run to resume from, and write no leftover and no DONE.
        drop(ran.tx);
        let failure = ran
            .shared
            .failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        drop(ran.shared);
        let cause = match (ran.recorder.finish(), failure) {
            (Err(e), _) => e.to_string(),
            (Ok(_), Some(msg)) => msg,
            (Ok(_), None) => "the run failed".to_string(),
        };
        return Err(Error::stopped(cause, &run.resume_hint));
    }
    let (leftover_urls, cuts) = write_leftover(
        &ran.shared.frontier,
        &ran.shared.work,
        &ran.tx,
        log,
        stop.cut(),
    )?;
    let warc_bytes = ran.shared.spend.stored();
    drop(ran.tx);
    let totals = ran
        .recorder
        .finish()
        .map_err(|e| Error::stopped(e, &run.resume_hint))?;
    match saved {
        // hosts.db holds every host's next contact: the journal is done with.
        Ok(whole) => {
            if !whole {
                log.info(format!(
                    "{}: its write-ahead log could not be folded into it now (a reader held                      it); copy hosts.db-wal with it, or let the next run fold it in",
                    crawl.hosts_db_path().display()
                ));
            }
            if let Err(e) = ran.shared.journal.remove() {
                log.info(format!(
                    "{}: not removed ({e}); the next run reads it, and waits a little more",
                    crawl.contacts_path(id).display()
                ));
            }
        }
        Err(e) => log.info(format!(
            "host state not saved: {e}; {} keeps the hosts contacted, so that the next run \
             waits for them",
            crawl.contacts_path(id).display()
        )),
    }
    let errors = ran.shared.counters.errors.load(Ordering::Relaxed);
    drop(ran.shared);
    // DONE only once every file of the run is in the WARC store.
    if let Some(uploads) = uploads {
        crate::upload::finish(run.crawl, run.id, uploads, log)?;
    }
    write_done(
        run,
        Ending {
            stop,
            detail: ran.stop_detail,
            cuts,
            warc_bytes,
        },
        &totals,
        &ran.segment,
        ran.startup,
        leftover_urls,
        errors,
    )?;
    Ok(if stop == Stop::Signal {
        Ended::Signal
    } else {
        Ended::Complete
    })
}

/// How a run ended, for `stats.json` and `DONE`.
struct Ending {
    stop: Stop,
    /// What a disk or budget stop says.
    detail: Option<String>,
    /// URLs sent to the leftover untried by a budget or the disk floor, by
    /// reason.
    cuts: BTreeMap<String, u64>,
    /// WARC bytes the run stored.
    warc_bytes: u64,
}

/// `stats.json`, then `DONE` (last: the run is complete), and the last line
/// of the run's log.
fn write_done(
    run: &Run,
    end: Ending,
    totals: &RecorderTotals,
    segment: &SegmentCounts,
    startup: Duration,
    leftover_urls: u64,
    errors: u64,
) -> Result<(), Error> {
    let (id, log, out) = (run.id, run.log, &run.out);
    let seconds = run.started.elapsed().as_secs_f64();
    let pages = totals.responses - totals.robots_responses;
    let stop_reason = end.stop.reason();
    let st = Stats {
        version: 1,
        segment: id.to_string(),
        started: common::timefmt::iso_millis(run.started_at),
        finished: common::timefmt::iso_millis(SystemTime::now()),
        seconds,
        stop_reason: stop_reason.into(),
        resumed: segment.already_done > 0,
        segment_urls: segment.lines,
        malformed_lines: segment.malformed,
        already_done: segment.already_done,
        queues: segment.queues as u64,
        attempts: totals.log_lines,
        responses: totals.responses,
        robots_responses: totals.robots_responses,
        payload_bytes: totals.payload_bytes,
        truncated: totals.truncated,
        outcomes: totals.outcomes.clone(),
        leftover: totals.leftover.clone(),
        warc_bytes: end.warc_bytes,
        stop_detail: end.detail.clone().unwrap_or_default(),
        cuts: end.cuts.clone(),
        warc_files: totals
            .warc_files
            .iter()
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect(),
        pages_per_second: pages as f64 / seconds.max(1e-9),
        startup_seconds: startup.as_secs_f64(),
        cpu_seconds: stats::cpu_time().as_secs_f64(),
        peak_rss_bytes: stats::peak_rss(),
    };
    st.write(&out.join(STATS_FILE))
        .map_err(Error::io(out.join(STATS_FILE)))?;
    let mut done = format!(
        "segment {id}\nstop_reason {stop_reason}\nfinished {}\n",
        st.finished
    );
    // Added lines (readers take the lines they know): why a disk or budget
    // stop ended the run, and the URLs each cut sent to the leftover.
    if let Some(d) = &end.detail {
        done.push_str(&format!("stop_detail {}\n", d.replace('\n', " ")));
    }
    if !end.cuts.is_empty() {
        let cuts: Vec<String> = end.cuts.iter().map(|(k, n)| format!("{k}={n}")).collect();
        done.push_str(&format!("cuts {}\n", cuts.join(" ")));
    }
    common::atomic::write_atomic(out.join(DONE_FILE), done.as_bytes())
        .map_err(Error::io(out.join(DONE_FILE)))?;
    if let Some(d) = &end.detail {
        log.info(format!("stopped ({stop_reason}): {d}"));
    }
    log.info(format!(
        "done ({stop_reason}) in {seconds:.1}s: {pages} pages ({:.0}/s), {} stored, {} errors, {leftover_urls} URLs to leftover; {}",
        st.pages_per_second,
        common::human::bytes(totals.payload_bytes),
        errors,
        out.display()
    ));
    Ok(())
}
