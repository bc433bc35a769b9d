//! The two sides of `scripts/bench-dns.sh`, which runs them in a network
//! namespace of their own (only its loopback exists) whose
//! `/etc/resolv.conf` names `127.0.0.1`:
//!
//! - `bench_dns serve NAMES LATENCY_MS`: a DNS server on `127.0.0.1:53`
//!   (testkit's) answering `pP-hI.bench` for phases P = 1..4 and I <
//!   NAMES, each after LATENCY_MS; prints `ready`, serves until killed (at
//!   most 30 minutes);
//! - `bench_dns measure FETCHER NAMES LATENCY_MS WORKDIR`: looks the names
//!   up four ways and prints one line per way: wall time, names per second,
//!   CPU milliseconds per name (this process, or the fetcher's), then the
//!   cost of an answer already known.
//!
//! Each way asks names of its own, so that no cache helps another.

use std::net::ToSocketAddrs;
use std::process::Command;
use std::time::{Duration, Instant};

use common::crawldir::CrawlDir;
use common::segment::{SegmentRecord, SegmentWriter, Via};
use fetcher::dns::{Dns, DnsConfig};
use testkit::dns::{DnsAnswer, DnsServer};

fn name(phase: u32, i: usize) -> String {
    format!("p{phase}-h{i}.bench")
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("serve") if args.len() == 3 => serve(args[1].parse().unwrap(), ms(&args[2])),
        Some("measure") if args.len() == 5 => measure(
            &args[1],
            args[2].parse().expect("NAMES"),
            ms(&args[3]),
            &args[4],
        ),
        _ => {
            eprintln!(
                "usage: bench_dns serve NAMES LATENCY_MS | measure FETCHER NAMES LATENCY_MS WORKDIR"
            );
            std::process::exit(2);
        }
    }
}

fn ms(s: &str) -> Duration {
    Duration::from_millis(s.parse().expect("LATENCY_MS"))
}

fn serve(names: usize, latency: Duration) {
    let mut b = DnsServer::builder().bind("127.0.0.1:53".parse().unwrap());
    for phase in 1..=4 {
        for i in 0..names {
            let ip = std::net::Ipv4Addr::new(127, 1, (i / 250) as u8, (i % 250) as u8 + 1);
            b = b.name(&name(phase, i), DnsAnswer::a(ip).after(latency));
        }
    }
    let server = b
        .start()
        .expect("bind 127.0.0.1:53 (run in a namespace of its own)");
    println!("ready");
    let deadline = Instant::now() + Duration::from_secs(30 * 60);
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(200));
    }
    drop(server);
}

/// CPU time (user + system) of this process so far.
fn cpu() -> Duration {
    // SAFETY: getrusage writes the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn report(way: &str, names: usize, wall: Duration, cpu: Option<Duration>, failed: usize) {
    let cpu = cpu.map_or("-".to_string(), |c| {
        format!("{:.3}", c.as_secs_f64() * 1000.0 / names as f64)
    });
    println!(
        "{way:<44} {:>8.2}s {:>9.0} names/s  {cpu:>7} CPU ms/name  {failed} failed",
        wall.as_secs_f64(),
        names as f64 / wall.as_secs_f64(),
    );
}

fn getaddrinfo(host: &str) -> bool {
    (host, 80u16)
        .to_socket_addrs()
        .is_ok_and(|mut a| a.next().is_some())
}

fn measure(fetcher: &str, names: usize, latency: Duration, work: &str) {
    println!(
        "{names} names, each answered after {} ms by a DNS server on loopback",
        latency.as_millis()
    );
    getaddrinfo_one_after_another(names);
    getaddrinfo_64_threads(names);
    let (dns, list) = fetcher_resolver(names);
    fetcher_key_ip(fetcher, names, work);
    answer_already_known(&dns, &list);
}

/// Way 1: the old `--key ip`: getaddrinfo, one name after another.
fn getaddrinfo_one_after_another(names: usize) {
    let (t, c) = (Instant::now(), cpu());
    let failed = (0..names).filter(|&i| !getaddrinfo(&name(1, i))).count();
    report(
        "getaddrinfo, one after another (old --key ip)",
        names,
        t.elapsed(),
        Some(cpu() - c),
        failed,
    );
}

