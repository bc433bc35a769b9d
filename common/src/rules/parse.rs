//! Reading the rules file: TOML, every value checked, every error with its
//! line.

use std::ops::Range;
use std::path::Path;
use std::str::FromStr;

use ipnet::IpNet;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::{Key, Match, PathPattern, Rule, RulesError, Value, host_surt};

/// Request headers a rule may not set: the crawler writes them itself
/// (the request line's host, the body framing, the connection, who it is,
/// the validators of conditional requests, the encodings it decodes, and
/// what would turn a page into a part of it or a 412: ranges, preconditions;
/// the proxy's own headers).
const MANAGED_HEADERS: [&str; 20] = [
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "te",
    "trailer",
    "upgrade",
    "expect",
    "user-agent",
    "from",
    "if-none-match",
    "if-modified-since",
    "accept-encoding",
    "range",
    "if-range",
    "if-match",
    "if-unmodified-since",
    "proxy-authorization",
    "proxy-connection",
];

/// The rules of `text`, in the file's order.
pub(super) fn rules(text: &str, path: &Path) -> Result<Vec<Rule>, RulesError> {
    let lines = Lines { text, path };
    let top = DeTable::parse(text).map_err(|e| lines.bad(e.span(), e.message().to_string()))?;
    let mut rules = Vec::new();
    for (key, value) in in_file_order(top.get_ref()) {
        if key.get_ref().as_ref() == "version" {
            check_version(value).map_err(|m| lines.bad(Some(key.span()), m))?;
            continue;
        }
        if key.get_ref().as_ref() != "rule" {
            return Err(lines.bad(
                Some(key.span()),
                format!(
                    "`{}`: the file holds rules only, each under a `[[rule]]` header",
                    key.get_ref()
                ),
            ));
        }
        let DeValue::Array(array) = value.get_ref() else {
            return Err(lines.bad(
                Some(value.span()),
                "`rule` is a list of tables: write each rule under a `[[rule]]` header".into(),
            ));
        };
        for item in array.iter() {
            let DeValue::Table(table) = item.get_ref() else {
                return Err(lines.bad(Some(item.span()), "a rule is a table of keys".into()));
            };
            rules.push(rule(&lines, item.span(), table)?);
        }
    }
    Ok(rules)
}

/// The file's `version`: this crawler reads [`super::RULES_VERSION`] and
/// the versions before it.
fn check_version(value: &Spanned<DeValue<'_>>) -> Result<(), String> {
    let known = super::RULES_VERSION;
    match value.get_ref() {
        DeValue::Integer(n) => match n.as_str().parse::<u32>() {
            Ok(v) if (1..=known).contains(&v) => Ok(()),
            Ok(v) if v > known => Err(format!(
                "version {v}: written for a newer crawler (this one reads host rules up to \
                 version {known}); upgrade the programs"
            )),
            _ => Err(format!("version: a version from 1 to {known} is needed")),
        },
        _ => Err(format!(
            "version: a whole number is needed (this crawler writes {known})"
        )),
    }
}

/// The text and its file, to turn spans into line numbers.
struct Lines<'a> {
    text: &'a str,
    path: &'a Path,
}

impl Lines<'_> {
    /// The line (from 1) where `offset` is.
    fn line(&self, offset: usize) -> usize {
        let end = offset.min(self.text.len());
        self.text.as_bytes()[..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    }

    /// The line of the `[[rule]]` header a rule starting at `offset` is
    /// under (the line of `offset` for an inline table).
    fn header_line(&self, offset: usize) -> usize {
        let line = self.line(offset);
        let before: Vec<&str> = self.text.lines().take(line).collect();
        match before
            .iter()
            .rposition(|l| l.trim_start().starts_with("[["))
        {
            Some(i) => i + 1,
            None => line,
        }
    }

    fn bad(&self, span: Option<Range<usize>>, message: String) -> RulesError {
        RulesError::Bad {
            path: self.path.to_path_buf(),
            line: span.map_or(1, |s| self.line(s.start)),
            message,
        }
    }
}

