//! Politeness: how long to wait between two requests to one host, and when
//! to give up on a host. One formula, used by the fetcher to schedule its
//! requests and by the segmenter to plan how many URLs of a host fit in a
//! round.
//!
//! delay = max(minimum delay, robots.txt Crawl-delay, factor × mean of the
//! host's last five response times). A Crawl-delay above the cap makes the
//! host skipped; `Retry-After` on 429/503 holds the host that long at least
//! (capped); after N consecutive failures the host is dropped for the run. A
//! host's *cycle* is its delay plus its mean response time: how long one
//! request to it takes, waiting included.
//!
//! **Backoff.** Each consecutive failure of a host (timeout, refused, 5xx,
//! 429, robots.txt unavailable) doubles its delay, up to `backoff_max`; a
//! success brings it back. The count is kept in `hosts.db` across runs
//! (`consecutive_errors`, with `failing_since_ms`), so that a failing host
//! is asked less and less often, round after round, instead of at the full
//! pace every round. A host failing for `park_after` is **parked**: it is
//! asked once a day ([`PARKED_DELAY`]) until it answers, its URLs waiting in
//! the backlog meanwhile.
//!
//! ```
//! use std::time::Duration;
//! use common::politeness::{Policy, Timing};
//!
//! let policy = Policy { min_delay: Duration::from_secs(1), ..Policy::default() };
//! let mut t = Timing::default();
//! t.note_crawl_delay(Duration::from_secs(2));
//! policy.success(&mut t, Duration::from_millis(100));
//! assert_eq!(policy.delay(&t), Duration::from_secs(2));
//! assert_eq!(policy.cycle(&t), Duration::from_millis(2100));
//! // In a 30-second round: 14 requests, waits included.
//! assert_eq!(policy.requests_within(&t, Duration::from_secs(30)), 14);
//! ```

use std::collections::VecDeque;
use std::time::{Duration, SystemTime};

use crate::hoststate::HostState;

/// No run holds a host longer than this: a next allowed contact further
/// ahead (in `hosts.db` or a segment) is damage — a clock set back, a hand
/// edit — and is read as this long from now, so that the host is not held
/// for ever.
pub const MAX_HOLD: Duration = Duration::from_secs(24 * 3600);

/// A next allowed contact (Unix ms), no later than [`MAX_HOLD`] from `now_ms`.
pub fn cap_hold(next_ms: i64, now_ms: i64) -> i64 {
    next_ms.min(now_ms.saturating_add(MAX_HOLD.as_millis() as i64))
}

/// The delay of a parked host: one request a day until it answers (the
/// longest a run holds a host).
pub const PARKED_DELAY: Duration = MAX_HOLD;

/// The politeness settings. The defaults are those for the real web.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// Smallest delay.
    pub min_delay: Duration,
    /// Factor on the mean response time.
    pub delay_factor: f64,
    /// Largest Crawl-delay honoured.
    pub max_crawl_delay: Duration,
    /// Largest Retry-After honoured.
    pub max_retry_after: Duration,
    /// Consecutive failures before a host is dropped.
    pub max_failures: u32,
    /// Longest delay the backoff grows to (each failure in a row doubles it).
    pub backoff_max: Duration,
    /// A host failing (every request, without a success) for this long is
    /// parked: asked once a day ([`PARKED_DELAY`]).
    pub park_after: Duration,
}

impl Policy {
    /// The defaults, those for the real web: the politeness settings of
    /// both programs (`SharedOptions` and `FetcherOptions` of the `config`
    /// module) declare these as their defaults.
    pub const DEFAULT: Policy = Policy {
        min_delay: Duration::from_secs(5),
        delay_factor: 5.0,
        max_crawl_delay: Duration::from_secs(60),
        max_retry_after: Duration::from_secs(600),
        max_failures: 5,
        backoff_max: Duration::from_secs(3600),
        park_after: Duration::from_secs(3 * 86_400),
    };
}

impl Default for Policy {
    fn default() -> Self {
        Policy::DEFAULT
    }
}

/// What a queue remembers for its delay.
#[derive(Debug, Clone, Default)]
pub struct Timing {
    /// Last five response times, oldest first.
    response_times: VecDeque<Duration>,
    /// Crawl-delay of the queue's host(s); the largest one seen.
    pub crawl_delay: Option<Duration>,
    /// Failures since the last success (carried across runs in `hosts.db`).
    pub consecutive_failures: u32,
    /// The host has been failing for `park_after` or more: after a
    /// failure it waits [`PARKED_DELAY`].
    pub parked: bool,
    /// The queue's own minimum delay and factor (from the host rules,
    /// [`crate::rules`]), in place of the policy's.
    pub own: OwnDelay,
}

