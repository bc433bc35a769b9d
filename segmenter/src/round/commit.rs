//! Crash safety: a round's outputs change the crawl directory together or
//! not at all.
//!
//! A round builds everything in `CRAWL/.segmenter-staging/`: the new
//! segments, what changed of `seen.bloom` (`seen.bloom.append`, the journal
//! block of the hashes added; or a whole new `seen.bloom`, see
//! [`crate::round::seen`]), the new `backlog.v5.tsv.zst`, `consumed.txt`, the
//! history's new generations and list `history.v5.list` (for `run`) and
//! (for `inject`) `scope.seeds`.
//! [`Staging::commit`] fsyncs them all, then writes the marker `COMMIT`
//! (atomically) listing them, then puts each in place (a rename; the
//! journal block is appended to `seen.bloom` by
//! [`common::bloom::apply_journal`], which gives the same file when done
//! again, and then deleted; the history's new generations before the list
//! that names them), then deletes the history's generations no list names
//! any more ([`history::generations::collect_garbage`]), then removes the
//! staging directory. The marker
//! is version 2 (`segmenter-commit v2`), which an earlier build refuses
//! rather than rename a journal block into the crawl; version 1 is read.
//!
//! The generation each replaces of `backlog`, `seen.bloom`, `consumed.txt`,
//! `history` and `scope.seeds` is kept as `NAME.prev` (renamed, not copied; the
//! history's list hard-linked, so that one is in place at every moment), so that
//! a damaged state file can be repaired with the round before. A round
//! that converted an older version's history file keeps that file as the
//! list's `.prev` (a hard link, then its old name removed); an older
//! version's file the round did not read is left alone. For
//! `seen.bloom`, replaced only when it is written whole (folded, grown),
//! `.prev` is the filter before that; a damaged filter is rebuilt from the
//! exact sets instead ([`crate::commands::repair`]).
//!
//! On start, [`recover`] looks at a staging directory left by a killed run:
//! with a marker, the round was decided, so the renames are finished (roll
//! forward; a file already moved is skipped); without one, nothing was
//! changed yet, so the directory is deleted and the round is done again.
//! Before rolling forward, every staged file is checked (and every one must
//! be listed in the marker): if one is damaged and none was moved yet, the
//! round is discarded and done again, with a warning; if some were moved,
//! the run is refused and nothing is changed.
//! Since a round's output depends only on its inputs, which are unchanged
//! until the renames, `kill -9` at any moment followed by the same command
//! gives the same files as an uninterrupted run.
//!
//! A lock file (`CRAWL/.segmenter.lock`, an advisory `flock`) keeps two
//! segmenters from working on one crawl at the same time.
//!
//! Testing hook: with `SEGMENTER_PAUSE_AT=NAME` in the environment, the
//! program prints `segmenter: paused at NAME` to stderr and sleeps (at most
//! a minute) when it reaches that point, so that a test can `kill -9` it
//! exactly there. Points: `scanned`, `history`, `rescued`, `growing` (a
//! filter rebuild that has read the history), `grown` (rebuilt, not yet
//! sealed), `staged`, `marked`, `moving`, `generations` (the history's new
//! generations moved in, not yet its list), `prev` (the list in place kept
//! as its `.prev`, the new one not yet renamed over it), `moved`; and
//! `mapped` (a map's output complete, not yet renamed into place).

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::atomic::{sync_dir, write_atomic};
use common::crawldir::CrawlDir;

use crate::error::Error;
use crate::health::{Health, Kind, check};
use crate::history;

/// The staging directory's name inside the crawl directory.
pub const STAGING_DIR: &str = common::crawldir::SEGMENTER_STAGING_DIR;
/// The commit marker's name inside the staging directory.
pub const MARKER: &str = "COMMIT";
/// The lock file's name inside the crawl directory.
pub const LOCK_FILE: &str = ".segmenter.lock";
const MARKER_HEADER: &str = "segmenter-commit v2";
/// Markers of earlier builds, read.
const MARKER_HEADERS_READ: [&str; 2] = [MARKER_HEADER, "segmenter-commit v1"];
/// State files whose replaced generation is kept as `NAME.prev`.
const KEEP_PREVIOUS: [&str; 5] = [
    "backlog",
    "seen.bloom",
    "consumed.txt",
    "scope.seeds",
    "history",
];

