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
//! min_free_disk = "1GB"        # or "2%": stop cleanly before the disk fills
//! max_crawl_bytes = "500GB"    # WARC bytes of the whole crawl (default: none)
//! max_host_bytes = "1GB"       # WARC bytes of one host over the crawl (default: none)
//! keep_logs = "30d"            # logs older than this are pruned (0: kept)
//! metrics_dir = "metrics"      # the metrics files (Prometheus text format)
//!
//! [fetcher]                    # read by the fetcher (see `fetcher --help`);
//! min_delay = "5s"             #   its politeness keys are also read by the
//!                              #   segmenter, to plan rounds
//! [segmenter]                  # read by the segmenter (see `segmenter --help`)
//! ```
//! Command-line flags override the file. Each program keeps one list of
//! its settings, written with [`options!`](crate::options): the flags and
//! its section of the file fill the same struct, laid one over the other,
//! and each setting's default is written there once, in the values the
//! program reads ([`fetcher::FetcherValues`], ...);
//! [`SharedOptions`] are the settings both programs take. A relative path
//! follows one rule, [`setting_path`].

mod check;
mod declare;
pub mod fetcher;
pub mod segmenter;

pub use declare::{Declared, Defaulted, Given, Layer};

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::disk::DiskFloor;
use crate::human::{parse_duration, parse_size};
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
    /// Free space to keep on the crawl directory's filesystem (bytes or a
    /// percentage; [`crate::disk::DEFAULT_FLOOR`] if unset, 0 for none).
    pub min_free_disk: Option<DiskFloor>,
    /// WARC bytes of the whole crawl at most (unset or 0: no limit).
    pub max_crawl_bytes: Option<SizeValue>,
    /// WARC bytes of one host over the whole crawl at most (unset or 0: no
    /// limit).
    pub max_host_bytes: Option<SizeValue>,
    /// How long the programs' files in `logs/` are kept
    /// ([`DEFAULT_KEEP_LOGS`] if unset; 0 keeps them all): `segmenter
    /// prune`, which `crawl.sh` runs, removes older ones.
    pub keep_logs: Option<DurationValue>,
    /// Where the metrics files go ([`crate::metrics`]; relative to the
    /// crawl directory; default `metrics`).
    pub metrics_dir: Option<PathBuf>,
    /// The crawl's name in its metrics files and their `crawl` label
    /// (default: the crawl directory's name).
    pub metrics_name: Option<String>,
}

/// How long logs are kept unless `[crawl] keep_logs` says otherwise.
pub const DEFAULT_KEEP_LOGS: Duration = Duration::from_secs(30 * 86_400);

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

impl std::str::FromStr for DurationValue {
    type Err = String;
    fn from_str(s: &str) -> Result<DurationValue, String> {
        parse_duration(s).map(DurationValue)
    }
}

impl From<DurationValue> for Duration {
    fn from(d: DurationValue) -> Duration {
        d.0
    }
}

impl std::str::FromStr for SizeValue {
    type Err = String;
    fn from_str(s: &str) -> Result<SizeValue, String> {
        parse_size(s).map(SizeValue)
    }
}

impl From<SizeValue> for u64 {
    fn from(s: SizeValue) -> u64 {
        s.0
    }
}

/// The keys of `[fetcher]` that say how polite to be; the segmenter reads
/// them too, to plan how many URLs of each host fit in a round.
pub const POLITENESS_KEYS: [&str; 5] = [
    "min_delay",
    "delay_factor",
    "max_crawl_delay",
    "backoff_max",
    "park_after",
];

