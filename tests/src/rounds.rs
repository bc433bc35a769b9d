//! The rounds web: a web whose politeness floor is known, for the rounds
//! benchmark (`scripts/bench-rounds.sh`, served by `demo-web rounds-web`).
//!
//! One large host, `big.rounds.test`, of [`RoundsParams::large_pages`] pages
//! spread evenly over link depths 1 to [`MAX_DEPTH`] from its home page, and
//! [`RoundsParams::small_hosts`] small hosts `s1.rounds.test`, ... of 3 to 10
//! pages each (how many, and how deep, drawn from the seed). Every host's
//! home page is a seed; robots.txt answers 404 (allow all). An offline
//! crawler needs a round per depth, and however it schedules them it cannot
//! end before the large host has had all its requests, robots.txt included,
//! one delay apart: that is the floor, `largest host's requests × delay`
//! ([`RoundsWeb::floor`]).
//!
//! With [`RoundsParams::tail`], four more hosts give the crawl the tail the
//! web has, each a seed too, and linked from a page of the large host at
//! every depth, so that every round meets them:
//! - `hole.rounds.test` accepts connections and never answers (robots.txt
//!   included): nothing may be fetched;
//! - `broken.rounds.test`: robots.txt answers 500: nothing may be fetched;
//! - `gone.rounds.test`: in the hosts file, nothing listens: refused;
//! - `slow.rounds.test`: 10 pages down to depth 6 behind a `Crawl-delay` of
//!   [`RoundsParams::crawl_delay`] seconds.
//!
//! ```
//! use testkit::rounds::{RoundsParams, RoundsWeb};
//!
//! let web = RoundsWeb::generate(RoundsParams {
//!     small_hosts: 5,
//!     ..RoundsParams::default()
//! });
//! assert_eq!(web.largest().requests(), 61);
//! let served = web.serve(Default::default()).unwrap();
//! assert_eq!(served.seeds_file().lines().count(), 6);
//! // At one request per second, the crawl cannot take less than 61 s.
//! assert_eq!(web.floor(1.0), 61.0);
//! ```

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::fmt::Write as _;
use std::net::Ipv4Addr;
use std::sync::Arc;

use crate::server::{Observer, Request, Response, Server, consecutive_addresses};

/// The registrable domain of every host of the rounds web.
pub const ROUNDS_DOMAIN: &str = "rounds.test";

/// The address of the first host when served (the others follow it).
pub const FIRST_ROUNDS_ADDRESS: Ipv4Addr = Ipv4Addr::new(127, 4, 0, 1);

/// The deepest page of any host, in links from its home page.
pub const MAX_DEPTH: u32 = 6;

/// Fewest and most pages of a small host (home page included).
pub const SMALL_PAGES: (usize, usize) = (3, 10);

/// Pages of the `Crawl-delay` host of the tail.
const SLOW_PAGES: usize = 10;

/// What to generate.
#[derive(Debug, Clone)]
pub struct RoundsParams {
    /// Seed of the generator: the same seed gives the same web.
    pub seed: u64,
    /// Pages of the large host, home page included (at least
    /// `MAX_DEPTH + 1` for a page at every depth).
    pub large_pages: usize,
    /// Number of small hosts.
    pub small_hosts: usize,
    /// Add the tail hosts (black hole, robots.txt 500, refused, Crawl-delay).
    pub tail: bool,
    /// The `Crawl-delay` of `slow.rounds.test`, in seconds.
    pub crawl_delay: f64,
}

impl Default for RoundsParams {
    /// Seed 1, 60 pages on the large host, 200 small hosts, no tail, a
    /// `Crawl-delay` of 3 s for the tail's slow host.
    fn default() -> Self {
        RoundsParams {
            seed: 1,
            large_pages: 60,
            small_hosts: 200,
            tail: false,
            crawl_delay: 3.0,
        }
    }
}

/// What a host of the rounds web is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RoundsRole {
    /// `big`: the host that sets the floor.
    Large,
    /// `s1`, `s2`, ...: 3 to 10 pages.
    Small,
    /// `hole` (tail): accepts connections, never answers.
    BlackHole,
    /// `broken` (tail): robots.txt answers 500.
    RobotsError,
    /// `gone` (tail): nothing listens; connections are refused.
    Refuses,
    /// `slow` (tail): robots.txt sets a `Crawl-delay`.
    CrawlDelay,
}

impl RoundsRole {
    /// Its name in descriptions (`large`, `small`, `black-hole`,
    /// `robots-500`, `refused`, `crawl-delay`).
    pub fn name(self) -> &'static str {
        match self {
            RoundsRole::Large => "large",
            RoundsRole::Small => "small",
            RoundsRole::BlackHole => "black-hole",
            RoundsRole::RobotsError => "robots-500",
            RoundsRole::Refuses => "refused",
            RoundsRole::CrawlDelay => "crawl-delay",
        }
    }
}

