//! The HTTP client: GET requests over HTTP/1.1, many in flight at once on
//! one connection thread (a tokio runtime of its own), over the guarded
//! connections of [`crate::transport`].
//!
//! A worker starts a request ([`Client::start`]) and goes on; the request
//! waits for its server as a task of the connection thread (a socket and a
//! buffer, not a thread), and its end is handed to a callback. So the
//! requests in flight are not bounded by threads: thousands can wait for
//! slow servers at once.
//!
//! What is stored is what went over the connection: the request as written
//! and the response as read (status line, headers, body with its transfer
//! and content codings). The size limit counts the body bytes as received;
//! the body is also decoded ([`Response::check_decoding`], on the worker
//! that stores it, with the decoded size capped at the same limit, so a
//! gzip bomb costs nothing) to find bodies that cannot be decoded: they are
//! stored all the same, and the crawl log says `decode`.
//!
//! One connection is kept per queue key between its requests (up to
//! [`ClientConfig::idle_connections`] keys; the least recently used are
//! closed first). A request on a kept connection that the server had closed
//! meanwhile is sent again once on a new one.

mod exchange;
mod framing;

use std::collections::HashMap;
use std::fmt;
use std::io;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use common::body::{BodyDecoder, Outcome};
use common::crawllog::ErrorCode;
use common::warc::Truncated;
use tokio::sync::Notify;

use crate::dns::Dns;
use crate::proxy::Proxy;
use crate::tls::{self, Trust};
use crate::transport::{Conn, Connector, OpenError, Route};

/// What the client asks for in `Accept-Encoding`: the codings that
/// `warcio` (and so most WARC tools) decode when reading. `zstd` is
/// decoded when a server sends it anyway, but not asked for.
pub const ACCEPT_ENCODING: &str = "gzip, deflate, br";

/// The longest response head accepted.
const MAX_HEAD: usize = 64 * 1024;

/// Settings of a [`Client`].
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// `User-Agent` header.
    pub user_agent: String,
    /// `From` header, sent with every request when set.
    pub from: Option<String>,
    /// Connect timeout (TCP, and the TLS handshake).
    pub connect_timeout: Duration,
    /// Until the end of the response head, from the request's end.
    pub first_byte_timeout: Duration,
    /// The whole request.
    pub download_timeout: Duration,
    /// Permit private addresses.
    pub allow_private: bool,
    /// The crawl's host rules, whose `allow_private` overrides the crawl's
    /// for the hosts and networks they match.
    pub host_rules: Arc<common::rules::HostRules>,
    /// The name resolver.
    pub dns: Dns,
    /// The proxy requests go through (`None`: none, whatever the environment says).
    pub proxy: Option<Proxy>,
    /// Queue keys whose idle connection is kept for reuse.
    pub idle_connections: usize,
    /// Trusted roots (or `--accept-invalid-certs`) for `https`.
    pub tls: Trust,
}

/// A response, ready to store.
#[derive(Debug)]
pub struct Response {
    /// When the request was sent.
    pub date: SystemTime,
    /// HTTP status.
    pub status: u16,
    /// The request as written to the connection.
    pub request: Vec<u8>,
    /// The response as read from the connection: head, then body.
    pub block: Vec<u8>,
    /// Where the body starts in `block`.
    pub body_offset: usize,
    /// Why the body is incomplete.
    pub truncated: Option<Truncated>,
    /// Why the body could not be decoded (it is stored as received); set
    /// by [`Response::check_decoding`].
    pub decode_error: Option<String>,
    /// True if the decoded body is larger than the size limit; set by
    /// [`Response::check_decoding`].
    pub decoded_too_big: bool,
    /// Why the server's certificate would have been refused, when
    /// `--accept-invalid-certs` accepted it.
    pub accepted_invalid_certificate: Option<Arc<str>>,
    /// Address connected to.
    pub ip: Option<IpAddr>,
    /// What the TLS connection negotiated (https only).
    pub tls: Option<Arc<tls::Session>>,
    /// Media type, lower case, without parameters.
    pub content_type: String,
    /// `Location` header, bytes outside ASCII percent-encoded as they are.
    pub location: Option<String>,
    /// `Retry-After` header.
    pub retry_after: Option<String>,
    /// `Transfer-Encoding` header (every value, in order).
    pub transfer_encoding: Option<String>,
    /// `Content-Encoding` header.
    pub content_encoding: Option<String>,
    /// Time to the end of the response.
    pub elapsed: Duration,
}

