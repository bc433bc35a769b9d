//! Loopback HTTP/1.1 servers acting as separate hosts, with request logs.
//!
//! A [`Server`] runs one listener per *host*, each on its own loopback
//! address (`127.0.0.2`, `127.0.0.3`, ... unless the caller picks them), all
//! on one shared port. A crawler that maps host names to those addresses (a
//! hosts file, see [`Server::hosts_file`]) sees as many separate web servers.
//! Every host answers with its own [`Handler`]: a closure
//! `Fn(&Request) -> Response` or a table of [`Routes`].
//!
//! ```
//! use std::io::{Read, Write};
//! use testkit::server::{Response, Routes, Server};
//!
//! let server = Server::builder()
//!     .host("a.test", Routes::new().route("/", Response::html("<a href=/b>b</a>")))
//!     .host("b.test", |req: &testkit::server::Request| {
//!         Response::text(format!("you asked for {}", req.target()))
//!     })
//!     .start()
//!     .unwrap();
//! let mut conn = std::net::TcpStream::connect(server.addr("b.test")).unwrap();
//! conn.write_all(b"GET /x HTTP/1.1\r\nHost: b.test\r\nConnection: close\r\n\r\n").unwrap();
//! let mut answer = String::new();
//! conn.read_to_string(&mut answer).unwrap();
//! assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"));
//! assert!(answer.ends_with("you asked for /x"));
//! assert_eq!(server.log("b.test")[0].target, "/x");
//! ```
//!
//! # Behaviours
//! Besides plain answers, a [`Response`] can misbehave the way real servers
//! do: [`never answer`](Response::never_answer), [`wait`](Response::delay)
//! before answering, [`trickle`](Response::trickle) the body, stream a
//! [`huge`](Response::huge) body generated on the fly, serve a
//! [`gzip bomb`](Response::gzip_bomb), [`close`](Response::close_after) the
//! connection mid-body, use [`chunked`](Response::chunked) transfer encoding.
//! Redirects and `Retry-After` are ordinary statuses and headers
//! ([`Response::redirect`], [`Response::retry_after`]).
//!
//! # Request log and politeness
//! Each host records a [`LogEntry`] per request: its start (the moment the
//! first bytes of the request line arrived) and its end (the moment the
//! response was fully written, or the connection was found closed or cut).
//! [`assert_polite`] checks from the server side that no host saw two
//! overlapping requests or two requests too close together.
//!
//! # Shutting down
//! Dropping the [`Server`] stops it: the accept loop ends, every open
//! connection is shut down (which also ends held and trickling responses),
//! and the drop waits (at most a few seconds) for the connection threads to
//! finish, so no thread outlives the test that started it.
//!
//! # Speed
//! The per-request path parses with `httparse` into buffers the connection
//! reuses, writes the head and a small body with one system call, and sets
//! `TCP_NODELAY`. For benchmarks, serve shared bodies ([`Response::shared`])
//! and turn the log off ([`ServerBuilder::request_log`]`(false)`); the
//! server still counts requests ([`Server::requests_served`]).

mod accept;
mod bomb;
mod conn;
mod polite;
pub mod tls;

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub use polite::{Violation, assert_polite, assert_polite_by_host, politeness_violations};

/// The first address handed out when the caller does not pick one.
pub const FIRST_HOST_ADDRESS: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 2);

/// How many times [`ServerBuilder::start`] tries another shared port when a
/// chosen port is already taken on one of the addresses.
const PORT_ATTEMPTS: usize = 64;

/// How long dropping a server waits for its connection threads.
const DROP_WAIT: Duration = Duration::from_secs(5);

/// Answers the requests of one host.
///
/// Implemented for closures `Fn(&Request) -> Response` and for [`Routes`].
/// A handler that panics answers `500` and the panic message is printed.
pub trait Handler: Send + Sync + 'static {
    /// The response to `request`.
    fn handle(&self, request: &Request) -> Response;
}

