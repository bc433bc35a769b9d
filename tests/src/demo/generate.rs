//! Building the demo web from its parameters.
//!
//! Phase 1 names the hosts, phase 2 builds each host's pages, phase 3 adds
//! random links across hosts, phase 4 picks the seeds. Every random choice
//! comes from one seeded generator, consumed in a fixed order (never while
//! iterating a hash map), so a seed always gives the same web.

use std::collections::HashMap;

use crate::Rng;

use super::{
    BULK_PAGES, Charset, DEMO_DOMAIN, DemoHost, DemoParams, HostRole, Href, Html, Inner, LinkKind,
    Loc, RawLink, Resource, SitemapDoc,
};

const CONTENT_NAMES: [&str; 20] = [
    "blog", "wiki", "forum", "photos", "music", "recipes", "travel", "sports", "weather", "jobs",
    "events", "library", "museum", "garden", "games", "health", "science", "history", "movies",
    "radio",
];

const ARTICLE_WORDS: [&str; 10] = [
    "story", "note", "post", "item", "guide", "review", "report", "essay", "brief", "feature",
];

const TEXT_WORDS: [&str; 24] = [
    "the", "demo", "web", "crawler", "page", "link", "host", "robots", "segment", "fetch",
    "polite", "delay", "archive", "record", "quiet", "river", "stone", "light", "garden", "window",
    "morning", "letter", "bridge", "harbour",
];

/// Articles per page of a section index.
const PER_INDEX_PAGE: usize = 25;

/// The special hosts, in address order after the portal, the content hosts
/// and the big host.
const SPECIAL_HOSTS: [(&str, HostRole); 21] = [
    ("shop", HostRole::RobotsDisallow),
    ("agents", HostRole::RobotsAgentGroup),
    ("wild", HostRole::RobotsWildcards),
    ("open", HostRole::RobotsNotFound),
    ("members", HostRole::RobotsForbidden),
    ("down", HostRole::RobotsUnavailable),
    ("broken", HostRole::RobotsServerError),
    ("slow", HostRole::CrawlDelay),
    ("sleepy", HostRole::CrawlDelayTooHigh),
    ("moved", HostRole::Redirects),
    ("old", HostRole::MovedHost),
    ("new", HostRole::MovedHostTarget),
    ("calendar", HostRole::Calendar),
    ("tags", HostRole::Traps),
    ("files", HostRole::Files),
    ("latin", HostRole::Charsets),
    ("markup", HostRole::Markup),
    ("gone", HostRole::Refuses),
    ("hole", HostRole::BlackHole),
    ("maps", HostRole::Sitemaps),
    ("mapped", HostRole::SitemapTarget),
];

/// Fewest and most pages of a tiny host.
const TINY_PAGES: (usize, usize) = (3, 6);

/// The out-of-scope host.
const ELSEWHERE: &str = "elsewhere.example";

struct Gen {
    params: DemoParams,
    rng: Rng,
    hosts: Vec<DemoHost>,
    pages: HashMap<Loc, Resource>,
    /// Linked articles of the portal and content hosts: targets of links
    /// across hosts.
    pool: Vec<Loc>,
    /// Articles of every site built by `site`, which may get links to
    /// other hosts.
    sources: Vec<Loc>,
}

pub(super) fn generate(params: DemoParams) -> Inner {
    let mut g = Gen {
        rng: crate::web_rng(params.seed),
        params,
        hosts: Vec::new(),
        pages: HashMap::new(),
        pool: Vec::new(),
        sources: Vec::new(),
    };
    // Phase 1: hosts.
    g.add_host("news", HostRole::Portal);
    for i in 0..g.params.content_hosts {
        let name = match CONTENT_NAMES.get(i) {
            Some(n) => n.to_string(),
            None => format!("site{}", i + 1),
        };
        g.add_host(&name, HostRole::Content);
    }
    g.add_host("big", HostRole::Big);
    for (name, role) in SPECIAL_HOSTS {
        g.add_host(name, role);
    }
    for i in 1..=g.params.tiny_hosts {
        g.add_host(&format!("tiny{i}"), HostRole::Tiny);
    }
    g.add_host(ELSEWHERE, HostRole::OutOfScope);

    // Phase 2: pages.
    for h in 0..g.hosts.len() {
        g.build_host(h);
    }

    // Phase 3: links across hosts.
    g.cross_links();

    // Phase 4: seeds: the portal, a section of the first content host, and
    // a host that moved (the crawler meets a redirect first).
    let mut seeds = vec![Loc {
        host: 0,
        target: "/".into(),
    }];
    if g.params.content_hosts > 0 {
        seeds.push(Loc {
            host: 1,
            target: "/s1/".into(),
        });
    }
    seeds.push(Loc {
        host: g.role_host(HostRole::MovedHost),
        target: "/".into(),
    });
    Inner {
        params: g.params,
        hosts: g.hosts,
        pages: g.pages,
        seeds,
    }
}

fn loc(host: usize, target: impl Into<String>) -> Loc {
    Loc {
        host,
        target: target.into(),
    }
}

