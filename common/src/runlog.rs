//! The one path of every message the programs write for people: the log of
//! a run ([`RunLog`]) and, before a run has a log or for commands that keep
//! none, [`say`].
//!
//! A run's log goes to `CRAWL/logs/PROGRAM-TIMESTAMP.log` (the file cron
//! users read), or with `--log FILE` to the end of FILE; every line but
//! [`RunLog::note`]'s also goes to stderr as `PROGRAM: <file or URL>: <what
//! happened>`. Lines in the file are `TIMESTAMP LEVEL TEXT` (`info`,
//! `warning`, `error`); in a file given with `--log`, which may hold the
//! lines of several programs, the text starts with `PROGRAM: `. When stderr
//! is that very file (a driver such as `crawl.sh` sends a step's output to
//! the log it names), each line is written once, in the file's form.
//!
//! - The file is created with its first line: a run that had nothing to do
//!   and said so with [`RunLog::tell`] leaves no file behind.
//! - Warnings about bad input are cut off on stderr after
//!   [`STDERR_WARNINGS`] lines (the log keeps them all), so that a broken
//!   input cannot flood a cron mail.
//! - Progress ([`crate::progress`]) is a live line redrawn on a terminal
//!   ([`RunLog::draw`]) and plain lines every interval
//!   ([`RunLog::progress`]), which the file keeps in either case. A live
//!   line on the screen is cleared before any other line is written to
//!   stderr, by a run's log or by [`say`].

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::SystemTime;

/// Warnings shown on stderr before the rest go only to the log file.
pub const STDERR_WARNINGS: u64 = 50;

/// The name in front of every line on stderr (set once by
/// [`crate::exit::main`]).
static PROGRAM: OnceLock<&'static str> = OnceLock::new();
/// True while a live progress line is on the screen (without its newline).
static LIVE_DRAWN: AtomicBool = AtomicBool::new(false);

/// Names the program for every line on stderr ([`say`], [`RunLog`]); the
/// first call wins.
pub fn set_program(name: &'static str) {
    let _ = PROGRAM.set(name);
}

/// The program's name (`crawler` before [`set_program`]).
pub fn program() -> &'static str {
    PROGRAM.get().copied().unwrap_or("crawler")
}

/// A line on stderr, `PROGRAM: msg`, for what is said outside a run's log
/// (before it is opened, or by commands that keep none).
pub fn say(msg: impl std::fmt::Display) {
    to_stderr(&format!("{}: {msg}\n", program()));
}

/// Writes `text` on stderr, after clearing a live line that is drawn.
fn to_stderr(text: &str) {
    let mut err = std::io::stderr().lock();
    if LIVE_DRAWN.swap(false, Ordering::SeqCst) {
        let _ = err.write_all(CLEAR_LINE.as_bytes());
    }
    let _ = err.write_all(text.as_bytes());
    let _ = err.flush();
}

/// Back to the start of the line, and erase it (a terminal's codes).
const CLEAR_LINE: &str = "\r\x1b[2K";

/// Where the file lines go: a file to create on the first line, or one to
/// append to.
#[derive(Debug)]
enum Target {
    /// `logs/PROGRAM-TIMESTAMP.log` (or `-N` beside it), not created yet.
    New(PathBuf),
    /// A file given with `--log`, appended to.
    Append(PathBuf),
    /// The open file.
    Open(BufWriter<File>),
    /// None: it could not be created (said once on stderr).
    Failed,
}

/// The run's log. Shared by the threads of a run (`&RunLog` or an `Arc`).
pub struct RunLog {
    /// The program's name, in front of every line on stderr.
    program: &'static str,
    target: Mutex<Target>,
    path: Mutex<Option<PathBuf>>,
    /// Appending to a file given with `--log`: the text of a line names
    /// the program.
    appending: bool,
    /// stderr is the log file itself: each line is written once.
    stderr_is_file: bool,
    warnings: AtomicU64,
}

impl std::fmt::Debug for RunLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunLog")
            .field("program", &self.program)
            .field("path", &self.path())
            .finish_non_exhaustive()
    }
}

impl RunLog {
    /// The log of a run of `program` in a new file at `path` (`NAME-1.log`,
    /// `NAME-2.log`, ... if a run started in the same millisecond has it:
    /// never another run's log), created with the first line written. If it
    /// cannot be created, says so once and logs to stderr only.
    pub fn open(program: &'static str, path: &Path) -> RunLog {
        RunLog::with_target(program, Target::New(path.to_path_buf()), false)
    }

