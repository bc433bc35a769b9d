//! HTTPS in front of a [`Server`]: a certificate authority made at test
//! time ([`TestCa`]) and a TLS front ([`TlsFront`]) that listens on the
//! addresses of a running server's hosts, on a port of its own, completes
//! the TLS handshake with the certificate chosen for each host, and relays
//! the decrypted bytes to that host's plain listener.
//!
//! The plain server is untouched: its handlers answer, its request log
//! records the requests (politeness checks work as over plain HTTP), and its
//! hosts file maps the names to the addresses the front listens on too.
//!
//! ```
//! use testkit::server::tls::{TestCa, TlsFront};
//! use testkit::server::{Response, Routes, Server};
//!
//! let server = Server::builder()
//!     .host("a.test", Routes::new().route("/", Response::html("hello")))
//!     .start()
//!     .unwrap();
//! let ca = TestCa::new("test CA");
//! let front = TlsFront::start(&server, [("a.test", ca.leaf(&["a.test"]))]).unwrap();
//! assert!(front.url("a.test", "/").starts_with("https://a.test:"));
//! assert!(ca.pem().starts_with("-----BEGIN CERTIFICATE-----"));
//! ```

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rustls::ServerConfig;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

use super::{Server, bind_all, lock};

/// How long one `poll` waits before looking at the stop flag again.
const POLL_MS: libc::c_int = 200;
/// A client that has not finished its handshake by then is dropped.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long dropping a front waits for its connection threads.
const DROP_WAIT: Duration = Duration::from_secs(5);

/// A certificate authority generated at test time (a fresh key each time,
/// so no machine trusts it).
pub struct TestCa {
    issuer: Issuer<'static, KeyPair>,
    pem: String,
}

impl TestCa {
    /// A new CA whose certificate has `name` as its common name.
    pub fn new(name: &str) -> TestCa {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("no names");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let key = KeyPair::generate().expect("generate the CA key");
        let cert = params.self_signed(&key).expect("self-sign the CA");
        TestCa {
            pem: cert.pem(),
            issuer: Issuer::new(params, key),
        }
    }

    /// The CA certificate in PEM (what `--ca-file` takes).
    pub fn pem(&self) -> String {
        self.pem.clone()
    }

    /// Writes [`TestCa::pem`] to `path`.
    pub fn write_pem(&self, path: &Path) -> io::Result<()> {
        std::fs::write(path, self.pem())
    }

    /// A server certificate for `names`, signed by this CA, valid from
    /// yesterday for a year.
    pub fn leaf(&self, names: &[&str]) -> ServerCert {
        let day = Duration::from_secs(86_400);
        let now = SystemTime::now();
        self.leaf_between(names, now - day, now + 365 * day)
    }

    /// A server certificate for `names`, signed by this CA, that expired
    /// (valid through 2020 only).
    pub fn expired_leaf(&self, names: &[&str]) -> ServerCert {
        let at = |secs| UNIX_EPOCH + Duration::from_secs(secs);
        // 2020-01-01 and 2021-01-01, 00:00 UTC.
        self.leaf_between(names, at(1_577_836_800), at(1_609_459_200))
    }

    fn leaf_between(&self, names: &[&str], from: SystemTime, until: SystemTime) -> ServerCert {
        let mut params = leaf_params(names);
        params.not_before = from.into();
        params.not_after = until.into();
        let key = KeyPair::generate().expect("generate a server key");
        let cert = params
            .signed_by(&key, &self.issuer)
            .expect("sign a server certificate");
        ServerCert {
            chain: vec![cert.der().clone()],
            key: Arc::new(key.serialize_der()),
        }
    }
}

/// A self-signed server certificate for `names` (no CA vouches for it).
pub fn self_signed(names: &[&str]) -> ServerCert {
    let params = leaf_params(names);
    let key = KeyPair::generate().expect("generate a server key");
    let cert = params.self_signed(&key).expect("self-sign");
    ServerCert {
        chain: vec![cert.der().clone()],
        key: Arc::new(key.serialize_der()),
    }
}

fn leaf_params(names: &[&str]) -> CertificateParams {
    let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    let mut params = CertificateParams::new(names.clone()).expect("valid host names");
    if let Some(first) = names.first() {
        params.distinguished_name.push(DnType::CommonName, first);
    }
    params.use_authority_key_identifier_extension = true;
    params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    params
}

/// A server certificate chain and its private key.
#[derive(Clone)]
pub struct ServerCert {
    chain: Vec<CertificateDer<'static>>,
    /// PKCS#8 DER.
    key: Arc<Vec<u8>>,
}

impl std::fmt::Debug for ServerCert {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerCert")
            .field("chain", &self.chain.len())
            .finish_non_exhaustive()
    }
}

impl ServerCert {
    fn server_config(&self) -> io::Result<Arc<ServerConfig>> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(self.key.as_slice().to_vec()));
        ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .and_then(|b| {
                b.with_no_client_auth()
                    .with_single_cert(self.chain.clone(), key)
            })
            .map(Arc::new)
            .map_err(io::Error::other)
    }
}

