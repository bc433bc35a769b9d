//! Advisory locks on lock files, so that two processes never work on the
//! same files at once (`CRAWL/.segmenter.lock`, `fetched/ID/.lock`).
//!
//! The lock is an exclusive `flock(2)` held through an open file
//! descriptor: the kernel releases it when the file is closed or the
//! process ends, however it ends (even `kill -9`), so a crash never leaves
//! a stale lock behind. The lock file itself stays; it is empty.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;

/// An exclusive lock on a lock file, released when dropped.
#[derive(Debug)]
pub struct FileLock {
    _file: File,
}

/// Creates `path` if needed and takes its exclusive lock without waiting.
/// `Ok(None)` means another process holds it.
pub fn try_lock(path: &Path) -> io::Result<Option<FileLock>> {
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)?;
    // std's `File::try_lock` would do, but needs Rust 1.89; the workspace
    // promises 1.88.
    // SAFETY: flock only reads the descriptor number, which `file` keeps open.
    let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc == 0 {
        return Ok(Some(FileLock { _file: file }));
    }
    let err = io::Error::last_os_error();
    if err.raw_os_error() == Some(libc::EWOULDBLOCK) {
        Ok(None)
    } else {
        Err(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lock_refuses_a_second_taker_until_dropped() {
        let dir = crate::testutil::TempDir::new("lock");
        let path = dir.path().join(".lock");
        let first = try_lock(&path).unwrap().expect("free at first");
        assert!(try_lock(&path).unwrap().is_none(), "held by `first`");
        drop(first);
        assert!(try_lock(&path).unwrap().is_some(), "free again after drop");
    }

    #[test]
    fn a_missing_directory_is_an_error_not_a_refusal() {
        let dir = crate::testutil::TempDir::new("lock-missing");
        let err = try_lock(&dir.path().join("no/such/dir/.lock")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }
}
