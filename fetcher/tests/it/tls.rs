//! HTTPS: the fetcher against loopback hosts behind a TLS front whose
//! certificates come from a CA made at test time. What is trusted
//! (`--ca-file`, the system store, never an unknown CA by default), what a
//! refused certificate logs (`tls` with the reason), what
//! `--accept-invalid-certs` does, and that the WARC records hold the HTTP
//! bytes as exchanged inside TLS.

use crate::support;

use std::path::{Path, PathBuf};

use common::crawldir::CrawlDir;
use common::crawllog::{ErrorCode, LogLine, Status};
use common::segment::Via;
use common::warc::{WarcReader, WarcRecord};
use testkit::segment::host_of;
use testkit::server::tls::{TestCa, TlsFront, self_signed};
use testkit::server::{Response, Routes, Server};

use support::{crawl_dir, crawl_log, fetch, fetch_cmd, leftover, responses, warc_files};

/// Writes segment `id` with the given URLs (host names as the queue keys),
/// sorted by host like a real segment.
fn write_sorted(crawl: &CrawlDir, id: &str, urls: &[String]) {
    let mut sorted: Vec<(String, String)> = urls.iter().map(|u| (host_of(u), u.clone())).collect();
    sorted.sort();
    let sorted: Vec<String> = sorted.into_iter().map(|(_, url)| url).collect();
    support::write_urls(crawl, id, &sorted);
}

/// The CA's certificate written to `CRAWL/NAME`.
fn ca_file(crawl: &CrawlDir, ca: &TestCa, name: &str) -> PathBuf {
    let p = crawl.root().join(name);
    ca.write_pem(&p).expect("write the CA file");
    p
}

/// The crawl-log line of `url` (its page, or its robots.txt with `robots`).
fn line_of<'a>(log: &'a [LogLine], url: &str, robots: bool) -> &'a LogLine {
    log.iter()
        .find(|l| l.url == url && (l.via == Via::Robots) == robots)
        .unwrap_or_else(|| panic!("{url} not in the crawl log:\n{log:#?}"))
}

/// The `warcinfo` records of the run.
fn warcinfos(crawl: &CrawlDir, id: &str) -> Vec<String> {
    let mut out = Vec::new();
    for f in warc_files(crawl, id) {
        let mut r = WarcReader::open(&f, 64 * 1024).expect("open WARC");
        let mut rec = WarcRecord::default();
        while r.read_next(&mut rec).expect("read WARC") {
            if rec.record_type() == Some("warcinfo") {
                out.push(String::from_utf8_lossy(&rec.block).into_owned());
            }
        }
    }
    assert!(!out.is_empty(), "no warcinfo record");
    out
}