/// Holds the crawl directory's lock until dropped.
pub type Lock = common::lock::FileLock;

/// Takes the crawl directory's lock, or fails at once if another
/// segmenter holds it.
pub fn lock(crawl: &CrawlDir) -> Result<Lock, Error> {
    let path = crawl.root().join(LOCK_FILE);
    match common::lock::try_lock(&path) {
        Ok(Some(lock)) => Ok(lock),
        Ok(None) => Err(Error::Locked(crawl.root().to_path_buf())),
        Err(e) => Err(Error::Io { path, source: e }),
    }
}

/// What [`recover`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Recovery {
    /// No staging directory: the last run finished or never started.
    Clean,
    /// A committed round was completed; the files it moved.
    RolledForward(Vec<String>),
    /// An uncommitted round was discarded.
    Discarded,
    /// A committed round none of whose files had been moved was damaged
    /// (this file, this problem): it was discarded, to be done again.
    DiscardedDamaged(PathBuf, String),
}

/// Finishes or discards what a killed run left behind (call with the lock held).
pub fn recover(crawl: &CrawlDir) -> Result<Recovery, Error> {
    let dir = crawl.root().join(STAGING_DIR);
    if !dir.exists() {
        return Ok(Recovery::Clean);
    }
    if dir.join(MARKER).is_file() {
        // The staged files are checked before any is moved: a damaged one
        // must not replace a sound state file.
        if let Some(listed) = marker_list(&dir)
            && let Some((file, problem)) = staged_damage(&dir, &listed)
        {
            let staged = fs::read_dir(&dir)
                .map_err(Error::io(&dir))?
                .flatten()
                .filter(|e| e.path().is_file() && e.file_name() != MARKER)
                .count()
                + fs::read_dir(dir.join("segments")).map_or(0, |rd| rd.flatten().count());
            if staged < listed.len() {
                return Err(Error::Io {
                    path: file,
                    source: io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!(
                            "damaged ({problem}) in a round partly moved into place; nothing \
                             was changed. Repair: move {} away, then run `segmenter repair {}` \
                             to check the state files (their .prev is the generation before)",
                            dir.display(),
                            crawl.root().display()
                        ),
                    ),
                });
            }
            // Nothing moved yet: the inputs are as they were, so the round
            // can be done again.
            fs::remove_dir_all(&dir).map_err(Error::io(&dir))?;
            sync_dir(crawl.root()).map_err(Error::io(crawl.root()))?;
            return Ok(Recovery::DiscardedDamaged(file, problem));
        }
        let moved = apply(crawl.root(), &dir)?;
        Ok(Recovery::RolledForward(moved))
    } else {
        fs::remove_dir_all(&dir).map_err(Error::io(&dir))?;
        sync_dir(crawl.root()).map_err(Error::io(crawl.root()))?;
        Ok(Recovery::Discarded)
    }
}

