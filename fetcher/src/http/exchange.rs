//! One HTTP/1.1 exchange over an open connection: the request written as
//! the WARC record keeps it, the response read into one buffer (head, then
//! body as received) up to the end its framing gives, the size limit or a
//! timeout.

use std::borrow::Cow;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::time::Duration;

use common::crawllog::ErrorCode;
use common::warc::Truncated;
use tokio::io::{AsyncRead, AsyncWriteExt, ReadBuf};
use tokio::time::Instant;

use super::framing::{ChunkScanner, Framing};
use super::{ACCEPT_ENCODING, Cancel, MAX_HEAD};
use crate::transport::{Conn, Route};

/// A URL as a request needs it.
#[derive(Debug, Clone)]
pub(super) struct Target {
    /// Where the connection goes.
    pub route: Route,
    /// The `Host` header: the host, and the port when it is not the
    /// scheme's default.
    authority: String,
    /// Path and query (`/` at least).
    path: String,
    /// `http://` or `https://`, for a request line in absolute form.
    scheme: &'static str,
    /// `Authorization` for credentials in the URL.
    authorization: Option<String>,
}

impl Target {
    /// The parts of `url`, or why it cannot be fetched.
    pub fn parse(url: &str) -> Result<Target, String> {
        let p = crate::url_parts::split(url)?;
        Ok(Target {
            route: Route {
                https: p.https,
                host: p.host.into_owned(),
                port: p.port,
            },
            authority: p.authority.into_owned(),
            path: p.path_and_query.into_owned(),
            scheme: if p.https { "https://" } else { "http://" },
            authorization: p
                .credentials
                .map(|(user, pass)| crate::proxy::basic(&user, &pass)),
        })
    }

