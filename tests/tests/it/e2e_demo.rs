//! `scripts/demo.sh`, the README's first command, run for real (with the
//! binaries of this build instead of a release build): it crawls, stops its
//! server, prints figures that match the crawl and commands that work, and
//! on Ctrl-C stops cleanly and says how to go on.

use crate::support;

use std::net::TcpStream;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::crawllog::{ErrorCode, Status};
use testkit::bins::{self, Finished, report};
use testkit::demo::FIRST_DEMO_ADDRESS;
use testkit::{TempDir, repo_root};

use support::{Background, CRAWL_TIMEOUT, Outcome};

fn demo_sh(out: &Path, rounds: &str) -> Command {
    let mut cmd = Command::new(repo_root().join("scripts").join("demo.sh"));
    cmd.args(["--rounds", rounds])
        .arg("--bin")
        .arg(bins::bin_dir())
        .arg("--out")
        .arg(out)
        .current_dir(repo_root());
    cmd
}

/// The number after `key` in `text` (`port 4242` → 4242).
fn number_after(text: &str, key: &str) -> u64 {
    let at = text
        .find(key)
        .unwrap_or_else(|| panic!("no {key:?} in:\n{text}"));
    text[at + key.len()..]
        .trim_start()
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no number after {key:?} in:\n{text}"))
}

fn assert_server_stopped(port: u64) {
    let port = u16::try_from(port).unwrap();
    assert!(
        TcpStream::connect((FIRST_DEMO_ADDRESS, port)).is_err(),
        "the demo web still answers on {FIRST_DEMO_ADDRESS}:{port}"
    );
}

/// Runs `line` with bash from the repository root, killed after `timeout`.
fn run_shell(line: &str, timeout: Duration) -> Finished {
    bins::run_with_timeout(
        Command::new("bash")
            .args(["-c", line])
            .current_dir(repo_root()),
        timeout,
    )
    .unwrap()
}

/// The hosts that the demo server's own request log (`requests.tsv`:
/// host, path, start ms, end ms, status) shows asked sooner than 0.9 ×
/// their floor after their previous request: the crawl's min_delay, or
/// the host's Crawl-delay (from `hosts.db`) if larger.
fn asked_too_soon(requests: &Path, crawl: &Path, min_delay_ms: u64) -> Vec<String> {
    let delays: std::collections::HashMap<String, u64> =
        common::hoststate::HostDb::open_read_only(crawl.join("hosts.db"))
            .unwrap()
            .expect("hosts.db")
            .crawl_delays()
            .unwrap()
            .into_iter()
            .collect();
    let mut by_host: std::collections::BTreeMap<String, Vec<(u64, u64)>> = Default::default();
    for line in std::fs::read_to_string(requests).unwrap().lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let host = f[0].split(':').next().unwrap().to_string();
        by_host
            .entry(host)
            .or_default()
            .push((f[2].parse().unwrap(), f[3].parse().unwrap()));
    }
    let mut soon = Vec::new();
    for (host, mut asked) in by_host {
        asked.sort();
        let floor = delays.get(&host).copied().unwrap_or(0).max(min_delay_ms);
        let too_close = asked
            .windows(2)
            .any(|w| (w[1].0.saturating_sub(w[0].1) as f64) < 0.9 * floor as f64);
        if too_close {
            soon.push(host);
        }
    }
    soon
}

#[test]
fn the_demo_crawls_stops_its_server_and_prints_commands_that_work() {
    let scratch = TempDir::new("demo-sh");
    let dir = scratch.path().join("demo");
    let out = bins::run_with_timeout(&mut demo_sh(&dir, "2"), CRAWL_TIMEOUT).unwrap();
    bins::assert_code(&out, 0, Some(&dir));
    let text = &out.stdout;

    // The figures are those of the crawl left behind.
    let outcome = Outcome::read(&dir.join("crawl"));
    let pages = outcome.pages_logged();
    assert!(
        text.contains("==> demo crawl done: 2 rounds in all, "),
        "{text}"
    );
    assert_eq!(number_after(text, "2 rounds in all,"), pages, "{text}");
    assert!(pages > 50, "{text}");
    assert!(number_after(text, "pages fetched (") <= pages);
    assert!(number_after(text, "with status 2xx) from") > 20, "{text}");
    assert_eq!(text.matches("\nround ").count(), 2, "{text}");
    assert_server_stopped(number_after(text, "(port"));

    // The report's politeness figure is the server's: hosts whose
    // robots.txt failed have crawl-log lines for URLs held without a
    // request, which are no requests sent too soon.
    let soon = asked_too_soon(&dir.join("requests.tsv"), &dir.join("crawl"), 50);
    let html = std::fs::read_to_string(dir.join("crawl/report.html")).unwrap();
    let told = crate::report_html::text_of(&html, "too-close");
    assert_eq!(
        told,
        format!(
            "Hosts asked sooner than 0.9× their floor: <b>{}",
            soon.len()
        ),
        "the server's log shows these hosts asked too soon: {soon:?}"
    );
    assert!(
        outcome
            .log
            .iter()
            .any(|(_, l)| l.status == Status::Error(ErrorCode::RobotsUnavailable)),
        "the crawl met no unavailable robots.txt: the check above proves nothing"
    );

    // Every example command runs, from the repository root, and prints.
    let commands: Vec<&str> = text
        .split("Where to look")
        .nth(1)
        .unwrap_or_else(|| panic!("no 'Where to look' in:\n{text}"))
        .lines()
        .filter(|l| l.starts_with("               "))
        .map(str::trim)
        .collect();
    assert_eq!(commands.len(), 5, "{commands:#?}");
    for line in commands {
        if line.starts_with("sqlite3 ") && !support::on_path("sqlite3") {
            // Not every machine has the sqlite3 shell; the file must be there.
            assert!(dir.join("crawl/hosts.db").is_file());
            eprintln!("sqlite3 is not installed; not run: {line}");
            continue;
        }
        let run = run_shell(line, Duration::from_secs(60));
        assert!(
            run.code() == Some(0) && run.stdout.lines().count() > 1,
            "an example command printed by demo.sh does not work:\n{}",
            report(&run, None)
        );
    }

    // A second run starts afresh.
    let again = bins::run_with_timeout(&mut demo_sh(&dir, "1"), CRAWL_TIMEOUT).unwrap();
    bins::assert_code(&again, 0, Some(&dir));
    assert!(
        again
            .stdout
            .contains("==> demo crawl done: 1 rounds in all, 3 pages fetched"),
        "{}",
        again.stdout
    );
    assert!(!dir.join("crawl/fetched/00002").exists());
}

