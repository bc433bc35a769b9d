//! The demo web: a deterministic set of sites served on loopback.
//!
//! [`Demo::generate`] builds, from a seed number, 58 hosts named
//! `NAME.demo.test` (plus `elsewhere.example`, out of scope) with about 3,500
//! pages linking within and across hosts, and the things a crawler must
//! handle: robots.txt variants, `Crawl-delay`, redirects, crawler traps,
//! broken links, a host refusing connections, non-HTML files, pages in
//! Latin-1, windows-1252 and Shift_JIS, and every kind of link markup. It
//! also has the shape of a real crawl's tail: one host five times larger
//! than the others, twenty tiny hosts, a host that accepts connections and
//! never answers, and robots.txt files answering 500 and 503. Two hosts
//! publish sitemaps: `maps` names a sitemap index in its robots.txt (gzip
//! sitemaps listing pages no page links to, one in a directory, an index in
//! the index, a malformed one, a long one), and `mapped` names one of them,
//! which may then list `mapped`'s pages. [`HostRole`] lists the hosts' parts.
//!
//! The link graph is exposed ([`Demo::links_of`], [`Demo::robots_allows`])
//! and [`Demo::expected`] computes, by a plain breadth-first walk, what a
//! correct crawler fetches from the seeds within given [`Limits`].
//! [`Demo::serve`] serves it with [`crate::server`]: one loopback address
//! per host (`127.0.0.10` upward), one shared port, per-host request logs.
//!
//! ```
//! use testkit::demo::{Demo, Limits};
//!
//! let demo = Demo::generate(1);
//! let web = demo.serve().unwrap();
//! let expected = web.expected(&Limits::default());
//! let home = web.url("news.demo.test", "/");
//! assert!(web.seeds().contains(&home));
//! assert_eq!(expected.fetch[&home].hops, 0);
//! // The hosts file maps every name to its loopback address.
//! assert!(web.hosts_file().lines().any(|l| l.ends_with(" news.demo.test")));
//! ```
//!
//! # URLs
//! Every URL the demo reports is in the canonical form of the project
//! (`common::urlnorm`): `http://HOST:PORT/path?query`, lower-case host,
//! non-ASCII path characters percent-encoded as UTF-8 with upper-case hex.
//! The pages themselves spell some links otherwise (upper-case hosts, dot
//! segments, fragments, session ids, `%7E`, ...); [`Link::href`] is the
//! spelling, [`Link::url`] the canonical target.

mod expect;
mod generate;
mod render;
mod robots;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::sync::Arc;
use std::time::Duration;

use crate::server::{LogEntry, Observer, Request, Response, Server, consecutive_addresses};

pub use expect::{Exclusion, Expected, Fetched, Limits};

/// The product token the demo's robots.txt files address by default.
pub const DEMO_AGENT: &str = "demobot";

/// The registrable domain of the in-scope hosts.
pub const DEMO_DOMAIN: &str = "demo.test";

/// The address of the first host when served ([`ServeOptions::first_address`]).
pub const FIRST_DEMO_ADDRESS: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 10);

/// What to generate.
#[derive(Debug, Clone)]
pub struct DemoParams {
    /// Seed of the generator: the same seed gives the same web.
    pub seed: u64,
    /// Number of ordinary content hosts (besides the portal and the
    /// special hosts, which are always there).
    pub content_hosts: usize,
    /// Approximate number of pages of each content host.
    pub pages_per_host: usize,
    /// Approximate number of pages of `big.demo.test` ([`HostRole::Big`]).
    pub big_pages: usize,
    /// Number of tiny hosts `tiny1.demo.test`, ... ([`HostRole::Tiny`]), of
    /// 3 to 6 pages each.
    pub tiny_hosts: usize,
    /// The product token named in robots.txt groups.
    pub agent: String,
    /// `Crawl-delay` of `slow.demo.test`, in seconds.
    pub crawl_delay: f64,
    /// The first year of the calendar (default: the current year, so that
    /// the calendar rule of a crawl started today cuts it after
    /// `max_years_ahead` years).
    pub calendar_year: i64,
}

