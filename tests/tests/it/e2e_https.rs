//! A round over https with the real binaries: `segmenter inject` of https
//! seeds, `fetcher fetch` against a loopback host behind a TLS front (its
//! certificate from a CA made at test time, trusted with `--ca-file`), then
//! `segmenter run`, which must find the page's links to https URLs and put
//! them in the next segment.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU16, Ordering};
use std::time::Duration;

use testkit::TempDir;
use testkit::bins::{self, run_within, segmenter_cmd};
use testkit::segment::read_urls;
use testkit::server::tls::{TestCa, TlsFront};
use testkit::server::{Response, Routes, Server};

const BOUND: Duration = Duration::from_secs(60);

#[test]
fn links_found_in_pages_fetched_over_https_are_followed() {
    // The TLS port, known once the front is up.
    let tls_port = Arc::new(AtomicU16::new(0));
    let port_seen = Arc::clone(&tls_port);
    let server = Server::builder()
        .host(
            "secure.test",
            Routes::new()
                .route("/robots.txt", Response::text("User-agent: *\nAllow: /\n"))
                .fallback(move |_: &testkit::server::Request| {
                    let port = port_seen.load(Ordering::SeqCst);
                    Response::html(format!(
                        "<a href=\"/next\">relative</a> \
                         <a href=\"https://secure.test:{port}/absolute\">absolute</a>"
                    ))
                }),
        )
        .start()
        .unwrap();
    let ca = TestCa::new("e2e test CA");
    let front = TlsFront::start(&server, [("secure.test", ca.leaf(&["secure.test"]))]).unwrap();
    tls_port.store(front.port(), Ordering::SeqCst);

    let tmp_dir = TempDir::new("e2e-https");
    let tmp = tmp_dir.path();
    let crawl = tmp.join("crawl");
    ca.write_pem(&tmp.join("ca.pem")).unwrap();
    std::fs::write(tmp.join("hosts"), server.hosts_file()).unwrap();
    std::fs::write(
        tmp.join("seeds.txt"),
        format!("{}\n", front.url("secure.test", "/")),
    )
    .unwrap();

    support::inject(&crawl, &tmp.join("seeds.txt"), tmp, BOUND);
    run_within(
        bins::fetch_cmd(&crawl, &tmp.join("hosts"))
            .arg("--ca-file")
            .arg(tmp.join("ca.pem")),
        tmp,
        0,
        BOUND,
    );
    let log = std::fs::read_to_string(crawl.join("fetched/00001/crawl.log")).unwrap();
    assert!(
        log.lines().any(|l| l.contains("\t200\t")
            && l.contains(&front.url("secure.test", "/"))
            && !l.contains("robots.txt")),
        "the seed fetched over https:\n{log}"
    );
    let out = run_within(segmenter_cmd().arg("run").arg(&crawl), tmp, 0, BOUND);

    let next: Vec<String> = std::fs::read_dir(crawl.join("segments"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains("00002"))
        .flat_map(|p| read_urls(&p))
        .collect();
    let mut want = vec![
        front.url("secure.test", "/absolute"),
        front.url("secure.test", "/next"),
    ];
    want.sort();
    let mut got = next.clone();
    got.sort();
    assert_eq!(got, want, "segment 00002\n{}", out.stdout);
    assert!(server.log("secure.test").iter().all(|e| e.complete));
}
