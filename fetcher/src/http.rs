//! The HTTP client: one blocking GET per call (ureq 3; one call per worker
//! thread), over the guarded transport of [`crate::transport`].
//!
//! What is stored is what went over the connection, recorded by the
//! transport ([`transport::Wire`]): the request as written, the response
//! as read (status line, headers, body with its transfer and content
//! codings). The size limit counts the body bytes as received; the body is
//! also decoded ([`common::body`], its decoded size capped at the same
//! limit, so a gzip bomb costs nothing) to find bodies that cannot be
//! decoded: they are stored all the same, and the crawl log says `decode`.

use std::collections::HashMap;
use std::fmt;
use std::io::{self, Read};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use common::body::{BodyDecoder, Outcome};
use common::crawllog::ErrorCode;
use common::warc::Truncated;

use crate::dns::{Dns, DnsFailure};
use crate::tls::{self, Trust};
use crate::transport::{self, PeerMap, PrivateAddress, Wire};

/// What the client asks for in `Accept-Encoding`: the codings that
/// `warcio` (and so most WARC tools) decode when reading. `zstd` is
/// decoded when a server sends it anyway, but not asked for.
pub const ACCEPT_ENCODING: &str = "gzip, deflate, br";

/// The longest response head accepted (ureq refuses longer ones).
const MAX_HEAD: usize = 64 * 1024;

/// Settings of a [`Client`].
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// `User-Agent` header.
    pub user_agent: String,
    /// `From` header, sent with every request when set.
    pub from: Option<String>,
    /// Connect timeout.
    pub connect_timeout: Duration,
    /// Until the end of the response head.
    pub first_byte_timeout: Duration,
    /// The whole request.
    pub download_timeout: Duration,
    /// Permit private addresses.
    pub allow_private: bool,
    /// The name resolver.
    pub dns: Dns,
    /// The proxy requests go through (`None`: none, whatever the environment says).
    pub proxy: Option<ureq::Proxy>,
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
    /// Why the body could not be decoded (it is stored as received).
    pub decode_error: Option<String>,
    /// True if the decoded body is larger than the size limit.
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

/// The blocking HTTP client shared by all workers.
///
/// Each queue key gets its own ureq agent (so its own connection pool):
/// ureq's pool finds a connection by scanning all of its idle connections,
/// which costs more than the request itself once hundreds of hosts are kept
/// alive in one pool. Agents of recently used keys are cached, up to
/// `ClientConfig::idle_connections`; evicting one closes its connection.
#[derive(Clone)]
pub struct Client {
    agents: Arc<Mutex<AgentCache>>,
    /// Set by [`Client::shutdown`]: no new request starts.
    closed: Arc<AtomicBool>,
    config: ureq::config::Config,
    peers: Arc<PeerMap>,
    cfg: Arc<ClientConfig>,
}

#[derive(Default)]
struct AgentCache {
    agents: HashMap<usize, (ureq::Agent, Arc<Mutex<Wire>>, u64)>,
    clock: u64,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client").field("cfg", &self.cfg).finish()
    }
}

impl Client {
    /// Builds the client.
    pub fn new(cfg: ClientConfig) -> Client {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .proxy(cfg.proxy.clone())
            .user_agent(cfg.user_agent.as_str())
            .accept("*/*")
            .timeout_connect(Some(cfg.connect_timeout))
            .timeout_recv_response(Some(cfg.first_byte_timeout))
            .timeout_global(Some(cfg.download_timeout))
            .max_idle_connections(4)
            .max_idle_connections_per_host(1)
            // A pooled connection keeps its buffers: ureq's defaults (128 KiB
            // each way) would make hundreds of idle hosts cost hundreds of MB.
            .max_response_header_size(MAX_HEAD)
            .input_buffer_size(INPUT_BUFFER)
            .output_buffer_size(16 * 1024)
            .build();
        Client {
            agents: Arc::default(),
            closed: Arc::default(),
            config,
            peers: Arc::new(PeerMap::default()),
            cfg: Arc::new(cfg),
        }
    }

    fn new_agent(&self) -> (ureq::Agent, Arc<Mutex<Wire>>) {
        let wire = Arc::default();
        let agent = transport::agent(
            self.config.clone(),
            self.cfg.tls.connector(),
            self.cfg.allow_private,
            self.cfg.dns.clone(),
            self.peers.clone(),
            Arc::clone(&wire),
        );
        (agent, wire)
    }

