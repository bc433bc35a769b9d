//! Which candidate URLs are kept: scheme, scope, length and crawler-trap
//! rules, applied in that order to canonical URLs. The segmenter applies them
//! to every link; the fetcher to redirect targets it follows in the same run.
//!
//! **Scope.** `[scope] mode` decides the base: `seeds` reads `CRAWL/scope.seeds`
//! (one registrable domain per line, `#` comments), `list` uses only the
//! configured `hosts` and `domains`, `any` accepts every host. `hosts` and
//! `domains` are added in every mode. A domain covers itself and every host
//! under it (`example.com` covers `www.example.com`); a host only itself.
//! The optional rules file (relative to the crawl directory) holds lines
//! `+REGEX` (allow) and `-REGEX` (deny), matched against the whole canonical
//! URL; blank lines and `#` comments are ignored. The first rule that matches
//! decides; when none does, the hosts and domains decide. Before both, the
//! `allow` and `deny` path patterns of the crawl's host rules
//! (`host-rules.toml`, [`crate::rules`]) decide for the URLs they match:
//! a host's own rule is more specific than the crawl-wide scope.
//!
//! **Traps.** Counting ignores empty path segments (`/a//b/` has two). A
//! path segment that occurs `max_repeated_segment` times or more anywhere in
//! the path is a loop (`/a/b/a/b/a/b`; `0` turns the check off). A year is
//! looked for only where it is clearly a date, so that `/item/1234` or
//! `?x=10&y=1300` are not mistaken for one: a 4-digit path segment followed
//! by a two-digit month segment (`/2031/05/`); `YYYY-MM` at the start of a
//! path segment or query value (`/2031-05-01-launch`, `?from=2031-05`); a
//! full date `YYYY-MM-DD` anywhere in the path or query; a 4-digit value of a
//! query parameter named `year`, `yr` or ending in `year` (`?year=2031`,
//! `?calYear=2031`). A year before 1970 or after the current one plus
//! `max_years_ahead` is a trap.
//!
//! ```
//! use common::config::FilterConfig;
//! use common::filter::{Reject, Scope, UrlFilter};
//! let mut scope = Scope::default();
//! scope.domains.insert("example.com".to_string());
//! let filter = UrlFilter { limits: FilterConfig::default(), scope };
//! let ok = url::Url::parse("https://www.example.com/news/").unwrap();
//! let far = url::Url::parse("https://www.example.com/cal/9999/12/").unwrap();
//! let other = url::Url::parse("https://example.org/").unwrap();
//! assert_eq!(filter.check(&ok, 1), Ok(()));
//! assert_eq!(filter.check(&far, 1), Err(Reject::Calendar));
//! assert_eq!(filter.check(&other, 1), Err(Reject::Scope));
//! ```

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::SystemTime;

use url::Url;

use crate::config::{FilterConfig, ScopeConfig, ScopeMode};
use crate::crawldir::{CrawlDir, SCOPE_SEEDS_LIST};
use crate::listfile::{self, ListError};
use crate::rules::{HostRules, RulesError};

/// Why a URL was refused. The order of the variants is the order the checks run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reject {
    /// Not http or https.
    Scheme,
    /// A deny rule matched, or the host is outside the scope.
    Scope,
    /// Longer than `max_url_length`.
    TooLong,
    /// One path segment appears `max_repeated_segment` times or more.
    RepeatedSegment,
    /// More than `max_path_segments` path segments.
    TooManySegments,
    /// More than `max_hops` hops from a seed.
    TooManyHops,
    /// More than `max_query_params` query parameters.
    TooManyParams,
    /// A year far in the future (or before 1970) in the path or query.
    Calendar,
    /// A file not worth fetching, by the extension of its path's last
    /// segment (`skip_extensions`: archives, disk images, video).
    Extension,
}

impl Reject {
    /// Every variant, in check order (for reports).
    pub const ALL: [Reject; 9] = [
        Reject::Scheme,
        Reject::Scope,
        Reject::TooLong,
        Reject::RepeatedSegment,
        Reject::TooManySegments,
        Reject::TooManyHops,
        Reject::TooManyParams,
        Reject::Calendar,
        Reject::Extension,
    ];

    /// A short stable name for logs and reports (`scope`, `too-long`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Reject::Scheme => "scheme",
            Reject::Scope => "scope",
            Reject::TooLong => "too-long",
            Reject::RepeatedSegment => "repeated-segment",
            Reject::TooManySegments => "too-many-segments",
            Reject::TooManyHops => "too-many-hops",
            Reject::TooManyParams => "too-many-params",
            Reject::Calendar => "calendar",
            Reject::Extension => "extension",
        }
    }
}

