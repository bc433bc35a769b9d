//! robots.txt answers kept for reuse, and what a kept answer decides: in
//! `hosts.db` across runs (while [`RobotsEntry::reusable`], the freshness
//! rule the segmenter plans with too) and in the WARC files of an
//! interrupted run of the same segment ([`crate::resume`]).
//!
//! `hosts.db` keeps the final HTTP status of the fetch; the outcomes that
//! have none are kept as sentinel statuses, [`UNREACHABLE`] and
//! [`TOO_MANY_REDIRECTS`], and read back by [`decode`].

use common::hoststate::{RobotsEntry, within_robots_ttl};

use crate::robots::{Robots, RobotsOutcome};

/// The status kept for [`RobotsOutcome::Unreachable`].
pub const UNREACHABLE: u16 = 0;
/// The status kept for [`RobotsOutcome::TooManyRedirects`].
pub const TOO_MANY_REDIRECTS: u16 = 310;

/// The status that keeps `outcome`.
pub fn encode(outcome: RobotsOutcome) -> u16 {
    match outcome {
        RobotsOutcome::Status(s) => s,
        RobotsOutcome::TooManyRedirects => TOO_MANY_REDIRECTS,
        RobotsOutcome::Unreachable => UNREACHABLE,
    }
}

/// The outcome a kept status stands for (inverse of [`encode`]).
pub fn decode(status: u16) -> RobotsOutcome {
    match status {
        UNREACHABLE => RobotsOutcome::Unreachable,
        TOO_MANY_REDIRECTS => RobotsOutcome::TooManyRedirects,
        code => RobotsOutcome::Status(code),
    }
}

/// The entry that keeps a fetch of robots.txt that ended with `outcome`
/// (with the body of a 2xx response in `body`), fetched at `fetched_ms`.
/// The `Sitemap:` URLs of a 2xx body are kept beside it, for the segmenter.
pub fn entry(outcome: RobotsOutcome, body: &[u8], fetched_ms: i64) -> RobotsEntry {
    let body = Robots::parsed_part(body);
    let sitemaps = match outcome {
        RobotsOutcome::Status(200..=299) => common::sitemaps::in_robots_txt(body),
        _ => Vec::new(),
    };
    RobotsEntry {
        status: encode(outcome),
        body: body.to_vec(),
        fetched_ms,
        sitemaps,
    }
}

/// The rules a kept answer gives for `product_token`: the one an
/// interrupted run of this segment stored (`resumed`: status and body), or
/// else the one in `hosts.db` if it is reusable at `now_ms`. `None` when
/// robots.txt must be fetched.
pub fn kept_rules(
    resumed: Option<&(u16, Vec<u8>, i64)>,
    stored: Option<&RobotsEntry>,
    now_ms: i64,
    product_token: &str,
) -> Option<Robots> {
    let (status, body) = resumed
        // An interrupted run's answers age like those kept in hosts.db.
        .filter(|(_, _, fetched_ms)| within_robots_ttl(*fetched_ms, now_ms))
        .map(|(status, body, _)| (*status, body.as_slice()))
        .or_else(|| {
            stored
                .filter(|r| r.reusable(now_ms))
                .map(|r| (r.status, r.body.as_slice()))
        })?;
    Robots::after_fetch(decode(status), body, product_token)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_outcome_reads_back_as_kept() {
        for outcome in [
            RobotsOutcome::Unreachable,
            RobotsOutcome::TooManyRedirects,
            RobotsOutcome::Status(200),
            RobotsOutcome::Status(404),
            RobotsOutcome::Status(503),
        ] {
            assert_eq!(decode(encode(outcome)), outcome);
        }
        assert_eq!(decode(0), RobotsOutcome::Unreachable);
        assert_eq!(decode(404), RobotsOutcome::Status(404));
    }

    #[test]
    fn a_resumed_answer_comes_first_and_a_stale_one_is_fetched_again() {
        let now = 1_000_000_000;
        let stored = entry(
            RobotsOutcome::Status(200),
            b"User-agent: *\nDisallow: /\n",
            now,
        );
        let rules = kept_rules(None, Some(&stored), now, "bot").unwrap();
        assert!(rules.denied_by("/x").is_some());
        let resumed = (404, Vec::new(), now - 1_000);
        let rules = kept_rules(Some(&resumed), Some(&stored), now, "bot").unwrap();
        assert!(rules.denied_by("/x").is_none(), "a 404 allows all");
        let day = common::hoststate::ROBOTS_TTL.as_millis() as i64;
        // An interrupted run's answer ages like a stored one.
        let old_resumed = (404, Vec::new(), now - day);
        let rules = kept_rules(Some(&old_resumed), Some(&stored), now, "bot").unwrap();
        assert!(
            rules.denied_by("/x").is_some(),
            "the stored, fresh answer stands"
        );
        assert!(kept_rules(Some(&old_resumed), None, now, "bot").is_none());
        assert!(kept_rules(None, Some(&stored), now + day, "bot").is_none());
        let failed = entry(RobotsOutcome::Unreachable, b"", now);
        assert!(kept_rules(None, Some(&failed), now, "bot").is_none());
    }
}
