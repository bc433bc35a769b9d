//! Flags and `crawl.toml` turned, in one place, into validated settings.
//!
//! Precedence: command-line flag, then `crawl.toml` (`[segmenter]`, `[scope]`,
//! `[filter]`), then the built-in default. Nothing else in the program looks
//! at command-line types.

use std::num::NonZeroUsize;
use std::time::Duration;

use common::config::segmenter::SegmenterValues;
use common::config::{CrawlConfig, FilterConfig, ScopeConfig, ScopeMode, setting_path};
use common::crawldir::CrawlDir;
use common::politeness::Policy;

use crate::error::Error;
use crate::flags::{RoundFlags, ScopeArg, SegmenterOptions};

/// Starting design load of `seen.bloom`: the declared default of `bloom_items`.
pub use common::config::segmenter::DEFAULT_BLOOM_ITEMS;
/// Smallest sort memory accepted (tests use tiny values to force spills).
pub const MIN_MEMORY: u64 = 16 * 1024;

/// Everything `inject` and `run` need to know, validated.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The crawl directory.
    pub crawl: CrawlDir,
    /// The segmenter's own settings ([`SegmenterOptions`]), each as given
    /// (a flag, else `[segmenter]`), else its declared default, checked
    /// once (`checked`): a page limit of 0 is `None` (no limit), and
    /// `threads` unset stays unset here (see [`Settings::threads`]). A
    /// setting declared there reaches the round, and its scan workers
    /// ([`crate::round::scan::ScanConfig`]), with no more code.
    pub options: SegmenterValues,
    /// Worker threads: `threads`, else the number of CPUs.
    pub threads: usize,
    /// Progress display (`--progress`).
    pub progress: common::progress::ProgressMode,
    /// `--log FILE`: the file the run's log is appended to.
    pub log: Option<std::path::PathBuf>,
    /// The crawl's rules per host (`host-rules.toml`): some hosts' delays,
    /// `max_per_host` and `max_host_pages`.
    pub host_rules: common::rules::HostRules,
    /// WARC bytes of one host over the crawl (`None`: no limit).
    pub max_host_bytes: Option<u64>,
    /// WARC bytes of the whole crawl (`None`: no limit).
    pub max_crawl_bytes: Option<u64>,
    /// Free space kept on the crawl directory's filesystem.
    pub min_free_disk: common::disk::DiskFloor,
    /// Target length of a round.
    pub round_time: Duration,
    /// The fetcher's politeness, to plan how many URLs of a host fit in a round.
    pub policy: Policy,
    /// True when the Bloom parameters were given (flag or file) rather than defaulted.
    pub bloom_explicit: bool,
    /// The research outputs written after a round (`research_*`).
    pub research: crate::derivatives::Wanted,
    /// `[scope]` with the scope flags applied (paths absolute).
    pub scope: ScopeConfig,
    /// `[filter]` with the filter flags applied.
    pub filter: FilterConfig,
    /// `[agent] name`: robots directives addressed to it apply.
    pub agent_name: Option<String>,
    /// When fetched URLs are fetched again (`recrawl_*`).
    pub schedule: crate::history::Schedule,
    /// How sitemaps are found and read.
    pub sitemaps: SitemapSettings,
}

/// The `sitemap*` settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SitemapSettings {
    /// Read sitemaps at all.
    pub enabled: bool,
    /// Schedule `/sitemap.xml` of a host whose robots.txt names none.
    pub guess: bool,
    /// Sitemap levels followed from robots.txt (1: the files it names).
    pub max_depth: u32,
    /// Most entries read from one file.
    pub max_entries: usize,
    /// Most bytes of one file read (uncompressed).
    pub max_bytes: u64,
}

impl Default for SitemapSettings {
    /// The declared defaults: the protocol's limits (50,000 URLs, 50 MiB),
    /// robots.txt → index → sitemap.
    fn default() -> SitemapSettings {
        SitemapSettings::of(&SegmenterOptions::default().values())
    }
}

