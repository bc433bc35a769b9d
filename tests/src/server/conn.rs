//! One connection: read requests (keep-alive, pipelining), call the host's
//! handler, send the response with its behaviour, log it.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::{Body, LogEntry, Request, Response, Shared};

/// Longest request head accepted (request line and headers).
const MAX_HEAD: usize = 64 * 1024;
/// Most headers in a request.
const MAX_HEADERS: usize = 64;
/// Largest request body read.
const MAX_REQUEST_BODY: u64 = 16 * 1024 * 1024;
/// Bodies up to this size go out in the same write as the head.
const INLINE_BODY: usize = 64 * 1024;
/// Size of the pieces generated bodies are written in.
const PIECE: usize = 64 * 1024;
/// How often a held connection checks whether the server is stopping (a
/// dropped server also shuts the socket down, which ends the wait at once).
const HOLD_TICK: Duration = Duration::from_millis(500);

struct Conn {
    stream: TcpStream,
    /// Bytes read and not yet consumed are `buf[pos..len]`.
    buf: Vec<u8>,
    pos: usize,
    len: usize,
    /// The head (and small body) of the response being written.
    out: Vec<u8>,
    idle_timeout: Duration,
    /// When the last write of a response began: the earliest moment the
    /// client could have the whole response, so the request log's `end`.
    last_write: Instant,
}

/// What reading the next request gave.
enum Next {
    /// A request head of `head_len` bytes is at `buf[pos..]`, parsed into the
    /// request; it started arriving at `start`.
    Request { start: Instant, head_len: usize },
    /// The client closed the connection (or went silent) between requests.
    Closed,
    /// A request that cannot be served: answer `status` and close.
    Bad { start: Instant, status: u16 },
}

/// How sending a response ended.
struct Sent {
    /// When the last write began (see `Conn::last_write`).
    end: Instant,
    status: u16,
    body_bytes: u64,
    complete: bool,
    keep_open: bool,
}

pub(super) fn serve(shared: &Shared, host: usize, id: u64, stream: TcpStream, peer: SocketAddr) {
    let _ = stream.set_nodelay(true);
    let _ = stream.set_read_timeout(Some(shared.idle_timeout));
    let local = stream.local_addr().unwrap_or(shared.hosts[host].addr);
    let mut conn = Conn {
        stream,
        buf: vec![0; 8 * 1024],
        pos: 0,
        len: 0,
        out: Vec::with_capacity(8 * 1024),
        idle_timeout: shared.idle_timeout,
        last_write: Instant::now(),
    };
    let mut req = Request::empty(peer, local, shared.hosts[host].name.clone());
    while !shared.stopping() {
        let (start, head_len) = match conn.next_request(&mut req) {
            Next::Request { start, head_len } => (start, head_len),
            Next::Closed => return,
            Next::Bad { start, status } => {
                let sent = conn.send(shared, &Response::status(status).close(), false);
                shared.record(host, || entry(shared, host, id, &req, start, &sent, false));
                return;
            }
        };
        conn.pos += head_len;
        if let Err(status) = conn.read_body(&mut req) {
            let sent = conn.send(shared, &Response::status(status).close(), false);
            shared.record(host, || entry(shared, host, id, &req, start, &sent, true));
            return;
        }
        let handler = &shared.hosts[host].handler;
        let response =
            catch_unwind(AssertUnwindSafe(|| handler.handle(&req))).unwrap_or_else(|_| {
                Response::status(500)
                    .header("Content-Type", "text/plain; charset=utf-8")
                    .body(&b"the test handler panicked\n"[..])
            });
        let mut sent = conn.send(shared, &response, req.method() == "HEAD");
        if req.wants_close() {
            sent.keep_open = false;
        }
        shared.record(host, || entry(shared, host, id, &req, start, &sent, true));
        if !sent.keep_open {
            let _ = conn.stream.shutdown(Shutdown::Write);
            return;
        }
    }
}

fn entry(
    shared: &Shared,
    host: usize,
    connection: u64,
    req: &Request,
    start: Instant,
    sent: &Sent,
    parsed: bool,
) -> LogEntry {
    // A response that never started (never answered, client gone) ends now.
    let end = if sent.status == 0 {
        Instant::now()
    } else {
        sent.end
    };
    let header = |name: &str| {
        if parsed {
            req.header(name).map(str::to_owned)
        } else {
            None
        }
    };
    LogEntry {
        host: shared.hosts[host].name.clone(),
        method: if parsed {
            req.method().to_owned()
        } else {
            String::new()
        },
        target: if parsed {
            req.target().to_owned()
        } else {
            String::new()
        },
        host_header: header("host"),
        user_agent: header("user-agent"),
        peer: req.peer(),
        connection,
        start,
        end,
        status: sent.status,
        body_bytes: sent.body_bytes,
        complete: sent.complete,
    }
}

