//! Rules per host: `CRAWL/host-rules.toml`, settings that a crawl operator
//! tunes for some hosts, domains or networks over the crawl-wide ones, read
//! by both programs.
//!
//! ```toml
//! [[rule]]
//! domain = "example.com"        # the domain and every host under it
//! min_delay = "2s"
//! max_per_host = 200
//!
//! [[rule]]
//! host = "www.example.com"      # this host alone: more specific, so it wins
//! min_delay = "10s"
//! drop_params = ["ref", "from_*"]
//!
//! [[rule]]
//! surt = "com,example,www,)/archive/"   # the URLs under a path of a host
//! deny = ["*"]
//!
//! [[rule]]
//! addresses = "10.0.0.0/8"      # hosts whose address is in the range
//! allow_private = true
//!
//! [[rule]]
//! host = "wiki.example.com"     # extra request headers for one host
//! headers = { Cookie = "intranet=1" }
//! ```
//!
//! **Matches.** Each rule has exactly one of `host` (one host), `domain`
//! (a domain and every host under it), `surt` (a SURT prefix: the host's
//! labels reversed, each followed by a comma, `)` after the last, then a
//! path: `com,example,` is `domain = "example.com"`, `com,example,www,)`
//! is `host = "www.example.com"`, `com,example,www,)/archive/` the URLs of
//! that host whose path starts with `/archive/`) and `addresses` (an IPv4
//! or IPv6 network, `10.0.0.0/8`, or one address: the hosts the fetcher
//! reaches at such an address). Ports play no part.
//!
//! **The most specific rule wins, key by key.** The rules that match a URL
//! are laid one over the other, as Heritrix lays its settings sheets over
//! SURT prefixes: each key takes its value from the most specific rule that
//! sets it, and from the crawl-wide settings when none does. A longer SURT
//! prefix is more specific (a path rule over a host rule over a domain rule
//! over the rule of a domain above it); a rule on names is more specific
//! than a rule on addresses, and a smaller network more specific than a
//! larger one. Two rules that match the same (the same host twice, or a
//! `domain` and the `surt` that means the same) are refused: put their keys
//! in one rule.
//!
//! **Keys.** See [`Key`]. Some apply to a whole host ([`Key::whole_host`]:
//! the delays, caps and budgets, `allow_private`, `weight` and the
//! canonical form) and may not be set by a rule with a path; the others
//! (`allow`, `deny`, `conditional_requests`, the recrawl bounds, `headers`)
//! apply URL by URL.
//!
//! **Robots.txt comes first.** No rule overrides it: a host's
//! `Crawl-delay` holds whatever `min_delay` a rule gives (the delay is the
//! largest of the two and the others), and a path robots.txt disallows is
//! not fetched whatever `allow` says. `allow` widens the crawl's scope,
//! not what robots.txt permits.
//!
//! **Bad rules are refused** with the file, the line and the reason
//! ([`RulesError`]); nothing is crawled with rules that do not read.
//!
//! ```
//! use common::rules::HostRules;
//! let text = "[[rule]]\ndomain = \"example.com\"\nmin_delay = \"2s\"\n\n\
//!             [[rule]]\nhost = \"www.example.com\"\nmin_delay = \"10s\"\n";
//! let rules = HostRules::parse(text, "host-rules.toml".as_ref()).unwrap();
//! let www = rules.for_host("www.example.com", None);
//! assert_eq!(www.min_delay(), Some(std::time::Duration::from_secs(10)));
//! assert_eq!(www.source(common::rules::Key::MinDelay).unwrap().line, 5);
//! let blog = rules.for_host("blog.example.com", None);
//! assert_eq!(blog.min_delay(), Some(std::time::Duration::from_secs(2)));
//! assert_eq!(rules.for_host("example.org", None).min_delay(), None);
//!
//! let bad = HostRules::parse("[[rule]]\nhost = \"a.test\"\nmin_delay = \"soon\"\n", "r.toml".as_ref());
//! assert!(bad.unwrap_err().to_string().starts_with("r.toml:3: min_delay:"));
//! ```

mod explain;
mod parse;
mod pattern;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ipnet::IpNet;