    /// The log of a run of `program` appended to `path` (`--log FILE`),
    /// created if missing.
    pub fn append(program: &'static str, path: &Path) -> RunLog {
        let stderr_is_file = is_stderr(path);
        let mut log = RunLog::with_target(program, Target::Append(path.to_path_buf()), true);
        log.stderr_is_file = stderr_is_file;
        log
    }

    /// [`RunLog::append`] to `given` if a file is given, else
    /// [`RunLog::open`] of `own`.
    pub fn open_or_append(program: &'static str, given: Option<&Path>, own: &Path) -> RunLog {
        match given {
            Some(path) => RunLog::append(program, path),
            None => RunLog::open(program, own),
        }
    }

    fn with_target(program: &'static str, target: Target, appending: bool) -> RunLog {
        set_program(program);
        RunLog {
            program,
            target: Mutex::new(target),
            path: Mutex::new(None),
            appending,
            stderr_is_file: false,
            warnings: AtomicU64::new(0),
        }
    }

    /// The log file's path, once it exists (`None` before the first line,
    /// or if it could not be created).
    pub fn path(&self) -> Option<PathBuf> {
        self.path.lock().ok().and_then(|p| p.clone())
    }

    /// True when the log is appended to a file given with `--log` (its name
    /// does not name the run).
    pub fn is_appended(&self) -> bool {
        self.appending
    }

    /// A problem with one input that was skipped.
    pub fn warn(&self, msg: impl std::fmt::Display) {
        let text = msg.to_string();
        if !self.stderr_is_file {
            let n = self.warnings.fetch_add(1, Ordering::Relaxed);
            if n < STDERR_WARNINGS {
                self.stderr_line(&text);
            } else if n == STDERR_WARNINGS {
                match self.path() {
                    Some(p) => {
                        self.stderr_line(&format!("more warnings follow only in {}", p.display()))
                    }
                    None => self.stderr_line("more warnings are not shown"),
                }
            }
        }
        self.to_file("warning", &text);
    }

    /// Progress or an informative line (stderr and file).
    pub fn info(&self, msg: impl std::fmt::Display) {
        let text = msg.to_string();
        if !self.stderr_is_file {
            self.stderr_line(&text);
        }
        self.to_file("info", &text);
    }

    /// A detail for the file only (stderr would drown in it).
    pub fn note(&self, msg: impl std::fmt::Display) {
        self.to_file("info", &msg.to_string());
    }

    /// A line for stderr only, which creates no log file: what a run that
    /// has nothing to do says (in a file given with `--log` that is
    /// stderr too, it is written there).
    pub fn tell(&self, msg: impl std::fmt::Display) {
        if self.stderr_is_file {
            self.to_file("info", &msg.to_string());
        } else {
            self.stderr_line(&msg.to_string());
        }
    }

    /// The error that ends the run, to the file only (`main` prints it on
    /// stderr, which may be the file itself).
    pub fn error_to_file(&self, text: &str) {
        if !self.stderr_is_file {
            self.to_file("error", text);
        }
    }

    /// A block of text (the report), to stderr and the file as is.
    pub fn block(&self, text: &str) {
        if !self.stderr_is_file {
            to_stderr(text);
        }
        self.write_file(text);
    }

    /// The live progress line, drawn over the previous one on stderr (a
    /// terminal); never in the file.
    pub fn draw(&self, line: &str) {
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "{CLEAR_LINE}{line}");
        let _ = err.flush();
        LIVE_DRAWN.store(true, Ordering::SeqCst);
    }

    /// Erases the live progress line, if one is drawn.
    pub fn clear_live(&self) {
        if LIVE_DRAWN.swap(false, Ordering::SeqCst) {
            let mut err = std::io::stderr().lock();
            let _ = err.write_all(CLEAR_LINE.as_bytes());
            let _ = err.flush();
        }
    }

    /// A periodic progress line: to the file, and to stderr unless `live`
    /// (stderr shows the live line instead).
    pub fn progress(&self, line: &str, live: bool) {
        if live || self.stderr_is_file {
            self.to_file("info", line);
        } else {
            self.info(line);
        }
    }

    fn stderr_line(&self, text: &str) {
        to_stderr(&format!("{}: {text}\n", self.program));
    }

    fn to_file(&self, level: &str, text: &str) {
        let stamp = crate::timefmt::iso_millis(SystemTime::now());
        let line = if self.appending {
            format!("{stamp} {level} {}: {text}\n", self.program)
        } else {
            format!("{stamp} {level} {text}\n")
        };
        self.write_file(&line);
    }

    fn write_file(&self, text: &str) {
        let Ok(mut target) = self.target.lock() else {
            return;
        };
        if let Target::New(_) | Target::Append(_) = &*target {
            let opened = match &*target {
                Target::New(path) => create_new(path),
                Target::Append(path) => File::options()
                    .create(true)
                    .append(true)
                    .open(path)
                    .map(|f| (f, path.clone())),
                _ => unreachable!("matched above"),
            };
            *target = match opened {
                Ok((file, path)) => {
                    if let Ok(mut p) = self.path.lock() {
                        *p = Some(path);
                    }
                    Target::Open(BufWriter::new(file))
                }
                Err(e) => {
                    let path = match &*target {
                        Target::New(p) | Target::Append(p) => p.display().to_string(),
                        _ => String::new(),
                    };
                    self.stderr_line(&format!("{path}: cannot create the log file: {e}"));
                    Target::Failed
                }
            };
        }
        if let Target::Open(f) = &mut *target {
            // Flushed line by line: `tail -f` follows it, `kill -9` loses
            // no line.
            let _ = f.write_all(text.as_bytes()).and_then(|()| f.flush());
        }
    }
}

