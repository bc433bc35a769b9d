//! The segmenter: builds the next segments of a crawl from fetched WARC
//! files. The `segmenter` binary is [`execute`] behind [`common::exit::main`].
//!
//! [`cli`] parses, [`settings`] validates, and [`execute`] hands each
//! command to its module under `commands` (one per command; nothing else
//! names them). The commands stand on two layers: `state`, what a crawl's
//! files say (segments and fetched runs, map outputs, round reports, the
//! status figures, WARC files by round), and `round`, one round: its
//! inputs, the scan (or, on a sharded crawl, the map then the reduce), then
//! sort → seen-set → backlog and caps → segments → commit, and the round's
//! report. The fetch history (`history`) is merged by the round and read by
//! the commands. Links of a page come from [`common::extract`]. [`cycle`]
//! decides what a crawl does next (`segmenter next`, for drivers); `metrics`
//! writes where it stands for a monitoring system.

pub mod cli;
mod commands;
pub mod cycle;
mod derivatives;
pub mod error;
mod fasthash;
pub mod flags;
mod health;
mod history;
mod host_rules;
mod metrics;
mod phase;
mod progress;
mod round;
mod session;
pub mod settings;
pub mod sitemap;
mod state;

pub use round::seen;

use std::num::NonZeroUsize;

use common::exit::Exit;
// `crate::extract` for the modules that read pages (the extractor lives in `common`).
use common::extract;

use crate::cli::{Cli, Command};
use crate::error::Error;

/// Runs the command `cli` asks for.
pub fn execute(cli: Cli) -> Result<Exit, Error> {
    match cli.command {
        Command::Inject {
            crawl,
            seeds,
            shards,
            key,
            flags,
        } => {
            let shards = shards
                .map(|s| {
                    let key = key.unwrap_or(common::shards::ShardKey::Host);
                    common::shards::Shards::new(s, key).map_err(Error::Usage)
                })
                .transpose()?;
            commands::inject::inject(&crawl, &seeds, &flags, shards)?
        }
        Command::Import {
            crawl,
            files,
            flags,
        } => commands::import::import(&crawl, &files, &flags)?,
        Command::Run { crawl, flags } => commands::run::run(&crawl, &flags)?,
        Command::Map {
            crawl,
            shard,
            flags,
        } => commands::run::map(&crawl, shard, &flags)?,
        Command::Reduce {
            crawl,
            shard,
            flags,
        } => commands::run::reduce(&crawl, shard, &flags)?,
        Command::Research {
            crawl,
            rounds,
            index,
            wet,
            wat,
            force,
            threads,
            max_page_size,
        } => {
            let settings = derivatives::Settings {
                wanted: derivatives::Wanted { index, wet, wat },
                threads: threads.map_or_else(default_threads, NonZeroUsize::get),
                max_page_size: max_page_size.map_or(16 << 20, |s| s.0),
                force,
            };
            commands::research::research(&crawl, &rounds_of(rounds.as_deref())?, &settings)?
        }
        Command::Parquet {
            crawl,
            rounds,
            out,
            force,
            threads,
        } => commands::parquet::parquet(&commands::parquet::Request {
            crawl: &crawl,
            rounds: &rounds_of(rounds.as_deref())?,
            out: out.as_deref(),
            force,
            threads: threads.map_or_else(default_threads, NonZeroUsize::get),
        })?,
        Command::Inspect {
            file,
            json,
            entries,
        } => commands::inspect::inspect(&file, json, entries)?,
        Command::Status {
            crawl,
            shard,
            json,
            no_backlog,
            host,
        } => match host {
            Some(host) => host_rules::explain(&crawl, &host, json)?,
            None => commands::status::status(&crawl, shard, json, !no_backlog)?,
        },
        Command::Next {
            crawl,
            record,
            since,
            exit_code,
            shard,
            json,
        } => {
            let driver = commands::next::Driver {
                record,
                since_ms: since.unwrap_or(i64::MAX),
                exit_code,
            };
            commands::next::next(&crawl, driver, shard, json)?
        }
        Command::Metrics {
            crawl,
            phase,
            since,
            print,
        } => commands::metrics::command(&crawl, phase, since, print)?,
        Command::Prune {
            crawl,
            keep_logs,
            dry_run,
        } => commands::prune::run(&crawl, keep_logs.map(Into::into), dry_run)?,
        Command::Report { crawl, out } => commands::report::report(&crawl, out.as_deref())?,
        Command::Flags => common::exit::print(&cli::round_flags()).map_err(Error::io("stdout"))?,
        Command::Repair { crawl, accept_loss } => {
            return commands::repair::repair(&crawl, accept_loss);
        }
        Command::Index { crawl, rounds, out } => {
            commands::index::index(&crawl, &rounds_of(rounds.as_deref())?, out.as_deref())?
        }
        Command::Wacz {
            crawl,
            out,
            rounds,
            title,
        } => commands::wacz::wacz(
            &crawl,
            &out,
            &rounds_of(rounds.as_deref())?,
            title.as_deref(),
        )?,
    }
    Ok(Exit::Success)
}

/// The machine's CPUs, the default number of worker threads.
fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, NonZeroUsize::get)
}

/// The `--rounds` of `index`, `wacz` and `research`.
fn rounds_of(text: Option<&str>) -> Result<state::warcs::Rounds, Error> {
    match text {
        Some(t) => state::warcs::Rounds::parse(t).map_err(Error::Usage),
        None => Ok(state::warcs::Rounds::default()),
    }
}