/// The first damaged file of a round staged in `staging` whose commit
/// marker lists `listed`, with what is wrong: each listed file is checked
/// as the state file it becomes, and every staged file must be listed (an
/// unlisted one means a damaged marker).
fn staged_damage(staging: &Path, listed: &[String]) -> Option<(PathBuf, String)> {
    let mut present: Vec<String> = Vec::new();
    for (sub, prefix) in [
        (staging.to_path_buf(), ""),
        (staging.join("segments"), "segments/"),
    ] {
        for e in std::fs::read_dir(&sub).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if e.path().is_file() && name != MARKER {
                present.push(format!("{prefix}{name}"));
            }
        }
    }
    if let Some(unlisted) = present.iter().find(|p| !listed.contains(p)) {
        return Some((
            staging.join(MARKER),
            format!("the staged file {unlisted} is not listed in it"),
        ));
    }
    for rel in listed {
        let kind = match rel.as_str() {
            "consumed.txt" => Kind::Consumed,
            "scope.seeds" => Kind::ScopeSeeds,
            "seen.bloom" => Kind::Bloom,
            "seen.bloom.append" => Kind::BloomAppend,
            history::FILE_NAME => Kind::History,
            r if history::generations::generation_number(r).is_some() => Kind::History,
            r if r.starts_with("backlog") => Kind::Backlog,
            r if r.starts_with("segments/") => Kind::Segment,
            _ => continue,
        };
        let path = staging.join(rel);
        if let Health::Damaged(problem) = check(kind, &path) {
            return Some((path, problem));
        }
    }
    None
}

/// Pauses at a named point when the testing hook asks for it.
pub fn pause_point(name: &str) {
    if std::env::var_os("SEGMENTER_PAUSE_AT").is_some_and(|v| v == name) {
        common::runlog::say(format_args!("paused at {name}"));
        std::thread::sleep(Duration::from_secs(60));
    }
}

/// The staging directory of the round being built. Dropped before its
/// commit marker is written (an error, a panic), it is deleted: nothing in it
/// counts yet.
#[derive(Debug)]
pub struct Staging {
    root: PathBuf,
    dir: PathBuf,
    /// The staging directory has the crawl directory's layout: the same
    /// relative names, so a rename puts each file in place.
    layout: CrawlDir,
    marked: bool,
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.marked {
            let _ = fs::remove_dir_all(&self.dir);
        }
    }
}

impl Staging {
    /// Creates an empty staging directory (after [`recover`]).
    pub fn create(crawl: &CrawlDir) -> Result<Staging, Error> {
        let dir = crawl.root().join(STAGING_DIR);
        fs::create_dir(&dir).map_err(Error::io(&dir))?;
        let layout = CrawlDir::new(&dir);
        let segments = layout.segments_dir();
        fs::create_dir(&segments).map_err(Error::io(&segments))?;
        Ok(Staging {
            root: crawl.root().to_path_buf(),
            dir,
            layout,
            marked: false,
        })
    }

    /// Where new segments are written.
    pub fn segments_dir(&self) -> PathBuf {
        self.layout.segments_dir()
    }
    /// The staged `seen.bloom` (written whole).
    pub fn bloom_path(&self) -> PathBuf {
        self.layout.bloom_path()
    }
    /// The staged journal block for `seen.bloom`.
    pub fn bloom_append_path(&self) -> PathBuf {
        self.layout.bloom_append_path()
    }
    /// The new segments written so far.
    pub fn segment_files(&self) -> Result<Vec<PathBuf>, Error> {
        let dir = self.segments_dir();
        let mut files: Vec<PathBuf> = fs::read_dir(&dir)
            .map_err(Error::io(&dir))?
            .filter_map(|e| e.ok())
            .filter(|e| {
                e.file_name()
                    .to_str()
                    .and_then(common::crawldir::segment_id_of_file_name)
                    .is_some()
            })
            .map(|e| e.path())
            .collect();
        files.sort();
        Ok(files)
    }
    /// The staged backlog.
    pub fn backlog_path(&self) -> PathBuf {
        self.layout.backlog_path()
    }
    /// The staged `consumed.txt`.
    pub fn consumed_path(&self) -> PathBuf {
        self.layout.consumed_path()
    }
    /// The staged `scope.seeds`.
    pub fn scope_seeds_path(&self) -> PathBuf {
        self.layout.scope_seeds_path()
    }
    /// The staged fetch history.
    pub fn history_path(&self) -> PathBuf {
        self.dir.join(crate::history::FILE_NAME)
    }
    /// Scratch space for sort spill files (deleted before the commit).
    pub fn sort_dir(&self) -> PathBuf {
        self.dir.join("sort")
    }

