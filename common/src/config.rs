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
//! [crawl]                      # read by both programs
//! round_time = "30m"           # target length of a round
//!
//! [fetcher]                    # read by the fetcher (see `fetcher --help`);
//! min_delay = "5s"             #   its politeness keys are also read by the
//!                              #   segmenter, to plan rounds
//! [segmenter]                  # read by the segmenter (see `segmenter --help`)
//! ```
//! Command-line flags override the file.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::politeness::Policy;

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
    /// Settings of the crawl as a whole.
    #[serde(default)]
    pub crawl: CrawlSection,
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

/// `[crawl]`: settings both programs read.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CrawlSection {
    /// Target length of a round ([`DEFAULT_ROUND_TIME`] if unset): the
    /// segmenter gives each host as many URLs as its delay allows in this
    /// time, and the fetcher stops a round at it.
    pub round_time: Option<DurationValue>,
}

/// The default target length of a round: the interval of a crawl run from
/// cron every half hour.
pub const DEFAULT_ROUND_TIME: Duration = Duration::from_secs(30 * 60);

/// A duration in `crawl.toml`: a number of seconds, or a string such as
/// `"250ms"`, `"5s"` or `"30m"` (see [`parse_duration`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DurationValue(pub Duration);

impl<'de> Deserialize<'de> for DurationValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<DurationValue, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Seconds(f64),
            Text(String),
        }
        let text = match Raw::deserialize(d)? {
            Raw::Seconds(n) => n.to_string(),
            Raw::Text(s) => s,
        };
        parse_duration(&text)
            .map(DurationValue)
            .map_err(serde::de::Error::custom)
    }
}

/// A size in `crawl.toml`: a number of bytes, or a string such as `"512MB"`
/// or `"10MiB"` (see [`parse_size`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizeValue(pub u64);

impl<'de> Deserialize<'de> for SizeValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<SizeValue, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Bytes(u64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Bytes(n) => Ok(SizeValue(n)),
            Raw::Text(s) => parse_size(&s)
                .map(SizeValue)
                .map_err(serde::de::Error::custom),
        }
    }
}

/// The keys of `[fetcher]` that say how polite to be; the segmenter reads
/// them too, to plan how many URLs of each host fit in a round.
pub const POLITENESS_KEYS: [&str; 3] = ["min_delay", "delay_factor", "max_crawl_delay"];

/// The [`POLITENESS_KEYS`] as set in `[fetcher]` (unset keys are `None`).
#[derive(Debug, Clone, Default, Deserialize)]
pub struct PolitenessConfig {
    /// Smallest delay between two requests to a host.
    pub min_delay: Option<DurationValue>,
    /// Factor on the mean response time.
    pub delay_factor: Option<f64>,
    /// Largest `Crawl-delay` honoured.
    pub max_crawl_delay: Option<DurationValue>,
}

impl PolitenessConfig {
    /// The politeness to use: each value from its flag if given, else from
    /// `[fetcher]`, else the default ([`Policy::default`]); a delay factor
    /// that is not a finite number of zero or more is refused.
    pub fn policy(
        &self,
        min_delay: Option<Duration>,
        delay_factor: Option<f64>,
        max_crawl_delay: Option<Duration>,
    ) -> Result<Policy, String> {
        let defaults = Policy::default();
        let policy = Policy {
            min_delay: min_delay
                .or(self.min_delay.map(|d| d.0))
                .unwrap_or(defaults.min_delay),
            delay_factor: delay_factor
                .or(self.delay_factor)
                .unwrap_or(defaults.delay_factor),
            max_crawl_delay: max_crawl_delay
                .or(self.max_crawl_delay.map(|d| d.0))
                .unwrap_or(defaults.max_crawl_delay),
            ..defaults
        };
        if !(policy.delay_factor.is_finite() && policy.delay_factor >= 0.0) {
            return Err(format!(
                "delay factor {}: must be zero or positive",
                policy.delay_factor
            ));
        }
        Ok(policy)
    }
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
    /// The politeness keys of `[fetcher]` ([`POLITENESS_KEYS`]).
    pub fn politeness(&self) -> Result<PolitenessConfig, ConfigError> {
        let mut table = toml::Table::new();
        for key in POLITENESS_KEYS {
            if let Some(v) = self.fetcher.get(key) {
                table.insert(key.to_string(), v.clone());
            }
        }
        self.section("fetcher", &table)
    }

    /// The target length of a round (`[crawl] round_time`, or the default).
    pub fn round_time(&self) -> Duration {
        self.crawl.round_time.map_or(DEFAULT_ROUND_TIME, |d| d.0)
    }
}

/// One line per long flag of a program, `--name=` when it takes a value and
/// `--name` when it does not: what a script needs to pass flags on to the
/// program they belong to (`scripts/crawl.sh` reads `fetcher flags` and
/// `segmenter flags`).
pub fn flag_list<'a>(flags: impl IntoIterator<Item = (&'a str, bool)>) -> String {
    let mut out = String::new();
    for (name, takes_value) in flags {
        out.push_str("--");
        out.push_str(name);
        if takes_value {
            out.push('=');
        }
        out.push('\n');
    }
    out
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
    Duration::try_from_secs_f64(secs).map_err(|_| format!("`{s}`: too long a duration"))
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
    let bytes = (value * mult).round();
    if !(bytes.is_finite() && bytes >= 0.0) {
        return Err(format!("`{s}`: a size must be zero or positive"));
    }
    // 2⁶⁴: an `as` cast would quietly saturate at u64::MAX instead.
    if bytes >= 18_446_744_073_709_551_616.0 {
        return Err(format!("`{s}`: too large a size"));
    }
    Ok(bytes as u64)
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
        // Too long for a Duration: an error, not a panic.
        let e = parse_duration("99999999999999999999999h").unwrap_err();
        assert!(e.contains("too long"), "{e}");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("512MB").unwrap(), 512_000_000);
        assert_eq!(parse_size("10MiB").unwrap(), 10 * 1024 * 1024);
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert!(parse_size("lots").is_err());
        // Past u64::MAX: refused rather than silently capped.
        let e = parse_size("20000000000000000000").unwrap_err();
        assert!(e.contains("too large"), "{e}");
        assert!(parse_size("99999999TiB").unwrap_err().contains("too large"));
        assert_eq!(
            parse_size("16777216TiB").unwrap_err(),
            "`16777216TiB`: too large a size"
        );
        assert_eq!(parse_size("16777215TiB").unwrap(), 16_777_215 << 40);
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

    #[test]
    fn round_time_and_politeness_are_shared() {
        let cfg: CrawlConfig = toml::from_str(
            "[crawl]\nround_time = \"2m\"\n[fetcher]\nmin_delay = 1.5\ndelay_factor = 2\nthreads = 3\n",
        )
        .unwrap();
        assert_eq!(cfg.round_time(), Duration::from_secs(120));
        let p = cfg.politeness().unwrap();
        assert_eq!(
            p.min_delay,
            Some(DurationValue(Duration::from_millis(1500)))
        );
        assert_eq!(p.delay_factor, Some(2.0));
        assert_eq!(p.max_crawl_delay, None);
        assert_eq!(CrawlConfig::default().round_time(), DEFAULT_ROUND_TIME);
        let bad: CrawlConfig = toml::from_str("[fetcher]\nmin_delay = \"soon\"\n").unwrap();
        assert!(
            bad.politeness()
                .unwrap_err()
                .to_string()
                .contains("min_delay")
        );
        assert!(toml::from_str::<CrawlConfig>("[crawl]\nround = 5\n").is_err());
    }
}
