//! Flags and the `[fetcher]`/`[agent]` sections of `crawl.toml` turned, in
//! one place, into validated settings with their defaults. Nothing else in
//! the program looks at command-line types.

use std::path::PathBuf;
use std::time::Duration;

use common::config::{
    CrawlConfig, DurationValue, FilterConfig, ScopeConfig, SharedOptions, setting_path,
};
use common::crawldir::CrawlDir;
use common::politeness::Policy;

use crate::cli::{FetchArgs, FetcherOptions};
use crate::proxy::ProxyChoice;
use crate::queue_key::KeyMode;
use crate::round_end::TailRule;
use common::progress::ProgressMode;

/// Most requests in flight `--threads` accepts.
pub const MAX_THREADS: usize = 16384;
/// Fewest requests in flight chosen when `threads` is not set.
pub const AUTO_THREADS_MIN: usize = 16;
/// Most requests in flight when `threads` is not set: at a typical 200 ms
/// per response, about 20,000 requests per second.
pub const AUTO_THREADS_MAX: usize = 4096;

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

/// Validated settings of one `fetch` run.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The crawl directory.
    pub crawl: CrawlDir,
    /// The segment to fetch, if named.
    pub segment: Option<String>,
    /// The shards of a sharded crawl and the one this run fetches.
    pub shard: Option<(common::shards::Shards, u32)>,
    /// Product token.
    pub agent_name: String,
    /// Contact URL.
    pub agent_url: String,
    /// The `From` header's address (`None`: no header).
    pub from: Option<String>,
    /// Delays, caps and failure limits.
    pub policy: Policy,
    /// The crawl's rules per host (`host-rules.toml`): the delays of the
    /// hosts they name.
    pub host_rules: common::rules::HostRules,
    /// Wait before retrying an unavailable robots.txt.
    pub robots_retry_delay: Duration,
    /// Requests in flight at most (`None`: as many as the run needs, see [`Settings::workers`]).
    pub threads: Option<usize>,
    /// Stop after this long (by default the round time, `[crawl] round_time`).
    pub time_limit: Option<Duration>,
    /// When the round's tail ends it (see [`crate::round_end`]).
    pub tail: TailRule,
    /// Stop when fewer queues than this have work.
    pub min_hosts: usize,
    /// Largest decoded body stored.
    pub max_body: u64,
    /// Byte budgets of the run, the crawl and a host.
    pub budgets: crate::budget::Budgets,
    /// Free space kept on the crawl directory's filesystem.
    pub disk_floor: common::disk::DiskFloor,
    /// Connect timeout.
    pub connect_timeout: Duration,
    /// Response head timeout.
    pub first_byte_timeout: Duration,
    /// Whole request timeout.
    pub download_timeout: Duration,
    /// Redirect hops followed in this run.
    pub follow_redirects: u32,
    /// A refetched page with the payload of its last fetch is stored as a
    /// `revisit` record (identical-payload-digest).
    pub revisit_identical: bool,
    /// Send a refetch's validators (conditional requests).
    pub conditional_requests: bool,
    /// Write a `metadata` record per response.
    pub metadata_records: bool,
    /// List a page's links in its `metadata` record.
    pub metadata_outlinks: bool,
    /// Queue key.
    pub key: KeyMode,
    /// Permit private addresses.
    pub allow_private: bool,
    /// Static name map.
    pub hosts_file: Option<PathBuf>,
    /// Extra trusted CA certificates (PEM).
    pub ca_file: Option<PathBuf>,
    /// Accept any TLS certificate (archival crawls).
    pub accept_invalid_certs: bool,
    /// DNS server asked instead of the system's.
    pub dns_server: Option<std::net::SocketAddr>,
    /// Longest wait for a name.
    pub dns_timeout: Duration,
    /// Longest a DNS answer is kept.
    pub dns_cache_ttl: Duration,
    /// DNS lookups in flight at most.
    pub dns_concurrency: usize,
    /// The proxy requests go through.
    pub proxy: Option<ProxyChoice>,
    /// WARC file roll-over size.
    pub warc_max_size: u64,
    /// The WARC store (`warc_store`), checked, if any.
    pub warc_store: Option<String>,
    /// Keep local copies of uploaded files.
    pub warc_store_keep_local: bool,
    /// How long a failed upload is retried.
    pub warc_store_retry: Duration,
    /// Gzip level of WARC records.
    pub warc_level: u32,
    /// URLs per queue held in memory.
    pub queue_batch: usize,
    /// Grace period after a stop signal.
    pub stop_grace: Duration,
    /// Progress display (`--progress`).
    pub progress: ProgressMode,
    /// Time between plain progress lines (zero: none).
    pub progress_interval: Duration,
    /// Where the metrics file goes (`[crawl] metrics_dir`, `metrics_name`).
    pub metrics: common::metrics::Place,
    /// `--log FILE`: the file the run's log is appended to.
    pub log: Option<PathBuf>,
    /// `[scope]`, for redirect targets followed in the run.
    pub scope: ScopeConfig,
    /// `[filter]`, for redirect targets followed in the run.
    pub filter: FilterConfig,
}

