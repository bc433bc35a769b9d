//! Step 2 of a run: the state of the segment's hosts (hosts.db, with the
//! robots.txt answers an interrupted run kept only in its WARC files), the
//! holds earlier runs left ([`super::holds`]), and every key of the segment
//! into the frontier with its timing, robots.txt, hold and byte budgets.

use std::collections::HashMap;
use std::sync::Arc;

use common::crawldir::CrawlDir;
use common::hoststate::{HostDb, HostState};
use common::politeness::{OwnDelay, Policy, Timing};

use super::Run;
use super::holds::{Holds, longest_hold};
use super::load::Segment;
use crate::budget::Cut;
use crate::clock::{self, instant_of};
use crate::contacts::{self, Journal};
use crate::error::Error;
use crate::feed::{self, KeyRanges};
use crate::frontier::{Frontier, Job};
use crate::host_updates;
use crate::queue_key::KeyMode;
use crate::resume;
use crate::robots_cache;

/// The frontier filled, with what it was filled from that the run keeps.
pub(super) struct Queued {
    pub(super) frontier: Arc<Frontier>,
    /// The holds of earlier runs (with hosts.db opened to read). Before
    /// `db`: dropped first on an early return, so that `db` closes last and
    /// leaves hosts.db out of WAL mode (see [`super::holds::HostFiles`]).
    pub(super) holds: Arc<Holds>,
    /// hosts.db, for the host writer.
    pub(super) db: HostDb,
    /// The state of the segment's hosts, as loaded.
    pub(super) host_states: HashMap<String, HostState>,
    pub(super) journal: Journal,
}

/// Step 2: the holds earlier runs left (hosts.db, the contacts journals),
/// and every key of the segment into the frontier.
pub(super) fn queue(run: &Run, segment: &mut Segment) -> Result<Queued, Error> {
    let (s, crawl, id, log) = (run.s, run.crawl, run.id, run.log);
    let loaded = &segment.loaded;
    let (mut db, mut host_states) = open_host_states(crawl, loaded)?;
    keep_resumed_robots(&mut db, &mut host_states, &segment.resumed, &s.agent_name)?;
    // Requests that runs killed before they could record them in hosts.db.
    let journaled = contacts::read_all(
        crawl,
        id,
        s.options.download_timeout,
        s.policy.max_crawl_delay,
        clock::now_ms(),
    )
    .map_err(Error::io(crawl.contacts_dir()))?;
    let journal = Journal::open(crawl, id).map_err(Error::io(crawl.contacts_path(id)))?;
    let read_only = HostDb::open_read_only(crawl.hosts_db_path())?;
    let held_in_db = match (&read_only, s.options.key) {
        // A host's own key comes with its hold; other hosts are looked up
        // when met.
        (_, KeyMode::Host) | (None, _) => HashMap::new(),
        (Some(db), _) => db.held_after(clock::now_ms())?.into_iter().collect(),
    };
    let holds = Arc::new(Holds::new(
        longest_hold(s),
        s.policy.max_crawl_delay,
        read_only,
        journaled,
        held_in_db,
        (s.options.key != KeyMode::Host).then_some(&segment.key_of),
    ));
    let frontier = Arc::new(Frontier::with_carried(
        s.policy.clone(),
        s.options.robots_retry_delay,
        Box::new({
            let holds = holds.clone();
            move |key, host, new_key| holds.of_host_met(key, host, new_key)
        }),
    ));
    let filled = fill_frontier(
        &frontier,
        &s.policy,
        &s.host_rules,
        &loaded.keys,
        &host_states,
        &holds,
        &segment.resumed,
        std::mem::take(&mut segment.retries),
        &s.agent_name,
    );
    set_byte_budgets(
        &frontier,
        &s.budgets,
        &s.host_rules,
        &loaded.keys,
        &host_states,
    );
    if !holds.journaled.is_empty() {
        log.info(format!(
            "{}: {} hosts contacted by runs that did not end cleanly wait their delay",
            crawl.contacts_dir().display(),
            holds.journaled.len()
        ));
    }
    if filled.cut_holds > 0 {
        log.info(format!(
            "{}: {} hosts held later than any run can hold a host ({}s from now): held that \
             long instead (a clock set back, or a hand edit?)",
            crawl.hosts_db_path().display(),
            filled.cut_holds,
            holds.longest.as_secs()
        ));
    }
    log.info(format!(
        "{} URLs to fetch in {} queues ({} already done; robots.txt known for {} hosts; \
         {} hosts wait for their next allowed contact)",
        loaded.urls,
        loaded.keys.len(),
        segment.already_done,
        filled.cached_robots,
        filled.waiting
    ));
    Ok(Queued {
        frontier,
        db,
        holds,
        host_states,
        journal,
    })
}