impl DemoParams {
    /// The full demo: 14 content hosts of about 150 pages, a big host of
    /// about 750 and 20 tiny hosts (58 hosts and about 3,500 pages in all).
    pub fn new(seed: u64) -> DemoParams {
        DemoParams {
            seed,
            content_hosts: 14,
            pages_per_host: 150,
            big_pages: 750,
            tiny_hosts: 20,
            agent: DEMO_AGENT.to_string(),
            crawl_delay: 1.0,
            calendar_year: common::timefmt::civil(std::time::SystemTime::now()).0,
        }
    }

    /// A small demo for quick tests: 3 content hosts of about 20 pages, a
    /// big host of about 100 and 4 tiny hosts (the special hosts are all
    /// there, smaller; 31 hosts and about 360 pages in all).
    pub fn small(seed: u64) -> DemoParams {
        DemoParams {
            content_hosts: 3,
            pages_per_host: 20,
            big_pages: 100,
            tiny_hosts: 4,
            ..DemoParams::new(seed)
        }
    }
}

/// What a host is there to exercise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HostRole {
    /// `news`: a seed; its home page links to every host's home page.
    Portal,
    /// An ordinary site: sections, paginated indexes, articles, links
    /// within and across hosts, a few broken links and unlinked pages.
    Content,
    /// `big`: a content site of [`DemoParams::big_pages`] pages, five times
    /// a content host in the full demo: the host a crawl spends longest on.
    Big,
    /// `tiny1`, `tiny2`, ...: sites of 3 to 6 pages, two hops deep at most,
    /// robots.txt 404 ([`DemoParams::tiny_hosts`] of them).
    Tiny,
    /// `shop`: robots.txt disallows `/cart/` and `/account/` for everyone.
    RobotsDisallow,
    /// `agents`: robots.txt disallows everything for `*` but has a group for
    /// the demo's product token (spelled in another case) with its own rules.
    RobotsAgentGroup,
    /// `wild`: robots.txt with `*` and `$` patterns where the longest match
    /// decides.
    RobotsWildcards,
    /// `open`: no robots.txt (404): everything allowed.
    RobotsNotFound,
    /// `members`: robots.txt answers 403: everything allowed (4xx).
    RobotsForbidden,
    /// `down`: robots.txt answers 503: nothing may be fetched.
    RobotsUnavailable,
    /// `broken`: robots.txt answers 500: nothing may be fetched.
    RobotsServerError,
    /// `slow`: `Crawl-delay` of [`DemoParams::crawl_delay`] seconds.
    CrawlDelay,
    /// `sleepy`: `Crawl-delay: 3600`, more than any sane maximum: skipped.
    CrawlDelayTooHigh,
    /// `moved`: 301/302/303/307/308 redirects, a chain, a loop, a relative
    /// `Location`, a cross-host redirect, and a robots.txt reached through
    /// two redirects.
    Redirects,
    /// `old`: every URL (robots.txt included) redirects to the same path on
    /// `new`.
    MovedHost,
    /// `new`: where `old` went.
    MovedHostTarget,
    /// `calendar`: an infinite calendar of month pages (`/cal/YYYY/MM/`)
    /// starting at [`DemoParams::calendar_year`]: every month links the next
    /// month and the same month of the next year. Only the calendar rule (a
    /// year too far ahead) or the hop limit stops a crawler.
    Calendar,
    /// `tags`: paths that repeat segments endlessly, and links that are too
    /// long, have too many segments or too many query parameters.
    Traps,
    /// `files`: PDF, PNG, CSV, JSON and plain-text files.
    Files,
    /// `latin`: pages in ISO-8859-1 (HTTP header), windows-1252 (`<meta
    /// charset>`), Shift_JIS (`<meta http-equiv>`) and UTF-8 with a BOM, with
    /// non-ASCII links.
    Charsets,
    /// `markup`: `<base href>`, `area`, `iframe`, `frame`, `rel=canonical`,
    /// meta refresh, `rel=nofollow`, meta robots nofollow, `X-Robots-Tag`,
    /// non-canonical spellings, `&amp;` in attributes, and links that are not
    /// crawlable (`javascript:`, `mailto:`, `data:`, `tel:`, `ftp:`).
    Markup,
    /// `gone`: in the hosts file, but nothing listens: connections refused.
    Refuses,
    /// `hole`: accepts connections, reads requests and never answers
    /// anything, robots.txt included, so nothing may be fetched; each
    /// request costs a crawler its whole first-byte timeout.
    BlackHole,
    /// `elsewhere.example`: served, linked, but outside the crawl's scope.
    OutOfScope,
    /// `maps`: its robots.txt names a sitemap index listing two gzip
    /// sitemaps (`.xml.gz`, served as `application/x-gzip` and
    /// `application/gzip`) of pages no page links to, a sitemap in
    /// `/news/` (and a URL outside it), an index (whose sitemap is one level
    /// too deep to read), a malformed sitemap (the URL before the fault
    /// counts) and a sitemap of [`BULK_PAGES`] pages (over a small
    /// `sitemap_max_entries`). Its sitemaps also list a disallowed page, a
    /// trap, and pages on `mapped` (allowed: `mapped`'s robots.txt names the
    /// sitemap), `shop` and `elsewhere.example` (refused by the protocol).
    Sitemaps,
    /// `mapped`: its robots.txt names a sitemap of `maps`, which lists
    /// `mapped` pages that nothing links to.
    SitemapTarget,
}

