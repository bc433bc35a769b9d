//! Settings that decide what a round takes, end to end through the binary:
//! the scope (rules file, host and domain lists, crawl.toml), the calendar
//! trap, the Bloom filter's size and its warning, the limits on pages and
//! links, X-Robots-Tag in stored responses, and runs still being fetched.

use crate::support;

use std::fs;

use support::*;
use testkit::bins;
use testkit::files::copy_tree;

const MB: u64 = 1 << 20;

#[test]
fn rules_file_then_hosts_and_domains_decide_the_scope() {
    let crawl = TempCrawl::new("scope-rules");
    inject(&crawl, "http://a.test/\n", &[]);
    let links = [
        "/public",
        "/private/x",
        "http://sub.a.test/",
        "http://b.test/",
        "http://c.test/",
        "http://d.test/",
        "http://www.e.test/",
    ];
    write_done(&crawl, "00001", &[Page::html("http://a.test/", 0, &links)]);
    // First match wins: the /private/ rule refuses before the + rule for
    // a.test would admit; c.test is admitted by a rule although it is
    // outside the seeds' domains; the rest falls through to the domains.
    let rules = crawl.side("scope.rules");
    fs::write(
        &rules,
        "# scope rules\n-^https?://a\\.test/private/\n+^https?://a\\.test/\n+^https?://c\\.test/\n",
    )
    .unwrap();
    let before = crawl.side("before");
    copy_tree(crawl.root(), &before);
    let report = run_round(&crawl, &["--rules-file", rules.to_str().unwrap()]);
    assert_eq!(
        urls(&segments(&crawl)["00002"]),
        [
            "http://a.test/public",
            "http://sub.a.test/",
            "http://c.test/"
        ],
        "{report}"
    );
    assert_eq!(figure(&report, "rejected scope:"), 4, "{report}");

    // The same from crawl.toml, with a host list and a domain list added
    // (a rules file named there is relative to the crawl directory).
    let crawl = TempCrawl::new("scope-lists");
    copy_tree(&before, crawl.root());
    fs::copy(&rules, crawl.root().join("scope.rules")).unwrap();
    fs::write(
        crawl.dir.config_path(),
        "[scope]\nrules_file = \"scope.rules\"\nhosts = [\"d.test\"]\n",
    )
    .unwrap();
    let report = run_round(&crawl, &["--scope-domains", "e.test"]);
    assert_eq!(
        urls(&segments(&crawl)["00002"]),
        [
            "http://a.test/public",
            "http://sub.a.test/",
            "http://c.test/",
            "http://d.test/",
            "http://www.e.test/"
        ],
        "{report}"
    );

    // --scope list: only the lists (and rules) count, not the seeds' domains.
    let crawl = TempCrawl::new("scope-list-mode");
    copy_tree(&before, crawl.root());
    let report = run_round(&crawl, &["--scope", "list", "--scope-hosts", "b.test"]);
    assert_eq!(
        urls(&segments(&crawl)["00002"]),
        ["http://b.test/"],
        "{report}"
    );
    fs::remove_dir_all(&before).unwrap();
}

#[test]
fn calendar_traps_are_refused() {
    let crawl = TempCrawl::new("calendar");
    inject(&crawl, "http://a.test/\n", &[]);
    write_done(
        &crawl,
        "00001",
        &[Page::html(
            "http://a.test/",
            0,
            &["/events/2999/01/", "/events/2024/01/", "/cal?year=3001"],
        )],
    );
    let report = run_round(&crawl, &[]);
    assert_eq!(
        urls(&segments(&crawl)["00002"]),
        ["http://a.test/events/2024/01/"]
    );
    assert_eq!(figure(&report, "rejected calendar:"), 2, "{report}");
}

#[test]
fn the_bloom_filter_starts_at_its_settings_and_grows_past_its_load() {
    let crawl = TempCrawl::new("bloom-size");
    let seeds: String = (0..200).map(|i| format!("http://a.test/{i}\n")).collect();
    let report = inject(
        &crawl,
        &seeds,
        &["--bloom-items", "100", "--bloom-fp", "0.01"],
    );
    // 200 URLs for a filter made for 100: it grows to hold more than its
    // fill says it holds (an overfull filter's count of items is low),
    // doubling: 100, 200, 400; rebuilt from the new segment: 400 items at
    // 1 %, 3,840 bits (480 bytes) after a 64-byte header.
    let size = fs::metadata(crawl.dir.bloom_path()).unwrap().len();
    assert_eq!(size, 64 + 480, "{report}");
    let bloom = report.lines().find(|l| l.starts_with("bloom:")).unwrap();
    assert!(bloom.contains("200 items of 400 designed"), "{bloom}");
    assert!(bloom.contains("est. fp rate"), "{bloom}");
    let growth = report
        .lines()
        .find(|l| l.starts_with("bloom growth:"))
        .unwrap_or_else(|| panic!("{report}"));
    assert!(
        growth.contains("from 100 to 400 URLs") && growth.contains("rebuilt from 200 URLs"),
        "{growth}"
    );
    assert!(!report.contains("past its design load"), "{report}");
    assert!(figure(&report, "scheduled:") == 200, "{report}");

    // A larger --bloom-items on a crawl grows its filter to it.
    let report = inject(&crawl, "http://a.test/new\n", &["--bloom-items", "5000"]);
    let bloom = report.lines().find(|l| l.starts_with("bloom:")).unwrap();
    assert!(bloom.contains("201 items of 6400 designed"), "{report}");
    // A smaller one changes nothing, and a new --bloom-fp only warns.
    let report = inject(
        &crawl,
        "http://a.test/newer\n",
        &["--bloom-items", "10", "--bloom-fp", "0.001"],
    );
    assert!(report.contains("of 6400 designed"), "{report}");
    assert!(report.contains("only applies to a new filter"), "{report}");

    // A roomy filter does not grow.
    let roomy = TempCrawl::new("bloom-roomy");
    let report = inject(&roomy, &seeds, &["--bloom-items", "10000"]);
    assert!(!report.contains("bloom growth:"), "{report}");
    assert!(
        report.contains("bloom commit:          created"),
        "{report}"
    );
}

