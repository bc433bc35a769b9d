//! The scale web: a linked web of many hosts, large enough to measure the
//! whole crawl cycle (`scripts/bench-scale.sh`, served by `scale-web
//! serve`), whose every page and link is computed from its URL.
//!
//! [`ScaleParams::hosts`] hosts `h00000.scale.test`, `h00001.scale.test`,
//! ... of [`ScaleParams::pages`] pages each: the home page `/` and
//! `/p/1.html` up to `/p/{pages-1}.html`, a few KB of HTML each. Nothing is
//! stored: the links of a page come from a generator seeded with the web's
//! seed, the host and the page number ([`ScaleWeb::links`]), so a web of a
//! million pages costs no memory and a server answers any page at once.
//!
//! Every page links
//! - its host's home page and two pages below it (page `p` links `2p + 1`
//!   and `2p + 2`: every page of a host is reachable from its home page);
//! - [`ScaleParams::local_links`] pages of its own host, and
//!   [`ScaleParams::cross_links`] pages of other hosts, both drawn with a
//!   skew towards low numbers (the first hosts, and the first pages of a
//!   host, have most of the in-links; the rest is a long tail);
//! - [`ScaleParams::hub_links`] of the hubs, the home pages of the first
//!   [`ScaleParams::hubs`] hosts, drawn with a skew too (most pages link the
//!   first hub);
//! - the home page of one host picked by a one-to-one map of all the pages
//!   onto the hosts (every host's home page is linked from exactly `pages`
//!   pages of the web, spread over it);
//! - sometimes a redirect (`/r/N`, answered `301` to `/p/N.html`), a
//!   broken link (`/gone/K.html`, `404`), a page robots.txt disallows
//!   (`/private/K.html` on the hosts whose robots.txt has rules) and a host
//!   out of scope (`wwwK.outside.test`).
//!
//! robots.txt varies by host ([`RobotsKind`]): most answer 404, some allow
//! all explicitly, some disallow `/private/`, and a few disallow everything
//! to the crawler's product token ([`ScaleParams::agent`]) while allowing
//! other agents. [`ScaleParams::slow_hosts`] hosts answer every request
//! [`ScaleParams::slow_ms`] milliseconds late. The seeds are the home pages
//! of [`ScaleParams::seeds`] hosts spread over the web (none of them a hub),
//! so a crawl discovers the web round by round.
//!
//! [`ScaleWeb::expected`] walks the web from the seeds as a correct crawler
//! does (breadth first, robots.txt obeyed, redirects followed as links) and
//! gives every URL it fetches with its hops; [`pagerank`] computes the
//! PageRank of that graph; [`serve`] serves the web from one thread on one
//! loopback address per host, counting from the server's side what a crawl
//! must never do (ask a URL twice, two requests to a host closer than the
//! delay, a URL robots.txt disallows).
//!
//! ```
//! use testkit::scale::{Node, ScaleParams, ScaleWeb};
//!
//! let web = ScaleWeb::new(ScaleParams { hosts: 50, pages: 20, ..ScaleParams::default() });
//! let expected = web.expected();
//! let seed = web.seeds()[0];
//! assert_eq!(expected.hops(seed), Some(0));
//! // Every page of a host whose robots.txt allows it is reached.
//! let page = Node::Page { host: seed.host(), page: 19 };
//! assert!(expected.hops(page).is_some());
//! assert_eq!(web.target(page), "/p/19.html");
//! assert_eq!(web.node_of_url("http://h00000.scale.test:8080/p/19.html"),
//!            Some(Node::Page { host: 0, page: 19 }));
//! ```

mod page;
pub mod pagerank;
pub mod serve;
#[cfg(test)]
mod tests;

use std::net::Ipv4Addr;

use crate::Rng;

pub use pagerank::{Graph, pagerank};

/// The registrable domain of every host of the scale web.
pub const SCALE_DOMAIN: &str = "scale.test";

/// The address of the first host when served (the others follow it).
pub const FIRST_SCALE_ADDRESS: Ipv4Addr = Ipv4Addr::new(127, 8, 0, 1);

/// Where the out-of-scope names point in the hosts file: an address where
/// nothing listens, so that a crawler that wrongly followed such a link
/// would be refused on loopback rather than ask a name server.
pub const OUTSIDE_ADDRESS: Ipv4Addr = Ipv4Addr::new(127, 7, 255, 254);