pub use explain::{Explained, Explanation, Source};
pub use pattern::PathPattern;

use crate::urlnorm::HostCanon;

/// The name of the rules file, in the crawl directory (beside
/// `crawl.toml`; a sharded crawl has one, at its top).
pub const RULES_FILE: &str = "host-rules.toml";

/// The version of the rules file's format: the file may say it
/// (`version = 1`, at its top); a file without one is version 1.
pub const RULES_VERSION: u32 = 1;

/// A rules file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum RulesError {
    /// The file exists but could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A line of the file is not a valid rule.
    #[error("{path}:{line}: {message}")]
    Bad {
        /// The file.
        path: PathBuf,
        /// The line (from 1).
        line: usize,
        /// What is wrong, and what would be right.
        message: String,
    },
}

/// What a rule matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Match {
    /// One host (`host = "www.example.com"`), in canonical form.
    Host(String),
    /// A domain and every host under it (`domain = "example.com"`).
    Domain(String),
    /// A SURT prefix (`surt = "com,example,www,)/archive/"`).
    Surt(String),
    /// The hosts at an address of a network (`addresses = "10.0.0.0/8"`).
    Addresses(IpNet),
}

impl std::fmt::Display for Match {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Match::Host(h) => write!(f, "host {h}"),
            Match::Domain(d) => write!(f, "domain {d}"),
            Match::Surt(s) => write!(f, "surt {s}"),
            Match::Addresses(n) => write!(f, "addresses {n}"),
        }
    }
}

/// The settings a rule may set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key {
    /// Smallest delay between two requests to the host (a duration).
    MinDelay,
    /// Factor on the host's mean response time in its delay (zero or more).
    DelayFactor,
    /// URLs of the host in one round, at most (1 or more).
    MaxPerHost,
    /// URLs of the host over the crawl, at most (0: no limit).
    MaxHostPages,
    /// WARC bytes of the host over the crawl, at most (a size; 0: no limit).
    MaxHostBytes,
    /// Loopback and private addresses may be fetched (true or false).
    AllowPrivate,
    /// Weight of the host's URLs where the crawl chooses by score (more
    /// than 0; 1 is neutral).
    Weight,
    /// Query parameters dropped from the host's URLs (names; `name*` for
    /// every name that starts so).
    DropParams,
    /// The query's parameters of the host's URLs sorted.
    SortQuery,
    /// The path of the host's URLs in lower case.
    LowercasePath,
    /// Path patterns in scope, even on a host outside the crawl's scope.
    Allow,
    /// Path patterns out of scope.
    Deny,
    /// Send a refetch's validators (`If-None-Match`, `If-Modified-Since`).
    ConditionalRequests,
    /// Shortest interval between two fetches of a URL (a duration).
    RecrawlMin,
    /// Longest interval between two fetches of a URL (a duration).
    RecrawlMax,
    /// Request headers added to every request (`{ Name = "value" }`).
    Headers,
}

impl Key {
    /// True if the programs apply the key: every key is. `min_delay` and
    /// `delay_factor` (both programs), `max_per_host` and `max_host_pages`
    /// (the segmenter), `max_host_bytes` (the segmenter's plan and the
    /// fetcher's cut), `allow_private` (the fetcher's address guard),
    /// `allow` and `deny` (the scope, [`HostRules::scope`]), the canonical
    /// form ([`HostRules::host_form`]: both programs), `conditional_requests`
    /// and `headers` (the fetcher's requests), `recrawl_min` and
    /// `recrawl_max` (the segmenter's refetch schedule), `weight` (the
    /// segmenter: it multiplies the score of the host's URLs where a round
    /// chooses across hosts). Kept so that a key added later and not yet
    /// applied is said to be so.
    pub fn applied(self) -> bool {
        true
    }

    /// Every key, in the order explanations list them.
    pub const ALL: [Key; 16] = [
        Key::MinDelay,
        Key::DelayFactor,
        Key::MaxPerHost,
        Key::MaxHostPages,
        Key::MaxHostBytes,
        Key::AllowPrivate,
        Key::Weight,
        Key::DropParams,
        Key::SortQuery,
        Key::LowercasePath,
        Key::Allow,
        Key::Deny,
        Key::ConditionalRequests,
        Key::RecrawlMin,
        Key::RecrawlMax,
        Key::Headers,
    ];

