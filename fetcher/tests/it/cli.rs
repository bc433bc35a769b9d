//! The command line: refusing to start without a user agent, usage errors,
//! configuration from crawl.toml, and `inspect`.

use crate::support;

use support::*;
use testkit::bins;
use testkit::server::{Response, Routes, Server};

#[test]
fn refuses_to_start_without_an_agent() {
    let crawl = crawl_dir("no-agent");
    let out = fetch(
        bins::fetcher_cmd().arg("fetch").arg(crawl.root()),
        &crawl,
        2,
    );
    let err = &out.stderr;
    assert!(err.starts_with("fetcher: "), "{err}");
    assert!(
        err.contains("--agent-name") && err.contains("[agent]"),
        "{err}"
    );
    assert!(!crawl.fetched_root().join("00001").exists());
}

#[test]
fn agent_and_settings_from_crawl_toml() {
    let server = Server::builder()
        .host(
            "a.test",
            Routes::new()
                .route("/robots.txt", Response::not_found())
                .route("/", Response::html("hi")),
        )
        .start()
        .unwrap();
    let crawl = crawl_dir("toml");
    std::fs::write(
        crawl.root().join("crawl.toml"),
        "[agent]\nname = \"tomlbot\"\nurl = \"https://example.org/bot\"\n\n[fetcher]\nmin_delay = \"10ms\"\nallow_private = true\nhosts_file = \"hosts\"\n",
    )
    .unwrap();
    hosts_file(&crawl, &server);
    write_segment(&crawl, "00001", &server, &[("a.test", "/")]);
    fetch(
        bins::fetcher_cmd()
            .arg("fetch")
            .arg(crawl.root())
            .args(["--progress", "none"]),
        &crawl,
        0,
    );
    let ua = server.log("a.test")[0].user_agent.clone().unwrap();
    assert!(
        ua.starts_with("tomlbot/") && ua.contains("https://example.org/bot"),
        "{ua}"
    );

    // A typo in [fetcher] is a configuration error naming the key.
    std::fs::write(
        crawl.root().join("crawl.toml"),
        "[fetcher]\nmin_dealy = \"1s\"\n",
    )
    .unwrap();
    let out = fetch(
        bins::fetcher_cmd().arg("fetch").arg(crawl.root()),
        &crawl,
        2,
    );
    assert!(out.stderr.contains("min_dealy"));
}

#[test]
fn bad_flag_values_are_usage_errors() {
    let out = bins::run_with_timeout(
        bins::fetcher_cmd().args(["fetch", "somewhere", "--min-delay", "soon"]),
        RUN_BOUND,
    )
    .unwrap();
    bins::assert_code(&out, 2, None);
    assert!(out.stderr.contains("soon"));
}

#[test]
fn inspect_summarizes_a_segment() {
    let server = Server::builder()
        .host("a.test", Routes::new())
        .host("b.test", Routes::new())
        .start()
        .unwrap();
    let crawl = crawl_dir("inspect");
    write_segment(
        &crawl,
        "00001",
        &server,
        &[("a.test", "/1"), ("a.test", "/2"), ("b.test", "/")],
    );
    let out = fetch(
        bins::fetcher_cmd()
            .args(["inspect", "--json"])
            .arg(crawl.segment_path("00001")),
        &crawl,
        0,
    );
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["urls"], 3);
    assert_eq!(v["hosts"], 2);
}

/// `fetcher inspect FILE | head -c 10`: a reader that closed the pipe is a
/// clean end (exit 0, nothing on stderr), never a panic.
#[test]
fn inspect_into_a_closed_pipe_ends_cleanly() {
    let server = Server::builder()
        .host("a.test", Routes::new())
        .start()
        .unwrap();
    let crawl = crawl_dir("inspect-pipe");
    write_segment(&crawl, "00001", &server, &[("a.test", "/1")]);
    for json in [false, true] {
        let (reader, writer) = std::io::pipe().unwrap();
        // Closed before the program writes: every write meets a broken pipe.
        drop(reader);
        let mut child = bins::fetcher_cmd()
            .arg("inspect")
            .args(json.then_some("--json"))
            .arg(crawl.segment_path("00001"))
            .stdout(writer)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let status = bins::wait_timeout(&mut child, std::time::Duration::from_secs(60))
            .expect("fetcher inspect ended");
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        assert_eq!(status.code(), Some(0), "json {json}: {stderr}");
        assert_eq!(stderr, "", "json {json}");
    }
}

#[test]
fn out_of_range_settings_are_configuration_errors() {
    let crawl = crawl_dir("out-of-range");
    for (flag, value, says) in [
        ("--follow-redirects", "6", "at most 5"),
        ("--threads", "0", "threads"),
        ("--max-failures", "0", "max failures"),
        ("--queue-batch", "0", "queue batch"),
    ] {
        let out = fetch(
            bins::fetcher_cmd()
                .arg("fetch")
                .arg(crawl.root())
                .args(["--agent-name", "testbot", "--agent-url", "http://bot.test/"])
                .args([flag, value]),
            &crawl,
            2,
        );
        let err = &out.stderr;
        assert!(
            err.starts_with("fetcher: ") && err.contains(says),
            "{flag}: {err}"
        );
    }
}

