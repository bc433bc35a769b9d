//! The step a crawl's driver is at, as the driver's metrics file says it
//! ([`crate::metrics`]) and `segmenter metrics --phase` takes it, and when
//! the driver started, as `segmenter next` and `metrics` take it
//! (`--since`, [`parse_since`]).

/// The step a driver is at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Phase {
    /// Injecting the seeds.
    Inject,
    /// Fetching a segment.
    Fetch,
    /// Building the next segments (`run`, or a sharded crawl's maps and
    /// reduces).
    Segment,
    /// Waiting for held hosts.
    Wait,
    /// No step runs: a round ended (or the seeds were injected).
    Idle,
    /// The driver was told to stop (exit 0).
    Stopped,
    /// The driver was told to stop on an error.
    Failed,
}

impl Phase {
    /// Every phase, in the file's order.
    pub const ALL: [Phase; 7] = [
        Phase::Inject,
        Phase::Fetch,
        Phase::Segment,
        Phase::Wait,
        Phase::Idle,
        Phase::Stopped,
        Phase::Failed,
    ];

    /// The word in the metrics file.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Inject => "inject",
            Phase::Fetch => "fetch",
            Phase::Segment => "segment",
            Phase::Wait => "wait",
            Phase::Idle => "idle",
            Phase::Stopped => "stopped",
            Phase::Failed => "failed",
        }
    }
}

/// `--since`: seconds since the Unix epoch, with a fraction (bash's
/// `$EPOCHREALTIME`, whose decimal mark follows the locale).
pub fn parse_since(s: &str) -> Result<i64, String> {
    let seconds: f64 = s
        .replace(',', ".")
        .parse()
        .map_err(|_| format!("`{s}` is not a time in seconds since 1970 (as $EPOCHREALTIME)"))?;
    if !(seconds.is_finite() && seconds >= 0.0) {
        return Err(format!("`{s}`: a time must be zero or positive"));
    }
    Ok((seconds * 1000.0) as i64)
}
