//! Which rules apply to a host, and where each value in force comes from:
//! what `segmenter status --host HOST` prints.

use std::net::IpAddr;
use std::path::PathBuf;

use super::{HostView, Key};

/// Where a value in force comes from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// A rule of the file.
    Rule {
        /// Its line.
        line: usize,
        /// What it matches (`domain example.com`).
        matches: String,
    },
    /// A crawl-wide setting, named by the program (`crawl.toml [fetcher]
    /// min_delay`, `--max-per-host`, `default`).
    CrawlWide(String),
    /// Nothing sets it.
    Unset,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Rule { line, matches } => write!(f, "line {line} ({matches})"),
            Source::CrawlWide(place) => f.write_str(place),
            Source::Unset => f.write_str("not set"),
        }
    }
}

/// One value in force.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Explained {
    /// The key's name.
    pub key: &'static str,
    /// The value, as the file writes it (`-` when unset).
    pub value: String,
    /// Where it comes from.
    pub source: Source,
    /// For a rule on some URLs of the host: the path they start with.
    pub under: Option<String>,
    /// False for a key the programs read but do not apply yet
    /// ([`Key::applied`]).
    pub applied: bool,
}

/// The rules that apply to a host and the value of every key.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Explanation {
    /// The host.
    pub host: String,
    /// Its address, if known (address rules apply only then).
    pub address: Option<IpAddr>,
    /// The rules file.
    pub file: PathBuf,
    /// The rules that apply, most specific first: line, what it matches.
    pub rules: Vec<(usize, String)>,
    /// Every key: the host's value, then the values of its path rules.
    pub values: Vec<Explained>,
}

impl HostView<'_> {
    /// Explains the host's rules. `crawl_wide` gives the value and the
    /// place of the crawl-wide setting behind a key, for the keys that
    /// have one.
    pub fn explain(&self, crawl_wide: impl Fn(Key) -> Option<(String, String)>) -> Explanation {
        let rules = self
            .path_rules()
            .chain(self.host_rules())
            .map(|r| (r.line, r.matches.to_string()))
            .collect();
        let mut values = Vec::new();
        for key in Key::ALL {
            let (value, source) = match self.source(key) {
                Some(rule) => (
                    rule.get(key).map(|v| v.to_string()).unwrap_or_default(),
                    Source::Rule {
                        line: rule.line,
                        matches: rule.matches.to_string(),
                    },
                ),
                None => match crawl_wide(key) {
                    Some((value, place)) => (value, Source::CrawlWide(place)),
                    None => ("-".to_string(), Source::Unset),
                },
            };
            values.push(Explained {
                key: key.name(),
                value,
                source,
                under: None,
                applied: key.applied(),
            });
            for rule in self.path_rules() {
                if let Some(v) = rule.get(key) {
                    values.push(Explained {
                        key: key.name(),
                        value: v.to_string(),
                        source: Source::Rule {
                            line: rule.line,
                            matches: rule.matches.to_string(),
                        },
                        under: rule.path().map(str::to_string),
                        applied: key.applied(),
                    });
                }
            }
        }
        Explanation {
            host: self.host().to_string(),
            address: self.address(),
            file: self.rules.path().to_path_buf(),
            rules,
            values,
        }
    }
}

impl std::fmt::Display for Explanation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "host {}", self.host)?;
        match self.address {
            Some(a) => writeln!(f, " (address {a})")?,
            None => writeln!(
                f,
                " (address not known yet: rules on addresses wait for it)"
            )?,
        }
        if self.rules.is_empty() {
            writeln!(f, "no rule of {} applies", self.file.display())?;
        } else {
            writeln!(
                f,
                "rules of {} that apply, most specific first:",
                self.file.display()
            )?;
            for (line, matches) in &self.rules {
                writeln!(f, "  line {line:<5} {matches}")?;
            }
        }
        let width = self
            .values
            .iter()
            .map(|v| v.key.len() + v.under.as_ref().map_or(0, |u| u.len() + 7))
            .max()
            .unwrap_or(0);
        let value_width = self.values.iter().map(|v| v.value.len()).max().unwrap_or(0);
        for v in &self.values {
            let key = match &v.under {
                Some(path) => format!("{} under {path}", v.key),
                None => v.key.to_string(),
            };
            let note = match v.applied {
                true => "",
                false => "  (read, not applied)",
            };
            writeln!(
                f,
                "{key:<width$}  {:<value_width$}  {}{note}",
                v.value, v.source
            )?;
        }
        Ok(())
    }
}
