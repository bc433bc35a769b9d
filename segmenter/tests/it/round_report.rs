//! The round's report kept as JSON (`logs/segmenter-TIMESTAMP.json`) and
//! the last round's figures that `segmenter status` reads from it.

use crate::support;

use std::fs;
use std::path::PathBuf;

use serde_json::Value;
use support::*;
use testkit::bins;

/// The JSON reports in `logs/`, oldest first.
fn reports(crawl: &TempCrawl) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(crawl.dir.logs_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with("segmenter-") && name.ends_with(".json")
        })
        .collect();
    files.sort();
    files
}

fn read_json(path: &std::path::Path) -> Value {
    let text = fs::read_to_string(path).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", path.display()))
}

/// `segmenter status CRAWL --json`: the object and stderr.
fn status_json(crawl: &TempCrawl) -> (Value, String) {
    let root = crawl.root().to_str().unwrap();
    let out = bins::run(
        &mut segmenter_cmd(&["status", root, "--json"]),
        crawl.root(),
    );
    assert_eq!(out.stdout.lines().count(), 1, "one line: {}", out.stdout);
    (serde_json::from_str(&out.stdout).unwrap(), out.stderr)
}

const ROUND_KEYS: [&str; 24] = [
    "last_round",
    "round_new_urls",
    "round_scheduled",
    "round_history_new",
    "round_refreshed_unchanged",
    "round_refreshed_changed",
    "round_retired",
    "round_sitemaps_read",
    "round_sitemap_urls",
    "round_sitemap_urls_new",
    "round_sitemap_urls_rejected",
    "round_bad_sitemaps",
    "round_retries_exhausted",
    "round_held_urls",
    "round_over_page_cap",
    "round_rejected_extension",
    "round_capped_urls",
    "round_cut_segment_size_urls",
    "round_cut_crawl_pages_urls",
    "round_waiting_links",
    "round_waiting_score_p50",
    "round_waiting_score_p90",
    "round_waiting_score_p99",
    "round_waiting_score_max",
];

fn sitemap(url: &str, entries: &[&str]) -> Page {
    let mut body = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    for e in entries {
        body.push_str(&format!("<url><loc>{e}</loc></url>\n"));
    }
    body.push_str("</urlset>\n");
    Page {
        url: url.to_string(),
        status: 200,
        content_type: Some("application/xml".into()),
        location: None,
        body: body.into_bytes(),
        hops: 0,
        via: "sitemap-file",
        headers: Vec::new(),
    }
}