impl<F> Handler for F
where
    F: Fn(&Request) -> Response + Send + Sync + 'static,
{
    fn handle(&self, request: &Request) -> Response {
        self(request)
    }
}

/// The benchmark host's handler: `body` (shared, with `content_type`) at
/// every path, and `404` at `/robots.txt` (no rules). One handler can serve
/// many hosts ([`ServerBuilder::host_shared`]).
pub fn same_page_everywhere(content_type: &'static str, body: Arc<[u8]>) -> Arc<dyn Handler> {
    Arc::new(move |req: &Request| {
        if req.path() == "/robots.txt" {
            Response::not_found()
        } else {
            Response::shared(200, content_type, Arc::clone(&body))
        }
    })
}

/// The benchmarks' web: one server answering `body` (HTML) at every path
/// of `hosts` names `h00000.bench.test`, `h00001.bench.test`, ... (see
/// [`same_page_everywhere`]); returns it with the names, in order.
pub fn same_page_web(hosts: usize, body: Arc<[u8]>) -> io::Result<(Server, Vec<String>)> {
    let handler = same_page_everywhere("text/html", body);
    let mut builder = Server::builder()
        .request_log(false)
        .idle_timeout(Duration::from_secs(120));
    let names: Vec<String> = (0..hosts).map(|i| format!("h{i:05}.bench.test")).collect();
    for n in &names {
        builder = builder.host_shared(n.clone(), None, handler.clone());
    }
    Ok((builder.start()?, names))
}

/// A parsed request, as a [`Handler`] sees it.
///
/// Strings are decoded as UTF-8, with invalid bytes replaced by U+FFFD.
#[derive(Debug, Clone)]
pub struct Request {
    text: String,
    method: (usize, usize),
    target: (usize, usize),
    headers: Vec<((usize, usize), (usize, usize))>,
    minor_version: u8,
    body: Vec<u8>,
    peer: SocketAddr,
    local: SocketAddr,
    host: Arc<str>,
}

impl Request {
    fn empty(peer: SocketAddr, local: SocketAddr, host: Arc<str>) -> Request {
        Request {
            text: String::with_capacity(512),
            method: (0, 0),
            target: (0, 0),
            headers: Vec::with_capacity(16),
            minor_version: 1,
            body: Vec::new(),
            peer,
            local,
            host,
        }
    }

    fn slice(&self, (a, b): (usize, usize)) -> &str {
        &self.text[a..b]
    }

    /// The method (`GET`, `HEAD`, ...).
    pub fn method(&self) -> &str {
        self.slice(self.method)
    }

    /// The request target as sent: path and query (`/a/b?x=1`).
    pub fn target(&self) -> &str {
        self.slice(self.target)
    }

    /// The path part of the target (before `?`).
    pub fn path(&self) -> &str {
        let t = self.target();
        t.split_once('?').map_or(t, |(p, _)| p)
    }

    /// The query part of the target (after `?`), if there is one.
    pub fn query(&self) -> Option<&str> {
        self.target().split_once('?').map(|(_, q)| q)
    }

    /// The first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    }

    /// All headers in the order received.
    pub fn headers(&self) -> impl Iterator<Item = (&str, &str)> {
        self.headers
            .iter()
            .map(|&(n, v)| (self.slice(n), self.slice(v)))
    }

    /// `1` for HTTP/1.1, `0` for HTTP/1.0.
    pub fn minor_version(&self) -> u8 {
        self.minor_version
    }

    /// The request body (read according to `Content-Length`).
    pub fn body(&self) -> &[u8] {
        &self.body
    }

    /// The client's address.
    pub fn peer(&self) -> SocketAddr {
        self.peer
    }

