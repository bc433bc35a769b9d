//! A small HTTP proxy on loopback, the way corporate proxies work: it
//! serves `CONNECT host:port` by opening a tunnel, and a request in
//! absolute form (`GET http://host:port/path HTTP/1.1`) by sending it on to
//! the server in origin form (with `Connection: close`) and the answer back
//! as it came (but for a `Connection: close` of its own); it logs every
//! request it gets. Names are resolved from a
//! hosts table given at start (the proxy, not its client, resolves the
//! target). Dropping it stops it.
//!
//! ```
//! use testkit::proxy::ProxyServer;
//!
//! let proxy = ProxyServer::start("127.0.0.2 a.test\n").unwrap();
//! assert!(proxy.url().starts_with("http://127.0.0.1:"));
//! assert!(proxy.requests().is_empty());
//! ```
//!
//! A request for a name it does not know gets `502`; a request in origin
//! form (`GET /path`) gets `400`, as it would from a real proxy.

use std::collections::HashMap;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// Every environment variable that names a proxy or the names that bypass
/// it (lower- and upper-case, as curl reads them).
pub const PROXY_ENV: [&str; 8] = [
    "all_proxy",
    "ALL_PROXY",
    "https_proxy",
    "HTTPS_PROXY",
    "http_proxy",
    "HTTP_PROXY",
    "no_proxy",
    "NO_PROXY",
];

/// Removes [`PROXY_ENV`] from `cmd`'s environment, so that a proxy of the
/// machine running the tests never takes their loopback requests.
pub fn clear_proxy_env(cmd: &mut std::process::Command) -> &mut std::process::Command {
    for v in PROXY_ENV {
        cmd.env_remove(v);
    }
    cmd
}

/// A request the proxy got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyRequest {
    /// The request line (`CONNECT a.test:80 HTTP/1.1`).
    pub line: String,
    /// The `Proxy-Authorization` header, if sent.
    pub authorization: Option<String>,
    /// The status the proxy answered with.
    pub status: u16,
}

/// A running proxy.
#[derive(Debug)]
pub struct ProxyServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

#[derive(Debug)]
struct Shared {
    hosts: HashMap<String, IpAddr>,
    log: Mutex<Vec<ProxyRequest>>,
    stop: AtomicBool,
    /// Open client connections, to shut down when stopping.
    open: Mutex<Vec<TcpStream>>,
}

/// Longest a tunnel stays open without traffic.
const IDLE: Duration = Duration::from_secs(20);

impl ProxyServer {
    /// Starts a proxy on `127.0.0.1:0` that resolves names with `hosts`
    /// (`IP NAME...` lines, the /etc/hosts format).
    pub fn start(hosts: &str) -> io::Result<ProxyServer> {
        let mut map = HashMap::new();
        for line in hosts.lines() {
            let mut f = line.split_whitespace();
            let Some(ip) = f.next().and_then(|ip| ip.parse().ok()) else {
                continue;
            };
            for name in f {
                map.insert(name.to_ascii_lowercase(), ip);
            }
        }
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            hosts: map,
            log: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
            open: Mutex::new(Vec::new()),
        });
        let accept = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("test-proxy".into())
                .spawn(move || {
                    for conn in listener.incoming() {
                        if shared.stop.load(Ordering::SeqCst) {
                            break;
                        }
                        let Ok(conn) = conn else { continue };
                        if let Ok(c) = conn.try_clone() {
                            lock(&shared.open).push(c);
                        }
                        let shared = shared.clone();
                        std::thread::spawn(move || {
                            let _ = serve(conn, &shared);
                        });
                    }
                })?
        };
        Ok(ProxyServer {
            addr,
            shared,
            accept: Some(accept),
        })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request so far, in order.
    pub fn requests(&self) -> Vec<ProxyRequest> {
        lock(&self.shared.log).clone()
    }
}

