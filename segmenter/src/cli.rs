//! The command line. Doc comments here are the `--help` text; every flag of
//! `inject` and `run` is also a key of `crawl.toml` (`--max-per-host` ↔
//! `max_per_host` in `[segmenter]`, the scope and filter flags in `[scope]`
//! and `[filter]`), and flags win over the file.

use std::num::NonZeroUsize;
use std::path::PathBuf;

use clap::{Parser, Subcommand};
use common::config::{DurationValue, SharedOptions, SizeValue};

/// Builds the next segments of a crawl from what the fetcher downloaded.
///
/// `run` reads every complete fetched run (`fetched/ID/DONE`) not yet
/// consumed: links of HTML pages, redirect targets, the leftover and retry
/// lists, and the backlog. It canonicalizes, filters, drops URLs seen before
/// (`seen.bloom`), caps URLs per host, sorts by domain and writes
/// `segments/ID.v5.tsv.zst`. The new segments, `seen.bloom`,
/// `backlog.v5.tsv.zst` and `consumed.txt` change together or not at all.
#[derive(Debug, Parser)]
#[command(
    name = "segmenter",
    version,
    max_term_width = 100,
    after_long_help = "Every flag of inject and run is also a key of CRAWL/crawl.toml \
        ([segmenter], [scope] or [filter]; --max-per-host is max_per_host); flags win.\n\
        Exit codes: 0 done (also when there was nothing to do: it says why), \
        1 error, 2 usage or configuration error, 3 not enough free disk space for \
        the round above min_free_disk (nothing changed; the message says how much to free)."
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write a first segment from a seeds file (creates CRAWL if needed).
    ///
    /// SEEDS_FILE holds one URL per line; `#` starts a comment. Bad lines are
    /// reported with their line number and skipped. Seeds go through the same
    /// canonical form, filters and dedup as links; their registrable domains
    /// are added to CRAWL/scope.seeds (the default scope).
    ///
    /// With --shards S (S > 1, only when the crawl is created) the crawl is
    /// split into S shards for S machines: CRAWL/shards.toml records S and
    /// the key, and shard J's state lives in CRAWL/shards/JJJ/, laid out
    /// like a crawl directory; each seed goes to its shard's first segment.
    Inject {
        /// The crawl directory.
        crawl: PathBuf,
        /// The seeds file.
        #[arg(value_name = "SEEDS_FILE")]
        seeds: PathBuf,
        /// Split the crawl into S shards (fixed when it is created) [default: 1]
        #[arg(long, value_name = "S")]
        shards: Option<u32>,
        /// What a URL's shard is a hash of: its host, or its registrable
        /// domain (for a crawl whose fetcher queues by domain) [default: host]
        #[arg(long, value_name = "KEY", requires = "shards")]
        key: Option<common::shards::ShardKey>,
        /// Settings shared with `run`.
        #[command(flatten)]
        flags: RoundFlags,
    },
    /// Write a segment from WARC files of any tool (creates CRAWL if needed).
    ///
    /// Reads FILE... as `run` reads a fetched run's WARC files (`.warc.gz`,
    /// one gzip member per record or for the whole file, or uncompressed;
    /// `response` records and `resource` records of pages; damage is
    /// skipped and reported): the links and redirects of the pages become
    /// candidates through the same canonical form, filters and dedup as in
    /// every round; the pages' own URLs are recorded in CRAWL/seen.bloom as
    /// fetched and never scheduled. In the default scope mode the
    /// registrable domains of the pages are the scope and are added to
    /// CRAWL/scope.seeds (the files are read twice: domains, then links).
    /// The backlog is carried over; the files are not changed or moved.
    Import {
        /// The crawl directory.
        crawl: PathBuf,
        /// WARC files (any name), or objects of an object store
        /// (s3://BUCKET/KEY, credentials from the AWS_* environment as for
        /// the fetcher's --warc-store), read from temporary copies.
        #[arg(value_name = "FILE", required = true)]
        files: Vec<PathBuf>,
        /// Settings shared with `run`.
        #[command(flatten)]
        flags: RoundFlags,
    },
    /// Consume every complete fetched run and write the next segment(s).
    ///
    /// Reads every fetched run with a `DONE` file (`fetched/ID/DONE`) that
    /// CRAWL/consumed.txt does not list: the links and redirects in its WARC
    /// files and its leftover list; and the backlog. With no new fetched run,
    /// the backlog becomes a segment only if no segment waits to be fetched.
    /// The report (`key: value` lines) goes to stderr and to
    /// CRAWL/logs/segmenter-TIMESTAMP.log.
    Run {
        /// The crawl directory.
        crawl: PathBuf,
        /// Settings shared with `inject`.
        #[command(flatten)]
        flags: RoundFlags,
    },
    /// Map step of a sharded crawl's round: read shard J's new fetched runs
    /// and route what they found to the shards it belongs to.
    ///
    /// Reads every complete fetched run of CRAWL/shards/JJJ/ not mapped yet
    /// (its WARC files, leftover list and crawl log), once: links,
    /// redirects, sitemaps and re-entering URLs go through the canonical
    /// form and the scope and trap filters, and are written, sorted, into
    /// fetched/ID/mapped/to-KKK.cand3.zst for each destination shard K,
    /// with what the fetches say for shard J's history; the marker
    /// mapped/DONE comes last. Writes nothing else. Rerun after a kill: it
    /// does the run again.
    Map {
        /// The crawl directory.
        crawl: PathBuf,
        /// The shard (required for a sharded crawl).
        #[arg(long, value_name = "J")]
        shard: Option<u32>,
        /// Settings shared with `run`.
        #[command(flatten)]
        flags: RoundFlags,
    },
    /// Reduce step of a sharded crawl's round: write shard J's next
    /// segment from what every shard's map addressed to it.
    ///
    /// Reads every map output for shard J (fetched/ID/mapped/to-JJJ.cand3.zst
    /// of every shard; .cand2.zst, .cand1.zst from an older build) not listed in CRAWL/shards/JJJ/consumed.txt, drops
    /// the URLs shard J has seen, and does the rest of a `run` round on
    /// shard J: backlog, due refetches, history, caps, plan, segments;
    /// committed all or nothing.
    Reduce {
        /// The crawl directory.
        crawl: PathBuf,
        /// The shard (required for a sharded crawl).
        #[arg(long, value_name = "J")]
        shard: Option<u32>,
        /// Settings shared with `run`.
        #[command(flatten)]
        flags: RoundFlags,
    },
    /// The long flags of `run` and `inject`, one per line (`--name=` when
    /// it takes a value), for scripts that pass flags on (scripts/crawl.sh).
    #[command(hide = true)]
    Flags,
    /// Where the crawl stands: segments, those still to fetch, fetched runs
    /// not yet consumed, URLs in the backlog, the seen-set.
    ///
    /// Keys: segments (every segment, oldest first), pending (not fetched to
    /// completion), next (the segment `fetcher fetch` takes next; empty if
    /// none), unconsumed (complete fetched runs that `run` has not read
    /// yet), backlog_urls (`?`, or null, if the backlog cannot be read),
    /// history_urls and due_urls (URLs in the fetch history, and those due
    /// for a refetch now); bloom_* (seen.bloom: items, design load, bytes,
    /// journal hashes, fill, estimated and target false-positive rates,
    /// URLs rescued over the crawl); last_round and round_* (what the last
    /// `run`, or a shard's last `reduce`, found: new URLs, rescued URLs, how it wrote seen.bloom,
    /// history, sitemaps, retries exhausted, URLs held by budgets and
    /// backoff, links over the page cap, URLs refused for their extension;
    /// from its logs/segmenter-TIMESTAMP.json, null before the first run).
    /// With --json, one line holding a flat JSON object, for scripts
    /// (scripts/crawl.sh). Only reads.
    Status {
        /// The crawl directory.
        crawl: PathBuf,
        /// One shard of a sharded crawl (without it: every shard in turn;
        /// with --json, one object holding `per_shard`, a list).
        #[arg(long, value_name = "J")]
        shard: Option<u32>,
        /// Print one line of JSON instead of `key: value` lines.
        #[arg(long)]
        json: bool,
        /// Do not count the backlog's and the history's URLs (which reads
        /// both files): `backlog_urls`, `history_urls` and `due_urls` are
        /// then `null` (`?` in text).
        #[arg(long)]
        no_backlog: bool,
        /// Instead of the crawl's status: the rules of host-rules.toml that
        /// apply to HOST, most specific first, and each setting's value for
        /// it with where it comes from (a rule's line, or the crawl-wide
        /// setting). Keys read but not applied yet are marked so.
        #[arg(long, value_name = "HOST", conflicts_with_all = ["shard", "no_backlog"])]
        host: Option<String>,
    },
    /// Write an HTML report of the crawl: one self-contained file with charts.
    ///
    /// Shows the crawl over its rounds (pages, pages/s, time, new URLs,
    /// backlog, due refetches, cumulative pages and bytes), outcomes (status
    /// codes and errors per round, media types, bytes, unchanged and changed
    /// refetches), hosts (top by pages, errors, Crawl-delay, held; robots.txt
    /// states; pages per host; the backlog's largest hosts), politeness (the
    /// smallest gap between requests to each host against its delay, held
    /// hosts per round), state health (seen-set fill and false positives,
    /// when URLs come due, damaged files, sitemaps) and links to the logs.
    /// Reads the round journal, the round reports in logs/, each fetched
    /// run's stats.json, the crawl.log of the last 20 rounds, hosts.db (read
    /// only) and what `status` counts; never a WARC file. Missing or damaged
    /// files are named on the page. No script, no font and no link outside
    /// the file: it opens anywhere. Written to a temporary file and renamed;
    /// prints its path, size and build time. scripts/crawl.sh rebuilds it
    /// after every round.
    Report {
        /// The crawl directory.
        crawl: PathBuf,
        /// Where to write the page [default: CRAWL/report.html].
        #[arg(long, value_name = "PATH")]
        out: Option<PathBuf>,
    },
    /// What the crawl does next, and why: the decisions of the crawl cycle,
    /// for drivers (scripts/crawl.sh) and for a look by hand.
    ///
    /// Prints one line, `ACTION ARG LOG REASON` (ARG and LOG one word each,
    /// `-` for none; LOG relative to CRAWL): `inject - logs/inject.log ...`,
    /// `injected N - ...`, `fetch ID LOG ...` or `resume ID LOG ...` (run
    /// `fetcher fetch CRAWL ID`), `segment - LOG ...` (run `segmenter run
    /// CRAWL`), `wait SECONDS LOG ...` (every host left is held), `round N -
    /// ROUND LINE` (round N ended), `stop CODE - ...` (stop; exit with
    /// CODE). Without --record it only reads. A driver calls it with
    /// --record --since (when it started) between its steps, with
    /// --exit-code of the step it ran: the step handed out is kept in
    /// CRAWL/round.json, each round that ends is appended to
    /// CRAWL/rounds.v1.tsv, which numbers the rounds, and the metrics file
    /// is rewritten (see `segmenter metrics`). For a sharded crawl it
    /// answers for every shard (scripts/slurm/crawl.sh): `fetch`/`resume`
    /// is the fetch array, `reduce - LOG ...` the reduce array; with
    /// --shard J, for shard J alone (scripts/task.sh asks it what to
    /// fetch).
    Next {
        /// The crawl directory.
        crawl: PathBuf,
        /// Record the step handed out and the round that ends (the
        /// driver's call).
        #[arg(long)]
        record: bool,
        /// When the driver started, in seconds since 1970 (bash's
        /// $EPOCHREALTIME): steps and rounds since are its own [default:
        /// now, as a driver that starts now]
        #[arg(long, value_name = "SECONDS", value_parser = crate::phase::parse_since)]
        since: Option<i64>,
        /// The exit code of the step the driver ran last.
        #[arg(
            long,
            value_name = "CODE",
            default_value_t = 0,
            allow_negative_numbers = true
        )]
        exit_code: i32,
        /// Shard J of a sharded crawl alone: the same rules over its
        /// segments, runs, backlog and history, with the crawl's round
        /// journal and round.json (only reads: the round is the whole
        /// crawl's to record).
        #[arg(long, value_name = "J", conflicts_with = "record")]
        shard: Option<u32>,
        /// Print one JSON object instead of the line.
        #[arg(long)]
        json: bool,
    },
    /// Write the crawl's metrics file for a monitoring system: where the
    /// crawl stands between steps, in Prometheus' text format.
    ///
    /// Writes crawl-NAME.cycle.prom into [crawl] metrics_dir (default
    /// CRAWL/metrics/; NAME is [crawl] metrics_name, by default the crawl
    /// directory's name), atomically: the phase (the step the driver is
    /// at), the round, segments and URLs waiting (per shard), the STOP
    /// file, free disk space against min_free_disk. `next --record`
    /// writes it at every step of scripts/crawl.sh and
    /// scripts/slurm/crawl.sh; the latter runs this command when it ends
    /// otherwise (interrupted, an sbatch that failed). The fetcher writes
    /// its own file while it runs (crawl-NAME.fetch.prom).
    Metrics {
        /// The crawl directory.
        crawl: PathBuf,
        /// The step the driver is at [default: the step round.json last
        /// recorded; idle for a sharded crawl]
        #[arg(long, value_enum, value_name = "PHASE")]
        phase: Option<crate::phase::Phase>,
        /// When the driver started, in seconds since 1970 (bash's
        /// $EPOCHREALTIME) [default: not said]
        #[arg(long, value_name = "SECONDS", value_parser = crate::phase::parse_since)]
        since: Option<i64>,
        /// Print the file's text on stdout instead of writing the file.
        #[arg(long)]
        print: bool,
    },
    /// Remove the logs and the spent files older than the retention.
    ///
    /// The retention is --keep-logs, else [crawl] keep_logs in crawl.toml,
    /// else 30d; 0 keeps everything. Logs: round-NNNNN.log, inject.log,
    /// fetcher-*.log, segmenter-*.log and segmenter-*.json in CRAWL/logs/
    /// whose last write is older; the log of the round in progress and the
    /// newest report of a `run` are kept, other files never touched. Spent
    /// files, of the fetched runs consumed whose DONE is older: the run's
    /// segment, its leftover list, lock file and map outputs, and the whole
    /// run of a fetch that stored nothing; never a WARC file, its CDXJ
    /// index, nor the crawl.log and stats.json of a run that stored pages;
    /// the newest segment and the round in progress are kept.
    /// scripts/crawl.sh runs it once per run.
    Prune {
        /// The crawl directory.
        crawl: PathBuf,
        /// Keep the logs written and the runs fetched in this time (`30d`,
        /// `12h`; 0 keeps all) [default: 30d]
        #[arg(long, value_name = "DURATION")]
        keep_logs: Option<DurationValue>,
        /// Say what would be removed, remove nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Check every state file; with --accept-loss, replace the damaged ones.
    ///
    /// Checks CRAWL/scope.seeds, consumed.txt, the backlog, seen.bloom,
    /// hosts.db, the segments waiting to be fetched and the .prev files as
    /// the programs that read them do, and prints one line per file: sound, missing or
    /// DAMAGED (what is wrong). Without --accept-loss it changes nothing and
    /// exits 1 if a file is damaged. Takes the segmenter's lock and refuses
    /// to run while scripts/crawl.sh runs.
    Repair {
        /// The crawl directory.
        crawl: PathBuf,
        /// Replace each damaged file, keeping it as NAME.damaged: by its
        /// previous generation (NAME.prev) if that is sound; else the
        /// backlog and segments keep the URLs that still decode,
        /// consumed.txt is reset to empty (every fetched run is read
        /// again), the history keeps the generations that read whole (the
        /// next round reads the consumed runs under them), seen.bloom is
        /// rebuilt from the history, the backlog and
        /// the segments not yet consumed, hosts.db is moved away (created
        /// anew).
        /// A damaged .prev is moved away. Each line says what is lost.
        /// scope.seeds without a sound .prev is left for you (exit 1).
        #[arg(long)]
        accept_loss: bool,
    },
    /// Merge the CDXJ indexes of the crawl's WARC files into one sorted
    /// index (default CRAWL/index.cdxj), for pywb or a lookup.
    ///
    /// The fetcher writes NAME.cdxj beside each WARC file it closes. Each
    /// WARC file of the complete runs taken that has no index, or one older
    /// than itself (a crawl made before the indexes, a repaired file), is
    /// read and indexed first. The lines are those of `cdxj-indexer`
    /// (pywb's format: SURT, 14-digit time, JSON); the merge keeps one line
    /// of each index in memory. Only reads the WARC files.
    Index {
        /// The crawl directory.
        crawl: PathBuf,
        /// The fetched runs to take: FIRST..LAST (both included), FIRST..,
        /// ..LAST or one ID [default: every complete run].
        #[arg(long, value_name = "RANGE")]
        rounds: Option<String>,
        /// Where to write the merged index [default: CRAWL/index.cdxj].
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Package the crawl (or some rounds) as a WACZ 1.1.1 file, the format
    /// ReplayWeb.page opens and web archives exchange.
    ///
    /// The package holds archive/ (the WARC files, stored as they are),
    /// indexes/index.cdxj (their indexes merged, as `index` makes it),
    /// pages/pages.jsonl (one line per 2xx HTML page: url, ts, title) and
    /// datapackage.json with each file's sha256 and size, then
    /// datapackage-digest.json. Written as a stream under FILE.part and
    /// renamed into place; `wacz validate -f FILE` accepts it.
    Wacz {
        /// The crawl directory.
        crawl: PathBuf,
        /// The package to write (a .wacz file).
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
        /// The fetched runs to take: FIRST..LAST (both included), FIRST..,
        /// ..LAST or one ID [default: every complete run].
        #[arg(long, value_name = "RANGE")]
        rounds: Option<String>,
        /// The package's title [default: the crawl directory's name].
        #[arg(long)]
        title: Option<String>,
    },
    /// Write the research outputs of the crawl's fetched runs: a Parquet
    /// index of every capture, WET text and WAT metadata files.
    ///
    /// Beside each WARC file NAME.warc.gz of the complete runs taken:
    /// NAME.parquet (one row per response or revisit record, with the
    /// columns of Common Crawl's columnar index: URL, SURT key, host parts,
    /// fetch time and status, declared and detected MIME type, charset,
    /// languages, digest, the record's file, offset and length; and this
    /// crawl's: round, segment, hops, a 64-bit simhash of the text),
    /// NAME.warc.wet.gz (a `conversion` record with the visible text of
    /// each 2xx HTML page) and NAME.warc.wat.gz (a `metadata` record with
    /// the JSON envelope of every record, as Common Crawl publishes them).
    /// Only what a file lacks is written, unless --force. Outputs of a file
    /// uploaded to the WARC store go to the store beside it. `segmenter
    /// parquet` gathers the index files into one set.
    Research {
        /// The crawl directory.
        crawl: PathBuf,
        /// The fetched runs to take: FIRST..LAST (both included), FIRST..,
        /// ..LAST or one ID [default: every complete run].
        #[arg(long, value_name = "RANGE")]
        rounds: Option<String>,
        /// Write the Parquet index
        #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set)]
        index: bool,
        /// Write the WET files
        #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set)]
        wet: bool,
        /// Write the WAT files
        #[arg(long, value_name = "BOOL", default_value_t = true, action = clap::ArgAction::Set)]
        wat: bool,
        /// Write them again where they exist.
        #[arg(long)]
        force: bool,
        /// Worker threads (files read at once) [default: the number of CPUs]
        #[arg(long, value_name = "N")]
        threads: Option<NonZeroUsize>,
        /// A payload is read up to this size; the text of a larger one is
        /// that of its start [default: 16MiB]
        #[arg(long, value_name = "SIZE")]
        max_page_size: Option<SizeValue>,
    },
    /// Gather the crawl's Parquet index into one queryable set.
    ///
    /// Writes the index file (NAME.parquet) of each WARC file of the runs
    /// taken that has none (as `research` does), then merges each run's
    /// files into files sorted by SURT key, one per subset (`warc`,
    /// `crawldiagnostics`, `robotstxt`), in CRAWL/parquet/ (or --out DIR);
    /// when the crawl's WARC files were uploaded to a WARC store, into its
    /// prefix `parquet/` there. CRAWL/parquet/gathered.v1.tsv lists what the
    /// set holds: a run gathered before is left as it is (unless --force).
    /// Query it with DuckDB: SELECT ... FROM read_parquet('CRAWL/parquet/*.parquet').
    Parquet {
        /// The crawl directory.
        crawl: PathBuf,
        /// The fetched runs to take: FIRST..LAST (both included), FIRST..,
        /// ..LAST or one ID [default: every complete run].
        #[arg(long, value_name = "RANGE")]
        rounds: Option<String>,
        /// Write the set into DIR (never the store) [default: CRAWL/parquet/,
        /// or the WARC store]
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Gather again the runs the set already holds.
        #[arg(long)]
        force: bool,
        /// Worker threads [default: the number of CPUs]
        #[arg(long, value_name = "N")]
        threads: Option<NonZeroUsize>,
    },
    /// Print a summary of a segment, leftover or backlog file, of the
    /// fetch history (URLs due when, per host too), or of seen.bloom
    /// (items, design load, size, fill, estimated false-positive rate,
    /// journal, rescues; the bit array checked).
    Inspect {
        /// A `*.v5.tsv.zst` file (or `*.v4.tsv.zst`, `*.v3.tsv.zst`, `*.v2.tsv.zst`, `*.v1.tsv.zst`, older formats),
        /// the fetch history `history.v5.list` (or one of its generations, or an older
        /// `history.v4.tsv.zst`, `history.v3.tsv.zst`, `history.v2.tsv.zst`, `history.v1.tsv.zst`), or
        /// `seen.bloom` (or its `.prev`).
        file: PathBuf,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Of the fetch history: print its entries (its generations merged,
        /// the newest entry of each URL) as tab-separated lines, the
        /// columns of `docs/formats.md`, instead of its summary.
        #[arg(long, conflicts_with = "json")]
        entries: bool,
    },
}

pub use crate::flags::{RoundFlags, ScopeArg, SegmenterOptions};

/// `--name=` / `--name` lines for the flags of `run` (see [`Command::Flags`]),
/// with ` shared` after those the fetcher has too ([`SharedOptions`]).
pub fn round_flags() -> String {
    use clap::CommandFactory;
    let cli = Cli::command();
    let run = cli.find_subcommand("run").expect("run is a subcommand");
    let list = common::config::flag_list(
        run.get_arguments()
            .filter_map(|a| Some((a.get_long()?, a.get_action().takes_values())))
            // The driver's own: it names its round's log.
            .filter(|(name, _)| *name != "log"),
    );
    let mut shared = SharedOptions::flags();
    // The fetcher takes the progress flags too, with the same meaning.
    shared.extend(["progress", "progress-interval"].map(String::from));
    list.lines()
        .map(|line| {
            let name = line.trim_start_matches("--").trim_end_matches('=');
            if shared.iter().any(|s| s == name) {
                format!("{line} shared\n")
            } else {
                format!("{line}\n")
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;
    use common::config::SizeValue;

    #[test]
    fn command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn flags_parse() {
        let cli = Cli::try_parse_from([
            "segmenter",
            "run",
            "crawl",
            "--memory",
            "64MiB",
            "--scope",
            "any",
            "--scope-hosts",
            "a.test,b.test",
        ])
        .unwrap();
        let Command::Run { crawl, flags } = cli.command else {
            panic!("not run")
        };
        assert_eq!(crawl, PathBuf::from("crawl"));
        assert_eq!(flags.options.memory, Some(SizeValue(64 * 1024 * 1024)));
        assert_eq!(flags.scope, Some(ScopeArg::Any));
        assert_eq!(flags.scope_hosts, ["a.test", "b.test"]);
        assert!(Cli::try_parse_from(["segmenter", "run", "c", "--memory", "lots"]).is_err());
    }
}