    /// The address the client connected to (this host's listener).
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The name this host was given in [`ServerBuilder::host`] (not the
    /// `Host` header; see [`Request::header`] for that).
    pub fn host_name(&self) -> &str {
        &self.host
    }

    fn wants_close(&self) -> bool {
        let connection = self.header("connection").unwrap_or("");
        let has = |token: &str| {
            connection
                .split(',')
                .any(|t| t.trim().eq_ignore_ascii_case(token))
        };
        if self.minor_version == 0 {
            !has("keep-alive")
        } else {
            has("close")
        }
    }
}

/// Bytes that are either static or shared, so that cloning a response is cheap.
#[derive(Clone)]
enum Bytes {
    Static(&'static [u8]),
    Shared(Arc<[u8]>),
}

impl Bytes {
    fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Static(b) => b,
            Bytes::Shared(b) => b,
        }
    }
}

/// Where the body of a response comes from.
#[derive(Clone)]
enum Body {
    Bytes(Bytes),
    /// `len` bytes of filler text generated while sending.
    Filler(u64),
    /// A crafted gzip stream (see [`Response::gzip_bomb`]).
    Bomb(Arc<bomb::GzipBomb>),
}

impl Body {
    fn len(&self) -> u64 {
        match self {
            Body::Bytes(b) => b.as_slice().len() as u64,
            Body::Filler(n) => *n,
            Body::Bomb(b) => b.compressed_len(),
        }
    }
}

/// How a response is sent, beyond its bytes.
#[derive(Clone, Default)]
struct Behaviour {
    never_answer: bool,
    delay: Duration,
    trickle: Option<(usize, Duration)>,
    chunked: Option<usize>,
    close_after: Option<u64>,
    close: bool,
}

/// What a [`Handler`] answers: status, headers, body, and how to send them.
///
/// The server adds `Content-Length` (unless the response is chunked or sets
/// one itself) and `Connection: close` when it closes the connection after
/// the response. Cloning is cheap: bodies are shared.
#[derive(Clone)]
pub struct Response {
    status: u16,
    headers: Vec<(Cow<'static, str>, Cow<'static, str>)>,
    body: Body,
    behaviour: Behaviour,
}

impl fmt::Debug for Response {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Response")
            .field("status", &self.status)
            .field("headers", &self.headers)
            .field("body_len", &self.body.len())
            .finish_non_exhaustive()
    }
}

impl Response {
    /// An empty response with `status`.
    pub fn status(status: u16) -> Response {
        Response {
            status,
            headers: Vec::new(),
            body: Body::Bytes(Bytes::Static(b"")),
            behaviour: Behaviour::default(),
        }
    }

    /// `200` with an HTML body (`text/html; charset=utf-8`).
    pub fn html(body: impl Into<String>) -> Response {
        Response::status(200)
            .header("Content-Type", "text/html; charset=utf-8")
            .body(body.into().into_bytes())
    }

    /// `200` with a plain-text body (`text/plain; charset=utf-8`).
    pub fn text(body: impl Into<String>) -> Response {
        Response::status(200)
            .header("Content-Type", "text/plain; charset=utf-8")
            .body(body.into().into_bytes())
    }

    /// `status` with a body shared between responses (no copy per request:
    /// the way to serve many small pages fast).
    pub fn shared(status: u16, content_type: &'static str, body: Arc<[u8]>) -> Response {
        let mut r = Response::status(status).header("Content-Type", content_type);
        r.body = Body::Bytes(Bytes::Shared(body));
        r
    }

    /// `404` with a short text body.
    pub fn not_found() -> Response {
        Response::status(404)
            .header("Content-Type", "text/plain; charset=utf-8")
            .body(&b"not found\n"[..])
    }

    /// A redirect (`301`, `302`, `303`, `307` or `308`) to `location`
    /// (absolute or relative, sent as given).
    pub fn redirect(status: u16, location: impl Into<String>) -> Response {
        let location = location.into();
        Response::status(status)
            .header("Content-Type", "text/html; charset=utf-8")
            .body(format!("<a href=\"{location}\">moved</a>\n").into_bytes())
            .header("Location", location)
    }

    /// `status` (usually `429` or `503`) with `Retry-After: SECONDS`.
    pub fn retry_after(status: u16, seconds: u64) -> Response {
        Response::status(status)
            .header("Retry-After", seconds.to_string())
            .header("Content-Type", "text/plain; charset=utf-8")
            .body(&b"try again later\n"[..])
    }