impl Settings {
    /// Lays the flags over `crawl.toml` ([`common::options!`]), fills in
    /// the defaults and checks the result; a crawl directory that does not
    /// exist is refused first, with the command that starts a crawl.
    pub fn from_args(args: FetchArgs) -> Result<Settings, SettingsError> {
        // The directory first: nothing else matters where there is no crawl.
        if !args.crawl.is_dir() {
            return Err(SettingsError::Invalid(format!(
                "{}: {}",
                args.crawl.display(),
                common::crawldir::no_such_crawl(&args.crawl)
            )));
        }
        Settings::from_args_and_env(args, |name| std::env::var(name).ok())
    }

    /// [`Settings::from_args`] with the environment variables (the proxy's)
    /// read by `env`: the flags over `crawl.toml` over the defaults, each
    /// group of settings checked in turn.
    pub fn from_args_and_env(
        args: FetchArgs,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Settings, SettingsError> {
        let crawl = common::shards::select(&args.crawl, args.shard)
            .map_err(|e| SettingsError::Invalid(e.to_string()))?;
        let shard = crawl
            .is_shard()
            .then(|| common::shards::Shards::load(crawl.top()))
            .transpose()
            .map_err(|e| SettingsError::Invalid(e.to_string()))?
            .zip(args.shard);
        let cfg = CrawlConfig::load(&crawl.config_path())?;
        let file: FetcherOptions = cfg.section("fetcher", &cfg.fetcher_own())?;
        let hosts_file = setting_path(
            args.options.hosts_file.as_deref(),
            file.hosts_file.as_deref(),
            crawl.top(),
        );
        let ca_file = setting_path(
            args.options.ca_file.as_deref(),
            file.ca_file.as_deref(),
            crawl.top(),
        );
        let o = args.options.or(file);
        let shared = args.shared.or(cfg.shared()?);

        let (agent_name, agent_url) = checked_agent(&o, &cfg)?;
        let from = checked_from(o.from.clone().or(cfg.agent.from.clone()))?;
        let threads = checked_threads(o.threads)?;
        let policy = checked_policy(&o, &shared)?;
        let host_rules = common::rules::HostRules::load(crawl.top())
            .map_err(|e| SettingsError::Invalid(e.to_string()))?;
        let limits = TransferLimits::checked(&o)?;
        let round_time = shared.round_time().map_err(SettingsError::Invalid)?;
        let time_limit = o.time_limit.map_or(round_time, Duration::from);
        let key = o.key.unwrap_or(KeyMode::Host);
        check_key_against_shards(key, shard.as_ref(), &crawl)?;
        let dns_server = o.dns_server.as_deref().map(parse_dns_server).transpose()?;
        let dns_concurrency = checked_dns_concurrency(o.dns_concurrency)?;
        let proxy = crate::proxy::choose(o.proxy.as_deref(), o.no_proxy.as_deref(), env)
            .map_err(SettingsError::Invalid)?;
        let dur =
            |v: Option<DurationValue>, secs| v.map_or(Duration::from_secs(secs), Duration::from);
        Ok(Settings {
            segment: args.segment,
            shard,
            agent_name,
            agent_url,
            from,
            policy,
            host_rules,
            robots_retry_delay: dur(o.robots_retry_delay, 60),
            threads,
            time_limit: (!time_limit.is_zero()).then_some(time_limit),
            tail: limits.tail,
            min_hosts: o.min_hosts.unwrap_or(0),
            max_body: o.max_body.map_or(10 * 1024 * 1024, u64::from),
            budgets: budgets(&o, &shared),
            disk_floor: shared.disk_floor(),
            connect_timeout: dur(o.connect_timeout, 10),
            first_byte_timeout: dur(o.first_byte_timeout, 30),
            download_timeout: dur(o.download_timeout, 120),
            follow_redirects: limits.follow_redirects,
            revisit_identical: o.revisit_identical.unwrap_or(true),
            conditional_requests: o.conditional_requests.unwrap_or(true),
            metadata_records: o.metadata_records.unwrap_or(true),
            metadata_outlinks: o.metadata_outlinks.unwrap_or(true),
            key,
            allow_private: o.allow_private,
            hosts_file,
            ca_file,
            accept_invalid_certs: o.accept_invalid_certs,
            dns_server,
            dns_timeout: dur(o.dns_timeout, 5).max(Duration::from_millis(1)),
            dns_cache_ttl: dur(o.dns_cache_ttl, 30 * 60),
            dns_concurrency,
            proxy,
            warc_max_size: o
                .warc_max_size
                .map_or(common::warc::DEFAULT_MAX_FILE_SIZE, u64::from),
            warc_store: checked_store(o.warc_store.as_deref())?,
            warc_store_keep_local: o.warc_store_keep_local.unwrap_or(false),
            warc_store_retry: dur(o.warc_store_retry, 300),
            warc_level: limits.warc_level,
            queue_batch: limits.queue_batch,
            stop_grace: dur(o.stop_grace, 10),
            progress: args.progress.progress,
            progress_interval: o
                .progress_interval
                .map_or(common::progress::DEFAULT_INTERVAL, |d| d.0),
            metrics: common::metrics::Place::of(&cfg, crawl.top()).map_err(|message| {
                common::config::ConfigError::Invalid {
                    path: crawl.config_path(),
                    message,
                }
            })?,
            log: args.log.clone(),
            scope: cfg.scope.clone(),
            filter: cfg.filter.clone(),
            crawl,
        })
    }

    /// The most requests in flight for a segment of `queues` queues: `threads`
    /// if set, else one per queue (a queue has at most one request in
    /// flight, so more would wait), from [`AUTO_THREADS_MIN`] to
    /// [`AUTO_THREADS_MAX`]; see [`crate::crew`] for how many start.
    pub fn workers(&self, queues: usize) -> usize {
        self.threads
            .unwrap_or_else(|| queues.clamp(AUTO_THREADS_MIN, AUTO_THREADS_MAX))
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

/// The WARC store URL, checked (no connection yet); an empty one is none.
fn checked_store(url: Option<&str>) -> Result<Option<String>, SettingsError> {
    let Some(url) = url.filter(|u| !u.is_empty()) else {
        return Ok(None);
    };
    common::store::check_url(url).map_err(|e| SettingsError::Invalid(e.to_string()))?;
    Ok(Some(url.to_string()))
}

/// Queueing by domain needs a crawl sharded by domain: with shards by host,
/// the hosts of one domain are fetched by different tasks.
fn check_key_against_shards(
    key: KeyMode,
    shard: Option<&(common::shards::Shards, u32)>,
    crawl: &CrawlDir,
) -> Result<(), SettingsError> {
    if let Some((shards, _)) = shard
        && key == KeyMode::Domain
        && shards.key == common::shards::ShardKey::Host
    {
        return Err(SettingsError::Invalid(format!(
            "key = domain, but this crawl's shards are by host ({}): the hosts of one \
             domain are in different shards, and two machines would ask one domain at \
             once; queue by host, or create the crawl with `segmenter inject --shards {} \
             --key domain`",
            crawl.shards_path().display(),
            shards.shards
        )));
    }
    Ok(())
}

/// `threads`, when set: 1 to [`MAX_THREADS`].
fn checked_threads(threads: Option<usize>) -> Result<Option<usize>, SettingsError> {
    if let Some(n) = threads
        && (n == 0 || n > MAX_THREADS)
    {
        return Err(SettingsError::Invalid(format!(
            "threads = {n}: use 1 to {MAX_THREADS}, or leave it unset for one per queue \
             (at most {AUTO_THREADS_MAX})"
        )));
    }
    Ok(threads)
}

/// The politeness policy: the shared settings, with the fetcher's own
/// `max_retry_after` and `max_failures` (at least 1).
fn checked_policy(o: &FetcherOptions, shared: &SharedOptions) -> Result<Policy, SettingsError> {
    let defaults = Policy::default();
    let policy = Policy {
        max_retry_after: o
            .max_retry_after
            .map_or(defaults.max_retry_after, Duration::from),
        max_failures: o.max_failures.unwrap_or(defaults.max_failures),
        ..shared.policy().map_err(SettingsError::Invalid)?
    };
    if policy.max_failures == 0 {
        return Err(SettingsError::Invalid(
            "max failures must be at least 1".into(),
        ));
    }
    Ok(policy)
}

/// `dns_concurrency` (default 64): 1 to 4096.
fn checked_dns_concurrency(v: Option<usize>) -> Result<usize, SettingsError> {
    let dns_concurrency = v.unwrap_or(64);
    if dns_concurrency == 0 || dns_concurrency > 4096 {
        return Err(SettingsError::Invalid(format!(
            "dns concurrency {dns_concurrency}: use 1 to 4096"
        )));
    }
    Ok(dns_concurrency)
}

/// How far a run goes with each request and file: redirects followed, the
/// WARC compression level, the URLs taken from a queue at a time, and when
/// a round's tail ends it.
struct TransferLimits {
    follow_redirects: u32,
    warc_level: u32,
    queue_batch: usize,
    tail: TailRule,
}

impl TransferLimits {
    /// The limits set (or their defaults), each checked.
    fn checked(o: &FetcherOptions) -> Result<TransferLimits, SettingsError> {
        let follow_redirects = o.follow_redirects.unwrap_or(0);
        if follow_redirects > 5 {
            return Err(SettingsError::Invalid(format!(
                "follow redirects {follow_redirects}: at most 5 hops"
            )));
        }
        let warc_level = o
            .warc_level
            .unwrap_or(common::warc::DEFAULT_COMPRESSION_LEVEL);
        if warc_level > 9 {
            return Err(SettingsError::Invalid(format!(
                "warc level {warc_level}: a gzip level is 0 (no compression) to 9 (smallest)"
            )));
        }
        let queue_batch = o.queue_batch.unwrap_or(16);
        if queue_batch == 0 {
            return Err(SettingsError::Invalid(
                "queue batch must be at least 1".into(),
            ));
        }
        let tail = TailRule {
            share: o.tail_share.unwrap_or(0.25),
            time: o.tail_time.map_or(Duration::from_secs(10), Duration::from),
        };
        if !(tail.share.is_finite() && (0.0..=1.0).contains(&tail.share)) {
            return Err(SettingsError::Invalid(format!(
                "tail share {}: a share from 0 (never end a round early) to 1",
                tail.share
            )));
        }
        Ok(TransferLimits {
            follow_redirects,
            warc_level,
            queue_batch,
            tail,
        })
    }
}

/// `IP` or `IP:PORT` (port 53 by default) of a DNS server.
fn parse_dns_server(v: &str) -> Result<std::net::SocketAddr, SettingsError> {
    let v = v.trim();
    if let Ok(addr) = v.parse() {
        return Ok(addr);
    }
    match v.trim_start_matches('[').trim_end_matches(']').parse() {
        Ok(ip) => Ok(std::net::SocketAddr::new(ip, 53)),
        Err(_) => Err(SettingsError::Invalid(format!(
            "dns server `{v}`: give an IP address, with a port if not 53 (127.0.0.1:5353, \
             [::1]:53); a name would itself need a name server"
        ))),
    }
}

/// The WARC bytes a run, the crawl, a host and a host in one round may
/// store (`None`: no limit).
fn budgets(o: &FetcherOptions, shared: &SharedOptions) -> crate::budget::Budgets {
    crate::budget::Budgets {
        run: o.max_run_bytes.map(u64::from).filter(|&b| b > 0),
        crawl: shared.max_crawl_bytes(),
        host: shared.max_host_bytes(),
        host_round: o.max_host_round_bytes.map(u64::from).filter(|&b| b > 0),
    }
}

/// The product token and contact URL (`[agent]` under the flags), checked.
fn checked_agent(o: &FetcherOptions, cfg: &CrawlConfig) -> Result<(String, String), SettingsError> {
    let name = o
        .agent_name
        .clone()
        .or(cfg.agent.name.clone())
        .unwrap_or_default();
    let url = o
        .agent_url
        .clone()
        .or(cfg.agent.url.clone())
        .unwrap_or_default();
    check_agent(&name, &url, &cfg.path)?;
    Ok((name, url))
}

/// The product token and contact URL are required, and must be usable in a
/// `User-Agent` header and in robots.txt matching.
fn check_agent(name: &str, url: &str, config: &std::path::Path) -> Result<(), SettingsError> {
    if name.trim().is_empty() || url.trim().is_empty() {
        return Err(SettingsError::Invalid(format!(
            "no user agent: a product token and a contact URL are required, so that site \
             owners can see who crawls them and how to reach you; pass --agent-name TOKEN \
             --agent-url URL, or put them in {}:\n  [agent]\n  name = \"examplebot\"\n  \
             url = \"https://example.org/bot.html\"",
            config.display()
        )));
    }
    crate::robots::check_product_token(name).map_err(SettingsError::Invalid)?;
    if url::Url::parse(url).is_err() || url.contains(char::is_whitespace) {
        return Err(SettingsError::Invalid(format!(
            "agent URL `{url}` is not an absolute URL (e.g. https://example.org/bot.html)"
        )));
    }
    Ok(())
}

/// The `From` address, when set: one mailbox (RFC 9110, section 10.1.2),
/// which goes into a header as it is, so nothing but visible ASCII.
fn checked_from(from: Option<String>) -> Result<Option<String>, SettingsError> {
    let Some(from) = from else { return Ok(None) };
    let from = from.trim().to_string();
    let visible = from.bytes().all(|b| b.is_ascii_graphic());
    let (local, domain) = from.split_once('@').unwrap_or_default();
    if !visible || local.is_empty() || domain.is_empty() {
        return Err(SettingsError::Invalid(format!(
            "from = {from:?} is not an e-mail address: give the operator's address, e.g. \
             --from ops@example.org (sent in a From header with every request)"
        )));
    }
    Ok(Some(from))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn settings(args: &[&str]) -> Result<Settings, SettingsError> {
        // Not created: these settings read no crawl.toml.
        let dir = std::env::temp_dir().join("fetcher-settings-no-such-crawl");
        let mut argv = vec!["fetcher", "fetch", dir.to_str().unwrap()];
        argv.extend_from_slice(args);
        let cli = crate::cli::Cli::try_parse_from(argv).unwrap();
        let crate::cli::Command::Fetch(a) = cli.command else {
            panic!("fetch expected")
        };
        // The machine's proxy variables must not reach the tests.
        Settings::from_args_and_env(*a, |_| None)
    }

    #[test]
    fn defaults_fit_the_real_web() {
        let s = settings(&[
            "--agent-name",
            "examplebot",
            "--agent-url",
            "https://e.org/bot",
        ])
        .unwrap();
        assert_eq!(s.policy.min_delay, Duration::from_secs(5));
        assert_eq!(s.policy.delay_factor, 5.0);
        assert_eq!(s.policy.max_crawl_delay, Duration::from_secs(60));
        assert_eq!(s.max_body, 10 * 1024 * 1024);
        assert_eq!(s.policy.max_failures, 5);
        assert_eq!(
            s.time_limit,
            Some(Duration::from_secs(30 * 60)),
            "a round stops at its time"
        );
        assert_eq!(s.tail.share, 0.25);
        assert_eq!(s.follow_redirects, 0);
        assert!(!s.allow_private, "private addresses refused by default");
        assert!(!s.accept_invalid_certs, "certificates checked by default");
        assert_eq!(s.ca_file, None);
        assert_eq!(s.from, None, "no From header unless asked for");
        assert_eq!(s.key, KeyMode::Host);
        assert_eq!(s.threads, None, "workers follow the segment");
        assert_eq!(s.workers(3), AUTO_THREADS_MIN, "a few to spare");
        assert_eq!(s.workers(700), 700, "one per queue");
        assert_eq!(s.workers(100_000), AUTO_THREADS_MAX, "bounded");
        assert_eq!(
            s.user_agent(),
            format!(
                "examplebot/{} (+https://e.org/bot)",
                env!("CARGO_PKG_VERSION")
            )
        );
    }

    #[test]
    fn from_takes_one_e_mail_address() {
        let agent = ["--agent-name", "bot", "--agent-url", "https://e.org/bot"];
        let with = |from: &str| settings(&[&agent[..], &["--from", from]].concat());
        assert_eq!(
            with(" ops@example.org ").unwrap().from.as_deref(),
            Some("ops@example.org")
        );
        for bad in [
            "ops",
            "@example.org",
            "ops@",
            "a b@example.org",
            "ops@x\r\nX: y",
            "",
        ] {
            let e = with(bad).unwrap_err().to_string();
            assert!(e.contains("not an e-mail address"), "{bad:?}: {e}");
        }
    }

    #[test]
    fn the_round_time_sets_the_time_limit_unless_it_is_given() {
        let agent = ["--agent-name", "bot", "--agent-url", "https://e.org/bot"];
        let with = |extra: &[&str]| {
            let mut a = agent.to_vec();
            a.extend_from_slice(extra);
            settings(&a).unwrap()
        };
        let s = with(&["--round-time", "2m"]);
        assert_eq!(s.time_limit, Some(Duration::from_secs(120)));
        let s = with(&["--round-time", "2m", "--time-limit", "5m"]);
        assert_eq!(s.time_limit, Some(Duration::from_secs(300)));
        let s = with(&["--time-limit", "0"]);
        assert_eq!(s.time_limit, None, "0: no limit");
        let mut bad = agent.to_vec();
        bad.extend_from_slice(&["--tail-share", "1.5"]);
        assert!(
            settings(&bad)
                .unwrap_err()
                .to_string()
                .contains("tail share")
        );
    }

    #[test]
    fn threads_and_the_warc_level_are_checked() {
        let agent = ["--agent-name", "bot", "--agent-url", "https://e.org/bot"];
        let with = |extra: &[&str]| {
            let mut a = agent.to_vec();
            a.extend_from_slice(extra);
            settings(&a)
        };
        assert_eq!(with(&[]).unwrap().warc_level, 1);
        assert_eq!(with(&["--warc-level", "1"]).unwrap().warc_level, 1);
        let e = with(&["--warc-level", "10"]).unwrap_err().to_string();
        assert!(e.contains("gzip level"), "{e}");
        let e = with(&["--threads", "0"]).unwrap_err().to_string();
        assert!(e.contains("threads = 0"), "{e}");
        let s = with(&["--threads", "8"]).unwrap();
        assert_eq!(s.workers(5000), 8, "a number given is kept");
    }

    #[test]
    fn a_product_token_is_a_single_word() {
        let e = settings(&["--agent-name", "my bot", "--agent-url", "https://e.org/bot"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("product token"), "{e}");
        let e = settings(&["--agent-name", "bot", "--agent-url", "not a url"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("not an absolute URL"), "{e}");
    }

    #[test]
    fn dns_settings_and_their_checks() {
        let agent = ["--agent-name", "bot", "--agent-url", "https://e.org/bot"];
        let with = |extra: &[&str]| {
            let mut a = agent.to_vec();
            a.extend_from_slice(extra);
            settings(&a)
        };
        let s = with(&[]).unwrap();
        assert_eq!(s.dns_server, None, "the system's name servers");
        assert_eq!(s.dns_timeout, Duration::from_secs(5));
        assert_eq!(s.dns_cache_ttl, Duration::from_secs(30 * 60));
        assert_eq!(s.dns_concurrency, 64);
        let s = with(&["--dns-server", "127.0.0.1", "--dns-timeout", "300ms"]).unwrap();
        assert_eq!(s.dns_server, Some("127.0.0.1:53".parse().unwrap()));
        assert_eq!(s.dns_timeout, Duration::from_millis(300));
        let s = with(&["--dns-server", "[::1]:5353"]).unwrap();
        assert_eq!(s.dns_server, Some("[::1]:5353".parse().unwrap()));
        let e = with(&["--dns-server", "ns.example"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("ns.example") && e.contains("IP address"), "{e}");
        let e = with(&["--dns-concurrency", "0"]).unwrap_err().to_string();
        assert!(e.contains("dns concurrency"), "{e}");
        assert!(with(&["--proxy", "none"]).unwrap().proxy.is_none());
        let e = with(&["--proxy", "socks5://p.test:1080"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("--proxy") && e.contains("not supported"), "{e}");
    }

    #[test]
    fn a_flag_beats_crawl_toml_which_beats_the_default() {
        let dir = common::testutil::TempDir::new("fetcher-layers");
        std::fs::write(
            dir.join("crawl.toml"),
            "[agent]\nname = \"bot\"\nurl = \"https://e.org/bot\"\n[crawl]\nround_time = \"3m\"\n\
             [fetcher]\nthreads = 3\nstop_grace = \"2s\"\nmin_delay = \"1s\"\ndelay_factor = 2\n\
             allow_private = true\nhosts_file = \"hosts\"\nca_file = \"ca.pem\"\n\
             accept_invalid_certs = true\n",
        )
        .unwrap();
        let parse = |extra: &[&str]| {
            let mut argv = vec!["fetcher", "fetch", dir.path().to_str().unwrap()];
            argv.extend_from_slice(extra);
            let cli = crate::cli::Cli::try_parse_from(argv).unwrap();
            let crate::cli::Command::Fetch(a) = cli.command else {
                panic!("fetch expected")
            };
            Settings::from_args_and_env(*a, |_| None).unwrap()
        };
        let s = parse(&[
            "--threads",
            "5",
            "--min-delay",
            "250ms",
            "--hosts-file",
            "h",
        ]);
        assert_eq!(s.threads, Some(5), "the flag");
        assert_eq!(s.stop_grace, Duration::from_secs(2), "crawl.toml");
        assert_eq!(s.download_timeout, Duration::from_secs(120), "the default");
        assert_eq!(s.policy.min_delay, Duration::from_millis(250));
        assert_eq!(s.policy.delay_factor, 2.0);
        assert_eq!(
            s.time_limit,
            Some(Duration::from_secs(180)),
            "[crawl] round_time"
        );
        assert!(s.allow_private);
        assert_eq!(
            s.hosts_file,
            Some(std::env::current_dir().unwrap().join("h")),
            "a flag's path is relative to the current directory"
        );
        assert!(s.accept_invalid_certs, "crawl.toml");
        assert_eq!(
            s.ca_file,
            Some(dir.join("ca.pem")),
            "a path in crawl.toml is relative to the crawl directory"
        );
        let s = parse(&[]);
        assert_eq!(s.threads, Some(3));
        assert_eq!(s.policy.min_delay, Duration::from_secs(1));
        assert_eq!(
            s.hosts_file,
            Some(dir.join("hosts")),
            "a path in crawl.toml is relative to the crawl directory"
        );
    }
}
