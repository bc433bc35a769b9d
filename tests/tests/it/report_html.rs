//! `segmenter report`: the HTML report of a real crawl (the real fetcher on
//! the demo web on loopback), opened in a real headless Chromium: the
//! screenshot shows drawn charts, and the figures in the page (through
//! `--dump-dom`) are those of `segmenter status --json` and the round
//! reports. Also: a crawl of one round, an empty one, damaged and missing
//! round reports, and a page that asks for nothing outside itself.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use testkit::bins::{self, Finished, report};
use testkit::demo::{Demo, DemoParams};

use testkit::tempdir::TempDir;

use crate::support::{self, CrawlSettings, DemoCrawl};

/// The longest a browser may take to render the page.
const BROWSER_TIMEOUT: Duration = Duration::from_secs(90);

/// The browser: `$CHROMIUM` (set by scripts/test.sh, which installs
/// Debian's `chromium`), else `chromium` on the PATH.
fn chromium() -> PathBuf {
    if let Some(p) = std::env::var_os("CHROMIUM") {
        return PathBuf::from(p);
    }
    assert!(
        support::on_path("chromium"),
        "chromium is not installed: run the tests with scripts/test.sh, which installs it \
         (apt-get install chromium)"
    );
    PathBuf::from("chromium")
}

/// Chromium, headless, with a scratch profile under `dir` and every host
/// name mapped to nothing (no DNS query, no connection), on `page`, with
/// `args` (`--screenshot=...` or `--dump-dom`).
pub(crate) fn browse(dir: &Path, page: &Path, args: &[String]) -> Finished {
    let profile = dir.join(format!("chromium-profile-{}", args.len()));
    let mut cmd = Command::new(chromium());
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-extensions",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-default-apps",
        "--hide-scrollbars",
        "--host-resolver-rules=MAP * ~NOTFOUND",
    ])
    .arg(format!("--user-data-dir={}", profile.display()))
    .args(args)
    .arg(format!("file://{}", page.display()));
    let out = bins::run_with_timeout(&mut cmd, BROWSER_TIMEOUT).unwrap();
    bins::assert_code(&out, 0, Some(dir));
    out
}

pub(crate) fn segmenter(args: &[&std::ffi::OsStr]) -> Command {
    let mut cmd = Command::new(bins::bin_path("segmenter"));
    cmd.args(args);
    cmd
}

/// `segmenter report CRAWL` (to CRAWL/report.html): its stdout.
pub(crate) fn build_report(crawl: &Path) -> String {
    bins::run(
        &mut segmenter(&["report".as_ref(), crawl.as_os_str()]),
        crawl,
    )
    .stdout
}

/// The text of the element with `id` in `html` (tags inside removed).
pub(crate) fn text_of(html: &str, id: &str) -> String {
    let at = html
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no element with id {id} in the page"));
    let start = at + html[at..].find('>').unwrap() + 1;
    let end = start + html[start..].find("</").unwrap();
    html[start..end].trim().to_string()
}

/// The cells of the rounds table's row of round `n`.
pub(crate) fn round_row(html: &str, n: u64) -> Vec<String> {
    table_row(html, "round", n)
}

/// The cells of the table row marked `data-WHAT="n"`.
pub(crate) fn table_row(html: &str, what: &str, n: u64) -> Vec<String> {
    let at = html
        .find(&format!("<tr data-{what}=\"{n}\">"))
        .unwrap_or_else(|| panic!("no row for {what} {n} in the page"));
    let row = &html[at..at + html[at..].find("</tr>").unwrap()];
    row.split("<td")
        .skip(1)
        .map(|c| {
            let c = &c[c.find('>').unwrap() + 1..];
            c[..c.find("</td>").unwrap()].to_string()
        })
        .collect()
}

/// The values of every `src` and `href` attribute in `html`.
fn links(html: &str) -> Vec<String> {
    let mut found = Vec::new();
    for attr in [" src=", " href=", " xlink:href="] {
        for (i, _) in html.match_indices(attr) {
            let rest = &html[i + attr.len()..];
            let value = match rest.chars().next() {
                Some(q @ ('"' | '\'')) => rest[1..].split(q).next().unwrap_or(""),
                _ => rest.split([' ', '>']).next().unwrap_or(""),
            };
            found.push(value.to_string());
        }
    }
    found
}

