//! Finding the project binaries next to the test executable, and running
//! them with a report that explains a failure: the one harness of every
//! test that runs a program. [`fetcher_cmd`] and [`segmenter_cmd`] make
//! the commands, with an environment the machine's cannot disturb;
//! [`fetch_cmd`] is `fetcher fetch` with the settings of a test crawl on
//! loopback. [`run`] / [`run_expecting`] / [`run_within`] run a command to
//! its end within a time bound; [`spawn`] starts one to signal while it
//! runs; [`assert_code`] and [`report`] explain a failure with the
//! command, its status, stdout, stderr and the files of a directory.
//!
//! Test executables live in `target/PROFILE/deps/` (examples in
//! `target/PROFILE/examples/`); the project's binaries in `target/PROFILE/`.
//! `cargo test --workspace` builds every binary before it runs any test.
//!
//! ```no_run
//! use std::process::Command;
//! use testkit::bins::{bin_path, run};
//!
//! let crawl = std::env::temp_dir().join("crawl");
//! let out = run(Command::new(bin_path("segmenter")).arg("inspect").arg(&crawl), &crawl);
//! assert!(out.stdout.contains("URLs"));
//! ```

use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

/// How long [`run`] and [`run_expecting`] let a command run before killing it.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(300);

/// How long output is awaited once a command has ended.
const OUTPUT_GRACE: Duration = Duration::from_secs(5);

/// Most entries shown in a directory listing.
const LISTING_LIMIT: usize = 400;

/// The directory holding the project binaries of the profile the current
/// test executable was built with (`target/debug`, `target/release`, ...).
pub fn bin_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("cannot find the path of the test executable");
    let mut dir = exe
        .parent()
        .expect("the test executable has no parent directory")
        .to_path_buf();
    if dir
        .file_name()
        .is_some_and(|n| n == "deps" || n == "examples")
    {
        dir.pop();
    }
    dir
}

/// The path of the project binary `name` (`fetcher`, `segmenter`,
/// `demo-web`) built with the current profile.
///
/// Panics, naming the command that builds it, when it does not exist.
pub fn bin_path(name: &str) -> PathBuf {
    let dir = bin_dir();
    let path = dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    if !path.is_file() {
        let profile = dir.file_name().and_then(|p| p.to_str()).unwrap_or("debug");
        let flag = match profile {
            "debug" => String::new(),
            "release" => " --release".to_string(),
            other => format!(" --profile {other}"),
        };
        panic!(
            "the binary `{name}` is not built: {} does not exist.\n\
             Build it with `cargo build{flag} --bin {name}`, or run the tests with \
             `cargo test{flag} --workspace`, which builds every binary first.",
            path.display()
        );
    }
    path
}

/// `fetcher`, built with the current profile, without the machine's proxy
/// variables in its environment (a proxy would take the tests' loopback
/// requests) nor the variable of its testing hook (`FETCHER_PAUSE_AT`); a
/// test of proxies, or of the hook, sets its own on the command.
pub fn fetcher_cmd() -> Command {
    let mut cmd = Command::new(bin_path("fetcher"));
    crate::proxy::clear_proxy_env(&mut cmd);
    cmd.env_remove("FETCHER_PAUSE_AT");
    cmd
}

/// `segmenter`, built with the current profile, without the variable of
/// its testing hook (`SEGMENTER_PAUSE_AT`, which pauses it at a named
/// point), so that one set in the tests' own environment cannot stall
/// them; a test of the hook sets it on the command.
pub fn segmenter_cmd() -> Command {
    let mut cmd = Command::new(bin_path("segmenter"));
    cmd.env_remove("SEGMENTER_PAUSE_AT");
    cmd
}

/// `fetcher fetch CRAWL` as the tests run it against their servers on
/// loopback: agent `testbot`, names from the hosts file `hosts`, loopback
/// addresses allowed, no delay, no progress output (see [`fetcher_cmd`]
/// for its environment). More flags, or the segment, go after.
pub fn fetch_cmd(crawl: &Path, hosts: &Path) -> Command {
    let mut cmd = guarded_fetch_cmd(crawl, hosts);
    cmd.arg("--allow-private");
    cmd
}

