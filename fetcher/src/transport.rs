//! Connections for the HTTP client ([`crate::http`]): how names resolve,
//! which addresses may be connected to, the way through a proxy, and TLS.
//! Connections are non-blocking (tokio), opened on the client's connection
//! thread, so that thousands can wait for slow servers at the cost of a
//! socket and a buffer each.
//!
//! - names resolve through [`crate::dns`] (the `--hosts-file`, then DNS,
//!   behind a cache; a request waiting for a lookup holds no thread);
//! - every address is checked right before the socket connects to it, so a
//!   loopback, private, link-local or unspecified address is refused on the
//!   address actually used, unless `--allow-private` is set;
//! - through a proxy ([`crate::proxy`]), the proxy connects to the target
//!   (an `http` request goes to the proxy in absolute form, an `https` one
//!   through a `CONNECT` tunnel): the target's name is resolved here all the
//!   same and refused if it points at a private address, before the proxy
//!   is asked (a name that does not resolve here is left to the proxy; the
//!   proxy's own address is the operator's choice and is not checked);
//! - the address connected to is kept for `WARC-IP-Address` (not through a
//!   proxy: only the proxy knows it);
//! - `https` connections are wrapped in TLS ([`crate::tls`]) above the TCP
//!   connection or inside the tunnel, so what the client reads and writes,
//!   and the WARC records hold, is the HTTP exchange itself.

use std::fmt;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::Instant;
use tokio_rustls::client::TlsStream;

use crate::dns::{Answer, Dns, DnsFailure};
use crate::proxy::Proxy;
use crate::tls::{self, Trust};

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

/// The address the guard refused.
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

/// Where a connection goes: an origin server, `https` or not. A kept
/// connection is used again only for the same route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// TLS to the server.
    pub https: bool,
    /// Host name or address (IPv6 without brackets).
    pub host: String,
    /// Port.
    pub port: u16,
}

/// Why a connection could not be opened.
#[derive(Debug)]
pub enum OpenError {
    /// The name did not resolve.
    Dns(DnsFailure),
    /// Every address of the name is private (and `--allow-private` is off).
    Private(PrivateAddress),
    /// No address answered within the connect timeout.
    Timeout,
    /// Connecting failed (refused, unreachable...).
    Io(io::Error),
    /// The TLS handshake failed (the rustls error inside when it is one).
    Tls(io::Error),
    /// The proxy would not open a tunnel.
    Proxy(String),
}

/// How connections are opened: the run's guard, resolver, proxy and TLS trust.
#[derive(Debug, Clone)]
pub struct Connector {
    /// Permit private addresses.
    pub allow_private: bool,
    /// The crawl's host rules: their `allow_private`, for the host or its
    /// address, overrides `allow_private`.
    pub host_rules: Arc<common::rules::HostRules>,
    /// The resolver.
    pub dns: Dns,
    /// The proxy, if requests go through one.
    pub proxy: Option<Proxy>,
    /// Trusted roots for `https`.
    pub trust: Trust,
    /// Longest wait for a TCP connection (over all addresses of a name).
    pub connect_timeout: Duration,
    /// `User-Agent` of a proxy's `CONNECT` request.
    pub user_agent: String,
}

/// An open connection, with what the WARC records say of it.
pub struct Conn {
    /// The bytes, through TLS when the route is `https`.
    pub stream: Stream,
    /// Where it goes.
    pub route: Route,
    /// Requests go to a proxy in absolute form (`http` through a proxy),
    /// with this `Proxy-Authorization` line when the proxy has credentials.
    pub absolute_form: Option<Option<String>>,
    /// The address connected to (`None` through a proxy).
    pub ip: Option<IpAddr>,
    /// What the TLS handshake negotiated (`https` only).
    pub tls: Option<Arc<tls::Session>>,
    /// Why the certificate would have been refused, when
    /// `--accept-invalid-certs` accepted it.
    pub accepted_invalid: Option<Arc<str>>,
}