    /// Makes the staged files durable, marks the round committed and moves
    /// the files into the crawl directory. Returns the files moved.
    pub fn commit(mut self) -> Result<Vec<String>, Error> {
        let sort = self.sort_dir();
        if sort.exists() {
            fs::remove_dir_all(&sort).map_err(Error::io(&sort))?;
        }
        let mut files = Vec::new();
        let segments = self.segments_dir();
        let mut names: Vec<String> = fs::read_dir(&segments)
            .map_err(Error::io(&segments))?
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| common::crawldir::segment_id_of_file_name(n).is_some())
            .collect();
        names.sort();
        files.extend(names.into_iter().map(|n| format!("segments/{n}")));
        // The history's new generations go in before the list that names
        // them: the list in place always names files that exist.
        let mut generations: Vec<String> = fs::read_dir(&self.dir)
            .map_err(Error::io(&self.dir))?
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| history::generations::generation_number(n).is_some())
            .collect();
        generations.sort();
        files.extend(generations);
        for path in [
            self.backlog_path(),
            self.history_path(),
            crate::history::summary_path(&self.history_path()),
            self.scope_seeds_path(),
            self.bloom_path(),
            self.bloom_append_path(),
            self.consumed_path(),
        ] {
            if path.exists() {
                let name = path
                    .strip_prefix(&self.dir)
                    .expect("inside the staging directory");
                files.push(name.to_string_lossy().into_owned());
            }
        }
        for rel in &files {
            let path = self.dir.join(rel);
            File::open(&path)
                .and_then(|f| f.sync_all())
                .map_err(Error::io(&path))?;
        }
        sync_dir(&segments).map_err(Error::io(&segments))?;
        sync_dir(&self.dir).map_err(Error::io(&self.dir))?;
        pause_point("staged");

        let mut marker = String::from(MARKER_HEADER);
        marker.push('\n');
        for rel in &files {
            marker.push_str(rel);
            marker.push('\n');
        }
        let marker_path = self.dir.join(MARKER);
        // From the marker on, the round is decided: an error while moving
        // leaves the staging directory for the next run to roll forward.
        self.marked = true;
        write_atomic(&marker_path, marker.as_bytes()).map_err(Error::io(&marker_path))?;
        pause_point("marked");
        apply(&self.root, &self.dir)
    }
}

/// The files the marker in `dir` lists, if it is a marker.
fn marker_list(dir: &Path) -> Option<Vec<String>> {
    let text = fs::read_to_string(dir.join(MARKER)).ok()?;
    let mut lines = text.lines();
    lines
        .next()
        .is_some_and(|h| MARKER_HEADERS_READ.contains(&h))
        .then(|| {
            lines
                .filter(|l| !l.is_empty())
                .map(str::to_string)
                .collect()
        })
}

