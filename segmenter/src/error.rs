//! The errors that end a segmenter command, and the exit code each one
//! gives ([`common::exit`]).
//!
//! Problems with one input (a bad seed line, a truncated WARC file) are not
//! errors here: they are reported, counted and skipped by the scan.

use std::io;
use std::path::{Path, PathBuf};

use common::exit::{Exit, Fault};

/// Why a command failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A setting is out of range or inconsistent (exit code 2).
    #[error("{0}")]
    Usage(String),
    /// `crawl.toml` is unreadable or invalid (exit code 2).
    #[error(transparent)]
    Config(#[from] common::config::ConfigError),
    /// The scope (rules file, `scope.seeds`) cannot be loaded (exit code 2).
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
    /// `seen.bloom` cannot be created, opened or written.
    #[error(transparent)]
    Bloom(#[from] common::bloom::BloomError),
    /// A segment file cannot be read or written.
    #[error(transparent)]
    Segment(#[from] common::segment::SegmentError),
    /// `hosts.db` cannot be read.
    #[error(transparent)]
    HostDb(#[from] common::hoststate::HostDbError),
    /// Another segmenter holds the crawl directory's lock.
    #[error(
        "{0}: another segmenter is working on this crawl directory (lock held); try again when it has finished"
    )]
    Locked(PathBuf),
}

impl Error {
    /// A closure for `map_err` that names `path`.
    pub fn io(path: impl AsRef<Path>) -> impl FnOnce(io::Error) -> Error {
        let path = path.as_ref().to_path_buf();
        move |source| Error::Io { path, source }
    }
}

impl Fault for Error {
    fn exit(&self) -> Exit {
        match self {
            Error::Usage(_) | Error::Config(_) | Error::Scope(_) => Exit::Usage,
            _ => Exit::Failure,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_errors_exit_2_others_1() {
        let err = Error::Io {
            path: "x/y".into(),
            source: io::Error::new(io::ErrorKind::NotFound, "gone"),
        };
        assert_eq!(common::exit::chain(&err), "x/y: gone");
        assert_eq!(err.exit(), Exit::Failure);
        assert_eq!(Error::Usage("bad".into()).exit(), Exit::Usage);
    }
}
