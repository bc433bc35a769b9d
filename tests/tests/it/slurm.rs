//! A sharded crawl run by the Slurm driver (`scripts/slurm/crawl.sh`) on a
//! real single-node Slurm, which `scripts/test.sh` starts
//! (`scripts/slurm/testbed.sh`) and names in `SLURM_CONF`; and the task
//! entry point's own rules (`scripts/task.sh`): the index from the
//! environment, one task per shard at a time.

use crate::support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::crawldir::CrawlDir;
use testkit::bins;
use testkit::demo::{Demo, DemoParams};
use testkit::server::{Request, Response, Server};

use support::{CrawlSettings, DemoCrawl, Outcome, without_port};
use testkit::repo_root;

/// The Slurm of the test setup, or `None` (with the reason printed) where
/// it is not required and not there.
pub(crate) fn slurm_conf() -> Option<PathBuf> {
    match std::env::var_os("SLURM_CONF") {
        Some(conf) if Path::new(&conf).is_file() => Some(PathBuf::from(conf)),
        _ if std::env::var("CRAWL_TEST_SLURM").as_deref() == Ok("required") => panic!(
            "CRAWL_TEST_SLURM=required but no SLURM_CONF names a running Slurm: run the suite \
             with scripts/test.sh (it installs and starts one with scripts/slurm/testbed.sh)"
        ),
        _ => {
            eprintln!(
                "skipped: no Slurm (SLURM_CONF unset; scripts/test.sh starts one when it can \
                 install Debian's slurmctld, slurmd, slurm-client and munge)"
            );
            None
        }
    }
}

fn task_sh() -> PathBuf {
    repo_root().join("scripts/task.sh")
}

fn inject_shards(c: &DemoCrawl, shards: u32) {
    bins::run_within(
        Command::new(bins::bin_path("segmenter"))
            .arg("inject")
            .arg(&c.crawl)
            .arg(&c.seeds)
            .args(["--shards", &shards.to_string()]),
        &c.crawl,
        0,
        Duration::from_secs(60),
    );
}

#[test]
fn a_task_takes_its_index_from_the_engine_and_one_task_per_shard_runs_at_once() {
    let demo = Demo::with_params(DemoParams::small(9));
    let c = DemoCrawl::start("task-sh", &demo, CrawlSettings::default());
    inject_shards(&c, 2);
    let task = |env: &[(&str, &str)], args: &[&str], code: i32| {
        let mut cmd = Command::new(task_sh());
        cmd.arg(&c.crawl)
            .args(args)
            .arg("--bin")
            .arg(bins::bin_dir())
            .env_remove("SLURM_ARRAY_TASK_ID")
            .env_remove("JOB_COMPLETION_INDEX")
            .env_remove("AWS_BATCH_JOB_ARRAY_INDEX")
            .envs(env.iter().copied());
        bins::run_within(&mut cmd, &c.crawl, code, Duration::from_secs(120))
    };
    let out = task(&[], &["reduce"], 2);
    assert!(out.stderr.contains("no task index"), "{}", out.stderr);
    let out = task(&[("AWS_BATCH_JOB_ARRAY_INDEX", "2")], &["reduce"], 2);
    assert!(out.stderr.contains("numbered 0 to 1"), "{}", out.stderr);

    // A task of shard 1 holds its lock: a second one waits --lock-wait,
    // then refuses (75) and does nothing; shard 0 is not held by it.
    let lock = CrawlDir::new(&c.crawl).shard(1).root().join(".task.lock");
    let mut holder = Command::new("flock")
        .arg(&lock)
        .args(["sleep", "30"])
        .spawn()
        .unwrap();
    let waited = std::time::Instant::now();
    while !lock.exists() && waited.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(200));
    let asked = std::time::Instant::now();
    let out = task(
        &[("SLURM_ARRAY_TASK_ID", "1")],
        &["fetch", "--lock-wait", "1"],
        75,
    );
    assert!(
        out.stderr
            .contains("another task of shard 1 holds the lock after 1s"),
        "{}",
        out.stderr
    );
    assert!(asked.elapsed() >= Duration::from_secs(1), "it waited");
    assert!(
        !CrawlDir::new(&c.crawl)
            .shard(1)
            .fetched_dir("00001")
            .exists()
    );
    holder.kill().unwrap();
    holder.wait().unwrap();
    // The index from Kubernetes' variable; the fetch task fetches and maps.
    task(&[("JOB_COMPLETION_INDEX", "0")], &["fetch"], 0);
    let view = CrawlDir::new(&c.crawl).shard(0);
    if view.is_fetched("00001") {
        assert!(view.fetched_dir("00001").join("mapped/DONE").is_file());
    }
}