    /// The key's name in the file.
    pub fn name(self) -> &'static str {
        match self {
            Key::MinDelay => "min_delay",
            Key::DelayFactor => "delay_factor",
            Key::MaxPerHost => "max_per_host",
            Key::MaxHostPages => "max_host_pages",
            Key::MaxHostBytes => "max_host_bytes",
            Key::AllowPrivate => "allow_private",
            Key::Weight => "weight",
            Key::DropParams => "drop_params",
            Key::SortQuery => "sort_query",
            Key::LowercasePath => "lowercase_path",
            Key::Allow => "allow",
            Key::Deny => "deny",
            Key::ConditionalRequests => "conditional_requests",
            Key::RecrawlMin => "recrawl_min",
            Key::RecrawlMax => "recrawl_max",
            Key::Headers => "headers",
        }
    }

    /// The key named `name` in the file.
    pub fn parse(name: &str) -> Option<Key> {
        Key::ALL.into_iter().find(|k| k.name() == name)
    }

    /// True for the keys that apply to a whole host (its queue, its
    /// budgets, the canonical form of its URLs): a rule with a path may
    /// not set them.
    pub fn whole_host(self) -> bool {
        !matches!(
            self,
            Key::Allow
                | Key::Deny
                | Key::ConditionalRequests
                | Key::RecrawlMin
                | Key::RecrawlMax
                | Key::Headers
        )
    }
}

/// A rule's value for a key.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `min_delay`, `recrawl_min`, `recrawl_max`.
    Duration(Duration),
    /// `delay_factor`, `weight`.
    Number(f64),
    /// `max_per_host`, `max_host_pages`.
    Count(u64),
    /// `max_host_bytes`.
    Size(u64),
    /// `allow_private`, `sort_query`, `lowercase_path`, `conditional_requests`.
    Switch(bool),
    /// `allow`, `deny`.
    Patterns(Vec<PathPattern>),
    /// `drop_params` (lower case).
    Names(Vec<String>),
    /// `headers`: name and value, in the file's order of names.
    Headers(Vec<(String, String)>),
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        fn list<T: std::fmt::Display>(
            f: &mut std::fmt::Formatter<'_>,
            items: impl Iterator<Item = T>,
        ) -> std::fmt::Result {
            f.write_str("[")?;
            for (i, item) in items.enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "\"{item}\"")?;
            }
            f.write_str("]")
        }
        match self {
            Value::Duration(d) => f.write_str(&duration_text(*d)),
            Value::Number(n) => write!(f, "{n}"),
            Value::Count(n) => write!(f, "{n}"),
            Value::Size(n) => f.write_str(&crate::human::bytes(*n)),
            Value::Switch(b) => write!(f, "{b}"),
            Value::Patterns(p) => list(f, p.iter()),
            Value::Names(n) => list(f, n.iter()),
            Value::Headers(h) => list(f, h.iter().map(|(n, v)| format!("{n}: {v}"))),
        }
    }
}

/// A duration as a rules file would write it (`250ms`, `10s`, `2m`,
/// `1d`).
fn duration_text(d: Duration) -> String {
    if d.subsec_millis() != 0 || d.is_zero() {
        return format!("{}ms", d.as_millis());
    }
    let s = d.as_secs();
    match s {
        _ if s.is_multiple_of(86_400) => format!("{}d", s / 86_400),
        _ if s.is_multiple_of(3600) => format!("{}h", s / 3600),
        _ if s.is_multiple_of(60) => format!("{}m", s / 60),
        _ => format!("{s}s"),
    }
}

/// One rule of the file.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// Its line in the file (that of its `[[rule]]` header).
    pub line: usize,
    /// What it matches.
    pub matches: Match,
    /// The keys it sets, each once, in [`Key`] order.
    pub values: Vec<(Key, Value)>,
    /// The SURT prefix of a rule on names (empty for addresses).
    prefix: String,
}