impl fmt::Debug for Conn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Conn")
            .field("route", &self.route)
            .field("ip", &self.ip)
            .finish()
    }
}

impl Connector {
    /// Opens a connection for `route` (TCP, through the proxy when one
    /// applies, then TLS for `https`); the TCP part within the connect
    /// timeout, the whole within `deadline`.
    pub async fn open(&self, route: &Route, deadline: Instant) -> Result<Conn, OpenError> {
        let proxy = self.proxy.as_ref().filter(|p| !p.bypasses(&route.host));
        let Some(proxy) = proxy else {
            let ips = self.resolve(&route.host).await.map_err(OpenError::Dns)?;
            let allowed = |ip| self.private_allowed(&route.host, ip);
            let (tcp, ip) = self.connect_any(&ips, route.port, &allowed).await?;
            return self.finish(route, tcp, Some(ip), None, deadline).await;
        };
        // Looked up only when a private address could be refused (the
        // crawl's `allow_private` off, or a rule setting it); a name this
        // machine cannot resolve is left to the proxy: behind a proxy,
        // often only the proxy can resolve outside names.
        let may_refuse =
            !self.allow_private || self.host_rules.sets(common::rules::Key::AllowPrivate);
        if may_refuse
            && let Ok(ips) = self.resolve(&route.host).await
            && let Some(ip) =
                (ips.iter()).find(|ip| is_private(**ip) && !self.private_allowed(&route.host, **ip))
        {
            return Err(OpenError::Private(PrivateAddress(*ip)));
        }
        // The proxy's address is the operator's choice: not checked.
        let ips = self.resolve(&proxy.host).await.map_err(OpenError::Dns)?;
        let (mut tcp, _) = self.connect_any(&ips, proxy.port, &|_| true).await?;
        if !route.https {
            let auth = proxy.authorization();
            return self.finish(route, tcp, None, Some(auth), deadline).await;
        }
        let connect_by = Instant::now() + self.connect_timeout;
        tokio::time::timeout_at(
            connect_by.min(deadline),
            self.tunnel(&mut tcp, route, proxy),
        )
        .await
        .map_err(|_| OpenError::Timeout)??;
        self.finish(route, tcp, None, None, deadline).await
    }

    /// The connection over `tcp`: TLS for `https`, within `deadline`.
    async fn finish(
        &self,
        route: &Route,
        tcp: TcpStream,
        ip: Option<IpAddr>,
        absolute_form: Option<Option<String>>,
        deadline: Instant,
    ) -> Result<Conn, OpenError> {
        let mut conn = Conn {
            stream: Stream::Plain(tcp),
            route: route.clone(),
            absolute_form,
            ip,
            tls: None,
            accepted_invalid: None,
        };
        if route.https {
            let Stream::Plain(tcp) = conn.stream else {
                unreachable!("a new connection is plain TCP")
            };
            let done =
                tokio::time::timeout_at(deadline, tls::handshake(&self.trust, &route.host, tcp))
                    .await
                    .map_err(|_| OpenError::Timeout)?
                    .map_err(OpenError::Tls)?;
            conn.stream = Stream::Tls(Box::new(done.stream));
            conn.tls = done.session;
            conn.accepted_invalid = done.accepted_invalid;
        }
        Ok(conn)
    }

    /// True if `host`, reached at the private address `ip`, may be
    /// connected to: the `allow_private` of the host rules that match the
    /// host or the address (the most specific), else the crawl's.
    fn private_allowed(&self, host: &str, ip: IpAddr) -> bool {
        if !self.host_rules.sets(common::rules::Key::AllowPrivate) {
            return self.allow_private;
        }
        (self.host_rules.for_host(host, Some(ip)))
            .allow_private()
            .unwrap_or(self.allow_private)
    }

