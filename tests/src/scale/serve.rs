//! Serving the scale web: one thread, one listener per host on consecutive
//! loopback addresses, and the server's own count of what a polite crawl
//! never does.
//!
//! Thousands of hosts and connections cost one thread: a single-threaded
//! tokio runtime waits on every listener and connection at once (the test
//! kit's [`crate::server`] starts a thread per connection and polls every
//! listener in turn, which at 10,000 hosts costs more than the crawler it
//! serves). Each request is answered from [`ScaleWeb::answer`]; the slow
//! hosts answer after [`ScaleParams::slow_ms`](super::ScaleParams).
//!
//! The [`Tally`] counts, with each request taken from the moment its first
//! bytes were read to the moment the last write of its answer began (so
//! that a gap between two requests is never measured longer than the one
//! the client kept, however late this thread runs): URLs asked more than once,
//! robots.txt asked more than once on a host, requests robots.txt
//! disallows, requests to a host while another is in flight there
//! (`overlaps`) or sooner than [`ServeOptions::min_delay`] after the
//! previous one ended (`too_close`), and targets the web does not have.
//! [`ScaleServer::tally`] reads it and starts counting afresh, so that
//! several crawls of one web, one after another, are counted apart.
//!
//! ```
//! use testkit::scale::{ScaleParams, ScaleWeb, serve::{ScaleServer, ServeOptions}};
//! use std::io::{Read, Write};
//!
//! let web = ScaleWeb::new(ScaleParams { hosts: 3, pages: 5, ..ScaleParams::default() });
//! let server = ScaleServer::start(web, ServeOptions::default()).unwrap();
//! for _ in 0..2 {
//!     let mut c = std::net::TcpStream::connect((server.addrs()[0], server.port())).unwrap();
//!     c.write_all(b"GET /p/3.html HTTP/1.1\r\nHost: h00000.scale.test\r\nConnection: close\r\n\r\n").unwrap();
//!     let mut answer = String::new();
//!     c.read_to_string(&mut answer).unwrap();
//!     assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"));
//! }
//! let tally = server.tally();
//! assert_eq!((tally.requests, tally.urls, tally.urls_asked_twice), (2, 1, 1));
//! assert_eq!(server.tally().requests, 0);
//! ```

use std::cell::RefCell;
use std::io;
use std::net::Ipv4Addr;
use std::rc::Rc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

use super::{FIRST_SCALE_ADDRESS, OUTSIDE_ADDRESS, OUTSIDE_HOSTS, ScaleWeb};
use crate::server::{bind_all, consecutive_addresses};

/// The longest request head read (request line and headers).
const MAX_HEAD: usize = 16 * 1024;

/// URLs asked twice, and requests too close, named in a [`Tally`] (the
/// first ones), to look into.
const EXAMPLES: usize = 10;

/// How to serve.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The port every host listens on (default: one free on every address).
    pub port: Option<u16>,
    /// The first host's address (default [`FIRST_SCALE_ADDRESS`]).
    pub first_address: Ipv4Addr,
    /// The delay the crawl keeps between two requests to a host: a request
    /// sooner than this after the previous one ended is counted
    /// `too_close` (default 0: only overlapping requests count).
    pub min_delay: Duration,
    /// How long an idle connection is kept (default 60 s).
    pub idle_timeout: Duration,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            port: None,
            first_address: FIRST_SCALE_ADDRESS,
            min_delay: Duration::ZERO,
            idle_timeout: Duration::from_secs(60),
        }
    }
}