impl SitemapSettings {
    /// The `sitemap*` settings of `o`.
    fn of(o: &SegmenterValues) -> SitemapSettings {
        SitemapSettings {
            enabled: o.sitemaps,
            guess: o.sitemap_guess,
            max_depth: o.sitemap_max_depth,
            max_entries: o.sitemap_max_entries,
            max_bytes: o.sitemap_max_bytes,
        }
    }
}

impl Settings {
    /// Reads `CRAWL/crawl.toml` (a missing file gives the defaults) and
    /// applies `flags` over it.
    pub fn load(crawl: CrawlDir, flags: &RoundFlags) -> Result<Settings, Error> {
        let cfg = CrawlConfig::load(&crawl.config_path())?;
        let section: SegmenterOptions = cfg.section("segmenter", &cfg.segmenter)?;
        Settings::resolve(crawl, &cfg, &section, flags)
    }

    /// Lays the flags over the file ([`common::options!`]), fills in the
    /// defaults and checks ranges.
    pub fn resolve(
        crawl: CrawlDir,
        cfg: &CrawlConfig,
        file: &SegmenterOptions,
        flags: &RoundFlags,
    ) -> Result<Settings, Error> {
        let given = flags.options.clone().or(file.clone());
        let bloom_explicit = given.bloom_items.is_some() || given.bloom_fp.is_some();
        let shared = flags.shared.clone().or(cfg.shared()?);
        let policy = shared.policy().map_err(Error::Usage)?;
        let host_rules =
            common::rules::HostRules::load(crawl.top()).map_err(|e| Error::Usage(e.to_string()))?;
        let round_time = shared.round_time().map_err(Error::Usage)?;
        let options = checked(given.values())?;
        let threads = options
            .threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, NonZeroUsize::get));
        Ok(Settings {
            scope: resolve_scope(cfg, flags, &crawl),
            filter: resolve_filter(cfg, flags)?,
            schedule: resolve_schedule(&options)?,
            sitemaps: resolve_sitemaps(&options)?,
            crawl,
            threads,
            progress: flags.progress.progress,
            log: flags.log.clone(),
            host_rules,
            max_host_bytes: shared.max_host_bytes(),
            max_crawl_bytes: shared.max_crawl_bytes(),
            min_free_disk: shared.disk_floor(),
            round_time,
            policy,
            bloom_explicit,
            research: crate::derivatives::Wanted {
                index: options.research_index,
                wet: options.research_wet,
                wat: options.research_wat,
            },
            agent_name: cfg.agent.name.clone(),
            options,
        })
    }

    /// What a round of `crawl` (a shard's view: `shard`) asks of the
    /// research outputs after it.
    pub fn research_after_round(&self, shard: Option<u32>) -> crate::derivatives::AfterRound<'_> {
        crate::derivatives::AfterRound {
            crawl: &self.crawl,
            shard,
            settings: crate::derivatives::Settings {
                wanted: self.research,
                threads: self.threads,
                max_page_size: self.options.max_page_size,
                force: false,
            },
        }
    }
}

/// The declared values, checked where their types do not: the sort
/// memory, the Bloom parameters, the page size, the refetch share and the
/// budget's pace; a page limit of 0 is read as none.
fn checked(o: SegmenterValues) -> Result<SegmenterValues, Error> {
    if o.memory < MIN_MEMORY {
        return Err(Error::Usage(format!(
            "--memory {}: at least {MIN_MEMORY} bytes are needed",
            o.memory
        )));
    }
    check_bloom(&o)?;
    if o.max_page_size == 0 {
        return Err(Error::Usage("--max-page-size must be positive".into()));
    }
    let recrawl_share = o.recrawl_share;
    if !(0.0..=1.0).contains(&recrawl_share) {
        return Err(Error::Usage(format!(
            "--recrawl-share {recrawl_share}: a share from 0 to 1 is needed (0.5: half \
             of a host's URLs in a segment for refetches, when it has more than fit)"
        )));
    }
    let budget_pace = o.budget_pace;
    if !(budget_pace > 0.0 && budget_pace <= 1.0) {
        return Err(Error::Usage(format!(
            "--budget-pace {budget_pace}: a share above 0 and at most 1 is needed (0.5: a \
             round schedules at most half of what is left of max_crawl_pages; 1: all of it)"
        )));
    }
    let limit = |n: Option<u64>| n.filter(|&n| n > 0);
    Ok(SegmenterValues {
        max_host_pages: limit(o.max_host_pages),
        max_domain_pages: limit(o.max_domain_pages),
        max_crawl_pages: limit(o.max_crawl_pages),
        ..o
    })
}