#[test]
fn status_shows_the_last_runs_figures_from_its_json_report() {
    let crawl = TempCrawl::new("round-report");

    // Before any round: no figures, and nothing said about it.
    let (v, stderr) = status_json(&crawl);
    for key in ROUND_KEYS {
        assert_eq!(v[key], Value::Null, "{key} before any round: {v}");
    }
    assert_eq!(stderr, "");

    // `inject` keeps its report too, but it is not a round's.
    inject(&crawl, "http://a.test/\n", &[]);
    let files = reports(&crawl);
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(read_json(&files[0])["command"], "inject");
    let (v, _) = status_json(&crawl);
    assert_eq!(v["last_round"], Value::Null, "{v}");

    // A round that read a page and a sitemap listing two new URLs of its
    // host and one of another host (not taken).
    let pages = [
        Page::html("http://a.test/", 0, &["/1"]),
        sitemap(
            "http://a.test/sitemap.xml",
            &["http://a.test/s1", "http://a.test/s2", "http://b.test/x"],
        ),
    ];
    write_done(&crawl, "00001", &pages);
    let text = run_round(&crawl, &[]);
    let files = reports(&crawl);
    assert_eq!(files.len(), 2, "{files:?}");
    let path = &files[1];
    let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
    // Beside the log of the same run, which holds the same report as text.
    let log = fs::read_to_string(path.with_extension("log")).unwrap();
    assert!(log.contains("sitemap urls new:"), "{log}");

    let r = read_json(path);
    assert_eq!(r["version"], 2);
    assert_eq!(r["command"], "run");
    // Only a reduce's report lists the runs whose map counts it holds.
    assert_eq!(r["mapped"], serde_json::json!([]));
    assert_eq!(r["consumed"], serde_json::json!(["00001"]));
    assert_eq!(r["counts"]["sitemaps_read"]["urlset"], 1);
    assert_eq!(r["counts"]["sitemap_urls"], 3);
    assert_eq!(r["counts"]["sitemap_new"], 2);
    assert_eq!(r["totals"]["sitemaps_read"], 1);
    assert_eq!(r["totals"]["sitemap_urls_rejected"], 1);
    assert_eq!(
        r["counts"]["rejects"]["scope"],
        figure(&text, "rejected scope:")
    );
    assert_eq!(r["selection"]["new"], figure(&text, "new urls:"));
    assert_eq!(r["history"]["new"], figure(&text, "fetched new:"));
    assert!(r["history"]["new"].as_u64().unwrap() >= 1, "{r}");
    assert_eq!(r["segments"][0]["id"], "00002");
    assert_eq!(r["segments"][0]["urls"], figure(&text, "segment 00002:"));
    assert!(r["elapsed"].as_f64().unwrap() > 0.0, "{r}");

    // `status` reads it: JSON and text.
    let (v, stderr) = status_json(&crawl);
    assert_eq!(stderr, "");
    assert_eq!(v["last_round"], stem.as_str());
    assert_eq!(v["round_sitemaps_read"], 1);
    assert_eq!(v["round_sitemap_urls"], 3);
    assert_eq!(v["round_sitemap_urls_new"], 2);
    assert_eq!(v["round_sitemap_urls_rejected"], 1);
    assert_eq!(v["round_bad_sitemaps"], 0);
    assert_eq!(v["round_history_new"], r["history"]["new"]);
    assert_eq!(v["round_refreshed_unchanged"], 0);
    assert_eq!(v["round_refreshed_changed"], 0);
    assert_eq!(v["round_retired"], 0);
    assert_eq!(v["round_new_urls"], r["selection"]["new"]);
    assert_eq!(v["round_scheduled"], r["selection"]["scheduled"]);
    let root = crawl.root().to_str().unwrap();
    let out = bins::run(&mut segmenter_cmd(&["status", root]), crawl.root()).stdout;
    assert!(out.contains(&format!("\nlast_round: {stem}\n")), "{out}");
    assert!(out.contains("\nround_sitemaps_read: 1\n"), "{out}");
    assert!(out.contains("\nround_sitemap_urls_new: 2\n"), "{out}");

    // A run with nothing to do commits nothing and keeps no report.
    let text = run_round(&crawl, &[]);
    assert!(text.contains("nothing to do"), "{text}");
    assert_eq!(reports(&crawl).len(), 2);

    // A newer report that cannot be read: no figures (never an older
    // round's), and stderr names the file.
    let bad = crawl
        .dir
        .logs_dir()
        .join("segmenter-99990101000000000.json");
    fs::write(&bad, "{\"version\":1,\"command\":\"run\"").unwrap();
    let (v, stderr) = status_json(&crawl);
    for key in ROUND_KEYS {
        assert_eq!(v[key], Value::Null, "{key} with a damaged report: {v}");
    }
    assert!(
        stderr.contains(bad.to_str().unwrap()) && stderr.contains("not a round report"),
        "{stderr}"
    );
    fs::remove_file(&bad).unwrap();
    let (v, _) = status_json(&crawl);
    assert_eq!(v["last_round"], stem.as_str());
}

