//! A sharded crawl (`inject --shards 4`) of the demo web run to its end,
//! then what is made of it from every shard's files: the HTML report
//! (its figures are `segmenter status --json`'s totals; a row per shard),
//! the merged CDXJ index (every shard's captures) and the WACZ package
//! (`wacz validate` passes; WARC names unique across the shards).

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::Value;
use testkit::bins;
use testkit::warcio::{python_tool, run_tool};

use crate::archive_tools::unzip;
use crate::report_html::{
    assert_self_contained, browse, build_report, log_and_report_figures, round_row,
    round_summaries, segmenter, table_row, text_of,
};
use crate::support::DemoCrawl;

#[test]
fn a_sharded_crawls_report_index_and_package_cover_every_shard() {
    let c = DemoCrawl::start(
        "sharded-outputs",
        &crate::shards::demo(),
        crate::shards::settings(),
    );
    bins::run(
        &mut segmenter(&[
            "inject".as_ref(),
            c.crawl.as_os_str(),
            c.seeds.as_os_str(),
            "--shards".as_ref(),
            "4".as_ref(),
        ]),
        &c.crawl,
    );
    let rounds = crate::shards::crawl_to_the_end(&c, 4);
    reduce_reports_carry_the_map_counts(&c);
    report_adds_up_every_shard(&c, rounds);
    index_and_package_cover_every_shard(&c);
}

/// The JSON reports of `reduce` in `logs`, oldest first.
fn reduce_reports(logs: &std::path::Path) -> Vec<Value> {
    crate::support::segmenter_reports(logs)
        .iter()
        .map(|p| serde_json::from_str::<Value>(&std::fs::read_to_string(p).unwrap()).unwrap())
        .filter(|v| v["command"] == "reduce")
        .collect()
}

/// Each map's counts (`mapped/counts.json`: links found, rejects by
/// reason, as its log line says) are in the round report of the reduce of
/// the run's own shard (version 2), each once.
fn reduce_reports_carry_the_map_counts(c: &DemoCrawl) {
    let top = common::crawldir::CrawlDir::new(&c.crawl);
    let (mut links, mut rejects) = (0, 0);
    for j in 0..4 {
        let view = top.shard(j);
        let runs = view.completed_runs().unwrap();
        let mut counted = Vec::new();
        for report in reduce_reports(&view.logs_dir()) {
            assert_eq!(report["version"], 2, "{report}");
            let mapped: Vec<String> = report["mapped"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().to_string())
                .collect();
            for key in [
                "/links",
                "/records",
                "/html_pages",
                "/rejects/scope",
                "/rejects/too-long",
            ] {
                let n: u64 = mapped
                    .iter()
                    .map(|id| {
                        map_counts(&view, id)
                            .pointer(key)
                            .unwrap()
                            .as_u64()
                            .unwrap()
                    })
                    .sum();
                let got = report["counts"].pointer(key).unwrap().as_u64().unwrap();
                assert_eq!(got, n, "shard {j}, {key}: {report}");
            }
            links += report["counts"]["links"].as_u64().unwrap();
            rejects += report["counts"]["rejects"]
                .as_object()
                .unwrap()
                .values()
                .map(|n| n.as_u64().unwrap())
                .sum::<u64>();
            counted.extend(mapped);
        }
        counted.sort();
        assert_eq!(counted, runs, "shard {j}: every run's map counted once");
        // The map's log line says the same number of links.
        let logs: String = std::fs::read_dir(view.logs_dir())
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "log"))
            .map(|p| std::fs::read_to_string(p).unwrap())
            .collect();
        for id in &runs {
            let said = format!("WARC record(s), {} link(s)", map_counts(&view, id)["links"]);
            assert!(
                logs.lines()
                    .any(|l| l.contains(&format!("fetched/{id}:")) && l.contains(&said)),
                "shard {j}, run {id}: no map log line with {said:?}"
            );
        }
    }
    assert!(
        links > 50 && rejects > 0,
        "{links} links, {rejects} rejects"
    );
}

/// The counts of shard `view`'s map of run `id`.
fn map_counts(view: &common::crawldir::CrawlDir, id: &str) -> Value {
    let path = view.fetched_dir(id).join("mapped/counts.json");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(v["version"], 1, "{}", path.display());
    assert_eq!(v["run"], id);
    v["counts"].clone()
}

/// The cells of the shard table's row of shard `j`.
fn shard_row(html: &str, j: u64) -> Vec<String> {
    table_row(html, "shard", j)
}

