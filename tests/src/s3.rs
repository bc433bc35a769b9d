//! An S3 server on loopback for the WARC store's tests: `moto_server`
//! (installed into `.venv/` by `scripts/test.sh`), started on a free port
//! and stopped by its pid when dropped, and [`FaultProxy`], a small HTTP
//! relay in front of it that can answer `503 Slow Down`, or drop every
//! connection as a store that is down would, for a while or for good.
//!
//! The command is the `MOTO_SERVER` environment variable, else
//! `.venv/bin/moto_server` at the repository root, else `moto_server` on
//! `PATH`.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The access key the tests give (moto takes any).
pub const ACCESS_KEY: &str = "AKIATESTKEY0000000000";
/// The secret key the tests give: a test greps the crawl for it.
pub const SECRET_KEY: &str = "s3cr3t-Test-Key-That-Must-Never-Appear-0123";

/// A running `moto_server`.
pub struct S3Server {
    child: Child,
    addr: SocketAddr,
}

impl S3Server {
    /// Starts moto on a free loopback port and waits until it answers (at
    /// most 30 s). Panics with instructions when moto is not installed.
    pub fn start() -> S3Server {
        let cmd = crate::warcio::python_tool("moto_server", "MOTO_SERVER");
        let port = free_port();
        let child = Command::new(cmd)
            .args(["-H", "127.0.0.1", "-p", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("cannot start moto_server");
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        let mut server = S3Server { child, addr };
        let deadline = Instant::now() + Duration::from_secs(30);
        while request(addr, "GET", "/", b"").is_err() {
            if Instant::now() > deadline {
                let _ = server.child.kill();
                panic!("moto_server did not answer on {addr} within 30 s");
            }
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!("moto_server exited at start: {status}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    }

    /// `127.0.0.1:PORT`.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Creates a bucket.
    pub fn create_bucket(&self, name: &str) {
        let (status, body) = request(self.addr, "PUT", &format!("/{name}"), b"").unwrap();
        assert_eq!(
            status,
            200,
            "create bucket {name}: {}",
            String::from_utf8_lossy(&body)
        );
    }

    /// The keys in `bucket` under `prefix`, sorted.
    pub fn keys(&self, bucket: &str, prefix: &str) -> Vec<String> {
        let (status, body) = request(
            self.addr,
            "GET",
            &format!("/{bucket}?list-type=2&max-keys=1000&prefix={prefix}"),
            b"",
        )
        .unwrap();
        assert_eq!(status, 200);
        let text = String::from_utf8_lossy(&body);
        let mut keys: Vec<String> = text
            .split("<Key>")
            .skip(1)
            .filter_map(|s| s.split("</Key>").next())
            .map(str::to_string)
            .collect();
        keys.sort();
        keys
    }

    /// The bytes of an object, read through the WARC store's client
    /// (moto refuses unsigned reads of objects).
    pub fn get(&self, bucket: &str, key: &str) -> Vec<u8> {
        let env = S3Server::env(self.addr)
            .into_iter()
            .map(|(k, v)| (k.to_string(), v));
        let store = common::store::WarcStore::open_with_env(&format!("s3://{bucket}"), env)
            .expect("a client for moto");
        let mut out = Vec::new();
        store
            .read_object(key, &mut out)
            .unwrap_or_else(|e| panic!("GET {bucket}/{key}: {e}"));
        out
    }

    /// Puts an object (overwriting), as another writer would, with boto3
    /// (installed with moto).
    pub fn put(&self, bucket: &str, key: &str, bytes: &[u8]) {
        let python = crate::warcio::python_tool("python", "MOTO_PYTHON");
        let script = format!(
            "import boto3, sys\n\
             s3 = boto3.client('s3', endpoint_url='http://{}', aws_access_key_id='{ACCESS_KEY}', \
             aws_secret_access_key='{SECRET_KEY}', region_name='us-east-1')\n\
             s3.put_object(Bucket='{bucket}', Key='{key}', Body=sys.stdin.buffer.read())\n",
            self.addr
        );
        let mut child = Command::new(python)
            .args(["-c", &script])
            .stdin(Stdio::piped())
            .spawn()
            .expect("cannot run python");
        child.stdin.take().unwrap().write_all(bytes).unwrap();
        let status = child.wait().unwrap();
        assert!(status.success(), "PUT {bucket}/{key} with boto3: {status}");
    }

    /// The environment a program needs to reach the store at `endpoint`
    /// (this server, or a proxy in front of it).
    pub fn env(endpoint: SocketAddr) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ACCESS_KEY_ID", ACCESS_KEY.into()),
            ("AWS_SECRET_ACCESS_KEY", SECRET_KEY.into()),
            ("AWS_REGION", "us-east-1".into()),
            ("AWS_ENDPOINT_URL", format!("http://{endpoint}")),
            ("AWS_ALLOW_HTTP", "true".into()),
        ]
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A free port on 127.0.0.1 (bound, then released).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("no free port")
}

/// One HTTP/1.1 request without signature (moto takes them); returns the
/// status and the body.
pub fn request(
    addr: SocketAddr,
    method: &str,
    target: &str,
    body: &[u8],
) -> io::Result<(u16, Vec<u8>)> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(2))?;
    s.set_read_timeout(Some(Duration::from_secs(20)))?;
    write!(
        s,
        "{method} {target} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    s.write_all(body)?;
    let mut reader = BufReader::new(s);
    let (status, length) = read_head(&mut reader, &mut Vec::new())?;
    let mut out = Vec::new();
    match length {
        Some(n) => {
            out.resize(n, 0);
            reader.read_exact(&mut out)?;
        }
        None => {
            reader.read_to_end(&mut out)?;
        }
    }
    Ok((status, out))
}

/// Reads an HTTP head into `head` (raw); returns the status (0 for a
/// request) and the Content-Length.
fn read_head(reader: &mut impl BufRead, head: &mut Vec<u8>) -> io::Result<(u16, Option<usize>)> {
    let mut length = None;
    let mut status = 0;
    let mut first = true;
    loop {
        let mut line = Vec::new();
        if reader.read_until(b'\n', &mut line)? == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "head cut"));
        }
        head.extend_from_slice(&line);
        let text = String::from_utf8_lossy(&line);
        if first {
            first = false;
            status = text
                .split(' ')
                .nth(1)
                .and_then(|s| s.trim().parse().ok())
                .unwrap_or(0);
            continue;
        }
        if text.trim().is_empty() {
            return Ok((status, length));
        }
        if let Some((k, v)) = text.split_once(':')
            && k.trim().eq_ignore_ascii_case("content-length")
        {
            length = v.trim().parse().ok();
        }
    }
}

