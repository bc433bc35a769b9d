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
