//! What robots.txt lets us fetch on one host: the only place the fetcher
//! touches the robots.txt parser, so the rest of the program sees one small
//! type ([`Access`]) whatever the parser's shape.

use std::time::Duration;

pub use crate::robots::RobotsOutcome;

/// The rules for one host.
#[derive(Debug)]
pub struct Access {
    robots: crate::robots::Robots,
}

/// The decision for a robots.txt fetch.
#[derive(Debug)]
pub enum Decision {
    /// Rules to apply to the host's URLs.
    Rules(Access),
    /// robots.txt is unavailable (5xx, 429, unreachable): fetch nothing for
    /// now and ask again later.
    Unavailable,
}

/// Largest robots.txt body kept (the parser reads no more).
pub const MAX_ROBOTS_BYTES: usize = crate::robots::MAX_ROBOTS_BYTES;

impl Access {
    /// Every path allowed.
    pub fn allow_all() -> Access {
        Access {
            robots: crate::robots::Robots::allow_all(),
        }
    }

    /// Applies the status policy of RFC 9309 to how the fetch ended and
    /// parses a 2xx `body` for `token`.
    pub fn decide(outcome: RobotsOutcome, body: &[u8], token: &str) -> Decision {
        use crate::robots::{Robots, RobotsDecision, decide};
        match decide(outcome) {
            RobotsDecision::Parse => Decision::Rules(Access {
                robots: Robots::parse(body, token),
            }),
            RobotsDecision::AllowAll => Decision::Rules(Access::allow_all()),
            RobotsDecision::DisallowAll => Decision::Unavailable,
        }
    }

    /// True if `path_and_query` (starting with `/`) may be fetched.
    /// `/robots.txt` is always allowed.
    pub fn allows(&self, path_and_query: &str) -> bool {
        path_and_query == "/robots.txt" || self.robots.is_allowed(path_and_query)
    }

    /// The Crawl-delay of the group that applies to us.
    pub fn crawl_delay(&self) -> Option<Duration> {
        self.robots.crawl_delay()
    }
}

/// The path and query of a URL as robots.txt rules see them.
pub fn path_and_query(url: &url::Url) -> String {
    match url.query() {
        Some(q) => format!("{}?{q}", url.path()),
        None => url.path().to_string(),
    }
}