/// The product token the robots.txt files that shut the crawler out name,
/// by default.
pub const SCALE_AGENT: &str = "scalebot";

/// Broken links (`/gone/K.html`) a host can have.
pub const GONE_PER_HOST: u32 = 8;

/// Pages robots.txt disallows (`/private/K.html`) a host can have.
pub const PRIVATE_PER_HOST: u32 = 8;

/// Out-of-scope hosts linked (`wwwK.outside.test`).
pub const OUTSIDE_HOSTS: u32 = 10;

/// What to generate.
#[derive(Debug, Clone)]
pub struct ScaleParams {
    /// Seed of the generator: the same seed gives the same web.
    pub seed: u64,
    /// Number of hosts.
    pub hosts: u32,
    /// Pages of each host, home page included (at least 1).
    pub pages: u32,
    /// Hosts whose home page is a seed.
    pub seeds: u32,
    /// Hubs: the home pages of the first `hubs` hosts.
    pub hubs: u32,
    /// Links of each page to the hubs (drawn, so two may coincide).
    pub hub_links: u32,
    /// Links of each page to pages of its own host, besides its home page
    /// and the two below it.
    pub local_links: u32,
    /// Links of each page to pages of other hosts.
    pub cross_links: u32,
    /// Bytes of HTML a page has, about (at least its links).
    pub page_bytes: usize,
    /// Hosts answering every request late.
    pub slow_hosts: u32,
    /// How late the slow hosts answer, in milliseconds.
    pub slow_ms: u64,
    /// The product token the shut-out hosts' robots.txt names.
    pub agent: String,
}

impl Default for ScaleParams {
    /// Seed 1, 1,000 hosts of 100 pages, 3 seeds, 10 hubs, about 20 links
    /// (16 different URLs) and 4 KB a page, one host answering 200 ms late, agent `scalebot`.
    fn default() -> Self {
        ScaleParams {
            seed: 1,
            hosts: 1000,
            pages: 100,
            seeds: 3,
            hubs: 10,
            hub_links: 2,
            local_links: 6,
            cross_links: 8,
            page_bytes: 4000,
            slow_hosts: 1,
            slow_ms: 200,
            agent: SCALE_AGENT.to_string(),
        }
    }
}

/// What a host's robots.txt says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RobotsKind {
    /// No robots.txt (`404`): everything allowed.
    Missing,
    /// `200`, allows everything to every agent.
    AllowAll,
    /// `200`, disallows `/private/` to every agent.
    Private,
    /// `200`, disallows everything to the crawler's product token (other
    /// agents may fetch everything): only robots.txt is fetched there.
    ShutOut,
}

impl RobotsKind {
    /// Its name in descriptions (`missing`, `allow-all`, `private`,
    /// `shut-out`).
    pub fn name(self) -> &'static str {
        match self {
            RobotsKind::Missing => "missing",
            RobotsKind::AllowAll => "allow-all",
            RobotsKind::Private => "private",
            RobotsKind::ShutOut => "shut-out",
        }
    }
}

/// A URL of the scale web that a crawl may fetch, or that a link names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Node {
    /// Page `page` of host `host` (`/` for page 0, else `/p/PAGE.html`).
    Page {
        /// Host number.
        host: u32,
        /// Page number.
        page: u32,
    },
    /// `/r/PAGE`: a `301` to page `page` of the same host (never 0).
    Redirect {
        /// Host number.
        host: u32,
        /// The page it redirects to.
        page: u32,
    },
    /// `/gone/K.html`: a broken link, `404`.
    Gone {
        /// Host number.
        host: u32,
        /// Which of the host's broken links (below [`GONE_PER_HOST`]).
        k: u32,
    },
    /// `/private/K.html`: a page robots.txt disallows where the host has
    /// [`RobotsKind::Private`] rules (`200` if asked anyway).
    Private {
        /// Host number.
        host: u32,
        /// Which of the host's private pages (below [`PRIVATE_PER_HOST`]).
        k: u32,
    },
    /// `http://wwwK.outside.test/`: out of the crawl's scope.
    Outside {
        /// Which outside host (below [`OUTSIDE_HOSTS`]).
        k: u32,
    },
}

