//! `[segmenter]` of `crawl.toml`: the segmenter's keys, which are also the
//! flags of `segmenter inject` and `segmenter run`. Declared here, in the
//! library both programs share, so that the fetcher checks the section as
//! the segmenter reads it.

use std::num::{NonZeroU32, NonZeroU64, NonZeroUsize};
use std::time::Duration;

use super::{DurationValue, SizeValue};

/// Which of a host's waiting URLs enter a round first when more wait than
/// its cap lets in (`[segmenter] order`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UrlOrder {
    /// Fewest hops from a seed first (each host crawled breadth-first),
    /// then most in-links, then the URL.
    #[default]
    Discovery,
    /// Most in-links first (the links to the URL the scans found, counted
    /// across rounds), then fewest hops, then the URL; also across hosts,
    /// where the round's size or the crawl's page budget cuts.
    Score,
}

/// Starting design load of `seen.bloom` (`bloom_items`): 1.2 MB at 1 %,
/// which fits a small disk and a small crawl; a larger crawl's filter
/// grows by doubling, each growth reading the exact sets once (see
/// docs/benchmarks.md for what the growths of a crawl to 10 M URLs cost).
pub const DEFAULT_BLOOM_ITEMS: u64 = 1_000_000;

/// `n` days.
const fn days(n: u64) -> Duration {
    Duration::from_secs(n * 86_400)
}

