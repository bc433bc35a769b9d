//! The `demo-web` binary, run for real.

use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use testkit::TempDir;
use testkit::bins::{Signal, bin_path, run, run_expecting, signal, wait_timeout};

/// Waits (bounded) until `path` exists.
fn wait_for_file(path: &Path, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        if path.exists() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn get(addr: SocketAddr, host: &str, target: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

#[test]
fn serve_writes_its_files_answers_logs_and_stops_on_sigterm() {
    let tmp = TempDir::new("demo-web-serve");
    let dir = tmp.path();
    let (seeds, hosts, ready, log) = (
        dir.join("seeds.txt"),
        dir.join("hosts"),
        dir.join("ready"),
        dir.join("requests.tsv"),
    );
    std::fs::write(&ready, "stale").unwrap();
    let mut child = Command::new(bin_path("demo-web"))
        .args(["serve", "--small", "--seed", "5"])
        .arg("--seeds-out")
        .arg(&seeds)
        .arg("--hosts-out")
        .arg(&hosts)
        .arg("--ready-file")
        .arg(&ready)
        .arg("--request-log")
        .arg(&log)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The stale ready file is removed before the new one is written.
    let deadline = Instant::now() + Duration::from_secs(30);
    let port: u16 = loop {
        assert!(Instant::now() < deadline, "demo-web never became ready");
        if let Some(p) = std::fs::read_to_string(&ready).ok().and_then(|t| {
            t.lines()
                .find_map(|l| l.strip_prefix("port=")?.parse().ok())
        }) {
            break p;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let seed_urls = std::fs::read_to_string(&seeds).unwrap();
    assert!(
        seed_urls.starts_with(&format!("http://news.demo.test:{port}/\n")),
        "{seed_urls}"
    );
    let hosts_text = std::fs::read_to_string(&hosts).unwrap();
    let addr_of = |name: &str| -> Ipv4Addr {
        hosts_text
            .lines()
            .find_map(|l| l.strip_suffix(&format!(" {name}")))
            .unwrap_or_else(|| panic!("{name} not in the hosts file:\n{hosts_text}"))
            .parse()
            .unwrap()
    };
    assert_eq!(addr_of("news.demo.test"), Ipv4Addr::new(127, 0, 0, 10));

    let home = get(
        SocketAddr::from((addr_of("news.demo.test"), port)),
        "news.demo.test",
        "/",
    );
    assert!(home.starts_with("HTTP/1.1 200 OK"));
    assert!(home.contains(&format!("href=\"http://blog.demo.test:{port}/\"")));
    let robots = get(
        SocketAddr::from((addr_of("down.demo.test"), port)),
        "down.demo.test",
        "/robots.txt",
    );
    assert!(robots.starts_with("HTTP/1.1 503"));
    let gone = TcpStream::connect((addr_of("gone.demo.test"), port)).unwrap_err();
    assert_eq!(gone.kind(), std::io::ErrorKind::ConnectionRefused);

    // One TSV line per request: host, path, start, end, status.
    assert!(wait_for_file(&log, Duration::from_secs(5)));
    let deadline = Instant::now() + Duration::from_secs(5);
    let lines = loop {
        let text = std::fs::read_to_string(&log).unwrap();
        if text.lines().count() >= 2 || Instant::now() > deadline {
            break text;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let rows: Vec<Vec<&str>> = lines.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(rows.len(), 2, "{lines}");
    assert_eq!(&rows[0][..2], ["news.demo.test", "/"]);
    assert_eq!(rows[0][4], "200");
    assert_eq!(&rows[1][..2], ["down.demo.test", "/robots.txt"]);
    assert_eq!(rows[1][4], "503");
    let (start, end): (u64, u64) = (rows[0][2].parse().unwrap(), rows[0][3].parse().unwrap());
    assert!(start <= end && start > 1_600_000_000_000);

    signal(&child, Signal::Term).unwrap();
    let status =
        wait_timeout(&mut child, Duration::from_secs(10)).expect("demo-web ignored SIGTERM");
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(status.success(), "{status}: {stderr}");
    assert!(
        stderr.contains("stopping (SIGTERM after 2 requests)"),
        "{stderr}"
    );
    assert!(!ready.exists(), "the ready file outlived the server");
}

#[test]
fn a_taken_port_is_a_clear_error() {
    let tmp = TempDir::new("demo-web-taken");
    let dir = tmp.path();
    let taken = TcpListener::bind((Ipv4Addr::new(127, 0, 0, 10), 0)).unwrap();
    let port = taken.local_addr().unwrap().port();
    let out = run_expecting(
        Command::new(bin_path("demo-web"))
            .args(["serve", "--small", "--port", &port.to_string()])
            .arg("--seeds-out")
            .arg(dir.join("seeds"))
            .arg("--hosts-out")
            .arg(dir.join("hosts")),
        dir,
        1,
    );
    assert!(
        out.stderr
            .starts_with("demo-web: 127.0.0.10 and up: binding 127.0.0.10:"),
        "{}",
        out.stderr
    );
    assert!(!dir.join("seeds").exists());
}

#[test]
fn describe_summarizes_the_demo_and_the_expected_crawl() {
    let tmp = TempDir::new("demo-web-describe");
    let dir = tmp.path();
    let out = run(
        Command::new(bin_path("demo-web")).args(["describe", "--seed", "2", "--port", "8080"]),
        dir,
    );
    assert!(
        out.stdout.starts_with("demo web, seed 2: 58 hosts"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("  http://news.demo.test:8080/\n"));
    assert!(out.stdout.contains("robots.txt disallows"));
}

#[test]
fn synth_serves_many_hosts_the_same_page() {
    let tmp = TempDir::new("demo-web-synth");
    let dir = tmp.path();
    let (urls, hosts, ready) = (dir.join("urls"), dir.join("hosts"), dir.join("ready"));
    let mut child = Command::new(bin_path("demo-web"))
        .args([
            "synth",
            "--hosts",
            "3",
            "--urls-per-host",
            "2",
            "--body-size",
            "500",
        ])
        .args(["--first-address", "127.2.0.1"])
        .arg("--urls-out")
        .arg(&urls)
        .arg("--hosts-out")
        .arg(&hosts)
        .arg("--ready-file")
        .arg(&ready)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        wait_for_file(&ready, Duration::from_secs(30)),
        "never ready"
    );
    let port: u16 = std::fs::read_to_string(&ready)
        .unwrap()
        .lines()
        .next()
        .unwrap()["port=".len()..]
        .parse()
        .unwrap();
    let list = std::fs::read_to_string(&urls).unwrap();
    let want: String = (0..3)
        .flat_map(|h| (0..2).map(move |n| format!("http://h{h}.bench.test:{port}/p/{n}.html\n")))
        .collect();
    assert_eq!(list, want);
    assert_eq!(
        std::fs::read_to_string(&hosts).unwrap(),
        "127.2.0.1 h0.bench.test\n127.2.0.2 h1.bench.test\n127.2.0.3 h2.bench.test\n"
    );
    let page = get(
        SocketAddr::from(([127, 2, 0, 3], port)),
        "h2.bench.test",
        "/p/1.html",
    );
    assert!(page.starts_with("HTTP/1.1 200 OK"), "{page}");
    let body = &page[page.find("\r\n\r\n").unwrap() + 4..];
    assert!((480..=520).contains(&body.len()), "{} bytes", body.len());
    let robots = get(
        SocketAddr::from(([127, 2, 0, 1], port)),
        "h0.bench.test",
        "/robots.txt",
    );
    assert!(robots.starts_with("HTTP/1.1 404"));
    signal(&child, Signal::Int).unwrap();
    let status =
        wait_timeout(&mut child, Duration::from_secs(10)).expect("demo-web ignored SIGINT");
    assert!(status.success());
}
