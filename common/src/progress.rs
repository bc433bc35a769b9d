//! How both programs show progress, with the same flags: `--progress
//! auto|live|plain|none` and `--progress-interval DURATION`.
//!
//! - `live`: a line redrawn in place four times a second on stderr (a
//!   terminal), and a plain line in the log file every interval;
//! - `plain`: a plain line every interval, on stderr and in the log file
//!   (what a log, cron mail or a pipe can hold);
//! - `auto` (the default): `live` when stderr is a terminal, else `plain`;
//! - `none`, or an interval of 0: no progress line (the summary at the end
//!   is still printed).
//!
//! A program builds its line when [`Pacer::tick`] asks for it, for the
//! window it names: the live line and the plain line each have their own,
//! so that a rate in the plain line covers the whole interval.

use std::time::{Duration, Instant};

use crate::runlog::RunLog;

/// Time between two draws of the live line.
pub const REDRAW: Duration = Duration::from_millis(250);
/// Time between two plain progress lines unless set.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(10);

/// `--progress`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ProgressMode {
    /// A live line on a terminal, plain lines otherwise.
    #[default]
    Auto,
    /// Always the live line (and plain lines in the log file).
    Live,
    /// A plain line every `--progress-interval`.
    Plain,
    /// Only the summary at the end.
    None,
}

/// The two progress flags as both programs take them.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ProgressArgs {
    /// Progress display: auto (a live line on a terminal, plain lines
    /// otherwise), live, plain, or none
    #[arg(long, value_enum, value_name = "MODE", default_value_t = ProgressMode::Auto)]
    pub progress: ProgressMode,
}

/// Which line [`Pacer::tick`] asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// The live line (its rates over the last redraw).
    Live = 0,
    /// The plain line (its rates over the last interval).
    Line = 1,
}

/// Says when a progress line is due, and writes it through the run's log.
#[derive(Debug)]
pub struct Pacer {
    live: bool,
    /// Zero: no plain lines.
    interval: Duration,
    last_draw: Instant,
    last_line: Instant,
}

impl Pacer {
    /// `mode` as it applies here (`auto` looks at stderr), with plain lines
    /// every `interval` (none if zero).
    pub fn new(mode: ProgressMode, interval: Duration) -> Pacer {
        use std::io::IsTerminal;
        let (live, interval) = match mode {
            ProgressMode::Auto => (std::io::stderr().is_terminal(), interval),
            ProgressMode::Live => (true, interval),
            ProgressMode::Plain => (false, interval),
            ProgressMode::None => (false, Duration::ZERO),
        };
        let now = Instant::now();
        Pacer {
            // Without plain lines, no live line either: `none` is quiet.
            live: live && !interval.is_zero(),
            interval,
            last_draw: now,
            last_line: now,
        }
    }

    /// True if nothing is ever shown.
    pub fn is_quiet(&self) -> bool {
        self.interval.is_zero()
    }

    /// How often [`Pacer::tick`] should be called for lines to come on
    /// time (`None` when quiet).
    pub fn tick_every(&self) -> Option<Duration> {
        if self.is_quiet() {
            None
        } else if self.live {
            Some(REDRAW)
        } else {
            Some(self.interval)
        }
    }

    /// What is due at `now`: a plain line (and in live mode a redraw
    /// with it), or a redraw alone.
    pub fn due(&mut self, now: Instant) -> Vec<Window> {
        let mut due = Vec::new();
        if self.is_quiet() {
            return due;
        }
        if now.saturating_duration_since(self.last_line) >= self.interval {
            self.last_line = now;
            due.push(Window::Line);
        }
        if self.live && now.saturating_duration_since(self.last_draw) >= REDRAW {
            self.last_draw = now;
            due.push(Window::Live);
        }
        due
    }

    /// Writes the lines due now, each built by `line` for its window.
    pub fn tick(&mut self, log: &RunLog, mut line: impl FnMut(Window) -> String) {
        for window in self.due(Instant::now()) {
            match window {
                Window::Line => log.progress(&line(Window::Line), self.live),
                Window::Live => log.draw(&line(Window::Live)),
            }
        }
    }

    /// Erases the live line (before a summary).
    pub fn clear(&self, log: &RunLog) {
        if self.live {
            log.clear_live();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_lines_come_every_interval() {
        let mut p = Pacer::new(ProgressMode::Plain, Duration::from_secs(10));
        let t0 = p.last_line;
        assert!(p.due(t0 + Duration::from_secs(9)).is_empty());
        assert_eq!(p.due(t0 + Duration::from_secs(10)), [Window::Line]);
        assert!(p.due(t0 + Duration::from_secs(15)).is_empty());
        assert_eq!(p.due(t0 + Duration::from_secs(20)), [Window::Line]);
        assert_eq!(p.tick_every(), Some(Duration::from_secs(10)));
    }

    #[test]
    fn the_live_line_is_redrawn_four_times_a_second_and_logged_every_interval() {
        let mut p = Pacer::new(ProgressMode::Live, Duration::from_secs(10));
        let t0 = p.last_line;
        assert!(p.due(t0 + Duration::from_millis(100)).is_empty());
        assert_eq!(p.due(t0 + Duration::from_millis(250)), [Window::Live]);
        assert_eq!(
            p.due(t0 + Duration::from_secs(10)),
            [Window::Line, Window::Live]
        );
        assert_eq!(p.tick_every(), Some(REDRAW));
    }

    #[test]
    fn none_or_a_zero_interval_shows_nothing() {
        for p in [
            Pacer::new(ProgressMode::None, Duration::from_secs(10)),
            Pacer::new(ProgressMode::Live, Duration::ZERO),
        ] {
            let mut p = p;
            let later = p.last_line + Duration::from_secs(3600);
            assert!(p.due(later).is_empty());
            assert_eq!(p.tick_every(), None);
        }
    }
}
