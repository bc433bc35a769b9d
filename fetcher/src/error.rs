//! The errors that end a fetcher command, and the exit code each one gives
//! ([`common::exit`]).
//!
//! Problems with one URL or one host (a refused connection, a robots.txt of
//! garbage, a malformed segment line) are not errors here: they are logged,
//! counted and the run goes on.

use std::io;
use std::path::{Path, PathBuf};

use common::exit::{Exit, Fault};

use crate::feed::FeedError;
use crate::recorder::RecorderError;
use crate::resume::ResumeError;
use crate::settings::SettingsError;

/// Why a command failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A flag or a `crawl.toml` setting is wrong (exit code 2).
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// What the command names cannot be used: no such segment, a hosts
    /// file that does not parse (exit code 2).
    #[error("{0}")]
    Usage(String),
    /// The scope (rules, `scope.seeds`) cannot be loaded (exit code 2).
    #[error(transparent)]
    Scope(#[from] common::filter::ScopeError),
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        source: io::Error,
    },
    /// A thread or the signal handler could not be started.
    #[error("cannot start the run: {0}")]
    Start(io::Error),
    /// `hosts.db` cannot be opened, read or written.
    #[error(transparent)]
    HostDb(#[from] common::hoststate::HostDbError),
    /// `seen.bloom` cannot be opened.
    #[error(transparent)]
    Bloom(#[from] common::bloom::BloomError),
    /// A segment file cannot be read or summarized.
    #[error(transparent)]
    Segment(#[from] common::segment::SegmentError),
    /// The segment or the work file cannot be read.
    #[error(transparent)]
    Feed(#[from] FeedError),
    /// The WARC, crawl log or leftover files cannot be started.
    #[error(transparent)]
    Recorder(#[from] RecorderError),
    /// The files of an interrupted run cannot be read or repaired.
    #[error(transparent)]
    Resume(#[from] ResumeError),
    /// Another fetcher holds the lock of the segment's output directory.
    #[error(
        "{0}: segment {1} is being fetched by another fetcher process; let it finish (or stop \
         it) before running this one"
    )]
    Locked(PathBuf, String),
    /// The free disk space is below `min_free_disk` already: the run is not
    /// started, nothing was changed (exit code 3).
    #[error("not enough free disk space to start fetching: {0}")]
    Disk(common::disk::Shortage),
    /// The WARC store could not be reached, after retries: the run's files
    /// are kept locally, `DONE` is not written (exit code 4).
    #[error("{0}")]
    Store(String),
    /// `fetcher status` was asked about a segment never fetched.
    #[error("{0}: segment {1} has not been fetched (no such directory)")]
    NotFetched(PathBuf, String),
    /// The run could not go on (a file could not be written); what is on
    /// disk is kept for the next run to resume from.
    #[error("{cause}; {resume_hint}")]
    Stopped {
        /// What went wrong.
        cause: String,
        /// How to resume.
        resume_hint: String,
    },
}

impl Error {
    /// A closure for `map_err` that names `path`.
    pub fn io(path: impl AsRef<Path>) -> impl FnOnce(io::Error) -> Error {
        let path = path.as_ref().to_path_buf();
        move |source| Error::Io { path, source }
    }

    /// The run stopped on `cause`; `resume_hint` says how to go on.
    pub fn stopped(cause: impl std::fmt::Display, resume_hint: &str) -> Error {
        Error::Stopped {
            cause: cause.to_string(),
            resume_hint: resume_hint.to_string(),
        }
    }
}

impl Fault for Error {
    fn exit(&self) -> Exit {
        match self {
            Error::Settings(_) | Error::Usage(_) | Error::Scope(_) => Exit::Usage,
            Error::Disk(_) => Exit::Disk,
            Error::Store(_) => Exit::Store,
            _ => Exit::Failure,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_errors_exit_2_others_1() {
        let err = Error::io("x/y")(io::Error::new(io::ErrorKind::NotFound, "gone"));
        assert_eq!(common::exit::chain(&err), "x/y: gone");
        assert_eq!(err.exit(), Exit::Failure);
        assert_eq!(Error::Usage("no such segment".into()).exit(), Exit::Usage);
        let stopped = Error::stopped("disk full", "run the same command again");
        assert_eq!(stopped.to_string(), "disk full; run the same command again");
    }
}
