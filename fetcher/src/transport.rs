//! The transport under the HTTP client: how names resolve, which
//! addresses may be connected to, and the way through a proxy (ureq 3's
//! `unversioned` transport API, hence the exact version pin).
//!
//! - names resolve through [`crate::dns`] (the `--hosts-file`, then DNS,
//!   behind a cache);
//! - every address is checked right before the socket connects to it, so a
//!   loopback, private, link-local or unspecified address is refused on the
//!   address actually used, unless `--allow-private` is set;
//! - through a proxy ([`crate::proxy`]), the proxy connects to the target
//!   (an `http` request goes to the proxy in absolute form, an `https` one
//!   through a `CONNECT` tunnel):
//!   the target's name is resolved here all the same and refused if it
//!   points at a private address, before the proxy is asked (a name that
//!   does not resolve here is left to the proxy; the proxy's own address is
//!   the operator's choice and is not checked);
//! - the address connected to is remembered for `WARC-IP-Address` (not
//!   through a proxy: only the proxy knows it);
//! - every byte written to and read from a connection (above TLS, inside a
//!   proxy's tunnel) is recorded in the agent's [`Wire`], so the WARC
//!   records hold the exchange exactly as it went.

use std::collections::HashMap;
use std::fmt;
use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ureq::unversioned::resolver::{ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{
    Buffers, ConnectProxyConnector, ConnectionDetails, Connector, Either, LazyBuffers, NextTimeout,
    Transport,
};

use crate::dns::Dns;
use crate::tls::TlsConnector;

/// True for addresses a crawler must not reach by default: loopback,
/// private (RFC 1918, unique local), link-local, unspecified, and the other
/// special-purpose ranges that are never public web servers.
pub fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || o[0] == 0
                || (o[0] == 100 && (o[1] & 0xc0) == 64) // 100.64/10 shared address space
                || o[0] >= 240
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_private(IpAddr::V4(v4));
            }
            let seg = v6.segments();
            v6.is_loopback()
                || v6.is_unspecified()
                || (seg[0] & 0xfe00) == 0xfc00 // unique local
                || (seg[0] & 0xffc0) == 0xfe80 // link-local
        }
    }
}

/// The error a refused address travels in through ureq.
#[derive(Debug)]
pub struct PrivateAddress(pub IpAddr);

impl fmt::Display for PrivateAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} is a loopback, private, link-local or unspecified address (allow with --allow-private)",
            self.0
        )
    }
}

impl std::error::Error for PrivateAddress {}

/// Addresses connected to, by `host:port` (one request per host is in
/// flight at a time, so the entry is the current connection's).
pub type PeerMap = Mutex<HashMap<String, IpAddr>>;

/// A ureq agent whose connections go through the guarded transport: names
/// resolved by `dns`, private addresses refused unless `allow_private`,
/// each address connected to noted in `peers`, the bytes exchanged
/// recorded in `wire`; `https` connections wrapped by `tls`. With a proxy in
/// `config`, requests go through it (`http` in absolute form, `https` by
/// `CONNECT`, then TLS inside the tunnel), except for the names its no-proxy
/// list matches.
pub fn agent(
    config: ureq::config::Config,
    tls: TlsConnector,
    allow_private: bool,
    dns: Dns,
    peers: Arc<PeerMap>,
    wire: Arc<Mutex<Wire>>,
) -> ureq::Agent {
    let proxied = config.proxy().is_some();
    let connector = ()
        .chain(ProxyGuard {
            allow_private,
            dns: dns.clone(),
            peers: peers.clone(),
        })
        .chain(ConnectProxyConnector::default())
        .chain(GuardedTcpConnector {
            allow_private,
            proxied,
            peers,
        });
    let connector = connector.chain(tls).chain(TapConnector { wire, proxied });
    let resolver = DnsResolver { dns };
    ureq::Agent::with_parts(config, connector, resolver)
}

/// True when `details` are those of the connection to the proxy itself:
/// ureq connects to it with a copy of the configuration without the proxy.
fn is_proxy_leg(proxied: bool, details: &ConnectionDetails) -> bool {
    proxied && details.config.proxy().is_none()
}

/// True when a request for `details` goes through the configured proxy.
fn goes_through_proxy(details: &ConnectionDetails) -> bool {
    details
        .config
        .proxy()
        .is_some_and(|p| !p.is_no_proxy(details.uri))
}

