//! robots.txt per RFC 9309: parsing, group selection, path matching, and what
//! to do when robots.txt could not be fetched.
//!
//! A host's robots.txt is parsed once into a [`Robots`] (the rules of the one
//! group that applies to our product token, already compiled and sorted), and
//! every URL of the host is then checked with [`Robots::denied_by`] without
//! looking at the text again. [`Robots::after_fetch`] applies the status
//! policy to how the fetch of robots.txt ended.
//!
//! # Parsing
//! - At most [`MAX_ROBOTS_BYTES`] (500 KiB, the minimum RFC 9309 asks a crawler
//!   to parse) of the body are read; the rest is ignored, and so is the line
//!   the limit cuts in two, because half a line could be a shortened pattern
//!   that means something its author never wrote.
//! - The parser never fails: bytes that are not UTF-8, NUL bytes, a byte
//!   order mark, `\n`, `\r` or `\r\n` line ends, `#` comments, leading
//!   whitespace, field names in any case, a missing colon (`Disallow /x`) and
//!   a few common misspellings (`disalow`, `user agent`, `crawl delay`) are
//!   all accepted; lines it does not understand are skipped; `Sitemap`
//!   lines play no part in the rules: [`common::sitemaps::in_robots_txt`]
//!   reads them, and the fetcher keeps them in `hosts.db` for the segmenter.
//! - A group is one or more consecutive `User-agent` lines followed by its
//!   `Allow`, `Disallow` and `Crawl-delay` lines. As in RFC 9309's grammar,
//!   blank lines end nothing: `User-agent` lines separated only by blank,
//!   comment or unknown lines start one group, and a group ends at the next
//!   `User-agent` line that follows one of its rules. Rules before the first
//!   `User-agent` line belong to no group and are ignored.
//!
//! # Group selection
//! A `User-agent` value names a product token: its leading run of letters,
//! `_` and `-` (so `ExampleBot/1.0` names `ExampleBot`), compared with ours
//! without regard to case. Every group naming our token is merged into one;
//! if there is none, every `*` group is merged into one; if there is none
//! either, everything is allowed. A group naming us that has no rules allows
//! everything, even when a `*` group forbids things.
//!
//! # Matching
//! The rule with the longest pattern (in octets of its canonical form, see
//! below) that matches the path wins; an `Allow` wins a tie; no matching rule
//! means allowed. A pattern matches from the start of the path and query; `*`
//! matches any run of octets and a `$` at the end anchors the pattern to the
//! end of the path. `/robots.txt` is always allowed. Wildcards are matched
//! with a greedy left-to-right search of each literal piece, which is exact
//! for this pattern language and linear in the length of path and pattern: no
//! backtracking, whatever the pattern.
//!
//! Patterns and paths are compared in one canonical percent-encoded form, so
//! that spellings a server treats as the same resource compare equal:
//! - escapes of unreserved characters (`A-Z a-z 0-9 - . _ ~`) are decoded
//!   (`/%7Ejoe` is `/~joe`), and the hex digits of the other escapes are
//!   upper-cased (`%e3` is `%E3`);
//! - octets outside printable ASCII (UTF-8 of non-ASCII characters, controls,
//!   space) and ASCII characters not allowed in a URI (`"<>\^`{|}`) are
//!   percent-encoded, so `Disallow: /ツ` matches `/%E3%83%84`;
//! - a reserved character (`/`, `?`, `&`, `=`, ...) and its escape stay
//!   different (`/a%2Fb` is not `/a/b`), except in the query, where `:`, `/`,
//!   `?` and `@` are not delimiters and their escapes are decoded (RFC 9309's
//!   `/foo/bar?baz=https://foo.bar` is `/foo/bar?baz=https%3A%2F%2Ffoo.bar`).
//!   A pattern's query starts at its first literal `?`; a piece of a pattern
//!   after a `*` and before any `?` is taken to be in the path;
//! - `*` and `$` in a path are compared as `%2A` and `%24`, so a pattern can
//!   name them literally by writing them percent-encoded (RFC 9309 §2.2.3).
//!
//! # When robots.txt cannot be fetched
//! [`decide`] maps the outcome of the fetch (after the fetcher has followed up
//! to five redirects) to a [`RobotsDecision`]: parse the body, allow
//! everything (the file is unavailable), or disallow everything for now and
//! try again later (the server is in trouble).

use std::time::Duration;

use common::urlnorm::{escape_at, is_unreserved, push_escape};

/// How much of a robots.txt body is parsed: 500 KiB, the same part the
/// `Sitemap:` lines are taken from ([`common::robots_txt::MAX_BYTES`]).
pub const MAX_ROBOTS_BYTES: usize = common::robots_txt::MAX_BYTES;

/// The largest `Crawl-delay` reported, in seconds (one day). Larger values are
/// clamped to it, so that a host asking for an absurd delay is still seen as
/// asking for a long one, and time arithmetic on the result cannot overflow.
pub const MAX_CRAWL_DELAY_SECS: u64 = 86_400;

/// The rules of one host's robots.txt that apply to our crawler, compiled for
/// matching, with its `Crawl-delay`.
#[derive(Debug, Clone)]
pub struct Robots {
    /// Sorted so that the first rule that matches is the one that decides:
    /// longest pattern first, `Allow` before `Disallow` at equal length.
    rules: Vec<Rule>,
    crawl_delay: Option<Duration>,
}

/// One `Allow` or `Disallow` line of the group that applies to us.
#[derive(Debug, Clone)]
struct Rule {
    allow: bool,
    /// The pattern as written (lossy UTF-8), for messages.
    written: String,
    pattern: Pattern,
}

impl Robots {
    /// Parses a robots.txt body and keeps the rules that apply to the crawler
    /// whose product token is `product_token` (e.g. `ExampleBot`; only its
    /// leading letters, `_` and `-` count, so `ExampleBot/1.0` works too).
    ///
    /// Never fails: anything it does not understand is skipped. See the module
    /// documentation for the details.
    pub fn parse(body: &[u8], product_token: &str) -> Robots {
        let body = common::robots_txt::parsed_part(body);
        let body = body.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(body);
        let token = product_token_of(product_token.trim().as_bytes());
        let mut parser = Parser::new(token);
        for line in body.split(|&b| b == b'\n' || b == b'\r') {
            parser.line(line);
        }
        parser.finish()
    }