/// Pages listed by `maps`'s long sitemap (`/bulk.xml`).
pub const BULK_PAGES: usize = 30;

/// One host of the demo.
#[derive(Debug, Clone)]
pub struct DemoHost {
    /// Its name (`news.demo.test`).
    pub name: String,
    /// What it is for.
    pub role: HostRole,
}

/// How a link is written in its page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LinkKind {
    /// `<a href>`.
    Anchor,
    /// `<area href>` in an image map.
    Area,
    /// `<frame src>`.
    Frame,
    /// `<iframe src>`.
    Iframe,
    /// `<link rel="canonical" href>`.
    Canonical,
    /// `<meta http-equiv="refresh" content="0; url=...">`.
    Refresh,
    /// The `Location` of a redirect.
    Redirect,
}

/// A link of a page, or a redirect's target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// The link as written in the page, once HTML entities are decoded
    /// (`&amp;` → `&`); absolute links include the port.
    pub href: String,
    /// The canonical absolute URL it leads to; `None` for links a crawler
    /// does not follow by scheme (`mailto:`, `javascript:`, ...).
    pub url: Option<String>,
    /// How it is written.
    pub kind: LinkKind,
    /// False when `rel=nofollow`, the page's meta robots or its
    /// `X-Robots-Tag` says not to follow it.
    pub follow: bool,
}

/// Whether robots.txt lets a crawler fetch a URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RobotsVerdict {
    /// Allowed (by the rules, or because robots.txt answered 4xx).
    Allowed,
    /// Disallowed by a rule.
    Disallowed,
    /// robots.txt answers 5xx: nothing may be fetched.
    Unavailable,
    /// The host refuses connections: robots.txt cannot be read.
    Unreachable,
    /// The host accepts connections but never answers: robots.txt cannot be
    /// read, nothing may be fetched.
    NoAnswer,
}

/// A position in the demo: a host and a canonical target (path and query).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Loc {
    pub(crate) host: usize,
    pub(crate) target: String,
}

/// How a link is spelled; absolute links get the port when rendered.
#[derive(Debug, Clone)]
pub(crate) enum Href {
    /// Written as is (relative, root-relative, or with its own scheme).
    Text(String),
    /// `SCHEME://HOST:PORT` + `rest`, with scheme and host spelled as given.
    Absolute {
        scheme: &'static str,
        host: String,
        rest: String,
    },
}

/// A link in the generated model.
#[derive(Debug, Clone)]
pub(crate) struct RawLink {
    pub(crate) href: Href,
    pub(crate) target: Option<Loc>,
    pub(crate) kind: LinkKind,
    pub(crate) nofollow: bool,
    pub(crate) text: String,
}

/// The character encoding of a page and how it is declared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Charset {
    /// UTF-8, in the header and in `<meta charset>`.
    Utf8,
    /// ISO-8859-1 in the `Content-Type` header only.
    Latin1Header,
    /// windows-1252 in `<meta charset>` only.
    Windows1252Meta,
    /// Shift_JIS in `<meta http-equiv="Content-Type">` only.
    ShiftJisMeta,
    /// UTF-8 announced only by a byte-order mark.
    Utf8Bom,
}