/// The page makes no request outside itself: no script, stylesheet, font or
/// frame; no `src`/`href` naming another host; links are relative paths.
pub(crate) fn assert_self_contained(html: &str) {
    for value in links(html) {
        let v = value.trim().to_ascii_lowercase();
        assert!(
            !v.starts_with("http:") && !v.starts_with("https:") && !v.starts_with("//"),
            "a link out of the file: {value}"
        );
        assert!(!v.starts_with('/'), "an absolute path: {value}");
    }
    let lower = html.to_ascii_lowercase();
    for banned in ["<script", "<link", "<iframe", "@import", "url("] {
        assert!(!lower.contains(banned), "the page holds {banned}");
    }
}

/// The round reports (`run`) of the crawl, by the fetched run each consumed.
fn run_reports(crawl: &Path) -> Vec<(PathBuf, Value)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(crawl.join("logs")).unwrap() {
        let path = e.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("segmenter-") && name.ends_with(".json") {
            let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            if v["command"] == "run" {
                out.push((path, v));
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Pixels of `png` near `rgb` (each channel within 12), and pixels that are
/// not near white.
fn pixels(png_path: &Path, rgb: [u8; 3]) -> (usize, usize, usize) {
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(png_path).unwrap(),
    ));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let step = info.color_type.samples();
    assert!(step >= 3, "a colour screenshot, not {:?}", info.color_type);
    let (mut near, mut ink, mut all) = (0, 0, 0);
    for px in buf[..info.buffer_size()].chunks_exact(step) {
        all += 1;
        if px[..3].iter().zip(rgb).all(|(&a, b)| a.abs_diff(b) <= 12) {
            near += 1;
        }
        if px[..3].iter().any(|&c| c < 235) {
            ink += 1;
        }
    }
    (near, ink, all)
}

fn small_demo() -> Demo {
    Demo::with_params(DemoParams {
        crawl_delay: 0.2,
        ..DemoParams::small(28)
    })
}

/// A damaged round report (and none other left) and a damaged
/// `stats.json` of the first round (`first_segment`): each named once,
/// in the page and on stderr, the rest of the page shown (`pages`).
fn damaged_files_are_named_once(
    crawl: &Path,
    reports: &[(PathBuf, Value)],
    page: &Path,
    first_segment: &str,
    pages: u64,
) {
    std::fs::write(
        &reports[1].0,
        "{\"version\": 1, \"command\": \"run\", cut here",
    )
    .unwrap();
    std::fs::write(
        crawl.join(format!("fetched/{first_segment}/stats.json")),
        "",
    )
    .unwrap();
    let out = bins::run(
        &mut segmenter(&["report".as_ref(), crawl.as_os_str()]),
        crawl,
    );
    let html = std::fs::read_to_string(page).unwrap();
    let damaged = reports[1]
        .0
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let problems = text_of(&html.replace("<p>", "").replace("<ul>\n", ""), "problems");
    assert!(
        html.contains(&format!("logs/{damaged}: not a round report")),
        "{problems}"
    );
    assert!(html.contains("rounds 1, 2: no round report"), "{problems}");
    assert_eq!(html.matches("no round report").count(), 1, "{problems}");
    assert_eq!(
        out.stderr.matches("no round report").count(),
        1,
        "{}",
        out.stderr
    );
    assert!(
        html.contains("stats.json: not the fetcher&#39;s stats"),
        "{problems}"
    );
    assert!(out.stderr.contains("not a round report"), "{}", out.stderr);
    assert_eq!(text_of(&html, "rounds"), "2");
    assert_eq!(text_of(&html, "pages"), pages.to_string());
    assert_eq!(round_row(&html, 1)[13], "–");
    assert_self_contained(&html);
}

/// The page's sections that come from the crawl logs, the round reports
/// and the fetch stats: the crawl over time, outcomes, politeness and
/// where to look next (the hosts' section and the state's health depend
/// on when the page is built).
pub(crate) fn log_and_report_figures(html: &str) -> String {
    let section = |id: &str| {
        let at = html
            .find(&format!("<h2 id=\"{id}\""))
            .unwrap_or_else(|| panic!("no section {id} in the page"));
        let end = html[at + 4..]
            .find("<h2")
            .map_or(html.len(), |e| at + 4 + e);
        html[at..end].to_string()
    };
    ["over-time", "outcomes", "politeness", "next"]
        .map(section)
        .concat()
}

/// The summaries of fetched run `id` of `crawl` the report keeps.
pub(crate) fn round_summaries(crawl: &Path, id: &str) -> [PathBuf; 2] {
    ["crawl-log-summary.v1.json", "round-report-summary.v1.json"]
        .map(|name| crawl.join("fetched").join(id).join(name))
}

/// crawl.sh's reports left a summary of each round's crawl log and round
/// report beside the round's fetched run (`segments`): the page built from
/// them is the page built from the logs and reports read whole (every
/// summary removed); a damaged summary is named on stderr and rebuilt; a
/// crawl log newer than its summary is read again.
fn round_summaries_give_the_figures_of_whole_reads(crawl: &Path, page: &Path, segments: &[String]) {
    let report = || {
        let out = bins::run(
            &mut segmenter(&["report".as_ref(), crawl.as_os_str()]),
            crawl,
        );
        (out.stderr, std::fs::read_to_string(page).unwrap())
    };
    let all: Vec<PathBuf> = segments
        .iter()
        .flat_map(|id| round_summaries(crawl, id))
        .collect();
    for f in &all {
        assert!(f.is_file(), "{} was not written", f.display());
    }
    let (stderr, from_summaries) = report();
    assert!(!stderr.contains("rebuilt"), "{stderr}");
    for f in &all {
        std::fs::remove_file(f).unwrap();
    }
    let (_, from_logs) = report();
    assert_eq!(
        log_and_report_figures(&from_summaries),
        log_and_report_figures(&from_logs)
    );
    assert!(all.iter().all(|f| f.is_file()), "summaries written again");

    let [log_summary, _] = round_summaries(crawl, &segments[0]);
    let [_, report_summary] = round_summaries(crawl, &segments[1]);
    std::fs::write(&log_summary, "{\"version\": 1, \"crawl_log\": cut here").unwrap();
    std::fs::write(&report_summary, "").unwrap();
    let (stderr, repaired) = report();
    for (f, from) in [
        (&log_summary, "crawl.log"),
        (&report_summary, "round reports"),
    ] {
        let name = f.strip_prefix(crawl).unwrap().display().to_string();
        let said = stderr.lines().find(|l| l.contains(&name));
        assert!(
            said.is_some_and(|l| l.contains("damaged")
                && l.contains("rebuilt")
                && l.contains(from)),
            "{name} not named as damaged and rebuilt from its {from}:\n{stderr}"
        );
        let v: Value = serde_json::from_slice(&std::fs::read(f).unwrap()).unwrap();
        assert_eq!(v["version"], 1, "{} rebuilt", f.display());
    }
    assert_eq!(
        log_and_report_figures(&repaired),
        log_and_report_figures(&from_logs)
    );

    // The first round's log gets one more line (a copy of its first): the
    // page counts it, though that round's summary is older.
    let lines_read = |html: &str| -> u64 {
        let at = html
            .find("(their crawl.log, ")
            .expect("the media types' note")
            + 18;
        html[at..].split(' ').next().unwrap().parse().unwrap()
    };
    let log = crawl.join("fetched").join(&segments[0]).join("crawl.log");
    let text = std::fs::read_to_string(&log).unwrap();
    let first = text.lines().next().unwrap();
    std::fs::write(&log, format!("{text}{first}\n")).unwrap();
    let (_, longer) = report();
    assert_eq!(lines_read(&longer), lines_read(&from_logs) + 1);
    std::fs::write(&log, text).unwrap();
}

/// `segmenter prune` removes old round reports (here the first round's:
/// it keeps the newest): an expected gap, said in a note under the round
/// table, without a warning; the round's row still shows the journal's
/// figures (`first_round_pages`).
fn pruned_round_reports_are_a_note(
    crawl: &Path,
    reports: &[(PathBuf, Value)],
    page: &Path,
    first_round_pages: u64,
) {
    let two_days_ago = std::time::SystemTime::now() - Duration::from_secs(2 * 86_400);
    for e in std::fs::read_dir(crawl.join("logs")).unwrap() {
        let file = std::fs::File::options()
            .write(true)
            .open(e.unwrap().path())
            .unwrap();
        file.set_modified(two_days_ago).unwrap();
    }
    bins::run(
        &mut segmenter(&[
            "prune".as_ref(),
            crawl.as_os_str(),
            "--keep-logs".as_ref(),
            "1d".as_ref(),
        ]),
        crawl,
    );
    assert!(!reports[0].0.exists() && reports[1].0.exists());
    let out = bins::run(
        &mut segmenter(&["report".as_ref(), crawl.as_os_str()]),
        crawl,
    );
    assert!(!out.stderr.contains("round report"), "{}", out.stderr);
    let html = std::fs::read_to_string(page).unwrap();
    assert!(
        !html.contains("id=\"problems\""),
        "{}",
        text_of(&html, "problems")
    );
    assert!(
        text_of(&html, "pruned-reports")
            .starts_with("Of the 2 rounds, round 1 no longer has a round report"),
        "{}",
        text_of(&html, "pruned-reports")
    );
    assert_eq!(round_row(&html, 1)[5], first_round_pages.to_string());
}

#[test]
fn a_real_crawls_report_shows_its_figures_and_charts_in_a_browser() {
    let c = DemoCrawl::start("report-browser", &small_demo(), CrawlSettings::default());
    let out = c.run_crawl_sh(&["--rounds", "2"]);
    bins::assert_code(&out, 0, Some(&c.crawl));
    // crawl.sh rebuilt the page after each round.
    let page = c.crawl.join("report.html");
    assert!(
        page.is_file(),
        "crawl.sh left no report.html\n{}",
        report(&out, Some(&c.crawl))
    );
    let round2 = std::fs::read_to_string(c.crawl.join("logs/round-00002.log")).unwrap();
    assert!(round2.contains("report.html"), "{round2}");

    let printed = build_report(&c.crawl);
    assert!(
        printed.starts_with(&page.display().to_string()),
        "{printed}"
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert_self_contained(&html);

    // The figures the browser shows.
    let dom = browse(c.scratch.path(), &page, &["--dump-dom".into()]).stdout;
    let status = crate::support::status_json(&c.crawl);
    let journal = common::rounds::read(&common::crawldir::CrawlDir::new(&c.crawl)).unwrap();
    assert_eq!(journal.len(), 2);
    assert_eq!(text_of(&dom, "rounds"), "2");
    let pages: u64 = journal.iter().map(|r| r.pages).sum();
    assert!(pages > 10, "{pages}");
    // The pages the crawl logs hold: HTTP responses other than robots.txt.
    let logged = c.outcome().pages_logged();
    assert_eq!(pages, logged);
    assert_eq!(text_of(&dom, "pages"), pages.to_string());
    assert_eq!(text_of(&dom, "backlog"), status["backlog_urls"].to_string());
    assert_eq!(text_of(&dom, "history"), status["history_urls"].to_string());
    assert_eq!(
        text_of(&dom, "pending"),
        status["pending"].as_array().unwrap().len().to_string()
    );
    let reports = run_reports(&c.crawl);
    for r in &journal {
        let row = round_row(&dom, r.number);
        assert_eq!(row[0], r.number.to_string());
        assert_eq!(row[5], r.pages.to_string(), "round {}: {row:?}", r.number);
        let seg = r.segment.clone().unwrap();
        let (_, rep) = reports
            .iter()
            .find(|(_, v)| v["consumed"].as_array().unwrap().iter().any(|c| *c == *seg))
            .unwrap_or_else(|| panic!("no round report consumed {seg}"));
        assert_eq!(
            row[13],
            rep["backlog"].to_string(),
            "round {}: {row:?}",
            r.number
        );
        assert_eq!(row[11], rep["selection"]["scheduled"].to_string());
    }
    assert!(
        text_of(&dom, "seen-now").starts_with(&format!(
            "Seen-set now: {} URLs (design load {})",
            status["bloom_items"], status["bloom_design_items"]
        )),
        "{}",
        text_of(&dom, "seen-now")
    );
    assert!(dom.matches("<svg").count() >= 10, "charts in the page");
    assert!(dom.contains("id=\"too-close\""));

    // The screenshot: not blank, and the charts drawn in their colours.
    let shot = c.scratch.path().join("report.png");
    browse(
        c.scratch.path(),
        &page,
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=1100,2600".into(),
        ],
    );
    let (blue, ink, all) = pixels(&shot, [31, 119, 180]);
    let (orange, _, _) = pixels(&shot, [255, 127, 14]);
    eprintln!("screenshot: {ink} of {all} pixels inked, {blue} blue, {orange} orange");
    assert!(
        ink * 20 > all,
        "the screenshot is almost blank: {ink} of {all} pixels"
    );
    assert!(blue > 20_000, "the charts' blue: {blue} pixels");
    assert!(orange > 2_000, "the charts' orange: {orange} pixels");

    let segments: Vec<String> = journal.iter().filter_map(|r| r.segment.clone()).collect();
    round_summaries_give_the_figures_of_whole_reads(&c.crawl, &page, &segments);

    pruned_round_reports_are_a_note(&c.crawl, &reports, &page, journal[0].pages);

    damaged_files_are_named_once(
        &c.crawl,
        &reports,
        &page,
        journal[0].segment.as_deref().unwrap(),
        pages,
    );
}

#[test]
fn a_crawl_of_one_round_and_one_of_none_have_reports() {
    let scratch = TempDir::new("report-none");
    let empty = scratch.path().join("crawl");
    std::fs::create_dir_all(&empty).unwrap();
    let out_page = scratch.path().join("elsewhere").join("page.html");
    std::fs::create_dir_all(out_page.parent().unwrap()).unwrap();
    bins::run(
        &mut segmenter(&[
            "report".as_ref(),
            empty.as_os_str(),
            "--out".as_ref(),
            out_page.as_os_str(),
        ]),
        &empty,
    );
    let html = std::fs::read_to_string(&out_page).unwrap();
    assert_eq!(text_of(&html, "rounds"), "0");
    assert!(html.contains("No round has ended yet"));
    // Links lead from the page's directory to the crawl's files.
    assert!(
        html.contains("href=\"../crawl/rounds.v1.tsv\""),
        "{:?}",
        links(&html)
    );
    assert_self_contained(&html);
    let missing = segmenter(&["report".as_ref(), scratch.path().join("nope").as_os_str()])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("not a crawl directory"));

    let c = DemoCrawl::start("report-one", &small_demo(), CrawlSettings::default());
    let out = c.run_crawl_sh(&["--rounds", "1"]);
    bins::assert_code(&out, 0, Some(&c.crawl));
    let html = std::fs::read_to_string(c.crawl.join("report.html")).unwrap();
    let journal = common::rounds::read(&common::crawldir::CrawlDir::new(&c.crawl)).unwrap();
    assert_eq!(journal.len(), 1);
    assert_eq!(text_of(&html, "rounds"), "1");
    assert_eq!(text_of(&html, "pages"), journal[0].pages.to_string());
    assert!(
        !html.contains("id=\"problems\""),
        "{}",
        text_of(&html, "problems")
    );
    assert!(html.matches("<svg").count() >= 10);
    assert_self_contained(&html);
}