/// One host of the rounds web.
#[derive(Debug, Clone)]
pub struct RoundsHost {
    /// Its name (`s7.rounds.test`).
    pub name: String,
    /// What it is.
    pub role: RoundsRole,
    /// Pages a correct crawl fetches there, home page included (0 on the
    /// hosts where nothing may be fetched).
    pub pages: usize,
    /// Its deepest page, in links from its home page.
    pub depth: u32,
    /// The `Crawl-delay` its robots.txt sets, in seconds.
    pub crawl_delay: Option<f64>,
}

impl RoundsHost {
    /// Requests a correct crawl makes there: its pages and robots.txt (0 on
    /// the hosts where nothing may be fetched, whose robots.txt a crawler
    /// may ask for several times).
    pub fn requests(&self) -> usize {
        if self.pages == 0 { 0 } else { self.pages + 1 }
    }
}

/// A page: its depth and the links it holds (host index and target).
#[derive(Debug, Clone)]
struct Page {
    depth: u32,
    links: Vec<(usize, String)>,
}

/// The generated web (cheap to clone).
#[derive(Debug, Clone)]
pub struct RoundsWeb {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    params: RoundsParams,
    hosts: Vec<RoundsHost>,
    /// Per host, its pages by target.
    pages: Vec<HashMap<String, Page>>,
}

/// The target of page `i` (1, 2, ...) at `depth`; the home page is `/`.
fn target(depth: u32, i: usize) -> String {
    if depth == 0 {
        "/".to_string()
    } else {
        format!("/d{depth}/p{i}.html")
    }
}

/// The pages of a host of `count` pages (home included) spread evenly over
/// depths 1 to `depth`, each linked from a page one level up and linking
/// home.
fn site(count: usize, depth: u32) -> HashMap<String, Page> {
    let count = count.max(1);
    let others = count - 1;
    let depth = depth.min(others as u32);
    let mut levels: Vec<Vec<String>> = vec![vec![target(0, 0)]];
    levels.resize(depth as usize + 1, Vec::new());
    for i in 1..=others {
        // (i - 1) * depth / others covers 0..depth in steps of at most one.
        let d = 1 + ((i - 1) * depth as usize / others) as u32;
        levels[d as usize].push(target(d, i));
    }
    let mut pages: HashMap<String, Page> = HashMap::new();
    for (d, level) in levels.iter().enumerate() {
        for t in level {
            let links = if d == 0 {
                Vec::new()
            } else {
                vec![(usize::MAX, target(0, 0))]
            };
            pages.insert(
                t.clone(),
                Page {
                    depth: d as u32,
                    links,
                },
            );
        }
    }
    // Each page below the home page is linked from one a level up, in turn.
    for d in 1..levels.len() {
        let parents = &levels[d - 1];
        for (j, t) in levels[d].iter().enumerate() {
            let parent = &parents[j % parents.len()];
            if let Some(p) = pages.get_mut(parent) {
                p.links.push((usize::MAX, t.clone()));
            }
        }
    }
    pages
}

impl RoundsWeb {
    /// Generates the web of `params`.
    pub fn generate(params: RoundsParams) -> RoundsWeb {
        let mut rng = crate::web_rng(params.seed);
        let mut hosts = Vec::new();
        let mut pages = Vec::new();
        let mut add = |name: String, role, site: HashMap<String, Page>, crawl_delay| {
            let depth = site.values().map(|p| p.depth).max().unwrap_or(0);
            hosts.push(RoundsHost {
                name: format!("{name}.{ROUNDS_DOMAIN}"),
                role,
                pages: site.len(),
                depth,
                crawl_delay,
            });
            pages.push(site);
        };
        add(
            "big".into(),
            RoundsRole::Large,
            site(params.large_pages, MAX_DEPTH),
            None,
        );
        let (fewest, most) = SMALL_PAGES;
        for i in 1..=params.small_hosts {
            let count = fewest + rng.below(most - fewest + 1);
            let depth = 1 + rng.below((count - 1).min(MAX_DEPTH as usize)) as u32;
            add(format!("s{i}"), RoundsRole::Small, site(count, depth), None);
        }
        if params.tail {
            add("hole".into(), RoundsRole::BlackHole, HashMap::new(), None);
            add(
                "broken".into(),
                RoundsRole::RobotsError,
                HashMap::new(),
                None,
            );
            add("gone".into(), RoundsRole::Refuses, HashMap::new(), None);
            add(
                "slow".into(),
                RoundsRole::CrawlDelay,
                site(SLOW_PAGES, MAX_DEPTH),
                Some(params.crawl_delay),
            );
        }
        // Links within a host were written with `usize::MAX`: resolve them.
        for (h, site) in pages.iter_mut().enumerate() {
            for page in site.values_mut() {
                for link in &mut page.links {
                    if link.0 == usize::MAX {
                        link.0 = h;
                    }
                }
            }
        }
        if params.tail {
            // The first page of the large host at each depth links one page
            // of each tail host that cannot be fetched, new in every round.
            let dead: Vec<usize> = (0..hosts.len())
                .filter(|&h| {
                    matches!(
                        hosts[h].role,
                        RoundsRole::BlackHole | RoundsRole::RobotsError | RoundsRole::Refuses
                    )
                })
                .collect();
            for d in 1..=hosts[0].depth {
                let first = pages[0]
                    .iter()
                    .filter(|(_, p)| p.depth == d)
                    .map(|(t, _)| t.clone())
                    .min_by_key(|t| page_number(t));
                if let Some(first) = first
                    && let Some(page) = pages[0].get_mut(&first)
                {
                    for &h in &dead {
                        page.links.push((h, format!("/d{d}.html")));
                    }
                }
            }
        }
        RoundsWeb {
            inner: Arc::new(Inner {
                params,
                hosts,
                pages,
            }),
        }
    }

