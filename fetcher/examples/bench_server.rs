//! The server side of `scripts/bench-fetch.sh`: a crawl directory with one
//! segment of `HOSTS × PER_HOST` URLs, and a loopback web serving it (one
//! address per host, from 127.0.0.2 upward, all on one port).
//!
//! Usage: `bench_server CRAWL HOSTS PER_HOST BODY_BYTES [LATENCY_MS]`
//!
//! Without `LATENCY_MS`, testkit's server serves host names (written to
//! `CRAWL/hosts` for `--hosts-file`). With it, a single-threaded `epoll`
//! loop serves the addresses themselves (URLs such as
//! `http://127.0.0.2:PORT/page/0`, so that no client needs a name
//! resolved) and answers each request `LATENCY_MS` after its head arrived,
//! however many are waiting: thousands of slow connections cost one thread
//! and a timer queue. That server counts the requests in flight on each host
//! (from the end of a request head to the end of its answer), and also
//! writes every URL to `CRAWL/urls.txt`, one host after another in turn, for
//! other clients.
//!
//! Prints `ready URLS` when the segment is written and the server listens,
//! then serves until `CRAWL/bench-stop` exists (or 30 minutes pass). Each
//! time `CRAWL/bench-mark` appears, it prints `mark SERVED MAX_PER_HOST
//! MAX_TOTAL` (requests so far, and the largest number in flight on one
//! host and on all hosts together since the previous mark), removes the file
//! and starts the maxima again; at the end it prints `served N`.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::crawldir::CrawlDir;

const LIFETIME: Duration = Duration::from_secs(30 * 60);

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !(4..=5).contains(&args.len()) {
        eprintln!("usage: bench_server CRAWL HOSTS PER_HOST BODY_BYTES [LATENCY_MS]");
        std::process::exit(2);
    }
    let crawl = CrawlDir::create(&args[0]).expect("crawl directory");
    let hosts: usize = args[1].parse().expect("HOSTS");
    let per_host: usize = args[2].parse().expect("PER_HOST");
    let body_len: usize = args[3].parse().expect("BODY_BYTES");
    let latency: Option<Duration> = args
        .get(4)
        .map(|ms| Duration::from_millis(ms.parse().expect("LATENCY_MS")));

    let mut page = String::from("<!doctype html><html><body>");
    while page.len() < body_len {
        page.push_str("<p>Lorem ipsum dolor sit amet, consectetur adipiscing.</p>\n");
    }
    page.truncate(body_len);
    match latency {
        None => serve_names(&crawl, hosts, per_host, page.into_bytes()),
        Some(latency) => serve_addresses(
            &crawl,
            hosts,
            per_host,
            testkit::prose::prose_pages(body_len),
            latency,
        ),
    }
}

/// Host names served by testkit's server (a thread per connection).
fn serve_names(crawl: &CrawlDir, hosts: usize, per_host: usize, page: Vec<u8>) {
    let body: Arc<[u8]> = Arc::from(page);
    let (server, names) = testkit::server::same_page_web(hosts, body).expect("start server");
    std::fs::write(crawl.root().join("hosts"), server.hosts_file()).expect("hosts file");
    let urls: Vec<(String, Vec<String>)> = names
        .iter()
        .map(|n| {
            let list = (0..per_host)
                .map(|i| server.url(n, &format!("/page/{i}")))
                .collect();
            (n.clone(), list)
        })
        .collect();
    let count = write_segment(crawl, &urls);
    println!("ready {count}");
    wait_for_stop(crawl, || {});
    println!("served {}", server.requests_served());
}

/// Writes the segment, domain-sorted like a real one (all URLs of a host
/// together); returns the URL count.
fn write_segment(crawl: &CrawlDir, urls: &[(String, Vec<String>)]) -> u64 {
    let lines = urls
        .iter()
        .flat_map(|(host, list)| list.iter().map(move |url| (host.clone(), url.clone())));
    testkit::segment::write_links(&crawl.segment_path("00001"), lines)
}