/// Handshakes a host's TLS listener saw.
#[derive(Debug, Default)]
struct Counts {
    done: AtomicU64,
    failed: AtomicU64,
}

struct FrontHost {
    name: String,
    /// The TLS listener's address.
    addr: SocketAddr,
    /// The plain host's address, where decrypted bytes go.
    backend: SocketAddr,
    config: Arc<ServerConfig>,
    counts: Counts,
}

struct FrontShared {
    hosts: Vec<FrontHost>,
    stop: AtomicBool,
    /// Sockets of live connections (both sides), shut down on drop.
    sockets: Mutex<HashMap<u64, Vec<TcpStream>>>,
    next: AtomicU64,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

/// TLS listeners in front of some hosts of a [`Server`]; dropping it stops
/// them (the server itself goes on).
pub struct TlsFront {
    shared: Arc<FrontShared>,
    port: u16,
    accept: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for TlsFront {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TlsFront")
            .field("port", &self.port)
            .finish_non_exhaustive()
    }
}

impl TlsFront {
    /// Listens on the address of each named host of `server` (all on one
    /// new port), presenting that host's certificate.
    pub fn start<'a>(
        server: &Server,
        certs: impl IntoIterator<Item = (&'a str, ServerCert)>,
    ) -> io::Result<TlsFront> {
        let certs: Vec<(&str, ServerCert)> = certs.into_iter().collect();
        let ips: Vec<Ipv4Addr> = certs
            .iter()
            .map(|(name, _)| match server.addr(name).ip() {
                std::net::IpAddr::V4(v4) => v4,
                std::net::IpAddr::V6(_) => unreachable!("test hosts are IPv4"),
            })
            .collect();
        let (listeners, port) = bind_all(&ips, None)?;
        let mut hosts = Vec::with_capacity(certs.len());
        for ((name, cert), ip) in certs.iter().zip(&ips) {
            hosts.push(FrontHost {
                name: name.to_string(),
                addr: SocketAddr::from((*ip, port)),
                backend: server.addr(name),
                config: cert.server_config()?,
                counts: Counts::default(),
            });
        }
        let shared = Arc::new(FrontShared {
            hosts,
            stop: AtomicBool::new(false),
            sockets: Mutex::new(HashMap::new()),
            next: AtomicU64::new(0),
            threads: Mutex::new(Vec::new()),
        });
        for l in &listeners {
            l.set_nonblocking(true)?;
        }
        let s = Arc::clone(&shared);
        let accept = std::thread::Builder::new()
            .name("testkit-tls-accept".into())
            .spawn(move || accept_loop(listeners, s))?;
        Ok(TlsFront {
            shared,
            port,
            accept: Some(accept),
        })
    }

    /// The port every TLS listener uses.
    pub fn port(&self) -> u16 {
        self.port
    }

    fn host(&self, name: &str) -> &FrontHost {
        self.shared
            .hosts
            .iter()
            .find(|h| h.name == name)
            .unwrap_or_else(|| panic!("no TLS host `{name}` on this front"))
    }

    /// `https://NAME:PORT` + `path`.
    pub fn url(&self, name: &str, path: &str) -> String {
        let h = self.host(name);
        format!("https://{}:{}{}", h.name, self.port, path)
    }

    /// The address the TLS listener of `name` is on.
    pub fn addr(&self, name: &str) -> SocketAddr {
        self.host(name).addr
    }

    /// Handshakes completed with host `name`.
    pub fn handshakes(&self, name: &str) -> u64 {
        self.host(name).counts.done.load(Ordering::SeqCst)
    }

    /// Handshakes that failed (the client refused the certificate, or
    /// spoke no TLS) with host `name`.
    pub fn failed_handshakes(&self, name: &str) -> u64 {
        self.host(name).counts.failed.load(Ordering::SeqCst)
    }
}

impl Drop for TlsFront {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(a) = self.accept.take() {
            let _ = a.join();
        }
        for socks in lock(&self.shared.sockets).values() {
            for s in socks {
                let _ = s.shutdown(Shutdown::Both);
            }
        }
        let deadline = Instant::now() + DROP_WAIT;
        let threads = std::mem::take(&mut *lock(&self.shared.threads));
        for t in threads {
            // Bounded: every socket is shut down, and each thread polls the
            // stop flag at least every POLL_MS.
            while !t.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            if t.is_finished() {
                let _ = t.join();
            }
        }
    }
}