/// `segmenter report`: every figure is the shards' together, as
/// `segmenter status --json` totals them, and each shard has its row.
fn report_adds_up_every_shard(c: &DemoCrawl, rounds: usize) {
    build_report(&c.crawl);
    let page = c.crawl.join("report.html");
    // The first report read every shard's logs and reports whole and left
    // a summary of each run; the next one, built from them, is the same.
    let from_logs = std::fs::read_to_string(&page).unwrap();
    let shard0 = c.crawl.join("shards/000");
    let run = common::crawldir::CrawlDir::new(&shard0)
        .completed_runs()
        .unwrap()[0]
        .clone();
    for f in round_summaries(&shard0, &run) {
        assert!(f.is_file(), "{} was not written", f.display());
    }
    build_report(&c.crawl);
    assert_eq!(
        log_and_report_figures(&std::fs::read_to_string(&page).unwrap()),
        log_and_report_figures(&from_logs)
    );
    assert_self_contained(&std::fs::read_to_string(&page).unwrap());
    // What a browser shows of it.
    let html = browse(c.scratch.path(), &page, &["--dump-dom".into()]).stdout;
    assert!(
        !html.contains("id=\"problems\""),
        "{}",
        text_of(&html, "problems")
    );
    let status = crate::support::status_json(&c.crawl);
    let totals = &status["totals"];
    let per_shard = status["per_shard"].as_array().unwrap();
    assert_eq!(per_shard.len(), 4);
    assert_eq!(text_of(&html, "shards"), "4");
    assert_eq!(
        text_of(&html, "backlog"),
        totals["backlog_urls"].to_string()
    );
    assert_eq!(
        text_of(&html, "history"),
        totals["history_urls"].to_string()
    );
    assert_eq!(text_of(&html, "due"), totals["due_urls"].to_string());
    assert_eq!(text_of(&html, "pending"), totals["pending"].to_string());
    assert!(totals["history_urls"].as_u64().unwrap() > 30, "{totals}");
    assert!(
        text_of(&html, "seen-now")
            .starts_with(&format!("Seen-set now: {} URLs", totals["bloom_items"])),
        "{}",
        text_of(&html, "seen-now")
    );
    // Pages: every shard's crawl logs (HTTP responses but robots.txt).
    let top = common::crawldir::CrawlDir::new(&c.crawl);
    let mut pages = 0;
    let mut hosts = 0;
    let mut most_runs = 0;
    for (j, s) in per_shard.iter().enumerate() {
        let view = top.shard(j as u32);
        let shard_pages = crate::support::Outcome::read(view.root()).pages_logged();
        let shard_hosts = common::hoststate::HostDb::open_read_only(view.hosts_db_path())
            .unwrap()
            .map_or(0, |db| db.overview(1, 0).unwrap().hosts);
        let runs = view.completed_runs().unwrap().len();
        let row = shard_row(&html, j as u64);
        assert_eq!(row[0], format!("{j:03}"));
        assert_eq!(row[1], runs.to_string(), "shard {j}: {row:?}");
        assert_eq!(row[2], shard_pages.to_string(), "shard {j}: {row:?}");
        assert_eq!(row[3], s["pending"].as_array().unwrap().len().to_string());
        assert_eq!(row[7], s["backlog_urls"].to_string(), "shard {j}: {row:?}");
        assert_eq!(row[8], s["history_urls"].to_string(), "shard {j}: {row:?}");
        assert_eq!(row[10], s["bloom_items"].to_string(), "shard {j}: {row:?}");
        assert_eq!(row[12], shard_hosts.to_string(), "shard {j}: {row:?}");
        // A shard's last round is its last reduce.
        assert!(
            s["last_round"]
                .as_str()
                .is_some_and(|n| n.starts_with("segmenter-")),
            "shard {j}: {s}"
        );
        pages += shard_pages;
        hosts += shard_hosts;
        most_runs = most_runs.max(runs);
    }
    assert!(pages > 30, "{pages} pages");
    assert_eq!(text_of(&html, "pages"), pages.to_string());
    assert_eq!(text_of(&html, "hosts"), hosts.to_string());
    assert_eq!(text_of(&html, "rounds"), most_runs.to_string());
    assert!(most_runs <= rounds, "{most_runs} of {rounds} rounds");
    // The rounds add up to the pages.
    let by_round: u64 = (1..=most_runs as u64)
        .map(|n| round_row(&html, n)[5].parse::<u64>().unwrap())
        .sum();
    assert_eq!(by_round, pages);
    // Each round's row carries its reduces' figures (scheduled URLs).
    assert_ne!(round_row(&html, 1)[11], "–");
    assert!(html.matches("<svg").count() >= 10, "charts in the page");
    eprintln!(
        "sharded report: {rounds} rounds, {pages} pages, {hosts} hosts, {} bytes",
        html.len()
    );
}

