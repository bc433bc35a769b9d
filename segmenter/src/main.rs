//! `segmenter`: builds the next segments of a crawl from fetched WARC files.
//!
//! The binary is glue: [`cli`] parses, [`settings`] validates, and one
//! module per command ([`inject`], [`run`], [`inspect`]) does the work
//! through [`round`], which chains [`scan`] → [`sort`] → [`seen`] →
//! [`caps`] → [`output`] → [`commit`].

mod backlog;
mod candidates;
mod caps;
mod cli;
mod commit;
mod error;
mod extract;
mod fasthash;
mod inject;
mod inspect;
mod links;
mod log;
mod output;
mod partition;
mod progress;
mod report;
mod round;
mod run;
mod scan;
mod seen;
mod session;
mod settings;
mod sort;
mod status;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};
use crate::error::{Error, chain};

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match dispatch(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("segmenter: {}", chain(&e));
            ExitCode::from(e.exit_code())
        }
    }
}

fn dispatch(cli: Cli) -> Result<(), Error> {
    match cli.command {
        Command::Inject {
            crawl,
            seeds,
            flags,
        } => inject::inject(&crawl, &seeds, &flags),
        Command::Run { crawl, flags } => run::run(&crawl, &flags),
        Command::Inspect { file, json } => inspect::inspect(&file, json),
        Command::Status { crawl, json } => status::status(&crawl, json),
        Command::Flags => {
            print!("{}", cli::round_flags());
            Ok(())
        }
    }
}
