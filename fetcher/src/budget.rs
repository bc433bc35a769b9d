//! Byte budgets and the free-disk floor: what a run may store before it
//! ends (`max_run_bytes`, `max_crawl_bytes`, the floor `min_free_disk`),
//! and what one queue may store before its URLs go to the leftover
//! (`max_host_round_bytes` in a run, `max_host_bytes` over the crawl, from
//! `hosts.db`).
//!
//! Bytes are WARC bytes: the compressed request and response records as
//! they go into the WARC files (what `ls -l fetched/*/` adds up to, less
//! each file's `warcinfo` record). A budget cuts within one response: the
//! response that reaches it is stored, none after it ([`Spend::reserve`]);
//! responses still in flight then are put back untried.

use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

/// The byte budgets of a run (`None`: no limit).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Budgets {
    /// WARC bytes of this run (`max_run_bytes`).
    pub run: Option<u64>,
    /// WARC bytes of the whole crawl (`max_crawl_bytes`).
    pub crawl: Option<u64>,
    /// WARC bytes of one host over the crawl (`max_host_bytes`).
    pub host: Option<u64>,
    /// WARC bytes of one host in this run (`max_host_round_bytes`).
    pub host_round: Option<u64>,
}

/// Why URLs were not fetched although their host could be asked: a
/// budget, or the disk floor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Cut {
    /// `max_run_bytes` reached: the run ended.
    RunBytes,
    /// `max_crawl_bytes` reached: the run ended, and the crawl with it.
    CrawlBytes,
    /// `max_host_round_bytes` reached: the host's URLs wait for a later run.
    HostRoundBytes,
    /// `max_host_bytes` reached: the host's URLs wait (in the backlog, once
    /// the segmenter has read the leftover) until the budget is raised.
    HostBytes,
    /// Free disk space fell to `min_free_disk`: the run ended.
    Disk,
}

impl Cut {
    /// The name in `stats.json`, `DONE` and the run's log.
    pub fn name(self) -> &'static str {
        match self {
            Cut::RunBytes => "run-bytes",
            Cut::CrawlBytes => "crawl-bytes",
            Cut::HostRoundBytes => "host-round-bytes",
            Cut::HostBytes => "host-bytes",
            Cut::Disk => "disk",
        }
    }
}

/// The WARC bytes a run has stored, against the run's and the crawl's
/// budgets. Shared by the workers, which reserve before they store.
#[derive(Debug, Default)]
pub struct Spend {
    stored: AtomicU64,
    /// The crawl's WARC bytes when the run started.
    before: u64,
    run: Option<u64>,
    crawl: Option<u64>,
    /// 0 while no budget is reached, else 1 + the index of the [`Cut`].
    cut: AtomicU8,
}

impl Spend {
    /// Bytes of a run of a crawl that held `before` WARC bytes when it
    /// started, under `budgets`.
    pub fn new(before: u64, budgets: &Budgets) -> Spend {
        let spend = Spend {
            before,
            run: budgets.run,
            crawl: budgets.crawl,
            ..Spend::default()
        };
        if spend.spent_at_start() {
            spend.set_cut(Cut::CrawlBytes);
        }
        spend
    }

    /// The budget reached with `stored` bytes stored in the run, if any.
    fn over(&self, stored: u64) -> Option<Cut> {
        if self.run.is_some_and(|r| stored >= r) {
            Some(Cut::RunBytes)
        } else if self
            .crawl
            .is_some_and(|c| self.before.saturating_add(stored) >= c)
        {
            Some(Cut::CrawlBytes)
        } else {
            None
        }
    }

    /// True if the crawl's budget was already spent when the run started.
    pub fn spent_at_start(&self) -> bool {
        self.over(0) == Some(Cut::CrawlBytes)
    }

    /// Reserves `n` bytes for a response about to be stored: false (nothing
    /// reserved) once a budget is reached. The response that reaches a
    /// budget is stored; [`Spend::cut`] says so from then on.
    pub fn reserve(&self, n: u64) -> bool {
        let prev = self.stored.fetch_add(n, Ordering::SeqCst);
        if let Some(cut) = self.over(prev) {
            self.stored.fetch_sub(n, Ordering::SeqCst);
            self.set_cut(cut);
            return false;
        }
        if let Some(cut) = self.over(prev.saturating_add(n)) {
            self.set_cut(cut);
        }
        true
    }

    fn set_cut(&self, cut: Cut) {
        let code = match cut {
            Cut::RunBytes => 1,
            _ => 2,
        };
        let _ = self
            .cut
            .compare_exchange(0, code, Ordering::SeqCst, Ordering::SeqCst);
    }

    /// The run or crawl budget reached, if one is.
    pub fn cut(&self) -> Option<Cut> {
        match self.cut.load(Ordering::SeqCst) {
            0 => None,
            1 => Some(Cut::RunBytes),
            _ => Some(Cut::CrawlBytes),
        }
    }

    /// WARC bytes stored by the run.
    pub fn stored(&self) -> u64 {
        self.stored.load(Ordering::SeqCst)
    }

    /// The crawl's WARC bytes when the run started.
    pub fn before(&self) -> u64 {
        self.before
    }

    /// The budget of `cut` (`None` for one that is not the run's or the crawl's).
    pub fn limit(&self, cut: Cut) -> Option<u64> {
        match cut {
            Cut::RunBytes => self.run,
            Cut::CrawlBytes => self.crawl,
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_response_that_reaches_the_budget_is_the_last_stored() {
        let s = Spend::new(
            0,
            &Budgets {
                run: Some(100),
                ..Budgets::default()
            },
        );
        assert!(s.reserve(60));
        assert_eq!(s.cut(), None);
        assert!(s.reserve(60), "the one that crosses is stored");
        assert_eq!(s.cut(), Some(Cut::RunBytes));
        assert!(!s.reserve(1), "none after it");
        assert_eq!(s.stored(), 120);

        let c = Spend::new(
            950,
            &Budgets {
                crawl: Some(1000),
                ..Budgets::default()
            },
        );
        assert!(!c.spent_at_start());
        assert!(c.reserve(50));
        assert_eq!(c.cut(), Some(Cut::CrawlBytes));
        let spent = Spend::new(
            1000,
            &Budgets {
                crawl: Some(1000),
                ..Budgets::default()
            },
        );
        assert!(spent.spent_at_start());
        assert_eq!(spent.cut(), Some(Cut::CrawlBytes), "reached before the run");
        assert!(!spent.reserve(1));
    }
}