/// One rule from its table.
fn rule(lines: &Lines<'_>, span: Range<usize>, table: &DeTable<'_>) -> Result<Rule, RulesError> {
    let first_key = table
        .keys()
        .map(|k| k.span().start)
        .min()
        .unwrap_or(span.start);
    let line = lines.header_line(first_key);
    let mut matches: Option<(Match, String, Range<usize>)> = None;
    let mut values = Vec::new();
    for (key, value) in in_file_order(table) {
        let name = key.get_ref().as_ref();
        let at = |message: String| lines.bad(Some(key.span()), format!("{name}: {message}"));
        if let Some(kind) = match_kind(name) {
            if let Some((earlier, _, _)) = &matches {
                return Err(at(format!(
                    "a rule matches one thing, and this one already has `{earlier}`: \
                     write a rule for each"
                )));
            }
            let text = string(value).map_err(at)?;
            let (m, prefix) = matcher(kind, text).map_err(at)?;
            matches = Some((m, prefix, key.span()));
            continue;
        }
        let Some(k) = Key::parse(name) else {
            return Err(lines.bad(
                Some(key.span()),
                format!(
                    "`{name}` is not a key of a rule (keys: host, domain, surt, addresses, {})",
                    super::Key::ALL.map(Key::name).join(", ")
                ),
            ));
        };
        values.push((k, convert(k, value).map_err(at)?));
    }
    let Some((matches, prefix, _)) = matches else {
        return Err(RulesError::Bad {
            path: lines.path.to_path_buf(),
            line,
            message: "this rule matches nothing: give it one of `host`, `domain`, `surt` or \
                      `addresses`"
                .into(),
        });
    };
    values.sort_by_key(|(k, _)| *k);
    let rule = Rule {
        line,
        matches,
        values,
        prefix,
    };
    check_rule(&rule).map_err(|message| RulesError::Bad {
        path: lines.path.to_path_buf(),
        line,
        message,
    })?;
    Ok(rule)
}

/// The entries of a table in the order the file writes them (the table
/// itself is sorted by key).
fn in_file_order<'t, 'i>(
    table: &'t DeTable<'i>,
) -> Vec<(
    &'t Spanned<toml::de::DeString<'i>>,
    &'t Spanned<DeValue<'i>>,
)> {
    let mut entries: Vec<_> = table.iter().collect();
    entries.sort_by_key(|(k, _)| k.span().start);
    entries
}

/// The keys that say what a rule matches.
fn match_kind(name: &str) -> Option<&'static str> {
    ["host", "domain", "surt", "addresses"]
        .into_iter()
        .find(|k| *k == name)
}

/// What is wrong with a rule as a whole: a key of a whole host in a rule
/// on a path, recrawl bounds that cross.
fn check_rule(rule: &Rule) -> Result<(), String> {
    if let Some(path) = rule.path()
        && let Some((k, _)) = rule.values.iter().find(|(k, _)| k.whole_host())
    {
        return Err(format!(
            "`{}` applies to a whole host, and this rule is on the URLs under `{path}`: \
             set it in a rule on the host (`host = ...`)",
            k.name()
        ));
    }
    if let (Some(Value::Duration(min)), Some(Value::Duration(max))) =
        (rule.get(Key::RecrawlMin), rule.get(Key::RecrawlMax))
        && min > max
    {
        return Err(format!(
            "recrawl_min ({}) is longer than recrawl_max ({})",
            crate::human::duration(*min),
            crate::human::duration(*max)
        ));
    }
    Ok(())
}

/// What a `host`, `domain`, `surt` or `addresses` value matches, and the
/// SURT prefix of a match on names.
fn matcher(kind: &str, text: &str) -> Result<(Match, String), String> {
    match kind {
        "host" => {
            let host = host_name(text)?;
            let prefix = host_surt(&host);
            Ok((Match::Host(host), prefix))
        }
        "domain" => {
            let domain = host_name(text)?;
            let mut prefix = host_surt(&domain);
            prefix.pop(); // `com,example,)` → `com,example,`
            Ok((Match::Domain(domain), prefix))
        }
        "surt" => {
            let prefix = surt_prefix(text)?;
            Ok((Match::Surt(prefix.clone()), prefix))
        }
        _ => {
            let net = match IpNet::from_str(text.trim()) {
                Ok(net) => net,
                Err(_) => match std::net::IpAddr::from_str(text.trim()) {
                    Ok(addr) => IpNet::from(addr),
                    Err(_) => {
                        return Err(format!(
                            "`{text}` is neither an address nor a network (write \
                             `10.0.0.0/8`, `192.168.1.7` or `fd00::/8`)"
                        ));
                    }
                },
            };
            Ok((Match::Addresses(net.trunc()), String::new()))
        }
    }
}