/// Moves the files listed in the marker into place, then removes the
/// staging directory. Files already moved are skipped, so this can run again
/// after a crash in the middle of it.
fn apply(root: &Path, dir: &Path) -> Result<Vec<String>, Error> {
    let marker_path = dir.join(MARKER);
    let text = fs::read_to_string(&marker_path).map_err(Error::io(&marker_path))?;
    let mut lines = text.lines();
    if !lines
        .next()
        .is_some_and(|h| MARKER_HEADERS_READ.contains(&h))
    {
        return Err(Error::Io {
            path: marker_path,
            source: io::Error::new(
                io::ErrorKind::InvalidData,
                "not a segmenter commit marker; move the staging directory away and run again",
            ),
        });
    }
    let mut moved = Vec::new();
    for rel in lines.filter(|l| !l.is_empty()) {
        if !safe_relative(rel) {
            return Err(Error::Io {
                path: marker_path.clone(),
                source: io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("unexpected path `{rel}` in commit marker"),
                ),
            });
        }
        let src = dir.join(rel);
        if !src.exists() {
            continue;
        }
        if src == CrawlDir::new(dir).bloom_append_path() {
            // A journal block: appended to the filter, then deleted.
            let filter = CrawlDir::new(root).bloom_path();
            common::bloom::apply_journal(&src, &filter)?;
            fs::remove_file(&src).map_err(Error::io(&src))?;
            if moved.is_empty() {
                pause_point("moving");
            }
            moved.push(rel.to_string());
            continue;
        }
        let dst = root.join(rel);
        if rel == history::FILE_NAME {
            pause_point("generations");
            if dst.exists() {
                // The list replaced stays as its .prev, a hard link, and
                // the new one is renamed over it: a list is in place at
                // every moment (between two renames a reader would find
                // no history at all).
                keep_as_prev(&dst, &prev_path(&dst))?;
            } else {
                // No list before: the round read an older version's file,
                // if there is one, and converted it.
                keep_converted(root)?;
            }
            pause_point("prev");
        } else {
            if let Some(parent) = dst.parent() {
                fs::create_dir_all(parent).map_err(Error::io(parent))?;
            }
            if KEEP_PREVIOUS.iter().any(|k| rel.starts_with(k)) && dst.exists() {
                // The generation replaced stays as NAME.prev, for repair (a
                // rename: free even for a large Bloom filter).
                let prev = prev_path(&dst);
                fs::rename(&dst, &prev).map_err(Error::io(&prev))?;
            }
        }
        fs::rename(&src, &dst).map_err(Error::io(&dst))?;
        if moved.is_empty() {
            pause_point("moving");
        }
        moved.push(rel.to_string());
    }
    retire_old_versions(root)?;
    // (Unused generations not deleted cost space, not the round.)
    for problem in history::generations::collect_garbage(root) {
        common::runlog::say(format_args!("warning: {problem}"));
    }
    let segments = root.join("segments");
    if segments.is_dir() {
        sync_dir(&segments).map_err(Error::io(&segments))?;
    }
    sync_dir(root).map_err(Error::io(root))?;
    pause_point("moved");
    fs::remove_file(&marker_path).map_err(Error::io(&marker_path))?;
    fs::remove_dir_all(dir).map_err(Error::io(dir))?;
    sync_dir(root).map_err(Error::io(root))?;
    Ok(moved)
}

/// The files a commit's new ones replace when their format version
/// changed (the new names differ, so the old files would stay).
fn retire_old_versions(root: &Path) -> Result<(), Error> {
    // The backlog just moved in replaces one of an older format version,
    // if the crawl has one (the new name differs: the old file would stay).
    let backlog = format!("backlog{}", common::segment::FILE_SUFFIX);
    if root.join(&backlog).exists() {
        for v in common::segment::READ_VERSIONS {
            let old = root.join(format!("backlog{}", common::segment::file_suffix(v)));
            if v != common::segment::FORMAT_VERSION && old.exists() {
                fs::remove_file(&old).map_err(Error::io(&old))?;
            }
        }
    }
    // The history: an older version's file goes only when a round
    // converted it, that is when it is the file kept as the list's .prev
    // ([`keep_converted`]). A stale one (put back from a backup beside a
    // list, say) is not what any round read: it stays, and the .prev list
    // with it.
    let prev = prev_path(&root.join(crate::history::FILE_NAME));
    let Ok(kept) = fs::metadata(&prev) else {
        return Ok(());
    };
    let converted = crate::history::OLD_FILE_NAMES
        .iter()
        .any(|name| fs::metadata(root.join(name)).is_ok_and(|m| same_file(&m, &kept)));
    if !converted {
        return Ok(());
    }
    // The converted file is kept as the .prev; it and the even older
    // versions' files and their .prev go.
    for name in crate::history::OLD_FILE_NAMES {
        for old in [root.join(name), prev_path(&root.join(name))] {
            if old.exists() {
                fs::remove_file(&old).map_err(Error::io(&old))?;
            }
        }
    }
    Ok(())
}

/// True when the two are the same file (hard links of one).
fn same_file(a: &fs::Metadata, b: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    (a.dev(), a.ino()) == (b.dev(), b.ino())
}

