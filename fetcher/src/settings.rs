//! Flags and the `[fetcher]`/`[agent]` sections of `crawl.toml` turned, in
//! one place, into validated settings with their defaults. Nothing else in
//! the program looks at command-line types.

use std::path::PathBuf;
use std::time::Duration;

use common::config::{CrawlConfig, FilterConfig, ScopeConfig, parse_duration, parse_size};
use common::crawldir::CrawlDir;

use crate::cli::{FetchArgs, KeyArg, ProgressArg};

/// A configuration problem: exit code 2.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// `crawl.toml` could not be read or parsed.
    #[error(transparent)]
    Config(#[from] common::config::ConfigError),
    /// A value is missing or out of range.
    #[error("{0}")]
    Invalid(String),
}

/// How URLs are grouped into politeness queues.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyMode {
    /// Host name.
    Host,
    /// Registrable domain.
    Domain,
    /// Resolved IP address.
    Ip,
}

/// Validated settings of one `fetch` run.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The crawl directory.
    pub crawl: CrawlDir,
    /// The segment to fetch, if named.
    pub segment: Option<String>,
    /// Product token.
    pub agent_name: String,
    /// Contact URL.
    pub agent_url: String,
    /// Smallest delay between requests to one queue.
    pub min_delay: Duration,
    /// Factor on the mean response time.
    pub delay_factor: f64,
    /// Crawl-delay cap.
    pub max_crawl_delay: Duration,
    /// Retry-After cap.
    pub max_retry_after: Duration,
    /// Wait before retrying an unavailable robots.txt.
    pub robots_retry_delay: Duration,
    /// Worker threads.
    pub threads: usize,
    /// Stop after this long.
    pub time_limit: Option<Duration>,
    /// Stop when fewer queues than this have work.
    pub min_hosts: usize,
    /// Largest decoded body stored.
    pub max_body: u64,
    /// Connect timeout.
    pub connect_timeout: Duration,
    /// Response head timeout.
    pub first_byte_timeout: Duration,
    /// Whole request timeout.
    pub download_timeout: Duration,
    /// Redirect hops followed in this run.
    pub follow_redirects: u32,
    /// Queue key.
    pub key: KeyMode,
    /// Permit private addresses.
    pub allow_private: bool,
    /// Static name map.
    pub hosts_file: Option<PathBuf>,
    /// Consecutive failures before a host is dropped.
    pub max_failures: u32,
    /// WARC file roll-over size.
    pub warc_max_size: u64,
    /// URLs per queue held in memory.
    pub queue_batch: usize,
    /// Grace period after a stop signal.
    pub stop_grace: Duration,
    /// Progress display.
    pub progress: ProgressArg,
    /// `[scope]`, for redirect targets followed in the run.
    pub scope: ScopeConfig,
    /// `[filter]`, for redirect targets followed in the run.
    pub filter: FilterConfig,
}

/// A duration in `crawl.toml`: `"250ms"`, `"5s"` or a number of seconds.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(untagged)]
enum DurationValue {
    Text(String),
    Seconds(f64),
}

/// A size in `crawl.toml`: `"10MiB"` or a number of bytes.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(untagged)]
enum SizeValue {
    Text(String),
    Bytes(u64),
}

/// The `[fetcher]` section: the same names as the long flags, with `_`.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FetcherSection {
    agent_name: Option<String>,
    agent_url: Option<String>,
    min_delay: Option<DurationValue>,
    delay_factor: Option<f64>,
    max_crawl_delay: Option<DurationValue>,
    max_retry_after: Option<DurationValue>,
    robots_retry_delay: Option<DurationValue>,
    threads: Option<usize>,
    time_limit: Option<DurationValue>,
    min_hosts: Option<usize>,
    max_body: Option<SizeValue>,
    connect_timeout: Option<DurationValue>,
    first_byte_timeout: Option<DurationValue>,
    download_timeout: Option<DurationValue>,
    follow_redirects: Option<u32>,
    key: Option<KeyArg>,
    allow_private: Option<bool>,
    hosts_file: Option<PathBuf>,
    max_failures: Option<u32>,
    warc_max_size: Option<SizeValue>,
    queue_batch: Option<usize>,
    stop_grace: Option<DurationValue>,
}

impl Settings {
    /// Merges flags over `crawl.toml` over the defaults and checks the result.
    pub fn from_args(args: FetchArgs) -> Result<Settings, SettingsError> {
        let crawl = CrawlDir::new(&args.crawl);
        let cfg = CrawlConfig::load(&crawl.config_path())?;
        let file: FetcherSection = cfg.section("fetcher", &cfg.fetcher)?;
        let path = cfg.path.display().to_string();
        let dur = |flag: Option<Duration>,
                   key: &str,
                   value: &Option<DurationValue>,
                   default: Duration|
         -> Result<Duration, SettingsError> {
            if let Some(d) = flag {
                return Ok(d);
            }
            match value {
                None => Ok(default),
                Some(DurationValue::Seconds(s)) if s.is_finite() && *s >= 0.0 => {
                    Ok(Duration::from_secs_f64(*s))
                }
                Some(DurationValue::Seconds(s)) => Err(SettingsError::Invalid(format!(
                    "{path}: [fetcher] {key} = {s}: a duration must be zero or positive"
                ))),
                Some(DurationValue::Text(t)) => parse_duration(t)
                    .map_err(|e| SettingsError::Invalid(format!("{path}: [fetcher] {key}: {e}"))),
            }
        };
        let size = |flag: Option<u64>,
                    key: &str,
                    value: &Option<SizeValue>,
                    default: u64|
         -> Result<u64, SettingsError> {
            if let Some(s) = flag {
                return Ok(s);
            }
            match value {
                None => Ok(default),
                Some(SizeValue::Bytes(b)) => Ok(*b),
                Some(SizeValue::Text(t)) => parse_size(t)
                    .map_err(|e| SettingsError::Invalid(format!("{path}: [fetcher] {key}: {e}"))),
            }
        };

        let agent_name = args
            .agent_name
            .or(file.agent_name.clone())
            .or(cfg.agent.name.clone())
            .unwrap_or_default();
        let agent_url = args
            .agent_url
            .or(file.agent_url.clone())
            .or(cfg.agent.url.clone())
            .unwrap_or_default();
        if agent_name.trim().is_empty() || agent_url.trim().is_empty() {
            return Err(SettingsError::Invalid(format!(
                "no user agent: a product token and a contact URL are required, so that site \
                 owners can see who crawls them and how to reach you; pass --agent-name TOKEN \
                 --agent-url URL, or put them in {path}:\n  [agent]\n  name = \"examplebot\"\n  \
                 url = \"https://example.org/bot.html\""
            )));
        }
        if !agent_name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(SettingsError::Invalid(format!(
                "agent name `{agent_name}`: a product token has only letters, digits, `-` and `_` \
                 (RFC 9309)"
            )));
        }
        if url::Url::parse(&agent_url).is_err() || agent_url.contains(char::is_whitespace) {
            return Err(SettingsError::Invalid(format!(
                "agent URL `{agent_url}` is not an absolute URL (e.g. https://example.org/bot.html)"
            )));
        }

