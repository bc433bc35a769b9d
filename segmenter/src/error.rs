//! The errors that end a command, and the exit code each one gives.
//!
//! Problems with one input (a bad seed line, a truncated WARC file) are not
//! errors here: they are reported, counted and skipped by the scan.

use std::io;
use std::path::{Path, PathBuf};

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

    /// 2 for usage and configuration errors, 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Usage(_) | Error::Config(_) | Error::Scope(_) => 2,
            _ => 1,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chain_says_each_cause_once() {
        let err = Error::Io {
            path: "x/y".into(),
            source: io::Error::new(io::ErrorKind::NotFound, "gone"),
        };
        assert_eq!(chain(&err), "x/y: gone");
        assert_eq!(err.exit_code(), 1);
        assert_eq!(Error::Usage("bad".into()).exit_code(), 2);
    }
}
