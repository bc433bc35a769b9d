//! `CRAWL/crawl.toml`: optional settings shared by both programs, and the
//! parsers for durations and sizes that both command lines accept.
//!
//! ```toml
//! [agent]                      # required by the fetcher (here or as flags)
//! name = "examplebot"          # product token, matched against robots.txt groups
//! url = "https://example.org/bot.html"
//!
//! [scope]
//! mode = "seeds"               # "seeds" (registrable domains of the seeds), "list", or "any"
//! hosts = ["docs.example.org"] # extra hosts in scope
//! domains = ["example.net"]    # extra registrable domains in scope
//! rules_file = "scope.rules"   # +REGEX / -REGEX lines, first match wins
//!
//! [filter]                     # limits applied to every candidate URL
//! max_url_length = 2048
//!
//! [fetcher]                    # read by the fetcher (see `fetcher --help`)
//! [segmenter]                  # read by the segmenter (see `segmenter --help`)
//! ```
//! Command-line flags override the file.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde::de::DeserializeOwned;

/// A problem with `crawl.toml`.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file (or one section of it) is not valid.
    #[error("{path}: {message}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong, with the offending key when known.
        message: String,
    },
}

/// The whole of `crawl.toml`. Unknown keys are errors, so typos do not go unnoticed.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrawlConfig {
    /// Who the crawler says it is.
    #[serde(default)]
    pub agent: AgentConfig,
    /// Which URLs belong to the crawl.
    #[serde(default)]
    pub scope: ScopeConfig,
    /// Length and trap limits.
    #[serde(default)]
    pub filter: FilterConfig,
    /// The fetcher's own section, deserialized by the fetcher with [`CrawlConfig::section`].
    #[serde(default)]
    pub fetcher: toml::Table,
    /// The segmenter's own section, deserialized by the segmenter with [`CrawlConfig::section`].
    #[serde(default)]
    pub segmenter: toml::Table,
    /// Where the file was read from (set by [`CrawlConfig::load`]).
    #[serde(skip)]
    pub path: PathBuf,
}

/// `[agent]`: the user agent.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// Product token, e.g. `examplebot`.
    pub name: Option<String>,
    /// Contact URL put in the `User-Agent` header.
    pub url: Option<String>,
}

/// How the scope is decided.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScopeMode {
    /// The registrable domains of the seeds (from `scope.seeds`), plus `hosts` and `domains`.
    #[default]
    Seeds,
    /// Only `hosts` and `domains`.
    List,
    /// Any host (an open crawl); rules still apply.
    Any,
}

/// `[scope]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScopeConfig {
    /// See [`ScopeMode`].
    #[serde(default)]
    pub mode: ScopeMode,
    /// Hosts in scope (exact match, lower case).
    #[serde(default)]
    pub hosts: Vec<String>,
    /// Registrable domains in scope (every host under them).
    #[serde(default)]
    pub domains: Vec<String>,
    /// Allow/deny regex rules, one per line: `+REGEX` or `-REGEX`, `#` comments;
    /// the first rule that matches decides; relative to the crawl directory.
    pub rules_file: Option<PathBuf>,
}

/// `[filter]`: limits every candidate URL must pass.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FilterConfig {
    /// Longest URL accepted, in bytes (default 2048).
    pub max_url_length: usize,
    /// Most path segments (default 20).
    pub max_path_segments: usize,
    /// A path segment repeated this many times or more is a trap (default 3).
    pub max_repeated_segment: usize,
    /// Most hops from a seed (default 10).
    pub max_hops: u32,
    /// Most query parameters (default 10).
    pub max_query_params: usize,
    /// Calendar traps: a year in the path or query further than this many
    /// years after the current one (or before 1970) is refused (default 1).
    pub max_years_ahead: i64,
}

impl Default for FilterConfig {
    fn default() -> Self {
        FilterConfig {
            max_url_length: 2048,
            max_path_segments: 20,
            max_repeated_segment: 3,
            max_hops: 10,
            max_query_params: 10,
            max_years_ahead: 1,
        }
    }
}