/// A problem loading the scope (rules file, seeds file).
#[derive(Debug, thiserror::Error)]
pub enum ScopeError {
    /// A file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A line of the rules file is not a valid regex or lacks its `+`/`-` prefix.
    #[error("{path}:{line}: {message}")]
    BadRule {
        /// The rules file.
        path: std::path::PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The host rules file (`host-rules.toml`) cannot be used.
    #[error(transparent)]
    HostRules(#[from] RulesError),
    /// `scope.seeds` is damaged (cut, emptied, changed).
    #[error(transparent)]
    Damaged(#[from] ListError),
    /// A host or domain in `scope.seeds` or in `[scope]` is not a host name.
    #[error("{place}: `{entry}` is not a host name ({message})")]
    BadHost {
        /// Where the entry was found: `FILE:LINE`, or the `crawl.toml` key.
        place: String,
        /// The entry, as written.
        entry: String,
        /// What is wrong.
        message: String,
    },
}

/// The scope of a crawl.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    /// Any host is in scope (rules still apply).
    pub any: bool,
    /// Registrable domains in scope.
    pub domains: HashSet<String>,
    /// Hosts in scope.
    pub hosts: HashSet<String>,
    /// `(allow, regex)` rules, first match wins, checked before hosts/domains.
    pub rules: Vec<(bool, regex::Regex)>,
    /// The crawl's host rules, whose `allow` and `deny` patterns are
    /// checked first.
    pub host_rules: HostRules,
}

impl Scope {
    /// Builds the scope from `[scope]`, reading `scope.seeds`, the rules
    /// file and the host rules ([`HostRules::load`]) relative to
    /// `crawl_dir`.
    ///
    /// In `seeds` mode a missing `scope.seeds` is an error (it is written by
    /// `segmenter inject`); a missing rules file named in the settings is an
    /// error in every mode. Hosts and domains are stored in canonical form
    /// (lower case, punycode, no trailing dot).
    pub fn load(cfg: &ScopeConfig, crawl_dir: &Path) -> Result<Scope, ScopeError> {
        Scope::with_host_rules(cfg, crawl_dir, HostRules::load(crawl_dir)?)
    }

    /// [`Scope::load`] with the host rules a program has already read (its
    /// settings hold them), so that one run reads the file once and its
    /// scope and its delays and caps come from the same rules.
    pub fn with_host_rules(
        cfg: &ScopeConfig,
        crawl_dir: &Path,
        host_rules: HostRules,
    ) -> Result<Scope, ScopeError> {
        let mut scope = Scope {
            any: cfg.mode == ScopeMode::Any,
            host_rules,
            ..Scope::default()
        };
        if cfg.mode == ScopeMode::Seeds {
            let path = CrawlDir::new(crawl_dir).scope_seeds_path();
            let entries =
                listfile::read(&path, &SCOPE_SEEDS_LIST)?.ok_or_else(|| ScopeError::Io {
                    path: path.clone(),
                    source: std::io::ErrorKind::NotFound.into(),
                })?;
            for (n, entry) in entries {
                let place = format!("{}:{n}", path.display());
                scope.domains.insert(canonical_host(&entry, &place)?);
            }
        }
        for host in &cfg.hosts {
            scope
                .hosts
                .insert(canonical_host(host, "crawl.toml [scope] hosts")?);
        }
        for domain in &cfg.domains {
            scope
                .domains
                .insert(canonical_host(domain, "crawl.toml [scope] domains")?);
        }
        if let Some(rules_file) = &cfg.rules_file {
            let path = crawl_dir.join(rules_file);
            scope.rules = parse_rules(&read(&path)?, &path)?;
        }
        Ok(scope)
    }

    /// True if `url` (canonical) is in scope.
    pub fn contains(&self, url: &Url) -> bool {
        if let Some(inside) = self.host_rules.scope(url) {
            return inside;
        }
        for (allow, rule) in &self.rules {
            if rule.is_match(url.as_str()) {
                return *allow;
            }
        }
        if self.any {
            return true;
        }
        let Some(host) = url.host_str() else {
            return false;
        };
        self.contains_host(host)
    }

    /// True if `host` (canonical) is a listed host or lies under a listed
    /// domain; rules are not consulted.
    pub fn contains_host(&self, host: &str) -> bool {
        if self.any || self.hosts.contains(host) {
            return true;
        }
        if self.domains.is_empty() {
            return false;
        }
        // Walk up the labels: www.a.example.com, a.example.com, example.com, com.
        let mut rest = host;
        loop {
            if self.domains.contains(rest) {
                return true;
            }
            match rest.find('.') {
                Some(dot) => rest = &rest[dot + 1..],
                None => return false,
            }
        }
    }
}

fn read(path: &Path) -> Result<String, ScopeError> {
    std::fs::read_to_string(path).map_err(|source| ScopeError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Lower case, punycode, no trailing dot; `[::1]` and IPv4 addresses too.
fn canonical_host(entry: &str, place: &str) -> Result<String, ScopeError> {
    let bad = |message: String| ScopeError::BadHost {
        place: place.to_string(),
        entry: entry.to_string(),
        message,
    };
    let trimmed = entry.trim().trim_end_matches('.');
    if trimmed.is_empty() {
        return Err(bad("empty".to_string()));
    }
    if trimmed.contains(['/', ':']) && !trimmed.starts_with('[') {
        return Err(bad(
            "write the host alone, without scheme, port or path".to_string()
        ));
    }
    let host = url::Host::parse(trimmed).map_err(|e| bad(e.to_string()))?;
    Ok(host.to_string())
}

/// Parses the rules file: `+REGEX` allows, `-REGEX` denies; blank lines and
/// lines starting with `#` are ignored.
fn parse_rules(text: &str, path: &Path) -> Result<Vec<(bool, regex::Regex)>, ScopeError> {
    let bad = |line: usize, message: String| ScopeError::BadRule {
        path: PathBuf::from(path),
        line,
        message,
    };
    let mut rules = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (allow, pattern) = match line.as_bytes()[0] {
            b'+' => (true, line[1..].trim()),
            b'-' => (false, line[1..].trim()),
            _ => {
                return Err(bad(
                    n + 1,
                    format!("`{line}`: a rule starts with `+` (allow) or `-` (deny)"),
                ));
            }
        };
        if pattern.is_empty() {
            return Err(bad(n + 1, "empty pattern".to_string()));
        }
        let re = regex::Regex::new(pattern)
            .map_err(|e| bad(n + 1, format!("`{pattern}` is not a valid regex: {e}")))?;
        rules.push((allow, re));
    }
    Ok(rules)
}

/// Applies the checks in [`Reject`] order.
#[derive(Debug, Clone)]
pub struct UrlFilter {
    /// The limits.
    pub limits: FilterConfig,
    /// The scope.
    pub scope: Scope,
}

impl UrlFilter {
    /// Checks a canonical URL found `hops` hops from a seed.
    ///
    /// The current year (for calendar traps) is read once per process.
    pub fn check(&self, url: &Url, hops: u32) -> Result<(), Reject> {
        self.check_in_year(url, hops, this_year())
    }

    /// [`check`](Self::check) as if the current year were `year`.
    pub fn check_in_year(&self, url: &Url, hops: u32, year: i64) -> Result<(), Reject> {
        let limits = &self.limits;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(Reject::Scheme);
        }
        if !self.scope.contains(url) {
            return Err(Reject::Scope);
        }
        if url.as_str().len() > limits.max_url_length {
            return Err(Reject::TooLong);
        }
        let path = url.path();
        let shape = PathShape::of(path, limits.max_repeated_segment);
        if shape.repeated {
            return Err(Reject::RepeatedSegment);
        }
        if shape.segments > limits.max_path_segments {
            return Err(Reject::TooManySegments);
        }
        if hops > limits.max_hops {
            return Err(Reject::TooManyHops);
        }
        let query = url.query().unwrap_or("");
        if count_params(query.as_bytes()) > limits.max_query_params {
            return Err(Reject::TooManyParams);
        }
        let latest = year.saturating_add(limits.max_years_ahead);
        if has_year_outside(path, query, 1970, latest) {
            return Err(Reject::Calendar);
        }
        if skipped_extension(path, &limits.skip_extensions) {
            return Err(Reject::Extension);
        }
        Ok(())
    }
}

/// True if the last segment of `path` ends in `.EXT` for one of `skip`
/// (compared without case; `tar.gz` is a two-part extension).
fn skipped_extension(path: &str, skip: &[String]) -> bool {
    if skip.is_empty() {
        return false;
    }
    let last = path.rsplit('/').next().unwrap_or("");
    skip.iter().any(|ext| {
        last.len() > ext.len() + 1
            && last.as_bytes()[last.len() - ext.len() - 1] == b'.'
            && last[last.len() - ext.len()..].eq_ignore_ascii_case(ext)
    })
}

/// The current calendar year (UTC), computed once.
fn this_year() -> i64 {
    static YEAR: OnceLock<i64> = OnceLock::new();
    *YEAR.get_or_init(|| crate::timefmt::civil(SystemTime::now()).0)
}

/// The non-empty segments of a path.
fn segments(path: &str) -> impl Iterator<Item = &str> {
    path.split('/').filter(|s| !s.is_empty())
}

/// What one pass over the path learns: its number of non-empty segments,
/// and whether one of them occurs `limit` times or more (`limit` 0: never).
struct PathShape {
    segments: usize,
    repeated: bool,
}

impl PathShape {
    fn of(path: &str, limit: usize) -> PathShape {
        // Quadratic over the first few segments, without allocation; a map
        // for paths longer than that.
        const SMALL: usize = 32;
        let mut seen: [&str; SMALL] = [""; SMALL];
        let mut shape = PathShape {
            segments: 0,
            repeated: false,
        };
        for seg in segments(path) {
            let n = shape.segments;
            shape.segments += 1;
            if limit == 0 || shape.repeated || n >= SMALL {
                continue;
            }
            let count = 1 + seen[..n].iter().filter(|s| **s == seg).count();
            shape.repeated = count >= limit;
            seen[n] = seg;
        }
        if limit > 0 && !shape.repeated && shape.segments > SMALL {
            shape.repeated = has_repeated_segment_large(path, limit);
        }
        shape
    }
}

fn has_repeated_segment_large(path: &str, limit: usize) -> bool {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    segments(path).any(|seg| {
        let c = counts.entry(seg).or_insert(0);
        *c += 1;
        *c >= limit
    })
}

/// The non-empty `&`-separated parameters of a query.
fn count_params(query: &[u8]) -> usize {
    let mut count = 0;
    let mut empty = true;
    for &b in query {
        if b == b'&' {
            empty = true;
        } else if empty {
            empty = false;
            count += 1;
        }
    }
    count
}

/// True if a year (see the module doc for where one is recognized) lies
/// outside `earliest..=latest`. One pass over each part; only runs of
/// exactly four digits are looked at closer.
fn has_year_outside(path: &str, query: &str, earliest: i64, latest: i64) -> bool {
    let bad = |y: i64| y < earliest || y > latest;
    let p = path.as_bytes();
    let found_in_path = four_digit_runs(p).any(|(i, year)| bad(year) && is_path_date(p, i));
    found_in_path
        || four_digit_runs(query.as_bytes())
            .any(|(i, year)| bad(year) && is_query_date(query.as_bytes(), i))
}

/// `(start, value)` of every run of exactly four ASCII digits in `b`.
fn four_digit_runs(b: &[u8]) -> impl Iterator<Item = (usize, i64)> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < b.len() {
            if !b[i].is_ascii_digit() {
                i += 1;
                continue;
            }
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            if i - start == 4 {
                let year = b[start..i]
                    .iter()
                    .fold(0i64, |acc, &c| acc * 10 + i64::from(c - b'0'));
                return Some((start, year));
            }
        }
        None
    })
}