impl Response {
    /// The head as received (status line and headers, blank line included).
    pub fn head(&self) -> &[u8] {
        &self.block[..self.body_offset]
    }

    /// The body as received (transfer and content codings included).
    pub fn body(&self) -> &[u8] {
        &self.block[self.body_offset..]
    }

    /// The `WARC-Protocol` value of the HTTP exchange (`http/1.1`), from
    /// the version in the status line.
    pub fn http_protocol(&self) -> &'static str {
        if self.block.starts_with(b"HTTP/1.0") {
            "http/1.0"
        } else {
            "http/1.1"
        }
    }

    /// The body decoded, at most `max` bytes (as received when it cannot be decoded).
    pub fn decoded_body(&self, max: usize) -> Vec<u8> {
        common::body::decoded_payload(&self.block, max)
    }

    /// Decodes the body (up to `max_body` decoded bytes) to find one that
    /// cannot be decoded: sets [`Response::decode_error`] and
    /// [`Response::decoded_too_big`]. A body cut short ends early without
    /// being damaged.
    pub fn check_decoding(&mut self, max_body: u64) {
        let max_body = usize::try_from(max_body).unwrap_or(usize::MAX);
        let (error, too_big) = DECODER.with_borrow_mut(|d| {
            let got = d.decode(
                self.transfer_encoding.as_deref(),
                self.content_encoding.as_deref(),
                &self.block[self.body_offset.min(self.block.len())..],
                max_body,
            );
            match got.outcome {
                Outcome::Failed(e) => (Some(e), false),
                // A cut stream ends early; otherwise it is damaged.
                Outcome::Incomplete(e) if self.truncated.is_none() => (Some(e), false),
                Outcome::Cut => (None, true),
                _ => (None, false),
            }
        });
        self.decode_error = error;
        self.decoded_too_big = too_big;
    }
}

thread_local! {
    /// Each worker thread's decoder (it keeps its buffers).
    static DECODER: std::cell::RefCell<BodyDecoder> = std::cell::RefCell::default();
}

/// A request that got no HTTP response.
#[derive(Debug)]
pub struct Failure {
    /// The error code for the crawl log.
    pub code: ErrorCode,
    /// What happened.
    pub message: String,
    /// True if trying again in this run would fail the same way (a host
    /// name that does not exist): its host is given up.
    pub permanent: bool,
    /// Time until the failure.
    pub elapsed: Duration,
}

/// A GET request for [`Client::start`].
#[derive(Debug, Clone)]
pub struct Request {
    /// The queue key it goes through (its kept connection, and what
    /// [`Client::abort`] names).
    pub key: usize,
    /// The URL.
    pub url: String,
    /// Most body bytes kept, as received.
    pub max_body: u64,
    /// More headers: `If-None-Match`, `If-Modified-Since` of a conditional
    /// request (names in lower case), then those of the host rules
    /// (`headers`, names as the rules write them).
    pub headers: Vec<(std::borrow::Cow<'static, str>, String)>,
}

/// What [`Client::start`] calls when a request ends (on the connection
/// thread: it should only hand the result on).
pub type Done = Box<dyn FnOnce(Result<Response, Failure>) + Send>;

/// The HTTP client shared by all workers (cheap to clone). The connection
/// thread stops when the last clone is dropped.
#[derive(Clone)]
pub struct Client {
    net: Arc<Net>,
    _thread: Arc<NetThread>,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("cfg", &self.net.cfg)
            .finish()
    }
}

/// What the requests share.
struct Net {
    cfg: ClientConfig,
    connector: Connector,
    state: Mutex<NetState>,
    handle: tokio::runtime::Handle,
}

#[derive(Default)]
struct NetState {
    /// Set by [`Client::shutdown`]: no new request starts.
    closed: bool,
    /// A connection kept per queue key between its requests, with when it
    /// was last used.
    idle: HashMap<usize, (Conn, u64)>,
    clock: u64,
    /// The requests in flight, by queue key (one per key at most).
    in_flight: HashMap<usize, Arc<Cancel>>,
}

