//! Crash-safe file replacement: write to a temporary name in the same
//! directory, fsync the file, rename it over the destination, fsync the
//! directory. A reader sees either the old file or the complete new one.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A file being written under a temporary name; [`AtomicFile::commit`] puts it
/// in place. Dropped without a commit, the temporary file is removed.
#[derive(Debug)]
pub struct AtomicFile {
    dest: PathBuf,
    tmp: PathBuf,
    out: Option<BufWriter<File>>,
}

impl AtomicFile {
    /// Starts writing `dest`; nothing is visible at `dest` until `commit`.
    pub fn create(dest: impl AsRef<Path>) -> io::Result<AtomicFile> {
        let dest = dest.as_ref().to_path_buf();
        let tmp = temp_path(&dest);
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&tmp)?;
        Ok(AtomicFile {
            dest,
            tmp,
            out: Some(BufWriter::with_capacity(256 * 1024, file)),
        })
    }

    /// The final path.
    pub fn path(&self) -> &Path {
        &self.dest
    }

    /// Flushes, fsyncs, renames into place and fsyncs the directory. If any
    /// step before the rename fails (a full disk, say), the destination is
    /// untouched and the temporary file is removed.
    pub fn commit(mut self) -> io::Result<()> {
        let out = self.out.take().expect("AtomicFile committed twice");
        let placed = out
            .into_inner()
            .map_err(|e| e.into_error())
            .and_then(|file| file.sync_all())
            .and_then(|()| fs::rename(&self.tmp, &self.dest));
        if let Err(e) = placed {
            let _ = fs::remove_file(&self.tmp);
            return Err(e);
        }
        sync_parent(&self.dest)
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out.as_mut().expect("write after commit").write(buf)
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.out
            .as_mut()
            .expect("write after commit")
            .write_all(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.out.as_mut().expect("flush after commit").flush()
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.out.take().is_some() {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

/// Writes `bytes` to `dest` atomically.
pub fn write_atomic(dest: impl AsRef<Path>, bytes: &[u8]) -> io::Result<()> {
    let mut f = AtomicFile::create(dest)?;
    f.write_all(bytes)?;
    f.commit()
}

/// Fsyncs a directory so that a rename or a new file in it survives a power cut.
pub fn sync_dir(dir: impl AsRef<Path>) -> io::Result<()> {
    File::open(dir.as_ref())?.sync_all()
}

/// Fsyncs the directory that holds `path`.
pub fn sync_parent(path: &Path) -> io::Result<()> {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => sync_dir(p),
        _ => sync_dir("."),
    }
}

/// A temporary name for `dest`: hidden, in the same directory, different on
/// every call (process id and a counter), so that two writers of one file,
/// in one process or two, never write into each other's temporary file.
/// Leftovers of a crashed writer match [`is_temp_name`] and may be deleted.
pub fn temp_path(dest: &Path) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    dest.with_file_name(format!(".{name}.tmp{}-{n}", std::process::id()))
}

/// True for names made by [`temp_path`] (leftovers of an interrupted write).
pub fn is_temp_name(name: &str) -> bool {
    name.starts_with('.') && name.contains(".tmp")
}

/// Removes the temporary files a killed writer of `dest` left beside it:
/// those whose writing process no longer runs on this machine and that are
/// older than `min_age` (the age keeps a writer on another machine that
/// shares the directory safe). For files rewritten often by one process at
/// a time, such as a metrics file, where a `kill -9` would otherwise leave
/// one hidden file per kill. Best effort: errors are ignored.
pub fn remove_stale_temps(dest: &Path, min_age: std::time::Duration) {
    let (Some(dir), Some(name)) = (dest.parent(), dest.file_name()) else {
        return;
    };
    let prefix = format!(".{}.tmp", name.to_string_lossy());
    let proc_fs = Path::new("/proc/self").exists();
    let Ok(entries) = fs::read_dir(if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    }) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(rest) = file_name.to_str().and_then(|n| n.strip_prefix(&prefix)) else {
            continue;
        };
        let pid = rest.split('-').next().unwrap_or("");
        let running = pid.parse::<u32>().map_or(true, |pid| {
            !proc_fs || pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists()
        });
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age >= min_age);
        if !running && old {
            let _ = fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::TempDir;

    #[test]
    fn commit_replaces_and_drop_discards() {
        let dir = TempDir::new("atomic");
        let dest = dir.join("f.txt");
        write_atomic(&dest, b"one").unwrap();
        assert_eq!(fs::read(&dest).unwrap(), b"one");

        let mut f = AtomicFile::create(&dest).unwrap();
        f.write_all(b"two").unwrap();
        drop(f);
        assert_eq!(
            fs::read(&dest).unwrap(),
            b"one",
            "uncommitted write must not show"
        );
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            1,
            "temporary file must be removed"
        );

        let mut f = AtomicFile::create(&dest).unwrap();
        f.write_all(b"three").unwrap();
        f.commit().unwrap();
        assert_eq!(fs::read(&dest).unwrap(), b"three");
    }

    #[test]
    fn two_writers_of_one_file_do_not_mix() {
        let dir = TempDir::new("atomic-two");
        let dest = dir.join("stats.json");
        let mut a = AtomicFile::create(&dest).unwrap();
        let mut b = AtomicFile::create(&dest).unwrap();
        a.write_all(&[b'a'; 300_000]).unwrap();
        b.write_all(&[b'b'; 1000]).unwrap();
        b.commit().unwrap();
        assert_eq!(fs::read(&dest).unwrap(), vec![b'b'; 1000]);
        a.commit().unwrap();
        assert_eq!(fs::read(&dest).unwrap(), vec![b'a'; 300_000]);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
        let t = temp_path(&dest);
        assert_ne!(t, temp_path(&dest));
        assert!(is_temp_name(t.file_name().unwrap().to_str().unwrap()));
    }

    #[test]
    fn stale_temps_of_dead_writers_are_removed_and_live_ones_kept() {
        let dir = TempDir::new("atomic-stale");
        let dest = dir.join("m.prom");
        // No process has pid 4294967; this one is running.
        let dead = dir.join(".m.prom.tmp4294967-0");
        let live = dir.join(&format!(".m.prom.tmp{}-9", std::process::id()));
        let other = dir.join(".n.prom.tmp4294967-0");
        for p in [&dead, &live, &other] {
            fs::write(p, b"x").unwrap();
        }
        remove_stale_temps(&dest, std::time::Duration::from_secs(3600));
        assert!(
            dead.exists(),
            "a young leftover may be another machine's write"
        );
        remove_stale_temps(&dest, std::time::Duration::ZERO);
        if Path::new("/proc/self").exists() {
            assert!(!dead.exists(), "a dead writer's leftover is removed");
        }
        assert!(live.exists(), "a running writer's file is kept");
        assert!(other.exists(), "another file's leftovers are not touched");
    }
}
