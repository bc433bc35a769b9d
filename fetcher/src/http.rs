//! The HTTP client: one blocking GET per call (ureq 3; one call per worker
//! thread), over the guarded transport of [`crate::transport`].
//!
//! Bodies are read by us, not by ureq: `gzip` and `deflate` are decoded with
//! flate2 and the size limit counts *decoded* bytes, so a gzip bomb is cut at
//! the limit and a body of exactly the limit is complete.

use std::collections::HashMap;
use std::fmt;
use std::io::{self, Read};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use common::crawllog::ErrorCode;
use common::warc::Truncated;

use crate::transport::{self, HostsMap, PeerMap, PrivateAddress};

/// Settings of a [`Client`].
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// `User-Agent` header.
    pub user_agent: String,
    /// Connect timeout.
    pub connect_timeout: Duration,
    /// Until the end of the response head.
    pub first_byte_timeout: Duration,
    /// The whole request.
    pub download_timeout: Duration,
    /// Permit private addresses.
    pub allow_private: bool,
    /// Static names.
    pub hosts: Option<HostsMap>,
    /// Queue keys whose idle connection is kept for reuse.
    pub idle_connections: usize,
}

/// A response, ready to store.
#[derive(Debug)]
pub struct Response {
    /// When the request was sent.
    pub date: SystemTime,
    /// HTTP status.
    pub status: u16,
    /// The request head as sent.
    pub request_head: Vec<u8>,
    /// The response head as stored (encoding headers renamed when decoded).
    pub response_head: Vec<u8>,
    /// The stored (decoded) body.
    pub payload: Vec<u8>,
    /// Why the body is incomplete.
    pub truncated: Option<Truncated>,
    /// Address connected to.
    pub ip: Option<IpAddr>,
    /// Media type, lower case, without parameters.
    pub content_type: String,
    /// `Location` header.
    pub location: Option<String>,
    /// `Retry-After` header.
    pub retry_after: Option<String>,
    /// Time to the end of the response.
    pub elapsed: Duration,
}

/// A request that got no HTTP response.
#[derive(Debug)]
pub struct Failure {
    /// The error code for the crawl log.
    pub code: ErrorCode,
    /// What happened.
    pub message: String,
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
    resolver_hosts: Option<Arc<HostsMap>>,
    peers: Arc<PeerMap>,
    cfg: Arc<ClientConfig>,
}