#[test]
fn ctrl_c_stops_the_demo_and_its_server_and_the_crawl_goes_on_as_printed() {
    let scratch = TempDir::new("demo-sh-ctrl-c");
    let dir = scratch.path().join("demo");
    let mut run = Background::start(demo_sh(&dir, "3"), scratch.path(), "demo");
    let deadline = Instant::now() + Duration::from_secs(120);
    while !std::fs::read_to_string(&run.stdout)
        .unwrap_or_default()
        .contains("round 1:")
    {
        assert!(
            Instant::now() < deadline && matches!(run.child.try_wait(), Ok(None)),
            "demo.sh never finished its first round:\n{}",
            std::fs::read_to_string(&run.stderr).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // Mid-fetch: once the fetcher of round 2 has logged a URL.
    let log = dir.join("crawl/fetched/00002/crawl.log");
    while std::fs::metadata(&log).map_or(true, |m| m.len() == 0) {
        assert!(
            Instant::now() < deadline && matches!(run.child.try_wait(), Ok(None)),
            "round 2 never started fetching:\n{}",
            std::fs::read_to_string(&run.stderr).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let pgid = i32::try_from(run.child.id()).unwrap();
    // SAFETY: kill(2) has no memory-safety preconditions; the group is the
    // one our child leads (a Ctrl-C on a terminal reaches all of it).
    unsafe { libc::kill(-pgid, libc::SIGINT) };
    let out = run.finish(Duration::from_secs(60));
    bins::assert_code(&out, 130, Some(&dir));
    assert!(
        out.stderr
            .contains("crawl.sh: interrupted during fetcher fetch 00002")
            && out
                .stderr
                .contains("demo.sh: interrupted; the demo web is stopped"),
        "{}",
        report(&out, None)
    );
    let crawl = dir.join("crawl");
    assert!(
        crawl.join("fetched/00002/DONE").is_file(),
        "the fetch did not stop cleanly"
    );
    let env = std::fs::read_to_string(dir.join("demo.env")).unwrap();
    let port = number_after(&env, "port=");
    assert_server_stopped(port);

    // The printed way to go on: the demo web served again on the same port,
    // the crawl on to its end.
    let hint = out
        .stderr
        .split("to go on with this crawl: ")
        .nth(1)
        .and_then(|rest| rest.lines().next())
        .unwrap_or_else(|| panic!("no way to go on printed:\n{}", out.stderr))
        .to_string();
    assert!(
        hint.starts_with("scripts/demo.sh --resume --out "),
        "{hint}"
    );
    // A whole crawl of the demo: as long as any other (the demo's tail, a
    // black hole and robots.txt retries, makes it longer than a minute).
    let resumed = run_shell(&hint, CRAWL_TIMEOUT);
    bins::assert_code(&resumed, 0, Some(&crawl));
    assert!(
        resumed.stdout.contains("nothing fetchable left")
            || resumed.stdout.contains("nothing left"),
        "{}",
        report(&resumed, None)
    );
    assert_server_stopped(port);
    let outcome = Outcome::read(&crawl);
    let stored = outcome.pages_stored();
    assert!(stored.len() > 2000, "{} pages", stored.len());
    let twice: Vec<&&str> = stored
        .iter()
        .filter(|(_, s)| s.len() > 1)
        .map(|(u, _)| u)
        .collect();
    assert!(twice.is_empty(), "stored twice: {twice:?}");
}
