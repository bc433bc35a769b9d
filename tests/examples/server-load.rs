//! Measures how many small pages per second the test server answers, with a
//! trivial keep-alive client in the same process (one thread and one
//! connection per host, one request in flight per connection, like a crawler
//! with a delay of zero).
//!
//! ```text
//! cargo run --release -p crawl-tests --example server-load -- [HOSTS] [SECONDS] [BODY_BYTES]
//! ```
//! Defaults: 200 hosts, 5 seconds, 2048-byte pages.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use testkit::server::{Handler, Request, Response, Server};

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| {
            a.parse()
                .expect("arguments are numbers: HOSTS SECONDS BODY_BYTES")
        })
        .collect();
    let hosts = args.first().copied().unwrap_or(200) as usize;
    let seconds = args.get(1).copied().unwrap_or(5);
    let body_len = args.get(2).copied().unwrap_or(2048) as usize;

    let body: Arc<[u8]> = vec![b'x'; body_len].into();
    let handler: Arc<dyn Handler> =
        Arc::new(move |_: &Request| Response::shared(200, "text/html", Arc::clone(&body)));
    let mut builder = Server::builder().request_log(false);
    for i in 0..hosts {
        builder = builder.host_shared(format!("h{i}.test"), None, Arc::clone(&handler));
    }
    let server = builder.start().expect("starting the server");

    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let clients: Vec<_> = (0..hosts)
        .map(|i| {
            let addr = server.addr(&format!("h{i}.test"));
            let (stop, done) = (Arc::clone(&stop), Arc::clone(&done));
            std::thread::spawn(move || {
                let stream = TcpStream::connect(addr).expect("connect");
                stream.set_nodelay(true).unwrap();
                stream
                    .set_read_timeout(Some(Duration::from_secs(10)))
                    .unwrap();
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut writer = stream;
                let request = format!("GET /page/{i} HTTP/1.1\r\nHost: h{i}.test\r\n\r\n");
                let mut line = String::new();
                let mut body = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    writer.write_all(request.as_bytes()).unwrap();
                    let mut len = 0;
                    loop {
                        line.clear();
                        reader.read_line(&mut line).unwrap();
                        if line == "\r\n" {
                            break;
                        }
                        if let Some(v) = line.strip_prefix("Content-Length: ") {
                            len = v.trim().parse().unwrap();
                        }
                    }
                    body.resize(len, 0);
                    reader.read_exact(&mut body).unwrap();
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();

    let cpu_start = cpu_seconds();
    let start = Instant::now();
    let first = done.load(Ordering::Relaxed);
    std::thread::sleep(Duration::from_secs(seconds));
    let n = done.load(Ordering::Relaxed) - first;
    let elapsed = start.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu_start;
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        c.join().unwrap();
    }
    println!(
        "{hosts} hosts, {body_len}-byte pages: {n} requests in {elapsed:.1} s = {:.0} requests/s; \
         process CPU {cpu:.1} s ({:.0} µs per request, client and server together)",
        n as f64 / elapsed,
        cpu * 1e6 / n as f64
    );
    assert!(server.requests_served() >= n);
}

/// User + system CPU time of this process, from `/proc/self/stat`.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    // Fields 14 and 15 of stat(5) (utime, stime), counted after the `)`.
    let ticks: f64 = fields.get(11..13).map_or(0.0, |f| {
        f.iter().filter_map(|v| v.parse::<f64>().ok()).sum()
    });
    ticks / 100.0
}