impl Conn {
    fn pending(&self) -> usize {
        self.len - self.pos
    }

    /// Reads until a whole request head is buffered and parses it into `req`.
    fn next_request(&mut self, req: &mut Request) -> Next {
        let mut start = (self.pending() > 0).then(Instant::now);
        loop {
            if self.pending() > 0 {
                let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
                let mut parsed = httparse::Request::new(&mut headers);
                let now = || start.unwrap_or_else(Instant::now);
                match parsed.parse(&self.buf[self.pos..self.len]) {
                    Ok(httparse::Status::Complete(head_len)) => {
                        fill(req, &parsed);
                        return Next::Request {
                            start: now(),
                            head_len,
                        };
                    }
                    Ok(httparse::Status::Partial) if self.pending() >= MAX_HEAD => {
                        return Next::Bad {
                            start: now(),
                            status: 431,
                        };
                    }
                    Ok(httparse::Status::Partial) => {}
                    Err(httparse::Error::TooManyHeaders) => {
                        return Next::Bad {
                            start: now(),
                            status: 431,
                        };
                    }
                    Err(_) => {
                        return Next::Bad {
                            start: now(),
                            status: 400,
                        };
                    }
                }
            }
            self.make_room();
            match self.stream.read(&mut self.buf[self.len..]) {
                Ok(0) => return Next::Closed,
                Ok(n) => {
                    start.get_or_insert_with(Instant::now);
                    self.len += n;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // Timeouts (idle keep-alive) and resets end the connection.
                Err(_) => return Next::Closed,
            }
        }
    }

    /// Moves unread bytes to the front and grows the buffer if it is full.
    fn make_room(&mut self) {
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.len, 0);
            self.len -= self.pos;
            self.pos = 0;
        }
        if self.len == self.buf.len() {
            let bigger = (self.buf.len() * 2).min(MAX_HEAD.max(self.len + 1));
            self.buf.resize(bigger.max(self.len + 1), 0);
        }
    }

    /// Reads the body announced by `Content-Length` into the request.
    fn read_body(&mut self, req: &mut Request) -> Result<(), u16> {
        req.body.clear();
        if req.header("transfer-encoding").is_some() {
            return Err(501);
        }
        let Some(len) = req.header("content-length") else {
            return Ok(());
        };
        let len: u64 = len.trim().parse().map_err(|_| 400u16)?;
        if len > MAX_REQUEST_BODY {
            return Err(413);
        }
        let len = len as usize;
        let buffered = self.pending().min(len);
        req.body
            .extend_from_slice(&self.buf[self.pos..self.pos + buffered]);
        self.pos += buffered;
        if req.body.len() < len {
            let start = req.body.len();
            req.body.resize(len, 0);
            self.stream
                .read_exact(&mut req.body[start..])
                .map_err(|_| 400u16)?;
        }
        Ok(())
    }

    /// Writes the response head (and small body) buffered in `out`.
    fn write_out(&mut self) -> io::Result<()> {
        self.last_write = Instant::now();
        self.stream.write_all(&self.out)
    }

    /// Sends `resp` according to its behaviour.
    fn send(&mut self, shared: &Shared, resp: &Response, head_only: bool) -> Sent {
        let mut sent = self.send_response(shared, resp, head_only);
        if sent.status != 0 {
            sent.end = self.last_write;
        }
        sent
    }

    fn send_response(&mut self, shared: &Shared, resp: &Response, head_only: bool) -> Sent {
        let b = &resp.behaviour;
        if b.never_answer {
            self.hold(shared);
            return Sent {
                end: Instant::now(),
                status: 0,
                body_bytes: 0,
                complete: false,
                keep_open: false,
            };
        }
        if !b.delay.is_zero() && self.wait_or_closed(shared, b.delay) {
            return Sent {
                end: Instant::now(),
                status: 0,
                body_bytes: 0,
                complete: false,
                keep_open: false,
            };
        }
        let no_body = head_only || resp.status < 200 || resp.status == 204 || resp.status == 304;
        let chunked = b.chunked.filter(|_| !no_body);
        let closing = b.close || b.close_after.is_some();
        self.out.clear();
        write_head(&mut self.out, resp, chunked.is_some(), closing);
        let mut sent = Sent {
            end: Instant::now(),
            status: resp.status,
            body_bytes: 0,
            complete: false,
            keep_open: !closing,
        };
        let simple = b.trickle.is_none() && chunked.is_none() && b.close_after.is_none();
        if no_body {
            sent.complete = self.write_out().is_ok();
            sent.keep_open &= sent.complete;
            return sent;
        }
        if let (true, Body::Bytes(bytes)) = (simple, &resp.body) {
            let bytes = bytes.as_slice();
            if bytes.len() <= INLINE_BODY {
                self.out.extend_from_slice(bytes);
                sent.complete = self.write_out().is_ok();
                sent.body_bytes = if sent.complete { bytes.len() as u64 } else { 0 };
                sent.keep_open &= sent.complete;
                return sent;
            }
        }
        if self.write_out().is_err() {
            sent.keep_open = false;
            return sent;
        }
        let mut sink = Sink {
            conn: self,
            shared,
            chunk: chunked,
            trickle: b.trickle,
            limit: b.close_after,
            sent: 0,
            pieces: 0,
        };
        let result = send_body(&mut sink, &resp.body).and_then(|()| sink.finish());
        sent.body_bytes = sink.sent;
        sent.complete = result.is_ok();
        sent.keep_open &= sent.complete;
        sent
    }

    /// Holds the connection without answering until the client closes it or
    /// the server stops.
    fn hold(&mut self, shared: &Shared) {
        let _ = self.stream.set_read_timeout(Some(HOLD_TICK));
        let mut scratch = [0u8; 1024];
        while !shared.stopping() {
            match self.stream.read(&mut scratch) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if nothing_yet(&e) => {}
                Err(_) => break,
            }
        }
    }

    /// Waits `wait`, returning early (true) if the client closes the
    /// connection or the server stops.
    fn wait_or_closed(&mut self, shared: &Shared, wait: Duration) -> bool {
        let deadline = Instant::now() + wait;
        let closed = loop {
            if shared.stopping() {
                break true;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break false;
            }
            let _ = self.stream.set_read_timeout(Some(left));
            let mut probe = [0u8; 1];
            match self.stream.peek(&mut probe) {
                Ok(0) => break true,
                // The client already sent more (a pipelined request): a peek
                // cannot see a close behind it, so just sleep in short steps.
                Ok(_) => std::thread::sleep(left.min(Duration::from_millis(5))),
                Err(e) if nothing_yet(&e) => {}
                Err(_) => break true,
            }
        };
        let _ = self.stream.set_read_timeout(Some(self.idle_timeout));
        closed
    }
}

