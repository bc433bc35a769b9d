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
    /// `shards.toml` is damaged or of a newer version.
    #[error(transparent)]
    Shards(#[from] common::shards::ShardError),
    /// `consumed.txt` is damaged.
    #[error(transparent)]
    List(#[from] common::listfile::ListError),
    /// A state file (backlog, `seen.bloom`) is damaged: the round is refused.
    #[error("{source}; nothing was changed. {repair}")]
    Damaged {
        /// What is wrong, naming the file.
        source: Box<dyn std::error::Error + Send + Sync>,
        /// How to repair it.
        repair: &'static str,
    },
    /// The round would take the free disk space below `min_free_disk`
    /// (exit code 3): it is not started, nothing was changed. The text
    /// adds what else may help (a smaller new seen-set).
    #[error("not enough free disk space to start the round: {0}{1}")]
    Disk(common::disk::Shortage, &'static str),
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

/// How to repair a damaged backlog.
pub const BACKLOG_REPAIR: &str = "Repair: copy the .prev file beside it (the backlog of the \
    round before; URLs it holds that were since fetched are fetched again) over it; or keep \
    the lines that can be read (`zstdcat FILE | zstd -o FILE.new`, then move FILE.new over \
    FILE); or move it away to go on without it (its URLs are lost, but for those a page links \
    to again: the Bloom filter calls them seen, and they are rescued)";

/// How to repair a damaged `seen.bloom`.
pub const BLOOM_REPAIR: &str = "Repair: `segmenter repair CRAWL --accept-loss` rebuilds it from \
    the fetch history, the backlog and the segments not yet consumed (URLs in none of them, \
    such as fetches that failed without a response, may be scheduled once more)";

impl Error {
    /// A closure for `map_err` that marks a state file as damaged.
    pub fn damaged<E: std::error::Error + Send + Sync + 'static>(
        repair: &'static str,
    ) -> impl FnOnce(E) -> Error {
        move |e| Error::Damaged {
            source: Box::new(e),
            repair,
        }
    }
}

impl Fault for Error {
    fn exit(&self) -> Exit {
        match self {
            Error::Usage(_) | Error::Config(_) | Error::Scope(_) => Exit::Usage,
            Error::Disk(..) => Exit::Disk,
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