/// A host or domain in canonical form (lower case, punycode, no trailing
/// dot).
fn host_name(text: &str) -> Result<String, String> {
    let trimmed = text.trim().trim_end_matches('.');
    if trimmed.is_empty() {
        return Err("empty".into());
    }
    if trimmed.contains(['/', ':', '*']) && !trimmed.starts_with('[') {
        return Err(format!(
            "`{text}`: write the name alone, without scheme, port, path or wildcard"
        ));
    }
    url::Host::parse(trimmed)
        .map(|h| h.to_string())
        .map_err(|e| format!("`{text}` is not a host name ({e})"))
}

/// A SURT prefix as rules write it: lower-case labels, each followed by a
/// comma, then optionally `)` and a path.
fn surt_prefix(text: &str) -> Result<String, String> {
    let text = text.trim();
    if text.contains("://") || text.starts_with('(') {
        return Err(format!(
            "`{text}`: write the prefix without scheme and parenthesis, as \
             `com,example,www,)/path` (the scheme plays no part)"
        ));
    }
    let (host, path) = match text.find(')') {
        Some(i) => (&text[..i], Some(&text[i + 1..])),
        None => (text, None),
    };
    if !host.ends_with(',') || host.len() < 2 {
        return Err(format!(
            "`{text}`: each label ends with a comma, as in `com,example,` (a domain \
             and the hosts under it) or `com,example,www,)` (one host)"
        ));
    }
    for label in host[..host.len() - 1].split(',') {
        let ok = !label.is_empty()
            && label
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
        if !ok {
            return Err(format!(
                "`{text}`: `{label}` is not a label of a host name in canonical form \
                 (lower case, punycode for other scripts)"
            ));
        }
    }
    if let Some(path) = path
        && !path.is_empty()
        && !path.starts_with('/')
    {
        return Err(format!("`{text}`: the path after `)` starts with `/`"));
    }
    Ok(text.to_string())
}

/// A value as the key wants it.
fn convert(key: Key, value: &Spanned<DeValue<'_>>) -> Result<Value, String> {
    match key {
        Key::MinDelay | Key::RecrawlMin | Key::RecrawlMax => duration(value).map(Value::Duration),
        Key::DelayFactor => number(value, false).map(Value::Number),
        Key::Weight => number(value, true).map(Value::Number),
        Key::MaxPerHost => match count(value)? {
            0 => Err(
                "0 would hold the host's every URL: write at least 1 (and `deny = \
                      [\"*\"]` to leave a host out)"
                    .into(),
            ),
            n => Ok(Value::Count(n)),
        },
        Key::MaxHostPages => count(value).map(Value::Count),
        Key::MaxHostBytes => size(value).map(Value::Size),
        Key::AllowPrivate | Key::SortQuery | Key::LowercasePath | Key::ConditionalRequests => {
            match value.get_ref() {
                DeValue::Boolean(b) => Ok(Value::Switch(*b)),
                other => Err(format!("`true` or `false`, not {}", describe(other))),
            }
        }
        Key::Allow | Key::Deny => strings(value)?
            .into_iter()
            .map(PathPattern::parse)
            .collect::<Result<_, _>>()
            .map(Value::Patterns),
        Key::DropParams => strings(value)?
            .into_iter()
            .map(param_name)
            .collect::<Result<_, _>>()
            .map(Value::Names),
        Key::Headers => headers(value).map(Value::Headers),
    }
}

fn describe(value: &DeValue<'_>) -> String {
    match value {
        DeValue::String(s) => format!("the string \"{s}\""),
        other => format!("a {}", other.type_str()),
    }
}