/// Copies the parsed head into the connection's reused request.
fn fill(req: &mut Request, parsed: &httparse::Request<'_, '_>) {
    fn push(text: &mut String, bytes: &[u8]) -> (usize, usize) {
        let a = text.len();
        text.push_str(&String::from_utf8_lossy(bytes));
        (a, text.len())
    }
    req.text.clear();
    req.headers.clear();
    req.method = push(&mut req.text, parsed.method.unwrap_or("").as_bytes());
    req.target = push(&mut req.text, parsed.path.unwrap_or("").as_bytes());
    req.minor_version = parsed.version.unwrap_or(1);
    for h in parsed.headers.iter() {
        let name = push(&mut req.text, h.name.as_bytes());
        let value = push(&mut req.text, h.value);
        req.headers.push((name, value));
    }
}

fn write_head(out: &mut Vec<u8>, resp: &Response, chunked: bool, closing: bool) {
    let _ = write!(out, "HTTP/1.1 {} {}\r\n", resp.status, reason(resp.status));
    let mut has_length = false;
    let mut has_te = false;
    for (name, value) in &resp.headers {
        has_length |= name.eq_ignore_ascii_case("content-length");
        has_te |= name.eq_ignore_ascii_case("transfer-encoding");
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    let bodiless = resp.status < 200 || resp.status == 204 || resp.status == 304;
    if chunked {
        if !has_te {
            out.extend_from_slice(b"Transfer-Encoding: chunked\r\n");
        }
    } else if !has_length && !bodiless {
        let _ = write!(out, "Content-Length: {}\r\n", resp.body.len());
    }
    if closing {
        out.extend_from_slice(b"Connection: close\r\n");
    }
    out.extend_from_slice(b"\r\n");
}

/// Writes body pieces with the response's framing, pacing and cut-off.
struct Sink<'a> {
    conn: &'a mut Conn,
    shared: &'a Shared,
    chunk: Option<usize>,
    trickle: Option<(usize, Duration)>,
    limit: Option<u64>,
    sent: u64,
    pieces: u64,
}

