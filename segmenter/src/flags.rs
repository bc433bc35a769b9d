//! The flags of the commands that make a round (`inject`, `import`, `run`,
//! `map`, `reduce`): their command-line form, which the settings
//! (`crate::settings`) resolve against `crawl.toml`. A module of its own,
//! below the commands and the settings alike, so that the layers that read
//! the flags never import the command line (`crate::cli`), which imports
//! every command.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use common::config::SharedOptions;
use common::progress::ProgressArgs;

/// How the scope is decided (`[scope] mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScopeArg {
    /// The registrable domains of the seeds (CRAWL/scope.seeds), plus extra hosts and domains.
    Seeds,
    /// Only the hosts and domains given with --scope-hosts / --scope-domains.
    List,
    /// Any host (an open crawl); the rules file still applies.
    Any,
}

/// Flags of `inject` and `run`. Unset flags fall back to `crawl.toml`, then
/// to the defaults shown.
#[derive(Debug, Clone, Default, Args)]
pub struct RoundFlags {
    /// The keys of `[segmenter]`.
    #[command(flatten)]
    pub options: SegmenterOptions,
    /// `--progress`.
    #[command(flatten, next_help_heading = "Resources")]
    pub progress: ProgressArgs,
    /// Append the run's log to FILE instead of a new
    /// CRAWL/logs/segmenter-TIMESTAMP.log (scripts/crawl.sh gives its
    /// round's log); when stderr is FILE too, each line is written once
    #[arg(long, value_name = "FILE", help_heading = "Resources")]
    pub log: Option<PathBuf>,
    /// The settings shared with the fetcher.
    #[command(flatten, next_help_heading = "Segments")]
    pub shared: SharedOptions,

    /// Which hosts belong to the crawl [default: seeds]
    #[arg(long, value_enum, value_name = "MODE", help_heading = "Scope")]
    pub scope: Option<ScopeArg>,
    /// Extra hosts in scope (comma-separated; adds to [scope] hosts)
    #[arg(
        long,
        value_name = "HOSTS",
        value_delimiter = ',',
        help_heading = "Scope"
    )]
    pub scope_hosts: Vec<String>,
    /// Extra registrable domains in scope (comma-separated; adds to [scope] domains)
    #[arg(
        long,
        value_name = "DOMAINS",
        value_delimiter = ',',
        help_heading = "Scope"
    )]
    pub scope_domains: Vec<String>,
    /// Allow/deny rules, one per line: `+REGEX` or `-REGEX`; the first match
    /// decides, before the hosts and domains (a relative path is relative
    /// to the current directory; in crawl.toml, to CRAWL)
    #[arg(long, value_name = "FILE", help_heading = "Scope")]
    pub rules_file: Option<PathBuf>,

    /// Longest URL accepted, in bytes [default: 2048]
    #[arg(long, value_name = "N", help_heading = "Filters")]
    pub max_url_length: Option<usize>,
    /// Most path segments [default: 20]
    #[arg(long, value_name = "N", help_heading = "Filters")]
    pub max_path_segments: Option<usize>,
    /// A path segment repeated this many times or more is a trap [default: 3]
    #[arg(long, value_name = "N", help_heading = "Filters")]
    pub max_repeated_segment: Option<usize>,
    /// Most hops from a seed (a link or a redirect is one hop) [default: 10]
    #[arg(long, value_name = "N", help_heading = "Filters")]
    pub max_hops: Option<u32>,
    /// Most query parameters [default: 10]
    #[arg(long, value_name = "N", help_heading = "Filters")]
    pub max_query_params: Option<usize>,
    /// Calendar traps: a year further ahead than this is refused [default: 1]
    #[arg(long, value_name = "N", help_heading = "Filters")]
    pub max_years_ahead: Option<i64>,
    /// URLs whose path ends in one of these extensions are not fetched,
    /// counted as `rejected extension` (comma-separated, without dots;
    /// `tar.gz` for a two-part one; replaces [filter] skip_extensions; ""
    /// for none) [default: archives, disk images, installers, video: zip,
    /// tar, tar.gz, tgz, 7z, rar, iso, img, dmg, exe, msi, deb, rpm, apk,
    /// mp4, avi, mkv, mov, webm, ...]
    #[arg(long, value_name = "EXTS", help_heading = "Filters")]
    pub skip_extensions: Option<String>,
}

/// The settings of `inject` and `run` that are also keys of `[segmenter]`:
/// one list in `common`, so that the fetcher checks that section too.
pub use common::config::segmenter::SegmenterOptions;
