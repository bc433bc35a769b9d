//! A tiny DNS server on loopback (UDP), for tests that must not ask the
//! machine's name servers: it answers `A` queries from a table, says
//! `NXDOMAIN` or `SERVFAIL` when told to, answers late or never, and counts
//! the queries it gets per name.
//!
//! ```
//! use std::time::Duration;
//! use testkit::dns::{DnsAnswer, DnsServer};
//!
//! let dns = DnsServer::builder()
//!     .name("a.test", DnsAnswer::a("127.0.0.2".parse().unwrap()))
//!     .name("gone.test", DnsAnswer::NxDomain)
//!     .name("slow.test", DnsAnswer::a("127.0.0.3".parse().unwrap()).after(Duration::from_secs(5)))
//!     .start()
//!     .unwrap();
//! assert_eq!(dns.addr().ip().to_string(), "127.0.0.1");
//! assert_eq!(dns.queries("a.test"), 0);
//! ```
//!
//! A name may get a different answer on each query ([`DnsServerBuilder::answers`]):
//! `SERVFAIL` first, then an address, to see a temporary failure retried.
//! Names not in the table get `NXDOMAIN`; other query types than `A` for a
//! known name get an empty answer (the name exists, without such records).
//! Dropping the server stops it.

use std::collections::HashMap;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// What the server says to a query for a name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DnsAnswer {
    /// These addresses, with this TTL in seconds.
    A(Vec<Ipv4Addr>, u32),
    /// "No such name".
    NxDomain,
    /// "Server failure" (a temporary failure).
    ServFail,
    /// No answer at all.
    Silent,
    /// The inner answer, after a delay.
    Late(Duration, Box<DnsAnswer>),
}

impl DnsAnswer {
    /// One address, with a TTL of an hour.
    pub fn a(ip: Ipv4Addr) -> DnsAnswer {
        DnsAnswer::A(vec![ip], 3600)
    }

    /// This answer, sent after `delay`.
    pub fn after(self, delay: Duration) -> DnsAnswer {
        DnsAnswer::Late(delay, Box::new(self))
    }
}

/// Builds a [`DnsServer`].
#[derive(Debug, Default)]
pub struct DnsServerBuilder {
    names: HashMap<String, Vec<DnsAnswer>>,
    bind: Option<SocketAddr>,
}

impl DnsServerBuilder {
    /// `name` always gets `answer`.
    pub fn name(self, name: &str, answer: DnsAnswer) -> DnsServerBuilder {
        self.answers(name, vec![answer])
    }

    /// The n-th query for `name` gets the n-th answer; the last one is
    /// repeated after that.
    pub fn answers(mut self, name: &str, answers: Vec<DnsAnswer>) -> DnsServerBuilder {
        assert!(!answers.is_empty(), "{name}: at least one answer");
        self.names.insert(name.to_ascii_lowercase(), answers);
        self
    }

    /// Listens on `addr` instead of `127.0.0.1` and a free port (a
    /// benchmark in a network namespace of its own takes port 53).
    pub fn bind(mut self, addr: SocketAddr) -> DnsServerBuilder {
        self.bind = Some(addr);
        self
    }

    /// Binds (`127.0.0.1:0` unless told otherwise) and starts answering.
    pub fn start(self) -> io::Result<DnsServer> {
        let socket = UdpSocket::bind(self.bind.unwrap_or(SocketAddr::from(([127, 0, 0, 1], 0))))?;
        socket.set_read_timeout(Some(Duration::from_millis(100)))?;
        let addr = socket.local_addr()?;
        let state = Arc::new(State {
            names: self.names,
            queries: Mutex::new(HashMap::new()),
            stop: AtomicBool::new(false),
        });
        let thread = {
            let state = state.clone();
            std::thread::Builder::new()
                .name("test-dns".into())
                .spawn(move || serve(socket, state))?
        };
        Ok(DnsServer {
            addr,
            state,
            thread: Some(thread),
        })
    }
}

/// A running DNS server; stops when dropped.
#[derive(Debug)]
pub struct DnsServer {
    addr: SocketAddr,
    state: Arc<State>,
    thread: Option<JoinHandle<()>>,
}