    /// The addresses of `host` (the resolver waits at most its timeout).
    async fn resolve(&self, host: &str) -> Answer {
        self.dns.lookup_async(host).await
    }

    /// Connects to the first of `ips` (at `port`) that answers within the
    /// connect timeout, refusing private addresses unless `allow_private`
    /// says yes to them; returns the connection and the address connected
    /// to.
    async fn connect_any(
        &self,
        ips: &[IpAddr],
        port: u16,
        allow_private: &(dyn Fn(IpAddr) -> bool + Sync),
    ) -> Result<(TcpStream, IpAddr), OpenError> {
        let until = Instant::now() + self.connect_timeout;
        let mut last = None;
        for &ip in ips.iter().take(16) {
            if is_private(ip) && !allow_private(ip) {
                last = Some(OpenError::Private(PrivateAddress(ip)));
                continue;
            }
            let tcp =
                match tokio::time::timeout_at(until, TcpStream::connect(SocketAddr::new(ip, port)))
                    .await
                {
                    Err(_) => return Err(OpenError::Timeout),
                    Ok(Err(e)) => {
                        last = Some(OpenError::Io(e));
                        continue;
                    }
                    Ok(Ok(tcp)) => tcp,
                };
            // Check the connected peer too, not only the address we asked for.
            let peer = tcp.peer_addr().map(|a| a.ip()).unwrap_or(ip);
            if is_private(peer) && !allow_private(peer) {
                return Err(OpenError::Private(PrivateAddress(peer)));
            }
            tcp.set_nodelay(true).map_err(OpenError::Io)?;
            return Ok((tcp, peer));
        }
        Err(last.unwrap_or_else(|| {
            OpenError::Io(io::Error::new(
                io::ErrorKind::NotFound,
                "the name has no address",
            ))
        }))
    }

    /// Asks `proxy` (over `tcp`) for a tunnel to `route`.
    async fn tunnel(
        &self,
        tcp: &mut TcpStream,
        route: &Route,
        proxy: &Proxy,
    ) -> Result<(), OpenError> {
        let authority = authority(&route.host, route.port);
        let mut ask = format!(
            "CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\nUser-Agent: {}\r\n\
             Proxy-Connection: Keep-Alive\r\n",
            self.user_agent
        );
        if let Some(auth) = proxy.authorization() {
            ask.push_str(&auth);
        }
        ask.push_str("\r\n");
        tcp.write_all(ask.as_bytes()).await.map_err(OpenError::Io)?;
        // Read byte by byte: nothing past the proxy's answer may be taken
        // from what the server sends through the tunnel.
        let mut head = Vec::with_capacity(256);
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            let n = tokio::io::AsyncReadExt::read(tcp, &mut byte)
                .await
                .map_err(OpenError::Io)?;
            if n == 0 || head.len() > 16 * 1024 {
                return Err(OpenError::Proxy("the proxy did not answer CONNECT".into()));
            }
            head.push(byte[0]);
        }
        let line = head.split(|&b| b == b'\n').next().unwrap_or(b"");
        let line = String::from_utf8_lossy(line).trim().to_string();
        let status = line.split_whitespace().nth(1).unwrap_or("");
        if !status.starts_with('2') {
            return Err(OpenError::Proxy(format!(
                "the proxy refused the tunnel: {line}"
            )));
        }
        Ok(())
    }
}

/// `host:port`, with brackets around an IPv6 address.
pub fn authority(host: &str, port: u16) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// The bytes of a connection: plain TCP, or TLS over it.
pub enum Stream {
    /// Plain TCP (or a proxy's tunnel, for `http`).
    Plain(TcpStream),
    /// TLS over TCP or a proxy's tunnel.
    Tls(Box<TlsStream<TcpStream>>),
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_flush(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authorities_bracket_ipv6_addresses() {
        assert_eq!(authority("a.test", 80), "a.test:80");
        assert_eq!(authority("::1", 8080), "[::1]:8080");
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