/// The address the latest connection for `uri`'s `host:port` went to.
pub fn peer_of(peers: &PeerMap, uri: &ureq::http::Uri) -> Option<IpAddr> {
    peers
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&authority_key(uri))
        .copied()
}

/// The port of `uri`, or its scheme's default.
fn port_of(uri: &ureq::http::Uri) -> u16 {
    uri.port_u16().unwrap_or(match uri.scheme_str() {
        Some("https") => 443,
        _ => 80,
    })
}

fn authority_key(uri: &ureq::http::Uri) -> String {
    let host = uri.host().unwrap_or("");
    format!("{host}:{}", port_of(uri))
}

/// Names through [`Dns`]; a failure travels as a [`DnsFailure`].
#[derive(Debug)]
struct DnsResolver {
    dns: Dns,
}

impl Resolver for DnsResolver {
    fn resolve(
        &self,
        uri: &ureq::http::Uri,
        _config: &ureq::config::Config,
        _timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let port = port_of(uri);
        let ips = self
            .dns
            .lookup(uri.host().unwrap_or(""))
            .map_err(|f| ureq::Error::Other(Box::new(f)))?;
        let mut out = self.empty();
        for ip in ips.iter().take(16) {
            out.push(SocketAddr::new(*ip, port));
        }
        Ok(out)
    }
}

/// The first connector of the chain: for a request that goes through the
/// proxy, resolves the target's name and refuses it if it is private
/// (unless allowed), before anything is sent; a name that does not resolve
/// here goes to the proxy unchecked. Opens nothing itself.
#[derive(Debug)]
struct ProxyGuard {
    allow_private: bool,
    dns: Dns,
    peers: Arc<PeerMap>,
}

impl Connector<()> for ProxyGuard {
    type Out = GuardedTcp;

    fn connect(
        &self,
        details: &ConnectionDetails,
        _chained: Option<()>,
    ) -> Result<Option<GuardedTcp>, ureq::Error> {
        let Some(proxy) = details
            .config
            .proxy()
            .filter(|_| goes_through_proxy(details))
        else {
            return Ok(None);
        };
        // Only the proxy knows the address it connects to.
        self.peers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&authority_key(details.uri));
        if !self.allow_private {
            // A name this machine cannot resolve is left to the proxy: behind
            // a proxy, often only the proxy can resolve outside names.
            if let Ok(ips) = self.dns.lookup(details.uri.host().unwrap_or(""))
                && let Some(ip) = ips.iter().find(|ip| is_private(**ip))
            {
                return Err(ureq::Error::Other(Box::new(PrivateAddress(*ip))));
            }
        }
        if details.uri.scheme_str() == Some("https") {
            // Through a CONNECT tunnel (the next connector).
            return Ok(None);
        }
        // http: the request goes to the proxy itself, in absolute form (see
        // `Tapped`); its address is the operator's choice.
        let addrs = details
            .resolver
            .resolve(proxy.uri(), details.config, details.timeout)?;
        let (tcp, _) = open_tcp(&addrs, details, true)?;
        Ok(Some(tcp))
    }
}

/// Opens TCP connections, refusing private addresses unless allowed.
/// A connection already made (a proxy's tunnel) is passed on; so is the
/// connection to the proxy itself, unchecked: its address is the
/// operator's choice.
#[derive(Debug)]
struct GuardedTcpConnector {
    allow_private: bool,
    /// A proxy is configured.
    proxied: bool,
    peers: Arc<PeerMap>,
}

impl<In: Transport> Connector<In> for GuardedTcpConnector {
    type Out = Either<In, GuardedTcp>;

    fn connect(
        &self,
        details: &ConnectionDetails,
        chained: Option<In>,
    ) -> Result<Option<Self::Out>, ureq::Error> {
        if let Some(tunnel) = chained {
            return Ok(Some(Either::A(tunnel)));
        }
        let to_proxy = is_proxy_leg(self.proxied, details);
        let allow_private = self.allow_private || to_proxy;
        let (tcp, peer) = open_tcp(&details.addrs, details, allow_private)?;
        if !to_proxy {
            self.peers
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(authority_key(details.uri), peer);
        }
        Ok(Some(Either::B(tcp)))
    }
}