    /// `200` with a body of `len` bytes of filler text (lines of HTML
    /// paragraphs), generated while sending: a 200 MB body costs no memory.
    pub fn huge(len: u64) -> Response {
        let mut r = Response::status(200).header("Content-Type", "text/html; charset=utf-8");
        r.body = Body::Filler(len);
        r
    }

    /// `200` with `Content-Encoding: gzip` and a small gzip stream that
    /// inflates to `inflated_len` zero bytes (a few KiB of gzip per MiB
    /// inflated: 4 GiB inflated is about 4 MiB sent). The stream is valid
    /// (correct CRC and length), crafted rather than compressed, so building
    /// it costs nothing.
    pub fn gzip_bomb(inflated_len: u64) -> Response {
        let mut r = Response::status(200)
            .header("Content-Type", "text/html")
            .header("Content-Encoding", "gzip");
        r.body = Body::Bomb(Arc::new(bomb::GzipBomb::new(inflated_len)));
        r
    }

    /// Reads the request, then never answers: the connection is held open
    /// until the client closes it or the server is dropped.
    pub fn never_answer() -> Response {
        let mut r = Response::status(0);
        r.behaviour.never_answer = true;
        r
    }

    /// Adds a header (kept in order; several with one name are allowed).
    pub fn header(
        mut self,
        name: impl Into<Cow<'static, str>>,
        value: impl Into<Cow<'static, str>>,
    ) -> Response {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Replaces the body.
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Response {
        let body: Vec<u8> = body.into();
        self.body = Body::Bytes(Bytes::Shared(body.into()));
        self
    }

    /// Waits `delay` before sending anything (a slow first byte).
    pub fn delay(mut self, delay: Duration) -> Response {
        self.behaviour.delay = delay;
        self
    }

    /// Sends the head at once, then the body `bytes` at a time, one piece
    /// every `interval`.
    pub fn trickle(mut self, bytes: usize, interval: Duration) -> Response {
        self.behaviour.trickle = Some((bytes.max(1), interval));
        self
    }

    /// Sends the body with `Transfer-Encoding: chunked`, in chunks of at most
    /// `chunk_size` bytes (with [`trickle`](Response::trickle), one chunk per
    /// piece).
    pub fn chunked(mut self, chunk_size: usize) -> Response {
        self.behaviour.chunked = Some(chunk_size.max(1));
        self
    }

    /// Closes the connection after `body_bytes` bytes of the body, although
    /// the head announced more.
    pub fn close_after(mut self, body_bytes: u64) -> Response {
        self.behaviour.close_after = Some(body_bytes);
        self
    }

    /// Closes the connection after this response (`Connection: close`).
    pub fn close(mut self) -> Response {
        self.behaviour.close = true;
        self
    }

    /// The status code (`0` for [`never_answer`](Response::never_answer)).
    pub fn status_code(&self) -> u16 {
        self.status
    }

    /// The number of body bytes the response sends when all goes well (for a
    /// gzip bomb, the compressed size).
    pub fn body_len(&self) -> u64 {
        self.body.len()
    }
}

enum Route {
    Fixed(Response),
    Dynamic(Box<dyn Handler>),
}

/// A [`Handler`] made of fixed answers per target, with a fallback (`404`).
///
/// A request matches a route whose key equals its whole target (path and
/// query) or, failing that, its path.
pub struct Routes {
    routes: HashMap<String, Route>,
    fallback: Route,
}

impl Default for Routes {
    fn default() -> Self {
        Routes::new()
    }
}

impl Routes {
    /// No routes; everything answers `404`.
    pub fn new() -> Routes {
        Routes {
            routes: HashMap::new(),
            fallback: Route::Fixed(Response::not_found()),
        }
    }

    /// Answers `target` with (a clone of) `response`.
    pub fn route(mut self, target: impl Into<String>, response: Response) -> Routes {
        self.routes.insert(target.into(), Route::Fixed(response));
        self
    }

