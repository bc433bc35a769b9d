//! What the outcome of a request means, decided in one place: is the URL
//! tried again in a later run, does the attempt count toward dropping its
//! host (`--max-failures` in a row), and what a given-up host means for its
//! URLs. The crawl-log code of a request that got no response is chosen
//! where the error is known ([`crate::http`]); this module says what each
//! code then does.
//!
//! | outcome                                   | retried | counts |
//! |-------------------------------------------|---------|--------|
//! | 2xx, 3xx, 4xx other than 429              | no      | no     |
//! | 429 (a `Retry-After` holds the host)      | yes     | yes    |
//! | 5xx (503: a `Retry-After` holds the host) | yes     | yes    |
//! | any status, body cut by the download time | 5xx/429 | yes    |
//! | `timeout` (its wait is a response time)   | yes     | yes    |
//! | `dns` temporary (DNS timeout, `SERVFAIL`) | yes     | yes    |
//! | `refused`, `connect`, `protocol`          | yes     | yes    |
//! | `dns` permanent (no such name, no address) | yes, and the host is given up (`dns`) | no |
//! | `tls`                                     | no      | yes    |
//! | `private-address`, `bad-url`              | no      | no     |
//! | `robots`, `url-too-long` (no request)     | no      | no     |
//! | host given up: `dns`, `robots-unavailable`, `crawl-delay`, `host-dropped` | yes | no |
//!
//! A retry costs its URL a try when it is its own failure: not while its
//! host was failing already ([`own_failure`]), and not for a host given up
//! for `robots-unavailable` or `host-dropped` ([`leftover_via`]).
//!
//! "Counts" also means the failure backs the host off: each consecutive
//! failure doubles its delay ([`common::politeness`]), kept in `hosts.db`
//! across runs.
//! A permanent `dns` failure gives its host up at once, for the rest of the
//! run (asking again would get the same answer); a temporary one is retried
//! like a timeout (a robots.txt after `--robots-retry-delay`; a page in a
//! later run) and counts toward `--max-failures`. Read back from a crawl
//! log, both are `dns` and both are retried.
//!
//! "Retried" URLs go to the leftover as `retry` with one more try, so that
//! the segmenter gives them up after `--max-tries` rounds (and keeps them
//! in the fetch history as `failed`, due again much later), but only when
//! the failure is the URL's own ([`own_failure`]): while its whole host
//! fails (its request before failed too: an outage, a maintenance window),
//! a failure belongs to the host's backoff, which holds the host back
//! across rounds and parks it, and the URL keeps its tries. A URL that was
//! never attempted uses no try ([`leftover_via`]), nor does one whose
//! host's robots.txt could not be read. A request cut by the run stopping
//! ([`may_be_cut_by_stop`]) is put back untried after a signal, and counts
//! as a `timeout` when the stop ends the round.

use common::crawllog::{ErrorCode, Status};
use common::segment::Via;
use common::warc::Truncated;

/// What an outcome means for its URL and its host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    /// The URL goes to the leftover as a `retry`.
    pub retry: bool,
    /// The attempt counts toward dropping the host for the run.
    pub failed: bool,
    /// The host is given up for the rest of the run, with this code.
    pub give_up: Option<ErrorCode>,
}

impl Verdict {
    /// A response with `status`, its body cut for `truncated`.
    pub fn of_response(status: u16, truncated: Option<Truncated>) -> Verdict {
        Verdict {
            retry: status == 429 || status >= 500,
            failed: status == 429 || status >= 500 || truncated == Some(Truncated::Time),
            give_up: None,
        }
    }

    /// No response, or no request: the crawl-log code says why.
    pub fn of_failure(code: ErrorCode) -> Verdict {
        use ErrorCode::*;
        Verdict {
            retry: matches!(
                code,
                Dns | Refused
                    | Timeout
                    | Connect
                    | Protocol
                    | RobotsUnavailable
                    | CrawlDelay
                    | HostDropped
            ),
            failed: matches!(code, Timeout | Refused | Connect | Dns | Protocol | Tls),
            give_up: None,
        }
    }

    /// No response, and `permanent` if trying again in this run would fail
    /// the same way (see [`crate::http::Failure::permanent`]).
    pub fn of_failed_request(code: ErrorCode, permanent: bool) -> Verdict {
        if permanent && code == ErrorCode::Dns {
            return Verdict {
                retry: true,
                failed: false,
                give_up: Some(ErrorCode::Dns),
            };
        }
        Verdict::of_failure(code)
    }
}

/// True if a crawl-log outcome is worth retrying in a later run.
pub fn is_retryable(s: Status) -> bool {
    match s {
        Status::Http(code) => Verdict::of_response(code, None).retry,
        Status::Error(code) => Verdict::of_failure(code).retry,
    }
}

