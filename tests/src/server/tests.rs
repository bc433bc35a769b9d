//! The server tested with plain `std::net::TcpStream` clients.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::*;

/// A response as a minimal client reads it.
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    /// The body ended early (connection closed before `Content-Length`).
    truncated: bool,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

fn connect(server: &Server, host: &str) -> BufReader<TcpStream> {
    let s = TcpStream::connect(server.addr(host)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    BufReader::new(s)
}

fn send(conn: &mut BufReader<TcpStream>, raw: &str) {
    conn.get_mut().write_all(raw.as_bytes()).unwrap();
}

fn get(conn: &mut BufReader<TcpStream>, host: &str, target: &str) -> Answer {
    send(
        conn,
        &format!("GET {target} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: testbot/1.0\r\n\r\n"),
    );
    read_answer(conn).unwrap()
}

/// Reads one response (Content-Length, chunked, or until close).
fn read_answer(conn: &mut BufReader<TcpStream>) -> io::Result<Answer> {
    let mut line = String::new();
    conn.read_line(&mut line)?;
    let status = line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| io::Error::other(format!("bad status line {line:?}")))?;
    let mut headers = Vec::new();
    loop {
        line.clear();
        conn.read_line(&mut line)?;
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        let (n, v) = l.split_once(':').unwrap();
        headers.push((n.to_string(), v.trim().to_string()));
    }
    let mut a = Answer {
        status,
        headers,
        body: Vec::new(),
        truncated: false,
    };
    if a.header("transfer-encoding") == Some("chunked") {
        loop {
            line.clear();
            conn.read_line(&mut line)?;
            let size = usize::from_str_radix(line.trim(), 16).map_err(io::Error::other)?;
            let mut chunk = vec![0; size + 2];
            conn.read_exact(&mut chunk)?;
            assert_eq!(&chunk[size..], b"\r\n");
            if size == 0 {
                break;
            }
            a.body.extend_from_slice(&chunk[..size]);
        }
    } else if let Some(len) = a.header("content-length") {
        let len: u64 = len.parse().unwrap();
        conn.by_ref().take(len).read_to_end(&mut a.body)?;
        a.truncated = (a.body.len() as u64) < len;
    } else {
        conn.read_to_end(&mut a.body)?;
    }
    Ok(a)
}

fn two_hosts() -> Server {
    Server::builder()
        .host(
            "a.test",
            Routes::new()
                .route("/", Response::html("<a href=/b>b</a>"))
                .route("/moved", Response::redirect(301, "http://b.test/"))
                .route("/busy", Response::retry_after(429, 7)),
        )
        .host("b.test", |req: &Request| {
            Response::text(format!(
                "{} {} q={:?} ua={:?}",
                req.method(),
                req.path(),
                req.query(),
                req.header("user-agent")
            ))
        })
        .start()
        .unwrap()
}

#[test]
fn hosts_listen_on_their_own_addresses_and_share_a_port() {
    let server = two_hosts();
    let (a, b) = (server.addr("a.test"), server.addr("b.test"));
    assert_ne!(a.ip(), b.ip());
    assert!(a.ip().is_loopback() && b.ip().is_loopback());
    assert_eq!(a.port(), b.port());
    assert_eq!(
        server.hosts_file(),
        format!("{} a.test\n{} b.test\n", a.ip(), b.ip())
    );
    assert_eq!(
        server.url("b.test", "/x"),
        format!("http://b.test:{}/x", server.port())
    );
    // Each address answers with its own handler.
    let mut ca = connect(&server, "a.test");
    assert_eq!(get(&mut ca, "a.test", "/").body, b"<a href=/b>b</a>");
    let mut cb = connect(&server, "b.test");
    assert_eq!(
        get(&mut cb, "b.test", "/p?x=1").body,
        b"GET /p q=Some(\"x=1\") ua=Some(\"testbot/1.0\")"
    );
}