/// True if stderr is the file at `path` (the same inode).
fn is_stderr(path: &Path) -> bool {
    use std::os::fd::AsFd;
    use std::os::unix::fs::MetadataExt;
    let Ok(file) = std::fs::metadata(path) else {
        return false;
    };
    let Ok(fd) = std::io::stderr().as_fd().try_clone_to_owned() else {
        return false;
    };
    File::from(fd)
        .metadata()
        .is_ok_and(|err| err.dev() == file.dev() && err.ino() == file.ino())
}

/// Creates `path`, or the first free `STEM-N.EXT` beside it.
fn create_new(path: &Path) -> std::io::Result<(File, PathBuf)> {
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    let ext = path.extension().map(|e| e.to_string_lossy());
    let mut candidate = path.to_path_buf();
    for n in 1..=1000 {
        match File::options()
            .write(true)
            .create_new(true)
            .open(&candidate)
        {
            Ok(f) => return Ok((f, candidate)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let name = match &ext {
                    Some(ext) => format!("{stem}-{n}.{ext}"),
                    None => format!("{stem}-{n}"),
                };
                candidate = path.with_file_name(name);
            }
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::AlreadyExists,
        "1000 log files of the same millisecond",
    ))
}

impl Drop for RunLog {
    fn drop(&mut self) {
        if let Ok(mut target) = self.target.lock()
            && let Target::Open(f) = &mut *target
        {
            let _ = f.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> crate::testutil::TempDir {
        crate::testutil::TempDir::new(&format!("runlog-{name}"))
    }

    #[test]
    fn runs_of_the_same_millisecond_get_their_own_log() {
        let dir = scratch("same-ms");
        let path = dir.join("segmenter-20260101000000000.log");
        let first = RunLog::open("segmenter", &path);
        first.info("first run");
        let second = RunLog::open("segmenter", &path);
        second.info("second run");
        assert_eq!(
            second.path().unwrap(),
            dir.join("segmenter-20260101000000000-1.log")
        );
        drop((first, second));
        let one = std::fs::read_to_string(&path).unwrap();
        let two = std::fs::read_to_string(dir.join("segmenter-20260101000000000-1.log")).unwrap();
        assert!(one.ends_with(" info first run\n"), "{one}");
        assert!(two.ends_with(" info second run\n"), "{two}");
    }

    #[test]
    fn a_run_that_only_tells_leaves_no_file() {
        let dir = scratch("tell");
        let path = dir.join("segmenter-1.log");
        let log = RunLog::open("segmenter", &path);
        log.tell("nothing to do");
        assert_eq!(log.path(), None);
        drop(log);
        assert!(!path.exists());
    }

    #[test]
    fn a_given_file_is_appended_to_with_the_program_named() {
        let dir = scratch("append");
        let path = dir.join("round-00001.log");
        std::fs::write(&path, "=== step\n").unwrap();
        let log = RunLog::append("fetcher", &path);
        log.info("fetching");
        log.warn("a bad line");
        log.progress("progress: 3 pages", true);
        drop(log);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "=== step");
        assert!(lines[1].ends_with(" info fetcher: fetching"), "{text}");
        assert!(lines[2].ends_with(" warning fetcher: a bad line"), "{text}");
        assert!(
            lines[3].ends_with(" info fetcher: progress: 3 pages"),
            "{text}"
        );
    }
}