/// True if a failed attempt (`failed`: one that counts against its host)
/// costs its URL a try: only when the host was not failing before it
/// (`failures_before`: its failures in a row, carried across runs in
/// `hosts.db`). Once a host fails, the failures that follow are the
/// host's, until it answers again: its backoff holds it, and its URLs come
/// back whole when it recovers. A retry that does not count against its
/// host (a name that does not exist) always costs a try.
pub fn own_failure(failed: bool, failures_before: u32) -> bool {
    !failed || failures_before == 0
}

/// True if a `Retry-After` of a response with `status` holds its host.
pub fn honours_retry_after(status: u16) -> bool {
    matches!(status, 429 | 503)
}

/// True if a failure with `code` may be the run stopping under the request
/// (its connection closed) rather than something the host did.
pub fn may_be_cut_by_stop(code: ErrorCode) -> bool {
    matches!(
        code,
        ErrorCode::Timeout | ErrorCode::Connect | ErrorCode::Protocol
    )
}

/// How a URL that was not attempted goes to leftover. A URL merely not
/// reached (the round ended), one whose host was dropped after other URLs
/// of it failed (`host-dropped`: `--max-failures` in a row) and one whose
/// host's robots.txt could not be read (`robots-unavailable`: the host is
/// down) stay `leftover` with their tries: a URL that was not asked uses no
/// try, so an outage costs a host none of its frontier (the host's failures
/// back it off in `hosts.db` instead, and park it after `park_after`: asked
/// once a day). The other give-ups send the host's URLs as `retry` with one
/// more try: a `crawl-delay` above the cap, a name that does not exist. A
/// host that stays that way runs out of tries (`segmenter --max-tries`)
/// instead of coming back every round, and its URLs then wait in the fetch
/// history as `failed`, due again at `recrawl_failed`: never dropped.
pub fn leftover_via(code: Option<ErrorCode>, tries: u32) -> (Via, u32) {
    match code {
        None | Some(ErrorCode::HostDropped | ErrorCode::RobotsUnavailable) => {
            (Via::Leftover, tries)
        }
        Some(_) => (Via::Retry, tries + 1),
    }
}

/// The crawl-log note of a URL of a host given up with `code`.
pub fn given_up_note(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::CrawlDelay => "robots.txt Crawl-delay above --max-crawl-delay; host skipped",
        ErrorCode::HostDropped => "host dropped after consecutive failures",
        ErrorCode::RobotsUnavailable => "robots.txt unavailable; retry in a later run",
        ErrorCode::Dns => "host name does not resolve (no such name, or no address); host dropped",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_503_a_timeout_and_a_dns_failure_do() {
        let both = Verdict {
            retry: true,
            failed: true,
            give_up: None,
        };
        assert_eq!(Verdict::of_response(503, None), both);
        assert_eq!(Verdict::of_failure(ErrorCode::Timeout), both);
        assert_eq!(Verdict::of_failure(ErrorCode::Dns), both);
        assert_eq!(Verdict::of_response(429, None), both, "429 backs off too");
        assert_eq!(
            Verdict::of_failure(ErrorCode::Tls),
            Verdict {
                retry: false,
                failed: true,
                give_up: None
            }
        );
        assert_eq!(
            Verdict::of_response(200, Some(Truncated::Time)),
            Verdict {
                retry: false,
                failed: true,
                give_up: None
            }
        );
        assert!(!is_retryable(Status::Http(404)));
        assert!(is_retryable(Status::Error(ErrorCode::HostDropped)));
        assert!(!Verdict::of_failure(ErrorCode::HostDropped).failed);
        assert_eq!(Verdict::of_failed_request(ErrorCode::Dns, false), both);
        assert_eq!(
            Verdict::of_failed_request(ErrorCode::Dns, true),
            Verdict {
                retry: true,
                failed: false,
                give_up: Some(ErrorCode::Dns)
            },
            "no such name: the host is given up at once, its URLs retried in a later run"
        );
        assert!(is_retryable(Status::Error(ErrorCode::Dns)));
    }

    #[test]
    fn a_failure_while_the_host_fails_is_the_hosts() {
        assert!(
            own_failure(true, 0),
            "the host answered before: the URL's own"
        );
        assert!(!own_failure(true, 1), "the host was failing: its backoff's");
        assert!(!own_failure(true, 7));
        assert!(own_failure(false, 3), "no such name: always a try");
    }

    #[test]
    fn a_url_not_attempted_uses_no_try() {
        assert_eq!(leftover_via(None, 1), (Via::Leftover, 1));
        assert_eq!(
            leftover_via(Some(ErrorCode::HostDropped), 0),
            (Via::Leftover, 0),
            "an outage costs no try"
        );
        assert_eq!(
            leftover_via(Some(ErrorCode::RobotsUnavailable), 2),
            (Via::Leftover, 2),
            "a host whose robots.txt cannot be read is down: its backoff holds it"
        );
        assert_eq!(
            leftover_via(Some(ErrorCode::CrawlDelay), 0),
            (Via::Retry, 1)
        );
        assert_eq!(leftover_via(Some(ErrorCode::Dns), 1), (Via::Retry, 2));
    }
}