/// The connection thread; stopping it ends the requests still on it.
struct NetThread {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for NetThread {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Interrupts one request (a round ending, a shutdown).
#[derive(Default)]
pub(crate) struct Cancel {
    flag: AtomicBool,
    notify: Notify,
}

impl Cancel {
    fn cancel(&self) {
        self.flag.store(true, Ordering::SeqCst);
        self.notify.notify_waiters();
    }

    /// Returns once [`Cancel::cancel`] was called.
    pub(crate) async fn cancelled(&self) {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.flag.load(Ordering::SeqCst) {
                return;
            }
            notified.await;
        }
    }
}

impl Client {
    /// Starts the connection thread.
    pub fn new(cfg: ClientConfig) -> io::Result<Client> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .thread_name("net-dns")
            .build()?;
        let handle = runtime.handle().clone();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name("net".into())
            .spawn(move || {
                runtime.block_on(async {
                    let _ = stopped.await;
                });
            })?;
        let connector = Connector {
            allow_private: cfg.allow_private,
            host_rules: cfg.host_rules.clone(),
            dns: cfg.dns.clone(),
            proxy: cfg.proxy.clone(),
            trust: cfg.tls.clone(),
            connect_timeout: cfg.connect_timeout,
            user_agent: cfg.user_agent.clone(),
        };
        Ok(Client {
            net: Arc::new(Net {
                cfg,
                connector,
                state: Mutex::default(),
                handle,
            }),
            _thread: Arc::new(NetThread {
                stop: Some(stop),
                thread: Some(thread),
            }),
        })
    }

    /// Starts `request`; `done` is called with its end, exactly once (at
    /// once, with a failure, after [`Client::shutdown`]).
    pub fn start(&self, request: Request, done: Done) {
        let start = Instant::now();
        let cancel = Arc::new(Cancel::default());
        {
            let mut st = self.net.lock();
            if st.closed {
                drop(st);
                let message = "not sent: the fetcher is shutting down".to_string();
                done(Err(failure(start, ErrorCode::Connect, message)));
                return;
            }
            st.in_flight.insert(request.key, cancel.clone());
        }
        let net = self.net.clone();
        self.net.handle.spawn(async move {
            let result = net.exchange(&request, &cancel, start).await;
            {
                let mut st = net.lock();
                if st
                    .in_flight
                    .get(&request.key)
                    .is_some_and(|c| Arc::ptr_eq(c, &cancel))
                {
                    st.in_flight.remove(&request.key);
                }
            }
            done(result);
        });
    }

    /// Closes the connection kept for `key` (its queue is done).
    pub fn forget(&self, key: usize) {
        let conn = self.net.lock().idle.remove(&key);
        drop(conn);
    }

    /// Interrupts the request in flight for queue key `key`, if any, and
    /// closes its kept connection.
    pub fn abort(&self, key: usize) {
        let mut st = self.net.lock();
        let conn = st.idle.remove(&key);
        if let Some(c) = st.in_flight.get(&key) {
            c.cancel();
        }
        drop(st);
        drop(conn);
    }

    /// Interrupts every request in flight and refuses new ones (at shutdown).
    pub fn shutdown(&self) {
        let mut st = self.net.lock();
        st.closed = true;
        for c in st.in_flight.values() {
            c.cancel();
        }
        let idle = std::mem::take(&mut st.idle);
        drop(st);
        drop(idle);
    }
}

impl Net {
    fn lock(&self) -> MutexGuard<'_, NetState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The connection kept for `key`, if it goes to `route`.
    fn take_idle(&self, key: usize, route: &Route) -> Option<Conn> {
        let mut st = self.lock();
        let (conn, _) = st.idle.remove(&key)?;
        (conn.route == *route).then_some(conn)
    }