/// Connects to the first of `addrs` that answers within the connect
/// timeout, refusing private addresses unless `allow_private`; returns the
/// connection and the address connected to.
fn open_tcp(
    addrs: &[SocketAddr],
    details: &ConnectionDetails,
    allow_private: bool,
) -> Result<(GuardedTcp, IpAddr), ureq::Error> {
    let start = Instant::now();
    let budget = details.timeout.not_zero().map(|d| *d);
    let mut last_err: Option<ureq::Error> = None;
    for addr in addrs {
        if !allow_private && is_private(addr.ip()) {
            last_err = Some(ureq::Error::Other(Box::new(PrivateAddress(addr.ip()))));
            continue;
        }
        let left = match budget {
            Some(b) => match b.checked_sub(start.elapsed()) {
                Some(l) if !l.is_zero() => Some(l),
                _ => return Err(ureq::Error::Timeout(details.timeout.reason)),
            },
            None => None,
        };
        let result = match left {
            Some(l) => TcpStream::connect_timeout(addr, l),
            None => TcpStream::connect(addr),
        };
        match result {
            Ok(stream) => {
                // Check the connected peer too, not only the address we asked for.
                let peer = stream.peer_addr().map(|a| a.ip()).unwrap_or(addr.ip());
                if !allow_private && is_private(peer) {
                    return Err(ureq::Error::Other(Box::new(PrivateAddress(peer))));
                }
                stream.set_nodelay(true)?;
                let stream = Arc::new(stream);
                (details.register_shutdown)(Arc::downgrade(&stream)
                    as std::sync::Weak<dyn ureq::unversioned::transport::ShutdownHandle>)?;
                let buffers = LazyBuffers::new(
                    details.config.input_buffer_size(),
                    details.config.output_buffer_size(),
                );
                return Ok((GuardedTcp { stream, buffers }, peer));
            }
            Err(e) if e.kind() == io::ErrorKind::TimedOut => {
                last_err = Some(ureq::Error::Timeout(ureq::Timeout::Connect));
            }
            Err(e) => last_err = Some(ureq::Error::Io(e)),
        }
    }
    Err(last_err.unwrap_or(ureq::Error::ConnectionFailed))
}

/// A plain TCP connection for ureq.
struct GuardedTcp {
    stream: Arc<TcpStream>,
    buffers: LazyBuffers,
}

impl fmt::Debug for GuardedTcp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GuardedTcp")
            .field("peer", &self.stream.peer_addr().ok())
            .finish()
    }
}

fn timeout_left(t: NextTimeout) -> Result<Option<Duration>, ureq::Error> {
    if t.after.is_zero() {
        return Err(ureq::Error::Timeout(t.reason));
    }
    Ok(t.not_zero().map(|d| *d))
}

impl Transport for GuardedTcp {
    fn buffers(&mut self) -> &mut dyn Buffers {
        &mut self.buffers
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), ureq::Error> {
        let timeout = timeout.for_write();
        self.stream.set_write_timeout(timeout_left(timeout)?)?;
        let out = &self.buffers.output()[..amount];
        match (&*self.stream).write_all(out) {
            Ok(()) => Ok(()),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
                ) =>
            {
                Err(ureq::Error::Timeout(timeout.reason))
            }
            Err(e) => Err(e.into()),
        }
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        let timeout = timeout.for_read();
        self.stream.set_read_timeout(timeout_left(timeout)?)?;
        let buf = self.buffers.input_append_buf();
        let n = loop {
            match (&*self.stream).read(buf) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
                    ) =>
                {
                    return Err(ureq::Error::Timeout(timeout.reason));
                }
                Err(e) => return Err(e.into()),
            }
        };
        self.buffers.input_appended(n);
        Ok(n > 0)
    }

    fn is_open(&mut self) -> bool {
        // Open if a non-blocking peek finds nothing waiting (no EOF, no
        // stray bytes): one system call, where switching the socket to
        // non-blocking and back took three (ureq asks twice per request).
        let mut b = [0u8; 1];
        // SAFETY: the descriptor is owned by `self.stream` and open; `b` is
        // a valid buffer of the length passed.
        let n = unsafe {
            libc::recv(
                self.stream.as_raw_fd(),
                b.as_mut_ptr().cast(),
                b.len(),
                libc::MSG_PEEK | libc::MSG_DONTWAIT,
            )
        };
        n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::WouldBlock
    }
}

/// The bytes of one exchange as they went over a connection (after TLS
/// decryption, before any HTTP parsing), recorded by the transport. One
/// agent serves one queue, which has one request in flight at a time, so an
/// agent's `Wire` holds the current request's bytes.
#[derive(Debug, Default)]
pub struct Wire {
    /// Written to the connection.
    pub sent: Vec<u8>,
    /// Read from the connection, up to `cap` bytes.
    pub received: Vec<u8>,
    /// Most bytes of `received` kept; more is dropped and `over` set.
    cap: usize,
    /// True once more than `cap` bytes arrived.
    pub over: bool,
}