impl Node {
    /// The host number (0 for [`Node::Outside`], which has none in the web).
    pub fn host(self) -> u32 {
        match self {
            Node::Page { host, .. }
            | Node::Redirect { host, .. }
            | Node::Gone { host, .. }
            | Node::Private { host, .. } => host,
            Node::Outside { .. } => 0,
        }
    }
}

/// The generated web (its parameters; every page is computed on demand).
#[derive(Debug, Clone)]
pub struct ScaleWeb {
    params: ScaleParams,
    /// Multiplier of the one-to-one map of pages onto hosts (coprime with
    /// the number of pages).
    spread: u64,
    /// The seed hosts, in order.
    seed_hosts: Vec<u32>,
    /// The slow hosts, in order.
    slow_hosts: Vec<u32>,
}

/// A number in `0..n` drawn with a skew towards 0: `n × u^power` for `u`
/// uniform in `[0, 1)`.
fn skewed(rng: &mut Rng, n: u32, power: f64) -> u32 {
    let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    ((n as f64 * u.powf(power)) as u32).min(n.saturating_sub(1))
}

/// A seed for `(a, b)` under the web's seed: one generator per page.
fn mix(seed: u64, a: u64, b: u64) -> u64 {
    Rng::new(seed ^ a.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ b.rotate_left(32)).next_u64()
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl ScaleWeb {
    /// The web of `params` (hosts and pages at least 1; hubs and seeds at
    /// most the hosts).
    pub fn new(mut params: ScaleParams) -> ScaleWeb {
        params.hosts = params.hosts.max(1);
        params.pages = params.pages.max(1);
        params.hubs = params.hubs.min(params.hosts);
        params.seeds = params.seeds.clamp(1, params.hosts);
        params.slow_hosts = params.slow_hosts.min(params.hosts);
        let total = params.hosts as u64 * params.pages as u64;
        // Any number coprime with the total maps 0..total onto itself.
        let spread = [1_000_003u64, 998_244_353, 2_147_483_647, 7919, 1]
            .into_iter()
            .find(|&a| gcd(a, total) == 1)
            .unwrap_or(1);
        let (first, span) = if params.hubs < params.hosts {
            (params.hubs, params.hosts - params.hubs)
        } else {
            (0, params.hosts)
        };
        let count = params.seeds.min(span) as u64;
        let mut seed_hosts: Vec<u32> = (0..count)
            .map(|i| first + ((2 * i + 1) * span as u64 / (2 * count)) as u32)
            .collect();
        seed_hosts.dedup();
        let mut slow_hosts: Vec<u32> = (params.hubs..params.hosts)
            .rev()
            .filter(|h| seed_hosts.binary_search(h).is_err())
            .take(params.slow_hosts as usize)
            .collect();
        slow_hosts.sort_unstable();
        ScaleWeb {
            params,
            spread,
            seed_hosts,
            slow_hosts,
        }
    }

    /// The parameters (after the bounds of [`ScaleWeb::new`]).
    pub fn params(&self) -> &ScaleParams {
        &self.params
    }

    /// Pages over all hosts (`hosts × pages`).
    pub fn total_pages(&self) -> u64 {
        self.params.hosts as u64 * self.params.pages as u64
    }

    /// The name of host `host`: `h00042.scale.test`.
    pub fn host_name(&self, host: u32) -> String {
        format!("h{host:05}.{SCALE_DOMAIN}")
    }

    /// The host number of a name of the web (`h00042.scale.test` → 42).
    pub fn host_of_name(&self, name: &str) -> Option<u32> {
        let digits = name.strip_prefix('h')?.strip_suffix(SCALE_DOMAIN)?;
        let digits = digits.strip_suffix('.')?;
        let n: u32 = digits.parse().ok()?;
        (n < self.params.hosts && digits == format!("{n:05}")).then_some(n)
    }

    /// What host `host`'s robots.txt says: the hubs, the seeds and the slow
    /// hosts have none; of the others about 2 % shut the crawler out, 5 %
    /// disallow `/private/`, 5 % allow all explicitly.
    pub fn robots_kind(&self, host: u32) -> RobotsKind {
        if host < self.params.hubs || self.is_seed_host(host) || self.is_slow(host) {
            return RobotsKind::Missing;
        }
        let mut rng = Rng::new(mix(self.params.seed, 0xB0B0, host as u64));
        match rng.below(100) {
            0..2 => RobotsKind::ShutOut,
            2..7 => RobotsKind::Private,
            7..12 => RobotsKind::AllowAll,
            _ => RobotsKind::Missing,
        }
    }

    /// Whether host `host` answers late.
    pub fn is_slow(&self, host: u32) -> bool {
        self.slow_hosts.binary_search(&host).is_ok()
    }

    /// The slow hosts, in order: the last `slow_hosts` hosts that are not
    /// seeds or hubs.
    pub fn slow_hosts(&self) -> &[u32] {
        &self.slow_hosts
    }

    /// The seed hosts, in order: `seeds` hosts evenly spread over the hosts
    /// that are not hubs (over all hosts when every host is a hub).
    pub fn seed_hosts(&self) -> &[u32] {
        &self.seed_hosts
    }

    fn is_seed_host(&self, host: u32) -> bool {
        self.seed_hosts.binary_search(&host).is_ok()
    }

    /// The seeds: the seed hosts' home pages.
    pub fn seeds(&self) -> Vec<Node> {
        self.seed_hosts
            .iter()
            .map(|&host| Node::Page { host, page: 0 })
            .collect()
    }

    /// The path (and query) of `node` on its host (`/` for an
    /// [`Node::Outside`] home page).
    pub fn target(&self, node: Node) -> String {
        match node {
            Node::Page { page: 0, .. } | Node::Outside { .. } => "/".to_string(),
            Node::Page { page, .. } => format!("/p/{page}.html"),
            Node::Redirect { page, .. } => format!("/r/{page}"),
            Node::Gone { k, .. } => format!("/gone/{k}.html"),
            Node::Private { k, .. } => format!("/private/{k}.html"),
        }
    }

    /// The URL of `node` in the crawler's canonical form, on `port` (80 is
    /// left out).
    pub fn url(&self, node: Node, port: u16) -> String {
        let host = match node {
            Node::Outside { k } => format!("www{k}.outside.test"),
            _ => self.host_name(node.host()),
        };
        let port = if port == 80 {
            String::new()
        } else {
            format!(":{port}")
        };
        format!("http://{host}{port}{}", self.target(node))
    }

    /// The node a request for `target` on host `host` asks for, if the web
    /// has it (exact spellings only: `/p/07.html` is not page 7).
    pub fn node_of_target(&self, host: u32, target: &str) -> Option<Node> {
        let p = &self.params;
        let number = |s: &str, below: u32| -> Option<u32> {
            let n: u32 = s.parse().ok()?;
            (n < below && n.to_string() == s).then_some(n)
        };
        if target == "/" {
            return Some(Node::Page { host, page: 0 });
        }
        if let Some(rest) = target
            .strip_prefix("/p/")
            .and_then(|r| r.strip_suffix(".html"))
        {
            let page = number(rest, p.pages)?;
            return (page > 0).then_some(Node::Page { host, page });
        }
        if let Some(rest) = target.strip_prefix("/r/") {
            let page = number(rest, p.pages)?;
            return (page > 0).then_some(Node::Redirect { host, page });
        }
        if let Some(rest) = target
            .strip_prefix("/gone/")
            .and_then(|r| r.strip_suffix(".html"))
        {
            return Some(Node::Gone {
                host,
                k: number(rest, GONE_PER_HOST)?,
            });
        }
        if let Some(rest) = target
            .strip_prefix("/private/")
            .and_then(|r| r.strip_suffix(".html"))
        {
            return Some(Node::Private {
                host,
                k: number(rest, PRIVATE_PER_HOST)?,
            });
        }
        None
    }

    /// The node of an absolute URL of the web (`http://HOST[:PORT]/...`,
    /// any port), if it has one. Out-of-scope hosts give `None`.
    pub fn node_of_url(&self, url: &str) -> Option<Node> {
        let rest = url.strip_prefix("http://")?;
        let (authority, target) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        let name = authority.split(':').next()?;
        self.node_of_target(self.host_of_name(name)?, target)
    }

    /// The links of page `page` of host `host`, in the order the page shows
    /// them (the same URL may appear twice).
    pub fn links(&self, host: u32, page: u32) -> Vec<Node> {
        let p = &self.params;
        let mut rng = Rng::new(mix(p.seed, host as u64, page as u64));
        let mut out =
            Vec::with_capacity((6 + p.hub_links + p.local_links + p.cross_links) as usize);
        let here = |page| Node::Page { host, page };
        if page != 0 {
            out.push(here(0));
        }
        for child in [2 * page as u64 + 1, 2 * page as u64 + 2] {
            if child < p.pages as u64 {
                out.push(here(child as u32));
            }
        }
        for _ in 0..p.hub_links.min(p.hubs) {
            out.push(Node::Page {
                host: skewed(&mut rng, p.hubs, 2.0),
                page: 0,
            });
        }
        for _ in 0..p.local_links {
            out.push(here(skewed(&mut rng, p.pages, 5.0)));
        }
        for _ in 0..p.cross_links {
            out.push(Node::Page {
                host: skewed(&mut rng, p.hosts, 3.0),
                page: skewed(&mut rng, p.pages, 5.0),
            });
        }
        // The one-to-one map: page i of the web links host spread(i)'s home.
        let i = host as u64 * p.pages as u64 + page as u64;
        let j = (i * self.spread + p.seed) % self.total_pages();
        out.push(Node::Page {
            host: (j / p.pages as u64) as u32,
            page: 0,
        });
        if p.pages > 1 && rng.chance(0.1) {
            out.push(Node::Redirect {
                host,
                page: 1 + rng.below(p.pages as usize - 1) as u32,
            });
        }
        if rng.chance(0.05) {
            out.push(Node::Gone {
                host,
                k: rng.below(GONE_PER_HOST as usize) as u32,
            });
        }
        if self.robots_kind(host) == RobotsKind::Private && rng.chance(0.3) {
            out.push(Node::Private {
                host,
                k: rng.below(PRIVATE_PER_HOST as usize) as u32,
            });
        }
        if rng.chance(0.05) {
            out.push(Node::Outside {
                k: rng.below(OUTSIDE_HOSTS as usize) as u32,
            });
        }
        out
    }

    /// The links a fetch of `node` gives a crawler: a page's links, a
    /// redirect's target; nothing for the others.
    pub fn outlinks(&self, node: Node) -> Vec<Node> {
        match node {
            Node::Page { host, page } => self.links(host, page),
            Node::Redirect { host, page } => vec![Node::Page { host, page }],
            _ => Vec::new(),
        }
    }

    /// Whether a polite crawler fetches `node` when it meets it: in scope,
    /// allowed by its host's robots.txt.
    pub fn fetchable(&self, node: Node) -> bool {
        match node {
            Node::Outside { .. } => false,
            Node::Private { host, .. } => {
                self.robots_kind(host) != RobotsKind::Private
                    && self.robots_kind(host) != RobotsKind::ShutOut
            }
            _ => self.robots_kind(node.host()) != RobotsKind::ShutOut,
        }
    }

    /// The nodes that can be fetched, numbered `0..node_count()`:
    /// pages, then redirects, then broken links, then private pages.
    pub fn node_count(&self) -> u64 {
        let p = &self.params;
        p.hosts as u64 * (2 * p.pages as u64 + (GONE_PER_HOST + PRIVATE_PER_HOST) as u64)
    }

    /// The number of `node` in `0..node_count()` (`None` for
    /// [`Node::Outside`]).
    pub fn index(&self, node: Node) -> Option<u64> {
        let p = &self.params;
        let (h, m) = (p.hosts as u64, p.pages as u64);
        Some(match node {
            Node::Page { host, page } => host as u64 * m + page as u64,
            Node::Redirect { host, page } => h * m + host as u64 * m + page as u64,
            Node::Gone { host, k } => 2 * h * m + host as u64 * GONE_PER_HOST as u64 + k as u64,
            Node::Private { host, k } => {
                2 * h * m
                    + h * GONE_PER_HOST as u64
                    + host as u64 * PRIVATE_PER_HOST as u64
                    + k as u64
            }
            Node::Outside { .. } => return None,
        })
    }

    /// The node numbered `i` (see [`ScaleWeb::index`]).
    pub fn node(&self, i: u64) -> Node {
        let p = &self.params;
        let (h, m) = (p.hosts as u64, p.pages as u64);
        let (g, q) = (GONE_PER_HOST as u64, PRIVATE_PER_HOST as u64);
        if i < h * m {
            Node::Page {
                host: (i / m) as u32,
                page: (i % m) as u32,
            }
        } else if i < 2 * h * m {
            let i = i - h * m;
            Node::Redirect {
                host: (i / m) as u32,
                page: (i % m) as u32,
            }
        } else if i < 2 * h * m + h * g {
            let i = i - 2 * h * m;
            Node::Gone {
                host: (i / g) as u32,
                k: (i % g) as u32,
            }
        } else {
            let i = i - 2 * h * m - h * g;
            Node::Private {
                host: (i / q) as u32,
                k: (i % q) as u32,
            }
        }
    }

    /// What a correct crawl fetches: a breadth-first walk from the seeds
    /// over the links, fetching what [`ScaleWeb::fetchable`] allows.
    pub fn expected(&self) -> Expected {
        let mut hops = vec![u16::MAX; self.node_count() as usize];
        let mut queue = std::collections::VecDeque::new();
        for seed in self.seeds() {
            if self.fetchable(seed) {
                let i = self.index(seed).expect("a seed is in the web") as usize;
                if hops[i] == u16::MAX {
                    hops[i] = 0;
                    queue.push_back(seed);
                }
            }
        }
        while let Some(node) = queue.pop_front() {
            let next = hops[self.index(node).expect("queued nodes are in the web") as usize]
                .saturating_add(1);
            for to in self.outlinks(node) {
                let Some(i) = self.index(to) else { continue };
                if hops[i as usize] == u16::MAX && self.fetchable(to) {
                    hops[i as usize] = next;
                    queue.push_back(to);
                }
            }
        }
        Expected {
            web: self.clone(),
            hops,
        }
    }
}

/// What a correct crawl of a [`ScaleWeb`] fetches, with the hops of each
/// URL from the nearest seed.
#[derive(Debug, Clone)]
pub struct Expected {
    web: ScaleWeb,
    hops: Vec<u16>,
}

/// The totals of an [`Expected`] crawl.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExpectedCounts {
    /// URLs fetched (all statuses).
    pub urls: u64,
    /// `200` pages.
    pub pages: u64,
    /// `301` redirects.
    pub redirects: u64,
    /// `404` broken links.
    pub gone: u64,
    /// Hosts a URL was found on (their robots.txt is asked for), the
    /// shut-out ones included.
    pub hosts_contacted: u64,
    /// The most hops from a seed.
    pub max_hops: u16,
}