/// Way 2: the old per-request lookups: getaddrinfo from 64 worker threads.
fn getaddrinfo_64_threads(names: usize) {
    let (t, c) = (Instant::now(), cpu());
    let failed: usize = std::thread::scope(|s| {
        let per = names.div_ceil(64);
        let handles: Vec<_> = (0..64)
            .map(|w| {
                s.spawn(move || {
                    (w * per..((w + 1) * per).min(names))
                        .filter(|&i| !getaddrinfo(&name(2, i)))
                        .count()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    });
    report(
        "getaddrinfo, 64 threads",
        names,
        t.elapsed(),
        Some(cpu() - c),
        failed,
    );
}

/// Way 3: the fetcher's resolver: hickory from /etc/resolv.conf behind the
/// cache, 64 lookups in flight on its one thread. Returns the resolver and
/// the names it now knows, for [`answer_already_known`].
fn fetcher_resolver(names: usize) -> (Dns, Vec<String>) {
    let (dns, warning) = Dns::start(DnsConfig {
        server: None,
        timeout: Duration::from_secs(5),
        cache_ttl: Duration::from_secs(600),
        concurrency: 64,
        hosts: None,
    })
    .expect("resolver");
    if let Some(w) = warning {
        eprintln!("{w}");
    }
    let list: Vec<String> = (0..names).map(|i| name(3, i)).collect();
    let (t, c) = (Instant::now(), cpu());
    dns.resolve_ahead(list.iter().map(String::as_str));
    let failed = list.iter().filter(|n| dns.lookup(n).is_err()).count();
    report(
        "fetcher resolver (hickory + cache), 64 in flight",
        names,
        t.elapsed(),
        Some(cpu() - c),
        failed,
    );
    (dns, list)
}

/// Way 4: `fetcher fetch --key ip` end to end: the time it logs for the keys.
fn fetcher_key_ip(fetcher: &str, names: usize, work: &str) {
    let crawl = CrawlDir::create(format!("{work}/crawl")).expect("crawl dir");
    let mut w = SegmentWriter::create(crawl.segment_path("00001")).expect("segment");
    for i in 0..names {
        w.write(&SegmentRecord {
            host: name(4, i),
            url: format!("http://{}/", name(4, i)),
            hops: 0,
            inlinks: 0,
            via: Via::Seed,
            tries: 0,
            not_before: None,
            ..Default::default()
        })
        .expect("segment line");
    }
    w.finish().expect("segment");
    let out = Command::new(fetcher)
        .arg("fetch")
        .arg(crawl.root())
        .args([
            "--agent-name",
            "benchbot",
            "--agent-url",
            "http://bench.test/",
        ])
        .args(["--key", "ip", "--allow-private", "--progress", "none"])
        .args(["--time-limit", "1s", "--connect-timeout", "1s"])
        .output()
        .expect("run the fetcher");
    let log = String::from_utf8_lossy(&out.stderr);
    match log.lines().find_map(|l| {
        let rest = l.split("DNS lookups in ").nth(1)?;
        rest.trim_end_matches('s').parse::<f64>().ok()
    }) {
        Some(secs) => report(
            "fetcher fetch --key ip (keys of the segment)",
            names,
            Duration::from_secs_f64(secs),
            None,
            0,
        ),
        None => eprintln!("no --key ip line in the fetcher's log:\n{log}"),
    }
}

/// Way 5: an answer already known: the cache against getaddrinfo of a name of
/// /etc/hosts (which reads the file on every call).
fn answer_already_known(dns: &Dns, list: &[String]) {
    let n = 200_000;
    let c = cpu();
    for i in 0..n {
        let _ = dns.lookup(&list[i % list.len()]);
    }
    let cached = cpu() - c;
    let m = 20_000;
    let c = cpu();
    for _ in 0..m {
        let _ = getaddrinfo("localhost");
    }
    let hosts_file = cpu() - c;
    println!(
        "answer already known: fetcher cache {:.2} µs CPU per lookup; getaddrinfo of an /etc/hosts name {:.2} µs",
        cached.as_secs_f64() * 1e6 / n as f64,
        hosts_file.as_secs_f64() * 1e6 / m as f64
    );
}