impl Wire {
    /// Forgets what was recorded and keeps at most `cap` received bytes from now on.
    pub fn start(&mut self, cap: usize) {
        self.sent.clear();
        self.received.clear();
        self.over = false;
        self.cap = cap;
    }

    fn read(&mut self, bytes: &[u8]) {
        let room = self.cap.saturating_sub(self.received.len());
        self.over |= bytes.len() > room;
        self.received
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
    }
}

/// The last connector of the chain: wraps each connection (TCP or TLS) in a
/// [`Tapped`] transport. A new connection starts a new recording: when ureq
/// retries a request on a fresh connection, only the retry is kept. The
/// connection to a proxy is not recorded (its `CONNECT` exchange is not the
/// request's; what goes through the tunnel is recorded by the tunnel's own
/// tap).
#[derive(Debug)]
struct TapConnector {
    wire: Arc<Mutex<Wire>>,
    /// A proxy is configured.
    proxied: bool,
}

impl<In: Transport> Connector<In> for TapConnector {
    type Out = Tapped<In>;

    fn connect(
        &self,
        details: &ConnectionDetails,
        chained: Option<In>,
    ) -> Result<Option<Tapped<In>>, ureq::Error> {
        let record = !is_proxy_leg(self.proxied, details);
        let absolute = (self.proxied
            && goes_through_proxy(details)
            && details.uri.scheme_str() == Some("http"))
        .then(|| AbsoluteForm {
            prefix: format!(
                "http://{}",
                details.uri.authority().map_or("", |a| a.as_str())
            ),
            authorization: details.config.proxy().and_then(proxy_authorization),
        });
        Ok(chained.map(|inner| {
            if record {
                let mut w = self.wire.lock().unwrap_or_else(|e| e.into_inner());
                let cap = w.cap;
                w.start(cap);
            }
            Tapped {
                inner,
                wire: record.then(|| self.wire.clone()),
                absolute,
            }
        }))
    }
}

/// A transport that records every byte it writes and reads (when it has a
/// wire to record to). On a connection to an HTTP proxy for an `http` URL,
/// it also writes each request line in absolute form (`GET http://host/path
/// HTTP/1.1`, RFC 9112 section 3.2.2), as a proxy expects, with the proxy's
/// `Proxy-Authorization` when it has credentials: what is recorded is what
/// is written, less that header.
#[derive(Debug)]
struct Tapped<T> {
    inner: T,
    wire: Option<Arc<Mutex<Wire>>>,
    /// How to write request lines for a proxy.
    absolute: Option<AbsoluteForm>,
}

/// Request lines in absolute form, for a proxy.
#[derive(Debug)]
struct AbsoluteForm {
    /// `http://authority`, put before the path.
    prefix: String,
    /// A `Proxy-Authorization` header line (with its CRLF) added after the
    /// request line, when the proxy has credentials.
    authorization: Option<String>,
}