    /// Keeps `conn` for the next request of `key`, closing the least
    /// recently used half when too many are kept.
    fn keep(&self, key: usize, conn: Conn) {
        let mut st = self.lock();
        if st.closed {
            return;
        }
        st.clock += 1;
        let now = st.clock;
        let cap = self.cfg.idle_connections.max(1);
        let mut evicted = Vec::new();
        if st.idle.len() >= cap {
            // Drop the least recently used half at once (amortized O(1)).
            let mut uses: Vec<u64> = st.idle.values().map(|(_, u)| *u).collect();
            let mid = uses.len() / 2;
            let (_, median, _) = uses.select_nth_unstable(mid);
            let median = *median;
            let old: Vec<usize> = st
                .idle
                .iter()
                .filter(|(_, (_, u))| *u <= median)
                .map(|(k, _)| *k)
                .collect();
            for k in old {
                evicted.extend(st.idle.remove(&k));
            }
        }
        st.idle.insert(key, (conn, now));
        drop(st);
        drop(evicted);
    }

    /// One request: on the connection kept for its key, or on a new one
    /// (and once more on a new one if the kept one turns out closed).
    async fn exchange(
        &self,
        request: &Request,
        cancel: &Cancel,
        start: Instant,
    ) -> Result<Response, Failure> {
        let date = SystemTime::now();
        let target = exchange::Target::parse(&request.url)
            .map_err(|m| failure(start, ErrorCode::BadUrl, m))?;
        let deadline = tokio::time::Instant::from_std(start + self.cfg.download_timeout);
        let mut kept = self.take_idle(request.key, &target.route);
        loop {
            let reused = kept.is_some();
            let mut conn = match kept.take() {
                Some(c) => c,
                None => self.open(&target.route, deadline, cancel, start).await?,
            };
            let limits = exchange::Limits {
                max_body: usize::try_from(request.max_body).unwrap_or(usize::MAX),
                first_byte: self.cfg.first_byte_timeout,
                deadline,
                download_timeout: self.cfg.download_timeout,
            };
            let (sent, recorded) = target.request_bytes(
                &self.cfg.user_agent,
                self.cfg.from.as_deref(),
                &request.headers,
                conn.absolute_form.as_ref(),
            );
            match exchange::run(&mut conn, &sent, &limits, cancel, reused).await {
                Ok(got) => {
                    let response = Response {
                        date,
                        status: got.head.status,
                        request: recorded.unwrap_or(sent),
                        body_offset: got.body_offset.min(got.block.len()),
                        block: got.block,
                        truncated: got.truncated,
                        decode_error: None,
                        decoded_too_big: false,
                        accepted_invalid_certificate: conn.accepted_invalid.clone(),
                        ip: conn.ip,
                        tls: conn.tls.clone(),
                        content_type: got.head.content_type,
                        location: got.head.location,
                        retry_after: got.head.retry_after,
                        transfer_encoding: got.head.transfer_encoding,
                        content_encoding: got.head.content_encoding,
                        elapsed: start.elapsed(),
                    };
                    if got.reusable {
                        self.keep(request.key, conn);
                    }
                    return Ok(response);
                }
                // The server had closed the kept connection: a new one.
                Err(exchange::Broken::Stale) if reused => continue,
                Err(exchange::Broken::Stale) => {
                    let message = "the server closed the connection without answering";
                    return Err(failure(start, ErrorCode::Connect, message.into()));
                }
                Err(exchange::Broken::Failed(code, message)) => {
                    return Err(failure(start, code, message));
                }
            }
        }
    }

    /// A new connection for `route`, or the failure that prevented it.
    async fn open(
        &self,
        route: &Route,
        deadline: tokio::time::Instant,
        cancel: &Cancel,
        start: Instant,
    ) -> Result<Conn, Failure> {
        let opened = tokio::select! {
            biased;
            _ = cancel.cancelled() => {
                let message = "interrupted: the fetcher is stopping".to_string();
                return Err(failure(start, ErrorCode::Connect, message));
            }
            r = tokio::time::timeout_at(deadline, self.connector.open(route, deadline)) => r,
        };
        match opened {
            Ok(Ok(conn)) => Ok(conn),
            Ok(Err(e)) => Err(self.open_failure(e, start)),
            Err(_) => Err(failure(
                start,
                ErrorCode::Timeout,
                format!("timeout: download ({:?})", self.cfg.download_timeout),
            )),
        }
    }

    /// The failure for a connection that could not be opened.
    fn open_failure(&self, e: OpenError, start: Instant) -> Failure {
        let (code, message) = open_error_code(e, &self.cfg);
        let permanent = matches!(&code, (ErrorCode::Dns, true));
        Failure {
            permanent,
            ..failure(start, code.0, message)
        }
    }
}

