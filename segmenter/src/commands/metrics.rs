//! `segmenter metrics CRAWL [--phase P] [--since T] [--print]`: writes the
//! driver's metrics file ([`crate::metrics`]) for the step a driver
//! without `segmenter next` (the Slurm driver) is at, or prints its text.

use std::path::Path;

use common::crawldir::CrawlDir;

use crate::cycle::DriverState;
use crate::error::Error;
use crate::metrics::{At, phase_of_step, write};
use crate::phase::Phase;

/// `segmenter metrics CRAWL [--phase P] [--since T] [--print]`: writes the
/// file (or prints its text) for `phase`, by default the step `round.json`
/// last recorded (`idle` for a sharded crawl).
pub fn command(
    root: &Path,
    phase: Option<Phase>,
    since_ms: Option<i64>,
    print: bool,
) -> Result<(), Error> {
    let crawl = CrawlDir::open(root).map_err(Error::io(root))?;
    let now_ms = common::timefmt::unix_millis(std::time::SystemTime::now());
    let sharded = common::shards::Shards::load(root)?.is_sharded();
    let state = if sharded {
        DriverState::default()
    } else {
        crate::cycle::read::facts(&crawl, i64::MAX, 0)?.state
    };
    let step = state.step.as_ref();
    let at = At {
        phase: phase
            .or_else(|| step.map(|s| phase_of_step(s.kind, s.arg.as_deref())))
            .unwrap_or(Phase::Idle),
        since_ms: match (phase, step) {
            (None, Some(s)) => s.started_ms,
            _ => now_ms,
        },
        open_round: state.open.as_ref().map(|o| o.number),
        driver_ms: since_ms,
    };
    let text = write(root, at, print)?;
    if print {
        common::exit::print(&text).map_err(Error::io("stdout"))?;
    }
    Ok(())
}