/// What [`fill_frontier`] found.
struct Filled {
    /// Hosts whose robots.txt is known.
    cached_robots: usize,
    /// Keys that start in the penalty box.
    waiting: usize,
    /// Keys whose hold was later than any run can set, and was cut.
    cut_holds: usize,
}

/// Adds every key of the segment to the frontier with its remembered
/// response times, its robots.txt (from an interrupted run of this segment,
/// or from the host state when less than a day old) and its next allowed
/// contact (the latest of the host state's, the contacts journals' with the
/// key's delay as known now, and its URLs' `not_before`), and the retries
/// found by the resume.
#[allow(clippy::too_many_arguments)]
fn fill_frontier(
    frontier: &Frontier,
    policy: &Policy,
    host_rules: &common::rules::HostRules,
    keys: &[feed::KeyRanges],
    host_states: &HashMap<String, common::hoststate::HostState>,
    holds: &Holds,
    resumed: &resume::Resumed,
    retries: Vec<(String, Job)>,
    agent_name: &str,
) -> Filled {
    let now_ms = clock::now_ms();
    let mut filled = Filled {
        cached_robots: 0,
        waiting: 0,
        cut_holds: 0,
    };
    for k in keys {
        let state = host_states.get(&k.first_host);
        let times = state
            .map(|s| s.response_times_ms.clone())
            .unwrap_or_default();
        let rules = robots_cache::kept_rules(
            resumed.robots.get(&k.first_host),
            state.and_then(|s| s.robots.as_ref()),
            now_ms,
            agent_name,
        );
        // What earlier runs left: response times, and failures in a row
        // (the backoff), carried from hosts.db.
        let mut carried = Timing::with_history(&times);
        // The delays the host rules give the key's hosts.
        carried.own = OwnDelay::of_hosts(host_rules, policy, k.hosts());
        if let Some(s) = state {
            let t = policy.timing_of(s, now_ms);
            carried.consecutive_failures = t.consecutive_failures;
            carried.parked = t.parked;
        }
        // The key's delay as known now, its Crawl-delay included.
        let mut timing = carried.clone();
        if let Some(cd) = rules.as_ref().and_then(|r| r.crawl_delay()) {
            timing.note_crawl_delay(cd);
        }
        let delay_ms = i64::try_from(policy.delay(&timing).as_millis()).unwrap_or(i64::MAX);
        // The latest hold on any host of the key, no later than any run
        // can hold a host.
        let others = holds.held_by_key.get(&k.name).into_iter().flatten();
        let latest = k
            .hosts()
            .chain(others.map(String::as_str))
            .map(|h| {
                let state = host_states.get(h);
                let robots_known = || match h == k.first_host {
                    true => rules.is_some(),
                    false => robots_cache::kept_rules(
                        resumed.robots.get(h),
                        state.and_then(|s| s.robots.as_ref()),
                        now_ms,
                        agent_name,
                    )
                    .is_some(),
                };
                holds.of_host(h, state, delay_ms, robots_known)
            })
            .chain([k.not_before])
            .flatten()
            .max();
        let not_before = latest
            .map(|ms| {
                let cut = holds.cut(ms, now_ms);
                filled.cut_holds += usize::from(cut != ms);
                cut
            })
            .filter(|&ms| ms > now_ms);
        filled.waiting += usize::from(not_before.is_some());
        let id = frontier.add_key(
            &k.name,
            k.ranges.clone(),
            k.urls,
            carried,
            not_before.map(instant_of),
        );
        if let Some(rules) = rules {
            filled.cached_robots += 1;
            frontier.set_robots(id, &k.first_host, Arc::new(rules));
        }
    }
    for (key, job) in retries {
        let id = frontier
            .key_id(&key)
            .unwrap_or_else(|| frontier.add_key(&key, Vec::new(), 0, Timing::default(), None));
        frontier.add_retry(id, job);
    }
    filled
}

