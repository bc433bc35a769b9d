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

    /// Prints a line if it is time.
    pub fn tick(&mut self, c: &Counters, f: Counts) {
        let now = Instant::now();
        let dt = now.duration_since(self.last);
        if self.mode == Mode::Quiet || dt < self.every() {
            return;
        }
        let pages = c.pages.load(Ordering::Relaxed);
        let bytes = c.bytes.load(Ordering::Relaxed);
        let secs = dt.as_secs_f64().max(1e-3);
        let line = format!(
            "{:>6.0}s  {} pages  {:.0} pages/s  {}/s  queues: {} ready, {} in penalty box, {} busy, {} waiting for robots.txt, {} with work  errors: {}",
            now.duration_since(self.start).as_secs_f64(),
            pages,
            (pages - self.last_pages) as f64 / secs,
            human_bytes(((bytes - self.last_bytes) as f64 / secs) as u64),
            f.ready,
            f.penalty,
            f.busy,
            f.robots_pending,
            f.with_work,
            c.errors.load(Ordering::Relaxed),
        );
        let mut err = std::io::stderr().lock();
        if self.mode == Mode::Live {
            let _ = write!(err, "\r\x1b[2K{line}");
            self.drawn = true;
        } else {
            let _ = writeln!(err, "fetcher: {line}");
        }
        let _ = err.flush();
        self.last = now;
        self.last_pages = pages;
        self.last_bytes = bytes;
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