/// `--bloom-items` and `--bloom-fp` (design load and false-positive rate
/// of a new `seen.bloom`), checked.
fn check_bloom(o: &SegmenterValues) -> Result<(), Error> {
    let (bloom_items, bloom_fp) = (o.bloom_items, o.bloom_fp);
    if bloom_items == 0 {
        return Err(Error::Usage("--bloom-items must be at least 1".into()));
    }
    if !(bloom_fp > 0.0 && bloom_fp < 0.5) {
        return Err(Error::Usage(format!(
            "--bloom-fp {bloom_fp}: a false-positive rate between 0 and 0.5 is needed (e.g. 0.01)"
        )));
    }
    Ok(())
}

/// `[scope]` with the scope flags applied: names trimmed and lowercased,
/// the rules file's path made absolute.
fn resolve_scope(cfg: &CrawlConfig, flags: &RoundFlags, crawl: &CrawlDir) -> ScopeConfig {
    let mut scope = cfg.scope.clone();
    if let Some(mode) = flags.scope {
        scope.mode = match mode {
            ScopeArg::Seeds => ScopeMode::Seeds,
            ScopeArg::List => ScopeMode::List,
            ScopeArg::Any => ScopeMode::Any,
        };
    }
    scope.hosts.extend(flags.scope_hosts.iter().cloned());
    scope.domains.extend(flags.scope_domains.iter().cloned());
    for name in scope.hosts.iter_mut().chain(scope.domains.iter_mut()) {
        *name = name.trim().trim_end_matches('.').to_ascii_lowercase();
    }
    scope.hosts.retain(|h| !h.is_empty());
    scope.domains.retain(|d| !d.is_empty());
    scope.rules_file = setting_path(
        flags.rules_file.as_deref(),
        scope.rules_file.as_deref(),
        crawl.top(),
    );
    scope
}

/// `[filter]` with the filter flags applied, checked.
fn resolve_filter(cfg: &CrawlConfig, flags: &RoundFlags) -> Result<FilterConfig, Error> {
    let mut filter = cfg.filter.clone();
    set(&mut filter.max_url_length, flags.max_url_length);
    set(&mut filter.max_path_segments, flags.max_path_segments);
    set(&mut filter.max_repeated_segment, flags.max_repeated_segment);
    set(&mut filter.max_hops, flags.max_hops);
    set(&mut filter.max_query_params, flags.max_query_params);
    set(&mut filter.max_years_ahead, flags.max_years_ahead);
    if let Some(list) = &flags.skip_extensions {
        filter.skip_extensions = list
            .split(',')
            .map(|e| e.trim().trim_start_matches('.').to_ascii_lowercase())
            .filter(|e| !e.is_empty())
            .collect();
    }
    if filter.max_repeated_segment < 2 {
        return Err(Error::Usage(
            "max_repeated_segment must be at least 2 (a segment always appears once)".into(),
        ));
    }
    Ok(filter)
}