#[test]
fn limits_on_pages_and_links_and_x_robots_tag_headers() {
    let crawl = TempCrawl::new("limits");
    inject(&crawl, "http://a.test/\n", &[]);
    let many: Vec<String> = (0..30).map(|i| format!("/many/{i:02}")).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    let mut big = Page::html("http://a.test/big", 0, &["/from-big"]);
    big.body.extend(vec![b' '; 300_000]);
    let mut robots = Page::html("http://a.test/robots", 0, &["/from-robots"]);
    robots.headers = vec![
        ("X-Robots-Tag".into(), "noarchive".into()),
        ("X-Robots-Tag".into(), "nofollow".into()),
    ];
    let mut other_bot = Page::html("http://a.test/other", 0, &["/from-other"]);
    other_bot.headers = vec![("X-Robots-Tag".into(), "otherbot: nofollow".into())];
    write_done(
        &crawl,
        "00001",
        &[
            Page::html("http://a.test/many", 0, &many),
            big,
            robots,
            other_bot,
        ],
    );
    let report = run_round(
        &crawl,
        &["--max-links-per-page", "10", "--max-page-size", "200KB"],
    );
    let got = urls(&segments(&crawl)["00002"]);
    let mut want: Vec<String> = (0..10)
        .map(|i| format!("http://a.test/many/{i:02}"))
        .collect();
    want.push("http://a.test/from-other".into());
    let mut got_sorted = got.clone();
    got_sorted.sort();
    want.sort();
    assert_eq!(got_sorted, want, "{report}");
    assert_eq!(figure(&report, "over page cap:"), 20, "{report}");
    assert_eq!(figure(&report, "nofollow links:"), 1, "{report}");
    let bad = report
        .lines()
        .find(|l| l.starts_with("bad input:"))
        .unwrap();
    assert!(bad.contains("too large 1"), "{bad}");
}

#[test]
fn a_fetched_run_without_done_is_left_for_later() {
    let crawl = TempCrawl::new("not-done");
    inject(&crawl, "http://a.test/\n", &[]);
    write_fetched(
        &crawl,
        "00001",
        &[Page::html("http://a.test/", 0, &["/next"])],
        MB,
        false,
    );
    let report = run_round(&crawl, &[]);
    assert!(report.contains("nothing to do"), "{report}");
    assert!(report.contains("00001"), "{report}");
    assert!(!crawl.dir.consumed_path().exists());
    assert_eq!(segments(&crawl).len(), 1);

    fs::write(crawl.dir.fetched_dir("00001").join("DONE"), b"").unwrap();
    run_round(&crawl, &[]);
    assert_eq!(urls(&segments(&crawl)["00002"]), ["http://a.test/next"]);
    assert_eq!(list_entries(&crawl.dir.consumed_path()), "00001\n");
}

#[test]
fn memory_the_machine_cannot_give_is_a_usage_error() {
    use std::os::unix::process::CommandExt;
    let crawl = TempCrawl::new("memory");
    inject(&crawl, "http://a.test/\n", &[]);
    write_done(
        &crawl,
        "00001",
        &[Page::html("http://a.test/", 0, &["/next"])],
    );
    let root = crawl.root().to_str().unwrap().to_string();
    let args = ["run", root.as_str(), "--memory", "16GB"];
    let mut cmd = segmenter_cmd(&args);
    // An address space of 2 GB stands for a machine without 16 GB to give.
    // SAFETY: between fork and exec the child only calls setrlimit, which
    // is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 2 << 30,
                rlim_max: 2 << 30,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = bins::run_expecting(&mut cmd, crawl.root(), 2);
    let context = bins::report(&out, Some(crawl.root()));
    assert!(
        out.stderr
            .lines()
            .last()
            .is_some_and(|l| l.starts_with("segmenter: --memory: cannot reserve")),
        "{context}"
    );
    assert!(!crawl.dir.consumed_path().exists(), "{context}");

    // Within what the machine has, the same run works.
    run_round(&crawl, &["--memory", "64MB"]);
    assert_eq!(urls(&segments(&crawl)["00002"]), ["http://a.test/next"]);
}