impl Expected {
    /// The hops of `node` from the nearest seed, if a correct crawl
    /// fetches it.
    pub fn hops(&self, node: Node) -> Option<u16> {
        let i = self.web.index(node)?;
        let h = self.hops[i as usize];
        (h != u16::MAX).then_some(h)
    }

    /// Every node a correct crawl fetches with its hops, in node order.
    pub fn fetched(&self) -> impl Iterator<Item = (Node, u16)> + '_ {
        self.hops
            .iter()
            .enumerate()
            .filter(|(_, h)| **h != u16::MAX)
            .map(|(i, h)| (self.web.node(i as u64), *h))
    }

    /// The totals. A host is contacted when a crawl meets a URL of it that
    /// is in scope and not excluded by anything but robots.txt: for the
    /// shut-out hosts, a link to one of their pages from a fetched page.
    pub fn counts(&self) -> ExpectedCounts {
        let mut c = ExpectedCounts::default();
        let mut contacted = vec![false; self.web.params.hosts as usize];
        for (node, hops) in self.fetched() {
            c.urls += 1;
            c.max_hops = c.max_hops.max(hops);
            contacted[node.host() as usize] = true;
            match node {
                Node::Page { .. } | Node::Private { .. } => c.pages += 1,
                Node::Redirect { .. } => c.redirects += 1,
                Node::Gone { .. } => c.gone += 1,
                Node::Outside { .. } => {}
            }
        }
        for (node, _) in self.fetched() {
            for to in self.web.outlinks(node) {
                if !matches!(to, Node::Outside { .. })
                    && self.web.robots_kind(to.host()) == RobotsKind::ShutOut
                {
                    contacted[to.host() as usize] = true;
                }
            }
        }
        c.hosts_contacted = contacted.iter().filter(|&&x| x).count() as u64;
        c
    }

    /// The web walked.
    pub fn web(&self) -> &ScaleWeb {
        &self.web
    }
}