impl Drop for ProxyServer {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(t) = self.accept.take() {
            let _ = t.join();
        }
        for c in lock(&self.shared.open).drain(..) {
            let _ = c.shutdown(Shutdown::Both);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One client connection: its request head, then a tunnel or an error.
fn serve(client: TcpStream, shared: &Shared) -> io::Result<()> {
    client.set_read_timeout(Some(IDLE))?;
    let mut reader = BufReader::new(client.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let line = line.trim_end().to_string();
    let mut authorization = None;
    // The other header lines, for a request sent on.
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h)? == 0 || h.trim_end().is_empty() {
            break;
        }
        match h.split_once(':') {
            Some((name, value)) if name.trim().eq_ignore_ascii_case("proxy-authorization") => {
                authorization = Some(value.trim().to_string());
            }
            Some((name, _))
                if name.trim().eq_ignore_ascii_case("connection")
                    || name.trim().eq_ignore_ascii_case("proxy-connection") => {}
            _ => headers.push(h.trim_end().to_string()),
        }
    }
    let mut words = line.split(' ');
    let (method, target) = (words.next().unwrap_or(""), words.next().unwrap_or(""));
    let version = words.next().unwrap_or("HTTP/1.1");
    // CONNECT host:port, or METHOD http://host:port/path.
    let (authority, path) = match target.strip_prefix("http://") {
        Some(rest) if method != "CONNECT" => match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        },
        _ if method == "CONNECT" => (target, ""),
        _ => ("", ""),
    };
    let upstream = (!authority.is_empty())
        .then(|| {
            let (host, port) = authority.rsplit_once(':').unwrap_or((authority, "80"));
            let ip = shared.hosts.get(&host.to_ascii_lowercase())?;
            let port: u16 = port.parse().ok()?;
            TcpStream::connect_timeout(&SocketAddr::new(*ip, port), Duration::from_secs(2)).ok()
        })
        .flatten();
    let status = match (&upstream, authority.is_empty()) {
        (Some(_), _) => 200,
        (None, false) => 502,
        (None, true) => 400,
    };
    lock(&shared.log).push(ProxyRequest {
        line: line.clone(),
        authorization,
        status,
    });
    let mut out = client.try_clone()?;
    let Some(upstream) = upstream else {
        write!(
            out,
            "HTTP/1.1 {status} No\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )?;
        return Ok(());
    };
    upstream.set_read_timeout(Some(IDLE))?;
    if method != "CONNECT" {
        // Sent on in origin form, for one exchange; the answer goes back as
        // it came, and the connection closes after it.
        let mut head = format!("{method} {path} {version}\r\n");
        for h in &headers {
            head.push_str(h);
            head.push_str("\r\n");
        }
        head.push_str("Connection: close\r\n\r\n");
        let mut up = upstream.try_clone()?;
        up.write_all(head.as_bytes())?;
        // The answer's head says the connection closes (a client would
        // otherwise keep it for its next request); the rest as it came.
        let mut from = BufReader::new(upstream);
        let mut status_line = String::new();
        from.read_line(&mut status_line)?;
        out.write_all(status_line.as_bytes())?;
        out.write_all(b"Connection: close\r\n")?;
        loop {
            let mut h = String::new();
            if from.read_line(&mut h)? == 0 {
                break;
            }
            let end = h.trim_end().is_empty();
            if !h.to_ascii_lowercase().starts_with("connection:") {
                out.write_all(h.as_bytes())?;
            }
            if end {
                break;
            }
        }
        out.write_all(from.buffer())?;
        let mut from = from.into_inner();
        let _ = copy(&mut from, &mut out);
        let _ = out.shutdown(Shutdown::Both);
        return Ok(());
    }
    out.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")?;
    // Bytes the client sent after the head are already in the reader's buffer.
    let early = reader.buffer().to_vec();
    let mut up_write = upstream.try_clone()?;
    up_write.write_all(&early)?;
    let down = {
        let (mut from, mut to) = (upstream.try_clone()?, client.try_clone()?);
        std::thread::spawn(move || {
            let _ = copy(&mut from, &mut to);
            let _ = to.shutdown(Shutdown::Write);
        })
    };
    let mut from = client;
    let _ = copy(&mut from, &mut up_write);
    let _ = up_write.shutdown(Shutdown::Write);
    let _ = down.join();
    Ok(())
}

/// Copies until end of stream, an error or [`IDLE`] without traffic.
fn copy(from: &mut TcpStream, to: &mut TcpStream) -> io::Result<()> {
    let mut buf = [0u8; 16 * 1024];
    loop {
        let n = from.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        to.write_all(&buf[..n])?;
    }
}
