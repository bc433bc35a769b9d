//! The command line. Doc comments here are the `--help` text; values are
//! parsed into types before anything runs, and turned into validated
//! [`crate::settings::Settings`] together with `crawl.toml`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};
use common::config::SharedOptions;
use common::progress::ProgressArgs;

/// Fetches one segment of a crawl politely into WARC files.
///
/// Every host of the segment is active at once, with at most one request in
/// flight per host and never sooner than that host's delay allows. Output goes
/// to CRAWL/fetched/ID/: WARC files, crawl.log, leftover.v5.tsv.zst,
/// stats.json and DONE (written last).
///
/// Exit codes: 0 run complete (also after a tail, time-limit, min-hosts, disk or
/// byte-budget stop), 1 error, 2 usage or configuration error, 3 not started:
/// free disk below min_free_disk (nothing changed), 130 stopped by SIGINT/SIGTERM
/// after a clean shutdown, 131 a second signal (exited at once; run `fetch`
/// again to resume).
#[derive(Debug, Parser)]
#[command(name = "fetcher", version, max_term_width = 100)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Fetch one segment (default: the oldest pending one).
    ///
    /// Writes CRAWL/fetched/ID/: WARC files, crawl.log (one line per URL
    /// attempted), leftover.v5.tsv.zst (URLs not fetched, for the next
    /// segment), stats.json and DONE (last). A run that was killed is
    /// resumed by running the same command again: nothing stored is
    /// fetched twice.
    ///
    /// Every option can also be set in the [fetcher] section of
    /// CRAWL/crawl.toml (`--min-delay 2s` is `min_delay = "2s"`); flags
    /// win. DURATION is `250ms`, `5s`, `10m` or a number of seconds; SIZE is
    /// `512KiB`, `10MiB`, `1GB` or a number of bytes.
    ///
    /// A round ends when every URL is done, when continuing would mostly wait
    /// (see --tail-share), at --time-limit (by default the round time), when
    /// fewer than --min-hosts hosts have work, or on SIGINT/SIGTERM. No host
    /// is asked sooner than its delay after its previous request, whatever
    /// runs came in between: the next allowed contact of every host is kept
    /// in CRAWL/hosts.db.
    ///
    /// Exit codes: 0 run complete (also after a tail, time-limit, min-hosts, disk
    /// or byte-budget stop: see stop_reason in DONE), 1 error (rerun to resume),
    /// 2 usage or configuration error, 3 not started: free disk below
    /// min_free_disk (nothing changed; the message says how much to free), 130
    /// stopped by SIGINT/SIGTERM (DONE written, the rest in leftover), 131
    /// a second signal (exited at once; rerun to resume).
    #[command(args_override_self = true)]
    Fetch(Box<FetchArgs>),
    /// Summary of a segment or leftover file.
    Inspect(InspectArgs),
    /// What fetching a segment has done so far: complete or not, why it
    /// ended, pages, errors (from CRAWL/fetched/ID/).
    ///
    /// Keys: segment, done (DONE written), stop_reason (complete, tail,
    /// held, time-limit, min-hosts, signal, disk, run-bytes, crawl-bytes;
    /// empty until done), stop_detail (what a disk or budget stop says),
    /// cuts (URLs a byte budget or the disk floor sent to leftover, as
    /// `reason=N` words), attempts
    /// (crawl-log lines), pages (HTTP responses other than robots.txt),
    /// robots, errors (no HTTP response), bad_lines (unreadable crawl-log
    /// lines), uploaded (files uploaded to the WARC store, from
    /// fetched/ID/uploads.v1.tsv). The crawl log counts every run of the
    /// segment. With --json,
    /// one line holding a flat JSON object, for scripts (scripts/crawl.sh).
    Status(StatusArgs),
    /// The long flags of `fetch`, one per line (`--name=` when it takes a
    /// value), for scripts that pass flags on (scripts/crawl.sh).
    #[command(hide = true)]
    Flags,
}

/// `--name=` / `--name` lines for the flags of `fetch` (see [`Command::Flags`]).
pub fn fetch_flags() -> String {
    use clap::CommandFactory;
    let cli = Cli::command();
    let fetch = cli.find_subcommand("fetch").expect("fetch is a subcommand");
    common::config::flag_list(
        fetch
            .get_arguments()
            .filter_map(|a| Some((a.get_long()?, a.get_action().takes_values())))
            // The driver's own: it names its round's log.
            .filter(|(name, _)| *name != "log"),
    )
}

/// `fetcher inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// A segment or leftover file (`*.v5.tsv.zst`, or an older `*.v4.tsv.zst`, `*.v3.tsv.zst`, `*.v2.tsv.zst`, `*.v1.tsv.zst`).
    pub file: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `fetcher status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The crawl directory.
    pub crawl: PathBuf,
    /// The segment (e.g. 00003).
    pub segment: String,
    /// Print one line of JSON instead of `key: value` lines.
    #[arg(long)]
    pub json: bool,
}

/// `fetcher fetch`.
#[derive(Debug, Args)]
pub struct FetchArgs {
    /// The crawl directory.
    pub crawl: PathBuf,
    /// Segment to fetch (e.g. 00003); default: the oldest without fetched/ID/DONE.
    pub segment: Option<String>,
    /// Shard J of a sharded crawl (`segmenter inject --shards`): fetch its
    /// segment, touching only CRAWL/shards/JJJ/ (required for a sharded
    /// crawl; 0 or none for one that is not).
    #[arg(long, value_name = "J")]
    pub shard: Option<u32>,
    /// The settings shared with the segmenter.
    #[command(flatten)]
    pub shared: SharedOptions,
    /// The fetcher's own settings.
    #[command(flatten)]
    pub options: FetcherOptions,
    /// `--progress`.
    #[command(flatten)]
    pub progress: ProgressArgs,
    /// Append the run's log to FILE instead of a new
    /// CRAWL/logs/fetcher-TIMESTAMP.log (scripts/crawl.sh gives its round's
    /// log); when stderr is FILE too, each line is written once
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
}

/// The settings of `fetcher fetch` that are also keys of `[fetcher]`: one
/// list in `common`, so that the segmenter checks that section too.
pub use common::config::fetcher::FetcherOptions;