/// Polls `f` every 20 ms for at most two minutes.
fn wait_for<T>(mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while std::time::Instant::now() < deadline {
        if let Some(v) = f() {
            return Some(v);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

/// Some shard whose `n`th run is being fetched (started, no `DONE`; its
/// earlier runs complete) and has written `lines` crawl-log lines.
fn fetching(top: &CrawlDir, n: usize, lines: usize) -> Option<u32> {
    (0..4).find(|&j| {
        let view = top.shard(j);
        let done = view.completed_runs().unwrap_or_default().len();
        let running = view
            .pending_segments()
            .unwrap_or_default()
            .into_iter()
            .find(|id| view.fetched_dir(id).is_dir() && !view.is_fetched(id));
        done + 1 == n
            && running.is_some_and(|id| {
                std::fs::read_to_string(view.crawl_log_path(&id))
                    .is_ok_and(|log| log.lines().count() >= lines)
            })
    })
}

/// The pid of the `fetcher fetch CRAWL ID --shard J` working on `crawl`.
fn fetcher_pid(crawl: &Path, j: u32) -> Option<u32> {
    let crawl = format!("fetch\0{}\0", crawl.display());
    let shard = format!("\0--shard\0{j}\0");
    std::fs::read_dir("/proc").ok()?.flatten().find_map(|e| {
        let pid: u32 = e.file_name().to_str()?.parse().ok()?;
        let cmdline = std::fs::read(e.path().join("cmdline")).ok()?;
        let cmdline = String::from_utf8_lossy(&cmdline);
        let ours = cmdline.contains(&crawl) && cmdline.contains(&shard);
        (ours && cmdline.contains("fetcher")).then_some(pid)
    })
}

#[test]
fn the_slurm_driver_crawls_four_shards_to_the_end_through_a_kill_and_a_scancel() {
    let Some(conf) = slurm_conf() else {
        return;
    };
    let demo = Demo::with_params(DemoParams {
        crawl_delay: 0.2,
        ..DemoParams::small(7)
    });
    let c = DemoCrawl::start("slurm", &demo, crate::shards::settings());
    inject_shards(&c, 4);
    let driver = || {
        let mut cmd = Command::new(repo_root().join("scripts/slurm/crawl.sh"));
        cmd.arg(&c.crawl)
            .args(["--rounds", "40", "--bin"])
            .arg(bins::bin_dir())
            .env("SLURM_CONF", &conf);
        cmd
    };
    // Faults on the way: a shard's second run has its fetcher killed
    // (kill -9): its task runs it again in the allocation, and it resumes;
    // when a shard's third run is fetched, the fetch array is cancelled
    // (scancel): the round fails, the driver says so, and run again it
    // goes on from the crawl directory.
    let first = bins::spawn(&mut driver()).expect("cannot start the driver");
    let top = CrawlDir::new(&c.crawl);
    // (Its hosts' robots.txt were read in its first run: a kill right
    // after a robots.txt read, before its Crawl-delay is kept, is the
    // fetcher's own matter, which e2e_kill covers.)
    let killed = wait_for(|| fetching(&top, 2, 2).and_then(|j| fetcher_pid(&c.crawl, j)))
        .expect("no fetcher of a second run seen running");
    let status = Command::new("kill")
        .args(["-9", &killed.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    wait_for(|| fetching(&top, 3, 0)).expect("no third run seen fetching");
    // Its own fetch array only: the test Slurm is shared with other tests
    // (the scale benchmark's crawl runs its arrays under the same names).
    let status = Command::new("scancel")
        .arg(own_fetch_array(&c.crawl))
        .env("SLURM_CONF", &conf)
        .status()
        .unwrap();
    assert!(status.success());
    let out = first.finish(Duration::from_secs(120));
    bins::assert_code(&out, 1, Some(&c.crawl));
    assert!(
        out.stderr.contains("the fetch array (job ") && out.stderr.contains("did not complete"),
        "{}",
        out.stderr
    );
    assert_eq!(phase(&c.crawl), "failed", "the driver's metrics file");
    let retried = std::fs::read_dir(c.crawl.join("logs"))
        .unwrap()
        .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap_or_default())
        .any(|log| log.contains("crawl-fetch: attempt 0 of shard"));
    assert!(retried, "the killed fetch was run again in its allocation");

    let second = stop_reaches_a_running_fetch(&top, &mut driver());
    let (cancelled, round) = a_reduce_cancelled_before_it_ran_fails_its_round(&c.crawl, &conf);
    let third = bins::run_within(&mut driver(), &c.crawl, 0, Duration::from_secs(400));
    // The next run ends the round the cancel left open: no shard is a
    // round behind (each reduced every run it fetched).
    let first_line = third.stdout.lines().find(|l| l.starts_with("round "));
    assert!(
        first_line.is_some_and(|l| l.starts_with(&format!("round {round}: "))),
        "{}",
        third.stdout
    );
    for j in 0..4 {
        let status = segmenter_out(&c.crawl, &["status", "--shard", &j.to_string(), "--json"]);
        let status: serde_json::Value = serde_json::from_str(&status).unwrap();
        assert_eq!(
            status["unconsumed"],
            serde_json::json!([]),
            "shard {j}: {status}"
        );
    }
    let ended = [
        "nothing left to fetch",
        "nothing to fetch now",
        "nothing fetchable",
    ];
    assert!(
        ended.iter().any(|e| third.stdout.contains(e)),
        "{}",
        third.stdout
    );
    rounds_are_journaled_and_reported(&c.crawl, &[&out.stdout, &second, &cancelled, &third.stdout]);
    sbatch_scripts_and_task_logs(&c.crawl);

    let mut stored = std::collections::BTreeMap::<String, usize>::new();
    for j in 0..4 {
        for (url, s) in Outcome::read(top.shard(j).root()).pages_stored() {
            *stored.entry(without_port(url)).or_default() += s.len();
        }
    }
    let twice: Vec<_> = stored.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "fetched more than once: {twice:?}");
    let expected: BTreeSet<String> = c
        .web
        .expected(&c.limits())
        .fetch
        .keys()
        .map(|u| without_port(u))
        .collect();
    let missed: Vec<&String> = expected
        .iter()
        .filter(|u| !stored.contains_key(*u))
        .collect();
    assert!(missed.is_empty(), "not fetched: {missed:?}");
    let violations = c.politeness_violations();
    assert!(violations.is_empty(), "{violations:?}");

    metrics_files(&c.crawl);
}

/// When every host left is held, the Slurm driver waits for the first of
/// them instead of running rounds of nothing: each host's robots.txt
/// answers 503 once, which holds the host for the robots.txt retry delay
/// (8 s here, longer than an empty round under Slurm takes), so the first
/// round fetches no page and ends `held`. Then one wait, and the next round
/// fetches every page: two rounds, four arrays, each page asked once. The
/// retry delay is a fetcher flag given to the driver (`--fetcher-arg`), as
/// to crawl.sh, and a segmenter flag reaches the map and the reduce.
#[test]
fn the_slurm_driver_waits_for_held_hosts_instead_of_running_empty_rounds() {
    let Some(conf) = slurm_conf() else {
        return;
    };
    let hosts = ["a.held.test", "b.held.test"];
    let mut builder = Server::builder();
    for host in hosts {
        let robots_asked = Arc::new(AtomicUsize::new(0));
        builder = builder.host(host, move |req: &Request| match req.path() {
            "/robots.txt" if robots_asked.fetch_add(1, Ordering::SeqCst) == 0 => {
                Response::status(503)
            }
            "/robots.txt" => Response::not_found(),
            path => Response::html(format!("<title>{path}</title>")),
        });
    }
    let server = builder.start().unwrap();
    let scratch = testkit::TempDir::new("slurm-held");
    let crawl = support::crawl_of_server(&server, scratch.path(), "crawl", "heldbot");
    let mut toml = std::fs::read_to_string(crawl.join("crawl.toml")).unwrap();
    toml.push_str("tail_time = \"50ms\"\n");
    std::fs::write(crawl.join("crawl.toml"), toml).unwrap();
    let seeds = scratch.path().join("seeds.txt");
    let urls: Vec<String> = hosts
        .iter()
        .flat_map(|h| [server.url(h, "/1.html"), server.url(h, "/2.html")])
        .collect();
    std::fs::write(&seeds, urls.join("\n") + "\n").unwrap();
    let mut inject = Command::new(bins::bin_path("segmenter"));
    inject
        .arg("inject")
        .arg(&crawl)
        .arg(&seeds)
        .args(["--shards", "2"]);
    bins::run_within(&mut inject, &crawl, 0, Duration::from_secs(60));

    let mut cmd = Command::new(repo_root().join("scripts/slurm/crawl.sh"));
    cmd.arg(&crawl)
        .args(["--rounds", "10", "--bin"])
        .arg(bins::bin_dir())
        .args(["--fetcher-arg", "--robots-retry-delay=8s"])
        .args(["--segmenter-arg", "--max-per-host", "--segmenter-arg", "50"])
        .env("SLURM_CONF", &conf);
    let out = bins::run_within(&mut cmd, &crawl, 0, Duration::from_secs(300));
    for (step, flags) in [
        (
            "fetch",
            "--segmenter-arg --max-per-host --segmenter-arg 50 -- --robots-retry-delay=8s",
        ),
        (
            "reduce",
            "--segmenter-arg --max-per-host --segmenter-arg 50\n",
        ),
    ] {
        let script = std::fs::read_to_string(crawl.join(format!("slurm/{step}.sbatch"))).unwrap();
        assert!(script.contains(flags), "{script}");
    }
    // (Held for the flag's 8 s, not the default minute.)
    let wait: Option<u64> = out
        .stdout
        .split("held; waiting ")
        .nth(1)
        .and_then(|rest| rest.split('s').next()?.parse().ok());
    assert!(wait.is_some_and(|s| s <= 9), "{}", out.stdout);
    let waited = out.stdout.find("every host left is held; waiting");
    let fetched = out.stdout.find("round 2: ");
    assert!(
        waited.is_some() && waited < fetched,
        "no wait before round 2:\n{}",
        out.stdout
    );
    let journal = common::rounds::read(&CrawlDir::new(&crawl)).unwrap();
    let rounds: Vec<(u64, Option<&str>)> = journal
        .iter()
        .map(|r| (r.pages, r.stop_reason.as_deref()))
        .collect();
    assert_eq!(rounds.len(), 2, "{rounds:?}\n{}", out.stdout);
    assert_eq!(rounds[0], (0, Some("held")), "{}", out.stdout);
    assert_eq!(rounds[1].0, 4, "{}", out.stdout);
    assert_eq!(
        arrays(&crawl).len(),
        4,
        "a fetch and a reduce array a round"
    );
    for host in hosts {
        let asked: Vec<String> = server.log(host).into_iter().map(|e| e.target).collect();
        let mut pages: Vec<&String> = asked.iter().filter(|t| *t != "/robots.txt").collect();
        pages.sort();
        assert_eq!(pages, ["/1.html", "/2.html"], "{host}: {asked:?}");
        assert_eq!(asked.len(), 4, "robots.txt twice: {host}: {asked:?}");
    }
}

/// The metrics files: the driver's, which says it stopped, and one per
/// fetch task, each with its shard's label, the fetch over.
fn metrics_files(crawl: &Path) {
    assert_eq!(phase(crawl), "stopped");
    let metrics = crawl.join("metrics");
    let names: BTreeSet<String> = std::fs::read_dir(&metrics)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let mut expected: BTreeSet<String> = (0..4)
        .map(|j| format!("crawl-crawl.fetch-{j:03}.prom"))
        .collect();
    expected.insert("crawl-crawl.cycle.prom".into());
    assert_eq!(names, expected);
    for j in 0..4u32 {
        let text = std::fs::read_to_string(metrics.join(format!("crawl-crawl.fetch-{j:03}.prom")))
            .unwrap();
        let p = &testkit::prom::parse(std::slice::from_ref(&text))[0];
        let running = p.samples("crawl_fetch_running");
        assert_eq!(running.len(), 1, "{text}");
        assert_eq!(running[0].labels["shard"], j.to_string(), "{text}");
        assert_eq!(running[0].value(), 0.0, "{text}");
    }
}

/// A STOP file made while a fetch array runs: the driver asks the array
/// to stop (or, if it ended first, ends the round), and exits 0 saying
/// so; a fetch that got the signal ended cleanly (`signal`). Its stdout.
fn stop_reaches_a_running_fetch(top: &CrawlDir, driver: &mut Command) -> String {
    let run = bins::spawn(driver).expect("cannot start the driver");
    wait_for(|| fetching(top, 4, 1)).expect("no fourth run seen fetching");
    std::fs::write(top.stop_path(), "").unwrap();
    let out = run.finish(Duration::from_secs(120));
    bins::assert_code(&out, 0, Some(top.root()));
    assert!(
        out.stdout.contains("STOP exists; stopping"),
        "{}",
        out.stdout
    );
    if out.stdout.contains("STOP appeared; asking the fetch array") {
        let stopped = (0..4).any(|j| {
            let view = top.shard(j);
            view.completed_runs().unwrap().iter().any(|id| {
                let done = std::fs::read_to_string(view.fetched_dir(id).join("DONE"));
                done.unwrap().contains("stop_reason signal")
            })
        });
        assert!(stopped, "no fetch stopped on STOP");
    }
    std::fs::remove_file(top.stop_path()).unwrap();
    out.stdout
}

/// The sbatch scripts are kept, readable, and every task wrote its log.
fn sbatch_scripts_and_task_logs(crawl: &Path) {
    let script = std::fs::read_to_string(crawl.join("slurm/fetch.sbatch")).unwrap();
    assert!(script.contains("#SBATCH --array=0-3"), "{script}");
    // One segmenter thread per CPU Slurm gave the task.
    assert!(
        script.contains("--threads \"${SLURM_CPUS_PER_TASK:-1}\""),
        "{script}"
    );
    let logs = std::fs::read_dir(crawl.join("logs"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("slurm-")
        })
        .count();
    // A fetch and a reduce array a round; the reduce task cancelled
    // before it started wrote none.
    let rounds = common::rounds::read(&CrawlDir::new(crawl)).unwrap().len();
    assert!(
        logs + 1 >= rounds * 8,
        "{logs} task logs for {rounds} rounds"
    );
}

/// The round lines the driver runs printed are the journal's, numbered
/// 1, 2, ... across the runs (each goes on from the journal); a round
/// the journal has and no run printed was ended by STOP; the report was
/// rebuilt after the last round; and a run with a STOP file stops at
/// once, saying so.
fn rounds_are_journaled_and_reported(crawl: &Path, stdouts: &[&str]) {
    let mut printed = stdouts
        .iter()
        .flat_map(|s| s.lines())
        .filter(|l| l.starts_with("round "));
    let journal = common::rounds::read(&CrawlDir::new(crawl)).unwrap();
    let mut next = printed.next();
    for r in &journal {
        if next == Some(r.line().as_str()) {
            next = printed.next();
        } else {
            assert_eq!(
                r.end,
                common::rounds::End::Stop,
                "not printed: {}",
                r.line()
            );
        }
    }
    assert_eq!(next, None, "printed, not in the journal");
    let numbers: Vec<u64> = journal.iter().map(|r| r.number).collect();
    assert_eq!(numbers, (1..=journal.len() as u64).collect::<Vec<_>>());
    assert!(
        stdouts[0]
            .lines()
            .any(|l| l.starts_with("round 1: segment 00001, ")),
        "{}",
        stdouts[0]
    );
    let last = journal.last().expect("rounds in the journal");
    assert!(journal.iter().map(|r| r.pages).sum::<u64>() > 0);
    let report = std::fs::metadata(crawl.join("report.html")).expect("CRAWL/report.html");
    let built = common::timefmt::unix_millis(report.modified().unwrap());
    assert!(
        built >= last.ended_ms,
        "report.html built before the last round ended"
    );
    let log =
        std::fs::read_to_string(crawl.join(format!("logs/round-{:05}.log", last.number))).unwrap();
    assert!(
        log.contains("fetch array: job ") && log.contains("reduce array: job "),
        "{log}"
    );
    assert!(log.contains("=== segmenter report"), "{log}");

    std::fs::write(crawl.join("STOP"), "").unwrap();
    let mut cmd = Command::new(repo_root().join("scripts/slurm/crawl.sh"));
    cmd.arg(crawl).arg("--bin").arg(bins::bin_dir());
    let out = bins::run_within(&mut cmd, crawl, 0, Duration::from_secs(60));
    assert!(
        out.stdout.contains("STOP exists; stopping"),
        "{}",
        out.stdout
    );
    assert_eq!(
        common::rounds::read(&CrawlDir::new(crawl)).unwrap(),
        journal
    );
    std::fs::remove_file(crawl.join("STOP")).unwrap();
}

/// The phase the driver's metrics file says.
fn phase(crawl: &Path) -> String {
    let text = std::fs::read_to_string(crawl.join("metrics/crawl-crawl.cycle.prom")).unwrap();
    let p = &testkit::prom::parse(std::slice::from_ref(&text))[0];
    let on: Vec<String> = p
        .samples("crawl_phase")
        .into_iter()
        .filter(|s| s.value() == 1.0)
        .map(|s| s.labels["phase"].clone())
        .collect();
    assert_eq!(on.len(), 1, "{text}");
    on[0].clone()
}

/// The job id of the fetch array the driver submitted last.
fn own_fetch_array(crawl: &Path) -> String {
    arrays(crawl)
        .into_iter()
        .rev()
        .find_map(|(step, job)| (step == "fetch").then_some(job))
        .unwrap_or_else(|| panic!("no fetch array named in {}/logs", crawl.display()))
}

/// The arrays the driver submitted, as (step, job id), in their order:
/// from the round logs (`=== TIME fetch array: job ID (task logs: ...)`).
fn arrays(crawl: &Path) -> Vec<(String, String)> {
    let logs = crawl.join("logs");
    let mut names: Vec<String> = std::fs::read_dir(&logs)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("round-") && n.ends_with(".log"))
        .collect();
    names.sort();
    let mut arrays = Vec::new();
    for name in names {
        let text = std::fs::read_to_string(logs.join(&name)).unwrap_or_default();
        for line in text.lines() {
            let Some((head, rest)) = line.split_once(" array: job ") else {
                continue;
            };
            let step = head.rsplit(' ').next().unwrap_or_default().to_string();
            let job = rest
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_string();
            arrays.push((step, job));
        }
    }
    arrays
}

/// `PROGRAM ARGS` (scontrol, scancel) on the test Slurm, which must succeed.
fn slurm_command(conf: &Path, program: &str, args: &[&str]) {
    let status = Command::new(program)
        .args(args)
        .env("SLURM_CONF", conf)
        .status()
        .unwrap();
    assert!(status.success(), "{program} {args:?}: {status}");
}

/// Jobs the test released from hold: cancelled when it ends, so that a
/// failing test leaves no held array behind in the shared Slurm (they have
/// ended by then when it passes).
struct Released<'a> {
    conf: &'a Path,
    jobs: Vec<String>,
}

impl Drop for Released<'_> {
    fn drop(&mut self) {
        if !self.jobs.is_empty() {
            let _ = Command::new("scancel")
                .args(&self.jobs)
                .env("SLURM_CONF", self.conf)
                .status();
        }
    }
}