/// [`fetch_cmd`] with the private-address guard on: loopback targets are
/// refused.
pub fn guarded_fetch_cmd(crawl: &Path, hosts: &Path) -> Command {
    let mut cmd = fetcher_cmd();
    cmd.arg("fetch")
        .arg(crawl)
        .args(["--agent-name", "testbot"])
        .args(["--agent-url", "http://bot.test/about"])
        .arg("--hosts-file")
        .arg(hosts)
        .args(["--min-delay", "0", "--delay-factor", "0"])
        .args(["--progress", "none"])
        // The machine's free space is not what these tests are about.
        .args(["--min-free-disk", "0"]);
    cmd
}

/// What a finished command produced.
#[derive(Debug, Clone)]
pub struct Finished {
    /// The command line, quoted for a shell.
    pub command: String,
    /// Its exit status; `None` when it was killed after the timeout.
    pub status: Option<ExitStatus>,
    /// Standard output (lossy UTF-8).
    pub stdout: String,
    /// Standard error (lossy UTF-8).
    pub stderr: String,
    /// How long it ran.
    pub elapsed: Duration,
}

impl Finished {
    /// The exit code, if it exited normally (not killed by a signal).
    pub fn code(&self) -> Option<i32> {
        self.status.and_then(|s| s.code())
    }
}

/// Runs `cmd` to completion (at most [`DEFAULT_TIMEOUT`]) and panics with a
/// [`report`] (command, status, stdout, stderr, a listing of `dir`) unless it
/// exits with code 0.
pub fn run(cmd: &mut Command, dir: &Path) -> Finished {
    run_expecting(cmd, dir, 0)
}

/// Like [`run`], expecting exit code `code`.
pub fn run_expecting(cmd: &mut Command, dir: &Path, code: i32) -> Finished {
    run_within(cmd, dir, code, DEFAULT_TIMEOUT)
}

/// Like [`run_expecting`], killing the command after `timeout` (which then
/// fails the test like a wrong exit code).
pub fn run_within(cmd: &mut Command, dir: &Path, code: i32, timeout: Duration) -> Finished {
    let out = run_with_timeout(cmd, timeout).unwrap_or_else(|e| {
        panic!("cannot start `{}`: {e}", command_line(cmd));
    });
    assert_code(&out, code, Some(dir));
    out
}

/// Panics with a [`report`] (listing `dir` if given) unless `out` exited
/// with code `code`.
#[track_caller]
pub fn assert_code(out: &Finished, code: i32, dir: Option<&Path>) {
    if out.code() != Some(code) {
        panic!("expected exit code {code}\n{}", report(out, dir));
    }
}

/// Runs `cmd` with stdout and stderr captured, killing it after `timeout`
/// (then `status` is `None`). Expects nothing of its outcome.
///
/// The command runs in its own process group, and the whole group is
/// killed at the timeout, so that a script's children go too. Output still
/// held open by a process that escaped the group is waited for at most a
/// few seconds after the command ends.
pub fn run_with_timeout(cmd: &mut Command, timeout: Duration) -> std::io::Result<Finished> {
    Ok(spawn(cmd)?.finish(timeout))
}

/// Starts `cmd` in the background, in its own process group, with stdout
/// and stderr captured: for a test that acts on the process while it runs
/// (sends it a signal, starts a second one) before [`Running::finish`].
pub fn spawn(cmd: &mut Command) -> std::io::Result<Running> {
    use std::os::unix::process::CommandExt;
    let command = command_line(cmd);
    let started = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()?;
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    Ok(Running {
        child,
        command,
        started,
        stdout,
        stderr,
    })
}

/// A command started by [`spawn`]. Dropped without [`Running::finish`], it
/// is killed with its process group.
#[derive(Debug)]
pub struct Running {
    child: Child,
    command: String,
    started: Instant,
    stdout: Receiver<String>,
    stderr: Receiver<String>,
}

impl Running {
    /// The process.
    pub fn child(&self) -> &Child {
        &self.child
    }

    /// Sends `sig` to the process (see [`signal`]).
    pub fn signal(&self, sig: Signal) -> std::io::Result<()> {
        signal(&self.child, sig)
    }