    /// The parameters it was generated with.
    pub fn params(&self) -> &RoundsParams {
        &self.inner.params
    }

    /// Every host, in address order; the large host first.
    pub fn hosts(&self) -> &[RoundsHost] {
        &self.inner.hosts
    }

    /// The host with the most requests: the large host, unless it was made
    /// smaller than a small one (the first of equals).
    pub fn largest(&self) -> &RoundsHost {
        self.inner
            .hosts
            .iter()
            .min_by_key(|h| std::cmp::Reverse(h.requests()))
            .expect("the large host is always there")
    }

    /// Pages a correct crawl fetches, over all hosts.
    pub fn total_pages(&self) -> usize {
        self.inner.hosts.iter().map(|h| h.pages).sum()
    }

    /// The politeness floor in seconds with `delay` seconds between two
    /// requests to a host: the most, over hosts, of requests × delay (the
    /// host's `Crawl-delay` where it is longer). Without the tail, the large
    /// host's requests × `delay`.
    pub fn floor(&self, delay: f64) -> f64 {
        self.inner
            .hosts
            .iter()
            .map(|h| h.requests() as f64 * h.crawl_delay.unwrap_or(0.0).max(delay))
            .fold(0.0, f64::max)
    }

    /// The targets of the pages of host `host` with their depth, sorted.
    pub fn pages_of(&self, host: usize) -> Vec<(String, u32)> {
        let mut out: Vec<(String, u32)> = self.inner.pages[host]
            .iter()
            .map(|(t, p)| (t.clone(), p.depth))
            .collect();
        out.sort_by_key(|(t, _)| (page_number(t), t.clone()));
        out
    }

    /// The links of page `target` of host `host`: host index and target.
    pub fn links_of(&self, host: usize, target: &str) -> Option<Vec<(usize, String)>> {
        self.inner.pages[host].get(target).map(|p| p.links.clone())
    }

    /// Serves the web: one listener per host (except the one that refuses
    /// connections) on consecutive loopback addresses, one shared port.
    pub fn serve(&self, options: RoundsServeOptions) -> std::io::Result<RoundsServer> {
        let addrs = consecutive_addresses(options.first_address, self.inner.hosts.len())?;
        let mut builder = Server::builder()
            .request_log(options.request_log)
            .first_address(options.first_address);
        if let Some(port) = options.port {
            builder = builder.port(port);
        }
        if let Some(observer) = options.on_request {
            builder = builder.on_request(observer);
        }
        for (h, host) in self.inner.hosts.iter().enumerate() {
            if host.role == RoundsRole::Refuses {
                continue;
            }
            let inner = Arc::clone(&self.inner);
            builder = builder.host_at(host.name.clone(), addrs[h], move |req: &Request| {
                inner.answer(h, req)
            });
        }
        let server = builder.start()?;
        Ok(RoundsServer {
            web: self.clone(),
            server,
            addrs,
        })
    }
}