/// Percent-encodes the non-ASCII bytes of a path as UTF-8 (upper-case hex),
/// as the URL standard does for paths.
pub(super) fn encode_path(path: &str) -> String {
    let mut out = String::new();
    for b in path.bytes() {
        if b.is_ascii() {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn page(title: impl Into<String>, text: impl Into<String>) -> Html {
    Html {
        title: title.into(),
        text: text.into(),
        charset: Charset::Utf8,
        links: Vec::new(),
        base: None,
        nofollow_meta: false,
        x_robots_nofollow: false,
        frameset: false,
    }
}

/// A link written as `href` (relative, or with another scheme).
fn text_link(href: impl Into<String>, target: Option<Loc>, text: impl Into<String>) -> RawLink {
    RawLink {
        href: Href::Text(href.into()),
        target,
        kind: LinkKind::Anchor,
        nofollow: false,
        text: text.into(),
    }
}

impl Gen {
    fn add_host(&mut self, name: &str, role: HostRole) {
        let name = if name.contains('.') {
            name.to_string()
        } else {
            format!("{name}.{DEMO_DOMAIN}")
        };
        self.hosts.push(DemoHost { name, role });
    }

    fn role_host(&self, role: HostRole) -> usize {
        self.hosts
            .iter()
            .position(|h| h.role == role)
            .expect("every special role has a host")
    }

    fn sentence(&mut self) -> String {
        let n = 10 + self.rng.below(10);
        let words: Vec<&str> = (0..n).map(|_| *self.rng.pick(&TEXT_WORDS)).collect();
        let mut s = words.join(" ");
        if let Some(first) = s.get_mut(0..1) {
            first.make_ascii_uppercase();
        }
        s.push('.');
        s
    }

    /// A link from a page of `from` to `to`: root-relative on the same host,
    /// absolute otherwise.
    fn link(&self, from: usize, to: &Loc, text: impl Into<String>) -> RawLink {
        let href = if from == to.host {
            Href::Text(to.target.clone())
        } else {
            Href::Absolute {
                scheme: "http",
                host: self.hosts[to.host].name.clone(),
                rest: to.target.clone(),
            }
        };
        RawLink {
            href,
            target: Some(to.clone()),
            kind: LinkKind::Anchor,
            nofollow: false,
            text: text.into(),
        }
    }

    fn put(&mut self, at: Loc, resource: Resource) {
        self.pages.insert(at, resource);
    }

    fn put_html(&mut self, at: Loc, html: Html) {
        self.put(at, Resource::Html(html));
    }

    fn robots(&mut self, h: usize, text: &str) {
        self.put(
            loc(h, "/robots.txt"),
            Resource::File {
                content_type: "text/plain; charset=utf-8",
                body: text.as_bytes().to_vec(),
            },
        );
    }

    fn redirect(&mut self, h: usize, from: &str, status: u16, to: Loc) {
        let location = if to.host == h && self.rng.chance(0.5) {
            Href::Text(to.target.clone())
        } else {
            Href::Absolute {
                scheme: "http",
                host: self.hosts[to.host].name.clone(),
                rest: to.target.clone(),
            }
        };
        self.put(
            loc(h, from),
            Resource::Redirect {
                status,
                location,
                target: to,
            },
        );
    }

    /// A plain page with a link home.
    fn leaf(&mut self, h: usize, target: &str, title: &str) {
        let mut p = page(title, self.sentence());
        p.links.push(self.link(h, &loc(h, "/"), "home"));
        self.put_html(loc(h, target), p);
    }

    fn build_host(&mut self, h: usize) {
        let n = self.params.pages_per_host;
        let medium = (n / 5).clamp(4, 30);
        let small = (n / 10).clamp(3, 15);
        let agent = self.params.agent.clone();
        match self.hosts[h].role {
            HostRole::Portal => {
                let directory: Vec<RawLink> = (0..self.hosts.len())
                    .filter(|&o| o != h)
                    .map(|o| self.link(h, &loc(o, "/"), format!("{} home", self.hosts[o].name)))
                    .collect();
                let articles = self.site(h, n, directory);
                self.pool.extend(articles);
            }
            HostRole::Content => {
                let articles = self.site(h, n, Vec::new());
                self.pool.extend(articles);
            }
            HostRole::Big => {
                // Its articles take their share of the links across hosts,
                // as a big site's do on the web.
                let articles = self.site(h, self.params.big_pages, Vec::new());
                self.pool.extend(articles);
            }
            HostRole::Tiny => self.tiny(h),
            HostRole::RobotsDisallow => {
                self.robots(
                    h,
                    "# Keep crawlers out of the cart and the accounts.\n\
                     User-agent: *\nDisallow: /cart/\nDisallow: /account/\n",
                );
                let extra = ["/cart/", "/cart/checkout.html", "/account/login.html"]
                    .iter()
                    .map(|t| self.link(h, &loc(h, *t), "members only"))
                    .collect();
                self.site(h, medium, extra);
                let mut cart = page("Cart", self.sentence());
                for i in 1..=3 {
                    cart.links
                        .push(self.link(h, &loc(h, format!("/cart/item-{i}.html")), "item"));
                }
                self.put_html(loc(h, "/cart/"), cart);
                for i in 1..=3 {
                    self.leaf(h, &format!("/cart/item-{i}.html"), "Cart item");
                }
                self.leaf(h, "/cart/checkout.html", "Checkout");
                self.leaf(h, "/account/login.html", "Log in");
            }
            HostRole::RobotsAgentGroup => {
                let spelled: String = agent
                    .char_indices()
                    .map(|(i, c)| {
                        if i % 2 == 0 {
                            c.to_ascii_uppercase()
                        } else {
                            c
                        }
                    })
                    .collect();
                self.robots(
                    h,
                    &format!(
                        "User-agent: otherbot\nDisallow:\n\n\
                         User-agent: *\nDisallow: /\n\n\
                         # Our friends get in, except one room.\n\
                         User-agent: {spelled}\nAllow: /\nDisallow: /not-for-{agent}/\n"
                    ),
                );
                let secret = format!("/not-for-{agent}/secret.html");
                let extra = vec![self.link(h, &loc(h, secret.as_str()), "not for you")];
                self.site(h, medium, extra);
                self.leaf(h, &secret, "Secret");
            }
            HostRole::RobotsWildcards => self.wild(h, medium),
            HostRole::RobotsNotFound => {
                self.site(h, small, Vec::new());
            }
            HostRole::RobotsForbidden => {
                self.put(loc(h, "/robots.txt"), Resource::Status(403));
                self.site(h, small, Vec::new());
            }
            HostRole::RobotsUnavailable => {
                self.put(loc(h, "/robots.txt"), Resource::Status(503));
                self.site(h, small, Vec::new());
            }
            HostRole::RobotsServerError => {
                self.put(loc(h, "/robots.txt"), Resource::Status(500));
                self.site(h, small, Vec::new());
            }
            HostRole::CrawlDelay => {
                let delay = self.params.crawl_delay;
                self.robots(
                    h,
                    &format!("User-agent: *\nCrawl-delay: {delay}\nDisallow: /tmp/\n"),
                );
                let extra = vec![self.link(h, &loc(h, "/tmp/scratch.html"), "scratch")];
                self.site(h, small, extra);
                self.leaf(h, "/tmp/scratch.html", "Scratch");
            }
            HostRole::CrawlDelayTooHigh => {
                self.robots(h, "User-agent: *\nCrawl-delay: 3600\n");
                self.site(h, small, Vec::new());
            }
            HostRole::Redirects => self.moved(h, medium),
            HostRole::MovedHost => {
                // Answers by rule (see `dynamic`): everything redirects.
            }
            HostRole::MovedHostTarget => {
                self.robots(h, "User-agent: *\nDisallow: /drafts/\n");
                let extra = vec![self.link(h, &loc(h, "/drafts/plan.html"), "draft")];
                self.site(h, medium, extra);
                self.leaf(h, "/drafts/plan.html", "Draft");
            }
            HostRole::Calendar => {
                let mut home = page("Calendar", self.sentence());
                home.links.push(self.link(h, &loc(h, "/cal/"), "calendar"));
                self.put_html(loc(h, "/"), home);
                let y = self.params.calendar_year;
                let mut index = page(format!("Calendar {y}"), "Pick a month.");
                for m in 1..=12 {
                    index.links.push(text_link(
                        format!("{y}/{m:02}/"),
                        Some(loc(h, format!("/cal/{y}/{m:02}/"))),
                        format!("month {m}"),
                    ));
                }
                self.put_html(loc(h, "/cal/"), index);
            }
            HostRole::Traps => self.traps(h),
            HostRole::Files => self.files(h),
            HostRole::Charsets => self.charsets(h),
            HostRole::Markup => self.markup(h),
            // Nothing is ever answered there (see `Demo::serve_with`).
            HostRole::Refuses | HostRole::BlackHole => {}
            HostRole::Sitemaps => self.sitemaps(h, small),
            HostRole::SitemapTarget => {
                let maps = self.role_host(HostRole::Sitemaps);
                self.put(
                    loc(h, "/robots.txt"),
                    Resource::Robots {
                        rules: "User-agent: *\nAllow: /\n".into(),
                        sitemaps: vec![loc(maps, "/pages-2.xml.gz")],
                    },
                );
                self.leaf(h, "/", "Mapped");
                // Listed in maps's sitemap only.
                self.leaf(h, "/from-maps-1.html", "From the maps sitemap");
                self.leaf(h, "/from-maps-2.html", "From the maps sitemap too");
            }
            HostRole::OutOfScope => {
                let mut home = page("Elsewhere", self.sentence());
                home.links.push(self.link(h, &loc(h, "/more.html"), "more"));
                home.links
                    .push(self.link(h, &loc(0, "/"), "the demo portal"));
                self.put_html(loc(h, "/"), home);
                self.leaf(h, "/more.html", "More elsewhere");
            }
        }
    }

    /// `maps` (see [`HostRole::Sitemaps`]): `n` pages in each gzip sitemap.
    fn sitemaps(&mut self, h: usize, n: usize) {
        let sitemap = |index: bool, entries: Vec<Loc>| {
            Resource::Sitemap(SitemapDoc {
                index,
                entries,
                gzip: None,
                fault_after: None,
            })
        };
        self.put(
            loc(h, "/robots.txt"),
            Resource::Robots {
                rules: "User-agent: *\nDisallow: /private/\n".into(),
                sitemaps: vec![loc(h, "/sitemap-index.xml")],
            },
        );
        let mut home = page("Maps", self.sentence());
        home.links
            .push(self.link(h, &loc(h, "/about.html"), "about"));
        self.put_html(loc(h, "/"), home);
        self.leaf(h, "/about.html", "About maps");
        let children = [
            "/pages-1.xml.gz",
            "/pages-2.xml.gz",
            "/news/sitemap.xml",
            "/nested-index.xml",
            "/broken.xml",
            "/bulk.xml",
        ];
        self.put(
            loc(h, "/sitemap-index.xml"),
            sitemap(true, children.iter().map(|c| loc(h, *c)).collect()),
        );
        let mapped = self.role_host(HostRole::SitemapTarget);
        let shop = self.role_host(HostRole::RobotsDisallow);
        let elsewhere = self.role_host(HostRole::OutOfScope);
        let mut first = vec![loc(h, "/"), loc(h, "/private/listed.html")];
        // A crawler trap (a repeated path segment): the filters refuse it.
        first.push(loc(h, "/x/x/x/x/trap.html"));
        let mut second = vec![
            loc(mapped, "/from-maps-1.html"),
            loc(mapped, "/from-maps-2.html"),
            // Their robots.txt files name no sitemap of maps.
            loc(shop, "/listed-by-maps.html"),
            loc(elsewhere, "/listed-by-maps.html"),
        ];
        for i in 1..=n {
            let target = format!("/hidden/{i}.html");
            self.leaf(h, &target, &format!("Hidden {i}"));
            first.push(loc(h, target));
            let target = format!("/hidden/{}.html", n + i);
            self.leaf(h, &target, &format!("Hidden {}", n + i));
            second.push(loc(h, target));
        }
        self.leaf(h, "/private/listed.html", "Private");
        self.put(
            loc(h, "/pages-1.xml.gz"),
            Resource::Sitemap(SitemapDoc {
                index: false,
                entries: first,
                gzip: Some("application/x-gzip"),
                fault_after: None,
            }),
        );
        self.put(
            loc(h, "/pages-2.xml.gz"),
            Resource::Sitemap(SitemapDoc {
                index: false,
                entries: second,
                gzip: Some("application/gzip"),
                fault_after: None,
            }),
        );
        for i in 1..=2 {
            self.leaf(h, &format!("/news/item-{i}.html"), &format!("News {i}"));
        }
        self.leaf(h, "/outside-news.html", "Outside the news");
        self.put(
            loc(h, "/news/sitemap.xml"),
            sitemap(
                false,
                vec![
                    loc(h, "/news/item-1.html"),
                    loc(h, "/news/item-2.html"),
                    // Not under /news/: the sitemap may not list it.
                    loc(h, "/outside-news.html"),
                ],
            ),
        );
        self.put(
            loc(h, "/nested-index.xml"),
            sitemap(true, vec![loc(h, "/too-deep.xml")]),
        );
        self.leaf(h, "/never.html", "Listed too deep");
        self.put(
            loc(h, "/too-deep.xml"),
            sitemap(false, vec![loc(h, "/never.html")]),
        );
        self.leaf(h, "/before-the-fault.html", "Before the fault");
        self.leaf(h, "/after-the-fault.html", "After the fault");
        self.put(
            loc(h, "/broken.xml"),
            Resource::Sitemap(SitemapDoc {
                index: false,
                entries: vec![
                    loc(h, "/before-the-fault.html"),
                    loc(h, "/after-the-fault.html"),
                ],
                gzip: None,
                fault_after: Some(1),
            }),
        );
        let bulk: Vec<Loc> = (1..=BULK_PAGES)
            .map(|i| loc(h, format!("/bulk/{i:02}.html")))
            .collect();
        for b in &bulk {
            self.leaf(h, &b.target.clone(), "Bulk");
        }
        self.put(loc(h, "/bulk.xml"), sitemap(false, bulk));
    }

    /// An ordinary site of about `n` pages on host `h`: home, sections with
    /// paginated indexes, articles, an about page. Returns the articles
    /// that are linked (a few are not linked from anywhere).
    fn site(&mut self, h: usize, n: usize, home_extra: Vec<RawLink>) -> Vec<Loc> {
        let sections = (n / 30).clamp(1, 8);
        let count = n.saturating_sub(2 + sections).max(2);
        let mut all = Vec::with_capacity(count);
        let mut linked = Vec::with_capacity(count);
        for i in 0..count {
            let section = i % sections + 1;
            let word = *self.rng.pick(&ARTICLE_WORDS);
            let file = format!("{word}-{i}.html");
            let at = loc(h, format!("/s{section}/{file}"));
            // Every fiftieth article is published but linked from nowhere.
            if i % 50 != 49 {
                linked.push((section, file.clone(), at.clone()));
            }
            all.push((section, file, at));
        }
        // Section indexes: page 1 links every other page with a query-only
        // relative link, articles with document-relative links.
        for s in 1..=sections {
            let items: Vec<&(usize, String, Loc)> =
                linked.iter().filter(|(sec, _, _)| *sec == s).collect();
            let index_pages = items.len().div_ceil(PER_INDEX_PAGE).max(1);
            for p in 1..=index_pages {
                let target = if p == 1 {
                    format!("/s{s}/")
                } else {
                    format!("/s{s}/?page={p}")
                };
                let mut index = page(format!("Section {s}, page {p}"), self.sentence());
                index.links.push(self.link(h, &loc(h, "/"), "home"));
                if p == 1 {
                    for q in 2..=index_pages {
                        index.links.push(text_link(
                            format!("?page={q}"),
                            Some(loc(h, format!("/s{s}/?page={q}"))),
                            format!("page {q}"),
                        ));
                    }
                } else {
                    index.links.push(text_link(
                        "./",
                        Some(loc(h, format!("/s{s}/"))),
                        "first page",
                    ));
                }
                for (_, file, at) in items
                    .iter()
                    .skip((p - 1) * PER_INDEX_PAGE)
                    .take(PER_INDEX_PAGE)
                {
                    index
                        .links
                        .push(text_link(file.clone(), Some(at.clone()), file.clone()));
                }
                self.put_html(loc(h, target), index);
            }
        }
        // Articles.
        for (section, file, at) in &all {
            let mut article = page(format!("{} {file}", self.hosts[h].name), self.sentence());
            article.text.push(' ');
            article.text.push_str(&self.sentence());
            article.links.push(self.link(h, &loc(h, "/"), "home"));
            article.links.push(text_link(
                "./",
                Some(loc(h, format!("/s{section}/"))),
                "section",
            ));
            for _ in 0..3 {
                let (s, f, other) = self.rng.pick(&linked).clone();
                if other != *at {
                    article
                        .links
                        .push(text_link(format!("../s{s}/{f}"), Some(other), f));
                }
            }
            if self.rng.chance(0.04) {
                let broken = file.replace(".html", "-draft.html");
                article.links.push(text_link(
                    broken.clone(),
                    Some(loc(h, format!("/s{section}/{broken}"))),
                    "an old draft",
                ));
            }
            self.put_html(at.clone(), article);
            self.sources.push(at.clone());
        }
        // Home and about.
        let mut home = page(
            format!("Welcome to {}", self.hosts[h].name),
            self.sentence(),
        );
        for s in 1..=sections {
            home.links
                .push(self.link(h, &loc(h, format!("/s{s}/")), format!("section {s}")));
        }
        for _ in 0..3 {
            let (_, f, at) = self.rng.pick(&linked).clone();
            home.links.push(self.link(h, &at, f));
        }
        home.links
            .push(self.link(h, &loc(h, "/about.html"), "about"));
        home.links.push(text_link(
            format!("mailto:webmaster@{}", self.hosts[h].name),
            None,
            "write to us",
        ));
        home.links.extend(home_extra);
        self.put_html(loc(h, "/"), home);
        let mut about = page("About", self.sentence());
        about
            .links
            .push(self.link(h, &loc(0, "/"), "the demo portal"));
        self.put_html(loc(h, "/about.html"), about);
        linked.into_iter().map(|(_, _, at)| at).collect()
    }

    /// Links across hosts from the articles, to random articles and home
    /// pages, to the hosts that refuse connections or never answer, out of
    /// scope, and to hosts whose robots.txt keeps crawlers out.
    fn cross_links(&mut self) {
        let homes: Vec<Loc> = (0..self.hosts.len()).map(|h| loc(h, "/")).collect();
        let gone = self.role_host(HostRole::Refuses);
        let hole = self.role_host(HostRole::BlackHole);
        let elsewhere = self.role_host(HostRole::OutOfScope);
        let down = self.role_host(HostRole::RobotsUnavailable);
        let broken = self.role_host(HostRole::RobotsServerError);
        let sleepy = self.role_host(HostRole::CrawlDelayTooHigh);
        let sources = std::mem::take(&mut self.sources);
        for src in &sources {
            let mut extra = Vec::new();
            if self.rng.chance(0.25) {
                let target = if self.rng.chance(0.3) {
                    self.rng.pick(&homes).clone()
                } else {
                    self.rng.pick(&self.pool).clone()
                };
                if target.host != src.host {
                    extra.push(self.link(src.host, &target, "elsewhere on the demo web"));
                }
            }
            if self.rng.chance(0.03) {
                let k = self.rng.below(20);
                extra.push(self.link(src.host, &loc(gone, format!("/s1/story-{k}.html")), "gone"));
            }
            if self.rng.chance(0.03) {
                let k = self.rng.below(20);
                extra.push(self.link(src.host, &loc(hole, format!("/s1/note-{k}.html")), "hole"));
            }
            if self.rng.chance(0.02) {
                extra.push(self.link(src.host, &loc(elsewhere, "/"), "another web"));
            }
            if self.rng.chance(0.02) {
                extra.push(self.link(src.host, &loc(down, "/about.html"), "down"));
            }
            if self.rng.chance(0.02) {
                extra.push(self.link(src.host, &loc(broken, "/about.html"), "broken"));
            }
            if self.rng.chance(0.02) {
                extra.push(self.link(src.host, &loc(sleepy, "/about.html"), "sleepy"));
            }
            if let Some(Resource::Html(p)) = self.pages.get_mut(src) {
                p.links.extend(extra);
            }
        }
        self.sources = sources;
    }

    /// A tiny site: a home page linking its pages, the first of which
    /// links one more page (two hops from home), each page linking home and
    /// the portal.
    fn tiny(&mut self, h: usize) {
        let (fewest, most) = TINY_PAGES;
        let count = fewest + self.rng.below(most - fewest + 1);
        let targets: Vec<String> = (1..count).map(|i| format!("/p{i}.html")).collect();
        let (deep, shallow) = targets.split_last().expect("a tiny host has pages");
        let mut home = page(format!("{} home", self.hosts[h].name), self.sentence());
        for t in shallow {
            home.links
                .push(self.link(h, &loc(h, t.as_str()), t.as_str()));
        }
        self.put_html(loc(h, "/"), home);
        for (i, t) in shallow.iter().enumerate() {
            let mut p = page(format!("Tiny page {t}"), self.sentence());
            p.links.push(self.link(h, &loc(h, "/"), "home"));
            p.links.push(self.link(h, &loc(0, "/"), "the demo portal"));
            if i == 0 {
                p.links
                    .push(self.link(h, &loc(h, deep.as_str()), "further"));
            }
            self.put_html(loc(h, t.as_str()), p);
        }
        self.leaf(h, deep, "The far end of a tiny site");
    }

    fn wild(&mut self, h: usize, n: usize) {
        self.robots(
            h,
            "User-agent: *\nDisallow: /*.bak$\nDisallow: /*?sort=\nDisallow: /archive/\n\
             Allow: /archive/*/index.html$\n",
        );
        let targets = [
            "/files/notes.bak",
            "/files/notes.bak.html",
            "/list?sort=asc",
            "/list?page=2",
            "/list",
            "/archive/",
            "/archive/2019/index.html",
            "/archive/2019/notes.html",
            "/archive/2019/index.html?print=1",
        ];
        let extra = targets
            .iter()
            .map(|t| self.link(h, &loc(h, *t), *t))
            .collect();
        self.site(h, n, extra);
        for t in targets {
            self.leaf(h, t, t);
        }
        let mut index2019 = page("Archive 2019", self.sentence());
        index2019.links.push(text_link(
            "photos.html",
            Some(loc(h, "/archive/2019/photos.html")),
            "photos",
        ));
        index2019.links.push(text_link(
            "../2020/index.html",
            Some(loc(h, "/archive/2020/index.html")),
            "2020",
        ));
        self.put_html(loc(h, "/archive/2019/index.html"), index2019);
        self.leaf(h, "/archive/2019/photos.html", "Photos 2019");
        self.leaf(h, "/archive/2020/index.html", "Archive 2020");
    }

    fn moved(&mut self, h: usize, n: usize) {
        // robots.txt through two redirects.
        self.redirect(h, "/robots.txt", 302, loc(h, "/robots/current"));
        self.redirect(h, "/robots/current", 301, loc(h, "/robots/rules.txt"));
        self.put(
            loc(h, "/robots/rules.txt"),
            Resource::File {
                content_type: "text/plain",
                body: b"User-agent: *\nDisallow: /secret/\n".to_vec(),
            },
        );
        self.redirect(h, "/old-page.html", 301, loc(h, "/new-page.html"));
        self.redirect(h, "/chain/start", 302, loc(h, "/chain/middle"));
        self.redirect(h, "/chain/middle", 301, loc(h, "/chain/end.html"));
        self.redirect(h, "/loop/a", 302, loc(h, "/loop/b"));
        self.redirect(h, "/loop/b", 302, loc(h, "/loop/a"));
        self.redirect(h, "/temporary", 307, loc(h, "/new-page.html?via=temporary"));
        self.redirect(h, "/see-other", 303, loc(h, "/see-other-target.html"));
        self.redirect(h, "/perm", 308, loc(h, "/perm-target.html"));
        self.redirect(h, "/to-news", 301, loc(0, "/"));
        let starts = [
            "/old-page.html",
            "/chain/start",
            "/loop/a",
            "/temporary",
            "/see-other",
            "/perm",
            "/to-news",
            "/secret/plans.html",
        ];
        let extra = starts
            .iter()
            .map(|t| self.link(h, &loc(h, *t), *t))
            .collect();
        self.site(h, n, extra);
        for t in [
            "/new-page.html",
            "/new-page.html?via=temporary",
            "/chain/end.html",
            "/see-other-target.html",
            "/perm-target.html",
            "/secret/plans.html",
        ] {
            self.leaf(h, t, t);
        }
    }

    fn traps(&mut self, h: usize) {
        let mut home = page("Traps", "Paths that never end.");
        home.links.push(self.link(h, &loc(h, "/tags/"), "tags"));
        home.links.push(self.link(h, &loc(h, "/docs/"), "docs"));
        let long = format!("/search?q={}", "a".repeat(3000));
        home.links
            .push(self.link(h, &loc(h, long.as_str()), "a long search"));
        let params: Vec<String> = (1..=12).map(|i| format!("p{i}={i}")).collect();
        let filter = format!("/filter?{}", params.join("&"));
        home.links
            .push(self.link(h, &loc(h, filter.as_str()), "many filters"));
        let segments: Vec<String> = (1..=24).map(|i| format!("d{i}")).collect();
        let deep = format!("/deep/{}/", segments.join("/"));
        home.links
            .push(self.link(h, &loc(h, deep.as_str()), "deep"));
        self.put_html(loc(h, "/"), home);
    }

    fn files(&mut self, h: usize) {
        let name = self.hosts[h].name.clone();
        let files: [(&str, &'static str, Vec<u8>); 5] = [
            (
                "/report.pdf",
                "application/pdf",
                b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
                    .to_vec(),
            ),
            ("/logo.png", "image/png", {
                let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
                png.extend_from_slice(&[0, 0, 0, 13]);
                png.extend_from_slice(b"IHDR");
                png.extend((0u8..64).map(|i| i.wrapping_mul(37)));
                png
            }),
            (
                "/data.csv",
                "text/csv",
                b"city,population\nRiverton,1200\nStonebridge,800\n".to_vec(),
            ),
            (
                "/feed.json",
                "application/json",
                format!("{{\"items\": [{{\"url\": \"http://{name}/from-json.html\"}}]}}\n")
                    .into_bytes(),
            ),
            (
                "/notes.txt",
                "text/plain; charset=utf-8",
                format!("Plain text is not HTML: http://{name}/from-text.html is not a link.\n")
                    .into_bytes(),
            ),
        ];
        let mut home = page("Files", "Documents that are not HTML.");
        for (target, content_type, body) in files {
            home.links.push(self.link(h, &loc(h, target), target));
            self.put(loc(h, target), Resource::File { content_type, body });
        }
        // Exist, but only named in files that are not HTML.
        self.leaf(h, "/from-json.html", "Named in JSON");
        self.leaf(h, "/from-text.html", "Named in text");
        self.put_html(loc(h, "/"), home);
    }

    fn charsets(&mut self, h: usize) {
        let pages: [(&str, Charset, &str, &[&str]); 4] = [
            (
                "/latin1.html",
                Charset::Latin1Header,
                "Café, naïve, résumé: ISO-8859-1 announced by the HTTP header.",
                &["/café.html", "naïve/résumé.html"],
            ),
            (
                "/cp1252.html",
                Charset::Windows1252Meta,
                "Euro € and œuvre: windows-1252 announced by meta charset.",
                &["/€uro.html", "/œuvre.html"],
            ),
            (
                "/sjis.html",
                Charset::ShiftJisMeta,
                "日本語のページ: Shift_JIS announced by meta http-equiv.",
                &["/日本.html", "カタカナ.html"],
            ),
            (
                "/bom.html",
                Charset::Utf8Bom,
                "Große Grüße: UTF-8 announced only by a byte-order mark.",
                &["/grüße.html"],
            ),
        ];
        let mut home = page("Charsets", "Pages in several encodings.");
        for (target, charset, text, links) in pages {
            home.links.push(self.link(h, &loc(h, target), target));
            let mut p = page(target.trim_start_matches('/'), text);
            p.charset = charset;
            for href in links {
                let absolute = if href.starts_with('/') {
                    href.to_string()
                } else {
                    format!("/{href}")
                };
                let to = loc(h, encode_path(&absolute));
                p.links.push(text_link(*href, Some(to.clone()), *href));
                let mut target_page = page(format!("Reached through {href}"), self.sentence());
                target_page.links.push(self.link(h, &loc(h, "/"), "home"));
                self.put_html(to, target_page);
            }
            self.put_html(loc(h, target), p);
        }
        self.put_html(loc(h, "/"), home);
    }

    fn markup(&mut self, h: usize) {
        let name = self.hosts[h].name.clone();
        let at = |t: &str| Some(loc(h, t));
        let mut home = page("Markup", "Every way to write a link.");
        for t in [
            "/base/page.html",
            "/map.html",
            "/iframe.html",
            "/frames.html",
            "/print.html",
            "/refresh.html",
            "/nofollow.html",
            "/meta-nofollow.html",
            "/header-nofollow.html",
            "/spellings.html",
            "/opaque.html",
            "/followed.html",
        ] {
            home.links.push(self.link(h, &loc(h, t), t));
        }
        // The same link twice.
        home.links
            .push(self.link(h, &loc(h, "/followed.html"), "again"));
        self.put_html(loc(h, "/"), home);

        // <base href>: relative links resolve against it.
        let mut based = page("Base", "Relative links below resolve against <base>.");
        based.base = Some(Href::Absolute {
            scheme: "http",
            host: name.clone(),
            rest: "/manual/".into(),
        });
        based
            .links
            .push(text_link("intro.html", at("/manual/intro.html"), "intro"));
        based.links.push(text_link(
            "chapter/one.html",
            at("/manual/chapter/one.html"),
            "chapter one",
        ));
        based
            .links
            .push(text_link("/rooted.html", at("/rooted.html"), "rooted"));
        self.put_html(loc(h, "/base/page.html"), based);

        let mut map = page("Image map", "An image map with one area.");
        let mut area = text_link("/area-target.html", at("/area-target.html"), "area");
        area.kind = LinkKind::Area;
        map.links.push(area);
        self.put_html(loc(h, "/map.html"), map);

        let mut iframe = page("Iframe", "A page in a page.");
        let mut inner = text_link("/iframe-target.html", at("/iframe-target.html"), "");
        inner.kind = LinkKind::Iframe;
        iframe.links.push(inner);
        self.put_html(loc(h, "/iframe.html"), iframe);

        let mut frames = page("Frames", "");
        frames.frameset = true;
        for t in ["/frame-left.html", "/frame-right.html"] {
            let mut f = text_link(t, at(t), "");
            f.kind = LinkKind::Frame;
            frames.links.push(f);
        }
        self.put_html(loc(h, "/frames.html"), frames);

        let mut print = page("Printable", "The canonical version lives elsewhere.");
        let mut canonical = text_link("/canonical-target.html", at("/canonical-target.html"), "");
        canonical.kind = LinkKind::Canonical;
        print.links.push(canonical);
        self.put_html(loc(h, "/print.html"), print);

        let mut refresh = page("Refresh", "This page moves on by itself.");
        let mut meta = text_link("/refresh-target.html", at("/refresh-target.html"), "");
        meta.kind = LinkKind::Refresh;
        refresh.links.push(meta);
        self.put_html(loc(h, "/refresh.html"), refresh);

        let mut nofollow = page("Nofollow", "One link is not to be followed.");
        let mut nf = text_link(
            "/nofollow-target.html",
            at("/nofollow-target.html"),
            "sponsored",
        );
        nf.nofollow = true;
        nofollow.links.push(nf);
        nofollow.links.push(text_link(
            "/followed.html",
            at("/followed.html"),
            "followed",
        ));
        self.put_html(loc(h, "/nofollow.html"), nofollow);

        let mut meta_nf = page("Meta nofollow", "No link of this page is to be followed.");
        meta_nf.nofollow_meta = true;
        meta_nf.links.push(text_link(
            "/behind-meta.html",
            at("/behind-meta.html"),
            "hidden",
        ));
        self.put_html(loc(h, "/meta-nofollow.html"), meta_nf);

        let mut header_nf = page("Header nofollow", "X-Robots-Tag says nofollow.");
        header_nf.x_robots_nofollow = true;
        header_nf.links.push(text_link(
            "/behind-header.html",
            at("/behind-header.html"),
            "hidden",
        ));
        self.put_html(loc(h, "/header-nofollow.html"), header_nf);

        // Spellings that canonicalize to the pages below.
        let mut spellings = page("Spellings", "Many ways to write one URL.");
        let abs = |scheme: &'static str, host: &str, rest: &str, target: &str| RawLink {
            href: Href::Absolute {
                scheme,
                host: host.to_string(),
                rest: rest.to_string(),
            },
            target: Some(loc(h, target)),
            kind: LinkKind::Anchor,
            nofollow: false,
            text: rest.to_string(),
        };
        spellings.links.push(abs(
            "HTTP",
            &name.to_ascii_uppercase(),
            "/spelled-1.html",
            "/spelled-1.html",
        ));
        spellings.links.push(abs(
            "http",
            &format!("{name}."),
            "/spelled-9.html",
            "/spelled-9.html",
        ));
        for (href, target) in [
            ("./x/../spelled-2.html", "/spelled-2.html"),
            ("/spelled-3.html#section", "/spelled-3.html"),
            ("/spelled-4.html?", "/spelled-4.html"),
            ("/%7Espelled-5.html", "/~spelled-5.html"),
            ("/spelled-6.html?sid=0123456789abcdef", "/spelled-6.html"),
            ("/spelled-7.html;jsessionid=ABC123", "/spelled-7.html"),
            ("/spelled-%e2%9c%93.html", "/spelled-%E2%9C%93.html"),
            ("  /spelled-8.html  ", "/spelled-8.html"),
            ("/a/b/../../spelled-10.html", "/spelled-10.html"),
            ("/query.html?a=1&b=2", "/query.html?a=1&b=2"),
        ] {
            spellings
                .links
                .push(text_link(href, at(target), href.trim()));
        }
        self.put_html(loc(h, "/spellings.html"), spellings);

        let mut opaque = page("Not crawlable", "Links a crawler does not follow.");
        for href in [
            "javascript:void(0)",
            "mailto:webmaster@markup.demo.test",
            "data:text/plain,hello",
            "tel:+15550100",
            "ftp://files.demo.test/pub/",
        ] {
            opaque.links.push(text_link(href, None, href));
        }
        self.put_html(loc(h, "/opaque.html"), opaque);

        for t in [
            "/manual/intro.html",
            "/manual/chapter/one.html",
            "/rooted.html",
            "/area-target.html",
            "/iframe-target.html",
            "/frame-left.html",
            "/frame-right.html",
            "/canonical-target.html",
            "/refresh-target.html",
            "/nofollow-target.html",
            "/followed.html",
            "/behind-meta.html",
            "/behind-header.html",
            "/spelled-1.html",
            "/spelled-2.html",
            "/spelled-3.html",
            "/spelled-4.html",
            "/~spelled-5.html",
            "/spelled-6.html",
            "/spelled-7.html",
            "/spelled-%E2%9C%93.html",
            "/spelled-8.html",
            "/spelled-9.html",
            "/spelled-10.html",
            "/query.html?a=1&b=2",
            "/unlinked-1.html",
            "/unlinked-2.html",
        ] {
            self.leaf(h, t, t);
        }
    }
}

/// Pages that answer by rule rather than from the table: the calendar and
/// the other traps go on forever, and `old` redirects everything.
pub(super) fn dynamic(inner: &Inner, at: &Loc) -> Option<Resource> {
    let h = at.host;
    match inner.hosts[h].role {
        HostRole::MovedHost => {
            let new = inner
                .hosts
                .iter()
                .position(|x| x.role == HostRole::MovedHostTarget)?;
            Some(Resource::Redirect {
                status: 301,
                location: Href::Absolute {
                    scheme: "http",
                    host: inner.hosts[new].name.clone(),
                    rest: at.target.clone(),
                },
                target: loc(new, at.target.clone()),
            })
        }
        HostRole::Calendar => calendar(h, &at.target),
        HostRole::Traps => trap(h, &at.target),
        _ => None,
    }
}

fn year_of(s: &str) -> Option<u32> {
    (s.len() == 4 && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
        .filter(|y| (1000..=9999).contains(y))
}

fn calendar(h: usize, target: &str) -> Option<Resource> {
    let rest = target.strip_prefix("/cal/")?;
    let [y, m, ""] = rest.split('/').collect::<Vec<_>>()[..] else {
        return None;
    };
    let y = year_of(y)?;
    let m: u32 = (m.len() == 2).then(|| m.parse().ok()).flatten()?;
    if !(1..=12).contains(&m) {
        return None;
    }
    let mut p = page(format!("{y}-{m:02}"), "A calendar that goes on forever.");
    let (ny, nm) = if m == 12 { (y + 1, 1) } else { (y, m + 1) };
    for ((yy, mm), text) in [((ny, nm), "next month"), ((y + 1, m), "next year")] {
        if yy <= 9999 {
            p.links.push(text_link(
                format!("../../{yy}/{mm:02}/"),
                Some(loc(h, format!("/cal/{yy}/{mm:02}/"))),
                text,
            ));
        }
    }
    p.links
        .push(text_link("/cal/", Some(loc(h, "/cal/")), "this year"));
    Some(Resource::Html(p))
}

/// Most segments a trap path answers before it gives up with 404 (far past
/// any sane crawler limit).
const TRAP_DEPTH: usize = 64;

fn trap(h: usize, target: &str) -> Option<Resource> {
    let home = text_link("/", Some(loc(h, "/")), "home");
    if let Some(rest) = target.strip_prefix("/tags/") {
        let segments: Vec<&str> = rest.split('/').collect();
        let (last, tags) = segments.split_last()?;
        if !last.is_empty()
            || tags.len() > TRAP_DEPTH
            || !tags.iter().all(|t| *t == "red" || *t == "blue")
        {
            return None;
        }
        let mut p = page(
            format!("Tags: {}", tags.join(" + ")),
            "Refine by another tag.",
        );
        for tag in ["red", "blue"] {
            p.links.push(text_link(
                format!("{tag}/"),
                Some(loc(h, format!("{target}{tag}/"))),
                tag,
            ));
        }
        p.links.push(home);
        return Some(Resource::Html(p));
    }
    if let Some(rest) = target.strip_prefix("/docs/") {
        let depth = rest.matches("docs/").count();
        if rest != "docs/".repeat(depth) || depth > TRAP_DEPTH {
            return None;
        }
        let mut p = page("Docs", "A relative link that should have been absolute.");
        p.links.push(text_link(
            "docs/",
            Some(loc(h, format!("{target}docs/"))),
            "docs",
        ));
        p.links.push(home);
        return Some(Resource::Html(p));
    }
    if target.starts_with("/search?")
        || target.starts_with("/filter?")
        || target.starts_with("/deep/")
    {
        let mut p = page("Results", "Nothing here.");
        p.links.push(home);
        return Some(Resource::Html(p));
    }
    None
}
