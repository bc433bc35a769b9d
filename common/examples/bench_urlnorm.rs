//! Throughput of URL canonicalization over a deterministic mix of realistic
//! links (absolute and relative, mostly already canonical, some with
//! fragments, upper-case hosts, default ports, escapes to fix, session ids,
//! and links that are refused).
//!
//! Also measures `UrlFilter::check` (no regex rules, scope by domain) over the
//! canonical URLs, since every link goes through both.
//!
//! Run with `cargo run --release -p common --example bench_urlnorm [COUNT]`.

use std::hint::black_box;
use std::time::Instant;

use common::config::FilterConfig;
use common::filter::{Scope, UrlFilter};
use common::urlnorm::{canonicalize, canonicalize_relative, registrable_domain};
use url::Url;

/// A small deterministic generator (xorshift64*), so every run sees the same URLs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

const WORDS: &[&str] = &[
    "news", "article", "products", "blog", "2024", "about", "contact", "search", "category",
    "item", "docs", "en", "static", "images", "user", "profile", "archive", "tag", "help", "wiki",
];
const TLDS: &[&str] = &["com", "org", "net", "de", "co.uk", "fr", "io", "info"];

fn path(rng: &mut Rng) -> String {
    let mut p = String::new();
    for _ in 0..1 + rng.below(4) {
        p.push('/');
        p.push_str(rng.pick(WORDS));
    }
    match rng.below(4) {
        0 => p.push('/'),
        1 => p.push_str(&format!("/{}.html", rng.below(100_000))),
        2 => p.push_str(&format!("/{}-{}", rng.pick(WORDS), rng.below(1000))),
        _ => {}
    }
    p
}

fn query(rng: &mut Rng) -> String {
    match rng.below(10) {
        0..=5 => String::new(),
        6 | 7 => format!("?id={}", rng.below(1_000_000)),
        8 => format!("?q={}&page={}", rng.pick(WORDS), rng.below(50)),
        _ => format!("?{}={}&sort=asc&lang=en", rng.pick(WORDS), rng.below(99)),
    }
}

fn host(rng: &mut Rng) -> String {
    let sub = ["www.", "", "blog.", "shop.", "m."][rng.below(5) as usize];
    format!("{sub}site{}.{}", rng.below(5000), rng.pick(TLDS))
}

/// An absolute URL as found in a page.
fn absolute(rng: &mut Rng) -> String {
    let scheme = if rng.below(3) == 0 { "http" } else { "https" };
    let (h, p, q) = (host(rng), path(rng), query(rng));
    match rng.below(100) {
        0..=59 => format!("{scheme}://{h}{p}{q}"),
        60..=74 => format!("{scheme}://{h}{p}{q}#section-{}", rng.below(9)),
        75..=79 => format!(
            "{}://{}{}{p}{q}",
            scheme.to_uppercase(),
            h.to_uppercase(),
            if scheme == "http" { ":80" } else { ":443" }
        ),
        80..=84 => format!("{scheme}://{h}{p}/%7e{}/a%20b%2fc{q}", rng.pick(WORDS)),
        85..=87 => format!("{scheme}://{h}{p};jsessionid={:X}{q}", rng.next()),
        88..=90 => format!("{scheme}://{h}{p}?PHPSESSID={:x}&x=1", rng.next()),
        91..=94 => format!("{scheme}://{h}/a/./b/../{}{q}", rng.pick(WORDS)),
        95..=96 => format!("{scheme}://{h}"),
        97 => format!("mailto:info@{h}"),
        98 => "javascript:void(0)".to_string(),
        _ => format!("ftp://{h}{p}"),
    }
}

/// An href as found in a page, relative or absolute.
fn href(rng: &mut Rng) -> String {
    let (p, q) = (path(rng), query(rng));
    match rng.below(10) {
        0..=3 => format!("{p}{q}"),
        4 => format!("../{}{q}", rng.pick(WORDS)),
        5 => format!("{}.html{q}", rng.pick(WORDS)),
        6 => format!("#{}", rng.pick(WORDS)),
        _ => absolute(rng),
    }
}

/// CPU time this thread has run, from `/proc/thread-self/schedstat` (Linux);
/// `None` elsewhere. On a shared machine wall time also counts the time other
/// processes held the CPU; CPU time does not.
fn thread_cpu_secs() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}

fn main() {
    let count: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200_000);
    let rounds = 5;
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let absolutes: Vec<String> = (0..count).map(|_| absolute(&mut rng)).collect();
    let hrefs: Vec<String> = (0..count).map(|_| href(&mut rng)).collect();
    let bases: Vec<Url> = (0..64)
        .map(|_| Url::parse(&format!("https://{}{}", host(&mut rng), path(&mut rng))).unwrap())
        .collect();

    let ok = absolutes.iter().filter(|u| canonicalize(u).is_ok()).count();
    let changed = absolutes
        .iter()
        .filter(|u| canonicalize(u).is_ok_and(|c| c.as_str() != u.as_str()))
        .count();
    println!(
        "{count} absolute URLs: {ok} accepted, {changed} changed by canonicalization; \
         {count} hrefs over {} bases; {rounds} rounds each",
        bases.len()
    );
    println!(
        "{:<32} {:>7} {:>16} {:>20}",
        "function", "threads", "wall URLs/s", "URLs/s per CPU-s"
    );

    let bench = |name: &str, threads: usize, f: &(dyn Fn(usize) -> bool + Sync)| {
        let start = Instant::now();
        let cpu: Vec<Option<f64>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads)
                .map(|t| {
                    s.spawn(move || {
                        let cpu0 = thread_cpu_secs();
                        let mut accepted = 0usize;
                        for _ in 0..rounds {
                            for i in (t..count).step_by(threads) {
                                accepted += f(i) as usize;
                            }
                        }
                        black_box(accepted);
                        Some(thread_cpu_secs()? - cpu0?)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let wall = start.elapsed().as_secs_f64();
        let n = (count * rounds) as f64;
        let per_cpu = match cpu.iter().copied().sum::<Option<f64>>() {
            Some(c) if c > 0.0 => format!("{:.0}", n / c),
            _ => "n/a".to_string(),
        };
        println!("{name:<32} {threads:>7} {:>16.0} {per_cpu:>20}", n / wall);
    };

    let canonical: Vec<String> = absolutes
        .iter()
        .map(|u| canonicalize(u).map_or_else(|_| u.clone(), |c| c.into()))
        .collect();
    let abs = |i: usize| canonicalize(&absolutes[i]).is_ok();
    let already = |i: usize| canonicalize(&canonical[i]).is_ok();
    let rel = |i: usize| canonicalize_relative(&bases[i % bases.len()], &hrefs[i]).is_ok();
    let parse_only = |i: usize| Url::parse(&absolutes[i]).is_ok();
    let parsed: Vec<Url> = absolutes
        .iter()
        .filter_map(|u| canonicalize(u).ok())
        .collect();
    let mut scope = Scope::default();
    for u in parsed.iter().step_by(2) {
        let domain = registrable_domain(u.host_str().unwrap_or(""));
        scope.domains.insert(domain.to_string());
    }
    let filter = UrlFilter {
        limits: FilterConfig::default(),
        scope,
    };
    let check = |i: usize| filter.check(&parsed[i % parsed.len()], 3).is_ok();
    for threads in [1, 2] {
        bench("url::Url::parse (reference)", threads, &parse_only);
        bench("canonicalize (absolute)", threads, &abs);
        bench("canonicalize (already canonical)", threads, &already);
        bench("canonicalize_relative (hrefs)", threads, &rel);
        bench("UrlFilter::check", threads, &check);
    }
}