crate::options! {
    /// The settings both programs take, with the same flags: the keys of
    /// `[crawl]` (round time, free-disk floor, crawl and host byte budgets)
    /// and the fetcher's politeness (the [`POLITENESS_KEYS`] of
    /// `[fetcher]`), with which the segmenter plans how many URLs of each
    /// host fit in a round.
    pub struct SharedOptions => SharedValues {
        /// Target length of a round (`[crawl] round_time`, read by both
        /// programs): the segmenter gives each host as many URLs as its delay
        /// allows in this time, so that hosts finish together, and the fetch
        /// stops at it unless --time-limit says otherwise [default: 30m]
        #[arg(long, value_name = "DURATION")]
        pub round_time: Option<DurationValue> = DEFAULT_ROUND_TIME,
        /// Smallest delay between two requests to one queue (`[fetcher]
        /// min_delay`; the segmenter plans rounds with it) [default: 5s]
        #[arg(long, value_name = "DURATION")]
        pub min_delay: Option<DurationValue> = Policy::DEFAULT.min_delay,
        /// The delay is at least this factor times the mean of the last five
        /// response times of the queue (`[fetcher] delay_factor`; the
        /// segmenter plans rounds with it) [default: 5]
        #[arg(long, value_name = "FACTOR")]
        pub delay_factor: Option<f64> = Policy::DEFAULT.delay_factor,
        /// Largest robots.txt Crawl-delay honoured; a host asking for more is
        /// skipped and its URLs go to leftover (`[fetcher] max_crawl_delay`;
        /// the segmenter plans rounds with it) [default: 60s]
        #[arg(long, value_name = "DURATION")]
        pub max_crawl_delay: Option<DurationValue> = Policy::DEFAULT.max_crawl_delay,
        /// Longest delay of a failing host: each failure in a row (timeout,
        /// refused, 5xx, 429, robots.txt unavailable) doubles its delay up to
        /// this; a success ends it. Kept in hosts.db across runs (`[fetcher]
        /// backoff_max`; the segmenter plans rounds with it) [default: 1h]
        #[arg(long, value_name = "DURATION")]
        pub backoff_max: Option<DurationValue> = Policy::DEFAULT.backoff_max,
        /// A host failing without a success for this long is parked: asked
        /// once a day until it answers, its URLs waiting in the backlog
        /// (`[fetcher] park_after`; the segmenter plans rounds with it)
        /// [default: 3d]
        #[arg(long, value_name = "DURATION")]
        pub park_after: Option<DurationValue> = Policy::DEFAULT.park_after,
        /// Free space to keep on the crawl directory's filesystem, a size or
        /// a percentage (`5GB`, `2%`; 0 for none): the fetcher ends a round
        /// cleanly before crossing it (stop reason `disk`), the segmenter
        /// refuses a round that would not fit (exit 3) (`[crawl]
        /// min_free_disk`) [default: 1GB]
        #[arg(long, value_name = "SIZE|PERCENT")]
        pub min_free_disk: Option<DiskFloor> = crate::disk::DEFAULT_FLOOR,
        /// WARC bytes the whole crawl stores at most (the sizes of its WARC
        /// files): the fetch that reaches it ends (stop reason
        /// `crawl-bytes`), and no segment is made after (`[crawl]
        /// max_crawl_bytes`; 0 for no limit) [default: no limit]
        #[arg(long, value_name = "SIZE")]
        pub max_crawl_bytes: Option<SizeValue>,
        /// WARC bytes one host stores at most over the whole crawl (kept in
        /// hosts.db): its URLs then wait in the backlog (`[crawl]
        /// max_host_bytes`; 0 for no limit) [default: no limit]
        #[arg(long, value_name = "SIZE")]
        pub max_host_bytes: Option<SizeValue>,
    }
}

impl SharedOptions {
    /// The long flags of these settings (`round-time`, ...): a script passes
    /// them to both programs.
    pub fn flags() -> Vec<String> {
        use clap::Args as _;
        SharedOptions::augment_args(clap::Command::new("shared"))
            .get_arguments()
            .filter_map(|a| a.get_long().map(str::to_string))
            .collect()
    }

    /// The target length of a round ([`DEFAULT_ROUND_TIME`] if unset); zero
    /// is refused.
    pub fn round_time(&self) -> Result<Duration, String> {
        let round_time = self.clone().values().round_time;
        if round_time.is_zero() {
            return Err("round time 0: a round needs some time (e.g. 30m)".into());
        }
        Ok(round_time)
    }

    /// The politeness to use: each value as set, else its declared default
    /// (those of [`Policy::DEFAULT`]); a delay factor that is not a finite
    /// number of zero or more is refused.
    pub fn policy(&self) -> Result<Policy, String> {
        let v = self.clone().values();
        let policy = Policy {
            min_delay: v.min_delay,
            delay_factor: v.delay_factor,
            max_crawl_delay: v.max_crawl_delay,
            backoff_max: v.backoff_max,
            park_after: v.park_after,
            ..Policy::DEFAULT
        };
        if policy.park_after.is_zero() {
            return Err(
                "park after 0: a host needs some time to fail before it is parked (3d \
                        by default)"
                    .into(),
            );
        }
        if !(policy.delay_factor.is_finite() && policy.delay_factor >= 0.0) {
            return Err(format!(
                "delay factor {}: must be zero or positive",
                policy.delay_factor
            ));
        }
        Ok(policy)
    }

    /// The free space to keep ([`crate::disk::DEFAULT_FLOOR`] if unset).
    pub fn disk_floor(&self) -> DiskFloor {
        self.clone().values().min_free_disk
    }