    /// The request to write, and what the WARC record keeps of it when
    /// that differs (the same less a proxy's credentials). With
    /// `absolute_form`, the request line names the whole URL, for a proxy.
    /// `headers` come last; an `Accept` among them replaces the crawler's
    /// own, an `Authorization` gives way to the URL's credentials (the
    /// others a rule may not set, [`common::rules`]).
    pub fn request_bytes(
        &self,
        user_agent: &str,
        from: Option<&str>,
        headers: &[(Cow<'static, str>, String)],
        absolute_form: Option<&Option<String>>,
    ) -> (Vec<u8>, Option<Vec<u8>>) {
        let mut out = Vec::with_capacity(256 + self.path.len());
        out.extend_from_slice(b"GET ");
        if absolute_form.is_some() {
            out.extend_from_slice(self.scheme.as_bytes());
            out.extend_from_slice(self.authority.as_bytes());
        }
        out.extend_from_slice(self.path.as_bytes());
        out.extend_from_slice(b" HTTP/1.1\r\n");
        let line_end = out.len();
        let mut field = |name: &str, value: &str| {
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(value.as_bytes());
            out.extend_from_slice(b"\r\n");
        };
        let given = |name: &str| headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
        let own_accept = !given("accept");
        field("user-agent", user_agent);
        if own_accept {
            field("accept", "*/*");
        }
        field("host", &self.authority);
        if let Some(a) = &self.authorization {
            field("authorization", a);
        }
        field("accept-encoding", ACCEPT_ENCODING);
        if let Some(from) = from {
            field("from", from);
        }
        for (name, value) in headers {
            if self.authorization.is_some() && name.eq_ignore_ascii_case("authorization") {
                continue;
            }
            field(name, value);
        }
        out.extend_from_slice(b"\r\n");
        match absolute_form {
            Some(Some(credentials)) => {
                let recorded = out.clone();
                out.splice(line_end..line_end, credentials.bytes());
                (out, Some(recorded))
            }
            _ => (out, None),
        }
    }
}

/// The limits of one exchange.
pub(super) struct Limits {
    /// Most body bytes kept, as received.
    pub max_body: usize,
    /// From the end of the request to the end of the response head.
    pub first_byte: Duration,
    /// The end of the whole request.
    pub deadline: Instant,
    /// The timeout that set `deadline`, for messages.
    pub download_timeout: Duration,
}

/// The head fields a response keeps or its reading needs.
pub(super) struct Head {
    pub status: u16,
    pub content_type: String,
    pub location: Option<String>,
    pub retry_after: Option<String>,
    pub transfer_encoding: Option<String>,
    pub content_encoding: Option<String>,
    framing: Framing,
    /// The connection may carry another request after this one.
    keep_alive: bool,
}

/// A response read.
pub(super) struct Exchanged {
    pub head: Head,
    /// Head and body as read (the body cut at the limit).
    pub block: Vec<u8>,
    pub body_offset: usize,
    pub truncated: Option<Truncated>,
    /// The connection can carry the next request.
    pub reusable: bool,
}

/// Why an exchange got no response.
pub(super) enum Broken {
    /// Nothing came back (the connection was closed or reset before a
    /// byte of the response): on a kept connection, the server had closed
    /// it; the request may be sent again on a new one.
    Stale,
    /// A failure for the crawl log.
    Failed(ErrorCode, String),
}

/// What waiting for some I/O came to.
enum Waited<T> {
    Done(io::Result<T>),
    TimedOut,
    Cancelled,
}

/// Waits for `io` until `until`, or until the request is cancelled.
async fn wait<T>(
    io: impl Future<Output = io::Result<T>>,
    until: Instant,
    cancel: &Cancel,
) -> Waited<T> {
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Waited::Cancelled,
        r = tokio::time::timeout_at(until, io) => match r {
            Ok(r) => Waited::Done(r),
            Err(_) => Waited::TimedOut,
        },
    }
}

/// Reads at most `most` more bytes into `buf`'s spare room (grown to hold
/// them), without zeroing it first; the number read, 0 at the end.
async fn read_more<R: AsyncRead + Unpin>(
    r: &mut R,
    buf: &mut Vec<u8>,
    most: usize,
) -> io::Result<usize> {
    buf.reserve(most);
    let len = buf.len();
    let n = {
        let spare = &mut buf.spare_capacity_mut()[..most];
        let mut rb = ReadBuf::uninit(spare);
        std::future::poll_fn(|cx| Pin::new(&mut *r).poll_read(cx, &mut rb)).await?;
        rb.filled().len()
    };
    // SAFETY: `poll_read` initialized the first `n` bytes of the spare
    // capacity (that is what `ReadBuf::filled` reports), right after `len`.
    unsafe { buf.set_len(len + n) };
    Ok(n)
}

/// Reads at first, and while the head is incomplete: most heads and
/// small pages come in one read.
const FIRST_READ: usize = 16 * 1024;
/// Most bytes asked of one read of a body.
const BODY_READ: usize = 256 * 1024;

/// Writes `request` on `conn` and reads the response. `reused`: the
/// connection was kept from an earlier request.
pub(super) async fn run(
    conn: &mut Conn,
    request: &[u8],
    limits: &Limits,
    cancel: &Cancel,
    reused: bool,
) -> Result<Exchanged, Broken> {
    let write = async {
        conn.stream.write_all(request).await?;
        conn.stream.flush().await
    };
    match wait(write, limits.deadline, cancel).await {
        Waited::Done(Ok(())) => {}
        Waited::Done(Err(_)) if reused => return Err(Broken::Stale),
        Waited::Done(Err(e)) => return Err(Broken::Failed(ErrorCode::Connect, e.to_string())),
        Waited::TimedOut => return Err(timed_out(limits, false)),
        Waited::Cancelled => return Err(interrupted()),
    }
    let mut block = Vec::new();
    let (head, body_offset) = read_head(conn, &mut block, limits, cancel, reused).await?;
    let (truncated, complete) =
        read_body(conn, &mut block, body_offset, head.framing, limits, cancel).await;
    let reusable = complete && head.keep_alive;
    Ok(Exchanged {
        head,
        block,
        body_offset,
        truncated,
        reusable,
    })
}

fn interrupted() -> Broken {
    Broken::Failed(
        ErrorCode::Connect,
        "interrupted: the fetcher is stopping".into(),
    )
}

/// The timeout failure: the first byte's or the whole request's.
fn timed_out(limits: &Limits, first_byte: bool) -> Broken {
    let what = if first_byte {
        format!("first byte ({:?})", limits.first_byte)
    } else {
        format!("download ({:?})", limits.download_timeout)
    };
    Broken::Failed(ErrorCode::Timeout, format!("timeout: {what}"))
}

/// Reads into `block` until it holds a whole final response head (an
/// interim `1xx` head is read and dropped); returns it and where the body
/// starts.
async fn read_head(
    conn: &mut Conn,
    block: &mut Vec<u8>,
    limits: &Limits,
    cancel: &Cancel,
    reused: bool,
) -> Result<(Head, usize), Broken> {
    let first_byte = (Instant::now() + limits.first_byte).min(limits.deadline);
    let head_by_first_byte = first_byte < limits.deadline;
    let mut parsed_to = 0;
    let mut got_any = false;
    loop {
        if block.len() > parsed_to && memchr::memchr(b'\n', &block[parsed_to..]).is_some() {
            match parse_head(block)? {
                Some((head, end)) if (100..200).contains(&head.status) && head.status != 101 => {
                    block.drain(..end);
                    parsed_to = 0;
                    continue;
                }
                Some(found) => return Ok(found),
                None => parsed_to = block.len(),
            }
        }
        if block.len() > MAX_HEAD {
            return Err(Broken::Failed(
                ErrorCode::Protocol,
                format!(
                    "response head too large ({} > {MAX_HEAD} bytes)",
                    block.len()
                ),
            ));
        }
        if !got_any && let crate::transport::Stream::Plain(tcp) = &conn.stream {
            // No buffer held while the server takes its time.
            match wait(tcp.readable(), first_byte, cancel).await {
                Waited::Done(_) => {}
                Waited::TimedOut => return Err(timed_out(limits, head_by_first_byte)),
                Waited::Cancelled => return Err(interrupted()),
            }
        }
        match wait(
            read_more(&mut conn.stream, block, FIRST_READ),
            first_byte,
            cancel,
        )
        .await
        {
            Waited::Done(Ok(0)) | Waited::Done(Err(_)) if !got_any && reused => {
                return Err(Broken::Stale);
            }
            Waited::Done(Ok(0)) if block.is_empty() => return Err(Broken::Stale),
            Waited::Done(Ok(0)) => {
                return Err(Broken::Failed(
                    ErrorCode::Protocol,
                    "the connection closed in the response head".into(),
                ));
            }
            Waited::Done(Ok(_)) => got_any = true,
            Waited::Done(Err(e)) => return Err(Broken::Failed(ErrorCode::Connect, e.to_string())),
            Waited::TimedOut => return Err(timed_out(limits, head_by_first_byte)),
            Waited::Cancelled => return Err(interrupted()),
        }
    }
}

/// Parses the response head at the start of `block`: `None` if it does
/// not end there yet; the head and where it ends; an error if it is not
/// an HTTP/1.x response head.
fn parse_head(block: &[u8]) -> Result<Option<(Head, usize)>, Broken> {
    let config = common::http::lenient_response_parser();
    let bad =
        |e: httparse::Error| Broken::Failed(ErrorCode::Protocol, format!("bad response head: {e}"));
    let mut few = [httparse::EMPTY_HEADER; 64];
    let mut resp = httparse::Response::new(&mut few);
    match config.parse_response(&mut resp, block) {
        Ok(httparse::Status::Complete(end)) => head_of(&resp, end).map(Some),
        Ok(httparse::Status::Partial) => Ok(None),
        Err(httparse::Error::TooManyHeaders) => {
            let mut many = vec![httparse::EMPTY_HEADER; 4096];
            let mut resp = httparse::Response::new(&mut many);
            match config.parse_response(&mut resp, block) {
                Ok(httparse::Status::Complete(end)) => head_of(&resp, end).map(Some),
                Ok(httparse::Status::Partial) => Ok(None),
                Err(e) => Err(bad(e)),
            }
        }
        Err(e) => Err(bad(e)),
    }
}

/// The fields of a parsed head that ends at `end`.
fn head_of(resp: &httparse::Response<'_, '_>, end: usize) -> Result<(Head, usize), Broken> {
    let status = resp.code.unwrap_or(0);
    let text = |v: &[u8]| String::from_utf8_lossy(v).trim().to_string();
    let mut content_type = None;
    let mut location = None;
    let mut retry_after = None;
    let mut content_encoding = None;
    let mut transfer_encoding: Option<String> = None;
    let mut lengths: Vec<&[u8]> = Vec::new();
    let mut close = false;
    for h in resp.headers.iter() {
        let name = h.name.as_bytes();
        let is = |n: &str| name.eq_ignore_ascii_case(n.as_bytes());
        if is("content-type") && content_type.is_none() {
            content_type = Some(common::http::parse_content_type(&text(h.value)).0);
        } else if is("location") && location.is_none() {
            location = Some(common::http::percent_encode_8bit(h.value));
        } else if is("retry-after") && retry_after.is_none() {
            retry_after = Some(text(h.value));
        } else if is("content-encoding") && content_encoding.is_none() {
            content_encoding = Some(text(h.value));
        } else if is("transfer-encoding") {
            let v = text(h.value);
            transfer_encoding = Some(match transfer_encoding {
                Some(before) => format!("{before}, {v}"),
                None => v,
            });
        } else if is("content-length") {
            lengths.push(h.value);
        } else if is("connection") {
            close |= h
                .value
                .split(|&b| b == b',')
                .any(|t| t.trim_ascii().eq_ignore_ascii_case(b"close"));
        }
    }
    let framing = Framing::of(
        status,
        transfer_encoding.as_deref().map(str::as_bytes),
        &lengths,
    )
    .map_err(|e| Broken::Failed(ErrorCode::Protocol, e))?;
    let keep_alive = resp.version == Some(1) && !close && status != 101;
    Ok((
        Head {
            status,
            content_type: content_type.unwrap_or_default(),
            location,
            retry_after,
            transfer_encoding,
            content_encoding,
            framing,
            keep_alive,
        },
        end,
    ))
}

/// Reads the body after `body_offset` into `block` until its framing ends
/// it, past the size limit (cut there), or at the deadline. Returns why it
/// is incomplete, and whether the response ended where its framing says
/// (nothing read past it).
async fn read_body(
    conn: &mut Conn,
    block: &mut Vec<u8>,
    body_offset: usize,
    framing: Framing,
    limits: &Limits,
    cancel: &Cancel,
) -> (Option<Truncated>, bool) {
    let limit = body_offset.saturating_add(limits.max_body);
    let mut chunks = ChunkScanner::default();
    loop {
        let end = match framing {
            Framing::Empty => Some(body_offset),
            Framing::Length(n) => {
                let n = usize::try_from(n).unwrap_or(usize::MAX);
                (block.len() - body_offset >= n).then(|| body_offset + n)
            }
            Framing::Chunked => match chunks.scan(&block[body_offset..]) {
                Ok(end) => end.map(|n| body_offset + n),
                Err(_) => return (Some(Truncated::Disconnect), false),
            },
            Framing::UntilClose => None,
        };
        if let Some(end) = end.filter(|&e| e <= limit) {
            // Bytes past the response: not this response's, and the
            // connection cannot be trusted with another.
            let exact = block.len() == end;
            block.truncate(end);
            return (None, exact);
        }
        if block.len() > limit
            || matches!(framing, Framing::Length(n) if n as usize > limits.max_body && block.len() >= limit)
        {
            block.truncate(limit);
            return (Some(Truncated::Length), false);
        }
        let want = match framing {
            Framing::Length(n) => {
                let n = usize::try_from(n).unwrap_or(usize::MAX);
                (body_offset.saturating_add(n).min(limit) - block.len()).max(1)
            }
            _ => (limit.saturating_add(1) - block.len()).min(BODY_READ),
        };
        match wait(
            read_more(&mut conn.stream, block, want.min(BODY_READ)),
            limits.deadline,
            cancel,
        )
        .await
        {
            Waited::Done(Ok(0)) if framing == Framing::UntilClose => return (None, false),
            Waited::Done(Ok(0)) | Waited::Done(Err(_)) | Waited::Cancelled => {
                return (Some(Truncated::Disconnect), false);
            }
            Waited::Done(Ok(_)) => {}
            Waited::TimedOut => return (Some(Truncated::Time), false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_written_as_the_warc_record_keeps_them() {
        let t = Target::parse("http://a.test:8080/p?q=1#frag").unwrap();
        let conditions = [(Cow::Borrowed("if-none-match"), "\"x\"".to_string())];
        let (sent, recorded) = t.request_bytes("bot/1", Some("me@a.test"), &conditions, None);
        assert_eq!(
            String::from_utf8(sent).unwrap(),
            "GET /p?q=1 HTTP/1.1\r\nuser-agent: bot/1\r\naccept: */*\r\nhost: a.test:8080\r\n\
             accept-encoding: gzip, deflate, br\r\nfrom: me@a.test\r\nif-none-match: \"x\"\r\n\r\n"
        );
        assert_eq!(recorded, None);
        let t = Target::parse("https://[::1]/").unwrap();
        assert_eq!(
            (t.route.host.as_str(), t.route.port, t.route.https),
            ("::1", 443, true)
        );
        let t = Target::parse("http://a.test").unwrap();
        let credentials = Some("Proxy-Authorization: Basic eDp5\r\n".to_string());
        let (sent, recorded) = t.request_bytes("b", None, &[], Some(&credentials));
        let sent = String::from_utf8(sent).unwrap();
        assert!(
            sent.starts_with("GET http://a.test/ HTTP/1.1\r\nProxy-Authorization: Basic eDp5\r\nuser-agent: b\r\n"),
            "{sent}"
        );
        let recorded = String::from_utf8(recorded.unwrap()).unwrap();
        assert!(recorded.starts_with("GET http://a.test/ HTTP/1.1\r\nuser-agent: b\r\n"));
        assert!(!recorded.contains("Proxy-Authorization"));
        assert!(Target::parse("ftp://a.test/").is_err());
    }

    #[test]
    fn headers_of_the_rules_come_last_and_an_accept_replaces_the_crawler_s() {
        let ruled = [
            (Cow::Borrowed("Cookie"), "s=1".to_string()),
            (Cow::Borrowed("Accept"), "text/html".to_string()),
            (Cow::Borrowed("Authorization"), "Bearer t".to_string()),
        ];
        let t = Target::parse("http://a.test/").unwrap();
        let (sent, _) = t.request_bytes("b", None, &ruled, None);
        assert_eq!(
            String::from_utf8(sent).unwrap(),
            "GET / HTTP/1.1\r\nuser-agent: b\r\nhost: a.test\r\n\
             accept-encoding: gzip, deflate, br\r\nCookie: s=1\r\nAccept: text/html\r\n\
             Authorization: Bearer t\r\n\r\n"
        );
        // The URL's own credentials win over a rule's.
        let t = Target::parse("http://u:p@a.test/").unwrap();
        let (sent, _) = t.request_bytes("b", None, &ruled, None);
        let sent = String::from_utf8(sent).unwrap();
        assert_eq!(sent.matches("uthorization").count(), 1, "{sent}");
        assert!(sent.contains("authorization: Basic dTpw\r\n"), "{sent}");
    }

    /// Answers one connection on loopback with `answer` (read the request
    /// first), and runs an exchange against it.
    fn exchange_with(answer: &'static [u8], max_body: usize) -> Exchanged {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut c, _) = listener.accept().unwrap();
            let mut got = Vec::new();
            let mut buf = [0u8; 1024];
            while !got.ends_with(b"\r\n\r\n") {
                let n = c.read(&mut buf).unwrap();
                got.extend_from_slice(&buf[..n]);
            }
            c.write_all(answer).unwrap();
            // Held open: the body's end comes from its framing.
            std::thread::sleep(Duration::from_millis(100));
        });
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let got = rt.block_on(async {
            let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .unwrap();
            let mut conn = Conn {
                stream: crate::transport::Stream::Plain(tcp),
                route: Target::parse("http://a.test/").unwrap().route,
                absolute_form: None,
                ip: None,
                tls: None,
                accepted_invalid: None,
            };
            let limits = Limits {
                max_body,
                first_byte: Duration::from_secs(2),
                deadline: Instant::now() + Duration::from_secs(5),
                download_timeout: Duration::from_secs(5),
            };
            let request = b"GET / HTTP/1.1\r\nhost: a.test\r\n\r\n";
            match run(&mut conn, request, &limits, &Cancel::default(), false).await {
                Ok(got) => got,
                Err(_) => panic!("no response"),
            }
        });
        server.join().unwrap();
        got
    }

    #[test]
    fn a_response_is_read_to_the_end_its_framing_gives() {
        let got = exchange_with(
            b"HTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\n\
              HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhiEXTRA",
            100,
        );
        assert_eq!(
            got.block, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi",
            "the interim head dropped, the bytes past the body not stored"
        );
        assert!(
            !got.reusable,
            "a connection that sent more is not used again"
        );
        assert_eq!(got.truncated, None);
        let chunked: &[u8] =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
        let got = exchange_with(chunked, 100);
        assert_eq!(got.block, chunked);
        assert!(got.reusable, "ended where its framing says: kept");
        let got = exchange_with(
            b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789",
            4,
        );
        assert_eq!(got.truncated, Some(Truncated::Length));
        assert_eq!(&got.block[got.body_offset..], b"0123", "cut at the limit");
        let exact = exchange_with(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n0123", 4);
        assert_eq!(
            exact.truncated, None,
            "a body of exactly the limit is whole"
        );
    }

    #[test]
    fn heads_give_the_framing_and_the_fields_kept() {
        let block = b"HTTP/1.1 301 Moved\r\nContent-Type: text/HTML; charset=x\r\n\
                      Location: /caf\xe9\r\nContent-Length: 3\r\nConnection: keep-alive, close\r\n\r\nabc";
        let Ok(Some((head, end))) = parse_head(block) else {
            panic!("a whole head")
        };
        assert_eq!(end, block.len() - 3);
        assert_eq!(head.status, 301);
        assert_eq!(head.content_type, "text/html");
        assert_eq!(head.location.as_deref(), Some("/caf%E9"));
        assert_eq!(head.framing, Framing::Length(3));
        assert!(!head.keep_alive, "Connection: close");
        assert!(matches!(
            parse_head(b"HTTP/1.1 200 OK\r\nA: b\r\n"),
            Ok(None)
        ));
        assert!(matches!(
            parse_head(b"SSH-2.0-OpenSSH\r\n\r\n"),
            Err(Broken::Failed(ErrorCode::Protocol, _))
        ));
        let Ok(Some((head, _))) =
            parse_head(b"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        else {
            panic!("a whole head")
        };
        assert_eq!(head.framing, Framing::Chunked);
        assert!(!head.keep_alive, "HTTP/1.0");
    }
}