impl CrawlConfig {
    /// Reads `path`; a missing file gives the defaults.
    pub fn load(path: &Path) -> Result<CrawlConfig, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(CrawlConfig {
                    path: path.to_path_buf(),
                    ..CrawlConfig::default()
                });
            }
            Err(source) => {
                return Err(ConfigError::Io {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        let mut cfg: CrawlConfig = toml::from_str(&text).map_err(|e| ConfigError::Invalid {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        cfg.path = path.to_path_buf();
        Ok(cfg)
    }

    /// Deserializes a program's own section (`[fetcher]` or `[segmenter]`);
    /// errors name the file and the section.
    pub fn section<T: DeserializeOwned + Default>(
        &self,
        name: &str,
        table: &toml::Table,
    ) -> Result<T, ConfigError> {
        if table.is_empty() {
            return Ok(T::default());
        }
        T::deserialize(toml::Value::Table(table.clone())).map_err(|e| ConfigError::Invalid {
            path: self.path.clone(),
            message: format!("[{name}]: {e}"),
        })
    }
}

/// Parses `250ms`, `5s`, `1.5` (seconds), `2m`, `1h`.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, unit) = split_unit(s);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a duration (examples: 250ms, 5s, 1.5, 2m, 1h)"))?;
    let secs = match unit.to_ascii_lowercase().as_str() {
        "ms" => value / 1000.0,
        "" | "s" => value,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        other => return Err(format!("`{s}`: unknown unit `{other}` (use ms, s, m or h)")),
    };
    if !(secs.is_finite() && secs >= 0.0) {
        return Err(format!("`{s}`: a duration must be zero or positive"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Parses `512MB`, `10MiB`, `64k`, `1G`, `1000` (bytes). `K/M/G` and `KB/MB/GB`
/// are powers of 1000, `KiB/MiB/GiB` powers of 1024.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (num, unit) = split_unit(s);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a size (examples: 512MB, 10MiB, 4096)"))?;
    let mult: f64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "m" | "mb" => 1e6,
        "g" | "gb" => 1e9,
        "t" | "tb" => 1e12,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        "tib" => 1024f64.powi(4),
        other => {
            return Err(format!(
                "`{s}`: unknown unit `{other}` (use KB, MB, GB, KiB, MiB, GiB)"
            ));
        }
    };
    let bytes = value * mult;
    if !(bytes.is_finite() && bytes >= 0.0) {
        return Err(format!("`{s}`: a size must be zero or positive"));
    }
    Ok(bytes.round() as u64)
}

fn split_unit(s: &str) -> (&str, &str) {
    let idx = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    (s[..idx].trim(), s[idx..].trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("5s").unwrap(), Duration::from_secs(5));
        assert_eq!(parse_duration("1.5").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert!(parse_duration("5 parsecs").is_err());
        assert!(parse_duration("").is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("512MB").unwrap(), 512_000_000);
        assert_eq!(parse_size("10MiB").unwrap(), 10 * 1024 * 1024);
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert!(parse_size("lots").is_err());
    }

    #[test]
    fn unknown_keys_are_errors() {
        let dir = std::env::temp_dir().join(format!("config-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("crawl.toml");
        std::fs::write(
            &p,
            "[agent]\nname = \"bot\"\nurl = \"https://x/\"\n[fetcher]\nthreads = 4\n",
        )
        .unwrap();
        let cfg = CrawlConfig::load(&p).unwrap();
        assert_eq!(cfg.agent.name.as_deref(), Some("bot"));
        assert_eq!(
            cfg.fetcher.get("threads").and_then(|v| v.as_integer()),
            Some(4)
        );
        std::fs::write(&p, "[agnet]\nname = \"bot\"\n").unwrap();
        let err = CrawlConfig::load(&p).unwrap_err().to_string();
        assert!(err.contains("agnet"), "{err}");
        assert!(CrawlConfig::load(&dir.join("missing.toml")).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