    /// The crawl's byte budget, if any (0 is none).
    pub fn max_crawl_bytes(&self) -> Option<u64> {
        self.max_crawl_bytes.map(u64::from).filter(|&b| b > 0)
    }

    /// A host's byte budget over the crawl, if any (0 is none).
    pub fn max_host_bytes(&self) -> Option<u64> {
        self.max_host_bytes.map(u64::from).filter(|&b| b > 0)
    }
}

/// The one rule for a path setting given both ways: a path given as a flag
/// is relative to the current directory, a path in `crawl.toml` to the
/// crawl directory `crawl`; the flag wins. The result is absolute when
/// `crawl` is.
pub fn setting_path(flag: Option<&Path>, file: Option<&Path>, crawl: &Path) -> Option<PathBuf> {
    match (flag, file) {
        (Some(p), _) => Some(std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())),
        (None, Some(p)) => Some(crawl.join(p)),
        (None, None) => None,
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
    /// E-mail address sent in the `From` header (none by default).
    pub from: Option<String>,
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
    /// URLs whose path ends in one of these extensions are not fetched
    /// (default [`DEFAULT_SKIP_EXTENSIONS`]: archives, disk images,
    /// installers, video); empty for none.
    pub skip_extensions: Vec<String>,
}

/// File extensions not worth fetching by default: archives, disk images,
/// installers and video, large files with no links and little use in a
/// web archive of pages. (`gz` alone is not among them: `sitemap.xml.gz`.)
pub const DEFAULT_SKIP_EXTENSIONS: [&str; 32] = [
    "zip", "tar", "tar.gz", "tgz", "tar.bz2", "tbz2", "tar.xz", "txz", "7z", "rar", "bz2", "xz",
    "iso", "img", "dmg", "vmdk", "qcow2", "exe", "msi", "deb", "rpm", "apk", "mp4", "m4v", "avi",
    "mkv", "mov", "wmv", "flv", "webm", "mpg", "mpeg",
];

impl Default for FilterConfig {
    fn default() -> Self {
        FilterConfig {
            max_url_length: 2048,
            max_path_segments: 20,
            max_repeated_segment: 3,
            max_hops: 10,
            max_query_params: 10,
            max_years_ahead: 1,
            skip_extensions: DEFAULT_SKIP_EXTENSIONS.map(String::from).to_vec(),
        }
    }
}

impl CrawlConfig {
    /// Reads `path`; a missing file gives the defaults. The whole file is
    /// checked, both programs' sections included, so that either program
    /// refuses a mistake anywhere in it with the same message.
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
        let invalid = |message: String| ConfigError::Invalid {
            path: path.to_path_buf(),
            message,
        };
        let table: toml::Table = toml::from_str(&text).map_err(|e| invalid(e.to_string()))?;
        check::keys(&table).map_err(invalid)?;
        let mut cfg: CrawlConfig = toml::from_str(&text).map_err(|e| invalid(e.to_string()))?;
        check::values(&cfg).map_err(invalid)?;
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
    /// The settings both programs read ([`SharedOptions`]): `[crawl]
    /// round_time` and the [`POLITENESS_KEYS`] of `[fetcher]`.
    pub fn shared(&self) -> Result<SharedOptions, ConfigError> {
        let mut table = toml::Table::new();
        for key in POLITENESS_KEYS {
            if let Some(v) = self.fetcher.get(key) {
                table.insert(key.to_string(), v.clone());
            }
        }
        let politeness: SharedOptions = self.section("fetcher", &table)?;
        Ok(SharedOptions {
            round_time: self.crawl.round_time,
            min_free_disk: self.crawl.min_free_disk,
            max_crawl_bytes: self.crawl.max_crawl_bytes,
            max_host_bytes: self.crawl.max_host_bytes,
            ..politeness
        })
    }