crate::options! {
    /// The settings of `inject` and `run` that are also keys of the
    /// `[segmenter]` section of `crawl.toml` (`--max-per-host` ↔
    /// `max_per_host`); flags override the file.
    pub struct SegmenterOptions => SegmenterValues {
        /// Memory for sorting; above it, sorted runs are spilled to disk
        /// (zstd-compressed) and merged [default: 512MB]
        #[arg(long, value_name = "SIZE", help_heading = "Resources")]
        pub memory: Option<SizeValue> = 512_000_000,
        /// Worker threads [default: the number of CPUs]
        #[arg(long, value_name = "N", help_heading = "Resources")]
        pub threads: Option<NonZeroUsize>,
        /// A plain progress line this often (pages, MB of HTML, links, URLs
        /// selected), on stderr unless it shows the live line, and in the
        /// log; 0 for none [default: 10s]
        #[arg(long, value_name = "DURATION", help_heading = "Resources")]
        pub progress_interval: Option<DurationValue> = crate::progress::DEFAULT_INTERVAL,
        /// At most N URLs of one host per segment; the others wait in the
        /// backlog for a later round [default: 1000]
        #[arg(long, value_name = "N", help_heading = "Segments")]
        pub max_per_host: Option<NonZeroU64> = 1000,
        /// Which of a host's URLs enter a segment first when more wait than
        /// fit: `discovery` (fewest hops from a seed, then most in-links) or
        /// `score` (most in-links, then fewest hops) [default: discovery]
        #[arg(long, value_enum, value_name = "ORDER", help_heading = "Segments")]
        pub order: Option<UrlOrder> = UrlOrder::Discovery,
        /// At most N URLs of one host over the whole crawl (the URLs of its
        /// fetch history, and those a round schedules): the others wait in
        /// the backlog, counted as `held host-pages`; refetches are not
        /// limited; 0 for no limit [default: no limit]
        #[arg(long, value_name = "N", help_heading = "Segments")]
        pub max_host_pages: Option<u64>,
        /// The same for all the hosts of one registrable domain together
        /// (`held domain-pages`) [default: no limit]
        #[arg(long, value_name = "N", help_heading = "Segments")]
        pub max_domain_pages: Option<u64>,
        /// At most N URLs over the whole crawl (the URLs of its fetch
        /// history, those waiting in segments not yet fetched, and those a
        /// round schedules): the others wait in the backlog, the best by
        /// `order` scheduled first (`cut crawl-pages`); refetches are not
        /// limited; in a sharded crawl, per shard; 0 for no limit [default: no limit]
        #[arg(long, value_name = "N", help_heading = "Segments")]
        pub max_crawl_pages: Option<u64>,
        /// With `order = score` and a page budget, the share of what is left
        /// of it that one round may schedule (at least a sixteenth of the
        /// budget), so that the budget is spent over rounds that each
        /// choose with the in-links learned so far; 1 spends what is left
        /// at once [default: 0.5]
        #[arg(long, value_name = "SHARE", help_heading = "Segments")]
        pub budget_pace: Option<f64> = 0.5,
        /// At most N URLs per segment; a round with more writes several
        /// segments with consecutive IDs (with `order = score`, the round
        /// holds N × partitions URLs at most, its best by score, and the
        /// others wait in the backlog: `cut segment-size`) [default: 1000000]
        #[arg(long, value_name = "N", help_heading = "Segments")]
        pub max_segment_size: Option<NonZeroU64> = 1_000_000,
        /// Split each round into N segments by a hash of the host
        /// (ID-p01 ... ID-pNN), one per fetcher machine [default: 1]
        #[arg(long, value_name = "N", help_heading = "Segments")]
        pub partitions: Option<NonZeroU32> = 1,
        /// Starting design load of seen.bloom: the filter grows (doubling,
        /// rebuilt from the crawl's history, backlog and segments) before it
        /// holds more; a value larger than an existing filter's grows it at
        /// the next round [default: 1000000]
        #[arg(long, value_name = "N", help_heading = "Dedup")]
        pub bloom_items: Option<u64> = DEFAULT_BLOOM_ITEMS,
        /// False-positive rate of seen.bloom at its design load, kept by
        /// every growth; only used when the file is created [default: 0.01]
        #[arg(long, value_name = "RATE", help_heading = "Dedup")]
        pub bloom_fp: Option<f64> = 0.01,
        /// A URL that failed in this many rounds is not retried in the next
        /// one: it is kept in the fetch history as `failed`, due again at
        /// --recrawl-failed [default: 3]
        #[arg(long, value_name = "N", help_heading = "Dedup")]
        pub max_tries: Option<u32> = 3,
        /// Most links taken from one page [default: 1000]
        #[arg(long, value_name = "N", help_heading = "Extraction")]
        pub max_links_per_page: Option<NonZeroUsize> = 1000,
        /// Larger stored responses are reported and skipped [default: 16MiB]
        #[arg(long, value_name = "SIZE", help_heading = "Extraction")]
        pub max_page_size: Option<SizeValue> = 16 << 20,
        /// Take a page's links from its WARC metadata record when the
        /// fetcher listed them there (`crawlLinks`) and they are what
        /// parsing the page would give, instead of parsing it (measured to
        /// save nothing: see the guide) [default: false]
        #[arg(long, value_name = "BOOL", help_heading = "Extraction")]
        pub metadata_outlinks: Option<bool> = false,
        /// After each round, write the Parquet index of the WARC files of
        /// the runs it consumed (NAME.parquet beside each; see `segmenter
        /// research`) [default: false]
        #[arg(long, value_name = "BOOL", help_heading = "Research outputs")]
        pub research_index: Option<bool> = false,
        /// After each round, write their WET files (the visible text of
        /// each HTML page, NAME.warc.wet.gz) [default: false]
        #[arg(long, value_name = "BOOL", help_heading = "Research outputs")]
        pub research_wet: Option<bool> = false,
        /// After each round, write their WAT files (the JSON metadata of
        /// each record, NAME.warc.wat.gz) [default: false]
        #[arg(long, value_name = "BOOL", help_heading = "Research outputs")]
        pub research_wat: Option<bool> = false,
        /// A fetched URL is due again this long after its first fetch
        /// (`30d`, `12h`, `2s`) [default: 30d]
        #[arg(long, value_name = "DURATION", help_heading = "Recrawl")]
        pub recrawl_interval: Option<DurationValue> = days(30),
        /// Shortest refetch interval: a page that changes at every fetch
        /// halves its interval down to this [default: 1d]
        #[arg(long, value_name = "DURATION", help_heading = "Recrawl")]
        pub recrawl_min: Option<DurationValue> = days(1),
        /// Longest refetch interval: a page that does not change grows its
        /// interval by half at each fetch up to this [default: 365d]
        #[arg(long, value_name = "DURATION", help_heading = "Recrawl")]
        pub recrawl_max: Option<DurationValue> = days(365),
        /// A URL answered 404 or 410 this many times in a row is retired
        /// (never fetched again) [default: 3]
        #[arg(long, value_name = "N", help_heading = "Recrawl")]
        pub recrawl_gone_after: Option<NonZeroU32> = 3,
        /// A URL whose retries ran out (--max-tries) is due again this long
        /// after, so that a host that comes back is crawled again [default: 7d]
        #[arg(long, value_name = "DURATION", help_heading = "Recrawl")]
        pub recrawl_failed: Option<DurationValue> = days(7),
        /// The share of a host's URLs in a segment that goes to refetches
        /// when it has more new and due URLs than its share of the round
        /// (0 to 1; either side takes what the other leaves) [default: 0.5]
        #[arg(long, value_name = "SHARE", help_heading = "Recrawl")]
        pub recrawl_share: Option<f64> = 0.5,
        /// Read sitemaps: schedule the `Sitemap:` URLs of robots.txt files
        /// and read what sitemaps list (`false`: sitemap files are treated
        /// as any other response) [default: true]
        #[arg(long, value_name = "BOOL", help_heading = "Sitemaps")]
        pub sitemaps: Option<bool> = true,
        /// Also schedule `/sitemap.xml` of a host whose robots.txt names no
        /// sitemap. Off by default: most such hosts answer 404, one wasted
        /// request per host [default: false]
        #[arg(long, value_name = "BOOL", help_heading = "Sitemaps")]
        pub sitemap_guess: Option<bool> = false,
        /// Sitemap levels followed from robots.txt: 2 reads an index and the
        /// sitemaps it lists, but not the sitemaps of an index listed in an
        /// index; 1 reads only the files robots.txt names [default: 2]
        #[arg(long, value_name = "N", help_heading = "Sitemaps")]
        pub sitemap_max_depth: Option<NonZeroU32> = 2,
        /// Most URLs read from one sitemap file; the rest are counted as
        /// over the limit [default: 50000, the protocol's limit]
        #[arg(long, value_name = "N", help_heading = "Sitemaps")]
        pub sitemap_max_entries: Option<NonZeroUsize> = 50_000,
        /// Most bytes of one sitemap file read (after gzip decompression);
        /// the rest is counted as over the limit [default: 50MiB, the
        /// protocol's limit]
        #[arg(long, value_name = "SIZE", help_heading = "Sitemaps")]
        pub sitemap_max_bytes: Option<SizeValue> = 50 << 20,
    }
}
