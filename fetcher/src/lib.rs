//! The fetcher: fetches one segment of a crawl politely into WARC files.
//! The `fetcher` binary is [`execute`] behind [`common::exit::main`].
//!
//! [`cli`] parses, [`settings`] validates, [`fetch`] runs a fetch (watched
//! by [`supervise`], logging to [`common::runlog`]), [`inspect`] summarizes
//! a segment file and [`status`] a fetched one; [`error`] says how a
//! command fails. The work is done by [`frontier`] (queues and the penalty box) keyed by
//! [`queue_key`], [`feed`] (reading the segment with bounded memory),
//! [`round_end`] (when a round's tail ends it), [`robots`] (RFC 9309) and
//! [`robots_cache`], [`dns`] (names, behind a cache), [`proxy`], [`transport`]
//! and [`http`], [`worker`] with
//! [`outcome`] (what each answer means), [`outlinks`] (a page's links for its
//! metadata record), [`recorder`] (the writer thread:
//! WARC, crawl log, leftover), [`resume`], [`host_updates`] and
//! [`contacts`] (the penalty box across runs), [`budget`] (byte budgets and
//! the free-disk floor), [`progress`], [`metrics`] (the metrics file for a
//! monitoring system), [`stats`] and [`clock`]; [`pause`] is
//! a testing hook. The delay formula is [`common::politeness`].

mod budget;
pub mod cli;
mod clock;
mod contacts;
mod crew;
pub mod dns;
pub mod error;
mod feed;
pub mod fetch;
mod flight;
mod frontier;
mod host_updates;
mod http;
pub mod inspect;
mod metrics;
mod outcome;
mod outlinks;
mod pause;
mod progress;
mod proxy;
mod queue_key;
mod recorder;
mod resume;
mod robots;
mod robots_cache;
mod round_end;
pub mod settings;
mod stats;
pub mod status;
mod supervise;
mod tls;
mod transport;
mod upload;
mod url_parts;
mod worker;

use common::exit::Exit;

use crate::cli::{Cli, Command};
use crate::error::Error;

/// Runs the command `cli` asks for.
pub fn execute(cli: Cli) -> Result<Exit, Error> {
    match cli.command {
        Command::Fetch(args) => {
            let settings = settings::Settings::from_args(*args)?;
            Ok(match fetch::run(settings)? {
                fetch::Ended::Complete | fetch::Ended::Nothing => Exit::Success,
                fetch::Ended::Signal => Exit::Interrupted,
            })
        }
        Command::Flags => {
            common::exit::print(&cli::fetch_flags()).map_err(Error::io("stdout"))?;
            Ok(Exit::Success)
        }
        Command::Inspect(args) => {
            inspect::run(&args)?;
            Ok(Exit::Success)
        }
        Command::Status(args) => {
            status::run(&args)?;
            Ok(Exit::Success)
        }
    }
}
