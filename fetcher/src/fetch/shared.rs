//! What the workers of a run share ([`crate::worker::Shared`]), built from
//! the settings: the HTTP client, the byte accounting, and the checks a
//! followed redirect must pass.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use common::bloom::BloomFilter;
use common::crawldir::CrawlDir;
use common::filter::UrlFilter;
use common::runlog::RunLog;

use super::Run;
use crate::budget::Spend;
use crate::contacts::Journal;
use crate::crew;
use crate::dns::Dns;
use crate::error::Error;
use crate::feed;
use crate::flight::Flight;
use crate::frontier::Frontier;
use crate::http::{Client, ClientConfig};
use crate::progress::Counters;
use crate::queue_key::KeyOf;
use crate::recorder::{Encoders, Spare};
use crate::settings::Settings;
use crate::tls::Trust;
use crate::worker::{ResponseClock, Shared};

/// The HTTP client of a run that keeps at most `idle_connections`
/// connections between requests.
pub(super) fn client(
    s: &Settings,
    dns: Dns,
    tls: Trust,
    idle_connections: usize,
) -> std::io::Result<Client> {
    Client::new(ClientConfig {
        user_agent: s.user_agent(),
        from: s.options.from.clone(),
        connect_timeout: s.options.connect_timeout,
        first_byte_timeout: s.options.first_byte_timeout,
        download_timeout: s.options.download_timeout,
        allow_private: s.options.allow_private,
        host_rules: Arc::new(s.host_rules.clone()),
        dns,
        proxy: s.proxy.as_ref().map(|p| p.proxy.clone()),
        idle_connections,
        tls,
    })
}

/// What the workers share: the frontier, the client, the work file, the
/// contact journal, the settings they read and the redirect checks.
pub(super) fn share(
    run: &Run,
    frontier: Arc<Frontier>,
    client: Client,
    work: feed::WorkFile,
    journal: Journal,
    key_of: KeyOf,
    spare: Spare,
) -> Result<Arc<Shared>, Error> {
    let (s, crawl, log) = (run.s, run.crawl, run.log);
    let (filter, seen) = redirect_checks(s, crawl)?;
    Ok(Arc::new(Shared {
        frontier,
        client,
        flight: Flight::new(crew::FIRST_WORKERS),
        work: Arc::new(work),
        encoders: Encoders::for_this_machine(s.options.warc_level, spare),
        response_clock: ResponseClock::default(),
        counters: Arc::new(Counters::default()),
        stopping: Arc::new(AtomicBool::new(false)),
        ending_round: AtomicBool::new(false),
        journal,
        failure: Mutex::new(None),
        agent_name: s.agent_name.clone(),
        shard: s.shard,
        host_rules: Arc::new(s.host_rules.clone()),
        options: s.options.clone(),
        policy: s.policy.clone(),
        filter,
        seen,
        key_of,
        spend: start_spend(s, crawl, log)?,
    }))
}

/// The run's byte accounting: the crawl's WARC bytes so far are counted
/// only when the crawl has a budget (a listing of `fetched/`).
fn start_spend(s: &Settings, crawl: &CrawlDir, log: &RunLog) -> Result<Spend, Error> {
    let before = match s.budgets.crawl {
        Some(_) => crawl
            .warc_bytes()
            .map_err(Error::io(crawl.fetched_root()))?,
        None => 0,
    };
    let spend = Spend::new(before, &s.budgets);
    if spend.spent_at_start() {
        log.info(format!(
            "max_crawl_bytes {} reached before the run: the crawl's WARC files hold {}; nothing \
             is fetched (raise max_crawl_bytes to go on)",
            common::human::bytes_precise(s.budgets.crawl.unwrap_or(0)),
            common::human::bytes_precise(before)
        ));
    }
    Ok(spend)
}

/// The scope/trap filter and `seen.bloom` that redirect targets followed
/// in the run must pass (nothing when redirects are not followed).
fn redirect_checks(
    s: &Settings,
    crawl: &CrawlDir,
) -> Result<(Option<UrlFilter>, Option<BloomFilter>), Error> {
    if s.options.follow_redirects == 0 {
        return Ok((None, None));
    }
    let scope =
        common::filter::Scope::with_host_rules(&s.scope, crawl.top(), s.host_rules.clone())?;
    let seen = if crawl.bloom_path().exists() {
        Some(BloomFilter::open_read_only(crawl.bloom_path())?)
    } else {
        None
    };
    let filter = UrlFilter {
        limits: s.filter.clone(),
        scope,
    };
    Ok((Some(filter), seen))
}