    /// The agent of queue key `key`; `None` after [`Client::shutdown`]
    /// (checked under the lock that `shutdown` takes to drain the agents,
    /// so no request starts on an agent it missed).
    fn agent(&self, key: usize) -> Option<(ureq::Agent, Arc<Mutex<Wire>>)> {
        let mut c = self.agents.lock().unwrap_or_else(|e| e.into_inner());
        if self.closed.load(Ordering::SeqCst) {
            return None;
        }
        c.clock += 1;
        let now = c.clock;
        if let Some((a, w, used)) = c.agents.get_mut(&key) {
            *used = now;
            return Some((a.clone(), w.clone()));
        }
        let cap = self.cfg.idle_connections.max(1);
        if c.agents.len() >= cap {
            // Drop the least recently used half at once (amortized O(1)).
            let mut uses: Vec<u64> = c.agents.values().map(|(_, _, u)| *u).collect();
            let mid = uses.len() / 2;
            let (_, median, _) = uses.select_nth_unstable(mid);
            let median = *median;
            c.agents.retain(|_, (_, _, u)| *u > median);
        }
        let (a, w) = self.new_agent();
        c.agents.insert(key, (a.clone(), w.clone(), now));
        Some((a, w))
    }

    /// Closes the connection kept for `key` (its queue is done).
    pub fn forget(&self, key: usize) {
        self.agents
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .agents
            .remove(&key);
    }

    /// Interrupts the request in flight for queue key `key`, if any, by
    /// closing its connection.
    pub fn abort(&self, key: usize) {
        let agent = self
            .agents
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .agents
            .remove(&key);
        if let Some((a, _, _)) = agent {
            a.shutdown();
        }
    }

    /// Interrupts every request in flight and refuses new ones (at shutdown).
    pub fn shutdown(&self) {
        self.closed.store(true, Ordering::SeqCst);
        let agents: Vec<ureq::Agent> = self
            .agents
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .agents
            .drain()
            .map(|(_, (a, _, _))| a)
            .collect();
        for a in agents {
            a.shutdown();
        }
    }

    /// Fetches `url` for queue key `key`, keeping at most `max_body`
    /// bytes of the body as received.
    pub fn fetch(&self, key: usize, url: &str, max_body: u64) -> Result<Response, Failure> {
        self.fetch_with(key, url, max_body, &[])
    }

    /// [`Client::fetch`] with more request headers (`If-None-Match`,
    /// `If-Modified-Since` of a conditional request): the request is built,
    /// sent over the worker's connection, its head read, its body drained
    /// as the transport records it, and the body checked by decoding it.
    pub fn fetch_with(
        &self,
        key: usize,
        url: &str,
        max_body: u64,
        headers: &[(&str, &str)],
    ) -> Result<Response, Failure> {
        let start = Instant::now();
        let date = SystemTime::now();
        let (uri, request) = build_request(url, self.cfg.from.as_deref(), headers)
            .map_err(|message| failure(start, ErrorCode::BadUrl, message))?;
        let max_body = usize::try_from(max_body).unwrap_or(usize::MAX);
        let (response, wire) = self.send(key, request, max_body, start)?;
        let accepted_invalid_certificate = tls::accepted_invalid_certificate();
        let tls = tls::request_session();
        let ip = transport::peer_of(&self.peers, &uri);
        let head = HeadFields::of(&response);
        let recorded = self.record_body(response, &wire, max_body, start);
        let (decode_error, decoded_too_big) = check_decoding(&head, &recorded, max_body);
        let Recorded {
            request,
            block,
            body_offset,
            truncated,
        } = recorded;
        Ok(Response {
            date,
            status: head.status,
            request,
            body_offset: body_offset.min(block.len()),
            block,
            truncated,
            decode_error,
            decoded_too_big,
            accepted_invalid_certificate,
            ip,
            tls,
            content_type: head.content_type,
            location: head.location,
            retry_after: head.retry_after,
            elapsed: start.elapsed(),
        })
    }

