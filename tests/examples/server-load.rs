//! Measures how many small pages per second the test server answers, with a
//! trivial keep-alive client (one thread and one connection per host, one
//! request in flight per connection, like a crawler with a delay of zero).
//!
//! ```text
//! cargo run --release -p crawl-tests --example server-load -- [HOSTS] [SECONDS] [BODY_BYTES]
//! ```
//! Defaults: 200 hosts, 5 seconds, 2048-byte pages; the server runs in the
//! same process (set `SERVER_LOAD_LOG=1` to keep its request log).
//!
//! With `--against HOSTS_FILE PORT [SECONDS]` it loads a server running in
//! another process instead (e.g. `demo-web synth`), one connection per line
//! of the hosts file, so that the server's CPU can be measured on its own.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use testkit::server::{Handler, Request, Response, Server};

fn main() {
    let raw: Vec<String> = std::env::args().skip(1).collect();
    if raw.first().map(String::as_str) == Some("--against") {
        against(&raw[1..]);
        return;
    }
    let args: Vec<u64> = raw
        .iter()
        .map(|a| {
            a.parse()
                .expect("arguments are numbers: HOSTS SECONDS BODY_BYTES")
        })
        .collect();
    let hosts = args.first().copied().unwrap_or(200) as usize;
    let seconds = args.get(1).copied().unwrap_or(5);
    let body_len = args.get(2).copied().unwrap_or(2048) as usize;
    let log = std::env::var_os("SERVER_LOAD_LOG").is_some();

    let body: Arc<[u8]> = vec![b'x'; body_len].into();
    let handler: Arc<dyn Handler> =
        Arc::new(move |_: &Request| Response::shared(200, "text/html", Arc::clone(&body)));
    let mut builder = Server::builder().request_log(log);
    for i in 0..hosts {
        builder = builder.host_shared(format!("h{i}.test"), None, Arc::clone(&handler));
    }
    let server = builder.start().expect("starting the server");
    let targets: Vec<(SocketAddr, String)> = server
        .host_names()
        .map(|h| (server.addr(h), h.to_string()))
        .collect();
    let cpu_start = cpu_seconds();
    let n = load(&targets, seconds);
    let cpu = cpu_seconds() - cpu_start;
    println!(
        "{hosts} hosts, {body_len}-byte pages, request log {}: {n} requests in {seconds} s \
         = {:.0} requests/s; process CPU {cpu:.1} s ({:.1} µs per request, client and server together)",
        if log { "on" } else { "off" },
        n as f64 / seconds as f64,
        cpu * 1e6 / n as f64
    );
    assert!(server.requests_served() >= n);
}

fn against(args: &[String]) {
    let usage = "usage: server-load --against HOSTS_FILE PORT [SECONDS]";
    let hosts_file =
        std::fs::read_to_string(args.first().expect(usage)).expect("reading the hosts file");
    let port: u16 = args.get(1).expect(usage).parse().expect("PORT is a number");
    let seconds = args
        .get(2)
        .map_or(5, |s| s.parse().expect("SECONDS is a number"));
    let targets: Vec<(SocketAddr, String)> = hosts_file
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(ip, name)| {
            let ip: std::net::IpAddr = ip.parse().expect("an IP address");
            (SocketAddr::new(ip, port), name.to_string())
        })
        .collect();
    let n = load(&targets, seconds);
    println!(
        "{} hosts in another process: {n} requests in {seconds} s = {:.0} requests/s",
        targets.len(),
        n as f64 / seconds as f64
    );
}

/// One keep-alive connection and thread per target, one request in flight
/// on each, for `seconds`; returns the number of requests completed.
fn load(targets: &[(SocketAddr, String)], seconds: u64) -> u64 {
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let clients: Vec<_> = targets
        .iter()
        .enumerate()
        .map(|(i, (addr, name))| {
            let (addr, request) = (
                *addr,
                format!("GET /p/{i}.html HTTP/1.1\r\nHost: {name}\r\n\r\n"),
            );
            let (stop, done) = (Arc::clone(&stop), Arc::clone(&done));
            std::thread::spawn(move || {
                let stream = TcpStream::connect(addr).expect("connect");
                stream.set_nodelay(true).unwrap();
                stream
                    .set_read_timeout(Some(Duration::from_secs(10)))
                    .unwrap();
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut writer = stream;
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
    let first = done.load(Ordering::Relaxed);
    std::thread::sleep(Duration::from_secs(seconds));
    let n = done.load(Ordering::Relaxed) - first;
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        c.join().unwrap();
    }
    n
}

/// User + system CPU time of this process, from `/proc/self/stat`.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    // utime and stime (fields 14 and 15 of proc(5)), counted after the `)`.
    let ticks: f64 = fields.get(11..13).map_or(0.0, |f| {
        f.iter().filter_map(|v| v.parse::<f64>().ok()).sum()
    });
    ticks / 100.0
}