#[test]
fn status_says_what_waits_to_be_fetched_and_to_be_consumed() {
    let crawl = TempCrawl::new("status");
    let root = crawl.root().to_str().unwrap().to_string();
    let status = || {
        let args = ["status", root.as_str(), "--json"];
        let text = bins::run(&mut segmenter_cmd(&args), crawl.root()).stdout;
        assert_eq!(text.lines().count(), 1, "one line: {text}");
        serde_json::from_str::<serde_json::Value>(&text).unwrap()
    };
    let v = status();
    assert_eq!(v["segments"], serde_json::json!([]));
    assert_eq!(v["next"], "");

    inject(&crawl, "http://a.test/\nhttp://b.test/\n", &[]);
    let v = status();
    assert_eq!(v["segments"], serde_json::json!(["00001"]));
    assert_eq!(v["pending"], serde_json::json!(["00001"]));
    assert_eq!(v["next"], "00001");
    assert_eq!(v["unconsumed"], serde_json::json!([]));
    assert_eq!(v["backlog_urls"], 0);

    // Fetched: nothing pending, a run to consume.
    let page = Page::html("http://a.test/", 0, &["/1", "/2", "/3"]);
    write_fetched(&crawl, "00001", &[page], MB, true);
    let v = status();
    assert_eq!(v["pending"], serde_json::json!([]));
    assert_eq!(v["next"], "");
    assert_eq!(v["unconsumed"], serde_json::json!(["00001"]));

    // Consumed, with one URL of a.test per segment: two in the backlog.
    run_round(&crawl, &["--max-per-host", "1"]);
    let v = status();
    assert_eq!(v["segments"], serde_json::json!(["00001", "00002"]));
    assert_eq!(v["next"], "00002");
    assert_eq!(v["unconsumed"], serde_json::json!([]));
    assert_eq!(v["backlog_urls"], backlog(&crawl).len() as u64);
    assert_eq!(v["backlog_urls"], 2);
    // The page fetched is in the history, due in 30 days.
    assert_eq!(
        (v["history_urls"].as_u64(), v["due_urls"].as_u64()),
        (Some(1), Some(0))
    );
    // Not counted when not asked for (the whole file would be read).
    let text = bins::run(
        &mut segmenter_cmd(&["status", root.as_str(), "--json", "--no-backlog"]),
        crawl.root(),
    )
    .stdout;
    assert!(text.contains("\"backlog_urls\":null"), "{text}");

    // The text form has the same keys.
    let text = bins::run(&mut segmenter_cmd(&["status", root.as_str()]), crawl.root()).stdout;
    assert_eq!(
        text,
        format!(
            "segments: 00001 00002\npending: 00002\nnext: 00002\nunconsumed: \nbacklog_urls: 2\n\
         history_urls: 1\ndue_urls: 0\nbloom_items: 5\nbloom_design_items: 1000000\n\
         bloom_bytes: 1198296\nbloom_journal_hashes: 3\nbloom_fill: 0.000004\n\
         bloom_fp_rate: 0.000000\nbloom_target_fp_rate: 0.01\nbloom_rescued: 0\n{}",
            last_round_lines(&crawl, 3)
        )
    );
}

/// The `last_round` and `round_*` lines of `segmenter status` after the one
/// `run` of `crawl`, which found `new` new URLs and read no sitemap, and left
/// two of them waiting for the host's cap (one in-link each).
fn last_round_lines(crawl: &TempCrawl, new: u64) -> String {
    let stem = fs::read_dir(crawl.dir.logs_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("segmenter-") && n.ends_with(".json"))
        .max()
        .expect("a JSON report")
        .trim_end_matches(".json")
        .to_string();
    format!(
        "last_round: {stem}\nround_new_urls: {new}\nround_scheduled: 1\nround_rescued: 0\n\
         round_history_new: 1\nround_refreshed_unchanged: 0\nround_refreshed_changed: 0\n\
         round_retired: 0\nround_sitemaps_read: 0\nround_sitemap_urls: 0\n\
         round_sitemap_urls_new: 0\nround_sitemap_urls_rejected: 0\nround_bad_sitemaps: 0\n\
         round_retries_exhausted: 0\nround_held_urls: 0\nround_over_page_cap: 0\n\
         round_rejected_extension: 0\nround_capped_urls: 2\nround_cut_segment_size_urls: 0\n\
         round_cut_crawl_pages_urls: 0\nround_waiting_links: 0\nround_waiting_score_p50: 1\n\
         round_waiting_score_p90: 1\nround_waiting_score_p99: 1\nround_waiting_score_max: 1\n\
         round_bloom_commit: appended\n"
    )
}