impl Rule {
    /// The rule's value for `key`, if it sets it.
    pub fn get(&self, key: Key) -> Option<&Value> {
        self.values.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// The path its SURT prefix ends with, for a rule on some URLs of a
    /// host (`/archive/`).
    pub fn path(&self) -> Option<&str> {
        self.prefix
            .find(')')
            .map(|i| &self.prefix[i + 1..])
            .filter(|p| !p.is_empty())
    }

    /// How specific the rule is: rules on names above rules on addresses,
    /// then the longer prefix.
    fn specificity(&self) -> (bool, usize) {
        match &self.matches {
            Match::Addresses(net) => (false, usize::from(net.prefix_len())),
            _ => (true, self.prefix.len()),
        }
    }
}

/// The rules of a crawl: empty when it has no rules file.
#[derive(Debug, Clone, Default)]
pub struct HostRules {
    path: PathBuf,
    rules: Vec<Rule>,
    /// Rules on names by the host part of their prefix (a domain's
    /// `com,example,`, a host's `com,example,www,)`, a path rule's host).
    by_prefix: HashMap<String, Vec<usize>>,
    /// Rules on addresses, the smallest network first.
    by_address: Vec<usize>,
    /// Some rule sets a key of the canonical form.
    canon: bool,
    /// Some rule sets `allow` or `deny`.
    patterns: bool,
    /// The keys some rule sets (bit `1 << key as u32`).
    keys: u32,
}

impl HostRules {
    /// The rules of the crawl directory `crawl` (its top, for a sharded
    /// crawl): [`RULES_FILE`] if it exists, else none.
    pub fn load(crawl: &Path) -> Result<HostRules, RulesError> {
        let path = crawl.join(RULES_FILE);
        match std::fs::read_to_string(&path) {
            Ok(text) => HostRules::parse(&text, &path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(HostRules {
                path,
                ..HostRules::default()
            }),
            Err(source) => Err(RulesError::Io { path, source }),
        }
    }

    /// Reads the rules in `text`; errors name `path` and the line.
    pub fn parse(text: &str, path: &Path) -> Result<HostRules, RulesError> {
        let rules = parse::rules(text, path)?;
        HostRules::index(path, rules)
    }

    /// Indexes `rules` for lookups; two rules that match the same are
    /// refused.
    fn index(path: &Path, rules: Vec<Rule>) -> Result<HostRules, RulesError> {
        let mut set = HostRules {
            path: path.to_path_buf(),
            ..HostRules::default()
        };
        let mut seen: HashMap<String, usize> = HashMap::new();
        for (i, rule) in rules.iter().enumerate() {
            let same = match &rule.matches {
                Match::Addresses(net) => net.trunc().to_string(),
                _ => rule.prefix.clone(),
            };
            if let Some(&first) = seen.get(&same) {
                return Err(RulesError::Bad {
                    path: path.to_path_buf(),
                    line: rule.line,
                    message: format!(
                        "this rule ({}) matches what the rule of line {} ({}) matches: \
                         put their keys in one rule",
                        rule.matches, rules[first].line, rules[first].matches
                    ),
                });
            }
            seen.insert(same, i);
            match &rule.matches {
                Match::Addresses(_) => set.by_address.push(i),
                _ => {
                    let host_part = match rule.prefix.find(')') {
                        Some(end) => &rule.prefix[..=end],
                        None => &rule.prefix[..],
                    };
                    set.by_prefix
                        .entry(host_part.to_string())
                        .or_default()
                        .push(i);
                }
            }
            set.canon |= [Key::DropParams, Key::SortQuery, Key::LowercasePath]
                .iter()
                .any(|&k| rule.get(k).is_some());
            set.patterns |= [Key::Allow, Key::Deny]
                .iter()
                .any(|&k| rule.get(k).is_some());
            for (key, _) in &rule.values {
                set.keys |= 1 << *key as u32;
            }
        }
        set.by_address
            .sort_by_key(|&i| std::cmp::Reverse(rules[i].specificity()));
        set.rules = rules;
        Ok(set)
    }

    /// The file the rules were read from (or would be).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Every rule, in the file's order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// True if there is no rule.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// One warning per rule that sets keys the programs do not apply yet
    /// ([`Key::applied`]), naming the file, the rule's line and the keys:
    /// what the programs log at start, so that no such key is taken for
    /// one in force.
    pub fn unapplied(&self) -> Vec<String> {
        let mut out = Vec::new();
        for rule in &self.rules {
            let keys: Vec<&str> = (rule.values.iter())
                .filter(|(k, _)| !k.applied())
                .map(|(k, _)| k.name())
                .collect();
            if !keys.is_empty() {
                out.push(format!(
                    "{}:{}: {} read but not applied by this version: the rule's other keys \
                     apply, these change nothing",
                    self.path.display(),
                    rule.line,
                    keys.join(", ")
                ));
            }
        }
        out
    }

    /// True if some rule changes the canonical form of URLs: without one,
    /// [`HostRules::canon`] is never needed.
    pub fn changes_canonical_form(&self) -> bool {
        self.canon
    }

    /// The rules that apply to `host` (canonical), whose address is
    /// `address` when it is known: an address in the host's name (an IP
    /// literal) is always known.
    pub fn for_host(&self, host: &str, address: Option<IpAddr>) -> HostView<'_> {
        let mut view = HostView {
            rules: self,
            host: host.to_string(),
            address: address.or_else(|| literal_address(host)),
            levels: Vec::new(),
            paths: Vec::new(),
        };
        if self.is_empty() {
            return view;
        }
        let key = host_surt(host);
        // `com,` `com,example,` ... then the host itself `com,example,www,)`.
        let ends = key
            .match_indices(',')
            .map(|(i, _)| i + 1)
            .chain([key.len()]);
        for end in ends {
            for &i in self.by_prefix.get(&key[..end]).into_iter().flatten() {
                match self.rules[i].path() {
                    None => view.levels.push(i),
                    Some(_) => view.paths.push(i),
                }
            }
        }
        let by_specificity = |i: &usize| std::cmp::Reverse(self.rules[*i].specificity());
        view.levels.sort_by_key(by_specificity);
        view.paths.sort_by_key(by_specificity);
        if let Some(addr) = view.address {
            let nets = self.by_address.iter().copied();
            view.levels
                .extend(nets.filter(|&i| match &self.rules[i].matches {
                    Match::Addresses(net) => net.contains(&addr),
                    _ => false,
                }));
        }
        view
    }