    /// The part of `body` that [`Robots::parse`] reads: at most
    /// [`MAX_ROBOTS_BYTES`], ending before the line the limit cuts. Parsing
    /// it gives the same rules as parsing `body`, so it is what to keep in the
    /// host state (whose `robots_body` holds at most 500 KiB).
    pub fn parsed_part(body: &[u8]) -> &[u8] {
        common::robots_txt::parsed_part(body)
    }

    /// Robots that allow everything (robots.txt is missing or unavailable).
    pub fn allow_all() -> Robots {
        Robots {
            rules: Vec::new(),
            crawl_delay: None,
        }
    }

    /// The rules after a fetch of robots.txt that ended with `outcome`
    /// (with the body of a 2xx response in `body`), by the status policy of
    /// [`decide`]: `None` when nothing may be fetched for now and robots.txt
    /// should be asked for again later.
    pub fn after_fetch(outcome: RobotsOutcome, body: &[u8], product_token: &str) -> Option<Robots> {
        match decide(outcome) {
            RobotsDecision::Parse => Some(Robots::parse(body, product_token)),
            RobotsDecision::AllowAll => Some(Robots::allow_all()),
            RobotsDecision::DisallowAll => None,
        }
    }

    /// `None` if our crawler may fetch `path_and_query`, else the rule that
    /// forbids it, as written (`Disallow: /private`). `path_and_query` is
    /// the path of a URL with its query, as sent in the request line
    /// (`/a/b?c=d`), percent-encoded or not (see [`crate::url_parts::path_and_query`]). A
    /// fragment (`#...`) is ignored; an empty string means `/`.
    pub fn denied_by(&self, path_and_query: &str) -> Option<String> {
        self.matching_rule(path_and_query)
            .filter(|rule| !rule.allow)
            .map(|rule| format!("Disallow: {}", rule.written))
    }

    /// Whether our crawler may fetch `path_and_query` (the tests' shorthand
    /// for [`Robots::denied_by`]).
    #[cfg(test)]
    fn is_allowed(&self, path_and_query: &str) -> bool {
        self.denied_by(path_and_query).is_none()
    }

    /// The rule that decides for `path_and_query` (see [`Robots::denied_by`]),
    /// or `None` when no rule matches (or the path is `/robots.txt`), which
    /// means allowed.
    fn matching_rule(&self, path_and_query: &str) -> Option<&Rule> {
        if self.rules.is_empty() {
            return None;
        }
        let path = canonical_path(path_and_query);
        let path_only = path.split_once('?').map_or(path.as_str(), |(p, _)| p);
        if path_only == "/robots.txt" {
            return None;
        }
        self.rules.iter().find(|rule| rule.pattern.matches(&path))
    }

    /// The `Crawl-delay` of the group that applies to us: the largest valid
    /// value in it (decimal seconds, e.g. `2.5`), clamped to
    /// [`MAX_CRAWL_DELAY_SECS`]. Values that are not a non-negative number are
    /// ignored.
    pub fn crawl_delay(&self) -> Option<Duration> {
        self.crawl_delay
    }
}

/// What happened when the fetcher asked a host for `/robots.txt`, after it
/// followed up to five redirects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RobotsOutcome {
    /// The final response had this HTTP status (a 3xx here is a redirect
    /// without a usable target).
    Status(u16),
    /// The response was still a redirect when the redirect limit was reached.
    TooManyRedirects,
    /// No HTTP response: name resolution failed, the connection was refused or
    /// reset, a timeout expired, or the response was not HTTP.
    Unreachable,
}

/// What to do with a host given the outcome of fetching its robots.txt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RobotsDecision {
    /// 2xx: parse the body with [`Robots::parse`].
    Parse,
    /// The file is unavailable (4xx other than 429, a redirect that cannot be
    /// followed, too many redirects): everything is allowed
    /// ([`Robots::allow_all`]).
    AllowAll,
    /// The server is in trouble (5xx, 429, unreachable, or a status that makes
    /// no sense): nothing is allowed for now; fetch
    /// robots.txt again later, and leave the host's URLs for a later run if it
    /// never answers.
    DisallowAll,
}

/// The RFC 9309 status policy (§2.3.1): 2xx → parse; 3xx that cannot be
/// followed, too many redirects and 4xx → allow all; 429 (which asks us to
/// slow down, like a 503), 5xx and unreachable → disallow all for now.
/// Status codes outside 200–499 that are not 5xx (1xx, 600+) are treated as
/// a server in trouble too.
pub fn decide(outcome: RobotsOutcome) -> RobotsDecision {
    match outcome {
        RobotsOutcome::Status(200..=299) => RobotsDecision::Parse,
        RobotsOutcome::Status(429) => RobotsDecision::DisallowAll,
        RobotsOutcome::Status(300..=499) | RobotsOutcome::TooManyRedirects => {
            RobotsDecision::AllowAll
        }
        RobotsOutcome::Status(_) | RobotsOutcome::Unreachable => RobotsDecision::DisallowAll,
    }
}

/// The rule of RFC 9309 section 2.2.1 for a crawler's product token, as
/// quoted in the error [`check_product_token`] gives.
pub const PRODUCT_TOKEN_RULE: &str = r#"RFC 9309, section 2.2.1: "The product token MUST contain only uppercase and lowercase letters ("a-z" and "A-Z"), underscores ("_"), and hyphens ("-").""#;

/// Checks our own product token: only ASCII letters, `_` and `-`
/// (RFC 9309). Any other character would end the token when robots.txt
/// groups are matched (`bot2x` would obey a group meant for `bot`).
pub fn check_product_token(token: &str) -> Result<(), String> {
    match token
        .chars()
        .find(|c| !(c.is_ascii_alphabetic() || *c == '_' || *c == '-'))
    {
        None if !token.is_empty() => Ok(()),
        None => Err("the product token is empty".into()),
        Some(c) => {
            let read_as = String::from_utf8_lossy(product_token_of(token.as_bytes()));
            let effect = if read_as.is_empty() {
                "no robots.txt group could ever name this crawler".to_string()
            } else {
                format!("robots.txt groups for `{read_as}` would be obeyed as if they named it")
            };
            Err(format!(
                "agent name `{token}`: `{c}` is not allowed in a product token, which has only \
                 letters, `_` and `-` ({effect}); choose a name such as `{}`. {PRODUCT_TOKEN_RULE}",
                suggestion(token)
            ))
        }
    }
}