    /// Waits for the end (at most `timeout`; then the process group is
    /// killed and `status` is `None`) and returns what it printed.
    pub fn finish(mut self, timeout: Duration) -> Finished {
        let status = wait_timeout(&mut self.child, timeout);
        if status.is_none() {
            self.kill();
        }
        let collect = |rx: &Receiver<String>| {
            rx.recv_timeout(OUTPUT_GRACE).unwrap_or_else(|_| {
                "(output still held open by another process; not shown)\n".into()
            })
        };
        Finished {
            command: self.command.clone(),
            status,
            stdout: collect(&self.stdout),
            stderr: collect(&self.stderr),
            elapsed: self.started.elapsed(),
        }
    }

    /// `SIGKILL` to the process group this process leads, then reaps it.
    fn kill(&mut self) {
        if let Ok(pid) = libc::pid_t::try_from(self.child.id()) {
            // SAFETY: kill(2) has no memory-safety preconditions; `-pid` names
            // the process group this child leads (it is not yet reaped).
            unsafe { libc::kill(-pid, libc::SIGKILL) };
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.kill();
        }
    }
}

/// Reads a pipe to its end on a thread (so that neither pipe can fill up
/// and block the child) and sends the text when the pipe closes.
fn drain(pipe: Option<impl Read + Send + 'static>) -> Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut p) = pipe {
            let _ = p.read_to_end(&mut bytes);
        }
        let _ = tx.send(String::from_utf8_lossy(&bytes).into_owned());
    });
    rx
}

/// Waits for `child` at most `timeout`, polling every few milliseconds.
pub fn wait_timeout(child: &mut Child, timeout: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + timeout;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5));
            }
            _ => return None,
        }
    }
}

/// A signal to send to a child process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    /// `SIGINT` (Ctrl-C).
    Int,
    /// `SIGTERM`.
    Term,
    /// `SIGKILL` (`kill -9`).
    Kill,
}

