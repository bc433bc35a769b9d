//! Running the real `warcio check` and `warcio index` (the Python web-archive
//! tool) on WARC files, so that tests judge our files with an independent
//! implementation, not only with our own reader.
//!
//! The command is found as: the `WARCIO` environment variable, else
//! `.venv/bin/warcio` at the repository root (where `scripts/test.sh`
//! installs it), else `warcio` on `PATH`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The `.warc.gz` files in `dir` (a fetched run's directory), sorted by
/// name: the files a test gives to [`check`] or reads itself. Panics naming
/// `dir` if it cannot be listed.
pub fn warc_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            e.unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .path()
        })
        .filter(|p| p.to_string_lossy().ends_with(".warc.gz"))
        .collect();
    files.sort();
    files
}

/// The `warcio` command to run. Panics with instructions when there is none.
pub fn command() -> PathBuf {
    python_tool("warcio", "WARCIO")
}

/// A command of the Python web-archive tools that `scripts/test.sh`
/// installs (`warcio`, `cdxj-indexer`, `wacz`, pywb's `wayback`): the
/// environment variable `env` if set, else `.venv/bin/NAME` at the
/// repository root, else `NAME` on `PATH`. Panics with instructions when
/// there is none.
pub fn python_tool(name: &str, env: &str) -> PathBuf {
    if let Some(p) = std::env::var_os(env).filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        if !p.is_file() {
            panic!(
                "{env}={} does not exist; unset it or run scripts/test.sh, which installs {name}",
                p.display()
            );
        }
        return p;
    }
    let venv = repo_root().join(".venv").join("bin").join(name);
    if venv.is_file() {
        return venv;
    }
    if let Some(p) = find_on_path(name) {
        return p;
    }
    panic!(
        "{name} not found (looked at ${env}, {}, and PATH); run the tests with scripts/test.sh, \
         which installs it into .venv/",
        venv.display()
    );
}

/// The repository root: the parent of this package's directory.
fn repo_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// How long one warcio run may take before it is killed.
const TIME_LIMIT: Duration = Duration::from_secs(300);

fn run(args: &[&std::ffi::OsStr]) -> Output {
    run_tool(&command(), args)
}

/// Runs `cmd` with `args` (no input), at most [`TIME_LIMIT`]; its output.
pub fn run_tool(cmd: &Path, args: &[&std::ffi::OsStr]) -> Output {
    let mut child = Command::new(cmd)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", cmd.display()));
    let cmd = cmd.to_path_buf();
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            buf
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("piped stdout")));
    let stderr = drain(Box::new(child.stderr.take().expect("piped stderr")));
    let deadline = Instant::now() + TIME_LIMIT;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{} {args:?} ran longer than {TIME_LIMIT:?}", cmd.display());
            }
            Err(e) => panic!("waiting for {}: {e}", cmd.display()),
        }
    };
    Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    }
}

fn describe(what: &str, out: &Output) -> String {
    format!(
        "{what}: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs `warcio check -v` on `paths`: `Ok` if every record of every file
/// carries a digest and warcio verified it, else `Err` with warcio's whole
/// output. (warcio does not complain about a torn last gzip member; read
/// the file with `common::warc::WarcReader` to catch that.)
pub fn check<P: AsRef<Path>>(paths: &[P]) -> Result<(), String> {
    let mut args: Vec<&std::ffi::OsStr> = vec!["check".as_ref(), "-v".as_ref()];
    args.extend(paths.iter().map(|p| p.as_ref().as_os_str()));
    let out = run(&args);
    let text = String::from_utf8_lossy(&out.stdout);
    // warcio check exits non-zero on a failed check; also refuse records it
    // could not verify (`no digest to check`, `... not checked`), but for
    // `revisit` records, whose digests warcio never checks (their payload is
    // elsewhere): `digest present but not checked (revisit)`.
    let unverified = text.lines().map(str::trim).any(|l| {
        l.starts_with("no digest")
            || (l.contains("not checked") && !l.ends_with("not checked (revisit)"))
            || l.contains("failed")
    });
    if out.status.success() && !unverified {
        Ok(())
    } else {
        Err(describe("warcio check -v failed", &out))
    }
}

/// Runs `warcio index` on `path` and returns its JSON lines (one object per
/// record, with `offset`, `length`, `warc-type`, `warc-target-uri`, ...).
/// Panics if warcio fails or prints something that is not JSON.
pub fn index(path: &Path) -> Vec<serde_json::Value> {
    let out = run(&[
        "index".as_ref(),
        "-f".as_ref(),
        "offset,length,warc-type,warc-target-uri,warc-record-id,warc-payload-digest,http:status"
            .as_ref(),
        path.as_os_str(),
    ]);
    if !out.status.success() {
        panic!("{}", describe("warcio index failed", &out));
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str(l).unwrap_or_else(|e| {
                panic!("warcio index printed a line that is not JSON ({e}): {l}")
            })
        })
        .collect()
}

/// Runs `warcio extract --payload` on the record at `offset` of `path`: the
/// payload as warcio's content reader gives it (transfer and content codings
/// removed). Panics if warcio fails.
pub fn payload(path: &Path, offset: u64) -> Vec<u8> {
    let offset = offset.to_string();
    let out = run(&[
        "extract".as_ref(),
        "--payload".as_ref(),
        path.as_os_str(),
        offset.as_ref(),
    ]);
    if !out.status.success() {
        panic!("{}", describe("warcio extract --payload failed", &out));
    }
    out.stdout
}
