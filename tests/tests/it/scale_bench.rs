//! The scale benchmark (`scripts/bench-scale.sh`) run small, so that the
//! script and its web (`scale-web`, `testkit::scale`) cannot rot: a crawl
//! of 2,400 pages on 60 hosts with `crawl.sh`, the same with 4 shards under
//! the Slurm driver (when the test Slurm runs), and the fetcher alone over
//! the same URLs. It checks what a user of the benchmark checks, from the
//! files the crawls and the server left: each crawl ended by itself, every
//! URL a correct crawl fetches was fetched once and nothing else, and the
//! server saw no URL asked twice and no two requests to a host closer than
//! the delay. No figure of the benchmark is asserted.

use crate::slurm::slurm_conf;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use testkit::scale::{Node, ScaleParams, ScaleWeb};
use testkit::{TempDir, bins, files, repo_root};

const HOSTS: u32 = 60;
const PAGES: u32 = 40;

/// Every URL with an HTTP status in the crawl logs under `crawl` (robots.txt
/// left out), with the number of times it was fetched.
fn fetched(web: &ScaleWeb, crawl: &Path) -> BTreeMap<Node, usize> {
    let logs = files::snapshot(crawl, |rel| {
        let path = crawl.join(rel);
        path.is_file() && path.file_name().is_none_or(|n| n != "crawl.log")
    });
    assert!(!logs.is_empty(), "no crawl log under {}", crawl.display());
    let mut out = BTreeMap::new();
    for (log, bytes) in logs {
        for line in String::from_utf8_lossy(&bytes).lines() {
            let f: Vec<&str> = line.split('\t').collect();
            if f[1].parse::<u16>().is_err() || f[6] == "robots" {
                continue;
            }
            let node = web
                .node_of_url(f[5])
                .unwrap_or_else(|| panic!("{}: a URL not of the web: {line}", log.display()));
            *out.entry(node).or_default() += 1;
        }
    }
    out
}

#[test]
fn the_scale_benchmark_crawls_its_web_to_the_end_once_and_politely() {
    let dir = TempDir::new("scale-bench");
    let work = dir.join("work");
    let conf = slurm_conf();
    let mut cmd = Command::new("bash");
    cmd.arg(repo_root().join("scripts/bench-scale.sh"))
        .args(["--hosts", &HOSTS.to_string(), "--pages", &PAGES.to_string()])
        .args(["--per-round", "600", "--delay", "0.02", "--timeout", "600"])
        .args(["--shards", if conf.is_some() { "4" } else { "0" }])
        .arg("--bin")
        .arg(bins::bin_dir())
        .arg("--work")
        .arg(&work);
    match &conf {
        Some(conf) => cmd.env("SLURM_CONF", conf),
        None => cmd.env_remove("SLURM_CONF"),
    };
    let out = bins::run_within(&mut cmd, &work, 0, Duration::from_secs(900));
    // It printed its figures beside their targets.
    for line in [
        "targets:",
        "(target <= 1.3)",
        "(target < 10 s)",
        "(target <= 512 MB)",
    ] {
        assert!(out.stdout.contains(line), "{line}\n{}", out.stdout);
    }

    let web = ScaleWeb::new(ScaleParams {
        hosts: HOSTS,
        pages: PAGES,
        ..ScaleParams::default()
    });
    let expected: Vec<Node> = web.expected().fetched().map(|(n, _)| n).collect();
    // Both drivers ask `segmenter next`, which says how a crawl ended.
    let mut crawls = vec![("one", "nothing left to fetch in")];
    if conf.is_some() {
        crawls.push(("shards", "nothing left to fetch in"));
    }
    for (crawl, end) in crawls {
        let said = std::fs::read_to_string(work.join(format!("{crawl}.out"))).unwrap();
        assert!(said.contains(end), "{crawl} did not end by itself:\n{said}");
        let got = fetched(&web, &work.join(crawl));
        let twice: Vec<_> = got.iter().filter(|(_, n)| **n > 1).collect();
        assert!(
            twice.is_empty(),
            "{crawl}: fetched more than once: {twice:?}"
        );
        let missed: Vec<&Node> = expected.iter().filter(|n| !got.contains_key(n)).collect();
        assert!(missed.is_empty(), "{crawl}: not fetched: {missed:?}");
        assert_eq!(
            got.len(),
            expected.len(),
            "{crawl}: fetched what it should not"
        );
        let tally: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(work.join(format!("{crawl}.tally.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(tally["urls"], expected.len(), "{crawl}: {tally}");
        for fault in [
            "urls_asked_twice",
            "robots_asked_twice",
            "disallowed",
            "unknown",
            "overlaps",
            "too_close",
        ] {
            assert_eq!(tally[fault], 0, "{crawl}: {fault}: {tally}");
        }
    }
    // The reference fetched the same URLs in one run.
    let reference = fetched(&web, &work.join("ref"));
    assert_eq!(reference.len(), expected.len());
    assert!(work.join("ref/fetched/00001/DONE").is_file());
}