/// The report's fetch-history figures: the paragraph of counts and the
/// chart of when URLs come due.
fn history_figures(html: &str) -> String {
    let at = html
        .find("<p>Fetch history:")
        .unwrap_or_else(|| panic!("no fetch history in the page"));
    let end = at + html[at..].find("</svg>").expect("the due chart") + "</svg>".len();
    html[at..end].to_string()
}

#[test]
fn the_history_summary_the_merge_saves_gives_the_figures_of_the_whole_history() {
    let c = DemoCrawl::start("report-summary", &small_demo(), CrawlSettings::default());
    let out = c.run_crawl_sh(&["--rounds", "4"]);
    bins::assert_code(&out, 0, Some(&c.crawl));
    // The last round's merge saved the summary beside the history.
    let saved = c.crawl.join("history-summary.v1.json");
    let summary: Value =
        serde_json::from_slice(&std::fs::read(&saved).unwrap_or_else(|e| {
            panic!("{}: {e}\n{}", saved.display(), report(&out, Some(&c.crawl)))
        }))
        .unwrap();
    assert_eq!(summary["version"], 1);
    assert_eq!(summary["history_file"], "history.v5.list");
    let page = c.crawl.join("report.html");
    build_report(&c.crawl);
    let from_summary = std::fs::read_to_string(&page).unwrap();
    let status_from_summary = support::status_json(&c.crawl);
    assert!(
        status_from_summary["history_urls"].as_u64().unwrap() > 10,
        "{status_from_summary}"
    );
    assert_eq!(
        status_from_summary["history_urls"],
        summary["counts"]["urls"]
    );

    // Without it (a crawl made by an earlier build), the history is read
    // whole: the same figures.
    std::fs::remove_file(&saved).unwrap();
    build_report(&c.crawl);
    let from_history = std::fs::read_to_string(&page).unwrap();
    let status_from_history = support::status_json(&c.crawl);
    assert_eq!(
        history_figures(&from_summary),
        history_figures(&from_history)
    );
    assert_eq!(
        text_of(&from_summary, "history"),
        text_of(&from_history, "history")
    );
    for key in ["history_urls", "due_urls"] {
        assert_eq!(status_from_summary[key], status_from_history[key], "{key}");
    }
}