#[derive(Debug)]
struct State {
    names: HashMap<String, Vec<DnsAnswer>>,
    /// Queries per (lower-case) name, of any type.
    queries: Mutex<HashMap<String, usize>>,
    stop: AtomicBool,
}

impl DnsServer {
    /// A server with no names yet.
    pub fn builder() -> DnsServerBuilder {
        DnsServerBuilder::default()
    }

    /// Where it listens (`127.0.0.1:PORT`, UDP).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// How many queries (of any type) named `name` so far.
    pub fn queries(&self, name: &str) -> usize {
        lock(&self.state.queries)
            .get(&name.to_ascii_lowercase())
            .copied()
            .unwrap_or(0)
    }

    /// Queries of every name so far.
    pub fn total_queries(&self) -> usize {
        lock(&self.state.queries).values().sum()
    }
}

impl Drop for DnsServer {
    fn drop(&mut self) {
        self.state.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The receive loop: each query is answered at once, or from a thread of
/// its own when the answer is late (so one slow name holds up no other).
fn serve(socket: UdpSocket, state: Arc<State>) {
    let socket = Arc::new(socket);
    let mut buf = [0u8; 1500];
    while !state.stop.load(Ordering::SeqCst) {
        let (n, from) = match socket.recv_from(&mut buf) {
            Ok(got) => got,
            Err(_) => continue, // the read timeout: look at `stop` again
        };
        let Some(query) = Query::parse(&buf[..n]) else {
            continue;
        };
        let answer = {
            let mut counts = lock(&state.queries);
            let seen = counts.entry(query.name.clone()).or_insert(0);
            *seen += 1;
            state
                .names
                .get(&query.name)
                .map(|list| list[(*seen - 1).min(list.len() - 1)].clone())
        };
        let (delay, answer) = match answer {
            Some(DnsAnswer::Late(d, inner)) => (d, Some(*inner)),
            other => (Duration::ZERO, other),
        };
        let reply = query.reply(answer.as_ref());
        match reply {
            None => {}
            Some(bytes) if delay.is_zero() => {
                let _ = socket.send_to(&bytes, from);
            }
            Some(bytes) => {
                let socket = socket.clone();
                let state = state.clone();
                std::thread::spawn(move || {
                    // Sleep in steps, so that a stopped server sends nothing late.
                    let step = Duration::from_millis(20);
                    let mut left = delay;
                    while !left.is_zero() && !state.stop.load(Ordering::SeqCst) {
                        let d = left.min(step);
                        std::thread::sleep(d);
                        left -= d;
                    }
                    if !state.stop.load(Ordering::SeqCst) {
                        let _ = socket.send_to(&bytes, from);
                    }
                });
            }
        }
    }
}

/// The part of a query an answer repeats.
struct Query {
    id: [u8; 2],
    /// The RD bit and opcode of the query's flags.
    flags: u8,
    /// The question section as received.
    question: Vec<u8>,
    /// Lower case, without the final dot.
    name: String,
    qtype: u16,
}

impl Query {
    fn parse(msg: &[u8]) -> Option<Query> {
        if msg.len() < 12 || msg[2] & 0x80 != 0 || u16::from_be_bytes([msg[4], msg[5]]) != 1 {
            return None;
        }
        let mut i = 12;
        let mut labels = Vec::new();
        loop {
            let len = *msg.get(i)? as usize;
            i += 1;
            if len == 0 {
                break;
            }
            if len > 63 {
                return None; // no compression in a question
            }
            labels.push(String::from_utf8_lossy(msg.get(i..i + len)?).to_ascii_lowercase());
            i += len;
        }
        let qtype = u16::from_be_bytes([*msg.get(i)?, *msg.get(i + 1)?]);
        let end = i + 4;
        Some(Query {
            id: [msg[0], msg[1]],
            flags: msg[2] & 0x79,
            question: msg.get(12..end)?.to_vec(),
            name: labels.join("."),
            qtype,
        })
    }

    /// The response for `answer` (`None`: unknown name); `None` for silence.
    fn reply(&self, answer: Option<&DnsAnswer>) -> Option<Vec<u8>> {
        let (rcode, records): (u8, &[Ipv4Addr]) = match answer {
            None | Some(DnsAnswer::NxDomain) => (3, &[]),
            Some(DnsAnswer::ServFail) => (2, &[]),
            Some(DnsAnswer::Silent) => return None,
            Some(DnsAnswer::A(ips, _)) if self.qtype == 1 => (0, ips),
            Some(DnsAnswer::A(..)) => (0, &[]),
            Some(DnsAnswer::Late(_, inner)) => return self.reply(Some(inner)),
        };
        let ttl = match answer {
            Some(DnsAnswer::A(_, ttl)) => *ttl,
            _ => 0,
        };
        let mut out = Vec::with_capacity(512);
        out.extend_from_slice(&self.id);
        // QR, the query's opcode and RD; AA. RA; the code.
        out.push(0x80 | self.flags | 0x04);
        out.push(0x80 | rcode);
        out.extend_from_slice(&1u16.to_be_bytes());
        out.extend_from_slice(&(records.len() as u16).to_be_bytes());
        out.extend_from_slice(&[0, 0, 0, 0]);
        out.extend_from_slice(&self.question);
        for ip in records {
            out.extend_from_slice(&[0xc0, 12]); // the name of the question
            out.extend_from_slice(&1u16.to_be_bytes()); // A
            out.extend_from_slice(&1u16.to_be_bytes()); // IN
            out.extend_from_slice(&ttl.to_be_bytes());
            out.extend_from_slice(&4u16.to_be_bytes());
            out.extend_from_slice(&ip.octets());
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(id: u16, name: &str, qtype: u16) -> Vec<u8> {
        let mut q = Vec::new();
        q.extend_from_slice(&id.to_be_bytes());
        q.extend_from_slice(&[0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
        for label in name.split('.') {
            q.push(label.len() as u8);
            q.extend_from_slice(label.as_bytes());
        }
        q.push(0);
        q.extend_from_slice(&qtype.to_be_bytes());
        q.extend_from_slice(&1u16.to_be_bytes());
        q
    }

    fn ask(server: &DnsServer, name: &str) -> Option<Vec<u8>> {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        s.set_read_timeout(Some(Duration::from_millis(500)))
            .unwrap();
        s.send_to(&query(0x1234, name, 1), server.addr()).unwrap();
        let mut buf = [0u8; 512];
        s.recv_from(&mut buf).ok().map(|(n, _)| buf[..n].to_vec())
    }

    #[test]
    fn answers_counts_and_fails_as_told() {
        let server = DnsServer::builder()
            .name(
                "a.test",
                DnsAnswer::A(vec![Ipv4Addr::new(127, 0, 0, 9)], 60),
            )
            .answers(
                "flaky.test",
                vec![
                    DnsAnswer::ServFail,
                    DnsAnswer::a(Ipv4Addr::new(127, 0, 0, 8)),
                ],
            )
            .name("quiet.test", DnsAnswer::Silent)
            .start()
            .unwrap();
        let r = ask(&server, "A.test").unwrap();
        assert_eq!(&r[..2], &[0x12, 0x34], "same id");
        assert_eq!(r[3] & 0x0f, 0, "NOERROR");
        assert_eq!(u16::from_be_bytes([r[6], r[7]]), 1, "one answer");
        assert_eq!(&r[r.len() - 4..], &[127, 0, 0, 9]);
        assert_eq!(
            ask(&server, "nothere.test").unwrap()[3] & 0x0f,
            3,
            "NXDOMAIN"
        );
        assert_eq!(
            ask(&server, "flaky.test").unwrap()[3] & 0x0f,
            2,
            "SERVFAIL first"
        );
        assert_eq!(
            ask(&server, "flaky.test").unwrap()[3] & 0x0f,
            0,
            "then an answer"
        );
        assert!(ask(&server, "quiet.test").is_none());
        assert_eq!(server.queries("a.test"), 1);
        assert_eq!(server.queries("flaky.test"), 2);
        assert_eq!(server.total_queries(), 5);
    }
}