    /// Answers `target` with `handler`.
    pub fn route_fn(mut self, target: impl Into<String>, handler: impl Handler) -> Routes {
        self.routes
            .insert(target.into(), Route::Dynamic(Box::new(handler)));
        self
    }

    /// Answers every unmatched request with `handler` instead of `404`.
    pub fn fallback(mut self, handler: impl Handler) -> Routes {
        self.fallback = Route::Dynamic(Box::new(handler));
        self
    }
}

impl Handler for Routes {
    fn handle(&self, request: &Request) -> Response {
        let route = self
            .routes
            .get(request.target())
            .or_else(|| self.routes.get(request.path()))
            .unwrap_or(&self.fallback);
        match route {
            Route::Fixed(r) => r.clone(),
            Route::Dynamic(h) => h.handle(request),
        }
    }
}

/// One request as a host saw it.
#[derive(Debug, Clone)]
pub struct LogEntry {
    /// The host's name (as given to [`ServerBuilder::host`]).
    pub host: Arc<str>,
    /// The method.
    pub method: String,
    /// Path and query as sent.
    pub target: String,
    /// The `Host` header, if any.
    pub host_header: Option<String>,
    /// The `User-Agent` header, if any.
    pub user_agent: Option<String>,
    /// The client's address.
    pub peer: SocketAddr,
    /// Which connection carried the request (numbered per server from 0), to
    /// see whether the client kept connections alive.
    pub connection: u64,
    /// When the first bytes of the request line arrived.
    pub start: Instant,
    /// When the last write of the response began: the earliest moment the
    /// client could hold the whole response, so the gap from here to the
    /// next request is never shorter than the delay the client waited.
    /// When no response was sent: when the connection was found closed or cut.
    pub end: Instant,
    /// The status sent; `0` when no status line was sent (never answered, or
    /// the client left during a [`delay`](Response::delay)).
    pub status: u16,
    /// Body bytes written (for chunked bodies, without the framing).
    pub body_bytes: u64,
    /// True if the whole response was written.
    pub complete: bool,
}

/// A pair of clock readings taken together, to turn an [`Instant`] into
/// wall-clock time.
#[derive(Debug, Clone, Copy)]
pub struct ClockBase {
    instant: Instant,
    unix_micros: u128,
}

impl ClockBase {
    /// Reads both clocks now.
    pub fn now() -> ClockBase {
        let unix_micros = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_micros());
        ClockBase {
            instant: Instant::now(),
            unix_micros,
        }
    }

    /// Milliseconds since the Unix epoch at `instant`.
    pub fn unix_millis(&self, instant: Instant) -> u64 {
        let micros = if instant >= self.instant {
            self.unix_micros + instant.duration_since(self.instant).as_micros()
        } else {
            self.unix_micros
                .saturating_sub(self.instant.duration_since(instant).as_micros())
        };
        (micros / 1000) as u64
    }
}

/// A function called with each completed request's log entry.
pub type Observer = Box<dyn Fn(&LogEntry) + Send + Sync>;

struct HostSpec {
    name: String,
    addr: Option<Ipv4Addr>,
    handler: Arc<dyn Handler>,
}

/// Configures and starts a [`Server`].
pub struct ServerBuilder {
    hosts: Vec<HostSpec>,
    port: Option<u16>,
    first_address: Ipv4Addr,
    request_log: bool,
    idle_timeout: Duration,
    observer: Option<Observer>,
}

impl ServerBuilder {
    /// Adds a host named `name` (used in URLs, hosts files and logs) on the
    /// next free loopback address.
    pub fn host(mut self, name: impl Into<String>, handler: impl Handler) -> ServerBuilder {
        self.hosts.push(HostSpec {
            name: name.into(),
            addr: None,
            handler: Arc::new(handler),
        });
        self
    }