/// An HTML page of the model.
#[derive(Debug, Clone)]
pub(crate) struct Html {
    pub(crate) title: String,
    pub(crate) text: String,
    pub(crate) charset: Charset,
    pub(crate) links: Vec<RawLink>,
    pub(crate) base: Option<Href>,
    pub(crate) nofollow_meta: bool,
    pub(crate) x_robots_nofollow: bool,
    pub(crate) frameset: bool,
}

/// What a URL answers.
#[derive(Debug, Clone)]
pub(crate) enum Resource {
    Html(Html),
    Redirect {
        status: u16,
        location: Href,
        target: Loc,
    },
    File {
        content_type: &'static str,
        body: Vec<u8>,
    },
    /// An error status with a short body.
    Status(u16),
    /// A robots.txt: its rules, then a `Sitemap:` line for each sitemap
    /// (absolute, with the port it is served on).
    Robots {
        rules: String,
        sitemaps: Vec<Loc>,
    },
    /// A sitemap.
    Sitemap(SitemapDoc),
}

/// A sitemap of the model.
#[derive(Debug, Clone)]
pub(crate) struct SitemapDoc {
    /// A `sitemapindex` (else a `urlset`).
    pub(crate) index: bool,
    /// The URLs it lists.
    pub(crate) entries: Vec<Loc>,
    /// Served gzip-compressed with this `Content-Type` (else `application/xml`).
    pub(crate) gzip: Option<&'static str>,
    /// Malformed after this many entries (a closing tag that does not match).
    pub(crate) fault_after: Option<usize>,
}

impl Resource {
    fn status(&self) -> u16 {
        match self {
            Resource::Html(_)
            | Resource::File { .. }
            | Resource::Robots { .. }
            | Resource::Sitemap(_) => 200,
            Resource::Redirect { status, .. } | Resource::Status(status) => *status,
        }
    }
}

/// The generated web.
pub(crate) struct Inner {
    pub(crate) params: DemoParams,
    pub(crate) hosts: Vec<DemoHost>,
    /// Pages with a fixed address; the traps and `old` answer by rule
    /// ([`generate::dynamic`]).
    pub(crate) pages: HashMap<Loc, Resource>,
    pub(crate) seeds: Vec<Loc>,
}

impl Inner {
    fn host_index(&self, name: &str) -> Option<usize> {
        self.hosts.iter().position(|h| h.name == name)
    }

    /// What `loc` answers (`None`: 404).
    pub(crate) fn resolve(&self, loc: &Loc) -> Option<Resource> {
        match self.pages.get(loc) {
            Some(r) => Some(r.clone()),
            None => generate::dynamic(self, loc),
        }
    }

    pub(crate) fn url(&self, loc: &Loc, port: u16) -> String {
        let name = &self.hosts[loc.host].name;
        if port == 80 {
            format!("http://{name}{}", loc.target)
        } else {
            format!("http://{name}:{port}{}", loc.target)
        }
    }

    fn parse_url(&self, url: &str) -> Option<(Loc, u16)> {
        let u = url::Url::parse(url).ok()?;
        if u.scheme() != "http" {
            return None;
        }
        let host = self.host_index(u.host_str()?)?;
        let mut target = u.path().to_string();
        if let Some(q) = u.query() {
            target.push('?');
            target.push_str(q);
        }
        Some((Loc { host, target }, u.port_or_known_default()?))
    }

