//! Which candidate URLs are kept: scheme, scope, length and crawler-trap
//! rules, applied in that order to canonical URLs. The segmenter applies them
//! to every link; the fetcher to redirect targets it follows in the same run.

use std::collections::HashSet;
use std::path::Path;

use url::Url;

use crate::config::{FilterConfig, ScopeConfig};

/// Why a URL was refused. The order of the variants is the order the checks run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reject {
    /// Not http or https.
    Scheme,
    /// A deny rule matched, or the host is outside the scope.
    Scope,
    /// Longer than `max_url_length`.
    TooLong,
    /// One path segment appears `max_repeated_segment` times or more.
    RepeatedSegment,
    /// More than `max_path_segments` path segments.
    TooManySegments,
    /// More than `max_hops` hops from a seed.
    TooManyHops,
    /// More than `max_query_params` query parameters.
    TooManyParams,
    /// A year far in the future (or before 1970) in the path or query.
    Calendar,
}

impl Reject {
    /// Every variant, in check order (for reports).
    pub const ALL: [Reject; 8] = [
        Reject::Scheme,
        Reject::Scope,
        Reject::TooLong,
        Reject::RepeatedSegment,
        Reject::TooManySegments,
        Reject::TooManyHops,
        Reject::TooManyParams,
        Reject::Calendar,
    ];

    /// A short stable name for logs and reports (`scope`, `too-long`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Reject::Scheme => "scheme",
            Reject::Scope => "scope",
            Reject::TooLong => "too-long",
            Reject::RepeatedSegment => "repeated-segment",
            Reject::TooManySegments => "too-many-segments",
            Reject::TooManyHops => "too-many-hops",
            Reject::TooManyParams => "too-many-params",
            Reject::Calendar => "calendar",
        }
    }
}

/// A problem loading the scope (rules file, seeds file).
#[derive(Debug, thiserror::Error)]
pub enum ScopeError {
    /// A file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A rule is not a valid regex or lacks its `+`/`-` prefix.
    #[error("{path}:{line}: {message}")]
    BadRule {
        /// The rules file.
        path: std::path::PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
}

/// The scope of a crawl.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    /// Any host is in scope (rules still apply).
    pub any: bool,
    /// Registrable domains in scope.
    pub domains: HashSet<String>,
    /// Hosts in scope.
    pub hosts: HashSet<String>,
    /// `(allow, regex)` rules, first match wins, checked before hosts/domains.
    pub rules: Vec<(bool, regex::Regex)>,
}

impl Scope {
    /// Builds the scope from `[scope]`, reading `scope.seeds` and the rules
    /// file relative to `crawl_dir`.
    pub fn load(cfg: &ScopeConfig, crawl_dir: &Path) -> Result<Scope, ScopeError> {
        let _ = (cfg, crawl_dir);
        todo!("Scope::load")
    }

    /// True if `url` (canonical) is in scope.
    pub fn contains(&self, url: &Url) -> bool {
        let _ = url;
        todo!("Scope::contains")
    }
}

/// Applies the checks in [`Reject`] order.
#[derive(Debug, Clone)]
pub struct UrlFilter {
    /// The limits.
    pub limits: FilterConfig,
    /// The scope.
    pub scope: Scope,
}

impl UrlFilter {
    /// Checks a canonical URL found `hops` hops from a seed.
    pub fn check(&self, url: &Url, hops: u32) -> Result<(), Reject> {
        let _ = (url, hops);
        todo!("UrlFilter::check")
    }
}