    /// Sends `request` over the connection of worker `key`, its transport
    /// set to record up to `max_body` body bytes: the response with its
    /// head read, and the transport's record.
    fn send(
        &self,
        key: usize,
        request: ureq::http::Request<()>,
        max_body: usize,
        start: Instant,
    ) -> Result<(ureq::http::Response<ureq::Body>, Arc<Mutex<Wire>>), Failure> {
        let fail = |code, message| failure(start, code, message);
        let Some((agent, wire)) = self.agent(key) else {
            return Err(fail(
                ErrorCode::Connect,
                "not sent: the fetcher is shutting down".into(),
            ));
        };
        // Room for the head, the body, and one read past the limit.
        let cap = max_body.saturating_add(MAX_HEAD + 2 * INPUT_BUFFER);
        lock(&wire).start(cap);
        tls::start_request();
        let response = agent.run(request).map_err(|e| match dns_failure(&e) {
            Some(d) => Failure {
                permanent: d.permanent,
                ..fail(ErrorCode::Dns, d.to_string())
            },
            None => {
                let (code, msg) = classify(e, &self.cfg);
                fail(code, msg)
            }
        })?;
        Ok((response, wire))
    }

    /// Reads the body to its end or to `max_body` bytes, and takes from the
    /// transport's record what went over the connection: the request as
    /// written and the response as read, cut at the limit.
    fn record_body(
        &self,
        response: ureq::http::Response<ureq::Body>,
        wire: &Mutex<Wire>,
        max_body: usize,
        start: Instant,
    ) -> Recorded {
        let body_offset = head_len(&lock(wire).received);
        let mut truncated = drain_body(
            response.into_body().into_reader(),
            wire,
            body_offset + max_body,
            start,
            &self.cfg,
        );
        let (request, mut block, over) = {
            let mut w = lock(wire);
            (
                std::mem::take(&mut w.sent),
                std::mem::take(&mut w.received),
                w.over,
            )
        };
        if block.len() > body_offset + max_body || over {
            block.truncate(body_offset + max_body);
            truncated = Some(Truncated::Length);
        }
        Recorded {
            request,
            block,
            body_offset,
            truncated,
        }
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

/// The GET request for `url` with the fetcher's `Accept-Encoding`, `From`
/// (when set) and `headers`; an error message when `url` cannot be one.
fn build_request(
    url: &str,
    from: Option<&str>,
    headers: &[(&str, &str)],
) -> Result<(ureq::http::Uri, ureq::http::Request<()>), String> {
    let uri: ureq::http::Uri = url.parse().map_err(|e| format!("{e}"))?;
    let mut request = ureq::http::Request::builder()
        .method("GET")
        .uri(uri.clone())
        .header("accept-encoding", ACCEPT_ENCODING);
    if let Some(from) = from {
        request = request.header("from", from);
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request.body(()).map_err(|e| e.to_string())?;
    Ok((uri, request))
}

/// The fields of a response head that a [`Response`] keeps or that
/// decoding its body needs.
struct HeadFields {
    status: u16,
    content_type: String,
    location: Option<String>,
    retry_after: Option<String>,
    transfer_encoding: Option<String>,
    content_encoding: Option<String>,
}

impl HeadFields {
    /// Reads them from `response`'s head.
    fn of(response: &ureq::http::Response<ureq::Body>) -> HeadFields {
        let header = |name: &str| response.headers().get(name).map(|v| v.as_bytes());
        let text = |name: &str| header(name).map(|v| String::from_utf8_lossy(v).trim().to_string());
        HeadFields {
            status: response.status().as_u16(),
            content_type: text("content-type")
                .map(|v| common::http::parse_content_type(&v).0)
                .unwrap_or_default(),
            location: header("location").map(common::http::percent_encode_8bit),
            retry_after: text("retry-after"),
            transfer_encoding: text("transfer-encoding"),
            content_encoding: text("content-encoding"),
        }
    }
}

/// What the transport recorded of one exchange.
struct Recorded {
    /// The request as written.
    request: Vec<u8>,
    /// The response as read, cut at the size limit.
    block: Vec<u8>,
    /// Where the body starts in `block` (may be past its end when cut).
    body_offset: usize,
    /// Why the response is incomplete, if it is.
    truncated: Option<Truncated>,
}

/// Decodes the recorded body (up to `max_body` decoded bytes) to find one
/// that cannot be decoded: the error, and whether the decoded body was
/// over the limit. A body cut short ends early without being damaged.
fn check_decoding(head: &HeadFields, rec: &Recorded, max_body: usize) -> (Option<String>, bool) {
    DECODER.with_borrow_mut(|d| {
        let got = d.decode(
            head.transfer_encoding.as_deref(),
            head.content_encoding.as_deref(),
            &rec.block[rec.body_offset.min(rec.block.len())..],
            max_body,
        );
        match got.outcome {
            Outcome::Failed(e) => (Some(e), false),
            // A cut stream ends early; otherwise it is damaged.
            Outcome::Incomplete(e) if rec.truncated.is_none() => (Some(e), false),
            Outcome::Cut => (None, true),
            _ => (None, false),
        }
    })
}

/// Size of ureq's input buffer (at most one read's worth arrives past what
/// the body reader asked for).
const INPUT_BUFFER: usize = 64 * 1024;

thread_local! {
    /// Each worker thread's decoder (it keeps its buffers).
    static DECODER: std::cell::RefCell<BodyDecoder> = std::cell::RefCell::default();
    /// Where each worker thread reads bodies that the transport records
    /// (kept rather than zeroed again for every response; small, as there
    /// may be a thousand workers, and the bytes are only passed over).
    static DRAIN: std::cell::RefCell<Vec<u8>> = std::cell::RefCell::new(vec![0; 16 * 1024]);
}

fn lock(wire: &Mutex<Wire>) -> std::sync::MutexGuard<'_, Wire> {
    wire.lock().unwrap_or_else(|e| e.into_inner())
}

/// The length of the response head at the start of `received`.
fn head_len(received: &[u8]) -> usize {
    common::http::parse_response_head(received)
        .map(|h| h.body_offset)
        .or_else(|| memchr::memmem::find(received, b"\r\n\r\n").map(|i| i + 4))
        .unwrap_or(received.len())
}

/// Reads the body through ureq (which follows its framing) until it ends,
/// or more than `max_block` bytes have been received, or time is up; the
/// bytes themselves are kept by the transport. Returns why it stopped early.
fn drain_body(
    mut reader: impl Read,
    wire: &Mutex<Wire>,
    max_block: usize,
    start: Instant,
    cfg: &ClientConfig,
) -> Option<Truncated> {
    DRAIN.with_borrow_mut(|chunk| drain_into(&mut reader, chunk, wire, max_block, start, cfg))
}

fn drain_into(
    reader: &mut impl Read,
    chunk: &mut [u8],
    wire: &Mutex<Wire>,
    max_block: usize,
    start: Instant,
    cfg: &ClientConfig,
) -> Option<Truncated> {
    loop {
        if start.elapsed() >= cfg.download_timeout {
            return Some(Truncated::Time);
        }
        {
            let w = lock(wire);
            if w.over || w.received.len() > max_block {
                return Some(Truncated::Length);
            }
        }
        match reader.read(chunk) {
            Ok(0) => return None,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if is_timeout(&e) => return Some(Truncated::Time),
            Err(_) => return Some(Truncated::Disconnect),
        }
    }
}

fn is_timeout(e: &io::Error) -> bool {
    if matches!(
        e.kind(),
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
    ) {
        return true;
    }
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<ureq::Error>())
        .is_some_and(|u| matches!(u, ureq::Error::Timeout(_)))
}

/// The resolver's failure, if that is what `e` is.
fn dns_failure(e: &ureq::Error) -> Option<&DnsFailure> {
    match e {
        ureq::Error::Other(inner) => inner.downcast_ref::<DnsFailure>(),
        _ => None,
    }
}

/// Maps a ureq error to a crawl-log code and message.
fn classify(e: ureq::Error, cfg: &ClientConfig) -> (ErrorCode, String) {
    use ureq::Error as E;
    match e {
        E::HostNotFound => (ErrorCode::Dns, "host name not found".into()),
        E::Timeout(t) => {
            let what = match t {
                ureq::Timeout::Resolve => "name resolution".to_string(),
                ureq::Timeout::Connect => format!("connect ({:?})", cfg.connect_timeout),
                ureq::Timeout::RecvResponse | ureq::Timeout::SendRequest => {
                    format!("first byte ({:?})", cfg.first_byte_timeout)
                }
                _ => format!("download ({:?})", cfg.download_timeout),
            };
            (ErrorCode::Timeout, format!("timeout: {what}"))
        }
        E::Other(inner) => match inner.downcast::<PrivateAddress>() {
            Ok(p) => (ErrorCode::PrivateAddress, p.to_string()),
            Err(inner) => (ErrorCode::Connect, inner.to_string()),
        },
        E::Io(io) if tls::rustls_error_of(&io).is_some() => {
            let r = tls::rustls_error_of(&io).expect("checked by the guard");
            (ErrorCode::Tls, tls::reason(r))
        }
        E::Io(io) => match io.kind() {
            io::ErrorKind::ConnectionRefused => (ErrorCode::Refused, io.to_string()),
            io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => {
                (ErrorCode::Timeout, io.to_string())
            }
            io::ErrorKind::InvalidData => (ErrorCode::Protocol, io.to_string()),
            _ if io.to_string().contains("failed to lookup") => (ErrorCode::Dns, io.to_string()),
            _ => (ErrorCode::Connect, io.to_string()),
        },
        E::Tls(m) => (ErrorCode::Tls, m.to_string()),
        E::Rustls(r) => (ErrorCode::Tls, tls::reason(&r)),
        E::Pem(p) => (ErrorCode::Tls, p.to_string()),
        E::ConnectionFailed => (ErrorCode::Connect, "connection failed".into()),
        E::BadUri(m) => (ErrorCode::BadUrl, m),
        E::Protocol(p) => (ErrorCode::Protocol, p.to_string()),
        E::LargeResponseHeader(a, b) => (
            ErrorCode::Protocol,
            format!("response head too large ({a} > {b} bytes)"),
        ),
        other => (ErrorCode::Protocol, other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_end_at_the_blank_line() {
        assert_eq!(head_len(b"HTTP/1.1 999\r\nA: b\r\n\r\nbody"), 22);
        assert_eq!(head_len(b"HTTP/1.1 200 OK\r\n"), 17, "no end: all head");
    }

    #[test]
    fn failures_get_the_crawl_log_code_of_their_kind() {
        let cfg = ClientConfig {
            user_agent: "t".into(),
            from: None,
            connect_timeout: Duration::from_secs(1),
            first_byte_timeout: Duration::from_secs(2),
            download_timeout: Duration::from_secs(3),
            allow_private: false,
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
        };
        let io = |kind: io::ErrorKind, msg: &str| ureq::Error::Io(io::Error::new(kind, msg));
        let cases = [
            (ureq::Error::HostNotFound, ErrorCode::Dns),
            (
                io(io::ErrorKind::Other, "failed to lookup address information"),
                ErrorCode::Dns,
            ),
            (
                io(io::ErrorKind::ConnectionRefused, "refused"),
                ErrorCode::Refused,
            ),
            (
                ureq::Error::Timeout(ureq::Timeout::Connect),
                ErrorCode::Timeout,
            ),
            (
                ureq::Error::Timeout(ureq::Timeout::RecvResponse),
                ErrorCode::Timeout,
            ),
            (
                ureq::Error::Other(Box::new(PrivateAddress("169.254.169.254".parse().unwrap()))),
                ErrorCode::PrivateAddress,
            ),
            (
                io(io::ErrorKind::ConnectionReset, "reset"),
                ErrorCode::Connect,
            ),
            (ureq::Error::BadUri("x".into()), ErrorCode::BadUrl),
            (
                ureq::Error::Rustls(rustls::Error::InvalidCertificate(
                    rustls::CertificateError::UnknownIssuer,
                )),
                ErrorCode::Tls,
            ),
            (
                // After the handshake, rustls errors come inside I/O errors.
                ureq::Error::Io(io::Error::new(
                    io::ErrorKind::InvalidData,
                    rustls::Error::AlertReceived(rustls::AlertDescription::BadRecordMac),
                )),
                ErrorCode::Tls,
            ),
        ];
        for (error, code) in cases {
            let shown = error.to_string();
            assert_eq!(classify(error, &cfg).0, code, "{shown}");
        }
        let (_, msg) = classify(ureq::Error::Timeout(ureq::Timeout::RecvResponse), &cfg);
        assert_eq!(
            msg, "timeout: first byte (2s)",
            "the message says which timeout"
        );
    }
}