/// `segmenter ARGS[0] CRAWL ARGS[1..]`'s stdout; it must exit 0.
fn segmenter_out(crawl: &Path, args: &[&str]) -> String {
    let mut cmd = Command::new(bins::bin_path("segmenter"));
    cmd.arg(args[0]).arg(crawl).args(&args[1..]);
    bins::run_within(&mut cmd, crawl, 0, Duration::from_secs(60)).stdout
}

/// A reduce task cancelled while it is still pending (the run's arrays are
/// submitted held, `sbatch --hold`; the test releases each one, and cancels
/// one task of the reduce first, that of a shard whose run waits for its
/// reduce, as `segmenter next --shard J` says): the round is not taken as
/// done; the driver says the reduce array failed and exits 1, and the
/// shard still waits for its reduce. The run's stdout and the round's
/// number.
fn a_reduce_cancelled_before_it_ran_fails_its_round(crawl: &Path, conf: &Path) -> (String, u64) {
    let journal = common::rounds::read(&CrawlDir::new(crawl)).unwrap();
    let round = journal.last().map_or(0, |r| r.number) + 1;
    let mut seen: BTreeSet<String> = arrays(crawl).into_iter().map(|(_, job)| job).collect();
    let mut cmd = Command::new(repo_root().join("scripts/slurm/crawl.sh"));
    cmd.arg(crawl)
        .args(["--rounds", "1", "--bin"])
        .arg(bins::bin_dir())
        .args(["--", "--hold"])
        .env("SLURM_CONF", conf);
    let run = bins::spawn(&mut cmd).expect("cannot start the driver");
    let mut released = Released {
        conf,
        jobs: Vec::new(),
    };
    let (mut fetched, mut cancelled) = (false, None);
    while cancelled.is_none() {
        let new = || {
            arrays(crawl)
                .into_iter()
                .find(|(_, job)| !seen.contains(job))
        };
        let (step, job) = wait_for(new).expect("the driver submitted no array");
        seen.insert(job.clone());
        if step == "reduce" && fetched {
            let behind = (0..4)
                .find(|&j| {
                    segmenter_out(crawl, &["next", "--shard", &j.to_string()])
                        .starts_with("reduce ")
                })
                .expect("no shard waits for its reduce");
            slurm_command(conf, "scancel", &[&format!("{job}_{behind}")]);
            cancelled = Some(behind);
        }
        fetched |= step == "fetch";
        released.jobs.push(job.clone());
        slurm_command(conf, "scontrol", &["release", &job]);
    }
    let driven = run.finish(Duration::from_secs(120));
    bins::assert_code(&driven, 1, Some(crawl));
    assert!(
        driven.stderr.contains("the reduce array"),
        "{}",
        driven.stderr
    );
    let behind = cancelled.unwrap();
    let answer = segmenter_out(crawl, &["next", "--shard", &behind.to_string()]);
    assert!(
        answer.starts_with(&format!("reduce - logs/round-{round:05}.log ")),
        "shard {behind}: {answer}"
    );
    let mut cmd = Command::new(bins::bin_path("segmenter"));
    cmd.arg("next").arg(crawl).args(["--shard", "4"]);
    let out = bins::run_within(&mut cmd, crawl, 2, Duration::from_secs(60));
    assert!(out.stderr.contains("numbered 0 to 3"), "{}", out.stderr);
    (driven.stdout, round)
}