/// Gives each key of the segment the WARC bytes it may store in the run:
/// `max_host_round_bytes`, and what `max_host_bytes` (the host rules' for
/// its first host, else the crawl's) leaves of that host's bytes over the
/// crawl (`hosts.db`). The segmenter holds a host over its budget out of
/// the next segments with the same value ([`common::rules`]), so the cut
/// here only ends what a segment planned before the host reached it.
fn set_byte_budgets(
    frontier: &Frontier,
    budgets: &crate::budget::Budgets,
    host_rules: &common::rules::HostRules,
    keys: &[feed::KeyRanges],
    host_states: &HashMap<String, HostState>,
) {
    let by_rule = host_rules.sets(common::rules::Key::MaxHostBytes);
    for k in keys {
        let Some(id) = frontier.key_id(&k.name) else {
            continue;
        };
        if let Some(round) = budgets.host_round {
            frontier.set_byte_budget(id, round, Cut::HostRoundBytes);
        }
        let host_max = match by_rule {
            true => (host_rules.for_host(&k.first_host, None))
                .max_host_bytes()
                .unwrap_or(budgets.host),
            false => budgets.host,
        };
        if let Some(max) = host_max {
            let spent = host_states.get(&k.first_host).map_or(0, |h| h.bytes_total);
            frontier.set_byte_budget(id, max.saturating_sub(spent), Cut::HostBytes);
        }
    }
}

/// The robots.txt answers an interrupted run of this segment stored are
/// reused, not asked again; a run killed before it wrote them to hosts.db
/// leaves them only in its WARC files. Those hosts.db lacks (or holds older
/// than can be reused) are written there now, so that the next run and the
/// segmenter (which reads the `Sitemap:` lines kept there) know them.
fn keep_resumed_robots(
    db: &mut HostDb,
    states: &mut HashMap<String, HostState>,
    resumed: &resume::Resumed,
    agent_name: &str,
) -> Result<(), Error> {
    let now_ms = clock::now_ms();
    let mut missing = Vec::new();
    for (host, (status, body, fetched_ms)) in &resumed.robots {
        if !common::hoststate::within_robots_ttl(*fetched_ms, now_ms) {
            // Too old to stand for the rules: asked again, like a stale
            // answer in hosts.db.
            continue;
        }
        let state = states.entry(host.clone()).or_insert_with(|| HostState {
            host: host.clone(),
            ..HostState::default()
        });
        if state.robots.as_ref().is_some_and(|r| r.reusable(now_ms)) {
            continue;
        }
        let outcome = robots_cache::decode(*status);
        state.crawl_delay_ms = crate::robots::Robots::after_fetch(outcome, body, agent_name)
            .and_then(|r| r.crawl_delay())
            .map(|d| d.as_millis() as u64);
        state.robots = Some(robots_cache::entry(outcome, body, *fetched_ms));
        missing.push(state.clone());
    }
    if !missing.is_empty() {
        db.put_many(&missing)?;
    }
    Ok(())
}

/// `hosts.db` opened for writing, and the states of the segment's hosts.
/// They are read before the file is opened for writing (which puts it in
/// WAL mode): a row that does not read refuses the run with the file as it
/// was found. Should the file not open read-only (a write-ahead log
/// without its index beside it), they are read after.
fn open_host_states(
    crawl: &CrawlDir,
    loaded: &feed::Loaded,
) -> Result<(HostDb, HashMap<String, HostState>), Error> {
    let hosts = || {
        loaded
            .keys
            .iter()
            .flat_map(KeyRanges::hosts)
            .map(str::to_string)
    };
    let early = match HostDb::open_read_only(crawl.hosts_db_path()) {
        Ok(Some(ro)) => Some(host_updates::load(&ro, hosts())?),
        Ok(None) | Err(_) => None,
    };
    let db = HostDb::open(crawl.hosts_db_path())?;
    let states = match early {
        Some(states) => states,
        None => host_updates::load(&db, hosts())?,
    };
    Ok((db, states))
}