/// Waits on every listener at once and starts a thread per connection.
fn accept_loop(listeners: Vec<TcpListener>, shared: Arc<FrontShared>) {
    let mut fds: Vec<libc::pollfd> = listeners
        .iter()
        .map(|l| libc::pollfd {
            fd: l.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    while !shared.stop.load(Ordering::SeqCst) {
        // SAFETY: `fds` is a valid, exclusively borrowed array of `pollfd`
        // whose length is passed alongside; its descriptors are owned by
        // `listeners`, which outlives the call.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, POLL_MS) };
        if n <= 0 {
            continue;
        }
        for (host, (listener, p)) in listeners.iter().zip(fds.iter_mut()).enumerate() {
            if p.revents == 0 {
                continue;
            }
            p.revents = 0;
            // Bounded: a listener's backlog is finite.
            for _ in 0..1024 {
                match listener.accept() {
                    Ok((stream, _)) => start(&shared, host, stream),
                    Err(_) => break,
                }
            }
        }
    }
}

fn start(shared: &Arc<FrontShared>, host: usize, stream: TcpStream) {
    let id = shared.next.fetch_add(1, Ordering::SeqCst);
    if stream.set_nonblocking(false).is_err() {
        return;
    }
    if let Ok(clone) = stream.try_clone() {
        lock(&shared.sockets).insert(id, vec![clone]);
    }
    let s = Arc::clone(shared);
    let spawned = std::thread::Builder::new()
        .name("testkit-tls-conn".into())
        .stack_size(256 * 1024)
        .spawn(move || {
            relay(&s, host, id, stream);
            lock(&s.sockets).remove(&id);
        });
    match spawned {
        Ok(t) => lock(&shared.threads).push(t),
        Err(_) => {
            lock(&shared.sockets).remove(&id);
        }
    }
}

/// One connection: the handshake, then bytes both ways until both sides
/// are done.
fn relay(shared: &FrontShared, host: usize, id: u64, mut tcp: TcpStream) {
    let h = &shared.hosts[host];
    let Ok(mut tls) = rustls::ServerConnection::new(Arc::clone(&h.config)) else {
        return;
    };
    let _ = tcp.set_read_timeout(Some(HANDSHAKE_TIMEOUT));
    while tls.is_handshaking() {
        if let Err(_e) = tls.complete_io(&mut tcp) {
            // Send our alert, if any, then give up on the connection.
            let _ = tls.write_tls(&mut tcp);
            h.counts.failed.fetch_add(1, Ordering::SeqCst);
            return;
        }
    }
    h.counts.done.fetch_add(1, Ordering::SeqCst);
    let _ = tcp.set_read_timeout(None);
    let Ok(mut backend) = TcpStream::connect(h.backend) else {
        return;
    };
    let _ = backend.set_nodelay(true);
    let mut buf = vec![0u8; 64 * 1024];
    let _ = tcp.set_nodelay(true);
    if let Ok(clone) = backend.try_clone()
        && let Some(socks) = lock(&shared.sockets).get_mut(&id)
    {
        socks.push(clone);
    }
    // The first request may have come with the end of the handshake.
    if pass_plaintext(&mut tls, &mut backend, &mut buf).is_err() {
        return;
    }
    let mut client_done = false;
    let mut backend_done = false;
    while !(client_done && backend_done || shared.stop.load(Ordering::SeqCst)) {
        if flush(&mut tls, &mut tcp).is_err() {
            return;
        }
        let mut fds = [
            libc::pollfd {
                fd: if client_done { -1 } else { tcp.as_raw_fd() },
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: if backend_done {
                    -1
                } else {
                    backend.as_raw_fd()
                },
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: a valid array of two `pollfd` (negative descriptors are
        // ignored by poll); both sockets outlive the call.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, POLL_MS) };
        if n <= 0 {
            continue;
        }
        if fds[0].revents != 0 {
            match tls.read_tls(&mut tcp) {
                Ok(0) | Err(_) => {
                    client_done = true;
                    let _ = backend.shutdown(Shutdown::Write);
                }
                Ok(_) => {
                    let state = match tls.process_new_packets() {
                        Ok(state) => state,
                        Err(_) => {
                            let _ = flush(&mut tls, &mut tcp);
                            return;
                        }
                    };
                    if pass_plaintext(&mut tls, &mut backend, &mut buf).is_err() {
                        return;
                    }
                    if state.peer_has_closed() {
                        client_done = true;
                        let _ = backend.shutdown(Shutdown::Write);
                    }
                }
            }
        }
        if fds[1].revents != 0 {
            match backend.read(&mut buf) {
                Ok(0) | Err(_) => {
                    backend_done = true;
                    tls.send_close_notify();
                    let _ = flush(&mut tls, &mut tcp);
                    let _ = tcp.shutdown(Shutdown::Write);
                }
                Ok(n) => {
                    if tls.writer().write_all(&buf[..n]).is_err() {
                        return;
                    }
                }
            }
        }
    }
    let _ = flush(&mut tls, &mut tcp);
}

/// Passes the decrypted bytes waiting in `tls` on to `backend`.
fn pass_plaintext(
    tls: &mut rustls::ServerConnection,
    backend: &mut TcpStream,
    buf: &mut [u8],
) -> io::Result<()> {
    loop {
        match tls.reader().read(buf) {
            Ok(0) => return Ok(()),
            Ok(n) => backend.write_all(&buf[..n])?,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
            Err(e) => return Err(e),
        }
    }
}

/// Writes every TLS record waiting to go out.
fn flush(tls: &mut rustls::ServerConnection, tcp: &mut TcpStream) -> io::Result<()> {
    while tls.wants_write() {
        tls.write_tls(tcp)?;
    }
    Ok(())
}