/// Is the 4-digit run at `b[i..i + 4]` of a path a year? As a whole
/// segment followed by a month segment (`/2031/05/`), as `YYYY-MM` at the
/// start of a segment, or in a full date.
fn is_path_date(b: &[u8], i: usize) -> bool {
    let e = i + 4;
    let segment_start = i > 0 && b[i - 1] == b'/';
    if segment_start
        && b.get(e) == Some(&b'/')
        && b.get(e + 1..e + 3).is_some_and(|m| month(m).is_some())
        && b.get(e + 3).is_none_or(|&c| c == b'/')
    {
        return true;
    }
    (segment_start && is_year_month_at(b, e)) || is_full_date(b, i)
}

/// Is the 4-digit run at `b[i..i + 4]` of a query a year? As the whole
/// value of a `year`-like parameter, as `YYYY-MM` at the start of a value,
/// or in a full date.
fn is_query_date(b: &[u8], i: usize) -> bool {
    let e = i + 4;
    let value_start = i > 0 && b[i - 1] == b'=';
    if value_start && b.get(e).is_none_or(|&c| c == b'&') {
        let name_start = b[..i - 1]
            .iter()
            .rposition(|&c| c == b'&')
            .map_or(0, |n| n + 1);
        if is_year_name(&b[name_start..i - 1]) {
            return true;
        }
    }
    (value_start && is_year_month_at(b, e)) || is_full_date(b, i)
}