#[test]
fn keep_alive_pipelining_and_the_request_log() {
    let server = two_hosts();
    let mut c = connect(&server, "a.test");
    let first = get(&mut c, "a.test", "/");
    assert_eq!(first.status, 200);
    assert_eq!(
        first.header("content-type"),
        Some("text/html; charset=utf-8")
    );
    let missing = get(&mut c, "a.test", "/nope");
    assert_eq!(missing.status, 404);
    // Two requests in one write: two answers, in order.
    send(
        &mut c,
        "GET /moved HTTP/1.1\r\nHost: a.test\r\n\r\nGET /busy HTTP/1.1\r\nHost: a.test\r\n\r\n",
    );
    let moved = read_answer(&mut c).unwrap();
    assert_eq!(moved.status, 301);
    assert_eq!(moved.header("location"), Some("http://b.test/"));
    let busy = read_answer(&mut c).unwrap();
    assert_eq!(busy.status, 429);
    assert_eq!(busy.header("retry-after"), Some("7"));

    // An entry is logged just after its response is written: wait for it.
    assert!(server.wait_for_requests(4, Duration::from_secs(5)));
    let log = server.log("a.test");
    let seen: Vec<(&str, u16)> = log.iter().map(|e| (e.target.as_str(), e.status)).collect();
    assert_eq!(
        seen,
        [("/", 200), ("/nope", 404), ("/moved", 301), ("/busy", 429)]
    );
    assert!(
        log.iter()
            .all(|e| e.connection == log[0].connection && e.complete)
    );
    assert!(
        log.iter()
            .all(|e| e.host_header.as_deref() == Some("a.test"))
    );
    assert_eq!(log[0].user_agent.as_deref(), Some("testbot/1.0"));
    assert!(log.windows(2).all(|w| w[0].end <= w[1].start));
    assert!(server.log("b.test").is_empty());
    assert_eq!(server.requests_served(), 4);
}

#[test]
fn connection_close_and_http_1_0_end_the_connection() {
    let server = two_hosts();
    let mut c = connect(&server, "a.test");
    send(&mut c, "GET / HTTP/1.0\r\n\r\n");
    let a = read_answer(&mut c).unwrap();
    assert_eq!(a.status, 200);
    let mut rest = Vec::new();
    assert_eq!(c.read_to_end(&mut rest).unwrap(), 0, "connection left open");

    let mut c = connect(&server, "a.test");
    send(&mut c, "GET / HTTP/1.1\r\nConnection: close\r\n\r\n");
    assert_eq!(read_answer(&mut c).unwrap().status, 200);
    assert_eq!(c.read_to_end(&mut rest).unwrap(), 0, "connection left open");

    let mut c = connect(&server, "a.test");
    send(&mut c, "NOT HTTP AT ALL\r\n\r\n");
    assert_eq!(read_answer(&mut c).unwrap().status, 400);
}

#[test]
fn never_answer_holds_the_connection_until_the_server_is_dropped() {
    let server = Server::builder()
        .host("silent.test", |_: &Request| Response::never_answer())
        .start()
        .unwrap();
    let mut c = connect(&server, "silent.test");
    c.get_ref()
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    send(&mut c, "GET / HTTP/1.1\r\nHost: silent.test\r\n\r\n");
    let mut byte = [0u8; 1];
    let err = c.read(&mut byte).unwrap_err();
    assert!(matches!(
        err.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    ));

    let dropping = Instant::now();
    drop(server);
    assert!(dropping.elapsed() < Duration::from_secs(4), "drop hung");
    c.get_ref()
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    assert_eq!(
        c.read(&mut byte).unwrap_or(0),
        0,
        "the held connection was not closed"
    );
}

#[test]
fn a_client_giving_up_ends_a_held_request_in_the_log() {
    let server = Server::builder()
        .host("silent.test", |_: &Request| Response::never_answer())
        .start()
        .unwrap();
    let mut c = connect(&server, "silent.test");
    send(&mut c, "GET /wait HTTP/1.1\r\n\r\n");
    std::thread::sleep(Duration::from_millis(50));
    let closed_at = Instant::now();
    drop(c);
    assert!(server.wait_for_requests(1, Duration::from_secs(5)));
    let log = server.log("silent.test");
    assert_eq!(log[0].target, "/wait");
    assert_eq!(log[0].status, 0);
    assert!(!log[0].complete);
    assert!(log[0].end >= closed_at);
}

#[test]
fn trickle_sends_pieces_at_the_given_pace() {
    let server = Server::builder()
        .host("slow.test", |_: &Request| {
            Response::text("0123456789").trickle(3, Duration::from_millis(40))
        })
        .start()
        .unwrap();
    let mut c = connect(&server, "slow.test");
    let asked = Instant::now();
    let a = get(&mut c, "slow.test", "/");
    assert_eq!(a.body, b"0123456789");
    // Four pieces (3+3+3+1), three waits between them.
    assert!(
        asked.elapsed() >= Duration::from_millis(120),
        "{:?}",
        asked.elapsed()
    );
    // The connection is still usable afterwards.
    assert_eq!(get(&mut c, "slow.test", "/").body, b"0123456789");
}