/// The `recrawl_*` intervals, checked: min <= interval <= max.
fn resolve_schedule(o: &SegmenterValues) -> Result<crate::history::Schedule, Error> {
    let schedule = crate::history::Schedule {
        interval: o.recrawl_interval,
        min: o.recrawl_min,
        max: o.recrawl_max,
        gone_after: o.recrawl_gone_after,
        failed: o.recrawl_failed,
    };
    if schedule.failed.is_zero() {
        return Err(Error::Usage(
            "recrawl_failed 0: a URL whose retries ran out needs some time before it is \
             tried again (7d by default)"
                .into(),
        ));
    }
    if schedule.min.as_secs() == 0 || schedule.min > schedule.max {
        return Err(Error::Usage(format!(
            "recrawl_min {:?} and recrawl_max {:?}: the shortest interval must be at least \
             1s and not longer than the longest",
            schedule.min, schedule.max
        )));
    }
    if schedule.interval < schedule.min || schedule.interval > schedule.max {
        return Err(Error::Usage(format!(
            "recrawl_interval {:?} is outside recrawl_min {:?} .. recrawl_max {:?}; set \
             them so that min <= interval <= max",
            schedule.interval, schedule.min, schedule.max
        )));
    }
    Ok(schedule)
}

/// The `sitemap*` settings, checked.
fn resolve_sitemaps(o: &SegmenterValues) -> Result<SitemapSettings, Error> {
    let sitemaps = SitemapSettings::of(o);
    if sitemaps.max_bytes == 0 {
        return Err(Error::Usage(
            "--sitemap-max-bytes must be positive (50MiB is the protocol's limit)".into(),
        ));
    }
    Ok(sitemaps)
}