/// A month `01`..`12` (two digits), the whole of `b`.
fn month(b: &[u8]) -> Option<u32> {
    let [hi, lo] = *b else { return None };
    if !(hi.is_ascii_digit() && lo.is_ascii_digit()) {
        return None;
    }
    let m = u32::from(hi - b'0') * 10 + u32::from(lo - b'0');
    (1..=12).contains(&m).then_some(m)
}

/// `-MM` at `b[e..]`, not followed by another digit.
fn is_year_month_at(b: &[u8], e: usize) -> bool {
    b.get(e) == Some(&b'-')
        && b.get(e + 1..e + 3).is_some_and(|m| month(m).is_some())
        && !b.get(e + 3).is_some_and(u8::is_ascii_digit)
}

/// A full date `YYYY-MM-DD` starting at `b[i]`, standing alone (no letter
/// or digit right before it, no digit right after it).
fn is_full_date(b: &[u8], i: usize) -> bool {
    if i > 0 && b[i - 1].is_ascii_alphanumeric() {
        return false;
    }
    let Some(d) = b.get(i..i + 10) else {
        return false;
    };
    let day = |hi: u8, lo: u8| {
        hi.is_ascii_digit()
            && lo.is_ascii_digit()
            && (1..=31).contains(&((hi - b'0') * 10 + (lo - b'0')))
    };
    d[4] == b'-'
        && month(&d[5..7]).is_some()
        && d[7] == b'-'
        && day(d[8], d[9])
        && !b.get(i + 10).is_some_and(u8::is_ascii_digit)
}