/// True once `check` holds, trying every 10 ms for at most 2 s (the
/// front's connection thread may still be reading the client's alert when
/// the fetcher exits).
fn eventually(check: impl Fn() -> bool) -> bool {
    for _ in 0..200 {
        if check() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    check()
}

fn site() -> Routes {
    Routes::new()
        .route(
            "/robots.txt",
            Response::text("User-agent: *\nDisallow: /private\n"),
        )
        .route(
            "/",
            Response::html("<a href=\"/a\">a</a> <a href=\"/private\">p</a>"),
        )
        .route("/a", Response::text("page a over https"))
        .route("/private", Response::text("not for robots"))
}

/// `good.test` serving [`site`], behind a TLS front whose certificate
/// comes from a CA named `ca_name`, made now.
fn good_test(ca_name: &str) -> (Server, TestCa, TlsFront) {
    let server = Server::builder().host("good.test", site()).start().unwrap();
    let ca = TestCa::new(ca_name);
    let front = TlsFront::start(&server, [("good.test", ca.leaf(&["good.test"]))]).unwrap();
    (server, ca, front)
}

/// The response record of `url` in run `id`.
fn response_of(crawl: &CrawlDir, id: &str, url: &str) -> WarcRecord {
    responses(crawl, id)
        .into_iter()
        .find(|r| r.target_uri() == Some(url))
        .unwrap_or_else(|| panic!("the response of {url} is not stored"))
}

#[test]
fn a_ca_file_is_trusted_and_the_records_hold_the_http_inside_tls() {
    let (server, ca, front) = good_test("fetcher test CA");
    let crawl = crawl_dir("tls-ca-file");
    let pem = ca_file(&crawl, &ca, "ca.pem");
    let urls = ["/", "/a", "/private"].map(|p| front.url("good.test", p));
    write_sorted(&crawl, "00001", &urls);

    fetch(
        fetch_cmd(&crawl, &server).arg("--ca-file").arg(&pem),
        &crawl,
        0,
    );

    let log = crawl_log(&crawl, "00001");
    let robots = front.url("good.test", "/robots.txt");
    assert_eq!(line_of(&log, &robots, true).status, Status::Http(200));
    assert_eq!(line_of(&log, &urls[0], false).status, Status::Http(200));
    assert_eq!(line_of(&log, &urls[1], false).status, Status::Http(200));
    assert_eq!(
        line_of(&log, &urls[2], false).status,
        Status::Error(ErrorCode::Robots),
        "robots.txt read over https applies"
    );
    let mut asked: Vec<String> = server
        .log("good.test")
        .iter()
        .map(|e| e.target.clone())
        .collect();
    asked.sort();
    assert_eq!(asked, ["/", "/a", "/robots.txt"], "what reached the server");
    assert!(front.handshakes("good.test") >= 1);
    assert_eq!(front.failed_handshakes("good.test"), 0);

    // The records hold HTTP as it was inside the TLS connection.
    let page = response_of(&crawl, "00001", &urls[1]);
    let block = String::from_utf8_lossy(&page.block);
    assert!(block.starts_with("HTTP/1.1 200 OK\r\n"), "{block}");
    assert!(block.ends_with("page a over https"), "{block}");
    assert_eq!(
        page.header("WARC-IP-Address"),
        Some(front.addr("good.test").ip().to_string().as_str())
    );
    support::warcio_check(&crawl, "00001");
    for info in warcinfos(&crawl, "00001") {
        assert!(
            !info.contains("tls-certificates"),
            "certificates were checked: {info}"
        );
    }
}

#[test]
fn refused_certificates_are_logged_as_tls_with_the_reason() {
    let hosts = [
        "unknown.test",
        "expired.test",
        "wrong.test",
        "selfsigned.test",
        "plain.test",
    ];
    let mut builder = Server::builder();
    for h in hosts {
        builder = builder.host(h, site());
    }
    let server = builder.start().unwrap();
    let ca = TestCa::new("trusted test CA");
    let other = TestCa::new("some other CA");
    let front = TlsFront::start(
        &server,
        [
            ("unknown.test", other.leaf(&["unknown.test"])),
            ("expired.test", ca.expired_leaf(&["expired.test"])),
            ("wrong.test", ca.leaf(&["another.test"])),
            ("selfsigned.test", self_signed(&["selfsigned.test"])),
        ],
    )
    .unwrap();
    let crawl = crawl_dir("tls-refused");
    let pem = ca_file(&crawl, &ca, "ca.pem");
    let mut urls: Vec<String> = hosts[..4]
        .iter()
        .flat_map(|h| [front.url(h, "/"), front.url(h, "/a")])
        .collect();
    // https to a server that speaks plain HTTP.
    let plain = format!("https://plain.test:{}/", server.port());
    urls.push(plain.clone());
    write_sorted(&crawl, "00001", &urls);

    fetch(
        fetch_cmd(&crawl, &server)
            .arg("--ca-file")
            .arg(&pem)
            .args(["--robots-retry-delay", "50ms"]),
        &crawl,
        0,
    );

    let log = crawl_log(&crawl, "00001");
    let expect = [
        ("unknown.test", "certificate from an unknown issuer"),
        (
            "expired.test",
            "certificate expired (valid until 2021-01-01",
        ),
        (
            "wrong.test",
            "certificate not valid for wrong.test (it is for another.test)",
        ),
        ("selfsigned.test", "certificate from an unknown issuer"),
    ];
    for (host, reason) in expect {
        let robots = front.url(host, "/robots.txt");
        let line = line_of(&log, &robots, true);
        assert_eq!(line.status, Status::Error(ErrorCode::Tls), "{line:?}");
        assert!(line.note.starts_with(reason), "{host}: {:?}", line.note);
        assert!(
            server.log(host).is_empty(),
            "{host}: no HTTP request may go over a refused connection"
        );
        assert!(
            eventually(|| front.failed_handshakes(host) >= 1),
            "{host}: the front saw the handshake fail"
        );
    }
    let plain_robots = format!("https://plain.test:{}/robots.txt", server.port());
    let line = line_of(&log, &plain_robots, true);
    assert_eq!(line.status, Status::Error(ErrorCode::Tls), "{line:?}");
    assert!(line.note.starts_with("not a TLS server"), "{:?}", line.note);

    // robots.txt unreachable: the pages are held, then go to the leftover
    // with their tries, as for any host whose robots.txt cannot be read.
    let left: Vec<String> = leftover(&crawl, "00001")
        .into_iter()
        .filter(|r| r.via == Via::Leftover && r.tries == 0)
        .map(|r| r.url)
        .collect();
    for url in &urls {
        assert!(left.contains(url), "{url} not left over: {left:?}");
    }
}

#[test]
fn by_default_a_test_ca_is_refused_and_the_system_store_is_read() {
    let (server, ca, front) = good_test("system store test CA");
    let crawl = crawl_dir("tls-default-trust");
    let pem = ca_file(&crawl, &ca, "system-ca.pem");
    let robots = front.url("good.test", "/robots.txt");
    let page = front.url("good.test", "/a");

    // The bundled roots and the machine's store: a CA made a moment ago is
    // in neither.
    write_sorted(&crawl, "00001", std::slice::from_ref(&page));
    fetch(
        fetch_cmd(&crawl, &server)
            .env_remove("SSL_CERT_FILE")
            .env_remove("SSL_CERT_DIR")
            .args(["--robots-retry-delay", "50ms"]),
        &crawl,
        0,
    );
    let log = crawl_log(&crawl, "00001");
    let line = line_of(&log, &robots, true);
    assert_eq!(line.status, Status::Error(ErrorCode::Tls));
    assert!(line.note.contains("unknown issuer"), "{:?}", line.note);
    assert!(server.log("good.test").is_empty());

    // The system store, pointed at the test CA the usual way.
    write_sorted(&crawl, "00002", std::slice::from_ref(&page));
    fetch(
        fetch_cmd(&crawl, &server)
            .arg("00002")
            .env("SSL_CERT_FILE", &pem)
            .env_remove("SSL_CERT_DIR"),
        &crawl,
        0,
    );
    let log = crawl_log(&crawl, "00002");
    assert_eq!(line_of(&log, &page, false).status, Status::Http(200));
}

#[test]
fn accept_invalid_certs_fetches_them_notes_why_and_every_warc_file_says_so() {
    let hosts = ["expired.test", "wrong.test", "selfsigned.test", "good.test"];
    let mut builder = Server::builder();
    for h in hosts {
        builder = builder.host(h, site());
    }
    let server = builder.start().unwrap();
    let ca = TestCa::new("test CA");
    let front = TlsFront::start(
        &server,
        [
            ("expired.test", ca.expired_leaf(&["expired.test"])),
            ("wrong.test", ca.leaf(&["another.test"])),
            ("selfsigned.test", self_signed(&["selfsigned.test"])),
            ("good.test", ca.leaf(&["good.test"])),
        ],
    )
    .unwrap();
    let crawl = crawl_dir("tls-accept-invalid");
    let pem = ca_file(&crawl, &ca, "ca.pem");
    let urls: Vec<String> = hosts.iter().map(|h| front.url(h, "/a")).collect();
    write_sorted(&crawl, "00001", &urls);

    let out = fetch(
        fetch_cmd(&crawl, &server)
            .arg("--accept-invalid-certs")
            .arg("--ca-file")
            .arg(&pem),
        &crawl,
        0,
    );
    assert!(
        out.stderr.contains("--accept-invalid-certs") && out.stderr.contains("NOT checked"),
        "a warning at start: {}",
        out.stderr
    );
    let log = crawl_log(&crawl, "00001");
    for url in &urls {
        assert_eq!(line_of(&log, url, false).status, Status::Http(200), "{url}");
    }
    // What the check would have said, noted for each response (robots.txt too).
    let notes = [
        ("expired.test", "tls-unverified certificate expired"),
        (
            "wrong.test",
            "tls-unverified certificate not valid for wrong.test (it is for another.test)",
        ),
        (
            "selfsigned.test",
            "tls-unverified certificate from an unknown issuer",
        ),
    ];
    for (host, note) in notes {
        for (path, robots) in [("/a", false), ("/robots.txt", true)] {
            let line = line_of(&log, &front.url(host, path), robots);
            assert!(line.note.starts_with(note), "{host}{path}: {:?}", line.note);
        }
    }
    let good = line_of(&log, &front.url("good.test", "/a"), false);
    assert!(
        !good.note.contains("tls-unverified"),
        "a valid certificate: {:?}",
        good.note
    );
    for info in warcinfos(&crawl, "00001") {
        assert!(
            info.contains("tls-certificates: not verified (--accept-invalid-certs)"),
            "{info}"
        );
    }
    support::warcio_check(&crawl, "00001");
}

#[test]
fn a_ca_file_that_cannot_be_used_is_a_usage_error_naming_it() {
    let server = Server::builder().host("good.test", site()).start().unwrap();
    let crawl = crawl_dir("tls-bad-ca-file");
    write_sorted(&crawl, "00001", &[server.url("good.test", "/a")]);
    let missing = crawl.root().join("missing.pem");
    let out = fetch(
        fetch_cmd(&crawl, &server).arg("--ca-file").arg(&missing),
        &crawl,
        2,
    );
    assert!(out.stderr.contains("missing.pem"), "{}", out.stderr);

    let junk = crawl.root().join("junk.pem");
    std::fs::write(&junk, "this is no certificate\n").unwrap();
    let out = fetch(
        fetch_cmd(&crawl, &server).arg("--ca-file").arg(&junk),
        &crawl,
        2,
    );
    assert!(
        out.stderr.contains("junk.pem") && out.stderr.contains("no certificate found"),
        "{}",
        out.stderr
    );
    assert!(server.log("good.test").is_empty(), "nothing was fetched");
    assert!(!Path::new(&crawl.fetched_dir("00001").join("DONE")).exists());
}

#[test]
fn https_goes_through_a_proxy_tunnel_with_tls_inside_it() {
    let (server, ca, front) = good_test("fetcher test CA");
    let proxy = testkit::proxy::ProxyServer::start(&server.hosts_file()).unwrap();
    let crawl = crawl_dir("tls-proxy");
    let pem = ca_file(&crawl, &ca, "ca.pem");
    let urls = ["/", "/a"].map(|p| front.url("good.test", p));
    write_sorted(&crawl, "00001", &urls);

    fetch(
        fetch_cmd(&crawl, &server)
            .arg("--ca-file")
            .arg(&pem)
            .arg("--proxy")
            .arg(proxy.url()),
        &crawl,
        0,
    );

    let log = crawl_log(&crawl, "00001");
    for url in &urls {
        assert_eq!(
            line_of(&log, url, false).status,
            Status::Http(200),
            "{log:#?}"
        );
    }
    // Every request went through a CONNECT tunnel to the front's port; the
    // proxy never saw the HTTP inside it.
    let asked: Vec<String> = proxy.requests().into_iter().map(|r| r.line).collect();
    let connect = format!("CONNECT good.test:{} HTTP/1.1", front.port());
    assert!(!asked.is_empty(), "the proxy was used");
    assert!(asked.iter().all(|l| *l == connect), "{asked:#?}");
    assert!(front.handshakes("good.test") >= 1);
    assert_eq!(front.failed_handshakes("good.test"), 0);
    let mut reached: Vec<String> = server
        .log("good.test")
        .iter()
        .map(|e| e.target.clone())
        .collect();
    reached.sort();
    assert_eq!(reached, ["/", "/a", "/robots.txt"]);

    // The records hold the HTTP exchanged inside the tunnel, in origin form.
    let page = response_of(&crawl, "00001", &urls[1]);
    let block = String::from_utf8_lossy(&page.block);
    assert!(block.ends_with("page a over https"), "{block}");
    support::warcio_check(&crawl, "00001");
}