/// Keeps the older version's history file the round read (the newest one
/// there, as [`history::current_path`] takes it), if any, as the list's
/// `.prev`, a hard link to it: the generation the round's first list
/// replaces, for repair. [`retire_old_versions`] then removes its old
/// name, once the list is in place.
fn keep_converted(root: &Path) -> Result<(), Error> {
    let Some(old) = (history::OLD_FILE_NAMES.iter())
        .map(|name| root.join(name))
        .find(|p| p.exists())
    else {
        return Ok(());
    };
    keep_as_prev(&old, &prev_path(&root.join(history::FILE_NAME)))
}

/// Makes `prev` a hard link to `from` (a copy where the file system has no
/// hard links), replacing it at once: `from` stays where it is.
fn keep_as_prev(from: &Path, prev: &Path) -> Result<(), Error> {
    // (One a killed commit left: the lock is held, no one else writes it.)
    common::atomic::remove_stale_temps(prev, Duration::ZERO);
    let tmp = common::atomic::temp_path(prev);
    if fs::hard_link(from, &tmp).is_err() {
        fs::copy(from, &tmp).map_err(Error::io(&tmp))?;
    }
    fs::rename(&tmp, prev).map_err(Error::io(prev))
}

/// `segments/NAME` or a plain file name, nothing that climbs out.
fn safe_relative(rel: &str) -> bool {
    let name = rel.strip_prefix("segments/").unwrap_or(rel);
    !name.is_empty() && !name.contains('/') && name != ".." && name != "."
}

pub use common::crawldir::prev_path;

#[cfg(test)]
mod tests {
    use super::*;

    fn crawl(name: &str) -> (common::testutil::TempDir, CrawlDir) {
        let tmp = common::testutil::TempDir::new(&format!("segmenter-commit-{name}"));
        let crawl = CrawlDir::create(tmp.join("crawl")).unwrap();
        (tmp, crawl)
    }

    /// A staged round of sound files (recovery checks them), and the bytes
    /// of its segment and filter.
    fn stage(c: &CrawlDir) -> Staging {
        let s = Staging::create(c).unwrap();
        let mut w =
            common::segment::SegmentWriter::create(s.segments_dir().join("00002.v5.tsv.zst"))
                .unwrap();
        w.write(&common::segment::SegmentRecord {
            host: "a.test".into(),
            url: "http://a.test/".into(),
            ..Default::default()
        })
        .unwrap();
        w.finish().unwrap();
        fs::write(s.consumed_path(), b"00001\n").unwrap();
        let params = common::bloom::BloomParams::optimal(100, 0.01).unwrap();
        drop(common::bloom::BloomFilter::create(s.bloom_path(), params).unwrap());
        s
    }

    fn staged_bytes(s: &Staging) -> (Vec<u8>, Vec<u8>) {
        (
            fs::read(s.segments_dir().join("00002.v5.tsv.zst")).unwrap(),
            fs::read(s.bloom_path()).unwrap(),
        )
    }

    #[test]
    fn commit_moves_everything_and_cleans_up() {
        let (_tmp, c) = crawl("ok");
        let s = stage(&c);
        let (seg, _) = staged_bytes(&s);
        let moved = s.commit().unwrap();
        assert_eq!(
            moved,
            ["segments/00002.v5.tsv.zst", "seen.bloom", "consumed.txt"]
        );
        assert_eq!(fs::read(c.segment_path("00002")).unwrap(), seg);
        assert_eq!(fs::read(c.consumed_path()).unwrap(), b"00001\n");
        assert!(!c.root().join(STAGING_DIR).exists());
        assert_eq!(recover(&c).unwrap(), Recovery::Clean);
        fs::remove_dir_all(c.root()).unwrap();
    }

    #[test]
    fn uncommitted_staging_is_discarded() {
        let (_tmp, c) = crawl("discard");
        let s = stage(&c);
        // As if killed: the directory stays behind.
        std::mem::forget(s);
        assert_eq!(recover(&c).unwrap(), Recovery::Discarded);
        assert!(!c.segment_path("00002").exists());
        assert!(!c.consumed_path().exists());
        assert!(!c.root().join(STAGING_DIR).exists());
        fs::remove_dir_all(c.root()).unwrap();
    }

