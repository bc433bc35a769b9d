//! The server side of `scripts/bench-tls.sh`: the same pages served over
//! http and over https (testkit's loopback server, and its TLS front with a
//! certificate per host from a CA made at start), with one crawl directory
//! for each: `DIR/http` and `DIR/https`, each with segment 00001 of
//! `HOSTS × PER_HOST` URLs, a hosts file and (for https) `ca.pem`.
//!
//! Usage: `bench_tls_server DIR HOSTS PER_HOST BODY_BYTES`
//!
//! Prints `ready URLS` when both segments are written and the servers
//! listen, then serves until `DIR/bench-stop` exists (or 30 minutes pass).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::crawldir::CrawlDir;
use testkit::server::tls::{TestCa, TlsFront};

const LIFETIME: Duration = Duration::from_secs(30 * 60);

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() != 4 {
        eprintln!("usage: bench_tls_server DIR HOSTS PER_HOST BODY_BYTES");
        std::process::exit(2);
    }
    let dir = Path::new(&args[0]);
    let hosts: usize = args[1].parse().expect("HOSTS");
    let per_host: usize = args[2].parse().expect("PER_HOST");
    let body_len: usize = args[3].parse().expect("BODY_BYTES");

    let mut page = String::from("<!doctype html><html><body>");
    while page.len() < body_len {
        page.push_str("<p>Lorem ipsum dolor sit amet, consectetur adipiscing.</p>\n");
    }
    page.truncate(body_len);
    let body: Arc<[u8]> = Arc::from(page.into_bytes());
    let (server, names) = testkit::server::same_page_web(hosts, body).expect("start server");
    let ca = TestCa::new("bench CA");
    let front = TlsFront::start(
        &server,
        names.iter().map(|n| (n.as_str(), ca.leaf(&[n.as_str()]))),
    )
    .expect("start the TLS front");

    let mut urls = 0;
    for (scheme, url_of) in [
        (
            "http",
            Box::new(|n: &str, p: &str| server.url(n, p)) as Box<dyn Fn(&str, &str) -> String>,
        ),
        ("https", Box::new(|n: &str, p: &str| front.url(n, p))),
    ] {
        let crawl = CrawlDir::create(dir.join(scheme)).expect("crawl directory");
        std::fs::write(crawl.root().join("hosts"), server.hosts_file()).expect("hosts file");
        ca.write_pem(&crawl.root().join("ca.pem")).expect("CA file");
        // Domain-sorted like a real segment: all URLs of a host together.
        let lines = names
            .iter()
            .flat_map(|n| (0..per_host).map(|i| (n.clone(), url_of(n, &format!("/page/{i}")))));
        urls = testkit::segment::write_links(&crawl.segment_path("00001"), lines);
    }
    println!("ready {urls}");

    let stop = dir.join("bench-stop");
    let start = Instant::now();
    while !stop.exists() && start.elapsed() < LIFETIME {
        std::thread::sleep(Duration::from_millis(100));
    }
    println!("served {}", server.requests_served());
}