    /// What the `allow` and `deny` patterns of the rules say of `url`
    /// (canonical), as [`UrlView::scope`] does: `Some(true)` in scope
    /// (even on a host outside the crawl's scope), `Some(false)` out of
    /// it, `None` when no pattern of the rules of its host matches it (the
    /// crawl's scope decides). Cheap when no rule sets a pattern.
    ///
    /// ```
    /// use common::rules::HostRules;
    /// let text = "[[rule]]\ndomain = \"example.com\"\ndeny = [\"/private/\"]\n\
    ///             allow = [\"/private/open/\"]\n";
    /// let rules = HostRules::parse(text, "host-rules.toml".as_ref()).unwrap();
    /// let scope = |u: &str| rules.scope(&url::Url::parse(u).unwrap());
    /// assert_eq!(scope("http://www.example.com/private/a"), Some(false));
    /// assert_eq!(scope("http://www.example.com/private/open/a"), Some(true));
    /// assert_eq!(scope("http://www.example.com/public/"), None);
    /// assert_eq!(scope("http://example.org/private/a"), None);
    /// ```
    pub fn scope(&self, url: &url::Url) -> Option<bool> {
        if !self.patterns {
            return None;
        }
        let host = url.host_str()?;
        let path = &url[url::Position::BeforePath..url::Position::AfterQuery];
        self.for_host(host, None).for_url(path).scope(path)
    }

    /// The canonical form's rules for `host`: what [`HostView::canon`]
    /// gives, without the rest.
    pub fn canon(&self, host: &str) -> HostCanon {
        if !self.canon {
            return HostCanon::default();
        }
        self.for_host(host, None).canon()
    }