#[test]
fn delayed_first_byte() {
    let server = Server::builder()
        .host("late.test", |_: &Request| {
            Response::text("late").delay(Duration::from_millis(100))
        })
        .start()
        .unwrap();
    let mut c = connect(&server, "late.test");
    let asked = Instant::now();
    assert_eq!(get(&mut c, "late.test", "/").body, b"late");
    assert!(asked.elapsed() >= Duration::from_millis(100));
}

#[test]
fn huge_body_is_streamed_whole() {
    let len = 50_000_123;
    let server = Server::builder()
        .host("big.test", move |_: &Request| Response::huge(len))
        .start()
        .unwrap();
    let mut c = connect(&server, "big.test");
    send(&mut c, "GET / HTTP/1.1\r\n\r\n");
    let mut line = String::new();
    let mut content_length = None;
    loop {
        line.clear();
        c.read_line(&mut line).unwrap();
        if line == "\r\n" {
            break;
        }
        if let Some(v) = line.strip_prefix("Content-Length: ") {
            content_length = Some(v.trim().parse::<u64>().unwrap());
        }
    }
    assert_eq!(content_length, Some(len));
    let mut first = [0u8; 64];
    c.read_exact(&mut first).unwrap();
    assert!(first.starts_with(b"<p>filler line"));
    let rest = io::copy(&mut c.by_ref().take(len - 64), &mut io::sink()).unwrap();
    assert_eq!(rest + 64, len);
    assert!(server.wait_for_requests(1, Duration::from_secs(5)));
    assert_eq!(server.log("big.test")[0].body_bytes, len);
}

#[test]
fn gzip_bomb_inflates_to_the_announced_size() {
    let inflated = 300 << 20;
    let server = Server::builder()
        .host("bomb.test", move |_: &Request| {
            Response::gzip_bomb(inflated)
        })
        .start()
        .unwrap();
    let mut c = connect(&server, "bomb.test");
    let a = get(&mut c, "bomb.test", "/");
    assert_eq!(a.header("content-encoding"), Some("gzip"));
    assert!(a.body.len() < 400_000, "{} bytes sent", a.body.len());
    let mut decoder = flate2::read::GzDecoder::new(&a.body[..]);
    assert_eq!(io::copy(&mut decoder, &mut io::sink()).unwrap(), inflated);
}

#[test]
fn close_after_cuts_the_body_and_the_connection() {
    let server = Server::builder()
        .host("cut.test", |_: &Request| {
            Response::huge(10_000).close_after(1000)
        })
        .start()
        .unwrap();
    let mut c = connect(&server, "cut.test");
    let a = get(&mut c, "cut.test", "/");
    assert_eq!(a.header("content-length"), Some("10000"));
    assert_eq!(a.body.len(), 1000);
    assert!(a.truncated);
    assert!(server.wait_for_requests(1, Duration::from_secs(5)));
    let e = &server.log("cut.test")[0];
    assert_eq!((e.status, e.body_bytes, e.complete), (200, 1000, false));
}

#[test]
fn chunked_bodies_are_framed() {
    let body: Vec<u8> = (0..2500u32).map(|i| (i % 251) as u8).collect();
    let expected = body.clone();
    let server = Server::builder()
        .host("chunks.test", move |_: &Request| {
            Response::status(200).body(body.clone()).chunked(1000)
        })
        .start()
        .unwrap();
    let mut c = connect(&server, "chunks.test");
    let a = get(&mut c, "chunks.test", "/");
    assert_eq!(a.header("transfer-encoding"), Some("chunked"));
    assert_eq!(a.header("content-length"), None);
    assert_eq!(a.body, expected);
    // Keep-alive survives a chunked response.
    assert_eq!(get(&mut c, "chunks.test", "/").body, expected);
}

#[test]
fn a_panicking_handler_answers_500() {
    let server = Server::builder()
        .host("bug.test", |req: &Request| {
            if req.path() == "/panic" {
                panic!("deliberate panic in a test handler");
            }
            Response::text("fine")
        })
        .start()
        .unwrap();
    let mut c = connect(&server, "bug.test");
    assert_eq!(get(&mut c, "bug.test", "/panic").status, 500);
    assert_eq!(get(&mut c, "bug.test", "/").body, b"fine");
}

