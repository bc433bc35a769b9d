//! The server side of `scripts/bench-fetch.sh`: a crawl directory with one
//! segment of `HOSTS × PER_HOST` URLs, served by testkit's loopback server
//! (one address per host, from 127.0.0.2 upward).
//!
//! Usage: `bench_server CRAWL HOSTS PER_HOST BODY_BYTES`
//!
//! Prints `ready URLS` when the segment is written and the server listens,
//! then serves until `CRAWL/bench-stop` exists (or 30 minutes pass), and
//! prints the requests served.

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::crawldir::CrawlDir;
use common::segment::{SegmentRecord, SegmentWriter, Via};
use testkit::server::{Request, Response, Server};

const LIFETIME: Duration = Duration::from_secs(30 * 60);

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() != 4 {
        eprintln!("usage: bench_server CRAWL HOSTS PER_HOST BODY_BYTES");
        std::process::exit(2);
    }
    let crawl = CrawlDir::create(&args[0]).expect("crawl directory");
    let hosts: usize = args[1].parse().expect("HOSTS");
    let per_host: usize = args[2].parse().expect("PER_HOST");
    let body_len: usize = args[3].parse().expect("BODY_BYTES");

    let mut page = String::from("<!doctype html><html><body>");
    while page.len() < body_len {
        page.push_str("<p>Lorem ipsum dolor sit amet, consectetur adipiscing.</p>\n");
    }
    page.truncate(body_len);
    let body: Arc<[u8]> = Arc::from(page.into_bytes());
    let handler: Arc<dyn testkit::server::Handler> = Arc::new(move |req: &Request| {
        if req.path() == "/robots.txt" {
            Response::not_found()
        } else {
            Response::shared(200, "text/html", body.clone())
        }
    });
    let mut builder = Server::builder()
        .request_log(false)
        .idle_timeout(Duration::from_secs(120));
    let names: Vec<String> = (0..hosts).map(|i| format!("h{i:05}.bench.test")).collect();
    for n in &names {
        builder = builder.host_shared(n.clone(), None, handler.clone());
    }
    let server = builder.start().expect("start server");
    std::fs::write(crawl.root().join("hosts"), server.hosts_file()).expect("hosts file");

    // Domain-sorted like a real segment: all URLs of a host together.
    let mut w = SegmentWriter::create(crawl.segment_path("00001")).expect("segment");
    for n in &names {
        for i in 0..per_host {
            w.write(&SegmentRecord {
                host: n.clone(),
                url: server.url(n, &format!("/page/{i}")),
                hops: 1,
                inlinks: 1,
                via: Via::Link,
                tries: 0,
                not_before: None,
                etag: String::new(),
                last_modified: String::new(),
                digest: String::new(),
                fetched: None,
            })
            .expect("segment line");
        }
    }
    let urls = w.finish().expect("finish segment");
    println!("ready {urls}");

    let stop = crawl.root().join("bench-stop");
    let start = Instant::now();
    while !stop.exists() && start.elapsed() < LIFETIME {
        std::thread::sleep(Duration::from_millis(100));
    }
    println!("served {}", server.requests_served());
}