/// The number in a page's target (`/d3/p17.html` → 17; home → 0), to list
/// pages in a natural order.
fn page_number(target: &str) -> usize {
    target
        .rsplit('/')
        .next()
        .and_then(|f| f.strip_prefix('p'))
        .and_then(|f| f.strip_suffix(".html"))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

impl Inner {
    fn answer(&self, h: usize, req: &Request) -> Response {
        let host = &self.hosts[h];
        if host.role == RoundsRole::BlackHole {
            return Response::never_answer();
        }
        if req.path() == "/robots.txt" {
            return match (host.role, host.crawl_delay) {
                (RoundsRole::RobotsError, _) => Response::status(500)
                    .header("Content-Type", "text/plain; charset=utf-8")
                    .body(&b"robots.txt is broken\n"[..]),
                (_, Some(delay)) => {
                    Response::text(format!("User-agent: *\nCrawl-delay: {delay}\n"))
                }
                _ => Response::not_found(),
            };
        }
        match self.pages[h].get(req.target()) {
            Some(page) => {
                Response::html(self.render(h, req.target(), page, req.local_addr().port()))
            }
            None => Response::not_found(),
        }
    }

    fn render(&self, h: usize, target: &str, page: &Page, port: u16) -> String {
        let name = &self.hosts[h].name;
        let mut doc = format!(
            "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n\
             <title>{name}{target}</title>\n</head>\n<body>\n<h1>{name}{target}</h1>\n\
             <p>Page at depth {} of a host of the rounds web.</p>\n<ul>\n",
            page.depth
        );
        for (to, t) in &page.links {
            let href = if *to == h {
                t.clone()
            } else {
                format!("http://{}:{port}{t}", self.hosts[*to].name)
            };
            let _ = writeln!(doc, "<li><a href=\"{href}\">{href}</a></li>");
        }
        doc.push_str("</ul>\n</body>\n</html>\n");
        doc
    }
}

/// How to serve the rounds web.
pub struct RoundsServeOptions {
    /// The shared port (default: a free one).
    pub port: Option<u16>,
    /// The first host's address (default [`FIRST_ROUNDS_ADDRESS`]).
    pub first_address: Ipv4Addr,
    /// Keep the request logs in memory (default false: benchmarks run long).
    pub request_log: bool,
    /// Called with each request's log entry as it completes.
    pub on_request: Option<Observer>,
}

impl Default for RoundsServeOptions {
    fn default() -> Self {
        RoundsServeOptions {
            port: None,
            first_address: FIRST_ROUNDS_ADDRESS,
            request_log: false,
            on_request: None,
        }
    }
}

/// The rounds web being served; dropping it stops the servers.
pub struct RoundsServer {
    web: RoundsWeb,
    server: Server,
    addrs: Vec<Ipv4Addr>,
}

impl std::fmt::Debug for RoundsServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RoundsServer")
            .field("port", &self.server.port())
            .field("hosts", &self.addrs.len())
            .finish()
    }
}

impl RoundsServer {
    /// The web being served.
    pub fn web(&self) -> &RoundsWeb {
        &self.web
    }

    /// The underlying server (request logs, counters).
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// The shared port.
    pub fn port(&self) -> u16 {
        self.server.port()
    }

    /// The loopback address of each host, in [`RoundsWeb::hosts`] order.
    pub fn addrs(&self) -> &[Ipv4Addr] {
        &self.addrs
    }

    /// The canonical URL of `target` on host number `host`.
    pub fn url(&self, host: usize, target: &str) -> String {
        format!(
            "http://{}:{}{target}",
            self.web.inner.hosts[host].name,
            self.port()
        )
    }

    /// The seeds file: every host's home page, one URL per line.
    pub fn seeds_file(&self) -> String {
        (0..self.web.inner.hosts.len())
            .map(|h| format!("{}\n", self.url(h, "/")))
            .collect()
    }

    /// `IP NAME` lines for every host, including the one where nothing
    /// listens (the format of `fetcher --hosts-file`).
    pub fn hosts_file(&self) -> String {
        self.web
            .inner
            .hosts
            .iter()
            .zip(&self.addrs)
            .map(|(h, a)| format!("{a} {}\n", h.name))
            .collect()
    }

    /// The description a benchmark reads (JSON, format version 1): the
    /// number of hosts, the pages a correct crawl fetches in all, the
    /// deepest page, the large host's pages and requests (robots.txt
    /// included), and per host its name, role, address, pages, requests,
    /// depth and `Crawl-delay` (or null).
    pub fn description(&self) -> serde_json::Value {
        let web = &self.web;
        let p = web.params();
        let largest = web.largest();
        let per_host: Vec<serde_json::Value> = web
            .hosts()
            .iter()
            .zip(&self.addrs)
            .map(|(h, a)| {
                serde_json::json!({
                    "name": h.name,
                    "role": h.role.name(),
                    "address": a.to_string(),
                    "pages": h.pages,
                    "requests": h.requests(),
                    "depth": h.depth,
                    "crawl_delay": h.crawl_delay,
                })
            })
            .collect();
        serde_json::json!({
            "version": 1,
            "seed": p.seed,
            "port": self.port(),
            "tail": p.tail,
            "hosts": web.hosts().len(),
            "total_pages": web.total_pages(),
            "total_requests": web.hosts().iter().map(RoundsHost::requests).sum::<usize>(),
            "max_depth": web.hosts().iter().map(|h| h.depth).max().unwrap_or(0),
            "largest_host": largest.name,
            "largest_host_pages": largest.pages,
            "largest_host_requests": largest.requests(),
            "per_host": per_host,
        })
    }
}