#[test]
fn politeness_is_checked_from_the_server_side() {
    let server = Server::builder()
        .host("p.test", |_: &Request| {
            Response::text("x").delay(Duration::from_millis(150))
        })
        .host("q.test", |_: &Request| Response::text("y"))
        .start()
        .unwrap();
    // Polite: one request at a time, 60 ms apart.
    let mut c = connect(&server, "q.test");
    for _ in 0..3 {
        get(&mut c, "q.test", "/");
        std::thread::sleep(Duration::from_millis(60));
    }
    assert_polite(&server.log("q.test"), Duration::from_millis(50));
    let q_log = server.log("q.test");
    let too_strict = std::panic::catch_unwind(|| assert_polite(&q_log, Duration::from_millis(500)));
    let report = *too_strict.unwrap_err().downcast::<String>().unwrap();
    assert!(report.contains("q.test: GET /"), "{report}");
    assert!(report.contains("less than 500.0 ms"), "{report}");

    // Impolite: two connections at once to a slow host overlap.
    let started = Arc::new(AtomicUsize::new(0));
    let clients: Vec<_> = (0..2)
        .map(|i| {
            let addr = server.addr("p.test");
            let started = Arc::clone(&started);
            std::thread::spawn(move || {
                let mut c = BufReader::new(TcpStream::connect(addr).unwrap());
                started.fetch_add(1, Ordering::SeqCst);
                send(&mut c, &format!("GET /{i} HTTP/1.1\r\n\r\n"));
                read_answer(&mut c).unwrap().status
            })
        })
        .collect();
    for c in clients {
        assert_eq!(c.join().unwrap(), 200);
    }
    let log = server.logs();
    let violations = politeness_violations(&log, |_| Duration::from_millis(10));
    assert_eq!(violations.len(), 1, "{violations:?}");
    assert_eq!(&*violations[0].host, "p.test");
    assert_eq!(violations[0].gap, None);
    assert!(violations[0].to_string().contains("overlaps"));
    // The per-host form lets a slow host have its own gap.
    assert_polite_by_host(&server.log("q.test"), |h| {
        assert_eq!(h, "q.test");
        Duration::from_millis(50)
    });
}

#[test]
fn explicit_addresses_and_ports_are_honoured() {
    let first = Server::builder()
        .host_at("x.test", Ipv4Addr::new(127, 0, 0, 77), |_: &Request| {
            Response::text("x")
        })
        .host("y.test", |_: &Request| Response::text("y"))
        .first_address(Ipv4Addr::new(127, 0, 0, 77))
        .start()
        .unwrap();
    assert_eq!(first.addr("x.test").ip(), Ipv4Addr::new(127, 0, 0, 77));
    // Automatic addresses skip the one taken explicitly.
    assert_eq!(first.addr("y.test").ip(), Ipv4Addr::new(127, 0, 0, 78));
    // A second server may use the same addresses on another port.
    let second = Server::builder()
        .host_at("x.test", Ipv4Addr::new(127, 0, 0, 77), |_: &Request| {
            Response::text("x2")
        })
        .start()
        .unwrap();
    assert_ne!(first.port(), second.port());
    // The same address and port twice is refused with the address named.
    let clash = Server::builder()
        .host_at("z.test", Ipv4Addr::new(127, 0, 0, 77), |_: &Request| {
            Response::text("z")
        })
        .port(second.port())
        .start()
        .unwrap_err();
    assert!(clash.to_string().contains("127.0.0.77"), "{clash}");
    let not_loopback = Server::builder()
        .host_at("w.test", Ipv4Addr::new(10, 0, 0, 1), |_: &Request| {
            Response::text("w")
        })
        .start()
        .unwrap_err();
    assert!(
        not_loopback.to_string().contains("not a loopback"),
        "{not_loopback}"
    );
}

#[test]
fn observer_sees_entries_even_without_a_log() {
    let seen = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&seen);
    let server = Server::builder()
        .host("o.test", |_: &Request| Response::text("o"))
        .request_log(false)
        .on_request(move |e| {
            assert_eq!(e.target, "/o");
            counter.fetch_add(1, Ordering::SeqCst);
        })
        .start()
        .unwrap();
    let mut c = connect(&server, "o.test");
    get(&mut c, "o.test", "/o");
    get(&mut c, "o.test", "/o");
    assert!(server.wait_for_requests(2, Duration::from_secs(5)));
    assert_eq!(seen.load(Ordering::SeqCst), 2);
    assert!(server.log("o.test").is_empty());
}