/// The `Proxy-Authorization: Basic ...` line for `proxy`'s credentials.
fn proxy_authorization(proxy: &ureq::Proxy) -> Option<String> {
    let user = proxy.username()?;
    let pass = proxy.password().unwrap_or("");
    Some(format!(
        "Proxy-Authorization: Basic {}\r\n",
        base64(format!("{user}:{pass}").as_bytes())
    ))
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// `head` (the first bytes a request writes) with its request line in
/// absolute form and the proxy's authorization after it; `None` if `head`
/// does not start a request.
fn to_absolute_form(head: &[u8], form: &AbsoluteForm) -> Option<Vec<u8>> {
    let at = origin_form_at_start(head)?;
    let line_end = memchr::memmem::find(head, b"\r\n").map_or(head.len(), |i| i + 2);
    let mut out = Vec::with_capacity(head.len() + form.prefix.len() + 64);
    out.extend_from_slice(&head[..at]);
    out.extend_from_slice(form.prefix.as_bytes());
    out.extend_from_slice(&head[at..line_end]);
    if let Some(auth) = &form.authorization {
        out.extend_from_slice(auth.as_bytes());
    }
    out.extend_from_slice(&head[line_end..]);
    Some(out)
}

/// If `out` starts with a request line in origin form (`METHOD /...`), the
/// length of its method and the space after it.
fn origin_form_at_start(out: &[u8]) -> Option<usize> {
    let sp = out.iter().take(16).position(|&b| b == b' ')?;
    (sp > 0 && out[..sp].iter().all(u8::is_ascii_uppercase) && out.get(sp + 1) == Some(&b'/'))
        .then_some(sp + 1)
}

impl<T: Transport> Transport for Tapped<T> {
    fn buffers(&mut self) -> &mut dyn Buffers {
        self.inner.buffers()
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), ureq::Error> {
        let mut amount = amount;
        // What is recorded when it is not what is written: the head without
        // the proxy's credentials, which have no place in an archive.
        let mut recorded = None;
        if let Some(form) = &self.absolute {
            let out = self.inner.buffers().output();
            if let Some(head) = to_absolute_form(&out[..amount], form) {
                if head.len() > out.len() {
                    return Err(ureq::Error::Io(io::Error::new(
                        io::ErrorKind::InvalidData,
                        "request head too long to write in absolute form for the proxy",
                    )));
                }
                if form.authorization.is_some() {
                    let bare = AbsoluteForm {
                        prefix: form.prefix.clone(),
                        authorization: None,
                    };
                    recorded = to_absolute_form(&out[..amount], &bare);
                }
                out[..head.len()].copy_from_slice(&head);
                amount = head.len();
            }
        }
        if let Some(wire) = &self.wire {
            let out = &self.inner.buffers().output()[..amount];
            wire.lock()
                .unwrap_or_else(|e| e.into_inner())
                .sent
                .extend_from_slice(recorded.as_deref().unwrap_or(out));
        }
        self.inner.transmit_output(amount, timeout)
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        // Reading appends to the unconsumed input: what is new lies past it.
        let before = self.inner.buffers().input().len();
        let result = self.inner.await_input(timeout);
        let input = self.inner.buffers().input();
        if let Some(wire) = &self.wire
            && input.len() > before
        {
            wire.lock()
                .unwrap_or_else(|e| e.into_inner())
                .read(&input[before..]);
        }
        result
    }

    fn is_open(&mut self) -> bool {
        self.inner.is_open()
    }

    fn is_tls(&self) -> bool {
        self.inner.is_tls()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_for_a_proxy_in_absolute_form() {
        let form = AbsoluteForm {
            prefix: "http://a.test:8080".into(),
            authorization: None,
        };
        let head = b"GET /x?y HTTP/1.1\r\nhost: a.test:8080\r\n\r\n";
        assert_eq!(
            to_absolute_form(head, &form).unwrap(),
            b"GET http://a.test:8080/x?y HTTP/1.1\r\nhost: a.test:8080\r\n\r\n"
        );
        let proxy = ureq::Proxy::new("http://me:secret@p.test:3128").unwrap();
        let form = AbsoluteForm {
            prefix: "http://a.test".into(),
            authorization: proxy_authorization(&proxy),
        };
        assert_eq!(
            String::from_utf8(to_absolute_form(b"GET / HTTP/1.1\r\n\r\n", &form).unwrap()).unwrap(),
            "GET http://a.test/ HTTP/1.1\r\nProxy-Authorization: Basic bWU6c2VjcmV0\r\n\r\n"
        );
        assert_eq!(to_absolute_form(b"more header: x\r\n", &form), None);
        assert_eq!(base64(b"a"), "YQ==");
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(base64(b"abc"), "YWJj");
    }

    #[test]
    fn request_lines_in_origin_form_are_found() {
        assert_eq!(origin_form_at_start(b"GET /a HTTP/1.1\r\n"), Some(4));
        assert_eq!(origin_form_at_start(b"HEAD / HTTP/1.1\r\n"), Some(5));
        assert_eq!(origin_form_at_start(b"GET http://a/ HTTP/1.1"), None);
        assert_eq!(origin_form_at_start(b"user-agent: x\r\n"), None);
        assert_eq!(origin_form_at_start(b"/body"), None);
    }

    #[test]
    fn private_addresses() {
        for ip in [
            "127.0.0.1",
            "127.9.9.9",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "::",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
        ] {
            assert!(is_private(ip.parse().unwrap()), "{ip} must be refused");
        }
        for ip in ["93.184.216.34", "8.8.8.8", "2606:4700::1111", "172.32.0.1"] {
            assert!(!is_private(ip.parse().unwrap()), "{ip} is public");
        }
    }
}
