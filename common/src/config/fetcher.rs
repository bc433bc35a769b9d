//! `[fetcher]` of `crawl.toml`: the fetcher's own keys, which are also the
//! flags of `fetcher fetch` (its politeness keys are in
//! [`super::SharedOptions`]). Declared here, in the library both programs
//! share, so that the segmenter checks the section as the fetcher reads it.

use std::path::PathBuf;
use std::time::Duration;

use super::{DurationValue, SizeValue};
use crate::politeness::Policy;

/// How URLs are grouped into politeness queues.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KeyMode {
    /// One queue per host name.
    Host,
    /// One queue per registrable domain (www.example.co.uk → example.co.uk).
    Domain,
    /// One queue per IP address (names are resolved when the segment is loaded).
    Ip,
}

crate::options! {
    /// The settings of `fetcher fetch` that are also keys of the
    /// `[fetcher]` section of `crawl.toml` (`--min-delay` ↔ `min_delay`;
    /// the politeness keys are in [`super::SharedOptions`]); flags override
    /// the file.
    pub struct FetcherOptions => FetcherValues {
        /// Product token sent in User-Agent and matched against robots.txt groups
        /// (required here, in [fetcher] or in [agent] name).
        #[arg(long, value_name = "TOKEN")]
        pub agent_name: Option<String>,
        /// Contact URL sent in User-Agent (required here, in [fetcher] or in [agent] url).
        #[arg(long, value_name = "URL")]
        pub agent_url: Option<String>,
        /// E-mail address of the crawl's operator, sent in a From header with
        /// every request and kept in each WARC file's warcinfo record
        /// (http-header-from); also [agent] from [default: none, no From header].
        #[arg(long, value_name = "EMAIL")]
        pub from: Option<String>,
        /// Longest wait honoured from a Retry-After header [default: 10m].
        #[arg(long, value_name = "DURATION")]
        pub max_retry_after: Option<DurationValue> = Policy::DEFAULT.max_retry_after,
        /// Wait before asking again for a robots.txt that could not be fetched
        /// (5xx, 429, unreachable); after three attempts the host's URLs go to
        /// leftover [default: 60s].
        #[arg(long, value_name = "DURATION")]
        pub robots_retry_delay: Option<DurationValue> = Duration::from_secs(60),
        /// Requests in flight at most (1 to 16384)
        /// [default: 64, more while responses are slow and hosts wait for a
        /// free slot, up to one per queue of the segment and at most 4096].
        #[arg(long, value_name = "N")]
        pub threads: Option<usize>,
        /// Stop after this long from the start; unfetched URLs go to leftover;
        /// 0 for no limit [default: the round time].
        #[arg(long, value_name = "DURATION")]
        pub time_limit: Option<DurationValue>,
        /// End the round early when the hosts that still have work could keep up
        /// less than this share of the pace of all the round's hosts (the others
        /// are done; those left wait for robots.txt retries, Retry-After, long
        /// delays or timeouts) and would need more than --tail-time to finish:
        /// their URLs go to leftover with their not-before times, for the next
        /// round (only once a request of the round has ended). The round also
        /// ends when every host left is held beyond its own delay (a robots.txt
        /// retry, a Retry-After) for longer than --tail-time. 0 turns both off
        /// [default: 0.25].
        #[arg(long, value_name = "SHARE")]
        pub tail_share: Option<f64> = 0.25,
        /// A tail shorter than this is waited for (see --tail-share) [default: 10s].
        #[arg(long, value_name = "DURATION")]
        pub tail_time: Option<DurationValue> = Duration::from_secs(10),
        /// Stop when fewer than N queues still have work; unfetched URLs go to
        /// leftover. Ignored for a segment with fewer than N queues [default: 0,
        /// never].
        #[arg(long, value_name = "N")]
        pub min_hosts: Option<usize> = 0,
        /// Largest body stored, counted as received (transfer and content
        /// codings included); a longer body is stored cut at this size and
        /// marked WARC-Truncated: length. A body under it that decodes to more
        /// (a gzip bomb) is stored whole, noted `too-big` in the crawl log
        /// [default: 10MiB].
        #[arg(long, value_name = "SIZE")]
        pub max_body: Option<SizeValue> = 10 << 20,
        /// WARC bytes this run stores at most: the response that reaches it
        /// is the last stored, the run ends (stop reason `run-bytes`) and
        /// the rest goes to leftover; 0 for no limit [default: no limit].
        #[arg(long, value_name = "SIZE")]
        pub max_run_bytes: Option<SizeValue>,
        /// WARC bytes one queue (a host by default) stores at most in this
        /// run: its other URLs go to leftover for a later round; 0 for no
        /// limit [default: no limit].
        #[arg(long, value_name = "SIZE")]
        pub max_host_round_bytes: Option<SizeValue>,
        /// Connect timeout [default: 10s].
        #[arg(long, value_name = "DURATION")]
        pub connect_timeout: Option<DurationValue> = Duration::from_secs(10),
        /// Time from sending the request to the end of the response head [default: 30s].
        #[arg(long, value_name = "DURATION")]
        pub first_byte_timeout: Option<DurationValue> = Duration::from_secs(30),
        /// Time for a whole request, body included; a slower body is stored cut
        /// and marked WARC-Truncated: time [default: 120s].
        #[arg(long, value_name = "DURATION")]
        pub download_timeout: Option<DurationValue> = Duration::from_secs(120),
        /// Follow redirects within this run, up to N hops (at most 5); targets go
        /// through the scope, trap, robots and duplicate checks [default: 0].
        #[arg(long, value_name = "N")]
        pub follow_redirects: Option<u32> = 0,
        /// A refetched page whose payload is the same as at its last fetch
        /// (same digest) is stored as a WARC revisit record, without the body
        /// [default: true].
        #[arg(long, value_name = "BOOL")]
        pub revisit_identical: Option<bool> = true,
        /// Send a refetch's validators back (If-None-Match, If-Modified-Since)
        /// so that an unchanged page costs a 304. An archival crawl may turn
        /// this off: pywb replays a 304 revisit as an empty page, while an
        /// unchanged 200 is stored as an identical-payload revisit, which
        /// replays (more bytes fetched, none more stored) [default: true].
        #[arg(long, value_name = "BOOL")]
        pub conditional_requests: Option<bool> = true,
        /// Write a WARC metadata record after each response (how the URL was
        /// found, hops, fetch time, the redirect target, the page's links),
        /// as Heritrix does [default: true].
        #[arg(long, value_name = "BOOL")]
        pub metadata_records: Option<bool> = true,
        /// List the links of each 2xx HTML page in its metadata record
        /// (`outlink: URL L a/@href`, canonical, as the segmenter follows
        /// them; costs the fetcher a parse of each page). `false` keeps the
        /// records without the links [default: true].
        #[arg(long, value_name = "BOOL")]
        pub metadata_outlinks: Option<bool> = true,
        /// Politeness queue key [default: host].
        #[arg(long, value_enum)]
        pub key: Option<KeyMode> = KeyMode::Host,
        /// Permit loopback, private, link-local and unspecified addresses.
        #[arg(long)]
        pub allow_private: bool,
        /// Static name → address map in /etc/hosts format (`IP NAME [NAME...]`),
        /// used instead of DNS for the names it lists (a relative path is
        /// relative to the current directory; in crawl.toml, to CRAWL).
        #[arg(long, value_name = "FILE")]
        pub hosts_file: Option<PathBuf>,
        /// Also trust the CA certificates of this PEM file for https (an
        /// intranet's own CA), besides the bundled roots and the system store
        /// (a relative path is relative to the current directory; in
        /// crawl.toml, to CRAWL).
        #[arg(long, value_name = "FILE")]
        pub ca_file: Option<PathBuf>,
        /// ARCHIVAL CRAWLS ONLY: accept any https certificate (unknown issuer,
        /// self-signed, expired, another host's name), as Heritrix does by
        /// default, to record sites whose certificate is invalid. Nothing
        /// fetched can then be trusted to come from the named host; the
        /// warcinfo record of each WARC file says the check was off.
        #[arg(long)]
        pub accept_invalid_certs: bool,
        /// Ask this DNS server (`IP` or `IP:PORT`, port 53 by default) instead of
        /// those of /etc/resolv.conf: for an intranet's own name server, and for
        /// testing [default: the system's name servers].
        #[arg(long, value_name = "ADDR")]
        pub dns_server: Option<String>,
        /// Longest wait for the addresses of a host name; longer is a temporary
        /// `dns` failure, tried again later [default: 5s].
        #[arg(long, value_name = "DURATION")]
        pub dns_timeout: Option<DurationValue> = Duration::from_secs(5),
        /// Longest a DNS answer is kept (less when its TTL says so); "no such
        /// name" is kept a tenth of it at most [default: 30m].
        #[arg(long, value_name = "DURATION")]
        pub dns_cache_ttl: Option<DurationValue> = Duration::from_secs(30 * 60),
        /// DNS lookups in flight at once, on the resolver's own thread (workers
        /// wait for the one lookup of a name they need) [default: 64].
        #[arg(long, value_name = "N")]
        pub dns_concurrency: Option<usize> = 64,
        /// HTTP proxy for every request (`http://[USER:PASSWORD@]HOST:PORT`; http
        /// URLs in absolute form, https by CONNECT), or `none` to ignore the
        /// environment [default:
        /// all_proxy, https_proxy or http_proxy from the environment, upper or
        /// lower case, else none].
        #[arg(long, value_name = "URL")]
        pub proxy: Option<String>,
        /// Comma-separated host names reached without the proxy (each with the
        /// names under it; `*` for all) [default: no_proxy from the environment].
        #[arg(long, value_name = "NAMES")]
        pub no_proxy: Option<String>,
        /// Drop a host for this run after N consecutive failures (timeouts,
        /// refused connections, 5xx, 429; failures of earlier runs with no
        /// success since count too); its other URLs go to leftover, untried
        /// (they use no retry) [default: 5].
        #[arg(long, value_name = "N")]
        pub max_failures: Option<u32> = Policy::DEFAULT.max_failures,
        /// Start a new WARC file when one reaches this size [default: 1GB].
        #[arg(long, value_name = "SIZE")]
        pub warc_max_size: Option<SizeValue> = crate::warc::DEFAULT_MAX_FILE_SIZE,
        /// Upload each WARC file and its CDXJ index, once closed, to this
        /// object store: s3://BUCKET/PREFIX (S3 and compatible stores; keys,
        /// endpoint and region from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
        /// AWS_ENDPOINT_URL, AWS_REGION, AWS_ALLOW_HTTP... or the AWS
        /// profile files) or file:///PATH. Each upload is recorded in
        /// fetched/ID/uploads.v1.tsv, then the local copy is removed; DONE
        /// is written once every file is uploaded [default: none, the files
        /// stay in fetched/ID/].
        #[arg(long, value_name = "URL")]
        pub warc_store: Option<String>,
        /// Keep the local copy of each file uploaded to --warc-store
        /// [default: false].
        #[arg(long, value_name = "BOOL")]
        pub warc_store_keep_local: Option<bool> = false,
        /// Retry a failed upload, with backoff, for this long; then the run
        /// ends with exit code 4, its files kept locally and no DONE (run
        /// the fetch again to upload them) [default: 5m].
        #[arg(long, value_name = "DURATION")]
        pub warc_store_retry: Option<DurationValue> = Duration::from_secs(5 * 60),
        /// Deflate level of the WARC records' gzip members (libdeflate's),
        /// 0 (stored) to 9 (smallest); 3 or 4 take about a quarter more CPU
        /// than 1 for files 1-2 % smaller [default: 1].
        #[arg(long, value_name = "N")]
        pub warc_level: Option<u32> = crate::warc::DEFAULT_COMPRESSION_LEVEL,
        /// URLs of one queue held in memory at once; the rest are read from the
        /// segment when needed [default: 16].
        #[arg(long, value_name = "N")]
        pub queue_batch: Option<usize> = 16,
        /// When stopping, wait at most this long for requests in flight before
        /// abandoning them. After a signal they go back to leftover untried; at
        /// the end of a round (tail, time limit, min-hosts) one that got no
        /// answer counts as a timeout, and hosts that already failed in the run
        /// are not waited for [default: 10s].
        #[arg(long, value_name = "DURATION")]
        pub stop_grace: Option<DurationValue> = Duration::from_secs(10),
        /// A plain progress line this often, on stderr unless it shows the
        /// live line, and in the log; 0 for none [default: 10s]
        #[arg(long, value_name = "DURATION")]
        pub progress_interval: Option<DurationValue> = crate::progress::DEFAULT_INTERVAL,
    }
}