/// A queue's own `min_delay` and `delay_factor`, where host rules set them
/// ([`OwnDelay::of_hosts`]); `None` keeps the crawl's.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct OwnDelay {
    /// In place of [`Policy::min_delay`].
    pub min_delay: Option<Duration>,
    /// In place of [`Policy::delay_factor`].
    pub delay_factor: Option<f64>,
}

impl OwnDelay {
    /// The delays the rules give a queue of `hosts` (one host, or the
    /// hosts of a domain or an address): each host's value is its rule's
    /// or else the policy's, and the queue takes the largest, so that no
    /// host of it is asked sooner than its own rule says. `None` where no
    /// rule sets the key for any of them.
    pub fn of_hosts<'h>(
        rules: &crate::rules::HostRules,
        policy: &Policy,
        hosts: impl IntoIterator<Item = &'h str>,
    ) -> OwnDelay {
        let mut own = OwnDelay::default();
        if rules.is_empty() {
            return own;
        }
        let (mut delay, mut factor): (Option<Duration>, Option<f64>) = (None, None);
        let (mut any_delay, mut any_factor) = (false, false);
        for host in hosts {
            let view = rules.for_host(host, None);
            any_delay |= view.min_delay().is_some();
            any_factor |= view.delay_factor().is_some();
            let d = view.min_delay().unwrap_or(policy.min_delay);
            let f = view.delay_factor().unwrap_or(policy.delay_factor);
            delay = Some(delay.map_or(d, |m| m.max(d)));
            factor = Some(factor.map_or(f, |m| m.max(f)));
        }
        own.min_delay = delay.filter(|_| any_delay);
        own.delay_factor = factor.filter(|_| any_factor);
        own
    }
}

impl Timing {
    /// Starts from response times remembered in the host state.
    pub fn with_history(times_ms: &[u32]) -> Timing {
        let mut t = Timing::default();
        for &ms in times_ms {
            t.push_response_time(Duration::from_millis(u64::from(ms)));
        }
        t
    }

    /// Starts from what the host state remembers: response times and
    /// Crawl-delay (not its failures: see [`Policy::timing_of`]).
    pub fn of_host(state: &HostState) -> Timing {
        let mut t = Timing::with_history(&state.response_times_ms);
        if let Some(ms) = state.crawl_delay_ms {
            t.note_crawl_delay(Duration::from_millis(ms));
        }
        t
    }

    /// Records a response time, keeping the last five.
    pub fn push_response_time(&mut self, d: Duration) {
        if self.response_times.len() == 5 {
            self.response_times.pop_front();
        }
        self.response_times.push_back(d);
    }

    /// Mean of the recorded response times.
    pub fn mean_response(&self) -> Option<Duration> {
        let n = self.response_times.len() as u32;
        (n > 0).then(|| self.response_times.iter().sum::<Duration>() / n)
    }

    /// Notes a Crawl-delay (a queue with several hosts keeps the largest).
    pub fn note_crawl_delay(&mut self, d: Duration) {
        self.crawl_delay = Some(self.crawl_delay.map_or(d, |c| c.max(d)));
    }
}

/// What a failure means for the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterFailure {
    /// Keep going.
    Continue,
    /// The host failed too often: drop it for this run.
    Drop,
}

impl Policy {
    /// The delay after a request to a queue with this timing: its
    /// [`Policy::base_delay`], backed off after failures in a row (doubled
    /// per failure, up to `backoff_max`; [`PARKED_DELAY`] for a parked host),
    /// never shorter than the base.
    pub fn delay(&self, t: &Timing) -> Duration {
        let base = self.base_delay(t);
        match t.consecutive_failures {
            0 => base,
            _ if t.parked => base.max(PARKED_DELAY),
            n => {
                let factor = 1u32 << n.min(20);
                base.max(base.saturating_mul(factor).min(self.backoff_max))
            }
        }
    }

    /// The delay without backoff: max(minimum delay, Crawl-delay (capped),
    /// factor × mean response time).
    /// A queue's own minimum delay and factor ([`Timing::own`]) replace
    /// the policy's; the Crawl-delay holds whatever they say.
    pub fn base_delay(&self, t: &Timing) -> Duration {
        let mut d = t.own.min_delay.unwrap_or(self.min_delay);
        if let Some(cd) = t.crawl_delay {
            d = d.max(cd.min(self.max_crawl_delay));
        }
        if let Some(mean) = t.mean_response() {
            d = d.max(mean.mul_f64(t.own.delay_factor.unwrap_or(self.delay_factor)));
        }
        d
    }

