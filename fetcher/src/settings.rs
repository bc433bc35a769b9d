//! Flags and the `[fetcher]`/`[agent]` sections of `crawl.toml` turned, in
//! one place, into validated settings with their defaults. Nothing else in
//! the program looks at command-line types.

use std::path::PathBuf;
use std::time::Duration;

use common::config::fetcher::FetcherValues;
use common::config::{CrawlConfig, FilterConfig, ScopeConfig, SharedOptions, setting_path};
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
    /// The fetcher's own settings ([`FetcherOptions`]), each as given (a
    /// flag, else `[fetcher]`), else its declared default, checked:
    /// `threads` unset is as many as the run needs (see
    /// [`Settings::workers`]), `from` falls back to `[agent] from`, and the
    /// paths of `hosts_file` and `ca_file` are resolved. A setting declared
    /// there reaches the run, and its workers ([`crate::worker::Shared`]),
    /// with no more code.
    pub options: FetcherValues,
    /// Product token.
    pub agent_name: String,
    /// Contact URL.
    pub agent_url: String,
    /// Delays, caps and failure limits.
    pub policy: Policy,
    /// The crawl's rules per host (`host-rules.toml`): the delays of the
    /// hosts they name.
    pub host_rules: common::rules::HostRules,
    /// Stop after this long (by default the round time, `[crawl]
    /// round_time`; `None`: no limit).
    pub time_limit: Option<Duration>,
    /// When the round's tail ends it (see [`crate::round_end`]).
    pub tail: TailRule,
    /// Byte budgets of the run, the crawl and a host.
    pub budgets: crate::budget::Budgets,
    /// Free space kept on the crawl directory's filesystem.
    pub disk_floor: common::disk::DiskFloor,
    /// DNS server asked instead of the system's.
    pub dns_server: Option<std::net::SocketAddr>,
    /// The proxy requests go through.
    pub proxy: Option<ProxyChoice>,
    /// Progress display (`--progress`).
    pub progress: ProgressMode,
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
        let given = args.options.or(file).values();
        let (agent_name, agent_url) = checked_agent(&given, &cfg)?;
        let options = FetcherValues {
            hosts_file,
            ca_file,
            ..checked(given, &cfg)?
        };
        let shared = args.shared.or(cfg.shared()?);
        let policy = checked_policy(&options, &shared)?;
        let host_rules = common::rules::HostRules::load(crawl.top())
            .map_err(|e| SettingsError::Invalid(e.to_string()))?;
        let round_time = shared.round_time().map_err(SettingsError::Invalid)?;
        let time_limit = options.time_limit.unwrap_or(round_time);
        check_key_against_shards(options.key, shard.as_ref(), &crawl)?;
        let dns_server = options
            .dns_server
            .as_deref()
            .map(parse_dns_server)
            .transpose()?;
        let proxy =
            crate::proxy::choose(options.proxy.as_deref(), options.no_proxy.as_deref(), env)
                .map_err(SettingsError::Invalid)?;
        Ok(Settings {
            segment: args.segment,
            shard,
            agent_name,
            agent_url,
            policy,
            host_rules,
            time_limit: (!time_limit.is_zero()).then_some(time_limit),
            tail: TailRule {
                share: options.tail_share,
                time: options.tail_time,
            },
            budgets: budgets(&options, &shared),
            disk_floor: shared.disk_floor(),
            dns_server,
            proxy,
            progress: args.progress.progress,
            metrics: common::metrics::Place::of(&cfg, crawl.top()).map_err(|message| {
                common::config::ConfigError::Invalid {
                    path: crawl.config_path(),
                    message,
                }
            })?,
            log: args.log.clone(),
            scope: cfg.scope.clone(),
            filter: cfg.filter.clone(),
            options,
            crawl,
        })
    }

    /// The most requests in flight for a segment of `queues` queues: `threads`
    /// if set, else one per queue (a queue has at most one request in
    /// flight, so more would wait), from [`AUTO_THREADS_MIN`] to
    /// [`AUTO_THREADS_MAX`]; see [`crate::crew`] for how many start.
    pub fn workers(&self, queues: usize) -> usize {
        self.options
            .threads
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

/// The politeness policy: the shared settings, with the fetcher's own
/// `max_retry_after` and `max_failures` (at least 1).
fn checked_policy(o: &FetcherValues, shared: &SharedOptions) -> Result<Policy, SettingsError> {
    let policy = Policy {
        max_retry_after: o.max_retry_after,
        max_failures: o.max_failures,
        ..shared.policy().map_err(SettingsError::Invalid)?
    };
    if policy.max_failures == 0 {
        return Err(SettingsError::Invalid(
            "max failures must be at least 1".into(),
        ));
    }
    Ok(policy)
}

/// The fetcher's own settings with their ranges checked (`threads` 1 to
/// [`MAX_THREADS`] when set, `dns_concurrency` 1 to 4096, at most 5
/// redirect hops, a gzip level, a queue batch of at least 1, a tail share
/// from 0 to 1), the `From` address (else `[agent] from`) and the WARC
/// store checked, and a DNS timeout of 1 ms at least.
fn checked(mut o: FetcherValues, cfg: &CrawlConfig) -> Result<FetcherValues, SettingsError> {
    let refused = |why: String| Err(SettingsError::Invalid(why));
    if let Some(n) = o.threads
        && (n == 0 || n > MAX_THREADS)
    {
        return refused(format!(
            "threads = {n}: use 1 to {MAX_THREADS}, or leave it unset for one per queue \
             (at most {AUTO_THREADS_MAX})"
        ));
    }
    if o.dns_concurrency == 0 || o.dns_concurrency > 4096 {
        let n = o.dns_concurrency;
        return refused(format!("dns concurrency {n}: use 1 to 4096"));
    }
    if o.follow_redirects > 5 {
        let n = o.follow_redirects;
        return refused(format!("follow redirects {n}: at most 5 hops"));
    }
    if o.warc_level > 9 {
        return refused(format!(
            "warc level {}: a gzip level is 0 (no compression) to 9 (smallest)",
            o.warc_level
        ));
    }
    if o.queue_batch == 0 {
        return refused("queue batch must be at least 1".into());
    }
    if !(o.tail_share.is_finite() && (0.0..=1.0).contains(&o.tail_share)) {
        return refused(format!(
            "tail share {}: a share from 0 (never end a round early) to 1",
            o.tail_share
        ));
    }
    o.from = checked_from(o.from.or(cfg.agent.from.clone()))?;
    o.warc_store = checked_store(o.warc_store.as_deref())?;
    o.dns_timeout = o.dns_timeout.max(Duration::from_millis(1));
    Ok(o)
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
fn budgets(o: &FetcherValues, shared: &SharedOptions) -> crate::budget::Budgets {
    crate::budget::Budgets {
        run: o.max_run_bytes.filter(|&b| b > 0),
        crawl: shared.max_crawl_bytes(),
        host: shared.max_host_bytes(),
        host_round: o.max_host_round_bytes.filter(|&b| b > 0),
    }
}

/// The product token and contact URL (`[agent]` under the flags), checked.
fn checked_agent(o: &FetcherValues, cfg: &CrawlConfig) -> Result<(String, String), SettingsError> {
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
        assert_eq!(s.options.max_body, 10 * 1024 * 1024);
        assert_eq!(s.policy.max_failures, 5);
        assert_eq!(
            s.time_limit,
            Some(Duration::from_secs(30 * 60)),
            "a round stops at its time"
        );
        assert_eq!(s.tail.share, 0.25);
        assert_eq!(s.options.follow_redirects, 0);
        assert!(
            !s.options.allow_private,
            "private addresses refused by default"
        );
        assert!(
            !s.options.accept_invalid_certs,
            "certificates checked by default"
        );
        assert_eq!(s.options.ca_file, None);
        assert_eq!(s.options.from, None, "no From header unless asked for");
        assert_eq!(s.options.key, KeyMode::Host);
        assert_eq!(s.options.threads, None, "workers follow the segment");
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
            with(" ops@example.org ").unwrap().options.from.as_deref(),
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
        assert_eq!(with(&[]).unwrap().options.warc_level, 1);
        assert_eq!(with(&["--warc-level", "1"]).unwrap().options.warc_level, 1);
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
        assert_eq!(s.options.dns_timeout, Duration::from_secs(5));
        assert_eq!(s.options.dns_cache_ttl, Duration::from_secs(30 * 60));
        assert_eq!(s.options.dns_concurrency, 64);
        let s = with(&["--dns-server", "127.0.0.1", "--dns-timeout", "300ms"]).unwrap();
        assert_eq!(s.dns_server, Some("127.0.0.1:53".parse().unwrap()));
        assert_eq!(s.options.dns_timeout, Duration::from_millis(300));
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
        assert_eq!(s.options.threads, Some(5), "the flag");
        assert_eq!(s.options.stop_grace, Duration::from_secs(2), "crawl.toml");
        assert_eq!(
            s.options.download_timeout,
            Duration::from_secs(120),
            "the default"
        );
        assert_eq!(s.policy.min_delay, Duration::from_millis(250));
        assert_eq!(s.policy.delay_factor, 2.0);
        assert_eq!(
            s.time_limit,
            Some(Duration::from_secs(180)),
            "[crawl] round_time"
        );
        assert!(s.options.allow_private);
        assert_eq!(
            s.options.hosts_file,
            Some(std::env::current_dir().unwrap().join("h")),
            "a flag's path is relative to the current directory"
        );
        assert!(s.options.accept_invalid_certs, "crawl.toml");
        assert_eq!(
            s.options.ca_file,
            Some(dir.join("ca.pem")),
            "a path in crawl.toml is relative to the crawl directory"
        );
        let s = parse(&[]);
        assert_eq!(s.options.threads, Some(3));
        assert_eq!(s.policy.min_delay, Duration::from_secs(1));
        assert_eq!(
            s.options.hosts_file,
            Some(dir.join("hosts")),
            "a path in crawl.toml is relative to the crawl directory"
        );
    }
}