        let threads = args.threads.or(file.threads).unwrap_or(64);
        if threads == 0 || threads > 4096 {
            return Err(SettingsError::Invalid(format!(
                "threads = {threads}: use 1 to 4096"
            )));
        }
        let delay_factor = args.delay_factor.or(file.delay_factor).unwrap_or(5.0);
        if !(delay_factor.is_finite() && delay_factor >= 0.0) {
            return Err(SettingsError::Invalid(format!(
                "delay factor {delay_factor}: must be zero or positive"
            )));
        }
        let follow_redirects = args.follow_redirects.or(file.follow_redirects).unwrap_or(0);
        if follow_redirects > 5 {
            return Err(SettingsError::Invalid(format!(
                "follow redirects {follow_redirects}: at most 5 hops"
            )));
        }
        let queue_batch = args.queue_batch.or(file.queue_batch).unwrap_or(16);
        if queue_batch == 0 {
            return Err(SettingsError::Invalid(
                "queue batch must be at least 1".into(),
            ));
        }
        let max_failures = args.max_failures.or(file.max_failures).unwrap_or(5);
        if max_failures == 0 {
            return Err(SettingsError::Invalid(
                "max failures must be at least 1".into(),
            ));
        }
        let key = match args.key.or(file.key).unwrap_or(KeyArg::Host) {
            KeyArg::Host => KeyMode::Host,
            KeyArg::Domain => KeyMode::Domain,
            KeyArg::Ip => KeyMode::Ip,
        };
        let hosts_file = args.hosts_file.or(file.hosts_file.clone());
        let download_timeout = dur(
            args.download_timeout,
            "download_timeout",
            &file.download_timeout,
            Duration::from_secs(120),
        )?;
        let time_limit = match (args.time_limit, &file.time_limit) {
            (None, None) => None,
            (flag, value) => Some(dur(flag, "time_limit", value, Duration::ZERO)?),
        };
        Ok(Settings {
            segment: args.segment,
            agent_name,
            agent_url,
            min_delay: dur(
                args.min_delay,
                "min_delay",
                &file.min_delay,
                Duration::from_secs(5),
            )?,
            delay_factor,
            max_crawl_delay: dur(
                args.max_crawl_delay,
                "max_crawl_delay",
                &file.max_crawl_delay,
                Duration::from_secs(60),
            )?,
            max_retry_after: dur(
                args.max_retry_after,
                "max_retry_after",
                &file.max_retry_after,
                Duration::from_secs(600),
            )?,
            robots_retry_delay: dur(
                args.robots_retry_delay,
                "robots_retry_delay",
                &file.robots_retry_delay,
                Duration::from_secs(60),
            )?,
            threads,
            time_limit,
            min_hosts: args.min_hosts.or(file.min_hosts).unwrap_or(0),
            max_body: size(args.max_body, "max_body", &file.max_body, 10 * 1024 * 1024)?,
            connect_timeout: dur(
                args.connect_timeout,
                "connect_timeout",
                &file.connect_timeout,
                Duration::from_secs(10),
            )?,
            first_byte_timeout: dur(
                args.first_byte_timeout,
                "first_byte_timeout",
                &file.first_byte_timeout,
                Duration::from_secs(30),
            )?,
            download_timeout,
            follow_redirects,
            key,
            allow_private: args.allow_private || file.allow_private.unwrap_or(false),
            hosts_file: hosts_file.map(|p| {
                if p.is_relative() && args.crawl.join(&p).exists() && !p.exists() {
                    args.crawl.join(p)
                } else {
                    p
                }
            }),
            max_failures,
            warc_max_size: size(
                args.warc_max_size,
                "warc_max_size",
                &file.warc_max_size,
                common::warc::DEFAULT_MAX_FILE_SIZE,
            )?,
            queue_batch,
            stop_grace: dur(
                args.stop_grace,
                "stop_grace",
                &file.stop_grace,
                Duration::from_secs(10),
            )?,
            progress: args.progress,
            scope: cfg.scope.clone(),
            filter: cfg.filter.clone(),
            crawl,
        })
    }

    /// The `User-Agent` header: `TOKEN/VERSION (+URL)`.
    pub fn user_agent(&self) -> String {
        format!(
            "{}/{} (+{})",
            self.agent_name,
            env!("CARGO_PKG_VERSION"),
            self.agent_url
        )
    }
}