/// What [`FaultProxy`] does with the next request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Relays it.
    None,
    /// Answers `503 Slow Down` without relaying.
    SlowDown,
    /// Drops the connection, as a store that is down.
    Down,
    /// Holds the request unanswered while the fault lasts (at most 60 s),
    /// then drops it: an upload in flight, for a test to kill its sender.
    Hold,
}

/// An HTTP relay on a free loopback port in front of an S3 server, one
/// request per connection, with faults. Dropping it stops it.
pub struct FaultProxy {
    addr: SocketAddr,
    state: Arc<ProxyState>,
}

struct ProxyState {
    fault: Mutex<Fault>,
    /// Requests to answer with 503 before relaying again.
    slow_downs: AtomicUsize,
    /// After this many relayed PUT requests, go [`Fault::Down`].
    down_after_puts: AtomicUsize,
    /// Answer server-side copies (`x-amz-copy-source`) with `501 Not
    /// Implemented`, as a store without `UploadPartCopy`.
    refuse_copies: AtomicBool,
    puts: AtomicUsize,
    /// Requests seen, and those answered with a fault.
    seen: AtomicU64,
    faulted: AtomicU64,
    stop: AtomicBool,
}

impl FaultProxy {
    /// Starts a relay to `upstream`.
    pub fn start(upstream: SocketAddr) -> FaultProxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("cannot bind the proxy");
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(ProxyState {
            fault: Mutex::new(Fault::None),
            slow_downs: AtomicUsize::new(0),
            down_after_puts: AtomicUsize::new(usize::MAX),
            refuse_copies: AtomicBool::new(false),
            puts: AtomicUsize::new(0),
            seen: AtomicU64::new(0),
            faulted: AtomicU64::new(0),
            stop: AtomicBool::new(false),
        });
        let st = state.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if st.stop.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let st = st.clone();
                std::thread::spawn(move || {
                    let _ = relay(conn, upstream, &st);
                });
            }
        });
        FaultProxy { addr, state }
    }

    /// `127.0.0.1:PORT`.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Sets what happens to every request from now on.
    pub fn set(&self, fault: Fault) {
        *self.state.fault.lock().unwrap() = fault;
    }

    /// Answers the next `n` requests with 503.
    pub fn slow_down(&self, n: usize) {
        self.state.slow_downs.store(n, Ordering::SeqCst);
    }

    /// Goes down (drops every connection) once `n` PUT requests were
    /// relayed.
    pub fn down_after_puts(&self, n: usize) {
        self.state.down_after_puts.store(n, Ordering::SeqCst);
    }

    /// From now on answers every server-side copy with `501 Not
    /// Implemented`, as a store that has no `UploadPartCopy`.
    pub fn refuse_copies(&self) {
        self.state.refuse_copies.store(true, Ordering::SeqCst);
    }

    /// PUT requests relayed so far.
    pub fn puts(&self) -> usize {
        self.state.puts.load(Ordering::SeqCst)
    }

    /// Requests received, and those answered with a fault.
    pub fn counts(&self) -> (u64, u64) {
        (
            self.state.seen.load(Ordering::SeqCst),
            self.state.faulted.load(Ordering::SeqCst),
        )
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.state.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
    }
}