/// The WARC files and their indexes of every shard, shard 0 first.
fn shard_warcs(c: &DemoCrawl) -> Vec<(usize, PathBuf)> {
    let top = common::crawldir::CrawlDir::new(&c.crawl);
    let mut out = Vec::new();
    for j in 0..4 {
        let view = top.shard(j);
        for id in view.completed_runs().unwrap() {
            for w in testkit::warcio::warc_files(&view.fetched_dir(&id)) {
                out.push((j as usize, w));
            }
        }
    }
    out
}

/// `segmenter index` and `segmenter wacz`: every shard's captures, under
/// names unique across the shards (a name taken twice is made so here:
/// shard 1's first file renamed to shard 0's first file's name).
fn index_and_package_cover_every_shard(c: &DemoCrawl) {
    let warcs = shard_warcs(c);
    let shards: BTreeSet<usize> = warcs.iter().map(|(j, _)| *j).collect();
    assert!(shards.len() >= 2, "WARC files in shards {shards:?}");
    let (_, first) = warcs
        .iter()
        .find(|(j, _)| *j == 0)
        .expect("a file in shard 0");
    let (_, other) = warcs
        .iter()
        .find(|(j, _)| *j == 1)
        .expect("a file in shard 1");
    let taken = first.file_name().unwrap().to_string_lossy().into_owned();
    let twin = other.with_file_name(&taken);
    std::fs::rename(other, &twin).unwrap();
    let old_index = common::warc::cdxj::index_path(other);
    std::fs::remove_file(&old_index).unwrap();
    let warcs = shard_warcs(c);

    let out = c.scratch.path().join("sharded.cdxj");
    bins::run(
        bins::segmenter_cmd()
            .arg("index")
            .arg(&c.crawl)
            .arg("--out")
            .arg(&out),
        &c.crawl,
    );
    let merged = std::fs::read_to_string(&out).unwrap();
    let mut captures = 0;
    for (_, w) in &warcs {
        let index = common::warc::cdxj::index_path(w);
        captures += std::fs::read_to_string(&index)
            .unwrap_or_else(|e| panic!("{}: {e}", index.display()))
            .lines()
            .count();
    }
    assert!(captures > 50, "{captures} captures");
    assert_eq!(merged.lines().count(), captures);
    let lines: Vec<&str> = merged.lines().collect();
    assert!(lines.windows(2).all(|w| w[0] <= w[1]), "sorted");
    let filename = |l: &str| -> String {
        let v: Value = serde_json::from_str(&l[l.find('{').unwrap()..]).unwrap();
        v["filename"].as_str().unwrap().to_string()
    };
    let named: BTreeSet<String> = lines.iter().map(|l| filename(l)).collect();
    let renamed = taken.replace(".warc.gz", "-s001.warc.gz");
    assert!(
        named.contains(&taken) && named.contains(&renamed),
        "{named:?}"
    );
    assert_eq!(named.len(), warcs.len(), "every file's captures");

    let package = c.scratch.path().join("sharded.wacz");
    bins::run(
        bins::segmenter_cmd()
            .arg("wacz")
            .arg(&c.crawl)
            .arg("--out")
            .arg(&package),
        &c.crawl,
    );
    let validate = run_tool(
        &python_tool("wacz", "WACZ"),
        &["validate".as_ref(), "-f".as_ref(), package.as_os_str()],
    );
    let said = String::from_utf8_lossy(&validate.stdout);
    assert!(
        validate.status.success() && said.contains("Validation succeeded"),
        "{said}\n{}",
        String::from_utf8_lossy(&validate.stderr)
    );
    assert_eq!(unzip(&package, "indexes/index.cdxj"), merged);
    let listed = unzip(&package, "datapackage.json");
    let v: Value = serde_json::from_str(&listed).unwrap();
    let archived: BTreeSet<String> = v["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| {
            r["path"]
                .as_str()?
                .strip_prefix("archive/")
                .map(str::to_string)
        })
        .collect();
    assert_eq!(archived, named);
}
