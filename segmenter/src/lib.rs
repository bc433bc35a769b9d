//! The segmenter: builds the next segments of a crawl from fetched WARC
//! files. The `segmenter` binary is [`execute`] behind [`common::exit::main`].
//!
//! [`cli`] parses, [`settings`] validates, and one module per command
//! ([`inject`], [`import`], [`round`] for `run`, [`inspect`], [`status`], [`repair`]) does the work through
//! [`round`], which chains [`scan`] → [`sort`] → [`seen`] → [`caps`] →
//! [`output`] → [`commit`]. [`extract`] finds the links of a page.

mod backlog;
mod candidates;
mod caps;
pub mod cli;
mod commit;
pub mod error;
pub mod extract;
mod fasthash;
mod history;
mod import;
mod inject;
mod inspect;

mod output;
mod partition;
mod progress;
mod repair;
mod report;
mod round;
mod run;
mod scan;
pub mod seen;
mod session;
mod settings;
pub mod sitemap;
mod sort;
mod status;

use common::exit::Exit;

use crate::cli::{Cli, Command};
use crate::error::Error;

/// Runs the command `cli` asks for.
pub fn execute(cli: Cli) -> Result<Exit, Error> {
    match cli.command {
        Command::Inject {
            crawl,
            seeds,
            flags,
        } => inject::inject(&crawl, &seeds, &flags)?,
        Command::Import {
            crawl,
            files,
            flags,
        } => import::import(&crawl, &files, &flags)?,
        Command::Run { crawl, flags } => run::run(&crawl, &flags)?,
        Command::Inspect { file, json } => inspect::inspect(&file, json)?,
        Command::Status {
            crawl,
            json,
            no_backlog,
        } => status::status(&crawl, json, !no_backlog)?,
        Command::Flags => common::exit::print(&cli::round_flags()).map_err(Error::io("stdout"))?,
        Command::Repair { crawl, accept_loss } => return repair::repair(&crawl, accept_loss),
    }
    Ok(Exit::Success)
}