/// `token` with digits spelled out as nothing and other characters as `-`.
fn suggestion(token: &str) -> String {
    let s: String = token
        .chars()
        .filter(|c| !c.is_ascii_digit())
        .map(|c| {
            if c.is_ascii_alphabetic() || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let s = s.trim_matches('-');
    if s.is_empty() {
        "examplebot".into()
    } else {
        s.into()
    }
}

/// The product token a `User-agent` value (or our own token) names: its
/// leading run of ASCII letters, `_` and `-`.
fn product_token_of(value: &[u8]) -> &[u8] {
    let end = value
        .iter()
        .position(|&b| !(b.is_ascii_alphabetic() || b == b'_' || b == b'-'))
        .unwrap_or(value.len());
    &value[..end]
}

/// The fields of robots.txt we understand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    UserAgent,
    Allow,
    Disallow,
    CrawlDelay,
}

/// Recognizes a field name: case, `-`, `_` and inner spaces do not matter,
/// and a few misspellings seen in the wild are accepted.
fn field_of(name: &[u8]) -> Option<Field> {
    let mut key = [0u8; 16];
    let mut len = 0;
    for &b in name {
        match b {
            b'-' | b'_' | b' ' | b'\t' => {}
            b if b.is_ascii_alphabetic() && len < key.len() => {
                key[len] = b.to_ascii_lowercase();
                len += 1;
            }
            _ => return None,
        }
    }
    match &key[..len] {
        b"useragent" | b"useragents" => Some(Field::UserAgent),
        b"allow" => Some(Field::Allow),
        b"disallow" | b"disalow" | b"dissallow" | b"dissalow" | b"disallaw" | b"diasllow"
        | b"disallw" => Some(Field::Disallow),
        b"crawldelay" => Some(Field::CrawlDelay),
        _ => None,
    }
}

/// Splits a line (comment already removed, trimmed, not empty) into a field
/// and its trimmed value. `Name: value` is the norm; `Name value` (a missing
/// colon) is accepted when `Name` is a known field.
fn split_line(line: &[u8]) -> Option<(Field, &[u8])> {
    if let Some(colon) = line.iter().position(|&b| b == b':')
        && let Some(field) = field_of(&line[..colon])
    {
        return Some((field, line[colon + 1..].trim_ascii()));
    }
    let space = line.iter().position(|&b| b == b' ' || b == b'\t')?;
    let field = field_of(&line[..space])?;
    Some((field, line[space + 1..].trim_ascii()))
}

/// Which groups a rule line belongs to while parsing.
struct Parser<'t> {
    token: &'t [u8],
    /// Whether the previous group line was a `User-agent` line (so the next
    /// `User-agent` line extends the same group).
    in_agent_list: bool,
    group_is_ours: bool,
    group_is_star: bool,
    found_ours: bool,
    found_star: bool,
    ours: Bucket,
    star: Bucket,
}

/// The merged rules and crawl-delays of all groups of one kind.
#[derive(Default)]
struct Bucket {
    rules: Vec<Rule>,
    crawl_delay: Option<Duration>,
}

impl Bucket {
    fn add_delay(&mut self, delay: Duration) {
        self.crawl_delay = Some(self.crawl_delay.map_or(delay, |d| d.max(delay)));
    }
}

impl<'t> Parser<'t> {
    fn new(token: &'t [u8]) -> Parser<'t> {
        Parser {
            token,
            in_agent_list: false,
            group_is_ours: false,
            group_is_star: false,
            found_ours: false,
            found_star: false,
            ours: Bucket::default(),
            star: Bucket::default(),
        }
    }

    fn line(&mut self, line: &[u8]) {
        let line = match line.iter().position(|&b| b == b'#') {
            Some(hash) => &line[..hash],
            None => line,
        };
        let line = line.trim_ascii();
        if line.is_empty() {
            return;
        }
        let Some((field, value)) = split_line(line) else {
            return;
        };
        match field {
            Field::UserAgent => self.user_agent(value),
            Field::Allow | Field::Disallow => {
                self.in_agent_list = false;
                // Rules of other crawlers' groups are not even compiled.
                if !(self.group_is_ours || self.group_is_star) {
                    return;
                }
                if let Some(rule) = compile_rule(field == Field::Allow, value) {
                    self.for_group(|bucket| bucket.rules.push(rule.clone()));
                }
            }
            Field::CrawlDelay => {
                self.in_agent_list = false;
                if let Some(delay) = parse_crawl_delay(value) {
                    self.for_group(|bucket| bucket.add_delay(delay));
                }
            }
        }
    }

    fn user_agent(&mut self, value: &[u8]) {
        if !self.in_agent_list {
            self.in_agent_list = true;
            self.group_is_ours = false;
            self.group_is_star = false;
        }
        if value.first() == Some(&b'*') && product_token_of(&value[1..]).is_empty() {
            self.group_is_star = true;
            self.found_star = true;
        } else {
            let named = product_token_of(value);
            if !named.is_empty() && named.eq_ignore_ascii_case(self.token) {
                self.group_is_ours = true;
                self.found_ours = true;
            }
        }
    }

    /// Applies `add` to the bucket(s) of the current group. Before the first
    /// `User-agent` line there is no group, and both flags are false.
    fn for_group(&mut self, mut add: impl FnMut(&mut Bucket)) {
        if self.group_is_ours {
            add(&mut self.ours);
        }
        if self.group_is_star {
            add(&mut self.star);
        }
    }

    fn finish(self) -> Robots {
        let bucket = if self.found_ours {
            self.ours
        } else if self.found_star {
            self.star
        } else {
            Bucket::default()
        };
        let mut rules = bucket.rules;
        // Stable: among equal rules, file order is kept (it does not matter
        // for the verdict, only for which rule `matching_rule` reports).
        rules.sort_by(|a, b| {
            b.pattern
                .specificity
                .cmp(&a.pattern.specificity)
                .then(b.allow.cmp(&a.allow))
        });
        Robots {
            rules,
            crawl_delay: bucket.crawl_delay,
        }
    }
}

/// An `Allow`/`Disallow` rule from its value; `None` for an empty value (an
/// empty `Disallow` allows everything, an empty `Allow` says nothing).
fn compile_rule(allow: bool, value: &[u8]) -> Option<Rule> {
    if value.is_empty() {
        return None;
    }
    let written = String::from_utf8_lossy(value).into_owned();
    // A path pattern starts with `/` (or a wildcard); `Disallow: private/`
    // is read as `/private/`, which is what its author meant.
    let pattern = if value[0] == b'/' || value[0] == b'*' {
        Pattern::compile(value)
    } else {
        let mut rooted = Vec::with_capacity(value.len() + 1);
        rooted.push(b'/');
        rooted.extend_from_slice(value);
        Pattern::compile(&rooted)
    };
    Some(Rule {
        allow,
        written,
        pattern,
    })
}

/// A `Crawl-delay` value in decimal seconds; `None` for anything that is not
/// a finite non-negative number.
fn parse_crawl_delay(value: &[u8]) -> Option<Duration> {
    let text = std::str::from_utf8(value).ok()?;
    // Rust's float syntax also accepts `inf` and `NaN`; only digits, one dot
    // and an exponent are a number of seconds.
    if !text
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'))
    {
        return None;
    }
    let seconds: f64 = text.parse().ok()?;
    if !seconds.is_finite() || seconds < 0.0 {
        return None;
    }
    Some(Duration::from_secs_f64(
        seconds.min(MAX_CRAWL_DELAY_SECS as f64),
    ))
}

/// A compiled path pattern: literal pieces (in canonical form) separated by
/// `*`, optionally anchored at the end by `$`.
#[derive(Debug, Clone)]
struct Pattern {
    /// At least one piece; the first must start the path. Pieces between
    /// wildcards are not empty (runs of `*` are collapsed), but the first and
    /// the last may be.
    pieces: Vec<String>,
    anchored: bool,
    /// Length of the canonical pattern in octets, wildcards included: how
    /// specific the rule is.
    specificity: usize,
}

impl Pattern {
    fn compile(raw: &[u8]) -> Pattern {
        let (raw, anchored) = match raw.strip_suffix(b"$") {
            Some(rest) => (rest, true),
            None => (raw, false),
        };
        let mut pieces = Vec::new();
        let mut in_query = false;
        let mut wildcards = 0;
        for (i, literal) in raw.split(|&b| b == b'*').enumerate() {
            if i > 0 {
                wildcards += 1;
            }
            let mut piece = String::with_capacity(literal.len());
            push_canonical(&mut piece, literal, &mut in_query);
            pieces.push(piece);
        }
        // `a**b` is `a*b`: drop the empty pieces between two wildcards.
        let last = pieces.len() - 1;
        let mut index = 0;
        pieces.retain(|piece| {
            let keep = index == 0 || index == last || !piece.is_empty();
            index += 1;
            keep
        });
        let specificity =
            pieces.iter().map(String::len).sum::<usize>() + wildcards + usize::from(anchored);
        Pattern {
            pieces,
            anchored,
            specificity,
        }
    }