    /// `url` (canonical) in the canonical form of its host's rules
    /// (`drop_params`, `sort_query`, `lowercase_path`): what both programs
    /// make of every URL they canonicalize, so that a host's spellings
    /// merge. The URL itself when no rule changes its host's form.
    ///
    /// ```
    /// use common::rules::HostRules;
    /// let text = "[[rule]]\nhost = \"shop.test\"\ndrop_params = [\"ref\"]\n\
    ///             sort_query = true\nlowercase_path = true\n";
    /// let rules = HostRules::parse(text, "host-rules.toml".as_ref()).unwrap();
    /// let form = |u: &str| rules.host_form(url::Url::parse(u).unwrap()).to_string();
    /// assert_eq!(form("http://shop.test/Item?z=1&ref=a&b=2"), "http://shop.test/item?b=2&z=1");
    /// assert_eq!(form("http://other.test/Item?z=1&ref=a"), "http://other.test/Item?z=1&ref=a");
    /// ```
    pub fn host_form(&self, url: url::Url) -> url::Url {
        if !self.canon {
            return url;
        }
        match url.host_str() {
            Some(host) => self.canon(host).apply(url),
            None => url,
        }
    }

    /// A URL as the crawl stored it (a line of the backlog or the fetch
    /// history, written before a rule changed its host's form) in its
    /// host's canonical form ([`HostRules::host_form`]), when that is
    /// another spelling; `None` otherwise, at once when no rule changes the
    /// canonical form (nothing is parsed then).
    ///
    /// ```
    /// use common::rules::HostRules;
    /// let text = "[[rule]]\nhost = \"shop.test\"\ndrop_params = [\"ref\"]\n";
    /// let rules = HostRules::parse(text, "host-rules.toml".as_ref()).unwrap();
    /// let old = "http://shop.test/a?ref=x&b=2";
    /// assert_eq!(rules.respelled(old).as_deref(), Some("http://shop.test/a?b=2"));
    /// assert_eq!(rules.respelled("http://shop.test/a?b=2"), None);
    /// assert_eq!(HostRules::default().respelled(old), None);
    /// ```
    pub fn respelled(&self, url: &str) -> Option<String> {
        if !self.canon {
            return None;
        }
        let parsed = url::Url::parse(url).ok()?;
        let formed = self.host_form(parsed.clone());
        (formed != parsed).then(|| formed.into())
    }

    /// True if some rule sets `key`: without one, the crawl-wide value
    /// holds for every URL, and no lookup is needed.
    pub fn sets(&self, key: Key) -> bool {
        self.keys & (1 << key as u32) != 0
    }

    /// What the rules say of one URL (`host` canonical, `path_and_query`
    /// as a request line writes it), for the keys that apply URL by URL:
    /// `None` when no rule sets `key` (cheap then).
    fn url_value(&self, key: Key, host: &str, path_and_query: &str) -> Option<&Value> {
        if !self.sets(key) {
            return None;
        }
        let view = self.for_host(host, None);
        let source = view.for_url(path_and_query).source(key)?;
        source.get(key)
    }

    /// `conditional_requests` of one URL, if a rule sets it.
    pub fn conditional_requests(&self, host: &str, path_and_query: &str) -> Option<bool> {
        match self.url_value(Key::ConditionalRequests, host, path_and_query) {
            Some(Value::Switch(b)) => Some(*b),
            _ => None,
        }
    }

    /// The headers the rules add to the requests for one URL (empty
    /// without one).
    pub fn headers(&self, host: &str, path_and_query: &str) -> &[(String, String)] {
        match self.url_value(Key::Headers, host, path_and_query) {
            Some(Value::Headers(h)) => h,
            _ => &[],
        }
    }