    /// Adds a host on a chosen loopback address.
    pub fn host_at(
        mut self,
        name: impl Into<String>,
        addr: Ipv4Addr,
        handler: impl Handler,
    ) -> ServerBuilder {
        self.hosts.push(HostSpec {
            name: name.into(),
            addr: Some(addr),
            handler: Arc::new(handler),
        });
        self
    }

    /// Adds a host sharing a handler with other hosts.
    pub fn host_shared(
        mut self,
        name: impl Into<String>,
        addr: Option<Ipv4Addr>,
        handler: Arc<dyn Handler>,
    ) -> ServerBuilder {
        self.hosts.push(HostSpec {
            name: name.into(),
            addr,
            handler,
        });
        self
    }

    /// The port every host listens on. Default: a free port, found by
    /// binding the first host to port 0 (and trying again if that port is
    /// taken on another host's address).
    pub fn port(mut self, port: u16) -> ServerBuilder {
        self.port = Some(port);
        self
    }

    /// Where automatic addresses start (default [`FIRST_HOST_ADDRESS`]);
    /// they count upward, skipping addresses ending in `.0` and `.255` and
    /// those chosen explicitly.
    pub fn first_address(mut self, addr: Ipv4Addr) -> ServerBuilder {
        self.first_address = addr;
        self
    }

    /// Whether to keep a request log (default true). Turn it off for long
    /// benchmarks; [`Server::requests_served`] still counts.
    pub fn request_log(mut self, on: bool) -> ServerBuilder {
        self.request_log = on;
        self
    }

    /// How long an idle keep-alive connection (or a client sending a request
    /// too slowly) is kept (default 30 s).
    pub fn idle_timeout(mut self, timeout: Duration) -> ServerBuilder {
        self.idle_timeout = timeout;
        self
    }

    /// Calls `observer` with each log entry as it is completed (also when the
    /// log itself is off), e.g. to append it to a file.
    pub fn on_request(mut self, observer: impl Fn(&LogEntry) + Send + Sync + 'static) -> Self {
        self.observer = Some(Box::new(observer));
        self
    }

    /// Binds every host and starts serving.
    pub fn start(self) -> io::Result<Server> {
        let addrs = allocate_addresses(&self.hosts, self.first_address)?;
        let (listeners, port) = bind_all(&addrs, self.port)?;
        let clock = ClockBase::now();
        let hosts: Vec<Host> = self
            .hosts
            .into_iter()
            .zip(&addrs)
            .map(|(spec, &ip)| Host {
                name: spec.name.into(),
                addr: SocketAddr::from((ip, port)),
                handler: spec.handler,
                log: Mutex::new(Vec::new()),
            })
            .collect();
        let by_name = hosts
            .iter()
            .enumerate()
            .map(|(i, h)| (h.name.to_string(), i))
            .collect();
        let shared = Arc::new(Shared {
            hosts,
            stop: AtomicBool::new(false),
            connections: Mutex::new(HashMap::new()),
            live: Mutex::new(0),
            live_changed: Condvar::new(),
            next_connection: AtomicU64::new(0),
            requests: AtomicU64::new(0),
            request_log: self.request_log,
            idle_timeout: self.idle_timeout,
            observer: self.observer,
        });
        let (accept, waker) = accept::spawn(listeners, Arc::clone(&shared))?;
        Ok(Server {
            shared,
            by_name,
            port,
            clock,
            accept: Some(accept),
            waker: Some(waker),
        })
    }
}

fn allocate_addresses(hosts: &[HostSpec], first: Ipv4Addr) -> io::Result<Vec<Ipv4Addr>> {
    let mut taken: Vec<Ipv4Addr> = hosts.iter().filter_map(|h| h.addr).collect();
    let mut next = u32::from(first);
    let mut names = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(hosts.len());
    for spec in hosts {
        if !names.insert(spec.name.as_str()) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("host name `{}` given twice", spec.name),
            ));
        }
        let addr = match spec.addr {
            Some(a) => a,
            None => loop {
                let candidate = Ipv4Addr::from(next);
                if !candidate.is_loopback() {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("ran out of loopback addresses at {candidate}"),
                    ));
                }
                next += 1;
                let last = candidate.octets()[3];
                if last != 0 && last != 255 && !taken.contains(&candidate) {
                    taken.push(candidate);
                    break candidate;
                }
            },
        };
        if !addr.is_loopback() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{addr} (host `{}`) is not a loopback address", spec.name),
            ));
        }
        out.push(addr);
    }
    Ok(out)
}