fn set<T>(slot: &mut T, flag: Option<T>) {
    if let Some(v) = flag {
        *slot = v;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use common::config::{DurationValue, SizeValue};
    use std::num::NonZeroU64;
    use std::path::PathBuf;

    /// Flags that set `options` alone.
    fn with_options(options: SegmenterOptions) -> RoundFlags {
        RoundFlags {
            options,
            ..RoundFlags::default()
        }
    }

    fn config(text: &str) -> (CrawlConfig, SegmenterOptions) {
        let cfg: CrawlConfig = toml::from_str(text).unwrap();
        let section = cfg.section("segmenter", &cfg.segmenter).unwrap();
        (cfg, section)
    }

    #[test]
    fn flags_override_the_file_which_overrides_defaults() {
        let (cfg, section) = config(
            "[segmenter]\nmemory = \"64MiB\"\nmax_per_host = 50\npartitions = 4\n\
             [filter]\nmax_hops = 4\n[scope]\nmode = \"list\"\nhosts = [\"A.test\"]\n",
        );
        let flags = RoundFlags {
            options: SegmenterOptions {
                max_per_host: NonZeroU64::new(7),
                ..SegmenterOptions::default()
            },
            scope: Some(ScopeArg::Any),
            scope_hosts: vec!["b.test".into()],
            ..RoundFlags::default()
        };
        let s = Settings::resolve(CrawlDir::new("/c"), &cfg, &section, &flags).unwrap();
        assert_eq!(s.options.memory, 64 * 1024 * 1024);
        assert_eq!(s.options.max_per_host, 7);
        assert_eq!(s.options.partitions, 4);
        assert_eq!(s.options.max_segment_size, 1_000_000);
        assert_eq!(s.filter.max_hops, 4);
        assert_eq!(s.filter.max_url_length, 2048);
        assert_eq!(s.scope.mode, ScopeMode::Any);
        assert_eq!(s.scope.hosts, ["a.test", "b.test"]);
        assert!(!s.bloom_explicit);
    }

    #[test]
    fn sizes_in_the_file_are_numbers_or_strings() {
        let (_, section) = config("[segmenter]\nmemory = 1000000\nmax_page_size = \"1MiB\"\n");
        assert_eq!(section.memory, Some(SizeValue(1_000_000)));
        assert_eq!(section.max_page_size, Some(SizeValue(1024 * 1024)));
        let (_, section) = config("[segmenter]\nprogress_interval = 30\n");
        assert_eq!(
            section.progress_interval,
            Some(DurationValue(Duration::from_secs(30)))
        );
        let (cfg, section) = config("[segmenter]\nprogress_interval = \"250ms\"\n");
        assert_eq!(
            section.progress_interval,
            Some(DurationValue(Duration::from_millis(250)))
        );
        let s =
            Settings::resolve(CrawlDir::new("/c"), &cfg, &section, &RoundFlags::default()).unwrap();
        assert_eq!(s.options.progress_interval, Duration::from_millis(250));
        let flags = RoundFlags {
            options: SegmenterOptions {
                progress_interval: Some(DurationValue(Duration::ZERO)),
                ..SegmenterOptions::default()
            },
            ..RoundFlags::default()
        };
        let s = Settings::resolve(CrawlDir::new("/c"), &cfg, &section, &flags).unwrap();
        assert_eq!(s.options.progress_interval, Duration::ZERO);
        let cfg: CrawlConfig = toml::from_str("[segmenter]\nmemroy = 5\n").unwrap();
        let err = cfg
            .section::<SegmenterOptions>("segmenter", &cfg.segmenter)
            .unwrap_err()
            .to_string();
        assert!(err.contains("memroy"), "{err}");
    }

    #[test]
    fn out_of_range_values_are_usage_errors() {
        let (cfg, section) = config("");
        let bad = with_options(SegmenterOptions {
            bloom_fp: Some(0.7),
            ..SegmenterOptions::default()
        });
        let err = Settings::resolve(CrawlDir::new("/c"), &cfg, &section, &bad).unwrap_err();
        assert_eq!(common::exit::Fault::exit(&err), common::exit::Exit::Usage);
        let bad = with_options(SegmenterOptions {
            memory: Some(SizeValue(100)),
            ..SegmenterOptions::default()
        });
        assert!(Settings::resolve(CrawlDir::new("/c"), &cfg, &section, &bad).is_err());
        for pace in [0.0, 1.5, f64::NAN] {
            let bad = with_options(SegmenterOptions {
                budget_pace: Some(pace),
                ..SegmenterOptions::default()
            });
            let err = Settings::resolve(CrawlDir::new("/c"), &cfg, &section, &bad).unwrap_err();
            assert!(err.to_string().contains("--budget-pace"), "{err}");
        }
        let (cfg, section) = config("[segmenter]\nbudget_pace = 1\n");
        let s =
            Settings::resolve(CrawlDir::new("/c"), &cfg, &section, &RoundFlags::default()).unwrap();
        assert_eq!(s.options.budget_pace, 1.0);
    }

    #[test]
    fn sitemap_settings_default_to_the_protocol_limits() {
        let (cfg, section) = config("");
        let s =
            Settings::resolve(CrawlDir::new("/c"), &cfg, &section, &RoundFlags::default()).unwrap();
        assert_eq!(s.sitemaps, SitemapSettings::default());
        assert_eq!(s.sitemaps.max_entries, 50_000);
        let (cfg, section) = config(
            "[segmenter]\nsitemap_guess = true\nsitemap_max_bytes = \"1KiB\"\n\
             sitemap_max_entries = 5\nsitemap_max_depth = 1\nsitemaps = true\n",
        );
        let flags = with_options(SegmenterOptions {
            sitemaps: Some(false),
            ..SegmenterOptions::default()
        });
        let s = Settings::resolve(CrawlDir::new("/c"), &cfg, &section, &flags).unwrap();
        assert_eq!(
            s.sitemaps,
            SitemapSettings {
                enabled: false,
                guess: true,
                max_depth: 1,
                max_entries: 5,
                max_bytes: 1024,
            }
        );
    }

    #[test]
    fn rules_file_in_config_is_relative_to_the_crawl() {
        let (cfg, section) = config("[scope]\nrules_file = \"scope.rules\"\n");
        let s =
            Settings::resolve(CrawlDir::new("/c"), &cfg, &section, &RoundFlags::default()).unwrap();
        assert_eq!(s.scope.rules_file, Some(PathBuf::from("/c/scope.rules")));
    }
}
