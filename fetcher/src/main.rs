//! `fetcher`: fetches one segment of a crawl politely into WARC files.
//!
//! The binary is glue: [`cli`] parses, [`settings`] validates, [`fetch`]
//! runs a fetch (watched by [`supervise`], telling [`diag`]) and [`inspect`]
//! summarizes a segment file. The work is done
//! by [`frontier`] (queues and the penalty box), [`feed`] (reading the
//! segment with bounded memory), [`round_end`] (when a round's tail ends
//! it), [`robots`] (RFC 9309), [`http`], [`worker`], [`store`] (the writer
//! thread), [`resume`], [`hoststore`] and [`contacts`] (the penalty box
//! across runs), [`progress`] and [`stats`]. The delay formula is
//! [`common::politeness`].

mod cli;
mod contacts;
mod diag;
mod feed;
mod fetch;
mod frontier;
mod hoststore;
mod http;
mod inspect;
mod progress;
mod resume;
mod robots;
mod round_end;
mod settings;
mod stats;
mod status;
mod store;
mod supervise;
mod worker;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    match cli.command {
        cli::Command::Fetch(args) => {
            let settings = match settings::Settings::from_args(*args) {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("fetcher: {e}");
                    return ExitCode::from(2);
                }
            };
            match fetch::run(settings) {
                Ok(fetch::Ended::Complete | fetch::Ended::Nothing) => ExitCode::SUCCESS,
                Ok(fetch::Ended::Signal) => ExitCode::from(130),
                Err(fetch::FetchError::Config(m)) => {
                    eprintln!("fetcher: {m}");
                    ExitCode::from(2)
                }
                Err(fetch::FetchError::Run(m)) => {
                    eprintln!("fetcher: {m}");
                    ExitCode::from(1)
                }
            }
        }
        cli::Command::Flags => {
            print!("{}", cli::fetch_flags());
            ExitCode::SUCCESS
        }
        cli::Command::Status(args) => status::main(&args),
        cli::Command::Inspect(args) => match inspect::run(&args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(m) => {
                eprintln!("fetcher: {m}");
                ExitCode::from(1)
            }
        },
    }
}
