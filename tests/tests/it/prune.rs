//! A crawl directory that grows with what it fetched, not with its age:
//! one round stores a page, then many rounds fetch nothing (their one URL
//! is on a host that refuses connections, as a crawl run from cron meets
//! one), driven by hand with `fetcher fetch` and `segmenter run`. Each
//! round that fetched nothing adds its files; `segmenter prune` past the
//! retention removes every one of them, and the spent files of the round
//! that stored the page, but never its WARC file, CDXJ index, crawl log or
//! stats, nor the newest segment or a state file; the crawl goes on after
//! it, numbering its segments on.

use crate::support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use testkit::bins;
use testkit::server::{Request, Response, Server};

/// Rounds that fetch nothing.
const EMPTY_ROUNDS: usize = 10;
/// Bound of one program run.
const STEP: Duration = Duration::from_secs(60);

/// Every file under `dir`, relative to it.
fn files(dir: &Path) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.insert(p.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    out
}

/// The files of `set` under `sub` (`segments`, `fetched`, `logs`).
fn under<'a>(set: &'a BTreeSet<PathBuf>, sub: &'a str) -> impl Iterator<Item = &'a PathBuf> {
    set.iter().filter(move |p| p.starts_with(sub))
}

#[test]
fn prune_removes_what_empty_rounds_leave_and_never_the_archive() {
    let server = Server::builder()
        .host("up.test", |req: &Request| match req.path() {
            "/" => Response::html("<p>the only page</p>"),
            _ => Response::not_found(),
        })
        .start()
        .unwrap();
    // A port on the server's address where nothing listens.
    let ip = server.addr("up.test").ip();
    let closed = std::net::TcpListener::bind((ip, 0))
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let (scratch, crawl) = support::loopback_crawl(
        "prune-empty-rounds",
        &server,
        &format!("{ip} refused.test\n"),
        "min_delay = \"10ms\"\nrobots_retry_delay = \"50ms\"\nbackoff_max = \"100ms\"\n\
         connect_timeout = \"1s\"\n",
        "[crawl]\nround_time = \"5s\"\nmin_free_disk = 0\n",
    );
    let seeds = scratch.path().join("seeds.txt");
    std::fs::write(
        &seeds,
        format!(
            "{}\nhttp://refused.test:{closed}/\n",
            server.url("up.test", "/")
        ),
    )
    .unwrap();
    let run = |program: &str, args: &[&str]| {
        let mut cmd = Command::new(bins::bin_path(program));
        cmd.arg(args[0]).arg(&crawl).args(&args[1..]);
        bins::run_within(&mut cmd, scratch.path(), 0, STEP)
    };
    run("segmenter", &["inject", seeds.to_str().unwrap()]);
    let round = || {
        run("fetcher", &["fetch", "--progress", "none"]);
        run("segmenter", &["run"]);
    };
    round();
    let after_first = files(&crawl);
    for _ in 0..EMPTY_ROUNDS {
        round();
    }
    let before = files(&crawl);
    let per_round = (before.len() - after_first.len()) as f64 / EMPTY_ROUNDS as f64;
    let archive: Vec<&PathBuf> = under(&before, "fetched")
        .filter(|p| {
            let n = p.to_string_lossy();
            n.ends_with(".warc.gz") || n.ends_with(".cdxj")
        })
        .collect();
    assert_eq!(archive.len(), 2, "one WARC file and its index: {archive:?}");

    // Past the retention, prune: what the empty rounds left goes.
    std::thread::sleep(Duration::from_millis(1100));
    let out = run("segmenter", &["prune", "--keep-logs", "1s"]);
    let after = files(&crawl);
    eprintln!(
        "files: {} after the first round, {} after {EMPTY_ROUNDS} empty rounds ({per_round:.1} a \
         round), {} after prune\n{}",
        after_first.len(),
        before.len(),
        after.len(),
        out.stdout
    );
    assert!(
        per_round >= 7.0,
        "an empty round left {per_round} files: {before:#?}"
    );
    let segments: Vec<&PathBuf> = under(&after, "segments").collect();
    let runs: BTreeSet<String> = under(&after, "fetched")
        .map(|p| p.iter().nth(1).unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        segments.len(),
        1,
        "the newest segment (waiting) only: {segments:?}"
    );
    assert_eq!(
        runs,
        BTreeSet::from(["00001".to_string()]),
        "only the run that stored a page: {after:#?}"
    );
    for kept in ["DONE", "stats.json", "crawl.log"] {
        assert!(
            after.contains(&Path::new("fetched/00001").join(kept)),
            "{kept}"
        );
    }
    for a in &archive {
        assert!(after.contains(*a), "{} removed", a.display());
    }
    assert!(
        !after.contains(Path::new("fetched/00001/leftover.v5.tsv.zst")),
        "a consumed leftover list is spent"
    );
    let logs: Vec<&PathBuf> = under(&after, "logs").collect();
    assert_eq!(logs.len(), 1, "the newest report: {logs:?}");
    for state in [
        "seen.bloom",
        "hosts.db",
        "consumed.txt",
        "history.v5.list",
        "scope.seeds",
    ] {
        assert!(after.contains(Path::new(state)), "{state} removed");
    }
    let added: Vec<&PathBuf> = after.difference(&before).collect();
    assert!(added.is_empty(), "prune made {added:?}");

    // The crawl goes on: the next round takes the next number.
    let waiting = segments[0]
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    round();
    let next = files(&crawl);
    let new_segments: Vec<&PathBuf> = under(&next, "segments")
        .filter(|p| !after.contains(*p))
        .collect();
    assert_eq!(new_segments.len(), 1, "{new_segments:?}");
    assert!(
        new_segments[0]
            .file_name()
            .unwrap()
            .to_string_lossy()
            .as_ref()
            > waiting.as_str(),
        "{new_segments:?} after {waiting}"
    );
    support::status_json(&crawl);
}