fn string<'v>(value: &'v Spanned<DeValue<'_>>) -> Result<&'v str, String> {
    match value.get_ref() {
        DeValue::String(s) => Ok(s.as_ref()),
        other => Err(format!("a string in quotes, not {}", describe(other))),
    }
}

fn strings<'v>(value: &'v Spanned<DeValue<'_>>) -> Result<Vec<&'v str>, String> {
    let DeValue::Array(items) = value.get_ref() else {
        return Err(format!(
            "a list of strings (`[\"...\"]`), not {}",
            describe(value.get_ref())
        ));
    };
    items.iter().map(string).collect()
}

fn duration(value: &Spanned<DeValue<'_>>) -> Result<std::time::Duration, String> {
    let text = match value.get_ref() {
        DeValue::String(s) => s.to_string(),
        DeValue::Integer(i) if i.radix() == 10 => i.as_str().to_string(),
        DeValue::Float(f) => f.as_str().to_string(),
        other => return Err(format!("a duration (`\"5s\"`), not {}", describe(other))),
    };
    crate::human::parse_duration(&text)
}

fn number(value: &Spanned<DeValue<'_>>, positive: bool) -> Result<f64, String> {
    let n = match value.get_ref() {
        DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix())
            .map(|n| n as f64)
            .ok(),
        DeValue::Float(f) => f.as_str().replace('_', "").parse::<f64>().ok(),
        _ => None,
    };
    match n {
        Some(n) if n.is_finite() && (n > 0.0 || (!positive && n == 0.0)) => Ok(n),
        Some(n) => Err(format!(
            "{n}: must be {} and finite",
            if positive { "more than 0" } else { "0 or more" }
        )),
        None => Err(format!("a number, not {}", describe(value.get_ref()))),
    }
}

fn count(value: &Spanned<DeValue<'_>>) -> Result<u64, String> {
    match value.get_ref() {
        DeValue::Integer(i) => u64::from_str_radix(&i.as_str().replace('_', ""), i.radix())
            .map_err(|_| format!("{}: a whole number of 0 or more", i.as_str())),
        other => Err(format!("a whole number, not {}", describe(other))),
    }
}

fn size(value: &Spanned<DeValue<'_>>) -> Result<u64, String> {
    match value.get_ref() {
        DeValue::String(s) => crate::human::parse_size(s),
        DeValue::Integer(_) => count(value),
        other => Err(format!("a size (`\"2GB\"`), not {}", describe(other))),
    }
}

/// A query parameter name of `drop_params`, in lower case.
fn param_name(text: &str) -> Result<String, String> {
    let name = text.strip_suffix('*').unwrap_or(text);
    let ok = !name.is_empty()
        && name
            .bytes()
            .all(|b| crate::urlnorm::is_unreserved(b) || b"!$'()+,;:@".contains(&b));
    if !ok {
        return Err(format!(
            "`{text}`: a query parameter's name as canonical URLs write it (letters, \
             digits, `-._~`), with `*` at the end for every name that starts so"
        ));
    }
    Ok(text.to_ascii_lowercase())
}

/// `headers = { Name = "value" }`: names are HTTP tokens, values one line.
fn headers(value: &Spanned<DeValue<'_>>) -> Result<Vec<(String, String)>, String> {
    let DeValue::Table(table) = value.get_ref() else {
        return Err(format!(
            "a table of names and values (`{{ Cookie = \"a=1\" }}`), not {}",
            describe(value.get_ref())
        ));
    };
    let mut out = Vec::new();
    for (name, v) in in_file_order(table) {
        let name = name.get_ref().as_ref();
        let token = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
        if !token {
            return Err(format!("`{name}` is not a header name"));
        }
        if MANAGED_HEADERS.iter().any(|m| name.eq_ignore_ascii_case(m)) {
            return Err(format!(
                "`{name}` may not be set by a rule: the crawler writes it itself, or it \
                 would store part of a page or a refusal in place of the page"
            ));
        }
        let text = string(v).map_err(|e| format!("{name}: {e}"))?;
        if text.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
            return Err(format!("{name}: a header's value is one line"));
        }
        out.push((name.to_string(), text.to_string()));
    }
    Ok(out)
}
