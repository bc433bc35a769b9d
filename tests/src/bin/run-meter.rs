//! `run-meter LOG PROGRAM [ARGS...]`: runs PROGRAM and appends what it
//! cost to LOG as one line of JSON, for benchmarks that measure each step
//! a driver script runs (`scripts/bench-scale.sh` puts it in front of the
//! fetcher and the segmenter).
//!
//! The line holds `prog` (PROGRAM's file name), `args`, `start` and `end`
//! (seconds since the Unix epoch), `utime` and `stime` (CPU seconds),
//! `maxrss_kb` (peak resident memory), `rchar`, `wchar` and `write_bytes`
//! (`/proc/PID/io`: bytes read and written through system calls, bytes
//! sent to the disk; read after PROGRAM ends, before it is reaped), and
//! `code` (its exit code, or minus the signal that ended it). Children of
//! PROGRAM that it waited for are counted in its figures.
//!
//! The meter starts in a few milliseconds (so that a driver running many
//! short steps is not slowed by its measurement), passes SIGTERM, SIGINT
//! and SIGHUP on to PROGRAM, and exits with PROGRAM's code (128 + the
//! signal if one ended it).

use std::io::Write;
use std::process::{Command, ExitCode};
use std::time::{SystemTime, UNIX_EPOCH};

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// `/proc/PID/io` as (name, value) pairs (empty if it cannot be read).
fn proc_io(pid: u32) -> Vec<(String, u64)> {
    std::fs::read_to_string(format!("/proc/{pid}/io"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            Some((k.trim().to_string(), v.trim().parse().ok()?))
        })
        .collect()
}

/// What a program's run came to.
struct Ended {
    /// Its exit code, or minus the signal that ended it.
    code: i32,
    usage: libc::rusage,
    /// `/proc/PID/io`, read before the program was reaped.
    io: Vec<(String, u64)>,
}

/// Passes SIGTERM, SIGINT and SIGHUP on to `pid`, from a thread.
fn forward_signals(pid: u32) {
    let forward = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGHUP,
    ]);
    if let Ok(mut signals) = forward {
        std::thread::spawn(move || {
            for s in signals.forever() {
                // SAFETY: kill(2) with a pid this process started and has
                // not reaped yet, and a plain signal number.
                unsafe { libc::kill(pid as libc::pid_t, s) };
            }
        });
    }
}

/// Waits for the end of the child `pid` without reaping it, reads its I/O,
/// then reaps it.
fn wait_for(pid: u32) -> Ended {
    let interrupted = || std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted;
    let waited = loop {
        // SAFETY: an all-zero siginfo_t is a valid value (plain integers).
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a valid siginfo buffer for the call.
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if r == 0 || !interrupted() {
            break r == 0;
        }
    };
    let io = if waited { proc_io(pid) } else { Vec::new() };
    let mut status: libc::c_int = 0;
    // SAFETY: an all-zero rusage is a valid value (plain integers).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let reaped = loop {
        // SAFETY: `usage` and `status` are valid out-parameters of wait4(2).
        let r = unsafe { libc::wait4(pid as libc::pid_t, &mut status, 0, &mut usage) };
        if r >= 0 || !interrupted() {
            break r >= 0;
        }
    };
    let code = if !reaped {
        1
    } else if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -libc::WTERMSIG(status)
    };
    Ended { code, usage, io }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 || args[0] == "--help" || args[0] == "-h" {
        eprintln!(
            "usage: run-meter LOG PROGRAM [ARGS...]\n\
             Runs PROGRAM and appends one JSON line to LOG: its arguments, start and end, \
             CPU, peak RSS, I/O (/proc/PID/io) and exit code."
        );
        return ExitCode::from(2);
    }
    let (log, program, rest) = (&args[0], &args[1], &args[2..]);
    let start = now();
    // The child stays in the meter's process group, so that a driver's
    // signal to the group reaches it as it would without the meter.
    let child = match Command::new(program).args(rest).spawn() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("run-meter: {program}: {e}");
            return ExitCode::from(127);
        }
    };
    forward_signals(child.id());
    let ended = wait_for(child.id());
    drop(child);
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let io_of = |name: &str| ended.io.iter().find(|(k, _)| k == name).map(|(_, v)| *v);
    let prog = std::path::Path::new(program)
        .file_name()
        .map_or(program.clone(), |n| n.to_string_lossy().into_owned());
    let line = serde_json::json!({
        "prog": prog,
        "args": rest,
        "start": start,
        "end": now(),
        "utime": secs(ended.usage.ru_utime),
        "stime": secs(ended.usage.ru_stime),
        "maxrss_kb": ended.usage.ru_maxrss,
        "rchar": io_of("rchar"),
        "wchar": io_of("wchar"),
        "write_bytes": io_of("write_bytes"),
        "code": ended.code,
    });
    let appended = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .and_then(|mut f| f.write_all(format!("{line}\n").as_bytes()));
    if let Err(e) = appended {
        eprintln!("run-meter: {log}: {e}");
    }
    let code = ended.code;
    ExitCode::from(if code >= 0 {
        code as u8
    } else {
        (128 - code) as u8
    })
}
