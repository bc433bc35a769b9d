//! How both programs end: one exit code per kind of ending, errors printed
//! as one line with their causes, and a closed stdout (`| head`) taken as
//! a reader that has seen enough, not as a failure.
//!
//! A program's `main` is [`main`] with its own parser and command runner:
//!
//! ```no_run
//! # #[derive(clap::Parser)] struct Cli;
//! # #[derive(Debug, thiserror::Error)] #[error("bad")] struct Error;
//! # impl common::exit::Fault for Error { fn exit(&self) -> common::exit::Exit { common::exit::Exit::Failure } }
//! fn main() -> std::process::ExitCode {
//!     common::exit::main::<Cli, Error>("prog", |_cli| Ok(common::exit::Exit::Success))
//! }
//! ```

use std::io::{self, Write};

/// The exit codes of both programs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: the command did what it was asked (a fetch may have stopped early
    /// by design: see its `DONE` file).
    Success = 0,
    /// 1: the command failed (a file could not be read or written, ...).
    Failure = 1,
    /// 2: a usage or configuration error: nothing was done.
    Usage = 2,
    /// 3: not enough free disk space for the step to start without falling
    /// below the floor (`[crawl] min_free_disk`): nothing was changed; the
    /// message says what to free and how much. `scripts/crawl.sh` exits with
    /// it too, also when a fetch ended at the floor (stop reason `disk`).
    Disk = 3,
    /// 4: the WARC store (`warc_store`) could not be reached or refused an
    /// upload, after retries: the run's files are kept in `fetched/ID/`,
    /// `DONE` is not written; the next fetch of the segment uploads them.
    /// `scripts/crawl.sh` stops the crawl with it (the round stays open).
    Store = 4,
    /// 130: stopped by SIGINT or SIGTERM after a clean shutdown.
    Interrupted = 130,
    /// 131: a second signal: exited at once, leaving files a later run
    /// resumes from.
    Killed = 131,
}

impl Exit {
    /// The number the process exits with.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// Ends the process now with this code (from a thread other than
    /// `main`'s, for [`Exit::Killed`]).
    pub fn now(self) -> ! {
        std::process::exit(i32::from(self.code()))
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(exit: Exit) -> Self {
        std::process::ExitCode::from(exit.code())
    }
}

/// An error that ends a command, with the exit code it gives.
pub trait Fault: std::error::Error {
    /// [`Exit::Usage`] for usage and configuration errors, [`Exit::Failure`]
    /// otherwise.
    fn exit(&self) -> Exit;
}

/// Parses the command line into `P`, runs it and turns the outcome into the
/// exit code: a clap error gives [`Exit::Usage`] (`--help` and `--version`
/// [`Exit::Success`]), an error is printed as `PROGRAM: what: because` and
/// gives its own code.
pub fn main<P: clap::Parser, E: Fault>(
    program: &'static str,
    run: impl FnOnce(P) -> Result<Exit, E>,
) -> std::process::ExitCode {
    crate::runlog::set_program(program);
    let parsed = match P::try_parse() {
        Ok(parsed) => parsed,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                Exit::Usage
            } else {
                Exit::Success
            }
            .into();
        }
    };
    match run(parsed) {
        Ok(exit) => exit.into(),
        Err(e) => {
            crate::runlog::say(chain(&e));
            e.exit().into()
        }
    }
}

/// The message and its causes on one line, each said once:
/// `what happened: because: because`.
pub fn chain(err: &dyn std::error::Error) -> String {
    let mut msg = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !msg.contains(&text) {
            msg.push_str(": ");
            msg.push_str(&text);
        }
        source = cause.source();
    }
    msg
}

/// Writes `text` to stdout and flushes it. A reader that closed the pipe
/// (`| head`) is not an error: the rest is dropped.
pub fn print(text: &str) -> io::Result<()> {
    let mut out = io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("x/y")]
    struct Outer(#[source] io::Error);

    #[test]
    fn chain_says_each_cause_once() {
        let err = Outer(io::Error::new(io::ErrorKind::NotFound, "gone"));
        assert_eq!(chain(&err), "x/y: gone");
        let repeated = Outer(io::Error::other("x/y"));
        assert_eq!(chain(&repeated), "x/y");
    }

    #[test]
    fn codes_are_the_documented_ones() {
        let codes = [
            Exit::Success,
            Exit::Failure,
            Exit::Usage,
            Exit::Disk,
            Exit::Store,
            Exit::Interrupted,
            Exit::Killed,
        ]
        .map(Exit::code);
        assert_eq!(codes, [0, 1, 2, 3, 4, 130, 131]);
    }
}