/// Query parameter names that hold a year: `yr`, `year` or `…year`.
fn is_year_name(n: &[u8]) -> bool {
    n.eq_ignore_ascii_case(b"yr")
        || (n.len() >= 4 && n[n.len() - 4..].eq_ignore_ascii_case(b"year"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ScopeMode;
    use crate::testutil::TempDir;

    fn url(s: &str) -> Url {
        Url::parse(s).unwrap()
    }

    fn cfg(mode: ScopeMode) -> ScopeConfig {
        ScopeConfig {
            mode,
            ..ScopeConfig::default()
        }
    }

    #[test]
    fn seeds_mode_reads_scope_seeds_and_config() {
        let dir = TempDir::new("seeds");
        dir.write(
            "scope.seeds",
            "# domains of the seeds\nexample.com\n\n  Example.ORG.  # upper case, trailing dot\nbücher.de\n",
        );
        let mut c = cfg(ScopeMode::Seeds);
        c.hosts = vec!["Docs.Example.NET".into()];
        c.domains = vec!["example.info".into()];
        let scope = Scope::load(&c, dir.path()).unwrap();
        let mut domains: Vec<&str> = scope.domains.iter().map(String::as_str).collect();
        domains.sort();
        assert_eq!(
            domains,
            [
                "example.com",
                "example.info",
                "example.org",
                "xn--bcher-kva.de"
            ]
        );
        assert!(scope.hosts.contains("docs.example.net"));
        assert!(!scope.any);
        for (u, inside) in [
            ("http://example.com/", true),
            ("http://www.example.com/a", true),
            ("http://a.b.example.org/", true),
            ("http://shop.xn--bcher-kva.de/", true),
            ("http://docs.example.net/", true),
            ("http://www.example.info/", true),
            ("http://www.docs.example.net/", false),
            ("http://example.net/", false),
            ("http://notexample.com/", false),
            ("http://example.com.evil.org/", false),
            ("http://com/", false),
        ] {
            assert_eq!(scope.contains(&url(u)), inside, "{u}");
        }
    }

    #[test]
    fn seeds_mode_needs_scope_seeds() {
        let dir = TempDir::new("noseeds");
        let err = Scope::load(&cfg(ScopeMode::Seeds), dir.path()).unwrap_err();
        assert!(matches!(err, ScopeError::Io { .. }), "{err}");
        assert!(err.to_string().contains("scope.seeds"), "{err}");
    }

    #[test]
    fn a_damaged_scope_seeds_is_refused_not_read_as_empty() {
        let dir = TempDir::new("cutseeds");
        let text = listfile::render(&SCOPE_SEEDS_LIST, ["example.com", "example.org"]);
        for damaged in [
            "",
            &text[..text.len() / 2],
            &text[..text.rfind("# end").unwrap()],
        ] {
            dir.write("scope.seeds", damaged);
            let err = Scope::load(&cfg(ScopeMode::Seeds), dir.path()).unwrap_err();
            assert!(matches!(err, ScopeError::Damaged(_)), "{err}");
            assert!(err.to_string().contains("scope.seeds.prev"), "{err}");
        }
        dir.write("scope.seeds", &text);
        let scope = Scope::load(&cfg(ScopeMode::Seeds), dir.path()).unwrap();
        assert_eq!(scope.domains.len(), 2);
    }

    #[test]
    fn bad_seed_line_names_file_and_line() {
        let dir = TempDir::new("badseed");
        dir.write("scope.seeds", "example.com\n# ok\nexa mple.org\n");
        let err = Scope::load(&cfg(ScopeMode::Seeds), dir.path()).unwrap_err();
        match &err {
            ScopeError::BadHost { place, entry, .. } => {
                assert!(place.ends_with("scope.seeds:3"), "{err}");
                assert_eq!(entry, "exa mple.org");
            }
            other => panic!("{other}"),
        }
        let mut c = cfg(ScopeMode::List);
        c.hosts = vec!["http://example.com/".into()];
        let err = Scope::load(&c, dir.path()).unwrap_err();
        assert!(err.to_string().contains("[scope] hosts"), "{err}");
    }

    #[test]
    fn list_mode_ignores_scope_seeds() {
        let dir = TempDir::new("list");
        dir.write("scope.seeds", "example.com\n");
        let mut c = cfg(ScopeMode::List);
        c.hosts = vec!["only.example.org".into()];
        let scope = Scope::load(&c, dir.path()).unwrap();
        assert!(scope.domains.is_empty());
        assert!(scope.contains(&url("http://only.example.org/x")));
        assert!(!scope.contains(&url("http://example.com/")));
        assert!(!scope.contains(&url("http://other.example.org/")));
    }

    #[test]
    fn any_mode_accepts_every_host_not_denied() {
        let dir = TempDir::new("any");
        dir.write("scope.rules", "-\\.example\\.bad/\n");
        let mut c = cfg(ScopeMode::Any);
        c.rules_file = Some("scope.rules".into());
        let scope = Scope::load(&c, dir.path()).unwrap();
        assert!(scope.any);
        assert!(scope.contains(&url("http://anything.test/")));
        assert!(scope.contains(&url("http://127.0.0.9:8080/")));
        assert!(!scope.contains(&url("http://www.example.bad/page")));
    }

    #[test]
    fn rules_first_match_decides_then_hosts() {
        let dir = TempDir::new("rules");
        std::fs::create_dir_all(dir.join("conf")).unwrap();
        dir.write(
            "conf/rules.txt",
            "# rules\n\n-^https?://[^/]*example\\.com/private/\n+^https://cdn\\.other\\.net/\n  -/private/  \n+/private/public\n",
        );
        let mut c = cfg(ScopeMode::List);
        c.domains = vec!["example.com".into()];
        c.rules_file = Some("conf/rules.txt".into());
        let scope = Scope::load(&c, dir.path()).unwrap();
        let rules: Vec<(bool, &str)> = scope.rules.iter().map(|(a, r)| (*a, r.as_str())).collect();
        assert_eq!(
            rules,
            [
                (false, "^https?://[^/]*example\\.com/private/"),
                (true, "^https://cdn\\.other\\.net/"),
                (false, "/private/"),
                (true, "/private/public"),
            ]
        );
        for (u, inside) in [
            ("https://www.example.com/", true),
            ("https://www.example.com/private/x", false),
            ("https://cdn.other.net/lib.js", true),
            ("http://cdn.other.net/lib.js", false),
            ("https://other.net/", false),
            // the earlier deny wins over the later allow
            ("https://www.other.org/private/public", false),
        ] {
            assert_eq!(scope.contains(&url(u)), inside, "{u}");
        }
    }

    #[test]
    fn host_rules_patterns_decide_before_the_crawl_s_scope() {
        let dir = TempDir::new("hostrules");
        dir.write("scope.rules", "+/private/\n");
        dir.write(
            "host-rules.toml",
            "[[rule]]\nhost = \"www.example.com\"\ndeny = [\"/private/\", \"/*.pdf$\"]\n\n\
             [[rule]]\nhost = \"docs.other.test\"\nallow = [\"/docs/\"]\n",
        );
        let mut c = cfg(ScopeMode::List);
        c.domains = vec!["example.com".into()];
        c.rules_file = Some("scope.rules".into());
        let scope = Scope::load(&c, dir.path()).unwrap();
        for (u, inside) in [
            ("http://www.example.com/", true),
            // the host's rule wins over the crawl's rules file
            ("http://www.example.com/private/a", false),
            ("http://www.example.com/a.pdf", false),
            ("http://www.example.com/a.pdf?v=1", true),
            ("http://blog.example.com/private/a", true),
            // a host outside the crawl's scope, under its rule's path
            ("http://docs.other.test/docs/a", true),
            ("http://docs.other.test/", false),
            ("http://other.test/docs/a", false),
        ] {
            assert_eq!(scope.contains(&url(u)), inside, "{u}");
        }
        dir.write(
            "host-rules.toml",
            "[[rule]]\nhost = \"a.test\"\ndeny = [\"x\"]\n",
        );
        let err = Scope::load(&c, dir.path()).unwrap_err();
        assert!(matches!(err, ScopeError::HostRules(_)), "{err}");
        assert!(err.to_string().contains("host-rules.toml:3: deny"), "{err}");
    }

    #[test]
    fn bad_rules_name_the_line() {
        let dir = TempDir::new("badrules");
        let mut c = cfg(ScopeMode::Any);
        c.rules_file = Some("scope.rules".into());
        for (text, line, what) in [
            ("+ok\n# comment\n\nno-prefix\n", 4, "starts with"),
            ("-fine\n+([unclosed\n", 2, "not a valid regex"),
            ("+\n", 1, "empty pattern"),
        ] {
            dir.write("scope.rules", text);
            match Scope::load(&c, dir.path()).unwrap_err() {
                ScopeError::BadRule {
                    path,
                    line: l,
                    message,
                } => {
                    assert!(path.ends_with("scope.rules"));
                    assert_eq!(l, line, "{text:?}");
                    assert!(message.contains(what), "{message}");
                }
                other => panic!("{other}"),
            }
        }
        std::fs::remove_file(dir.join("scope.rules")).unwrap();
        let err = Scope::load(&c, dir.path()).unwrap_err();
        assert!(matches!(err, ScopeError::Io { .. }), "{err}");
    }

    fn filter() -> UrlFilter {
        let mut scope = Scope::default();
        scope.domains.insert("example.com".into());
        UrlFilter {
            limits: FilterConfig::default(),
            scope,
        }
    }

    /// The year the calendar rows are written against.
    const YEAR: i64 = 2026;

    fn run(rows: &[(&str, u32, Result<(), Reject>)]) {
        let f = filter();
        for &(u, hops, want) in rows {
            assert_eq!(
                f.check_in_year(&url(u), hops, YEAR),
                want,
                "{u} hops={hops}"
            );
        }
    }

    #[test]
    fn extensions_not_worth_fetching() {
        run(&[
            (
                "http://example.com/files/big.ZIP",
                0,
                Err(Reject::Extension),
            ),
            (
                "http://example.com/v/clip.mp4?x=1",
                0,
                Err(Reject::Extension),
            ),
            (
                "http://example.com/src/x-1.2.tar.gz",
                0,
                Err(Reject::Extension),
            ),
            ("http://example.com/sitemap.xml.gz", 0, Ok(())),
            ("http://example.com/zip", 0, Ok(())),
            ("http://example.com/.zip/page", 0, Ok(())),
            ("http://example.com/about.html", 0, Ok(())),
        ]);
        let mut f = filter();
        f.limits.skip_extensions.clear();
        assert_eq!(f.check(&url("http://example.com/a.zip"), 0), Ok(()));
    }

    #[test]
    fn scheme() {
        run(&[
            ("https://example.com/", 0, Ok(())),
            ("ftp://example.com/file", 0, Err(Reject::Scheme)),
            ("ws://example.com/", 0, Err(Reject::Scheme)),
        ]);
    }

    #[test]
    fn scope() {
        run(&[
            ("http://www.example.com/", 0, Ok(())),
            ("http://example.org/", 0, Err(Reject::Scope)),
        ]);
    }

    #[test]
    fn too_long() {
        let base = "http://example.com/";
        let exact = format!("{base}{}", "a".repeat(2048 - base.len()));
        let over = format!("{exact}b");
        assert_eq!(exact.len(), 2048);
        run(&[(&exact, 0, Ok(())), (&over, 0, Err(Reject::TooLong))]);
    }

    #[test]
    fn repeated_segment() {
        run(&[
            ("http://example.com/a/b/a/b/", 0, Ok(())),
            (
                "http://example.com/a/b/a/b/a/b",
                0,
                Err(Reject::RepeatedSegment),
            ),
            ("http://example.com/x/x/x", 0, Err(Reject::RepeatedSegment)),
            (
                "http://example.com/en/1/en/2/en/3",
                0,
                Err(Reject::RepeatedSegment),
            ),
            ("http://example.com/a//b///c////", 0, Ok(())),
            ("http://example.com/a/A/a%20/a", 0, Ok(())),
        ]);
        let many: String = (0..40).map(|i| format!("/s{i}")).collect();
        let mut f = filter();
        f.limits.max_path_segments = 100;
        let ok = url(&format!("http://example.com{many}"));
        let looped = url(&format!("http://example.com{many}/s3/s3"));
        assert_eq!(f.check_in_year(&ok, 0, YEAR), Ok(()));
        assert_eq!(
            f.check_in_year(&looped, 0, YEAR),
            Err(Reject::RepeatedSegment)
        );
        f.limits.max_repeated_segment = 2;
        let twice = url("http://example.com/a/b/a");
        assert_eq!(
            f.check_in_year(&twice, 0, YEAR),
            Err(Reject::RepeatedSegment)
        );
        f.limits.max_repeated_segment = 0;
        let thrice = url("http://example.com/a/a/a/a");
        assert_eq!(f.check_in_year(&thrice, 0, YEAR), Ok(()));
    }

    #[test]
    fn too_many_segments() {
        let twenty: String = (0..20).map(|i| format!("/s{i}")).collect();
        let ok = format!("http://example.com{twenty}/");
        let over = format!("http://example.com{twenty}/s20");
        run(&[(&ok, 0, Ok(())), (&over, 0, Err(Reject::TooManySegments))]);
    }

    #[test]
    fn too_many_hops() {
        run(&[
            ("http://example.com/", 10, Ok(())),
            ("http://example.com/", 11, Err(Reject::TooManyHops)),
        ]);
    }

    #[test]
    fn too_many_params() {
        let ten: Vec<String> = (0..10).map(|i| format!("p{i}=1")).collect();
        let ok = format!("http://example.com/?{}&&", ten.join("&"));
        let over = format!("http://example.com/?{}&p10", ten.join("&"));
        run(&[(&ok, 0, Ok(())), (&over, 0, Err(Reject::TooManyParams))]);
    }

    #[test]
    fn calendar() {
        // YEAR is 2026 and max_years_ahead is 1: 1970..=2027 are plausible.
        run(&[
            ("http://example.com/2027/05/", 0, Ok(())),
            ("http://example.com/1970/01/01/", 0, Ok(())),
            (
                "http://example.com/events/2028/05/",
                0,
                Err(Reject::Calendar),
            ),
            (
                "http://example.com/events/1969/12/",
                0,
                Err(Reject::Calendar),
            ),
            ("http://example.com/cal?month=5&year=2027", 0, Ok(())),
            (
                "http://example.com/cal?month=5&year=2031",
                0,
                Err(Reject::Calendar),
            ),
            (
                "http://example.com/cal?year=2031&m=5",
                0,
                Err(Reject::Calendar),
            ),
            (
                "http://example.com/events/2031/05",
                0,
                Err(Reject::Calendar),
            ),
            ("http://example.com/events/2031/05x/", 0, Ok(())),
            ("http://example.com/cal?years=2031", 0, Ok(())),
            ("http://example.com/cal?year=20310", 0, Ok(())),
            ("http://example.com/cal?YEAR=1900", 0, Err(Reject::Calendar)),
            (
                "http://example.com/cal?calYear=2030",
                0,
                Err(Reject::Calendar),
            ),
            ("http://example.com/cal?yr=2099", 0, Err(Reject::Calendar)),
            (
                "http://example.com/news/2031-05-01-launch",
                0,
                Err(Reject::Calendar),
            ),
            (
                "http://example.com/news/launch-2031-05-01.html",
                0,
                Err(Reject::Calendar),
            ),
            ("http://example.com/news/2026-05-01-launch", 0, Ok(())),
            (
                "http://example.com/list?from=2031-05",
                0,
                Err(Reject::Calendar),
            ),
            (
                "http://example.com/list?date=2031-12-31",
                0,
                Err(Reject::Calendar),
            ),
            ("http://example.com/list?date=2027-12-31", 0, Ok(())),
            // numbers that are not dates
            ("http://example.com/item/1234", 0, Ok(())),
            ("http://example.com/item/1234/5", 0, Ok(())),
            ("http://example.com/item/9999/99", 0, Ok(())),
            ("http://example.com/map?x=10&y=1300", 0, Ok(())),
            ("http://example.com/p?id=2031", 0, Ok(())),
            ("http://example.com/sku-AB2031-05-01", 0, Ok(())),
            ("http://example.com/v/12031-05-01", 0, Ok(())),
            ("http://example.com/tel/2031-555-0100", 0, Ok(())),
        ]);
    }

    #[test]
    fn checks_run_in_reject_order() {
        let long_outside = format!("http://example.org/{}", "a".repeat(3000));
        let deep_far = "http://example.com/2099/01/";
        let looped_many: String = "/x".repeat(30);
        run(&[
            ("ftp://example.org/", 0, Err(Reject::Scheme)),
            (&long_outside, 0, Err(Reject::Scope)),
            (
                &format!("http://example.com{looped_many}"),
                99,
                Err(Reject::RepeatedSegment),
            ),
            (deep_far, 11, Err(Reject::TooManyHops)),
        ]);
    }

    #[test]
    fn check_uses_the_current_year() {
        let f = filter();
        let now = this_year();
        let next = url(&format!("http://example.com/{}/01/", now + 1));
        let far = url(&format!("http://example.com/{}/01/", now + 2));
        assert_eq!(f.check(&next, 0), Ok(()));
        assert_eq!(f.check(&far, 0), Err(Reject::Calendar));
    }
}
