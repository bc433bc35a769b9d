//! The step a crawl's driver is at, as the driver's metrics file says it
//! ([`crate::metrics`]) and `segmenter metrics --phase` takes it.

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
