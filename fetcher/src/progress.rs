//! The fetcher's progress line: pages, rates and the state of the queues,
//! shown live on a terminal and as plain lines in the log
//! ([`common::progress`] says when and where), and the counters the
//! workers bump for it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use common::human;
use common::progress::Window;

use crate::frontier::Counts;

/// Counters the workers bump.
#[derive(Debug, Default)]
pub struct Counters {
    /// Pages stored (robots.txt not included).
    pub pages: AtomicU64,
    /// Payload bytes stored.
    pub bytes: AtomicU64,
    /// Attempts that got no response, or a 5xx.
    pub errors: AtomicU64,
    /// robots.txt fetches.
    pub robots: AtomicU64,
}

impl Counters {
    /// Adds a stored page.
    pub fn page(&self, bytes: u64) {
        self.pages.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Adds an error.
    pub fn error(&self) {
        self.errors.fetch_add(1, Ordering::Relaxed);
    }
}

/// The counts a rate is taken from: those of the last line of a window.
#[derive(Debug, Clone, Copy)]
struct Snapshot {
    at: Instant,
    pages: u64,
    bytes: u64,
}

/// Builds the progress line ([`common::progress`] says when).
#[derive(Debug)]
pub struct Progress {
    start: Instant,
    /// One per [`Window`]: the live line's rates cover the last redraw,
    /// the plain line's the last interval.
    last: [Snapshot; 2],
}

impl Progress {
    /// Starts the clock.
    pub fn new() -> Progress {
        let now = Instant::now();
        let zero = Snapshot {
            at: now,
            pages: 0,
            bytes: 0,
        };
        Progress {
            start: now,
            last: [zero; 2],
        }
    }

    /// The line for `window` at `now`, with the rates since that window's
    /// previous line.
    pub fn line(&mut self, window: Window, now: Instant, c: &Counters, f: Counts) -> String {
        let pages = c.pages.load(Ordering::Relaxed);
        let bytes = c.bytes.load(Ordering::Relaxed);
        let last = &mut self.last[window as usize];
        let secs = now
            .saturating_duration_since(last.at)
            .as_secs_f64()
            .max(1e-3);
        let line = format!(
            "{:>6.0}s  {} pages  {:.0} pages/s  {}/s  queues: {} ready, {} in penalty box, {} busy, {} waiting for robots.txt, {} with work  errors: {}",
            now.saturating_duration_since(self.start).as_secs_f64(),
            pages,
            pages.saturating_sub(last.pages) as f64 / secs,
            human::bytes((bytes.saturating_sub(last.bytes) as f64 / secs) as u64),
            f.ready,
            f.penalty,
            f.busy,
            f.robots_pending,
            f.with_work,
            c.errors.load(Ordering::Relaxed),
        );
        *last = Snapshot {
            at: now,
            pages,
            bytes,
        };
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn counters(pages: u64, bytes: u64) -> Counters {
        let c = Counters::default();
        c.pages.store(pages, Ordering::Relaxed);
        c.bytes.store(bytes, Ordering::Relaxed);
        c
    }

    #[test]
    fn each_window_has_its_own_rates() {
        let mut p = Progress::new();
        let t0 = p.start;
        let f = Counts {
            ready: 3,
            penalty: 7,
            busy: 2,
            robots_pending: 1,
            with_work: 12,
        };
        let line = p.line(
            Window::Line,
            t0 + Duration::from_secs(10),
            &counters(200, 2_000_000),
            f,
        );
        for part in [
            "10s",
            "200 pages",
            "20 pages/s",
            "200 kB/s",
            "3 ready",
            "7 in penalty box",
            "1 waiting for robots.txt",
        ] {
            assert!(line.contains(part), "{part:?} missing from {line:?}");
        }
        assert!(!line.contains('\r') && !line.contains('\n'), "{line:?}");
        // The live line, a quarter second later, has the rate of that
        // quarter second; the next plain line that of its ten seconds.
        let live = p.line(
            Window::Live,
            t0 + Duration::from_millis(250),
            &counters(5, 0),
            f,
        );
        assert!(live.contains("20 pages/s"), "{live:?}");
        let line = p.line(
            Window::Line,
            t0 + Duration::from_secs(20),
            &counters(300, 2_000_000),
            f,
        );
        assert!(
            line.contains("10 pages/s") && line.contains(" 0 B/s"),
            "{line:?}"
        );
    }
}