/// What the server saw since it started or since the last
/// [`ScaleServer::tally`]. A polite crawl that fetches each URL once
/// leaves every field named in [`Tally::faults`] at 0.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tally {
    /// Requests answered (or cut by the client).
    pub requests: u64,
    /// Requests answered `200`, `301`, `404`, and something else.
    pub ok: u64,
    /// See `ok`.
    pub redirects: u64,
    /// See `ok`.
    pub not_found: u64,
    /// See `ok` (none expected).
    pub other_status: u64,
    /// Requests for robots.txt.
    pub robots: u64,
    /// Distinct URLs asked for, robots.txt left out.
    pub urls: u64,
    /// Distinct hosts asked anything.
    pub hosts: u64,
    /// URLs (robots.txt left out) asked for more than once.
    pub urls_asked_twice: u64,
    /// Requests that asked again for a URL already asked for.
    pub repeated_requests: u64,
    /// Hosts whose robots.txt was asked for more than once.
    pub robots_asked_twice: u64,
    /// Requests for a URL the host's robots.txt disallows to the crawler.
    pub disallowed: u64,
    /// Requests for a target the web does not have.
    pub unknown: u64,
    /// Requests that arrived while another was in flight on the same host.
    pub overlaps: u64,
    /// Requests that arrived less than `min_delay` after the previous one
    /// on the same host ended.
    pub too_close: u64,
    /// The shortest gap seen between the end of a request and the start of
    /// the next on the same host, in milliseconds.
    pub closest_gap_ms: Option<f64>,
    /// The most requests in flight at once, on all hosts together.
    pub max_in_flight: u64,
    /// Body bytes sent.
    pub body_bytes: u64,
    /// When the first and the last request arrived (ms since the epoch).
    pub first_ms: Option<u64>,
    /// See `first_ms`.
    pub last_ms: Option<u64>,
    /// The first URLs asked twice (host and target), to look into.
    pub twice_examples: Vec<String>,
    /// The first requests closer than `min_delay` to the one before on
    /// their host: the host, both targets and the gap.
    pub close_examples: Vec<String>,
}

impl Tally {
    /// The counts that must be 0 for a polite crawl that asks each URL
    /// once, by name.
    pub fn faults(&self) -> [(&'static str, u64); 6] {
        [
            ("urls_asked_twice", self.urls_asked_twice),
            ("robots_asked_twice", self.robots_asked_twice),
            ("disallowed", self.disallowed),
            ("unknown", self.unknown),
            ("overlaps", self.overlaps),
            ("too_close", self.too_close),
        ]
    }

    /// As one JSON object (the field names above).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "requests": self.requests,
            "ok": self.ok,
            "redirects": self.redirects,
            "not_found": self.not_found,
            "other_status": self.other_status,
            "robots": self.robots,
            "urls": self.urls,
            "hosts": self.hosts,
            "urls_asked_twice": self.urls_asked_twice,
            "repeated_requests": self.repeated_requests,
            "robots_asked_twice": self.robots_asked_twice,
            "disallowed": self.disallowed,
            "unknown": self.unknown,
            "overlaps": self.overlaps,
            "too_close": self.too_close,
            "closest_gap_ms": self.closest_gap_ms,
            "max_in_flight": self.max_in_flight,
            "body_bytes": self.body_bytes,
            "first_ms": self.first_ms,
            "last_ms": self.last_ms,
            "twice_examples": self.twice_examples,
            "close_examples": self.close_examples,
        })
    }
}

/// A host's requests in flight, and when its last one ended and what it
/// asked for.
#[derive(Debug, Clone, Default)]
struct HostWatch {
    in_flight: u32,
    last_end: Option<Instant>,
    last_target: String,
}

/// Everything the connections share (one thread: no locks).
struct Shared {
    web: ScaleWeb,
    port: u16,
    options: ServeOptions,
    slow: Duration,
    tally: RefCell<Tally>,
    watch: RefCell<Vec<HostWatch>>,
    in_flight: RefCell<u64>,
    /// Times each node was asked for (saturating), by node number.
    asked: RefCell<Vec<u8>>,
    /// Times each host's robots.txt and anything at all was asked for.
    robots_asked: RefCell<Vec<u8>>,
    host_asked: RefCell<Vec<bool>>,
}

fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl Shared {
    /// A request for `target` on `host` began at `start`.
    fn begin(&self, host: u32, target: &str, start: Instant) {
        let mut t = self.tally.borrow_mut();
        let now_ms = unix_ms();
        t.first_ms.get_or_insert(now_ms);
        t.last_ms = Some(now_ms);
        let mut watch = self.watch.borrow_mut();
        let w = &mut watch[host as usize];
        if w.in_flight > 0 {
            t.overlaps += 1;
        } else if let Some(end) = w.last_end {
            let gap = start.saturating_duration_since(end);
            let ms = gap.as_secs_f64() * 1000.0;
            t.closest_gap_ms = Some(t.closest_gap_ms.map_or(ms, |c: f64| c.min(ms)));
            if gap < self.options.min_delay {
                t.too_close += 1;
                if t.close_examples.len() < EXAMPLES {
                    t.close_examples.push(format!(
                        "{} {} then {} {ms:.3} ms after",
                        self.web.host_name(host),
                        w.last_target,
                        target
                    ));
                }
            }
        }
        w.in_flight += 1;
        w.last_target.clear();
        w.last_target.push_str(target);
        let mut all = self.in_flight.borrow_mut();
        *all += 1;
        t.max_in_flight = t.max_in_flight.max(*all);
        let mut hosts = self.host_asked.borrow_mut();
        if !std::mem::replace(&mut hosts[host as usize], true) {
            t.hosts += 1;
        }
        if target == "/robots.txt" {
            t.robots += 1;
            let mut asked = self.robots_asked.borrow_mut();
            let n = &mut asked[host as usize];
            *n = n.saturating_add(1);
            if *n == 2 {
                t.robots_asked_twice += 1;
            }
            return;
        }
        let node = self.web.node_of_target(host, target);
        let Some(i) = node.and_then(|n| self.web.index(n)) else {
            t.unknown += 1;
            return;
        };
        let mut asked = self.asked.borrow_mut();
        let n = &mut asked[i as usize];
        *n = n.saturating_add(1);
        match *n {
            1 => t.urls += 1,
            2 => {
                t.urls_asked_twice += 1;
                t.repeated_requests += 1;
                if t.twice_examples.len() < EXAMPLES {
                    t.twice_examples
                        .push(format!("{}{target}", self.web.host_name(host)));
                }
            }
            _ => t.repeated_requests += 1,
        }
        if !self.web.fetchable(node.expect("checked above")) {
            t.disallowed += 1;
        }
    }

    /// The request on `host` ended at `at` with `status` (0: no answer
    /// sent) and `body` bytes.
    fn end(&self, host: u32, at: Instant, status: u16, body: usize) {
        let mut t = self.tally.borrow_mut();
        t.requests += 1;
        t.body_bytes += body as u64;
        match status {
            200 => t.ok += 1,
            301 => t.redirects += 1,
            404 => t.not_found += 1,
            _ => t.other_status += 1,
        }
        let mut watch = self.watch.borrow_mut();
        let w = &mut watch[host as usize];
        w.in_flight = w.in_flight.saturating_sub(1);
        w.last_end = Some(at);
        let mut all = self.in_flight.borrow_mut();
        *all = all.saturating_sub(1);
    }

    /// The tally so far; counting starts afresh (a new crawl of the web).
    fn take(&self) -> Tally {
        self.asked.borrow_mut().iter_mut().for_each(|n| *n = 0);
        self.robots_asked
            .borrow_mut()
            .iter_mut()
            .for_each(|n| *n = 0);
        self.host_asked
            .borrow_mut()
            .iter_mut()
            .for_each(|n| *n = false);
        std::mem::take(&mut *self.tally.borrow_mut())
    }
}

/// What the handle asks of the serving thread.
enum Control {
    Tally(std::sync::mpsc::Sender<Tally>),
    Stop,
}

/// The scale web being served; dropping it stops the server.
pub struct ScaleServer {
    web: ScaleWeb,
    port: u16,
    addrs: Vec<Ipv4Addr>,
    control: mpsc::UnboundedSender<Control>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for ScaleServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScaleServer")
            .field("port", &self.port)
            .field("hosts", &self.addrs.len())
            .finish()
    }
}