#[test]
fn fetch_help_says_how_to_configure_resume_and_read_the_exit_code() {
    let out =
        bins::run_with_timeout(bins::fetcher_cmd().args(["fetch", "--help"]), RUN_BOUND).unwrap();
    bins::assert_code(&out, 0, None);
    let help = &out.stdout;
    for needle in [
        "crawl.toml",
        "min_delay",
        "DURATION is",
        "SIZE is",
        "resumed",
        "130",
        "131",
        "--agent-name",
        "--allow-private",
        "--hosts-file",
    ] {
        assert!(help.contains(needle), "{needle:?} missing from:\n{help}");
    }
}

#[test]
fn status_says_how_the_fetch_of_a_segment_ended() {
    let server = Server::builder()
        .host(
            "a.test",
            Routes::new()
                .route("/robots.txt", Response::not_found())
                .route("/", Response::html("hi"))
                .route("/gone", Response::not_found()),
        )
        .start()
        .unwrap();
    let crawl = crawl_dir("status");
    write_segment(
        &crawl,
        "00001",
        &server,
        &[("a.test", "/"), ("a.test", "/gone")],
    );
    let status = |json: bool, code: i32| {
        let mut cmd = bins::fetcher_cmd();
        cmd.arg("status").arg(crawl.root()).arg("00001");
        if json {
            cmd.arg("--json");
        }
        bins::run_expecting(&mut cmd, crawl.root(), code)
    };
    // Not fetched yet: an error naming the directory.
    let out = status(true, 1);
    assert!(
        out.stderr.contains("has not been fetched"),
        "{}",
        out.stderr
    );

    fetch(&mut fetch_cmd(&crawl, &server), &crawl, 0);
    let text = status(true, 0).stdout;
    assert_eq!(text.lines().count(), 1, "one line: {text}");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["segment"], "00001");
    assert_eq!(v["done"], true);
    assert_eq!(v["stop_reason"], "complete");
    assert_eq!(
        (&v["pages"], &v["robots"], &v["errors"]),
        (&2.into(), &1.into(), &0.into())
    );
    assert_eq!(v["attempts"], 3);

    let text = status(false, 0).stdout;
    assert!(
        text.contains("\nstop_reason: complete\n") && text.contains("\npages: 2\n"),
        "{text}"
    );
}

#[test]
fn a_product_token_with_a_digit_is_refused_with_the_rfc_rule() {
    let crawl = crawl_dir("token-digit");
    let out = fetch(
        bins::fetcher_cmd().arg("fetch").arg(crawl.root()).args([
            "--agent-name",
            "bot2x",
            "--agent-url",
            "http://bot.test/",
        ]),
        &crawl,
        2,
    );
    let err = &out.stderr;
    assert!(err.starts_with("fetcher: "), "{err}");
    assert!(
        err.contains("bot2x") && err.contains("`bot`") && err.contains("RFC 9309"),
        "names the token, what it would be read as, and the rule: {err}"
    );
    assert!(err.contains("MUST contain only"), "quotes the rule: {err}");
    assert!(!crawl.fetched_root().join("00001").exists());
}

/// `--progress plain` writes its lines to stderr and to the run's log;
/// `--progress live` redraws a line on stderr, and the log still gets the
/// plain lines, every `--progress-interval`.
#[test]
fn progress_lines_reach_the_log_file_in_every_mode() {
    let slow = || Response::html("<p>slow</p>").delay(std::time::Duration::from_millis(150));
    let mut routes = Routes::new().route("/robots.txt", Response::not_found());
    for i in 0..4 {
        routes = routes.route(format!("/p{i}"), slow());
    }
    let server = Server::builder().host("a.test", routes).start().unwrap();
    let progress_lines = |text: &str| {
        text.lines()
            .filter(|l| l.contains(" pages/s ") && l.contains("in penalty box"))
            .count()
    };
    for (mode, id) in [("plain", "00001"), ("live", "00002")] {
        let crawl = crawl_dir(&format!("progress-{mode}"));
        let urls: Vec<String> = (0..4).map(|i| format!("/p{i}")).collect();
        let pairs: Vec<(&str, &str)> = urls.iter().map(|p| ("a.test", p.as_str())).collect();
        write_segment(&crawl, id, &server, &pairs);
        let out = fetch(
            fetch_cmd(&crawl, &server).args(["--progress", mode, "--progress-interval", "50ms"]),
            &crawl,
            0,
        );
        let log: String = std::fs::read_dir(crawl.logs_dir())
            .unwrap()
            .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap())
            .collect();
        assert!(
            progress_lines(&log) > 0,
            "{mode}: no progress in the log:\n{log}"
        );
        assert!(!log.contains('\r'), "{mode}: no terminal codes in the log");
        match mode {
            "plain" => assert!(
                out.stderr
                    .lines()
                    .any(|l| l.starts_with("fetcher: ") && l.contains(" pages/s ")),
                "{}",
                out.stderr
            ),
            _ => assert!(out.stderr.contains("\r\x1b[2K"), "{}", out.stderr),
        }
    }
}