/// Sleeps until `CRAWL/bench-stop` exists (or [`LIFETIME`] passed), calling
/// `tick` every 100 ms.
fn wait_for_stop(crawl: &CrawlDir, mut tick: impl FnMut()) {
    let stop = crawl.root().join("bench-stop");
    let start = Instant::now();
    while !stop.exists() && start.elapsed() < LIFETIME {
        tick();
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Addresses served by one `epoll` thread, each answer `latency` after its
/// request.
fn serve_addresses(
    crawl: &CrawlDir,
    hosts: usize,
    per_host: usize,
    pages: Vec<Vec<u8>>,
    latency: Duration,
) {
    let (listeners, port) = bind_all(hosts).expect("listen on loopback addresses");
    let addr = |h: usize| host_address(h);
    let urls: Vec<(String, Vec<String>)> = (0..hosts)
        .map(|h| {
            let list = (0..per_host)
                .map(|i| format!("http://{}:{port}/page/{i}", addr(h)))
                .collect();
            (addr(h).to_string(), list)
        })
        .collect();
    // For other clients: hosts in turn, so that consecutive URLs are on
    // different hosts.
    let mut list = String::new();
    for i in 0..per_host {
        for (_, host_urls) in &urls {
            list.push_str(&host_urls[i]);
            list.push('\n');
        }
    }
    std::fs::write(crawl.root().join("urls.txt"), list).expect("urls.txt");
    let count = write_segment(crawl, &urls);

    let stats = Arc::new(Stats::new(hosts));
    let looper = EventLoop::new(listeners, pages, latency, stats.clone()).expect("epoll");
    let stopping = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = stopping.clone();
    let thread = std::thread::spawn(move || looper.run(&flag));
    println!("ready {count}");
    let mark = crawl.root().join("bench-mark");
    wait_for_stop(crawl, || {
        if mark.exists() {
            let (per_host, total) = stats.take_maxima();
            println!("mark {} {per_host} {total}", stats.served());
            let _ = std::fs::remove_file(&mark);
        }
    });
    stopping.store(true, std::sync::atomic::Ordering::SeqCst);
    let _ = thread.join();
    println!("served {}", stats.served());
}

fn host_address(h: usize) -> Ipv4Addr {
    Ipv4Addr::from(u32::from(Ipv4Addr::new(127, 0, 0, 2)) + h as u32)
}

/// One listener per host address, all on the port the first one got.
fn bind_all(hosts: usize) -> io::Result<(Vec<TcpListener>, u16)> {
    'attempt: for _ in 0..64 {
        let first = TcpListener::bind(SocketAddrV4::new(host_address(0), 0))?;
        let port = first.local_addr()?.port();
        let mut all = vec![first];
        for h in 1..hosts {
            match TcpListener::bind(SocketAddrV4::new(host_address(h), port)) {
                Ok(l) => all.push(l),
                Err(e) if e.kind() == io::ErrorKind::AddrInUse => continue 'attempt,
                Err(e) => return Err(e),
            }
        }
        for l in &all {
            l.set_nonblocking(true)?;
        }
        return Ok((all, port));
    }
    Err(io::Error::other("no port free on every address"))
}

/// Requests in flight, per host and in all, and their maxima.
struct Stats {
    served: std::sync::atomic::AtomicU64,
    maxima: std::sync::Mutex<(u32, u32)>,
    hosts: usize,
}

impl Stats {
    fn new(hosts: usize) -> Stats {
        Stats {
            served: Default::default(),
            maxima: Default::default(),
            hosts,
        }
    }

    fn served(&self) -> u64 {
        self.served.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn note(&self, on_host: u32, total: u32) {
        let mut m = self.maxima.lock().unwrap();
        m.0 = m.0.max(on_host);
        m.1 = m.1.max(total);
    }

    fn take_maxima(&self) -> (u32, u32) {
        std::mem::take(&mut *self.maxima.lock().unwrap())
    }
}

/// A connection: what was read of the next request, what is left to write.
struct Conn {
    stream: TcpStream,
    host: usize,
    input: Vec<u8>,
    output: Vec<u8>,
    written: usize,
    /// A request is in flight (counted) until its answer is written.
    in_flight: bool,
    /// Bumped when the slot is reused, so that a stale timer is ignored.
    generation: u64,
}

struct EventLoop {
    epoll: i32,
    listeners: Vec<TcpListener>,
    conns: Vec<Option<Conn>>,
    free: Vec<usize>,
    generations: Vec<u64>,
    /// Answers due, in order (every answer waits the same time).
    timers: VecDeque<(Instant, usize, u64)>,
    pages: Vec<Vec<u8>>,
    latency: Duration,
    in_flight: Vec<u32>,
    total_in_flight: u32,
    stats: Arc<Stats>,
}

const LISTENER_TAG: u64 = 1 << 63;

impl EventLoop {
    fn new(
        listeners: Vec<TcpListener>,
        pages: Vec<Vec<u8>>,
        latency: Duration,
        stats: Arc<Stats>,
    ) -> io::Result<EventLoop> {
        // SAFETY: plain system call without pointers.
        let epoll = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if epoll < 0 {
            return Err(io::Error::last_os_error());
        }
        let hosts = stats.hosts;
        let lp = EventLoop {
            epoll,
            listeners,
            conns: Vec::new(),
            free: Vec::new(),
            generations: Vec::new(),
            timers: VecDeque::new(),
            pages,
            latency,
            in_flight: vec![0; hosts],
            total_in_flight: 0,
            stats,
        };
        for (i, l) in lp.listeners.iter().enumerate() {
            lp.ctl(
                libc::EPOLL_CTL_ADD,
                l.as_raw_fd(),
                libc::EPOLLIN as u32,
                LISTENER_TAG | i as u64,
            )?;
        }
        Ok(lp)
    }

    fn ctl(&self, op: i32, fd: i32, events: u32, data: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event { events, u64: data };
        // SAFETY: `ev` is a valid event for the duration of the call.
        if unsafe { libc::epoll_ctl(self.epoll, op, fd, &mut ev) } < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    fn run(mut self, stopping: &std::sync::atomic::AtomicBool) {
        let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 1024];
        while !stopping.load(std::sync::atomic::Ordering::Relaxed) {
            let now = Instant::now();
            while let Some(&(due, slot, generation)) = self.timers.front() {
                if due > now {
                    break;
                }
                self.timers.pop_front();
                if self.generations[slot] == generation {
                    self.answer(slot);
                }
            }
            let wait = self.timers.front().map_or(100, |&(due, _, _)| {
                due.saturating_duration_since(now).as_millis().clamp(1, 100) as i32
            });
            // SAFETY: `events` is a valid buffer of the length passed.
            let n = unsafe {
                libc::epoll_wait(self.epoll, events.as_mut_ptr(), events.len() as i32, wait)
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                panic!("epoll_wait: {e}");
            }
            for ev in &events[..n as usize] {
                let (data, flags) = (ev.u64, ev.events);
                if data & LISTENER_TAG != 0 {
                    self.accept((data & !LISTENER_TAG) as usize);
                } else {
                    self.ready(data as usize, flags);
                }
            }
        }
    }

    fn accept(&mut self, host: usize) {
        for _ in 0..256 {
            let stream = match self.listeners[host].accept() {
                Ok((s, _)) => s,
                Err(_) => return,
            };
            let _ = stream.set_nonblocking(true);
            let _ = stream.set_nodelay(true);
            let slot = self.free.pop().unwrap_or_else(|| {
                self.conns.push(None);
                self.generations.push(0);
                self.conns.len() - 1
            });
            self.generations[slot] += 1;
            let fd = stream.as_raw_fd();
            self.conns[slot] = Some(Conn {
                stream,
                host,
                input: Vec::with_capacity(1024),
                output: Vec::new(),
                written: 0,
                in_flight: false,
                generation: self.generations[slot],
            });
            if self
                .ctl(libc::EPOLL_CTL_ADD, fd, libc::EPOLLIN as u32, slot as u64)
                .is_err()
            {
                self.close(slot);
            }
        }
    }

    fn ready(&mut self, slot: usize, flags: u32) {
        if flags & libc::EPOLLOUT as u32 != 0 {
            self.flush(slot);
        }
        if flags & (libc::EPOLLIN | libc::EPOLLHUP | libc::EPOLLERR) as u32 != 0 {
            self.read(slot);
        }
    }

    fn read(&mut self, slot: usize) {
        let Some(c) = self.conns[slot].as_mut() else {
            return;
        };
        let mut buf = [0u8; 4096];
        loop {
            match (&c.stream).read(&mut buf) {
                Ok(0) => return self.close(slot),
                Ok(n) => c.input.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return self.close(slot),
            }
        }
        if c.in_flight || c.input.len() > 64 * 1024 {
            // A second request before the answer to the first: it waits its turn.
            return;
        }
        self.start_request(slot);
    }

    /// Starts the next request on the connection if its head has arrived.
    fn start_request(&mut self, slot: usize) {
        let Some(c) = self.conns[slot].as_mut() else {
            return;
        };
        if c.in_flight || memchr::memmem::find(&c.input, b"\r\n\r\n").is_none() {
            return;
        }
        c.in_flight = true;
        let host = c.host;
        let generation = c.generation;
        self.in_flight[host] += 1;
        self.total_in_flight += 1;
        self.stats.note(self.in_flight[host], self.total_in_flight);
        if self.latency.is_zero() {
            self.answer(slot);
        } else {
            self.timers
                .push_back((Instant::now() + self.latency, slot, generation));
        }
    }

    fn answer(&mut self, slot: usize) {
        let Some(c) = self.conns[slot].as_mut() else {
            return;
        };
        let end = memchr::memmem::find(&c.input, b"\r\n\r\n").map_or(c.input.len(), |i| i + 4);
        let line_end = memchr::memchr(b'\r', &c.input).unwrap_or(0);
        let target = c.input[..line_end]
            .split(|&b| b == b' ')
            .nth(1)
            .unwrap_or(b"");
        let robots = target == b"/robots.txt";
        // The page of a path: the same every time it is asked for.
        let which = target
            .iter()
            .fold(0usize, |h, &b| h.wrapping_mul(31).wrapping_add(b as usize));
        let body: &[u8] = if robots {
            b""
        } else {
            &self.pages[which % self.pages.len()]
        };
        c.output.clear();
        c.written = 0;
        let _ = write!(
            c.output,
            "HTTP/1.1 {}\r\nContent-Type: text/html\r\nContent-Length: {}\r\n\r\n",
            if robots { "404 Not Found" } else { "200 OK" },
            body.len()
        );
        c.output.extend_from_slice(body);
        c.input.drain(..end);
        self.flush(slot);
    }

    fn flush(&mut self, slot: usize) {
        let Some(c) = self.conns[slot].as_mut() else {
            return;
        };
        while c.written < c.output.len() {
            match (&c.stream).write(&c.output[c.written..]) {
                Ok(n) => c.written += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    let fd = c.stream.as_raw_fd();
                    let _ = self.ctl(
                        libc::EPOLL_CTL_MOD,
                        fd,
                        (libc::EPOLLIN | libc::EPOLLOUT) as u32,
                        slot as u64,
                    );
                    return;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return self.close(slot),
            }
        }
        if !c.in_flight {
            return;
        }
        let fd = c.stream.as_raw_fd();
        let host = c.host;
        c.in_flight = false;
        c.output.clear();
        c.written = 0;
        self.in_flight[host] -= 1;
        self.total_in_flight -= 1;
        self.stats
            .served
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let _ = self.ctl(libc::EPOLL_CTL_MOD, fd, libc::EPOLLIN as u32, slot as u64);
        // A request that arrived meanwhile.
        self.start_request(slot);
    }

    fn close(&mut self, slot: usize) {
        if let Some(c) = self.conns[slot].take() {
            if c.in_flight {
                self.in_flight[c.host] -= 1;
                self.total_in_flight -= 1;
            }
            let _ = self.ctl(libc::EPOLL_CTL_DEL, c.stream.as_raw_fd(), 0, 0);
            self.generations[slot] += 1;
            self.free.push(slot);
        }
    }
}