    /// `[fetcher]` without its [`POLITENESS_KEYS`] (read by [`CrawlConfig::shared`]).
    pub fn fetcher_own(&self) -> toml::Table {
        let mut own = self.fetcher.clone();
        for key in POLITENESS_KEYS {
            own.remove(key);
        }
        own
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_are_errors() {
        let dir = crate::testutil::TempDir::new("config-unknown-keys");
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
    }

    #[test]
    fn round_time_and_politeness_are_shared() {
        let cfg: CrawlConfig = toml::from_str(
            "[crawl]\nround_time = \"2m\"\n[fetcher]\nmin_delay = 1.5\ndelay_factor = 2\nthreads = 3\n",
        )
        .unwrap();
        let shared = cfg.shared().unwrap();
        assert_eq!(shared.round_time(), Ok(Duration::from_secs(120)));
        assert_eq!(
            shared.min_delay,
            Some(DurationValue(Duration::from_millis(1500)))
        );
        assert_eq!(shared.delay_factor, Some(2.0));
        assert_eq!(shared.max_crawl_delay, None);
        assert!(cfg.fetcher_own().contains_key("threads"));
        assert!(!cfg.fetcher_own().contains_key("min_delay"));
        let none = CrawlConfig::default().shared().unwrap();
        assert_eq!(none.round_time(), Ok(DEFAULT_ROUND_TIME));
        assert_eq!(
            none.policy().unwrap().min_delay,
            Policy::default().min_delay
        );
        let bad: CrawlConfig = toml::from_str("[fetcher]\nmin_delay = \"soon\"\n").unwrap();
        assert!(bad.shared().unwrap_err().to_string().contains("min_delay"));
        assert!(toml::from_str::<CrawlConfig>("[crawl]\nround = 5\n").is_err());
    }

    #[test]
    fn flags_are_laid_over_the_file() {
        let flags = SharedOptions {
            min_delay: Some(DurationValue(Duration::from_secs(1))),
            delay_factor: Some(-1.0),
            ..SharedOptions::default()
        };
        let file: SharedOptions =
            toml::from_str("min_delay = 3\nmax_crawl_delay = \"9s\"").unwrap();
        let both = flags.or(file);
        assert_eq!(both.min_delay, Some(DurationValue(Duration::from_secs(1))));
        assert_eq!(
            both.max_crawl_delay,
            Some(DurationValue(Duration::from_secs(9)))
        );
        assert!(both.policy().unwrap_err().contains("delay factor -1"));
        assert!(Layer::or(false, true));
        assert_eq!(Layer::or(vec![2], vec![1]), [1, 2]);
        assert_eq!(
            SharedOptions::flags(),
            [
                "round-time",
                "min-delay",
                "delay-factor",
                "max-crawl-delay",
                "backoff-max",
                "park-after",
                "min-free-disk",
                "max-crawl-bytes",
                "max-host-bytes"
            ]
        );
    }

    #[test]
    fn an_unset_setting_reads_its_declared_default() {
        let unset = SharedOptions::default().values();
        assert_eq!(unset.round_time, DEFAULT_ROUND_TIME);
        assert_eq!(unset.park_after, Policy::DEFAULT.park_after);
        assert_eq!(unset.min_free_disk, crate::disk::DEFAULT_FLOOR);
        assert_eq!(unset.max_host_bytes, None, "no default: no limit");
        let keys = SharedOptions::keys();
        assert!(keys.contains(&("park_after", true)), "{keys:?}");
        assert!(keys.contains(&("max_host_bytes", false)), "{keys:?}");
        let given: SharedOptions = toml::from_str("round_time = \"2m\"").unwrap();
        assert_eq!(given.clone().values().round_time, Duration::from_secs(120));
        assert_eq!(given.value_of("round_time").as_deref(), Some("120s"));
        assert_eq!(SharedOptions::default().value_of("round"), None);
    }

    #[test]
    fn relative_paths_follow_one_rule() {
        let crawl = Path::new("/crawl");
        let cwd = std::env::current_dir().unwrap();
        let (flag, file) = (Path::new("a/flag"), Path::new("b/file"));
        assert_eq!(
            setting_path(Some(flag), Some(file), crawl),
            Some(cwd.join(flag))
        );
        assert_eq!(
            setting_path(None, Some(file), crawl),
            Some(crawl.join(file))
        );
        let abs = Path::new("/etc/hosts");
        assert_eq!(
            setting_path(None, Some(abs), crawl),
            Some(abs.to_path_buf())
        );
        assert_eq!(
            setting_path(Some(abs), None, crawl),
            Some(abs.to_path_buf())
        );
        assert_eq!(setting_path(None, None, crawl), None);
    }

    #[test]
    fn durations_and_sizes_parse_the_same_as_flags_and_in_the_file() {
        let flag: DurationValue = "250ms".parse().unwrap();
        let file: DurationValue = toml::from_str::<toml::Table>("d = \"250ms\"").unwrap()["d"]
            .clone()
            .try_into()
            .unwrap();
        assert_eq!(flag, file);
        assert_eq!("10MiB".parse::<SizeValue>(), Ok(SizeValue(10 << 20)));
        assert!(
            "soon"
                .parse::<DurationValue>()
                .unwrap_err()
                .contains("not a duration")
        );
    }
}