/// Answers with an S3 error document (a fault, counted), and closes.
fn answer_error(
    mut conn: TcpStream,
    st: &ProxyState,
    status: &str,
    code: &str,
    message: &str,
) -> io::Result<()> {
    st.faulted.fetch_add(1, Ordering::SeqCst);
    let msg = format!(
        "<?xml version=\"1.0\"?><Error><Code>{code}</Code><Message>{message}</Message></Error>"
    );
    write!(
        conn,
        "HTTP/1.1 {status}\r\nContent-Type: application/xml\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{msg}",
        msg.len()
    )?;
    conn.shutdown(Shutdown::Write)
}

fn relay(conn: TcpStream, upstream: SocketAddr, st: &ProxyState) -> io::Result<()> {
    conn.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut head = Vec::new();
    let (_, length) = read_head(&mut reader, &mut head)?;
    st.seen.fetch_add(1, Ordering::SeqCst);
    let mut conn = conn;
    let fault = *st.fault.lock().unwrap();
    if fault == Fault::Hold {
        st.faulted.fetch_add(1, Ordering::SeqCst);
        let deadline = Instant::now() + Duration::from_secs(60);
        while *st.fault.lock().unwrap() == Fault::Hold && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        return conn.shutdown(Shutdown::Both);
    }
    if fault == Fault::Down {
        st.faulted.fetch_add(1, Ordering::SeqCst);
        return conn.shutdown(Shutdown::Both);
    }
    let mut body = vec![0; length.unwrap_or(0)];
    reader.read_exact(&mut body)?;
    if st
        .slow_downs
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok()
    {
        return answer_error(
            conn,
            st,
            "503 Slow Down",
            "SlowDown",
            "Please reduce your request rate.",
        );
    }
    if st.refuse_copies.load(Ordering::SeqCst)
        && String::from_utf8_lossy(&head)
            .to_ascii_lowercase()
            .contains("\r\nx-amz-copy-source:")
    {
        return answer_error(
            conn,
            st,
            "501 Not Implemented",
            "NotImplemented",
            "A header you provided implies functionality that is not implemented.",
        );
    }
    let is_put = head.starts_with(b"PUT ");
    // One request per connection: ask the server to close after it.
    let text = String::from_utf8_lossy(&head).into_owned();
    let mut out = String::new();
    for line in text.split_inclusive("\r\n") {
        if !line.to_ascii_lowercase().starts_with("connection:") {
            out.push_str(line);
        }
    }
    let out = out.replacen("\r\n\r\n", "\r\nConnection: close\r\n\r\n", 1);
    let mut up = TcpStream::connect(upstream)?;
    up.write_all(out.as_bytes())?;
    up.write_all(&body)?;
    let mut answer = Vec::new();
    up.read_to_end(&mut answer)?;
    if is_put {
        let n = st.puts.fetch_add(1, Ordering::SeqCst) + 1;
        if n >= st.down_after_puts.load(Ordering::SeqCst) {
            *st.fault.lock().unwrap() = Fault::Down;
        }
    }
    conn.write_all(&answer)?;
    conn.shutdown(Shutdown::Write)
}