    /// The bounds of one URL's recrawl interval, as
    /// [`UrlView::recrawl_bounds`] gives them: `min` and `max` (the
    /// crawl-wide ones) where no rule sets them.
    pub fn recrawl_bounds(
        &self,
        host: &str,
        path_and_query: &str,
        min: Duration,
        max: Duration,
    ) -> (Duration, Duration) {
        if !self.sets(Key::RecrawlMin) && !self.sets(Key::RecrawlMax) {
            return (min, max);
        }
        self.for_host(host, None)
            .for_url(path_and_query)
            .recrawl_bounds(min, max)
    }
}

/// The SURT form of a host that rules are matched against: its labels
/// reversed, each followed by a comma, then `)` (`www.example.com` →
/// `com,example,www,)`).
pub fn host_surt(host: &str) -> String {
    let mut key = String::with_capacity(host.len() + 2);
    for label in host.trim_end_matches('.').rsplit('.') {
        key.push_str(label);
        key.push(',');
    }
    key.push(')');
    key
}

/// The address in a host that is an IP literal (`10.1.2.3`, `[::1]`).
fn literal_address(host: &str) -> Option<IpAddr> {
    let bare = host.strip_prefix('[').and_then(|h| h.strip_suffix(']'));
    bare.unwrap_or(host).parse().ok()
}

/// The rules that apply to one host, laid one over the other.
#[derive(Debug, Clone)]
pub struct HostView<'a> {
    rules: &'a HostRules,
    host: String,
    address: Option<IpAddr>,
    /// Rules on the whole host, the most specific first.
    levels: Vec<usize>,
    /// Rules on some of its URLs (a path), the most specific first.
    paths: Vec<usize>,
}

impl<'a> HostView<'a> {
    /// The host.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The host's address, if known.
    pub fn address(&self) -> Option<IpAddr> {
        self.address
    }

    /// True if no rule applies to the host or any of its URLs.
    pub fn is_empty(&self) -> bool {
        self.levels.is_empty() && self.paths.is_empty()
    }

    /// The rules on the whole host, the most specific first.
    pub fn host_rules(&self) -> impl Iterator<Item = &'a Rule> + '_ {
        self.levels.iter().map(|&i| &self.rules.rules[i])
    }

    /// The rules on some of the host's URLs, the most specific first.
    pub fn path_rules(&self) -> impl Iterator<Item = &'a Rule> + '_ {
        self.paths.iter().map(|&i| &self.rules.rules[i])
    }

    /// The host's value for `key`, from the most specific rule on the
    /// whole host that sets it.
    pub fn get(&self, key: Key) -> Option<&'a Value> {
        self.source(key).and_then(|r| r.get(key))
    }

    /// The rule the host's value for `key` comes from.
    pub fn source(&self, key: Key) -> Option<&'a Rule> {
        self.host_rules().find(|r| r.get(key).is_some())
    }

    /// `min_delay`, if a rule sets it.
    pub fn min_delay(&self) -> Option<Duration> {
        self.duration(Key::MinDelay)
    }

    /// `delay_factor`, if a rule sets it.
    pub fn delay_factor(&self) -> Option<f64> {
        self.number(Key::DelayFactor)
    }

    /// `max_per_host`, if a rule sets it.
    pub fn max_per_host(&self) -> Option<u64> {
        self.count(Key::MaxPerHost)
    }

    /// `max_host_pages`, if a rule sets it: `Some(None)` when the rule
    /// lifts the limit (0).
    pub fn max_host_pages(&self) -> Option<Option<u64>> {
        self.count(Key::MaxHostPages).map(|n| (n > 0).then_some(n))
    }

    /// `max_host_bytes`, if a rule sets it: `Some(None)` when the rule
    /// lifts the limit (0).
    pub fn max_host_bytes(&self) -> Option<Option<u64>> {
        match self.get(Key::MaxHostBytes) {
            Some(Value::Size(n)) => Some((*n > 0).then_some(*n)),
            _ => None,
        }
    }

    /// `allow_private`, if a rule sets it.
    pub fn allow_private(&self) -> Option<bool> {
        self.switch(Key::AllowPrivate)
    }

    /// The weight of the host's URLs (1 unless a rule sets it).
    pub fn weight(&self) -> f64 {
        self.number(Key::Weight).unwrap_or(1.0)
    }

    /// What the rules add to the canonical form of the host's URLs.
    pub fn canon(&self) -> HostCanon {
        HostCanon {
            drop_params: match self.get(Key::DropParams) {
                Some(Value::Names(n)) => n.clone(),
                _ => Vec::new(),
            },
            sort_query: self.switch(Key::SortQuery).unwrap_or(false),
            lowercase_path: self.switch(Key::LowercasePath).unwrap_or(false),
        }
    }

    /// The rules that apply to one URL of the host, given its path and
    /// query (`/a/b?x=1`).
    pub fn for_url(&self, path_and_query: &str) -> UrlView<'_, 'a> {
        let paths = self
            .paths
            .iter()
            .copied()
            .filter(|&i| {
                let rule = &self.rules.rules[i];
                rule.path().is_some_and(|p| path_and_query.starts_with(p))
            })
            .collect();
        UrlView { host: self, paths }
    }

    fn duration(&self, key: Key) -> Option<Duration> {
        match self.get(key) {
            Some(Value::Duration(d)) => Some(*d),
            _ => None,
        }
    }

    fn number(&self, key: Key) -> Option<f64> {
        match self.get(key) {
            Some(Value::Number(n)) => Some(*n),
            _ => None,
        }
    }

    fn count(&self, key: Key) -> Option<u64> {
        match self.get(key) {
            Some(Value::Count(n)) => Some(*n),
            _ => None,
        }
    }

    fn switch(&self, key: Key) -> Option<bool> {
        match self.get(key) {
            Some(Value::Switch(b)) => Some(*b),
            _ => None,
        }
    }
}