/// The names of the files in `logs/`, sorted.
fn log_names(crawl: &TempCrawl) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(crawl.dir.logs_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Runs that did nothing leave no log file; `--log FILE` appends a run's
/// log to FILE (the report is still kept); `segmenter prune` removes the
/// programs' files in `logs/` past their retention, but for the newest
/// report of a `run`, and never a file of someone else.
#[test]
fn logs_are_kept_by_runs_that_did_something_and_pruned_after_their_retention() {
    let crawl = TempCrawl::new("logs-prune");
    inject(&crawl, "http://a.test/\n", &[]);
    write_done(
        &crawl,
        "00001",
        &[Page::html("http://a.test/", 0, &["/b", "/c"])],
    );
    run_round(&crawl, &[]);
    let before = log_names(&crawl);
    assert_eq!(
        before.len(),
        4,
        "inject and run: a log and a report each: {before:?}"
    );

    let text = run_round(&crawl, &[]);
    assert!(text.contains("nothing to do"), "{text}");
    assert_eq!(
        log_names(&crawl),
        before,
        "a run with nothing to do leaves no file"
    );

    // --log: the run's lines go to the given file, named by program.
    mark_fetched_empty(&crawl, "00002");
    let given = crawl.side("round.log");
    fs::write(&given, "=== a step\n").unwrap();
    run_round(&crawl, &["--log", given.to_str().unwrap()]);
    let after = log_names(&crawl);
    assert_eq!(after.len(), before.len() + 1, "one more report: {after:?}");
    assert!(
        after
            .iter()
            .all(|n| before.contains(n) || n.ends_with(".json"))
    );
    let text = fs::read_to_string(&given).unwrap();
    assert!(text.starts_with("=== a step\n"), "{text}");
    assert!(
        text.lines()
            .any(|l| l.contains(" info segmenter: reading 1 fetched run(s) (00002)")),
        "{text}"
    );
    assert!(text.contains("runs consumed:"), "the report: {text}");

    // Everything 40 days old, and a file of the user's.
    fs::write(crawl.dir.logs_dir().join("cron.log"), "mine\n").unwrap();
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(40 * 86_400);
    for name in log_names(&crawl) {
        let f = fs::File::options()
            .write(true)
            .open(crawl.dir.logs_dir().join(&name))
            .unwrap();
        f.set_modified(old).unwrap();
    }
    let root = crawl.root().to_str().unwrap();
    let newest_report = reports(&crawl).pop().unwrap();
    let newest_report = newest_report
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    // A retention of 0 keeps everything; a dry run removes nothing.
    let out = bins::run(
        &mut segmenter_cmd(&["prune", root, "--keep-logs", "0"]),
        crawl.root(),
    );
    assert_eq!(out.stdout, "");
    let out = bins::run(
        &mut segmenter_cmd(&["prune", root, "--dry-run"]),
        crawl.root(),
    );
    assert!(
        out.stdout.starts_with("would remove 4 file(s) of "),
        "{}",
        out.stdout
    );
    assert_eq!(log_names(&crawl).len(), after.len() + 1);
    // The default retention (30 days).
    let out = bins::run(&mut segmenter_cmd(&["prune", root]), crawl.root());
    assert!(
        out.stdout.starts_with("removed 4 file(s) of ") && out.stdout.contains("30 day(s)"),
        "{}",
        out.stdout
    );
    assert_eq!(log_names(&crawl), ["cron.log".to_string(), newest_report]);
    // status still shows the last round's figures.
    let (v, _) = status_json(&crawl);
    assert!(v["round_scheduled"].is_u64(), "{v}");
}

/// A `run` that consumed no fetched run and wrote no segment (the backlog
/// only went round: its host may not be asked yet) keeps no JSON report,
/// as a run with nothing to do keeps none; `segmenter status` still shows
/// the figures of the last run that did something.
#[test]
fn a_run_that_only_carried_the_backlog_keeps_no_report() {
    use common::hoststate::{HostDb, HostState};
    let crawl = TempCrawl::new("backlog-only");
    // Over a day away: a.test waits in the backlog whole.
    let now = common::timefmt::unix_millis(std::time::SystemTime::now());
    let mut db = HostDb::open(crawl.dir.hosts_db_path()).unwrap();
    db.put_many(&[HostState {
        host: "a.test".into(),
        next_contact_ms: Some(now + 86_400_000),
        ..HostState::default()
    }])
    .unwrap();
    drop(db);
    inject(&crawl, "http://a.test/\nhttp://b.test/\n", &[]);
    mark_fetched_empty(&crawl, "00001");
    run_round(&crawl, &[]);
    assert_eq!(backlog(&crawl).len(), 1, "a.test's seed waits");
    let kept = reports(&crawl);
    let text = run_round(&crawl, &[]);
    assert!(text.contains("backlog in:            1"), "{text}");
    assert_eq!(reports(&crawl), kept, "{text}");
    let (v, _) = status_json(&crawl);
    assert_eq!(
        v["last_round"],
        kept.last().unwrap().file_stem().unwrap().to_str().unwrap()
    );
}