/// `n` consecutive loopback addresses from `first`, skipping those ending in
/// `.0` and `.255`, as [`ServerBuilder::first_address`] hands them out: for
/// callers that need to know a host's address before the server starts (or
/// for a host where nothing listens). An error if they leave `127.0.0.0/8`.
pub(crate) fn consecutive_addresses(first: Ipv4Addr, n: usize) -> io::Result<Vec<Ipv4Addr>> {
    let mut out = Vec::with_capacity(n);
    let mut next = u32::from(first);
    while out.len() < n {
        let a = Ipv4Addr::from(next);
        if !a.is_loopback() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("ran out of loopback addresses at {a} ({n} hosts from {first})"),
            ));
        }
        next = next.wrapping_add(1);
        if !matches!(a.octets()[3], 0 | 255) {
            out.push(a);
        }
    }
    Ok(out)
}

/// One listener per address of `addrs`, all on `port` or, without one, on
/// a port free on every address (tried again when one is taken).
pub(crate) fn bind_all(
    addrs: &[Ipv4Addr],
    port: Option<u16>,
) -> io::Result<(Vec<TcpListener>, u16)> {
    let Some(&first) = addrs.first() else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "a server needs at least one host",
        ));
    };
    if let Some(port) = port {
        return Ok((bind_on(addrs, port)?, port));
    }
    let mut last_err = None;
    for _ in 0..PORT_ATTEMPTS {
        let probe = TcpListener::bind((first, 0))?;
        let port = probe.local_addr()?.port();
        drop(probe);
        match bind_on(addrs, port) {
            Ok(listeners) => return Ok((listeners, port)),
            Err(e) if e.kind() == io::ErrorKind::AddrInUse => last_err = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last_err.unwrap_or_else(|| io::Error::other("no shared port found")))
}

fn bind_on(addrs: &[Ipv4Addr], port: u16) -> io::Result<Vec<TcpListener>> {
    addrs
        .iter()
        .map(|&a| {
            TcpListener::bind((a, port))
                .map_err(|e| io::Error::new(e.kind(), format!("binding {a}:{port}: {e}")))
        })
        .collect()
}

struct Host {
    name: Arc<str>,
    addr: SocketAddr,
    handler: Arc<dyn Handler>,
    log: Mutex<Vec<LogEntry>>,
}

/// State shared by the accept loop, the connection threads and the handle.
struct Shared {
    hosts: Vec<Host>,
    stop: AtomicBool,
    /// Clones of the open connections, to shut them down on drop.
    connections: Mutex<HashMap<u64, TcpStream>>,
    /// Connection threads still running.
    live: Mutex<usize>,
    live_changed: Condvar,
    next_connection: AtomicU64,
    requests: AtomicU64,
    request_log: bool,
    idle_timeout: Duration,
    observer: Option<Observer>,
}

impl Shared {
    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// Logs a finished request (building the entry only if someone wants
    /// it) and counts it.
    fn record(&self, host: usize, make: impl FnOnce() -> LogEntry) {
        if self.request_log || self.observer.is_some() {
            let entry = make();
            if let Some(observer) = &self.observer {
                observer(&entry);
            }
            if self.request_log {
                lock(&self.hosts[host].log).push(entry);
            }
        }
        self.requests.fetch_add(1, Ordering::Relaxed);
    }
}