#[derive(Default)]
struct AgentCache {
    agents: HashMap<usize, (ureq::Agent, u64)>,
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
            .user_agent(cfg.user_agent.as_str())
            .accept("*/*")
            .timeout_connect(Some(cfg.connect_timeout))
            .timeout_recv_response(Some(cfg.first_byte_timeout))
            .timeout_global(Some(cfg.download_timeout))
            .max_idle_connections(4)
            .max_idle_connections_per_host(1)
            // A pooled connection keeps its buffers: ureq's defaults (128 KiB
            // each way) would make hundreds of idle hosts cost hundreds of MB.
            .max_response_header_size(64 * 1024)
            .input_buffer_size(64 * 1024)
            .output_buffer_size(16 * 1024)
            .build();
        Client {
            agents: Arc::default(),
            closed: Arc::default(),
            config,
            resolver_hosts: cfg.hosts.clone().map(Arc::new),
            peers: Arc::new(PeerMap::default()),
            cfg: Arc::new(cfg),
        }
    }

    fn new_agent(&self) -> ureq::Agent {
        transport::agent(
            self.config.clone(),
            self.cfg.allow_private,
            self.resolver_hosts.clone(),
            self.peers.clone(),
        )
    }

    /// The agent of queue key `key`; `None` after [`Client::shutdown`]
    /// (checked under the lock that `shutdown` takes to drain the agents,
    /// so no request starts on an agent it missed).
    fn agent(&self, key: usize) -> Option<ureq::Agent> {
        let mut c = self.agents.lock().unwrap_or_else(|e| e.into_inner());
        if self.closed.load(Ordering::SeqCst) {
            return None;
        }
        c.clock += 1;
        let now = c.clock;
        if let Some((a, used)) = c.agents.get_mut(&key) {
            *used = now;
            return Some(a.clone());
        }
        let cap = self.cfg.idle_connections.max(1);
        if c.agents.len() >= cap {
            // Drop the least recently used half at once (amortized O(1)).
            let mut uses: Vec<u64> = c.agents.values().map(|(_, u)| *u).collect();
            let mid = uses.len() / 2;
            let (_, median, _) = uses.select_nth_unstable(mid);
            let median = *median;
            c.agents.retain(|_, (_, u)| *u > median);
        }
        let a = self.new_agent();
        c.agents.insert(key, (a.clone(), now));
        Some(a)
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
        if let Some((a, _)) = agent {
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
            .map(|(_, (a, _))| a)
            .collect();
        for a in agents {
            a.shutdown();
        }
    }

    /// Fetches `url` for queue key `key`, keeping at most `max_body`
    /// decoded bytes of the body.
    pub fn fetch(&self, key: usize, url: &str, max_body: u64) -> Result<Response, Failure> {
        let start = Instant::now();
        let date = SystemTime::now();
        let fail = |code: ErrorCode, message: String| Failure {
            code,
            message,
            elapsed: start.elapsed(),
        };
        let uri: ureq::http::Uri = url
            .parse()
            .map_err(|e| fail(ErrorCode::BadUrl, format!("{e}")))?;
        let path = uri
            .path_and_query()
            .map(|p| p.as_str().to_string())
            .unwrap_or_else(|| "/".into());
        let host_header = uri.authority().map(|a| a.as_str()).unwrap_or("");
        let request = ureq::http::Request::builder()
            .method("GET")
            .uri(uri.clone())
            .header("accept-encoding", "gzip, deflate")
            .body(())
            .map_err(|e| fail(ErrorCode::BadUrl, e.to_string()))?;
        let request_head = format!(
            "GET {path} HTTP/1.1\r\nHost: {host_header}\r\nUser-Agent: {}\r\nAccept: */*\r\n\
             Accept-Encoding: gzip, deflate\r\n\r\n",
            self.cfg.user_agent
        )
        .into_bytes();
        let Some(agent) = self.agent(key) else {
            return Err(fail(
                ErrorCode::Connect,
                "not sent: the fetcher is shutting down".into(),
            ));
        };
        let response = agent
            .run(request)
            .map_err(|e| classify(e, &self.cfg))
            .map_err(|(code, msg)| fail(code, msg))?;
        let ip = transport::peer_of(&self.peers, &uri);
        let status = response.status().as_u16();
        let headers: Vec<(String, String)> = response
            .headers()
            .iter()
            .map(|(n, v)| {
                (
                    n.as_str().to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        let version = match response.version() {
            ureq::http::Version::HTTP_10 => "HTTP/1.0",
            _ => "HTTP/1.1",
        };
        let reason = response.status().canonical_reason().unwrap_or("");
        let header = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.clone())
        };
        let encoding = header("content-encoding")
            .map(|e| e.trim().to_ascii_lowercase())
            .unwrap_or_default();
        let content_type = header("content-type")
            .map(|v| {
                v.split(';')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_ascii_lowercase()
            })
            .unwrap_or_default();
        let location = header("location");
        let retry_after = header("retry-after");

        let raw = response.into_body().into_reader();
        let (payload, truncated, decoded) = read_body(raw, &encoding, max_body, start, &self.cfg);
        let response_head = stored_head(
            version,
            status,
            reason,
            &headers,
            payload.len(),
            decoded,
            truncated.is_some(),
        );
        Ok(Response {
            date,
            status,
            request_head,
            response_head,
            payload,
            truncated,
            ip,
            content_type,
            location,
            retry_after,
            elapsed: start.elapsed(),
        })
    }
}

/// Reads the body, decoding gzip/deflate, up to `max` decoded bytes.
/// Returns the payload, why it is incomplete, and whether it was decoded.
fn read_body(
    raw: impl Read,
    encoding: &str,
    max: u64,
    start: Instant,
    cfg: &ClientConfig,
) -> (Vec<u8>, Option<Truncated>, bool) {
    let (mut reader, decoded): (Box<dyn Read>, bool) = match encoding {
        "gzip" | "x-gzip" => (Box::new(flate2::read::MultiGzDecoder::new(raw)), true),
        "deflate" => (Box::new(flate2::read::ZlibDecoder::new(raw)), true),
        _ => (Box::new(raw), false),
    };
    let mut payload = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    let truncated = loop {
        if start.elapsed() >= cfg.download_timeout {
            break Some(Truncated::Time);
        }
        let room = (max + 1).saturating_sub(payload.len() as u64);
        let want = (chunk.len() as u64).min(room) as usize;
        if want == 0 {
            break None;
        }
        match reader.read(&mut chunk[..want]) {
            Ok(0) => break None,
            Ok(n) => payload.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) if is_timeout(&e) => break Some(Truncated::Time),
            Err(_) => break Some(Truncated::Disconnect),
        }
    };
    if payload.len() as u64 > max {
        payload.truncate(max as usize);
        return (payload, Some(Truncated::Length), decoded);
    }
    (payload, truncated, decoded)
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

/// The response head as stored: the body is stored de-chunked (and decoded
/// when we decoded it), so the framing headers that no longer describe it
/// are renamed `X-Crawler-*` and a `Content-Length` of the stored payload is
/// added.
fn stored_head(
    version: &str,
    status: u16,
    reason: &str,
    headers: &[(String, String)],
    payload_len: usize,
    decoded: bool,
    truncated: bool,
) -> Vec<u8> {
    let mut head = format!("{version} {status} {reason}\r\n");
    let mut length_kept = false;
    for (name, value) in headers {
        let lower = name.to_ascii_lowercase();
        let rename = match lower.as_str() {
            "content-encoding" => decoded,
            "transfer-encoding" => true,
            "content-length" => {
                let keep = !decoded
                    && !truncated
                    && !length_kept
                    && value.trim().parse::<usize>() == Ok(payload_len);
                length_kept |= keep;
                !keep
            }
            _ => false,
        };
        let value = value.replace(['\r', '\n'], " ");
        if rename {
            head.push_str("X-Crawler-");
        }
        head.push_str(&title_case(&lower));
        head.push_str(": ");
        head.push_str(&value);
        head.push_str("\r\n");
    }
    if !length_kept {
        head.push_str(&format!("Content-Length: {payload_len}\r\n"));
    }
    head.push_str("\r\n");
    head.into_bytes()
}

/// `content-type` → `Content-Type`.
fn title_case(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut up = true;
    for c in name.chars() {
        out.push(if up { c.to_ascii_uppercase() } else { c });
        up = c == '-';
    }
    out
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
        E::Rustls(r) => (ErrorCode::Tls, r.to_string()),
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
    fn stored_head_renames_what_no_longer_describes_the_payload() {
        let headers = vec![
            ("content-type".to_string(), "text/html".to_string()),
            ("content-encoding".to_string(), "gzip".to_string()),
            ("content-length".to_string(), "20".to_string()),
        ];
        let head = String::from_utf8(stored_head(
            "HTTP/1.1", 200, "OK", &headers, 100, true, false,
        ))
        .unwrap();
        assert_eq!(
            head,
            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Crawler-Content-Encoding: gzip\r\n\
             X-Crawler-Content-Length: 20\r\nContent-Length: 100\r\n\r\n"
        );
        let plain = vec![("content-length".to_string(), "5".to_string())];
        let head =
            String::from_utf8(stored_head("HTTP/1.1", 200, "OK", &plain, 5, false, false)).unwrap();
        assert_eq!(head, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n");
        let chunked = vec![("transfer-encoding".to_string(), "chunked".to_string())];
        let head = String::from_utf8(stored_head(
            "HTTP/1.1", 200, "OK", &chunked, 7, false, false,
        ))
        .unwrap();
        assert_eq!(
            head,
            "HTTP/1.1 200 OK\r\nX-Crawler-Transfer-Encoding: chunked\r\nContent-Length: 7\r\n\r\n"
        );
    }

    #[test]
    fn decoded_limit_cuts_bombs_and_keeps_exact_bodies() {
        use flate2::Compression;
        use flate2::write::GzEncoder;
        use std::io::Write;
        let cfg = ClientConfig {
            user_agent: "t".into(),
            connect_timeout: Duration::from_secs(1),
            first_byte_timeout: Duration::from_secs(1),
            download_timeout: Duration::from_secs(60),
            allow_private: true,
            hosts: None,
            idle_connections: 1,
        };
        let mut enc = GzEncoder::new(Vec::new(), Compression::best());
        enc.write_all(&vec![0u8; 50_000_000]).unwrap();
        let bomb = enc.finish().unwrap();
        assert!(bomb.len() < 100_000);
        let (payload, truncated, decoded) =
            read_body(&bomb[..], "gzip", 1_000_000, Instant::now(), &cfg);
        assert_eq!(payload.len(), 1_000_000);
        assert_eq!(truncated, Some(Truncated::Length));
        assert!(decoded);

        let exact = vec![7u8; 4096];
        let (payload, truncated, _) = read_body(&exact[..], "", 4096, Instant::now(), &cfg);
        assert_eq!(payload.len(), 4096);
        assert_eq!(truncated, None, "a body of exactly the limit is complete");
    }

    #[test]
    fn failures_get_the_crawl_log_code_of_their_kind() {
        let cfg = ClientConfig {
            user_agent: "t".into(),
            connect_timeout: Duration::from_secs(1),
            first_byte_timeout: Duration::from_secs(2),
            download_timeout: Duration::from_secs(3),
            allow_private: false,
            hosts: None,
            idle_connections: 1,
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