    #[test]
    fn a_failed_round_leaves_no_staging() {
        let (_tmp, c) = crawl("dropped");
        drop(stage(&c));
        assert!(!c.root().join(STAGING_DIR).exists());
        fs::remove_dir_all(c.root()).unwrap();
    }

    #[test]
    fn marked_staging_is_rolled_forward_even_half_moved() {
        let (_tmp, c) = crawl("forward");
        let mut s = stage(&c);
        let (seg, bloom) = staged_bytes(&s);
        s.marked = true;
        let dir = c.root().join(STAGING_DIR);
        fs::write(
            dir.join(MARKER),
            format!("{MARKER_HEADER}\nsegments/00002.v5.tsv.zst\nseen.bloom\nconsumed.txt\n"),
        )
        .unwrap();
        // As if killed after the first rename.
        fs::rename(
            s.segments_dir().join("00002.v5.tsv.zst"),
            c.segment_path("00002"),
        )
        .unwrap();
        let r = recover(&c).unwrap();
        assert_eq!(
            r,
            Recovery::RolledForward(vec!["seen.bloom".into(), "consumed.txt".into()])
        );
        assert_eq!(fs::read(c.segment_path("00002")).unwrap(), seg);
        assert_eq!(fs::read(c.bloom_path()).unwrap(), bloom);
        assert!(!dir.exists());
        fs::remove_dir_all(c.root()).unwrap();
    }

    #[test]
    fn a_damaged_staged_file_is_never_moved_into_place() {
        let (_tmp, c) = crawl("damaged-staged");
        let s = stage(&c);
        let dir = c.root().join(STAGING_DIR);
        let listed = "segments/00002.v5.tsv.zst\nseen.bloom\nconsumed.txt\n";
        fs::write(dir.join(MARKER), format!("{MARKER_HEADER}\n{listed}")).unwrap();
        fs::write(s.consumed_path(), b"").unwrap();
        fs::write(c.consumed_path(), b"00001\n").unwrap();
        // Nothing moved yet: discarded, to be done again.
        match recover(&c).unwrap() {
            Recovery::DiscardedDamaged(file, _) => assert_eq!(file, s.consumed_path()),
            other => panic!("{other:?}"),
        }
        assert!(!dir.exists());
        assert_eq!(fs::read(c.consumed_path()).unwrap(), b"00001\n");

        // Half moved: refused, nothing changed.
        let s = stage(&c);
        fs::write(dir.join(MARKER), format!("{MARKER_HEADER}\n{listed}")).unwrap();
        fs::write(s.consumed_path(), b"").unwrap();
        fs::rename(
            s.segments_dir().join("00002.v5.tsv.zst"),
            c.segment_path("00002"),
        )
        .unwrap();
        let e = recover(&c).unwrap_err().to_string();
        assert!(e.contains("consumed.txt") && e.contains("Repair"), "{e}");
        assert!(s.consumed_path().exists());
        assert_eq!(fs::read(c.consumed_path()).unwrap(), b"00001\n");
        fs::remove_dir_all(c.root()).unwrap();
    }

    #[test]
    fn second_lock_fails() {
        let (_tmp, c) = crawl("lock");
        let first = lock(&c).unwrap();
        let err = lock(&c).unwrap_err();
        assert!(matches!(err, Error::Locked(_)), "{err}");
        drop(first);
        lock(&c).unwrap();
        fs::remove_dir_all(c.root()).unwrap();
    }

    #[test]
    fn marker_paths_cannot_escape() {
        assert!(safe_relative("segments/00002.v5.tsv.zst"));
        assert!(safe_relative("seen.bloom"));
        assert!(!safe_relative("../x"));
        assert!(!safe_relative("segments/../../x"));
        assert!(!safe_relative(""));
    }
}