/// Sends `signal` to `child` (no effect if it has already exited and been
/// waited for).
pub fn signal(child: &Child, signal: Signal) -> std::io::Result<()> {
    let sig = match signal {
        Signal::Int => libc::SIGINT,
        Signal::Term => libc::SIGTERM,
        Signal::Kill => libc::SIGKILL,
    };
    let pid = libc::pid_t::try_from(child.id()).map_err(std::io::Error::other)?;
    // SAFETY: kill(2) has no memory-safety preconditions; the pid is our own
    // child's, which stays reserved until we wait for it.
    if unsafe { libc::kill(pid, sig) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// A readable account of a command's run: the command line, its status,
/// its stdout and stderr, and (if given) a listing of a directory.
pub fn report(out: &Finished, dir: Option<&Path>) -> String {
    let status = match out.status {
        None => format!("killed after {:.1} s (timeout)", out.elapsed.as_secs_f64()),
        Some(s) => match s.code() {
            Some(c) => format!("exit code {c} after {:.1} s", out.elapsed.as_secs_f64()),
            None => format!("{s} after {:.1} s", out.elapsed.as_secs_f64()),
        },
    };
    let mut r = String::new();
    let _ = writeln!(r, "command: {}", out.command);
    let _ = writeln!(r, "status:  {status}");
    for (name, text) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let _ = writeln!(r, "---- {name} ({} bytes) ----", text.len());
        r.push_str(text);
        if !text.is_empty() && !text.ends_with('\n') {
            r.push('\n');
        }
    }
    if let Some(dir) = dir {
        let _ = writeln!(r, "---- files under {} ----", dir.display());
        r.push_str(&listing(dir));
    }
    r
}

/// Every file and directory under `dir` (sorted, with sizes), at most a few
/// hundred lines.
pub fn listing(dir: &Path) -> String {
    let mut lines = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    let mut truncated = false;
    while let Some(d) = stack.pop() {
        let entries = match std::fs::read_dir(&d) {
            Ok(e) => e,
            Err(e) => {
                lines.push(format!("{}: {e}", d.display()));
                continue;
            }
        };
        for entry in entries.flatten() {
            if lines.len() >= LISTING_LIMIT {
                truncated = true;
                break;
            }
            let path = entry.path();
            let rel = path
                .strip_prefix(dir)
                .unwrap_or(&path)
                .display()
                .to_string();
            match entry.metadata() {
                Ok(m) if m.is_dir() => {
                    lines.push(format!("{rel}/"));
                    stack.push(path);
                }
                Ok(m) => lines.push(format!("{rel}  ({} bytes)", m.len())),
                Err(e) => lines.push(format!("{rel}  ({e})")),
            }
        }
    }
    lines.sort();
    let mut out = lines.join("\n");
    if !out.is_empty() {
        out.push('\n');
    }
    if truncated {
        let _ = writeln!(out, "... (listing stopped at {LISTING_LIMIT} entries)");
    }
    out
}

/// `cmd` as a shell would need it typed.
pub fn command_line(cmd: &Command) -> String {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| shell_quote(&a.to_string_lossy()))
        .collect::<Vec<_>>()
        .join(" ")
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,@+%".contains(&b))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bin_dir_is_the_profile_directory() {
        let dir = bin_dir();
        // Unit tests run from target/PROFILE/deps; the binaries sit one up.
        assert_ne!(dir.file_name().unwrap(), "deps");
        assert!(dir.join("deps").is_dir(), "{}", dir.display());
    }

    #[test]
    fn a_missing_binary_names_the_build_command() {
        let err = std::panic::catch_unwind(|| bin_path("no-such-binary")).unwrap_err();
        let msg = err.downcast_ref::<String>().unwrap();
        assert!(msg.contains("--bin no-such-binary"), "{msg}");
        assert!(msg.contains("cargo test"), "{msg}");
    }

    #[test]
    fn a_failing_command_is_reported_with_its_output_and_the_directory() {
        let tmp = crate::TempDir::new("testkit-bins");
        let dir = tmp.path();
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("sub/file.txt"), "hello").unwrap();
        let err = std::panic::catch_unwind(|| {
            run(
                Command::new("sh").args(["-c", "echo out; echo err >&2; exit 3"]),
                dir,
            )
        })
        .unwrap_err();
        let msg = err.downcast_ref::<String>().unwrap();
        for want in [
            "expected exit code 0",
            "command: sh -c 'echo out; echo err >&2; exit 3'",
            "exit code 3",
            "---- stdout (4 bytes) ----\nout\n",
            "---- stderr (4 bytes) ----\nerr\n",
            "sub/\n",
            "sub/file.txt  (5 bytes)",
        ] {
            assert!(msg.contains(want), "missing {want:?} in:\n{msg}");
        }
        let ok = run_expecting(Command::new("sh").args(["-c", "exit 2"]), dir, 2);
        assert_eq!(ok.code(), Some(2));
    }

    #[test]
    fn a_hanging_command_is_killed_at_the_timeout() {
        let out = run_with_timeout(
            Command::new("sh").args(["-c", "echo started; sleep 30"]),
            Duration::from_millis(300),
        )
        .unwrap();
        assert!(out.status.is_none());
        assert_eq!(out.stdout, "started\n");
        assert!(report(&out, None).contains("(timeout)"));
    }

    #[test]
    fn a_spawned_command_is_signalled_and_its_output_kept() {
        let running = spawn(Command::new("sh").args(["-c", "echo up; exec sleep 30"])).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        // Signal once the shell has become `sleep` (its output is written).
        while std::fs::read_link(format!("/proc/{}/exe", running.child().id()))
            .is_ok_and(|exe| !exe.ends_with("sleep"))
            && Instant::now() < deadline
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        running.signal(Signal::Term).unwrap();
        let out = running.finish(Duration::from_secs(10));
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(out.status.and_then(|s| s.signal()), Some(libc::SIGTERM));
        assert_eq!(out.stdout, "up\n");
        let err = std::panic::catch_unwind(|| assert_code(&out, 0, None)).unwrap_err();
        let msg = err.downcast_ref::<String>().unwrap();
        assert!(msg.contains("expected exit code 0"), "{msg}");
    }

    #[test]
    fn signals_reach_the_child() {
        let mut child = Command::new("sleep").arg("30").spawn().unwrap();
        signal(&child, Signal::Term).unwrap();
        let status = wait_timeout(&mut child, Duration::from_secs(10)).expect("still running");
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGTERM));
    }
}