/// Locks a mutex, ignoring poisoning (a panicking handler must not take the
/// whole server down).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A running set of hosts; dropping it stops them.
pub struct Server {
    shared: Arc<Shared>,
    by_name: HashMap<String, usize>,
    port: u16,
    clock: ClockBase,
    accept: Option<JoinHandle<()>>,
    waker: Option<accept::Waker>,
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("port", &self.port)
            .field("hosts", &self.shared.hosts.len())
            .finish_non_exhaustive()
    }
}

impl Server {
    /// Starts configuring a server.
    pub fn builder() -> ServerBuilder {
        ServerBuilder {
            hosts: Vec::new(),
            port: None,
            first_address: FIRST_HOST_ADDRESS,
            request_log: true,
            idle_timeout: Duration::from_secs(30),
            observer: None,
        }
    }

    fn host(&self, name: &str) -> &Host {
        match self.by_name.get(name) {
            Some(&i) => &self.shared.hosts[i],
            None => panic!(
                "no host `{name}` on this server (hosts: {})",
                self.host_names().collect::<Vec<_>>().join(", ")
            ),
        }
    }

    /// The port all hosts listen on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The names of the hosts, in the order they were added.
    pub fn host_names(&self) -> impl Iterator<Item = &str> {
        self.shared.hosts.iter().map(|h| &*h.name)
    }

    /// The socket address of host `name` (panics for an unknown name).
    pub fn addr(&self, name: &str) -> SocketAddr {
        self.host(name).addr
    }

    /// `http://NAME:PORT` + `path`: a URL by host name (the client needs
    /// [`hosts_file`](Server::hosts_file) to resolve it).
    pub fn url(&self, name: &str, path: &str) -> String {
        let host = self.host(name);
        format!("http://{}:{}{}", host.name, self.port, path)
    }

    /// `http://IP:PORT` + `path`: a URL by address.
    pub fn ip_url(&self, name: &str, path: &str) -> String {
        format!("http://{}{}", self.host(name).addr, path)
    }

    /// `IP NAME` lines, one per host (the `/etc/hosts` format).
    pub fn hosts_file(&self) -> String {
        let mut out = String::new();
        for h in &self.shared.hosts {
            out.push_str(&format!("{} {}\n", h.addr.ip(), h.name));
        }
        out
    }

    /// A copy of host `name`'s request log, in the order requests ended.
    pub fn log(&self, name: &str) -> Vec<LogEntry> {
        lock(&self.host(name).log).clone()
    }

    /// A copy of every host's log, sorted by start time.
    pub fn logs(&self) -> Vec<LogEntry> {
        let mut all: Vec<LogEntry> = self
            .shared
            .hosts
            .iter()
            .flat_map(|h| lock(&h.log).clone())
            .collect();
        all.sort_by_key(|e| e.start);
        all
    }

    /// Empties every host's log.
    pub fn clear_logs(&self) {
        for h in &self.shared.hosts {
            lock(&h.log).clear();
        }
    }

    /// Requests answered (or abandoned) since the start, over all hosts.
    pub fn requests_served(&self) -> u64 {
        self.shared.requests.load(Ordering::Relaxed)
    }

    /// Waits until at least `n` requests were served, polling every few
    /// milliseconds for at most `timeout`; true if reached.
    pub fn wait_for_requests(&self, n: u64, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            if self.requests_served() >= n {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// The clock pair taken at start, to convert log instants to wall-clock
    /// milliseconds ([`ClockBase::unix_millis`]).
    pub fn clock(&self) -> ClockBase {
        self.clock
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(waker) = self.waker.take() {
            waker.wake();
        }
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
        for conn in lock(&self.shared.connections).values() {
            let _ = conn.shutdown(std::net::Shutdown::Both);
        }
        let deadline = Instant::now() + DROP_WAIT;
        let mut live = lock(&self.shared.live);
        while *live > 0 {
            let now = Instant::now();
            if now >= deadline {
                eprintln!(
                    "testkit::server: {} connection thread(s) still busy after {DROP_WAIT:?}; leaving them",
                    *live
                );
                break;
            }
            live = self
                .shared
                .live_changed
                .wait_timeout(live, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

#[cfg(test)]
mod tests;
