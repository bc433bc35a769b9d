//! When a round ends before its last URL: the tail rule.
//!
//! A round is worth going on while its hosts keep the fetcher busy. Near
//! its end only a few hosts are left, and they are often the ones that
//! wait most: a robots.txt to ask again in a minute, a `Retry-After`, a
//! long `Crawl-delay`, a server that times out. Every other host is done
//! and idle until the next round brings it the links found in this one.
//! So the round ends once the hosts left could keep up less than a share
//! of the pace of all its hosts, and would need more than a short while to
//! finish: their URLs go to the leftover with their not-before times, and
//! the next round takes them up at the same pace (the penalty box is kept
//! in the host state, so no host is asked sooner than its delay allows).
//!
//! A host's pace is one request per cycle (its delay plus its mean
//! response time, [`common::politeness::Policy::cycle`]); one waiting in
//! the penalty box adds its wait, and one with a request in flight for
//! longer than its cycle is as slow as that request.
//!
//! ```text
//! pace of the hosts with work          time they need
//! ───────────────────────────  < share   and   to finish  > tail time   ⇒  end the round
//! pace of all the round's hosts
//! ```
//!
//! A round that has not seen a single request to its end never ends this
//! way: a new round would bring nothing new, only the same waits.

use std::time::Duration;

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
    /// Requests per second all the round's hosts could make.
    pub all: f64,
    /// The longest time a host with work needs to finish it.
    pub finish: Duration,
    /// Hosts with work.
    pub hosts: usize,
    /// Requests the round has seen to their end.
    pub requests_done: u64,
}

impl Pace {
    /// The share of the round's pace the hosts with work can keep up.
    pub fn share(&self) -> f64 {
        if self.all > 0.0 {
            self.working / self.all
        } else {
            0.0
        }
    }
}

impl TailRule {
    /// True if the round should end now: it has done something, and the
    /// hosts left are too slow and too far from done to be waited for.
    pub fn ends_round(&self, pace: &Pace) -> bool {
        self.share > 0.0
            && pace.requests_done > 0
            && pace.hosts > 0
            && pace.share() < self.share
            && pace.finish > self.time
    }

    /// Why the round ends, for the log.
    pub fn explain(&self, pace: &Pace) -> String {
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
            all,
            finish: Duration::from_secs(finish_s),
            hosts,
            requests_done: 10,
        }
    }

    #[test]
    fn a_slow_tail_that_is_far_from_done_ends_the_round() {
        // 200 hosts at one request a second; one left, 60 s of work.
        assert!(rule().ends_round(&pace(1.0, 200.0, 60, 1)));
        assert!(
            rule()
                .explain(&pace(1.0, 200.0, 60, 1))
                .contains("1 host(s)")
        );
    }

    #[test]
    fn a_tail_about_to_finish_is_waited_for() {
        assert!(!rule().ends_round(&pace(1.0, 200.0, 3, 1)));
    }

    #[test]
    fn most_hosts_still_working_go_on() {
        assert!(!rule().ends_round(&pace(60.0, 200.0, 600, 60)));
        // One host alone is the whole round: its pace is all there is.
        assert!(!rule().ends_round(&pace(0.2, 0.2, 600, 1)));
    }

    #[test]
    fn a_round_that_did_nothing_waits_and_share_0_never_ends_early() {
        let idle = Pace {
            requests_done: 0,
            ..pace(0.0, 200.0, 600, 3)
        };
        assert!(!rule().ends_round(&idle));
        let off = TailRule {
            share: 0.0,
            ..rule()
        };
        assert!(!off.ends_round(&pace(0.0, 200.0, 600, 3)));
        assert!(!rule().ends_round(&pace(0.0, 200.0, 0, 0)), "nothing left");
    }
}
