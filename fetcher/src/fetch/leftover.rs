//! The leftover file of a run: the URLs it did not fetch, per key, for a
//! later segment, with a crawl-log line for each URL of a key given up, and
//! the URLs each byte budget or the disk floor sent there untried.

use std::collections::BTreeMap;
use std::time::Duration;

use common::crawllog::ErrorCode;
use common::runlog::RunLog;
use common::segment::SegmentRecord;

use crate::budget::Cut;
use crate::clock::unix_ms;
use crate::error::Error;
use crate::frontier::{Frontier, Job};
use crate::outcome;
use crate::recorder::{Msg, error_line};

/// The leftover file: per key, in segment order, its retries, then what was
/// loaded, then what was never read; a given-up key also gets a crawl-log
/// line per URL saying why. Returns the number of URLs written, and those
/// a byte budget or the disk floor (`stop_cut`, the run's own stop) sent
/// there untried, by reason.
pub(super) fn write_leftover(
    frontier: &Frontier,
    work: &crate::feed::WorkFile,
    tx: &std::sync::mpsc::SyncSender<Msg>,
    log: &RunLog,
    stop_cut: Option<Cut>,
) -> Result<(u64, BTreeMap<String, u64>), Error> {
    let mut count = 0u64;
    let mut cuts: BTreeMap<String, u64> = BTreeMap::new();
    for k in frontier.take_leftovers() {
        let not_before = k.not_before.map(unix_ms);
        for job in k.retries {
            count += 1;
            let _ = tx.send(Msg::Leftover(SegmentRecord {
                not_before,
                ..job.rec
            }));
        }
        // The URLs not attempted.
        let mut untried = 0u64;
        for job in &k.queued {
            untried += 1;
            send_leftover(tx, job, k.abandoned, not_before);
        }
        for r in k.ranges {
            // One batch at a time, so a huge key does not fill memory.
            work.read_all(r, |job| {
                untried += 1;
                send_leftover(tx, &job, k.abandoned, not_before);
            })?;
        }
        count += untried;
        if let Some(code) = k.abandoned {
            log.note(format!("queue {}: given up ({})", k.name, code.as_str()));
        }
        // Untried for a budget or the floor: the key's own cut, else the
        // run's (not for a key given up for failures).
        if let Some(cut) = k.cut.or(stop_cut.filter(|_| k.abandoned.is_none()))
            && untried > 0
        {
            *cuts.entry(cut.name().to_string()).or_default() += untried;
            if k.cut.is_some() {
                log.note(format!(
                    "queue {}: byte budget reached ({}); {untried} URLs to leftover",
                    k.name,
                    cut.name()
                ));
            }
        }
    }
    Ok((count, cuts))
}

fn send_leftover(
    tx: &std::sync::mpsc::SyncSender<Msg>,
    job: &Job,
    abandoned: Option<ErrorCode>,
    not_before: Option<i64>,
) {
    if let Some(code) = abandoned {
        let note = outcome::given_up_note(code);
        let line = error_line(
            &job.rec.url,
            job.rec.via,
            job.rec.hops,
            code,
            note.into(),
            Duration::ZERO,
        );
        let _ = tx.send(Msg::Log(line));
    }
    let (via, tries) = outcome::leftover_via(abandoned, job.rec.tries);
    let _ = tx.send(Msg::Leftover(SegmentRecord {
        not_before,
        ..job.to_record(via, tries)
    }));
}
