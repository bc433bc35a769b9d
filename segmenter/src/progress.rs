//! The segmenter's progress line while a round runs, so that a long run in
//! a terminal, a log file or a cron mail shows that it moves: live on a
//! terminal, and a plain line every `--progress-interval` in the log (and
//! on stderr otherwise; [`common::progress`] says when and where):
//!
//! ```text
//! segmenter: progress: 21,480 pages, 244.9 MB of HTML, 1,166,215 links, 0 URLs from lists; 0 URLs selected (1.0 s)
//! ```
//!
//! The scan workers add their counts every batch of records or lines (a
//! few relaxed atomic additions, nothing in the per-link loop); the
//! selection adds the URLs it has passed on.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use crate::round::counts::Counts;
use common::human;
use common::progress::Pacer;
use common::runlog::RunLog;

/// Counts shared by the threads of a round.
#[derive(Debug, Default)]
pub struct Progress {
    pages: AtomicU64,
    html_bytes: AtomicU64,
    links: AtomicU64,
    listed: AtomicU64,
    selected: AtomicU64,
}

/// What a scan worker has already added to a [`Progress`].
#[derive(Debug, Default, Clone, Copy)]
pub struct Published {
    pages: u64,
    html_bytes: u64,
    links: u64,
    listed: u64,
}

impl Published {
    fn of(c: &Counts) -> Published {
        Published {
            pages: c.html_pages,
            html_bytes: c.html_bytes,
            links: c.links,
            listed: c.seeds + c.leftover + c.retries + c.backlog_in,
        }
    }
}

impl Progress {
    /// Adds what a worker counted since its last call.
    pub fn publish(&self, counts: &Counts, last: &mut Published) {
        let now = Published::of(counts);
        let add = |slot: &AtomicU64, new: u64, old: u64| {
            if new > old {
                slot.fetch_add(new - old, Ordering::Relaxed);
            }
        };
        add(&self.pages, now.pages, last.pages);
        add(&self.html_bytes, now.html_bytes, last.html_bytes);
        add(&self.links, now.links, last.links);
        add(&self.listed, now.listed, last.listed);
        *last = now;
    }

    /// Adds URLs passed on by the selection.
    pub fn selected(&self, n: u64) {
        self.selected.fetch_add(n, Ordering::Relaxed);
    }

    /// The progress line.
    pub fn line(&self, elapsed: Duration) -> String {
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        format!(
            "progress: {} pages, {} of HTML, {} links, {} URLs from lists; {} URLs selected ({:.1} s)",
            human::count(get(&self.pages)),
            human::megabytes(get(&self.html_bytes)),
            human::count(get(&self.links)),
            human::count(get(&self.listed)),
            human::count(get(&self.selected)),
            elapsed.as_secs_f64()
        )
    }
}

/// Runs `work` while a thread shows `progress` as `pacer` says (nothing
/// when it is quiet). The thread stops as soon as `work` returns, and
/// clears a live line.
pub fn while_running<T>(
    mut pacer: Pacer,
    log: &RunLog,
    progress: &Progress,
    work: impl FnOnce() -> T,
) -> T {
    let Some(every) = pacer.tick_every() else {
        return work();
    };
    let started = Instant::now();
    let (stop, stopped) = mpsc::channel::<()>();
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("progress".into())
            .spawn_scoped(s, move || {
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
                    pacer.tick(log, |_| progress.line(started.elapsed()));
                }
                pacer.clear(log);
            })
            .expect("the progress thread starts");
        let out = work();
        drop(stop);
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_add_only_what_is_new() {
        let p = Progress::default();
        let mut last = Published::default();
        let mut c = Counts {
            html_pages: 2,
            html_bytes: 3_000_000,
            links: 40,
            ..Counts::default()
        };
        p.publish(&c, &mut last);
        c.html_pages += 1;
        c.links += 10;
        c.seeds = 5;
        p.publish(&c, &mut last);
        p.selected(7);
        assert_eq!(
            p.line(Duration::from_millis(1500)),
            "progress: 3 pages, 3.0 MB of HTML, 50 links, 5 URLs from lists; 7 URLs selected (1.5 s)"
        );
    }
}
