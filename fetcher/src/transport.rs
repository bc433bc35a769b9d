//! The transport under the HTTP client: how names resolve and which
//! addresses may be connected to (ureq 3's `unversioned` transport API,
//! hence the exact version pin).
//!
//! - names listed in `--hosts-file` resolve to the addresses listed there;
//!   other names go through the system resolver;
//! - every address is checked right before the socket connects to it, so a
//!   loopback, private, link-local or unspecified address is refused on the
//!   address actually used, unless `--allow-private` is set;
//! - the address connected to is remembered for `WARC-IP-Address`;
//! - every byte written to and read from a connection (above TLS) is
//!   recorded in the agent's [`Wire`], so the WARC records hold the
//!   exchange exactly as it went.

use std::collections::HashMap;
use std::fmt;
use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ureq::unversioned::resolver::{ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{
    Buffers, ConnectionDetails, Connector, LazyBuffers, NextTimeout, RustlsConnector, Transport,
};

/// A static name → addresses map read from a file in /etc/hosts format.
#[derive(Debug, Clone, Default)]
pub struct HostsMap {
    names: HashMap<String, Vec<IpAddr>>,
}

impl HostsMap {
    /// Reads `IP NAME [NAME...]` lines; `#` starts a comment. A bad line is
    /// an error naming the file and line.
    pub fn load(path: &Path) -> Result<HostsMap, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        HostsMap::parse(&text).map_err(|(line, msg)| format!("{}:{line}: {msg}", path.display()))
    }

    /// Parses the text of a hosts file; errors give the 1-based line.
    pub fn parse(text: &str) -> Result<HostsMap, (usize, String)> {
        let mut names: HashMap<String, Vec<IpAddr>> = HashMap::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("");
            let mut fields = line.split_whitespace();
            let Some(ip) = fields.next() else { continue };
            let ip: IpAddr = ip
                .parse()
                .map_err(|_| (i + 1, format!("`{ip}` is not an IP address")))?;
            let mut any = false;
            for name in fields {
                any = true;
                let entry = names
                    .entry(name.trim_end_matches('.').to_ascii_lowercase())
                    .or_default();
                if !entry.contains(&ip) {
                    entry.push(ip);
                }
            }
            if !any {
                return Err((i + 1, format!("address {ip} without a name")));
            }
        }
        Ok(HostsMap { names })
    }

    /// The addresses of `name`, if listed.
    pub fn get(&self, name: &str) -> Option<&[IpAddr]> {
        self.names.get(name).map(Vec::as_slice)
    }
}

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
/// resolved with `hosts` first, private addresses refused unless
/// `allow_private`, each address connected to noted in `peers`, the bytes
/// exchanged recorded in `wire`.
pub fn agent(
    config: ureq::config::Config,
    allow_private: bool,
    hosts: Option<Arc<HostsMap>>,
    peers: Arc<PeerMap>,
    wire: Arc<Mutex<Wire>>,
) -> ureq::Agent {
    let connector = ().chain(GuardedTcpConnector {
        allow_private,
        peers,
    });
    let connector = connector
        .chain(RustlsConnector::default())
        .chain(TapConnector { wire });
    let resolver = StaticResolver {
        hosts,
        system: Default::default(),
    };
    ureq::Agent::with_parts(config, connector, resolver)
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

#[derive(Debug)]
struct StaticResolver {
    hosts: Option<Arc<HostsMap>>,
    system: ureq::unversioned::resolver::DefaultResolver,
}

impl Resolver for StaticResolver {
    fn resolve(
        &self,
        uri: &ureq::http::Uri,
        config: &ureq::config::Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let host = uri
            .host()
            .unwrap_or("")
            .trim_start_matches('[')
            .trim_end_matches(']');
        let port = port_of(uri);
        let listed: Option<Vec<IpAddr>> = match host.parse::<IpAddr>() {
            Ok(ip) => Some(vec![ip]),
            Err(_) => self
                .hosts
                .as_ref()
                .and_then(|h| h.get(&host.to_ascii_lowercase()))
                .map(<[IpAddr]>::to_vec),
        };
        match listed {
            Some(ips) => {
                let mut out = self.empty();
                for ip in ips.into_iter().take(16) {
                    out.push(SocketAddr::new(ip, port));
                }
                Ok(out)
            }
            None => self.system.resolve(uri, config, timeout),
        }
    }
}

/// Opens TCP connections, refusing private addresses unless allowed.
#[derive(Debug)]
struct GuardedTcpConnector {
    allow_private: bool,
    peers: Arc<PeerMap>,
}

impl Connector<()> for GuardedTcpConnector {
    type Out = GuardedTcp;

    fn connect(
        &self,
        details: &ConnectionDetails,
        _chained: Option<()>,
    ) -> Result<Option<GuardedTcp>, ureq::Error> {
        let start = Instant::now();
        let budget = details.timeout.not_zero().map(|d| *d);
        let mut last_err: Option<ureq::Error> = None;
        for addr in details.addrs.iter() {
            if !self.allow_private && is_private(addr.ip()) {
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
                    if !self.allow_private && is_private(peer) {
                        return Err(ureq::Error::Other(Box::new(PrivateAddress(peer))));
                    }
                    stream.set_nodelay(true)?;
                    self.peers
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(authority_key(details.uri), peer);
                    let stream = Arc::new(stream);
                    (details.register_shutdown)(Arc::downgrade(&stream)
                        as std::sync::Weak<dyn ureq::unversioned::transport::ShutdownHandle>)?;
                    let buffers = LazyBuffers::new(
                        details.config.input_buffer_size(),
                        details.config.output_buffer_size(),
                    );
                    return Ok(Some(GuardedTcp { stream, buffers }));
                }
                Err(e) if e.kind() == io::ErrorKind::TimedOut => {
                    last_err = Some(ureq::Error::Timeout(ureq::Timeout::Connect));
                }
                Err(e) => last_err = Some(ureq::Error::Io(e)),
            }
        }
        Err(last_err.unwrap_or(ureq::Error::ConnectionFailed))
    }
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
/// retries a request on a fresh connection, only the retry is kept.
#[derive(Debug)]
struct TapConnector {
    wire: Arc<Mutex<Wire>>,
}

impl<In: Transport> Connector<In> for TapConnector {
    type Out = Tapped<In>;

    fn connect(
        &self,
        _details: &ConnectionDetails,
        chained: Option<In>,
    ) -> Result<Option<Tapped<In>>, ureq::Error> {
        Ok(chained.map(|inner| {
            let mut w = self.wire.lock().unwrap_or_else(|e| e.into_inner());
            let cap = w.cap;
            w.start(cap);
            Tapped {
                inner,
                wire: self.wire.clone(),
            }
        }))
    }
}

/// A transport that records every byte it writes and reads.
#[derive(Debug)]
struct Tapped<T> {
    inner: T,
    wire: Arc<Mutex<Wire>>,
}

impl<T: Transport> Transport for Tapped<T> {
    fn buffers(&mut self) -> &mut dyn Buffers {
        self.inner.buffers()
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), ureq::Error> {
        let out = &self.inner.buffers().output()[..amount];
        self.wire
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .sent
            .extend_from_slice(out);
        self.inner.transmit_output(amount, timeout)
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        // Reading appends to the unconsumed input: what is new lies past it.
        let before = self.inner.buffers().input().len();
        let result = self.inner.await_input(timeout);
        let input = self.inner.buffers().input();
        if input.len() > before {
            self.wire
                .lock()
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

    #[test]
    fn hosts_file_format() {
        let map = HostsMap::parse(
            "# demo\n127.0.0.2 news.demo.test www.demo.test # two names\n\n127.0.0.3\tShop.Demo.Test.\n",
        )
        .unwrap();
        assert_eq!(
            map.get("news.demo.test"),
            Some(&["127.0.0.2".parse().unwrap()][..])
        );
        assert_eq!(
            map.get("shop.demo.test"),
            Some(&["127.0.0.3".parse().unwrap()][..])
        );
        assert_eq!(map.get("other.test"), None);
        assert_eq!(HostsMap::parse("nonsense name\n").unwrap_err().0, 1);
        assert_eq!(HostsMap::parse("\n127.0.0.1\n").unwrap_err().0, 2);
    }
}