/// The rules that apply to one URL: those on its path, then those on its
/// whole host.
#[derive(Debug, Clone)]
pub struct UrlView<'v, 'a> {
    host: &'v HostView<'a>,
    /// The path rules whose path the URL starts with, most specific first.
    paths: Vec<usize>,
}

impl<'a> UrlView<'_, 'a> {
    /// The rule the URL's value for `key` comes from.
    pub fn source(&self, key: Key) -> Option<&'a Rule> {
        let rules = &self.host.rules.rules;
        self.paths
            .iter()
            .map(|&i| &rules[i])
            .find(|r| r.get(key).is_some())
            .or_else(|| self.host.source(key))
    }

    /// The URL's value for `key`.
    pub fn get(&self, key: Key) -> Option<&'a Value> {
        self.source(key).and_then(|r| r.get(key))
    }

    /// What the `allow` and `deny` patterns in force say of the URL
    /// (`path_and_query` as given to [`HostView::for_url`]): `Some(true)`
    /// in scope, `Some(false)` out of it, `None` when no pattern matches
    /// (the crawl's scope decides). The longest matching pattern decides,
    /// `allow` on a tie, as in robots.txt.
    pub fn scope(&self, path_and_query: &str) -> Option<bool> {
        let longest = |key| match self.get(key) {
            Some(Value::Patterns(p)) => p
                .iter()
                .filter(|p| p.matches(path_and_query))
                .map(PathPattern::len)
                .max(),
            _ => None,
        };
        match (longest(Key::Allow), longest(Key::Deny)) {
            (None, None) => None,
            (Some(_), None) => Some(true),
            (None, Some(_)) => Some(false),
            (Some(a), Some(d)) => Some(a >= d),
        }
    }

    /// `conditional_requests`, if a rule sets it.
    pub fn conditional_requests(&self) -> Option<bool> {
        match self.get(Key::ConditionalRequests) {
            Some(Value::Switch(b)) => Some(*b),
            _ => None,
        }
    }

    /// The bounds of the URL's recrawl interval: the crawl-wide ones
    /// (`min`, `max`) where no rule sets them. Bounds that cross (a rule's
    /// minimum above the maximum in force) give the maximum.
    pub fn recrawl_bounds(&self, min: Duration, max: Duration) -> (Duration, Duration) {
        let get = |key, default| match self.get(key) {
            Some(Value::Duration(d)) => *d,
            _ => default,
        };
        let (min, max) = (get(Key::RecrawlMin, min), get(Key::RecrawlMax, max));
        (min.min(max), max)
    }

    /// The headers the rules add to the URL's requests.
    pub fn headers(&self) -> &'a [(String, String)] {
        match self.get(Key::Headers) {
            Some(Value::Headers(h)) => h,
            _ => &[],
        }
    }
}