    /// Whether the pattern matches `path` (canonical form). Greedy leftmost
    /// matching of each piece is exact here because a wildcard can absorb
    /// anything: if the pieces fit in order at all, they fit at their leftmost
    /// places. Each search resumes where the previous one ended, and
    /// `str::find` is linear (two-way search), so the whole match is linear
    /// in the lengths of path and pattern.
    fn matches(&self, path: &str) -> bool {
        let first = &self.pieces[0];
        if !path.starts_with(first.as_str()) {
            return false;
        }
        let last_index = self.pieces.len() - 1;
        if last_index == 0 {
            return !self.anchored || path.len() == first.len();
        }
        let mut pos = first.len();
        let last = &self.pieces[last_index];
        let end = if self.anchored {
            if path.len() < pos + last.len() || !path.ends_with(last.as_str()) {
                return false;
            }
            path.len() - last.len()
        } else {
            path.len()
        };
        for piece in &self.pieces[1..last_index] {
            match path[pos..end].find(piece.as_str()) {
                Some(at) => pos += at + piece.len(),
                None => return false,
            }
        }
        self.anchored || path[pos..].contains(last.as_str())
    }
}

/// `path_and_query` in canonical form: fragment removed, starting with `/`.
fn canonical_path(path_and_query: &str) -> String {
    let raw = path_and_query
        .split_once('#')
        .map_or(path_and_query, |(before, _)| before);
    let mut out = String::with_capacity(raw.len() + 8);
    if !raw.starts_with('/') {
        out.push('/');
    }
    let mut in_query = false;
    push_canonical(&mut out, raw.as_bytes(), &mut in_query);
    out
}

/// RFC 3986 reserved characters (gen-delims and sub-delims) that keep their
/// literal form; `*` and `$` are left out on purpose: they are always
/// compared encoded, because in a pattern they are wildcard and anchor.
fn is_literal_reserved(b: u8) -> bool {
    matches!(
        b,
        b':' | b'/'
            | b'?'
            | b'#'
            | b'['
            | b']'
            | b'@'
            | b'!'
            | b'&'
            | b'\''
            | b'('
            | b')'
            | b'+'
            | b','
            | b';'
            | b'='
    )
}

/// Appends the canonical form of `raw` (a path, a query, or a literal piece
/// of a pattern) to `out`. `in_query` says whether `raw` starts inside the
/// query and is set when a literal `?` starts it. The output is ASCII.
fn push_canonical(out: &mut String, raw: &[u8], in_query: &mut bool) {
    let mut i = 0;
    while i < raw.len() {
        let b = raw[i];
        let escaped = if b == b'%' { escape_at(raw, i) } else { None };
        let (octet, was_escaped) = match escaped {
            Some(octet) => {
                i += 3;
                (octet, true)
            }
            None => {
                i += 1;
                (b, false)
            }
        };
        if is_unreserved(octet) || *in_query && matches!(octet, b':' | b'/' | b'?' | b'@') {
            out.push(char::from(octet));
        } else if !was_escaped && is_literal_reserved(octet) {
            if octet == b'?' {
                *in_query = true;
            }
            out.push(char::from(octet));
        } else {
            push_escape(out, octet);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_product_token_has_letters_underscores_and_hyphens_only() {
        for ok in ["examplebot", "Example_Bot", "my-bot"] {
            assert_eq!(super::check_product_token(ok), Ok(()), "{ok}");
        }
        let e = super::check_product_token("bot2x").unwrap_err();
        assert!(e.contains("`2`") && e.contains("`bot`"), "{e}");
        assert!(
            e.contains("RFC 9309") && e.contains(r#"underscores ("_")"#),
            "{e}"
        );
        assert!(e.contains("such as `botx`"), "{e}");
        let e = super::check_product_token("42").unwrap_err();
        assert!(e.contains("no robots.txt group"), "{e}");
        assert!(super::check_product_token("my bot").is_err());
        assert!(super::check_product_token("bot/1.0").is_err());
        assert!(super::check_product_token("").is_err());
    }

    use super::*;
    use std::time::Instant;

    const TOKEN: &str = "ExampleBot";

    /// Checks every `(path, allowed)` pair against `body` parsed for `token`,
    /// and reports all mismatches at once.
    fn check(body: &[u8], token: &str, cases: &[(&str, bool)]) {
        let robots = Robots::parse(body, token);
        let wrong: Vec<String> = cases
            .iter()
            .filter(|(path, allowed)| robots.is_allowed(path) != *allowed)
            .map(|(path, allowed)| {
                format!(
                    "{path}: expected {}, decided by {:?}",
                    if *allowed { "allowed" } else { "disallowed" },
                    robots.matching_rule(path).map(|r| r.written.as_str())
                )
            })
            .collect();
        assert!(
            wrong.is_empty(),
            "token {token:?}, robots.txt:\n{}\nwrong verdicts:\n{}",
            String::from_utf8_lossy(body),
            wrong.join("\n")
        );
    }

    // RFC 9309 §5.1, the simple example, read by each crawler it names.
    const RFC_SIMPLE: &str = "\
User-Agent: *
Disallow: *.gif$
Disallow: /example/
Allow: /publications/

User-Agent: foobot
Disallow:/
Allow:/example/page.html
Allow:/example/allowed.gif

User-Agent: barbot
User-Agent: bazbot
Disallow: /example/page.html

User-Agent: quxbot

EOF
";

    #[test]
    fn rfc_simple_example_for_each_crawler() {
        let body = RFC_SIMPLE.as_bytes();
        check(
            body,
            "foobot",
            &[
                ("/example/page.html", true),
                ("/example/allowed.gif", true),
                ("/example/other.html", false),
                ("/publications/", false),
                ("/", false),
            ],
        );
        for token in ["barbot", "bazbot"] {
            check(
                body,
                token,
                &[
                    ("/example/page.html", false),
                    ("/example/other.html", true),
                    ("/image.gif", true),
                ],
            );
        }
        check(
            body,
            "quxbot",
            &[
                ("/example/page.html", true),
                ("/image.gif", true),
                ("/", true),
            ],
        );
        check(
            body,
            "otherbot",
            &[
                ("/image.gif", false),
                ("/image.gif?x", true),
                ("/example/", false),
                ("/example/page.html", false),
                ("/publications/", true),
                ("/", true),
            ],
        );
    }

    #[test]
    fn rfc_longest_match_example() {
        // RFC 9309 §5.2.
        let body =
            b"User-Agent: foobot\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif\n";
        check(
            body,
            "foobot",
            &[
                ("/example/page/", true),
                ("/example/page/allowed.gif", true),
                ("/example/page/disallowed.gif", false),
            ],
        );
    }

    #[test]
    fn longest_pattern_wins_whatever_the_order() {
        for body in [
            "User-agent: *\nDisallow: /a\nAllow: /ab\n",
            "User-agent: *\nAllow: /ab\nDisallow: /a\n",
        ] {
            check(
                body.as_bytes(),
                TOKEN,
                &[("/a", false), ("/ax", false), ("/ab", true), ("/abc", true)],
            );
        }
        for body in [
            "User-agent: *\nAllow: /a\nDisallow: /ab\n",
            "User-agent: *\nDisallow: /ab\nAllow: /a\n",
        ] {
            check(
                body.as_bytes(),
                TOKEN,
                &[("/a", true), ("/ab", false), ("/abc", false)],
            );
        }
        // Length counts the pattern's octets, wildcards included, not how
        // much of the path it covers: `/private/` (9) beats `/*.html` (7),
        // and `/*/x.html` (9) ties with it, so Allow wins.
        check(
            b"User-agent: *\nAllow: /*.html\nDisallow: /private/\n",
            TOKEN,
            &[("/private/x.html", false), ("/public/x.html", true)],
        );
        check(
            b"User-agent: *\nAllow: /*/x.html\nDisallow: /private/\n",
            TOKEN,
            &[("/private/x.html", true), ("/private/y.html", false)],
        );
    }

    #[test]
    fn allow_wins_a_tie_in_either_order() {
        for (body, path) in [
            ("User-agent: *\nAllow: /page\nDisallow: /page\n", "/page"),
            ("User-agent: *\nDisallow: /page\nAllow: /page\n", "/page"),
            ("User-agent: *\nDisallow: /*.php\nAllow: /x.php\n", "/x.php"),
            ("User-agent: *\nAllow: /x.php\nDisallow: /*.php\n", "/x.php"),
        ] {
            check(body.as_bytes(), TOKEN, &[(path, true)]);
        }
    }

    #[test]
    fn wildcards_and_end_anchor() {
        let body = b"User-agent: *
Disallow: /*.php$
Disallow: /private*/data
Disallow: /exact$
Disallow: /fish*
Allow: /this/*/exactly
Disallow: /this/
Disallow: /*?sessionid=
";
        check(
            body,
            TOKEN,
            &[
                ("/index.php", false),
                ("/a/b/index.php", false),
                ("/index.php?x=1", true),
                ("/index.php5", true),
                ("/index.phps", true),
                ("/private/data", false),
                ("/private-stuff/x/data/y", false),
                ("/privat/data", true),
                ("/exact", false),
                ("/exact/", true),
                ("/exactly", true),
                ("/fish", false),
                ("/fish.html", false),
                ("/fishheads/yummy.html", false),
                ("/Fish.asp", true),
                ("/catfish", true),
                ("/this/one/exactly", true),
                ("/this/a/b/exactly/more", true),
                ("/this/other", false),
                ("/page?sessionid=42", false),
                ("/page?a=1&sessionid=42", true),
                ("/page?session=42", true),
            ],
        );
        // A lone `$` after a wildcard, and runs of wildcards.
        check(
            b"User-agent: *\nDisallow: /a*$\nDisallow: /b**c\n",
            TOKEN,
            &[
                ("/a", false),
                ("/anything", false),
                ("/bc", false),
                ("/bxxc", false),
                ("/b", true),
            ],
        );
        // The pieces around wildcards may not overlap the anchored end.
        check(
            b"User-agent: *\nDisallow: /ab*ba$\n",
            TOKEN,
            &[("/aba", true), ("/abba", false), ("/abxba", false)],
        );
        // `$` in the middle of a pattern is a literal dollar sign.
        check(
            b"User-agent: *\nDisallow: /price$list\n",
            TOKEN,
            &[
                ("/price$list", false),
                ("/price%24list", false),
                ("/price", true),
            ],
        );
    }

    #[test]
    fn matching_is_case_sensitive_for_paths() {
        check(
            b"User-agent: *\nDisallow: /Private\n",
            TOKEN,
            &[
                ("/Private/x", false),
                ("/private/x", true),
                ("/PRIVATE", true),
            ],
        );
    }

    #[test]
    fn percent_encoding_table_of_rfc_9309() {
        // §2.2.2 (and the classic table of the 1996 draft): each pair names
        // the same resource, whichever side holds which spelling.
        let pairs = [
            ("/foo/bar?baz=quz", "/foo/bar?baz=quz"),
            (
                "/foo/bar?baz=https://foo.bar",
                "/foo/bar?baz=https%3A%2F%2Ffoo.bar",
            ),
            ("/foo/bar/ツ", "/foo/bar/%E3%83%84"),
            ("/foo/bar/%E3%83%84", "/foo/bar/%e3%83%84"),
            ("/foo/bar/%62%61%7A", "/foo/bar/baz"),
            ("/%7Ejoe/index.html", "/~joe/index.html"),
            ("/a%3cd.html", "/a%3Cd.html"),
            ("/a<d.html", "/a%3Cd.html"),
            ("/a b", "/a%20b"),
        ];
        for (one, other) in pairs {
            for (pattern, path) in [(one, other), (other, one)] {
                let body = format!("User-agent: *\nDisallow: {pattern}$\n");
                check(
                    body.as_bytes(),
                    TOKEN,
                    &[(path, false), ("/elsewhere", true)],
                );
            }
        }
    }

    #[test]
    fn escaped_reserved_characters_stay_distinct_in_the_path() {
        check(
            b"User-agent: *\nDisallow: /a%2Fb\n",
            TOKEN,
            &[("/a%2fb", false), ("/a/b", true)],
        );
        check(
            b"User-agent: *\nDisallow: /a/b\n",
            TOKEN,
            &[("/a/b", false), ("/a%2Fb", true)],
        );
        check(
            b"User-agent: *\nDisallow: /a?b=1%262\n",
            TOKEN,
            &[("/a?b=1%262", false), ("/a?b=1&2", true)],
        );
    }

    #[test]
    fn escaped_star_and_dollar_match_literally() {
        // RFC 9309 §2.2.3: a literal `*` or `$` in a URL is written `%2A`
        // or `%24` in a pattern.
        check(
            b"User-agent: *\nDisallow: /path/file-with-a-%2A.html\nDisallow: /path/foo-%24\n",
            TOKEN,
            &[
                ("/path/file-with-a-*.html", false),
                ("/path/file-with-a-%2a.html", false),
                ("/path/file-with-a-x.html", true),
                ("/path/foo-$", false),
                ("/path/foo-", true),
            ],
        );
    }

    #[test]
    fn user_agent_matching_ignores_case_and_version() {
        for line in [
            "User-agent: ExampleBot",
            "user-agent: examplebot",
            "USER-AGENT: EXAMPLEBOT",
            "User-agent: ExampleBot/1.2",
            "User-agent: examplebot (+https://example.com/bot)",
        ] {
            let body = format!("User-agent: *\nDisallow: /\n\n{line}\nDisallow: /only-this\n");
            check(
                body.as_bytes(),
                TOKEN,
                &[("/page", true), ("/only-this", false)],
            );
        }
        // A longer or shorter name is another crawler.
        for line in [
            "User-agent: ExampleBotX",
            "User-agent: Example",
            "User-agent: BazBot",
        ] {
            let body = format!("User-agent: *\nDisallow: /\n\n{line}\nAllow: /\n");
            check(body.as_bytes(), TOKEN, &[("/page", false)]);
        }
        // Our token may carry a version; its product part is what counts.
        check(
            b"User-agent: examplebot\nDisallow: /x\n",
            "ExampleBot/2.0",
            &[("/x", false)],
        );
    }

    #[test]
    fn groups_for_our_token_are_merged() {
        // RFC 9309 §2.2.1: two groups for the same token are one group.
        let body = b"user-agent: ExampleBot
disallow: /foo
disallow: /bar

user-agent: *
disallow: /star-only

user-agent: ExampleBot
disallow: /baz
";
        check(
            body,
            TOKEN,
            &[
                ("/foo", false),
                ("/bar", false),
                ("/baz", false),
                ("/star-only", true),
                ("/other", true),
            ],
        );
        // `*` groups merge too when no group names us.
        check(body, "OtherBot", &[("/star-only", false), ("/foo", true)]);
        let stars = b"User-agent: *\nDisallow: /one\n\nUser-agent: *\nDisallow: /two\n";
        check(
            stars,
            TOKEN,
            &[("/one", false), ("/two", false), ("/three", true)],
        );
    }

    #[test]
    fn our_group_is_preferred_over_star_even_when_empty() {
        check(
            b"User-agent: *\nDisallow: /\n\nUser-agent: ExampleBot\nDisallow: /secret\n",
            TOKEN,
            &[("/page", true), ("/secret", false)],
        );
        // A group naming us without rules allows everything.
        check(
            b"User-agent: *\nDisallow: /\n\nUser-agent: ExampleBot\n",
            TOKEN,
            &[("/page", true)],
        );
        // A group naming both us and `*` applies to us.
        check(
            b"User-agent: *\nUser-agent: ExampleBot\nDisallow: /shared\n",
            TOKEN,
            &[("/shared", false), ("/page", true)],
        );
    }

    #[test]
    fn no_group_for_us_or_star_allows_everything() {
        check(
            b"User-agent: OtherBot\nDisallow: /\n",
            TOKEN,
            &[("/", true), ("/page", true)],
        );
        check(b"", TOKEN, &[("/", true)]);
    }

    #[test]
    fn rules_outside_any_group_are_ignored() {
        check(
            b"Disallow: /before\nAllow: /\nUser-agent: *\nDisallow: /inside\n",
            TOKEN,
            &[("/before", true), ("/inside", false)],
        );
    }

    #[test]
    fn blank_lines_do_not_end_a_group() {
        // RFC 9309's grammar allows empty lines anywhere in a group: these
        // two `User-agent` lines start one group, which disallows `/`.
        check(
            b"User-agent: ExampleBot\n\nUser-agent: *\n\nDisallow: /\n",
            TOKEN,
            &[("/page", false)],
        );
    }

    #[test]
    fn a_user_agent_line_after_rules_starts_a_new_group() {
        check(
            b"User-agent: ExampleBot\nDisallow: /ours\nUser-agent: OtherBot\nDisallow: /theirs\n",
            TOKEN,
            &[("/ours", false), ("/theirs", true)],
        );
    }

    #[test]
    fn empty_disallow_allows_everything() {
        check(
            b"User-agent: *\nDisallow:\n",
            TOKEN,
            &[("/", true), ("/anything", true)],
        );
        // An empty Allow changes nothing.
        check(
            b"User-agent: *\nAllow:\nDisallow: /x\n",
            TOKEN,
            &[("/x", false)],
        );
    }

    #[test]
    fn robots_txt_itself_is_always_allowed() {
        let robots = Robots::parse(b"User-agent: *\nDisallow: /\n", TOKEN);
        assert!(robots.is_allowed("/robots.txt"));
        assert!(!robots.is_allowed("/robots.txt.bak"));
        assert!(!robots.is_allowed("/"));
        let everything = Robots::parse(b"User-agent: *\nDisallow: /\n", TOKEN);
        assert!(everything.is_allowed("/robots.txt"));
        assert!(!everything.is_allowed("/index.html"));
        assert!(Robots::allow_all().is_allowed("/index.html"));
    }

    #[test]
    fn empty_paths_fragments_and_unrooted_patterns() {
        let robots = Robots::parse(b"User-agent: *\nDisallow: /$\nDisallow: /a#b\n", TOKEN);
        assert!(!robots.is_allowed(""), "an empty path is /");
        assert!(!robots.is_allowed("/#top"), "the fragment is ignored");
        assert!(!robots.is_allowed("/a"), "text after # is a comment");
        // A pattern missing its leading slash is rooted.
        check(
            b"User-agent: *\nDisallow: private/\n",
            TOKEN,
            &[("/private/x", false), ("/x/private/", true)],
        );
    }

    #[test]
    fn garbage_around_valid_lines_is_tolerated() {
        let mut body = Vec::new();
        body.extend_from_slice(b"\xEF\xBB\xBFUser-agent: ExampleBot\r\n");
        body.extend_from_slice(b"\x00\xFF\xFE binary \x80\x81 junk\r\n");
        body.extend_from_slice(b"<html><body>Not a robots file</body></html>\n");
        body.extend_from_slice(b"   disalow: /misspelled   # a comment\r");
        body.extend_from_slice(b"\tDISALLOW /no-colon\r\n");
        body.extend_from_slice(b"Disallow /with:colon-in-value\n");
        body.extend_from_slice(b"Disallow: /caf\xE9\n"); // Latin-1, not UTF-8
        body.extend_from_slice(b"Disallow: /ok/\xE3\x83\x84\n");
        body.extend_from_slice(b"Crawl delay: 3\n");
        body.extend_from_slice(b"Unknown-Field: whatever\n");
        body.extend_from_slice(b": no name\n:\n#\n\r\n\n");
        body.extend_from_slice(b"Disallow: /last-line-without-newline");
        check(
            &body,
            TOKEN,
            &[
                ("/misspelled", false),
                ("/no-colon", false),
                ("/with:colon-in-value", false),
                ("/caf%E9", false),
                ("/ok/ツ", false),
                ("/last-line-without-newline", false),
                ("/open", true),
            ],
        );
        let robots = Robots::parse(&body, TOKEN);
        assert_eq!(robots.crawl_delay(), Some(Duration::from_secs(3)));
        // "user agent" spelled with a space, and a BOM before it.
        check(
            b"\xEF\xBB\xBFUser agent: *\nDisallow: /x\n",
            TOKEN,
            &[("/x", false)],
        );
    }

    #[test]
    fn an_html_page_served_as_robots_txt_allows_everything() {
        let body = b"<!DOCTYPE html>\n<html><head><title>Oops</title></head>\n<body>Disallow: everything?</body></html>\n";
        check(body, TOKEN, &[("/", true), ("/page", true)]);
    }

    #[test]
    fn random_bytes_never_panic() {
        // A fixed seed: the same "random" files every run.
        let mut rng = common::testutil::Rng::new(1);
        let mut next = move || rng.next_u64();
        let alphabet = b"Dis:allow:User-agent*$%/\n\r #\x00\xFF\xE3ab?=";
        let mut decisions = [0usize; 2];
        for _ in 0..500 {
            let len = (next() % 400) as usize;
            let body: Vec<u8> = (0..len)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                .collect();
            let robots = Robots::parse(&body, TOKEN);
            let path: String = (0..(next() % 20))
                .map(|_| char::from(alphabet[(next() % 26) as usize]))
                .collect();
            decisions[usize::from(robots.is_allowed(&path))] += 1;
            assert!(robots.is_allowed("/robots.txt"));
        }
        assert_eq!(decisions.iter().sum::<usize>(), 500);
    }

    #[test]
    fn only_the_first_500_kib_are_parsed() {
        let mut body = b"User-agent: *\nDisallow: /early\n".to_vec();
        while body.len() < MAX_ROBOTS_BYTES - 200 {
            body.extend_from_slice(b"# padding padding padding padding padding\n");
        }
        body.extend_from_slice(b"Disallow: /within\n");
        // The line that straddles the limit is dropped whole: its head,
        // `Disallow: /straddle`, would disallow more than was written.
        body.resize(MAX_ROBOTS_BYTES - 19, b'\n');
        body.extend_from_slice(b"Disallow: /straddle-this-long-name\n");
        assert!(body.len() > MAX_ROBOTS_BYTES);
        body.extend_from_slice(b"Disallow: /late\n");
        check(
            &body,
            TOKEN,
            &[
                ("/early", false),
                ("/within", false),
                ("/straddle-this-long-name", true),
                ("/straddle", true),
                ("/late", true),
            ],
        );
        // A body that ends exactly at the limit keeps its last line.
        let mut exact = b"User-agent: *\n".to_vec();
        let rule = b"\nDisallow: /edge";
        exact.resize(MAX_ROBOTS_BYTES - rule.len(), b'\n');
        exact.extend_from_slice(rule);
        assert_eq!(exact.len(), MAX_ROBOTS_BYTES);
        check(&exact, TOKEN, &[("/edge", false)]);
        // So does one whose limit falls right on a line end; what follows
        // is ignored.
        exact.extend_from_slice(b"\nDisallow: /after\n");
        check(&exact, TOKEN, &[("/edge", false), ("/after", true)]);
    }

    #[test]
    fn the_parsed_part_keeps_the_same_rules() {
        let mut body = b"User-agent: *\nDisallow: /early\n".to_vec();
        body.resize(MAX_ROBOTS_BYTES - 5, b'\n');
        body.extend_from_slice(b"Disallow: /cut\nDisallow: /late\n");
        let part = Robots::parsed_part(&body);
        // It ends at the line end before `Disallow: /cut`.
        assert_eq!(part.len(), MAX_ROBOTS_BYTES - 6);
        assert!(body.starts_with(part));
        check(
            part,
            TOKEN,
            &[("/early", false), ("/cut", true), ("/late", true)],
        );
        // A body within the limit is kept whole, last line included.
        let small = b"User-agent: *\nDisallow: /x";
        assert_eq!(Robots::parsed_part(small), small);
    }

    #[test]
    fn crawl_delay_of_the_selected_group() {
        let delay = |body: &str| Robots::parse(body.as_bytes(), TOKEN).crawl_delay();
        assert_eq!(
            delay("User-agent: *\nCrawl-delay: 2.5\n"),
            Some(Duration::from_millis(2500))
        );
        assert_eq!(
            delay("User-agent: *\ncrawl-delay: 10\n"),
            Some(Duration::from_secs(10))
        );
        // Ours, not the `*` group's; and none when our group has none.
        assert_eq!(
            delay("User-agent: *\nCrawl-delay: 10\n\nUser-agent: ExampleBot\nCrawl-delay: 1\n"),
            Some(Duration::from_secs(1))
        );
        assert_eq!(
            delay("User-agent: *\nCrawl-delay: 10\n\nUser-agent: ExampleBot\nDisallow: /x\n"),
            None
        );
        assert_eq!(delay("User-agent: OtherBot\nCrawl-delay: 10\n"), None);
        assert_eq!(
            delay("Crawl-delay: 10\nUser-agent: *\n"),
            None,
            "outside any group"
        );
        // The largest of merged groups.
        assert_eq!(
            delay(
                "User-agent: ExampleBot\nCrawl-delay: 3\n\nUser-agent: ExampleBot\nCrawl-delay: 7\n"
            ),
            Some(Duration::from_secs(7))
        );
        // Garbage is ignored; a valid value beside it still counts.
        for garbage in ["soon", "-1", "NaN", "inf", "1,5", "5s", "", "0x10"] {
            let body = format!("User-agent: *\nCrawl-delay: {garbage}\n");
            assert_eq!(delay(&body), None, "Crawl-delay: {garbage}");
        }
        assert_eq!(
            delay("User-agent: *\nCrawl-delay: soon\nCrawl-delay: 4\n"),
            Some(Duration::from_secs(4))
        );
        // Absurd values are clamped, not dropped.
        assert_eq!(
            delay("User-agent: *\nCrawl-delay: 1e300\n"),
            Some(Duration::from_secs(MAX_CRAWL_DELAY_SECS))
        );
    }

    #[test]
    fn matching_rule_names_the_deciding_rule() {
        let robots = Robots::parse(b"User-agent: *\nDisallow: /a\nAllow: /a/b\n", TOKEN);
        let rule = robots.matching_rule("/a/x").expect("a rule matches");
        assert!(!rule.allow);
        assert_eq!(rule.written, "/a");
        let rule = robots.matching_rule("/a/b/c").expect("a rule matches");
        assert!(rule.allow);
        assert_eq!(rule.written, "/a/b");
        assert!(robots.matching_rule("/z").is_none());
    }

    #[test]
    fn pathological_wildcards_stay_fast() {
        // A backtracking matcher tries every way to place 30 `a`s in 20,000
        // octets before failing; ours scans each piece once. The bound is
        // generous: it only checks that matching ends.
        let pattern = format!("/{}b", "*a".repeat(30));
        let body = format!("User-agent: *\nDisallow: {pattern}\nDisallow: {pattern}$\n");
        let robots = Robots::parse(body.as_bytes(), TOKEN);
        let path = format!("/{}", "a".repeat(20_000));
        let started = Instant::now();
        for _ in 0..100 {
            assert!(robots.is_allowed(&path));
        }
        assert!(!robots.is_allowed(&format!("{path}b")));
        assert!(!robots.is_allowed(&format!("{path}bx")));
        let elapsed = started.elapsed();
        assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
    }

    #[test]
    fn many_rules_in_a_large_file_stay_fast() {
        // 20,000 wildcard rules, each tried on every check of a long path.
        let mut body = b"User-agent: *\n".to_vec();
        for i in 0..20_000 {
            body.extend_from_slice(format!("Disallow: /*x{i}*y$\n").as_bytes());
        }
        let robots = Robots::parse(&body, TOKEN);
        assert_eq!(robots.rules.len(), 20_000);
        let path = format!("/{}", "x1".repeat(2_000));
        let started = Instant::now();
        for _ in 0..20 {
            assert!(robots.is_allowed(&path));
        }
        assert!(!robots.is_allowed("/ax19999by"));
        let elapsed = started.elapsed();
        assert!(elapsed < Duration::from_secs(20), "took {elapsed:?}");
    }

    #[test]
    fn status_policy() {
        use RobotsDecision::*;
        let table = [
            (RobotsOutcome::Status(200), Parse),
            (RobotsOutcome::Status(204), Parse),
            (RobotsOutcome::Status(301), AllowAll),
            (RobotsOutcome::TooManyRedirects, AllowAll),
            (RobotsOutcome::Status(400), AllowAll),
            (RobotsOutcome::Status(401), AllowAll),
            (RobotsOutcome::Status(403), AllowAll),
            (RobotsOutcome::Status(404), AllowAll),
            (RobotsOutcome::Status(410), AllowAll),
            (RobotsOutcome::Status(429), DisallowAll),
            (RobotsOutcome::Status(500), DisallowAll),
            (RobotsOutcome::Status(503), DisallowAll),
            (RobotsOutcome::Status(599), DisallowAll),
            (RobotsOutcome::Status(100), DisallowAll),
            (RobotsOutcome::Status(700), DisallowAll),
            (RobotsOutcome::Unreachable, DisallowAll),
        ];
        for (outcome, expected) in table {
            assert_eq!(decide(outcome), expected, "{outcome:?}");
        }
    }
}