    /// True if a host failing since `failing_since_ms` is parked at `now_ms`
    /// (both Unix ms).
    pub fn parked(&self, failing_since_ms: Option<i64>, now_ms: i64) -> bool {
        let after = i64::try_from(self.park_after.as_millis()).unwrap_or(i64::MAX);
        failing_since_ms.is_some_and(|since| now_ms.saturating_sub(since) >= after)
    }

    /// The timing of a host as its state in `hosts.db` leaves it at `now_ms`
    /// (Unix ms): response times, Crawl-delay, failures in a row and
    /// whether it is parked.
    pub fn timing_of(&self, state: &HostState, now_ms: i64) -> Timing {
        let mut t = Timing::of_host(state);
        t.consecutive_failures = state.consecutive_errors;
        t.parked = state.consecutive_errors > 0 && self.parked(state.failing_since_ms, now_ms);
        t
    }

    /// The time one request to a queue with this timing takes, waiting
    /// included: its delay plus its mean response time (at least 1 ms).
    pub fn cycle(&self, t: &Timing) -> Duration {
        (self.delay(t) + t.mean_response().unwrap_or(Duration::ZERO)).max(Duration::from_millis(1))
    }

    /// How many requests to a queue with this timing fit in `window`, one
    /// [`Policy::cycle`] each; at least one when the window is not empty.
    pub fn requests_within(&self, t: &Timing, window: Duration) -> u64 {
        if window.is_zero() {
            return 0;
        }
        let n = window.as_nanos() / self.cycle(t).as_nanos();
        u64::try_from(n).unwrap_or(u64::MAX).max(1)
    }

    /// True if a host asking for this Crawl-delay is fetched at all.
    pub fn crawl_delay_acceptable(&self, d: Duration) -> bool {
        d <= self.max_crawl_delay
    }

    /// Records a success (the host answered with something other than 5xx
    /// or 429): the backoff ends.
    pub fn success(&self, t: &mut Timing, response_time: Duration) {
        t.push_response_time(response_time);
        t.consecutive_failures = 0;
        t.parked = false;
    }

    /// Records a failure (timeout, refused, 5xx, 429).
    pub fn failure(&self, t: &mut Timing) -> AfterFailure {
        t.consecutive_failures += 1;
        if t.consecutive_failures >= self.max_failures {
            AfterFailure::Drop
        } else {
            AfterFailure::Continue
        }
    }