impl ScaleServer {
    /// Binds every host (one address each, one shared port) and serves
    /// from a thread of its own; connections are accepted from the moment
    /// this returns.
    pub fn start(web: ScaleWeb, options: ServeOptions) -> io::Result<ScaleServer> {
        let hosts = web.params().hosts as usize;
        let addrs = consecutive_addresses(options.first_address, hosts)?;
        let (listeners, port) = bind_all(&addrs, options.port)?;
        for l in &listeners {
            l.set_nonblocking(true)?;
        }
        let shared = SharedSeed {
            web: web.clone(),
            port,
            options,
        };
        let (control, orders) = mpsc::unbounded_channel();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .build()?;
        let thread = std::thread::Builder::new()
            .name("scale-web".into())
            .spawn(move || run(runtime, listeners, shared, orders))?;
        Ok(ScaleServer {
            web,
            port,
            addrs,
            control,
            thread: Some(thread),
        })
    }

    /// The shared port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The address of each host, by host number.
    pub fn addrs(&self) -> &[Ipv4Addr] {
        &self.addrs
    }

    /// The web served.
    pub fn web(&self) -> &ScaleWeb {
        &self.web
    }

    /// `IP NAME` lines for every host, and for the out-of-scope names an
    /// address where nothing listens (the format of `fetcher --hosts-file`):
    /// no name of the web is ever asked of a name server.
    pub fn hosts_file(&self) -> String {
        let mut out = String::new();
        for (h, a) in self.addrs.iter().enumerate() {
            out.push_str(&format!("{a} {}\n", self.web.host_name(h as u32)));
        }
        for k in 0..OUTSIDE_HOSTS {
            out.push_str(&format!("{OUTSIDE_ADDRESS} www{k}.outside.test\n"));
        }
        out
    }

    /// The seeds file: one URL per line.
    pub fn seeds_file(&self) -> String {
        self.web
            .seeds()
            .into_iter()
            .map(|s| format!("{}\n", self.web.url(s, self.port)))
            .collect()
    }

    /// What the server saw since it started or since the last call; the
    /// counts start afresh.
    pub fn tally(&self) -> Tally {
        let (tx, rx) = std::sync::mpsc::channel();
        if self.control.send(Control::Tally(tx)).is_err() {
            return Tally::default();
        }
        rx.recv_timeout(Duration::from_secs(30)).unwrap_or_default()
    }
}

impl Drop for ScaleServer {
    fn drop(&mut self) {
        let _ = self.control.send(Control::Stop);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// What the serving thread starts from.
struct SharedSeed {
    web: ScaleWeb,
    port: u16,
    options: ServeOptions,
}

fn run(
    runtime: tokio::runtime::Runtime,
    listeners: Vec<std::net::TcpListener>,
    seed: SharedSeed,
    mut orders: mpsc::UnboundedReceiver<Control>,
) {
    let p = seed.web.params();
    let shared = Rc::new(Shared {
        slow: Duration::from_millis(p.slow_ms),
        watch: RefCell::new(vec![HostWatch::default(); p.hosts as usize]),
        asked: RefCell::new(vec![0; seed.web.node_count() as usize]),
        robots_asked: RefCell::new(vec![0; p.hosts as usize]),
        host_asked: RefCell::new(vec![false; p.hosts as usize]),
        tally: RefCell::default(),
        in_flight: RefCell::new(0),
        web: seed.web,
        port: seed.port,
        options: seed.options,
    });
    let local = tokio::task::LocalSet::new();
    local.block_on(&runtime, async move {
        for (host, l) in listeners.into_iter().enumerate() {
            match TcpListener::from_std(l) {
                Ok(l) => {
                    tokio::task::spawn_local(accept(l, host as u32, Rc::clone(&shared)));
                }
                Err(e) => eprintln!("scale-web: host {host}: {e}"),
            }
        }
        while let Some(order) = orders.recv().await {
            match order {
                Control::Tally(reply) => {
                    let _ = reply.send(shared.take());
                }
                Control::Stop => break,
            }
        }
    });
}

async fn accept(listener: TcpListener, host: u32, shared: Rc<Shared>) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                let _ = stream.set_nodelay(true);
                tokio::task::spawn_local(connection(stream, host, Rc::clone(&shared)));
            }
            Err(e) => {
                // Out of descriptors and the like: say so, let it pass.
                eprintln!("scale-web: accepting on host {host}: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// A request head read from a connection.
struct Head {
    len: usize,
    target: String,
    close: bool,
    head_only: bool,
}

/// Parses a complete head at the start of `buf`; `Ok(None)` if more bytes
/// are needed, `Err` if it is not HTTP.
fn parse_head(buf: &[u8]) -> Result<Option<Head>, ()> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut req = httparse::Request::new(&mut headers);
    let len = match req.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(_) => return Err(()),
    };
    let connection = req
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("connection"))
        .map(|h| String::from_utf8_lossy(h.value).to_ascii_lowercase());
    let close = match req.version {
        Some(0) => connection.as_deref() != Some("keep-alive"),
        _ => connection.as_deref() == Some("close"),
    };
    Ok(Some(Head {
        len,
        target: req.path.unwrap_or("/").to_string(),
        close,
        head_only: req.method == Some("HEAD"),
    }))
}