    /// How robots.txt of `host` reads for `agent`, with the URLs requested
    /// to read it (redirects included).
    pub(crate) fn robots(&self, host: usize, agent: &str) -> RobotsInfo {
        let mut chain = Vec::new();
        let mut loc = Loc {
            host,
            target: "/robots.txt".into(),
        };
        match self.hosts[host].role {
            HostRole::Refuses => {
                return RobotsInfo {
                    state: RobotsState::Unreachable,
                    chain,
                    sitemaps: Vec::new(),
                };
            }
            // The server sees the request for robots.txt, and holds it.
            HostRole::BlackHole => {
                chain.push(loc);
                return RobotsInfo {
                    state: RobotsState::NoAnswer,
                    chain,
                    sitemaps: Vec::new(),
                };
            }
            _ => {}
        }
        // RFC 9309: follow at least five redirects.
        for _ in 0..=5 {
            chain.push(loc.clone());
            let state = match self.resolve(&loc) {
                None => RobotsState::AllowAll,
                Some(Resource::File { body, .. }) => {
                    let text = String::from_utf8_lossy(&body);
                    RobotsState::Rules(robots::Rules::parse(&text, agent))
                }
                Some(Resource::Robots { rules, sitemaps }) => {
                    return RobotsInfo {
                        state: RobotsState::Rules(robots::Rules::parse(&rules, agent)),
                        chain,
                        sitemaps,
                    };
                }
                Some(Resource::Redirect { target, .. }) => {
                    loc = target;
                    continue;
                }
                Some(r) if r.status() >= 500 => RobotsState::Unavailable,
                Some(_) => RobotsState::AllowAll,
            };
            return RobotsInfo {
                state,
                chain,
                sitemaps: Vec::new(),
            };
        }
        RobotsInfo {
            state: RobotsState::AllowAll,
            chain,
            sitemaps: Vec::new(),
        }
    }

    fn links(&self, loc: &Loc, port: u16) -> Option<Vec<Link>> {
        let resource = self.resolve(loc)?;
        let href = |h: &Href| render::href_text(h, port);
        let url = |t: &Option<Loc>| t.as_ref().map(|t| self.url(t, port));
        Some(match resource {
            Resource::Html(page) => {
                let follow_page = !page.nofollow_meta && !page.x_robots_nofollow;
                page.links
                    .iter()
                    .map(|l| Link {
                        href: href(&l.href),
                        url: url(&l.target),
                        kind: l.kind,
                        follow: follow_page && !l.nofollow && l.target.is_some(),
                    })
                    .collect()
            }
            Resource::Redirect {
                location, target, ..
            } => vec![Link {
                href: href(&location),
                url: Some(self.url(&target, port)),
                kind: LinkKind::Redirect,
                follow: true,
            }],
            Resource::File { .. }
            | Resource::Status(_)
            | Resource::Robots { .. }
            | Resource::Sitemap(_) => Vec::new(),
        })
    }
}

pub(crate) struct RobotsInfo {
    pub(crate) state: RobotsState,
    /// robots.txt and the redirects followed to read it.
    pub(crate) chain: Vec<Loc>,
    /// The sitemaps its `Sitemap:` lines name.
    pub(crate) sitemaps: Vec<Loc>,
}

pub(crate) enum RobotsState {
    AllowAll,
    Rules(robots::Rules),
    Unavailable,
    Unreachable,
    NoAnswer,
}

impl RobotsState {
    fn verdict(&self, target: &str) -> RobotsVerdict {
        match self {
            RobotsState::AllowAll => RobotsVerdict::Allowed,
            RobotsState::Rules(r) if r.allows(target) => RobotsVerdict::Allowed,
            RobotsState::Rules(_) => RobotsVerdict::Disallowed,
            RobotsState::Unavailable => RobotsVerdict::Unavailable,
            RobotsState::Unreachable => RobotsVerdict::Unreachable,
            RobotsState::NoAnswer => RobotsVerdict::NoAnswer,
        }
    }

    fn crawl_delay(&self) -> Option<Duration> {
        match self {
            RobotsState::Rules(r) => r
                .crawl_delay()
                .and_then(|d| Duration::try_from_secs_f64(d).ok()),
            _ => None,
        }
    }
}

/// An HTML page of the demo web as it is served ([`Demo::html_pages`]).
#[derive(Debug, Clone)]
pub struct DemoPage {
    /// Its URL.
    pub url: String,
    /// Its `Content-Type` header.
    pub content_type: &'static str,
    /// Its `X-Robots-Tag` header, if it has one.
    pub x_robots_tag: Option<&'static str>,
    /// Its body.
    pub body: Vec<u8>,
}

