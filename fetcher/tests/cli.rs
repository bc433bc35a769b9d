//! The command line: refusing to start without a user agent, usage errors,
//! configuration from crawl.toml, and `inspect`.

mod support;

use std::process::Command;

use support::*;
use testkit::server::{Response, Routes, Server};

#[test]
fn refuses_to_start_without_an_agent() {
    let crawl = crawl_dir("no-agent");
    let out = Command::new(env!("CARGO_BIN_EXE_fetcher"))
        .arg("fetch")
        .arg(crawl.root())
        .output()
        .unwrap();
    assert_exit(&out, 2);
    let err = String::from_utf8_lossy(&out.stderr);
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
    let out = run(Command::new(env!("CARGO_BIN_EXE_fetcher"))
        .arg("fetch")
        .arg(crawl.root())
        .args(["--progress", "none"]));
    assert_exit(&out, 0);
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
    let out = Command::new(env!("CARGO_BIN_EXE_fetcher"))
        .arg("fetch")
        .arg(crawl.root())
        .output()
        .unwrap();
    assert_exit(&out, 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("min_dealy"));
}

#[test]
fn bad_flag_values_are_usage_errors() {
    let out = Command::new(env!("CARGO_BIN_EXE_fetcher"))
        .args(["fetch", "somewhere", "--min-delay", "soon"])
        .output()
        .unwrap();
    assert_exit(&out, 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("soon"));
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
    let out = Command::new(env!("CARGO_BIN_EXE_fetcher"))
        .args(["inspect", "--json"])
        .arg(crawl.segment_path("00001"))
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["urls"], 3);
    assert_eq!(v["hosts"], 2);
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
        let out = Command::new(env!("CARGO_BIN_EXE_fetcher"))
            .arg("fetch")
            .arg(crawl.root())
            .args(["--agent-name", "testbot", "--agent-url", "http://bot.test/"])
            .args([flag, value])
            .output()
            .unwrap();
        assert_exit(&out, 2);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with("fetcher: ") && err.contains(says),
            "{flag}: {err}"
        );
    }
}

#[test]
fn fetch_help_says_how_to_configure_resume_and_read_the_exit_code() {
    let out = Command::new(env!("CARGO_BIN_EXE_fetcher"))
        .args(["fetch", "--help"])
        .output()
        .unwrap();
    assert_exit(&out, 0);
    let help = String::from_utf8_lossy(&out.stdout);
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
    let status = |json: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_fetcher"));
        cmd.arg("status").arg(crawl.root()).arg("00001");
        if json {
            cmd.arg("--json");
        }
        cmd.output().unwrap()
    };
    // Not fetched yet: an error naming the directory.
    let out = status(true);
    assert_exit(&out, 1);
    assert!(String::from_utf8_lossy(&out.stderr).contains("has not been fetched"));

    assert_exit(&run(&mut fetch_cmd(&crawl, &server)), 0);
    let out = status(true);
    assert_exit(&out, 0);
    let text = String::from_utf8(out.stdout).unwrap();
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

    let out = status(false);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("\nstop_reason: complete\n") && text.contains("\npages: 2\n"),
        "{text}"
    );
}