    /// The wait asked by a `Retry-After` value (seconds or an HTTP date),
    /// capped; `None` if the value cannot be read.
    pub fn retry_after(&self, value: &str, now: SystemTime) -> Option<Duration> {
        let value = value.trim();
        let wait = if let Ok(secs) = value.parse::<u64>() {
            Duration::from_secs(secs)
        } else {
            let when = httpdate::parse_http_date(value).ok()?;
            when.duration_since(now).unwrap_or(Duration::ZERO)
        };
        Some(wait.min(self.max_retry_after))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_rules_set_a_queue_own_delay() {
        let text = "[[rule]]\ndomain = \"slow.test\"\nmin_delay = \"8s\"\n\n\
                    [[rule]]\nhost = \"fast.slow.test\"\nmin_delay = \"1s\"\ndelay_factor = 1\n";
        let rules = crate::rules::HostRules::parse(text, "r.toml".as_ref()).unwrap();
        let p = policy();
        let mut t = Timing::default();
        p.success(&mut t, Duration::from_millis(100));
        let delay_of = |hosts: &[&str], t: &Timing| {
            let mut t = t.clone();
            t.own = OwnDelay::of_hosts(&rules, &p, hosts.iter().copied());
            p.delay(&t)
        };
        // No rule: the crawl's 5 s.
        assert_eq!(delay_of(&["other.test"], &t), Duration::from_secs(5));
        // A domain's rule, above the crawl's.
        assert_eq!(delay_of(&["www.slow.test"], &t), Duration::from_secs(8));
        // A host's rule, below the crawl's: the most specific wins.
        assert_eq!(delay_of(&["fast.slow.test"], &t), Duration::from_secs(1));
        // A queue of several hosts waits as its slowest host asks.
        assert_eq!(
            delay_of(&["fast.slow.test", "other.test"], &t),
            Duration::from_secs(5)
        );
        // robots.txt's Crawl-delay holds whatever a rule says.
        t.note_crawl_delay(Duration::from_secs(3));
        assert_eq!(delay_of(&["fast.slow.test"], &t), Duration::from_secs(3));
        // The rule's factor on the response time: 1 × 4 s.
        let mut slow = Timing::default();
        p.success(&mut slow, Duration::from_secs(4));
        assert_eq!(delay_of(&["fast.slow.test"], &slow), Duration::from_secs(4));
        assert_eq!(delay_of(&["other.test"], &slow), Duration::from_secs(20));
        let none = crate::rules::HostRules::default();
        assert_eq!(
            OwnDelay::of_hosts(&none, &p, ["a.test"]),
            OwnDelay::default()
        );
    }

    fn policy() -> Policy {
        Policy {
            min_delay: Duration::from_secs(5),
            delay_factor: 5.0,
            max_crawl_delay: Duration::from_secs(60),
            max_retry_after: Duration::from_secs(600),
            max_failures: 3,
            backoff_max: Duration::from_secs(60),
            park_after: Duration::from_secs(86_400),
        }
    }

    #[test]
    fn failures_in_a_row_double_the_delay_up_to_the_cap() {
        let p = policy();
        let mut t = Timing::default();
        let mut delays = Vec::new();
        for _ in 0..6 {
            p.failure(&mut t);
            delays.push(p.delay(&t).as_secs());
        }
        assert_eq!(delays, [10, 20, 40, 60, 60, 60], "x2 per failure, capped");
        assert_eq!(p.base_delay(&t), Duration::from_secs(5));
        p.success(&mut t, Duration::from_millis(10));
        assert_eq!(p.delay(&t), Duration::from_secs(5), "a success ends it");
        // A Crawl-delay above the cap is never shortened by it.
        t.note_crawl_delay(Duration::from_secs(50));
        p.failure(&mut t);
        assert_eq!(p.delay(&t), Duration::from_secs(60));
        p.failure(&mut t);
        assert_eq!(p.delay(&t), Duration::from_secs(60));
        // A host failing for a day is parked: asked once a day.
        let state = HostState {
            consecutive_errors: 7,
            failing_since_ms: Some(1_000),
            ..HostState::default()
        };
        let day = 86_400_000;
        assert!(!p.timing_of(&state, day).parked);
        let t = p.timing_of(&state, day + 1_000);
        assert!(t.parked && t.consecutive_failures == 7);
        assert_eq!(p.delay(&t), PARKED_DELAY);
    }

    #[test]
    fn delay_is_the_largest_of_the_three() {
        let p = policy();
        let mut t = Timing::default();
        assert_eq!(p.delay(&t), Duration::from_secs(5), "minimum alone");
        t.note_crawl_delay(Duration::from_secs(7));
        assert_eq!(
            p.delay(&t),
            Duration::from_secs(7),
            "Crawl-delay above minimum"
        );
        for ms in [1000, 2000, 3000] {
            p.success(&mut t, Duration::from_millis(ms));
        }
        // mean 2 s × 5 = 10 s
        assert_eq!(p.delay(&t), Duration::from_secs(10), "factor × mean");
    }

    #[test]
    fn mean_covers_the_last_five_only() {
        let p = policy();
        let mut t = Timing::default();
        p.success(&mut t, Duration::from_secs(100));
        for _ in 0..5 {
            p.success(&mut t, Duration::from_millis(200));
        }
        assert_eq!(t.mean_response(), Some(Duration::from_millis(200)));
    }

    #[test]
    fn crawl_delay_cap() {
        let p = policy();
        assert!(p.crawl_delay_acceptable(Duration::from_secs(60)));
        assert!(!p.crawl_delay_acceptable(Duration::from_secs(61)));
    }

    #[test]
    fn consecutive_failures_drop_the_host_and_success_resets() {
        let p = policy();
        let mut t = Timing::default();
        assert_eq!(p.failure(&mut t), AfterFailure::Continue);
        assert_eq!(p.failure(&mut t), AfterFailure::Continue);
        p.success(&mut t, Duration::from_millis(5));
        assert_eq!(p.failure(&mut t), AfterFailure::Continue);
        assert_eq!(p.failure(&mut t), AfterFailure::Continue);
        assert_eq!(p.failure(&mut t), AfterFailure::Drop);
    }

    #[test]
    fn retry_after_seconds_dates_and_cap() {
        let p = policy();
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(p.retry_after("30", now), Some(Duration::from_secs(30)));
        assert_eq!(p.retry_after("86400", now), Some(Duration::from_secs(600)));
        let later = httpdate::fmt_http_date(now + Duration::from_secs(120));
        assert_eq!(p.retry_after(&later, now), Some(Duration::from_secs(120)));
        let past = httpdate::fmt_http_date(now - Duration::from_secs(120));
        assert_eq!(p.retry_after(&past, now), Some(Duration::ZERO));
        assert_eq!(p.retry_after("soon", now), None);
    }
}