/// A generated demo web (cheap to clone).
#[derive(Clone)]
pub struct Demo {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Demo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Demo")
            .field("params", &self.inner.params)
            .field("hosts", &self.inner.hosts.len())
            .field("pages", &self.inner.pages.len())
            .finish()
    }
}

impl Demo {
    /// The full demo for `seed` ([`DemoParams::new`]).
    pub fn generate(seed: u64) -> Demo {
        Demo::with_params(DemoParams::new(seed))
    }

    /// A demo with chosen parameters.
    pub fn with_params(params: DemoParams) -> Demo {
        Demo {
            inner: Arc::new(generate::generate(params)),
        }
    }

    /// The parameters it was generated with.
    pub fn params(&self) -> &DemoParams {
        &self.inner.params
    }

    /// Every host, in address order (the first gets [`FIRST_DEMO_ADDRESS`]).
    pub fn hosts(&self) -> &[DemoHost] {
        &self.inner.hosts
    }

    /// The host with `role` (the first one for [`HostRole::Content`] and
    /// [`HostRole::Tiny`]); panics if there is none (no content or tiny
    /// host with parameters that ask for none).
    pub fn host_with_role(&self, role: HostRole) -> &DemoHost {
        self.inner
            .hosts
            .iter()
            .find(|h| h.role == role)
            .expect("every role has a host")
    }

    /// The seed URLs for a demo served on `port`.
    pub fn seeds(&self, port: u16) -> Vec<String> {
        self.inner
            .seeds
            .iter()
            .map(|l| self.inner.url(l, port))
            .collect()
    }

    /// Every page with a fixed address (sorted; not the endless trap pages),
    /// whether linked or not.
    pub fn pages(&self, port: u16) -> Vec<String> {
        let mut all: Vec<String> = self
            .inner
            .pages
            .keys()
            .map(|l| self.inner.url(l, port))
            .collect();
        all.sort();
        all
    }

    /// Every HTML page with a fixed address (sorted by URL), as it is served
    /// on `port`: for reading pages without a server (the link readers'
    /// differential test).
    pub fn html_pages(&self, port: u16) -> Vec<DemoPage> {
        let mut all: Vec<DemoPage> = self
            .inner
            .pages
            .iter()
            .filter_map(|(loc, resource)| match resource {
                Resource::Html(page) => {
                    let (content_type, body) = render::encode(page, port);
                    Some(DemoPage {
                        url: self.inner.url(loc, port),
                        content_type,
                        x_robots_tag: page.x_robots_nofollow.then_some("nofollow"),
                        body,
                    })
                }
                _ => None,
            })
            .collect();
        all.sort_by(|a, b| a.url.cmp(&b.url));
        all
    }

    /// The status `url` answers with (404 for unknown URLs; `None` for a URL
    /// not on a demo host, or on the host that refuses connections or the
    /// one that never answers).
    pub fn status_of(&self, url: &str) -> Option<u16> {
        let (loc, _) = self.inner.parse_url(url)?;
        if matches!(
            self.inner.hosts[loc.host].role,
            HostRole::Refuses | HostRole::BlackHole
        ) {
            return None;
        }
        Some(self.inner.resolve(&loc).map_or(404, |r| r.status()))
    }

    /// The links of the page at `url` (canonical; the port is taken from it),
    /// or its redirect target; `None` if nothing is there.
    pub fn links_of(&self, url: &str) -> Option<Vec<Link>> {
        let (loc, port) = self.inner.parse_url(url)?;
        self.inner.links(&loc, port)
    }

    /// Whether `agent` may fetch `target` (path and query) on `host`.
    pub fn robots_allows(&self, host: &str, target: &str, agent: &str) -> RobotsVerdict {
        let Some(h) = self.inner.host_index(host) else {
            return RobotsVerdict::Unreachable;
        };
        self.inner.robots(h, agent).state.verdict(target)
    }

    /// The `Crawl-delay` that `host`'s robots.txt sets for `agent`.
    pub fn crawl_delay(&self, host: &str, agent: &str) -> Option<Duration> {
        let h = self.inner.host_index(host)?;
        self.inner.robots(h, agent).state.crawl_delay()
    }

    /// What a correct crawler fetches starting from the seeds, within
    /// `limits`, for a demo served on `port`.
    pub fn expected(&self, limits: &Limits, port: u16) -> Expected {
        expect::compute(&self.inner, limits, port)
    }

