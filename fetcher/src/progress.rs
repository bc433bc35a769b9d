//! Progress on stderr: a live line on a terminal, a plain line every 10
//! seconds otherwise (log files, cron mail), and a summary at the end.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

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

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Redrawn line (terminal).
    Live,
    /// A line every 10 s.
    Plain,
    /// Nothing until the summary.
    Quiet,
}

/// Draws progress when [`Progress::tick`] is called often enough.
#[derive(Debug)]
pub struct Progress {
    mode: Mode,
    start: Instant,
    last: Instant,
    last_pages: u64,
    last_bytes: u64,
    drawn: bool,
}

impl Progress {
    /// Starts the clock.
    pub fn new(mode: Mode) -> Progress {
        let now = Instant::now();
        Progress {
            mode,
            start: now,
            last: now,
            last_pages: 0,
            last_bytes: 0,
            drawn: false,
        }
    }

    fn every(&self) -> Duration {
        match self.mode {
            Mode::Live => Duration::from_millis(250),
            Mode::Plain => Duration::from_secs(10),
            Mode::Quiet => Duration::MAX,
        }
    }

    /// Prints a line on stderr if it is time.
    pub fn tick(&mut self, c: &Counters, f: Counts) {
        if let Some(text) = self.render(Instant::now(), c, f) {
            let mut err = std::io::stderr().lock();
            let _ = err.write_all(text.as_bytes());
            let _ = err.flush();
        }
    }

    /// What to print at `now`, if it is time: the live line redrawn in
    /// place, or a plain line of its own.
    fn render(&mut self, now: Instant, c: &Counters, f: Counts) -> Option<String> {
        let dt = now.saturating_duration_since(self.last);
        if self.mode == Mode::Quiet || dt < self.every() {
            return None;
        }
        let pages = c.pages.load(Ordering::Relaxed);
        let bytes = c.bytes.load(Ordering::Relaxed);
        let secs = dt.as_secs_f64().max(1e-3);
        let line = format!(
            "{:>6.0}s  {} pages  {:.0} pages/s  {}/s  queues: {} ready, {} in penalty box, {} busy, {} waiting for robots.txt, {} with work  errors: {}",
            now.saturating_duration_since(self.start).as_secs_f64(),
            pages,
            pages.saturating_sub(self.last_pages) as f64 / secs,
            human_bytes((bytes.saturating_sub(self.last_bytes) as f64 / secs) as u64),
            f.ready,
            f.penalty,
            f.busy,
            f.robots_pending,
            f.with_work,
            c.errors.load(Ordering::Relaxed),
        );
        self.last = now;
        self.last_pages = pages;
        self.last_bytes = bytes;
        if self.mode == Mode::Live {
            self.drawn = true;
            Some(format!("\r\x1b[2K{line}"))
        } else {
            Some(format!("fetcher: {line}\n"))
        }
    }

    /// Clears the live line before the summary.
    pub fn clear(&mut self) {
        if self.drawn {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
            self.drawn = false;
        }
    }
}

/// `1.5 MB`, `20 kB`.
pub fn human_bytes(b: u64) -> String {
    let b = b as f64;
    if b >= 1e9 {
        format!("{:.1} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.1} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.0} kB", b / 1e3)
    } else {
        format!("{b:.0} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counters(pages: u64, bytes: u64) -> Counters {
        let c = Counters::default();
        c.pages.store(pages, Ordering::Relaxed);
        c.bytes.store(bytes, Ordering::Relaxed);
        c
    }

    #[test]
    fn plain_lines_come_every_ten_seconds_with_rates() {
        let mut p = Progress::new(Mode::Plain);
        let t0 = p.start;
        let f = Counts {
            ready: 3,
            penalty: 7,
            busy: 2,
            robots_pending: 1,
            with_work: 12,
        };
        assert_eq!(
            p.render(t0 + Duration::from_secs(9), &counters(50, 0), f),
            None
        );
        let line = p
            .render(t0 + Duration::from_secs(10), &counters(200, 2_000_000), f)
            .unwrap();
        assert!(
            line.starts_with("fetcher: ") && line.ends_with('\n'),
            "{line:?}"
        );
        assert!(!line.contains('\r'), "no terminal codes in a log: {line:?}");
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
        // The next line 10 s later shows the rate of those 10 s only.
        assert_eq!(
            p.render(t0 + Duration::from_secs(15), &counters(300, 0), f),
            None
        );
        let line = p
            .render(t0 + Duration::from_secs(20), &counters(300, 2_000_000), f)
            .unwrap();
        assert!(
            line.contains("10 pages/s") && line.contains(" 0 B/s"),
            "{line:?}"
        );
    }

    #[test]
    fn the_live_line_is_redrawn_in_place_four_times_a_second() {
        let mut p = Progress::new(Mode::Live);
        let t0 = p.start;
        let f = Counts::default();
        assert_eq!(
            p.render(t0 + Duration::from_millis(100), &counters(1, 0), f),
            None
        );
        let line = p
            .render(t0 + Duration::from_millis(250), &counters(5, 0), f)
            .unwrap();
        assert!(
            line.starts_with("\r\x1b[2K") && !line.ends_with('\n'),
            "{line:?}"
        );
        assert!(p.drawn, "clear() knows there is a line to erase");
    }

    #[test]
    fn quiet_prints_nothing() {
        let mut p = Progress::new(Mode::Quiet);
        let later = p.start + Duration::from_secs(3600);
        assert_eq!(p.render(later, &counters(1, 1), Counts::default()), None);
    }
}