/// Serves the requests of one connection, one after another.
async fn connection(stream: TcpStream, host: u32, shared: Rc<Shared>) {
    let mut buf: Vec<u8> = Vec::with_capacity(2048);
    let mut scratch = [0u8; 4096];
    let idle = shared.options.idle_timeout;
    loop {
        let mut start = None;
        let head = loop {
            if !buf.is_empty() {
                start.get_or_insert_with(Instant::now);
                match parse_head(&buf) {
                    Ok(Some(head)) => break head,
                    Ok(None) if buf.len() < MAX_HEAD => {}
                    _ => return,
                }
            }
            match tokio::time::timeout(idle, stream.readable()).await {
                Ok(Ok(())) => {}
                _ => return,
            }
            match stream.try_read(&mut scratch) {
                Ok(0) => return,
                Ok(n) => buf.extend_from_slice(&scratch[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(_) => return,
            }
        };
        let start = start.unwrap_or_else(Instant::now);
        shared.begin(host, &head.target, start);
        if shared.web.is_slow(host) {
            tokio::time::sleep(shared.slow).await;
        }
        let answer = shared.web.answer(host, &head.target, shared.port);
        let mut out = format!(
            "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n",
            answer.status,
            match answer.status {
                200 => "OK",
                301 => "Moved Permanently",
                _ => "Not Found",
            },
            answer.content_type,
            answer.body.len()
        )
        .into_bytes();
        if let Some(location) = &answer.location {
            out.extend_from_slice(format!("Location: {location}\r\n").as_bytes());
        }
        if head.close {
            out.extend_from_slice(b"Connection: close\r\n");
        }
        out.extend_from_slice(b"\r\n");
        if !head.head_only {
            out.extend_from_slice(&answer.body);
        }
        let written = write_all(&stream, &out).await;
        let body = if head.head_only { 0 } else { answer.body.len() };
        match written {
            Some(at) => shared.end(host, at, answer.status, body),
            None => shared.end(host, Instant::now(), 0, 0),
        }
        buf.drain(..head.len);
        if written.is_none() || head.close {
            return;
        }
    }
}

/// Writes `bytes`; returns when the last write began (the earliest moment
/// the client could hold the whole answer: a politeness gap measured from
/// there is never longer than the one the client kept, however late this
/// thread runs after the write), or `None` if the connection failed.
async fn write_all(stream: &TcpStream, mut bytes: &[u8]) -> Option<Instant> {
    let mut last = Instant::now();
    while !bytes.is_empty() {
        stream.writable().await.ok()?;
        last = Instant::now();
        match stream.try_write(bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(_) => return None,
        }
    }
    Some(last)
}