/// The crawl-log code of a connection that could not be opened (with
/// whether a DNS failure is permanent), and its message.
fn open_error_code(e: OpenError, cfg: &ClientConfig) -> ((ErrorCode, bool), String) {
    match e {
        OpenError::Dns(d) => ((ErrorCode::Dns, d.permanent), d.to_string()),
        OpenError::Private(p) => ((ErrorCode::PrivateAddress, false), p.to_string()),
        OpenError::Timeout => (
            (ErrorCode::Timeout, false),
            format!("timeout: connect ({:?})", cfg.connect_timeout),
        ),
        OpenError::Io(io) => {
            let code = match io.kind() {
                io::ErrorKind::ConnectionRefused => ErrorCode::Refused,
                io::ErrorKind::TimedOut => ErrorCode::Timeout,
                _ => ErrorCode::Connect,
            };
            ((code, false), io.to_string())
        }
        OpenError::Tls(io) => match tls::rustls_error_of(&io) {
            Some(r) => ((ErrorCode::Tls, false), tls::reason(r)),
            None => ((ErrorCode::Tls, false), format!("TLS handshake: {io}")),
        },
        OpenError::Proxy(m) => ((ErrorCode::Connect, false), m),
    }
}

/// A failure to fetch that is worth trying again, `start` after the
/// request began.
fn failure(start: Instant, code: ErrorCode, message: String) -> Failure {
    Failure {
        code,
        message,
        permanent: false,
        elapsed: start.elapsed(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> ClientConfig {
        ClientConfig {
            user_agent: "t".into(),
            from: None,
            connect_timeout: Duration::from_secs(1),
            first_byte_timeout: Duration::from_secs(2),
            download_timeout: Duration::from_secs(3),
            allow_private: false,
            host_rules: Arc::default(),
            dns: crate::dns::Dns::start(crate::dns::DnsConfig {
                server: Some("127.0.0.1:9".parse().unwrap()),
                timeout: Duration::from_secs(1),
                cache_ttl: Duration::from_secs(1),
                concurrency: 1,
                hosts: None,
            })
            .unwrap()
            .0,
            proxy: None,
            idle_connections: 1,
            tls: Trust::load(None, false).unwrap(),
        }
    }

    #[test]
    fn failures_to_connect_get_the_crawl_log_code_of_their_kind() {
        let cfg = cfg();
        let io = |kind: io::ErrorKind, msg: &str| io::Error::new(kind, msg);
        let dns = |permanent| crate::dns::DnsFailure {
            host: "a.test".into(),
            permanent,
            reason: "no such name".into(),
        };
        let cases = [
            (OpenError::Dns(dns(true)), (ErrorCode::Dns, true)),
            (OpenError::Dns(dns(false)), (ErrorCode::Dns, false)),
            (
                OpenError::Io(io(io::ErrorKind::ConnectionRefused, "refused")),
                (ErrorCode::Refused, false),
            ),
            (OpenError::Timeout, (ErrorCode::Timeout, false)),
            (
                OpenError::Private(crate::transport::PrivateAddress(
                    "169.254.169.254".parse().unwrap(),
                )),
                (ErrorCode::PrivateAddress, false),
            ),
            (
                OpenError::Io(io(io::ErrorKind::ConnectionReset, "reset")),
                (ErrorCode::Connect, false),
            ),
            (
                OpenError::Tls(io::Error::new(
                    io::ErrorKind::InvalidData,
                    rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer),
                )),
                (ErrorCode::Tls, false),
            ),
            (
                OpenError::Proxy("the proxy refused the tunnel: HTTP/1.1 403".into()),
                (ErrorCode::Connect, false),
            ),
        ];
        for (error, code) in cases {
            let shown = format!("{error:?}");
            assert_eq!(open_error_code(error, &cfg).0, code, "{shown}");
        }
        let (_, msg) = open_error_code(OpenError::Timeout, &cfg);
        assert_eq!(
            msg, "timeout: connect (1s)",
            "the message says which timeout"
        );
        let tls = OpenError::Tls(io::Error::new(
            io::ErrorKind::InvalidData,
            rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer),
        ));
        assert!(
            open_error_code(tls, &cfg)
                .1
                .starts_with("certificate from an unknown issuer")
        );
    }
}
