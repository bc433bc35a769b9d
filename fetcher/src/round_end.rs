//! When a round ends before its last URL: the tail rule.
//!
//! A round is worth going on while its hosts keep the fetcher busy. Near
//! its end only a few hosts are left, and they are often the ones that
//! wait most: a robots.txt to ask again in a minute, a `Retry-After`, a
//! long `Crawl-delay`, a server that times out. Every other host is done
//! and idle until the next round brings it the links found in this one.
//! So the round ends once the hosts left could keep up less than a share
//! of the pace of the hosts left and the hosts done, and would need more
//! than a short while to finish: their URLs go to the leftover with their
//! not-before times, and the next round takes them up at the same pace (the
//! penalty box is kept in the host state, so no host is asked sooner than
//! its delay allows).
//!
//! A host's pace is one request per cycle (its delay plus its mean
//! response time, [`common::politeness::Policy::cycle`]); one waiting in
//! the penalty box adds its wait, and one with a request in flight for
//! longer than its cycle is as slow as that request. Hosts given up in the
//! round (robots.txt unavailable, too many failures, a `Crawl-delay` over
//! the cap) count for nothing: they will not be ready for more either.
//!
//! ```text
//!    pace of the hosts with work                      time they need
//! ──────────────────────────────────────  < share  and   to finish     > tail time  ⇒  end the round
//! pace of the hosts with work + hosts done
//! ```
//!
//! A round that has not seen a single request to its end never ends this
//! way: a new round would bring nothing new, only the same waits.
//!
//! A round also ends when every host left is **blocked**, held longer than
//! its own delay (a robots.txt to ask again, a `Retry-After`), and none can
//! be asked within the tail time: there is nothing to do but wait, and the
//! next run (cron's, typically) is a better place for it than this one.
//! A host held only by its own delay, however long (`Crawl-delay: 60`), is
//! never blocked: it is working at its pace.

use std::time::Duration;

/// How a round ends early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The hosts left could keep up only a small share of the round's pace.
    Tail,
    /// Every host left is held beyond its own delay: nothing to do but wait.
    Held,
}

/// The settings of the rule (`--tail-share`, `--tail-time`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TailRule {
    /// The round ends when the hosts with work could keep up less than this
    /// share of the pace of all its hosts (0: never).
    pub share: f64,
    /// ...and would need more than this to finish.
    pub time: Duration,
}

/// The pace of a round's hosts at one moment, from
/// [`crate::frontier::Frontier::pace`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Pace {
    /// Requests per second the hosts that still have work can make, given
    /// their delays and what they wait for.
    pub working: f64,
    /// Requests per second the hosts that are done could make, had they
    /// more work.
    pub idle: f64,
    /// The longest time a host with work needs to finish it.
    pub finish: Duration,
    /// Hosts with work.
    pub hosts: usize,
    /// Hosts with work held longer than their own delay.
    pub blocked: usize,
    /// How soon the first host with work may be asked (zero if one is ready
    /// or has a request in flight).
    pub soonest: Option<Duration>,
    /// Requests the round has seen to their end.
    pub requests_done: u64,
}

impl Pace {
    /// The share of the round's pace the hosts with work can keep up.
    pub fn share(&self) -> f64 {
        let all = self.working + self.idle;
        if all > 0.0 { self.working / all } else { 0.0 }
    }
}

impl TailRule {
    /// How the round should end now, if it should: its tail (it has done
    /// something, and the hosts left are too slow and too far from done to
    /// be waited for), or every host left held.
    pub fn ends_round(&self, pace: &Pace) -> Option<Ending> {
        if self.share <= 0.0 || pace.hosts == 0 {
            return None;
        }
        if pace.blocked == pace.hosts && pace.soonest.is_some_and(|s| s > self.time) {
            return Some(Ending::Held);
        }
        let tail = pace.requests_done > 0 && pace.share() < self.share && pace.finish > self.time;
        tail.then_some(Ending::Tail)
    }

    /// Why the round ends, for the log.
    pub fn explain(&self, pace: &Pace) -> String {
        if pace.blocked == pace.hosts {
            return format!(
                "the {} host(s) left are held beyond their delay (robots.txt to ask again, \
                 Retry-After) for {:.0}s at least",
                pace.hosts,
                pace.soonest.unwrap_or_default().as_secs_f64()
            );
        }
        format!(
            "the {} host(s) left could keep up {:.0} % of the round's pace (less than {:.0} %) \
             and would need {:.0}s more",
            pace.hosts,
            pace.share() * 100.0,
            self.share * 100.0,
            pace.finish.as_secs_f64()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule() -> TailRule {
        TailRule {
            share: 0.25,
            time: Duration::from_secs(10),
        }
    }

    fn pace(working: f64, all: f64, finish_s: u64, hosts: usize) -> Pace {
        Pace {
            working,
            idle: all - working,
            finish: Duration::from_secs(finish_s),
            hosts,
            blocked: 0,
            soonest: Some(Duration::ZERO),
            requests_done: 10,
        }
    }

    #[test]
    fn a_slow_tail_that_is_far_from_done_ends_the_round() {
        // 200 hosts at one request a second; one left, 60 s of work.
        assert_eq!(
            rule().ends_round(&pace(1.0, 200.0, 60, 1)),
            Some(Ending::Tail)
        );
        assert!(
            rule()
                .explain(&pace(1.0, 200.0, 60, 1))
                .contains("1 host(s)")
        );
    }

    #[test]
    fn a_tail_about_to_finish_is_waited_for() {
        assert_eq!(rule().ends_round(&pace(1.0, 200.0, 3, 1)), None);
    }

    #[test]
    fn most_hosts_still_working_go_on() {
        assert_eq!(rule().ends_round(&pace(60.0, 200.0, 600, 60)), None);
        // One host alone is the whole round: its pace is all there is.
        assert_eq!(rule().ends_round(&pace(0.2, 0.2, 600, 1)), None);
    }

    #[test]
    fn a_round_where_every_host_left_is_blocked_ends_even_if_it_did_nothing() {
        let blocked = Pace {
            blocked: 2,
            soonest: Some(Duration::from_secs(55)),
            requests_done: 0,
            ..pace(0.03, 0.03, 120, 2)
        };
        assert_eq!(rule().ends_round(&blocked), Some(Ending::Held));
        assert!(rule().explain(&blocked).contains("held beyond their delay"));
        // Soon free again: waited for.
        let soon = Pace {
            soonest: Some(Duration::from_secs(3)),
            ..blocked
        };
        assert_eq!(rule().ends_round(&soon), None);
        // One host working at its own pace, however slow: not stalled.
        let steady = Pace {
            blocked: 1,
            ..blocked
        };
        assert_eq!(rule().ends_round(&steady), None);
    }

    #[test]
    fn a_round_that_did_nothing_waits_and_share_0_never_ends_early() {
        let idle = Pace {
            requests_done: 0,
            ..pace(0.0, 200.0, 600, 3)
        };
        assert_eq!(rule().ends_round(&idle), None);
        let off = TailRule {
            share: 0.0,
            ..rule()
        };
        assert_eq!(off.ends_round(&pace(0.0, 200.0, 600, 3)), None);
        assert_eq!(
            rule().ends_round(&pace(0.0, 200.0, 0, 0)),
            None,
            "nothing left"
        );
    }
}