    /// Serves the demo with the default [`ServeOptions`].
    pub fn serve(&self) -> std::io::Result<DemoServer> {
        self.serve_with(ServeOptions::default())
    }

    /// Serves the demo: one listener per host (except the one that refuses
    /// connections) on consecutive loopback addresses, one shared port. The
    /// black hole reads each request and holds the connection unanswered
    /// until the client gives up or the server is dropped (which closes it
    /// at once).
    pub fn serve_with(&self, options: ServeOptions) -> std::io::Result<DemoServer> {
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
        for (i, host) in self.inner.hosts.iter().enumerate() {
            if host.role == HostRole::Refuses {
                continue;
            }
            if host.role == HostRole::BlackHole {
                builder = builder.host_at(host.name.clone(), addrs[i], |_: &Request| {
                    Response::never_answer()
                });
                continue;
            }
            let inner = Arc::clone(&self.inner);
            builder = builder.host_at(host.name.clone(), addrs[i], move |req: &Request| {
                let loc = Loc {
                    host: i,
                    target: req.target().to_string(),
                };
                render::response(&inner, &loc, req.local_addr().port())
            });
        }
        let server = builder.start()?;
        Ok(DemoServer {
            demo: self.clone(),
            server,
            addrs,
        })
    }
}

/// How to serve the demo.
pub struct ServeOptions {
    /// The shared port (default: a free one).
    pub port: Option<u16>,
    /// The first host's address (default [`FIRST_DEMO_ADDRESS`]).
    pub first_address: Ipv4Addr,
    /// Keep the request logs in memory (default true).
    pub request_log: bool,
    /// Called with each request's log entry as it completes.
    pub on_request: Option<Observer>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            port: None,
            first_address: FIRST_DEMO_ADDRESS,
            request_log: true,
            on_request: None,
        }
    }
}

/// A demo being served; dropping it stops the servers.
pub struct DemoServer {
    demo: Demo,
    server: Server,
    addrs: Vec<Ipv4Addr>,
}

impl std::fmt::Debug for DemoServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DemoServer")
            .field("port", &self.server.port())
            .field("hosts", &self.addrs.len())
            .finish()
    }
}

impl DemoServer {
    /// The demo being served.
    pub fn demo(&self) -> &Demo {
        &self.demo
    }

    /// The underlying server (request logs, counters).
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// The shared port.
    pub fn port(&self) -> u16 {
        self.server.port()
    }

    /// The canonical URL of `target` on `host`.
    pub fn url(&self, host: &str, target: &str) -> String {
        let port = self.port();
        if port == 80 {
            format!("http://{host}{target}")
        } else {
            format!("http://{host}:{port}{target}")
        }
    }

    /// The seed URLs.
    pub fn seeds(&self) -> Vec<String> {
        self.demo.seeds(self.port())
    }

    /// The seeds file: one URL per line.
    pub fn seeds_file(&self) -> String {
        self.seeds().iter().map(|s| format!("{s}\n")).collect()
    }

    /// `IP NAME` lines for every host, including the one where nothing
    /// listens (the `/etc/hosts` format the fetcher's `--hosts-file` reads).
    pub fn hosts_file(&self) -> String {
        self.demo
            .hosts()
            .iter()
            .zip(&self.addrs)
            .map(|(h, a)| format!("{a} {}\n", h.name))
            .collect()
    }

    /// The loopback address of `host`.
    pub fn addr(&self, host: &str) -> Option<Ipv4Addr> {
        let i = self.demo.inner.host_index(host)?;
        Some(self.addrs[i])
    }

    /// What a correct crawler fetches within `limits`.
    pub fn expected(&self, limits: &Limits) -> Expected {
        self.demo.expected(limits, self.port())
    }

    /// Every host's request log, sorted by start time.
    pub fn logs(&self) -> Vec<LogEntry> {
        self.server.logs()
    }

    /// The `Crawl-delay` `host` asks of the demo's agent.
    pub fn crawl_delay(&self, host: &str) -> Option<Duration> {
        self.demo.crawl_delay(host, &self.demo.params().agent)
    }
}