/// Why a body was not sent whole.
#[derive(Debug)]
enum Cut {
    /// The client left, or the server is stopping.
    Gone,
    /// [`Response::close_after`] was reached.
    Limit,
}

impl Sink<'_> {
    fn send(&mut self, mut data: &[u8]) -> Result<(), Cut> {
        while !data.is_empty() {
            let mut n = data.len();
            if let Some(limit) = self.limit {
                let left = limit.saturating_sub(self.sent);
                if left == 0 {
                    return Err(Cut::Limit);
                }
                n = n.min(usize::try_from(left).unwrap_or(usize::MAX));
            }
            if let Some((bytes, interval)) = self.trickle {
                n = n.min(bytes);
                if self.pieces > 0 && self.conn.wait_or_closed(self.shared, interval) {
                    return Err(Cut::Gone);
                }
            }
            if let Some(c) = self.chunk {
                n = n.min(c);
            }
            if self.shared.stopping() {
                return Err(Cut::Gone);
            }
            let piece = &data[..n];
            let written = match self.chunk {
                Some(_) => {
                    let out = &mut self.conn.out;
                    out.clear();
                    let _ = write!(out, "{n:x}\r\n");
                    out.extend_from_slice(piece);
                    out.extend_from_slice(b"\r\n");
                    self.conn.last_write = Instant::now();
                    self.conn.stream.write_all(out)
                }
                None => {
                    self.conn.last_write = Instant::now();
                    self.conn.stream.write_all(piece)
                }
            };
            written.map_err(|_| Cut::Gone)?;
            self.sent += n as u64;
            self.pieces += 1;
            data = &data[n..];
        }
        Ok(())
    }

    fn finish(&mut self) -> Result<(), Cut> {
        if self.chunk.is_some() {
            self.conn.last_write = Instant::now();
            self.conn
                .stream
                .write_all(b"0\r\n\r\n")
                .map_err(|_| Cut::Gone)?;
        }
        Ok(())
    }
}

fn send_body(sink: &mut Sink<'_>, body: &Body) -> Result<(), Cut> {
    match body {
        Body::Bytes(b) => sink.send(b.as_slice()),
        Body::Filler(len) => send_repeated(sink, filler(), *len),
        Body::Bomb(bomb) => {
            sink.send(&bomb.prefix)?;
            send_repeated(sink, &ZEROS, bomb.zero_bytes)?;
            sink.send(&bomb.suffix)
        }
    }
}

/// Sends `len` bytes taken from `pattern` over and over.
fn send_repeated(sink: &mut Sink<'_>, pattern: &[u8], len: u64) -> Result<(), Cut> {
    let mut left = len;
    while left > 0 {
        let n = usize::try_from(left)
            .unwrap_or(usize::MAX)
            .min(pattern.len());
        sink.send(&pattern[..n])?;
        left -= n as u64;
    }
    Ok(())
}

static ZEROS: [u8; PIECE] = [0; PIECE];

/// 64 KiB of HTML paragraphs, 64 bytes per line, repeated to make huge bodies.
fn filler() -> &'static [u8] {
    static FILLER: OnceLock<Vec<u8>> = OnceLock::new();
    FILLER.get_or_init(|| {
        let mut out = Vec::with_capacity(PIECE);
        let mut line = 0u32;
        while out.len() < PIECE {
            let text = format!("<p>filler line {line:08} of a huge streamed body.</p>");
            let mut bytes = text.into_bytes();
            bytes.resize(63, b' ');
            bytes.push(b'\n');
            out.extend_from_slice(&bytes);
            line += 1;
        }
        out.truncate(PIECE);
        out
    })
}

/// The reason phrase of common statuses.
fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        206 => "Partial Content",
        301 => "Moved Permanently",
        302 => "Found",
        303 => "See Other",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        410 => "Gone",
        413 => "Content Too Large",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}

/// A read that timed out or was interrupted: the connection is still open,
/// the client just sent nothing yet.
fn nothing_yet(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
    )
}
