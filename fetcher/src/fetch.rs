//! `fetcher fetch CRAWL [SEGMENT_ID]`: one run over one segment, from
//! choosing the segment to writing `DONE`.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::mpsc::SyncSender;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use common::bloom::BloomFilter;
use common::crawldir::{CrawlDir, DONE_FILE, STATS_FILE, WORK_FILE, warc_prefix};
use common::crawllog::ErrorCode;
use common::filter::UrlFilter;
use common::hoststate::{HostDb, HostState};
use common::politeness::{OwnDelay, Policy, Timing};
use common::segment::SegmentRecord;
use common::warc::WarcWriterConfig;

use crate::budget::{Cut, Spend};
use crate::clock::{self, instant_of, unix_ms};
use crate::contacts::{self, Journal};
use crate::crew::{self, Crew};
use crate::dns::HostsMap;
use crate::dns::{Dns, DnsConfig};
use crate::error::Error;
use crate::feed::{self, Admit, KeyRanges};
use crate::flight::Flight;
use crate::frontier::{Frontier, Job};
use crate::host_updates::{self, HostWriter};
use crate::http::{Client, ClientConfig};
use crate::metrics::FetchMetrics;
use crate::outcome::{self, is_retryable};
use crate::progress::Counters;
use crate::queue_key::{KeyMode, KeyOf, key_function};
use crate::recorder::{Encoders, Msg, Recorder, RecorderTotals, Spare, error_line};
use crate::resume;
use crate::robots_cache;
use crate::settings::Settings;
use crate::stats::{self, Stats};
use crate::supervise::{DiskWatch, Stop, Supervised, install_signals, supervise};
use crate::tls::Trust;
use crate::worker::{ResponseClock, Shared};
use common::runlog::RunLog;

/// How a run ended, for the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// Complete, or stopped by a time limit / min-hosts: exit 0.
    Complete,
    /// Stopped by SIGINT/SIGTERM after a clean shutdown: exit 130.
    Signal,
    /// Nothing to fetch: exit 0.
    Nothing,
}

/// Removes the work file however the run ends.
struct RemoveOnDrop(std::path::PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Runs `fetch`.
pub fn run(s: Settings) -> Result<Ended, Error> {
    let crawl = s.crawl.clone();
    // Nothing is created in a directory with nothing to fetch.
    let Some(id) = choose_segment(&crawl, s.segment.as_deref())? else {
        return Ok(Ended::Nothing);
    };
    CrawlDir::open(s.crawl.top()).map_err(Error::io(s.crawl.top()))?;
    crawl.create_subdirs().map_err(Error::io(crawl.root()))?;
    // Below the floor already: refused before anything is written.
    if let Some(short) =
        common::disk::check(crawl.root(), s.disk_floor, 0).map_err(Error::io(crawl.root()))?
    {
        return Err(Error::Disk(short));
    }
    let _ = std::fs::create_dir_all(crawl.logs_dir());
    let log = RunLog::open_or_append("fetcher", s.log.as_deref(), &crawl.new_log_path("fetcher"));
    let result = fetch_segment(&s, &crawl, &id, &log);
    if let Err(e) = &result {
        // main prints it on stderr; the log file of the run gets it too.
        log.error_to_file(&common::exit::chain(e));
    }
    result
}

/// One run over segment `id`, once its output directory is locked.
struct Run<'a> {
    s: &'a Settings,
    crawl: &'a CrawlDir,
    id: &'a str,
    /// `fetched/ID/`.
    out: PathBuf,
    log: &'a RunLog,
    started_at: SystemTime,
    started: Instant,
    /// What an error message adds: how to resume.
    resume_hint: String,
    /// Where closed WARC files go to be uploaded (with a WARC store).
    closed_to: Option<common::store::UploadQueue>,
}

/// Fetches segment `id`, telling `log` what happens: loads it, fills the
/// frontier, runs the workers, and writes the leftover, `stats.json` and
/// `DONE`.
fn fetch_segment(s: &Settings, crawl: &CrawlDir, id: &str, log: &RunLog) -> Result<Ended, Error> {
    let out = crawl.fetched_dir(id);
    std::fs::create_dir_all(&out).map_err(Error::io(&out))?;
    let _lock = lock_output(crawl, id)?;
    // Signals, from the start (a signal while the segment loads is a stop
    // request like any other): the first asks for a clean stop, the second
    // exits at once.
    let signals = Arc::new(AtomicU32::new(0));
    install_signals(signals.clone()).map_err(Error::Start)?;
    remove_temp_files(&out);
    let _work_file = RemoveOnDrop(crawl.work_path(id));
    let uploads = crate::upload::start(s, crawl, &out, log)?;
    let run = Run {
        s,
        crawl,
        id,
        out,
        log,
        started_at: SystemTime::now(),
        started: Instant::now(),
        resume_hint: format!(
            "what was stored is kept: fix the cause and run `fetcher fetch {} {id}` again to resume",
            crawl.root().display()
        ),
        closed_to: uploads.as_ref().map(common::store::Background::queue),
    };
    log.info(format!(
        "fetching segment {id} into {} as {}",
        run.out.display(),
        s.user_agent()
    ));
    for warning in s.host_rules.unapplied() {
        log.warn(warning);
    }
    let mut segment = load(&run)?;
    let queued = queue(&run, &mut segment)?;
    // Written now, every progress interval, and last when dropped (the
    // run over, however it ended).
    let _metrics = FetchMetrics::start(s, id, run.started_at, queued.frontier.clone());
    let ran = run_workers(&run, segment, queued, &signals)?;
    finish(&run, ran, uploads)
}

/// The segment, less what an interrupted earlier run already did, in the
/// work file.
struct Segment {
    loaded: feed::Loaded,
    resumed: resume::Resumed,
    /// URLs an earlier run attempted.
    already_done: u64,
    /// Its failed attempts, to retry, by queue key.
    retries: Vec<(String, Job)>,
    dns: Dns,
    /// TLS trust for https.
    tls: Trust,
    key_of: KeyOf,
}

/// Step 1: what an interrupted earlier run did, and the segment less that
/// into the work file.
fn load(run: &Run) -> Result<Segment, Error> {
    let (s, crawl, id, log) = (run.s, run.crawl, run.id, run.log);
    let resumed = resume::scan(&run.out, &warc_prefix(id), &crawl.crawl_log_path(id))?;
    for warning in &resumed.warnings {
        log.warn(warning);
    }
    if !resumed.is_fresh() {
        log.info(resumed.describe());
    }

    let dns = start_dns(s, log)?;
    let key_of = key_function(s.key, dns.clone());
    let tls = load_trust(s, log)?;

    let segment_path = crawl.segment_path(id);
    let started = Instant::now();
    if s.key == KeyMode::Ip {
        // The queue keys are the addresses: every name is looked up before
        // the segment is read in, --dns-concurrency at a time.
        let names = crate::queue_key::resolve_segment_ahead(&dns, &segment_path);
        log.info(format!(
            "--key ip: looking up the {names} host names of the segment, {} at a time",
            s.dns_concurrency
        ));
    }
    let mut retries: Vec<(String, Job)> = Vec::new();
    let mut already_done = 0u64;
    let loaded = feed::load(
        &segment_path,
        &crawl.work_path(id),
        |r| key_of(&r.host),
        |r| match resumed.done.get(&r.url) {
            None => Admit::Queue,
            Some(status) => {
                already_done += 1;
                if is_retryable(*status) {
                    // A failed attempt before the crash counts as a try.
                    let job = Job::from_record(r).retry(true);
                    retries.push((key_of(&r.host), job));
                }
                Admit::Skip
            }
        },
        |e| log.warn(e),
    )?;
    if loaded.malformed > 0 {
        log.info(format!(
            "{}: {} malformed lines skipped (each is named above; fix or remove them and the \
             URLs on them can be fetched in a later segment)",
            segment_path.display(),
            loaded.malformed
        ));
    }
    if s.key == KeyMode::Ip {
        let c = dns.counts();
        log.info(format!(
            "--key ip: {} queues after {} DNS lookups in {:.2}s",
            loaded.keys.len(),
            c.lookups.load(Ordering::Relaxed),
            started.elapsed().as_secs_f64()
        ));
    } else {
        // Names are looked up before their hosts' turn, so that a worker
        // rarely waits for one.
        dns.resolve_ahead(loaded.keys.iter().flat_map(KeyRanges::hosts));
    }
    Ok(Segment {
        loaded,
        resumed,
        already_done,
        retries,
        dns,
        tls,
        key_of,
    })
}

/// The TLS trust of the run (an unreadable `--ca-file` is a usage error),
/// said in the run log; `--accept-invalid-certs` is warned about.
fn load_trust(s: &Settings, log: &RunLog) -> Result<Trust, Error> {
    let tls = Trust::load(s.ca_file.as_deref(), s.accept_invalid_certs).map_err(Error::Usage)?;
    for e in &tls.summary.system_errors {
        log.warn(format!("TLS system store: {e} (the other roots are used)"));
    }
    if s.accept_invalid_certs {
        log.warn(
            "--accept-invalid-certs: https certificates are NOT checked (unknown issuers, \
             expired certificates and other hosts' names are accepted); this run's WARC files \
             say so in their warcinfo record. Use it for archival crawls only.",
        );
    } else {
        log.note(tls.summary.describe());
    }
    Ok(tls)
}

/// The resolver of the run, and the proxy said in the log.
fn start_dns(s: &Settings, log: &RunLog) -> Result<Dns, Error> {
    let hosts = match &s.hosts_file {
        Some(p) => Some(HostsMap::load(p).map_err(Error::Usage)?),
        None => None,
    };
    let (dns, warning) = Dns::start(DnsConfig {
        server: s.dns_server,
        timeout: s.dns_timeout,
        cache_ttl: s.dns_cache_ttl,
        concurrency: s.dns_concurrency,
        hosts,
    })
    .map_err(Error::Usage)?;
    if let Some(w) = warning {
        log.warn(w);
    }
    if let Some(server) = s.dns_server {
        log.info(format!("names not in --hosts-file are asked of {server}"));
    }
    if let Some(p) = &s.proxy {
        log.info(p.describe());
    }
    Ok(dns)
}

/// The frontier filled, with what it was filled from that the run keeps.
struct Queued {
    frontier: Arc<Frontier>,
    /// The holds of earlier runs (with hosts.db opened to read). Before
    /// `db`: dropped first on an early return, so that `db` closes last and
    /// leaves hosts.db out of WAL mode (see [`HostFiles`]).
    holds: Arc<Holds>,
    /// hosts.db, for the host writer.
    db: HostDb,
    /// The state of the segment's hosts, as loaded.
    host_states: HashMap<String, HostState>,
    journal: Journal,
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

/// Step 2: the holds earlier runs left (hosts.db, the contacts journals),
/// and every key of the segment into the frontier.
fn queue(run: &Run, segment: &mut Segment) -> Result<Queued, Error> {
    let (s, crawl, id, log) = (run.s, run.crawl, run.id, run.log);
    let loaded = &segment.loaded;
    let (mut db, mut host_states) = open_host_states(crawl, loaded)?;
    keep_resumed_robots(&mut db, &mut host_states, &segment.resumed, &s.agent_name)?;
    // Requests that runs killed before they could record them in hosts.db.
    let journaled = contacts::read_all(
        crawl,
        id,
        s.download_timeout,
        s.policy.max_crawl_delay,
        clock::now_ms(),
    )
    .map_err(Error::io(crawl.contacts_dir()))?;
    let journal = Journal::open(crawl, id).map_err(Error::io(crawl.contacts_path(id)))?;
    let read_only = HostDb::open_read_only(crawl.hosts_db_path())?;
    let held_in_db = match (&read_only, s.key) {
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
        (s.key != KeyMode::Host).then_some(&segment.key_of),
    ));
    let frontier = Arc::new(Frontier::with_carried(
        s.policy.clone(),
        s.robots_retry_delay,
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
    set_byte_budgets(&frontier, &s.budgets, &loaded.keys, &host_states);
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

/// What the workers left for [`finish`].
struct Ran {
    stop: Stop,
    /// What a disk or budget stop says.
    stop_detail: Option<String>,
    recorder: Recorder,
    tx: SyncSender<Msg>,
    hosts: HostFiles,
    shared: Arc<Shared>,
    /// The segment's counts, for `stats.json`.
    segment: SegmentCounts,
    /// Time from the start to the first worker.
    startup: Duration,
}

/// What `stats.json` tells of the segment.
struct SegmentCounts {
    lines: u64,
    malformed: u64,
    queues: usize,
    already_done: u64,
}

/// Step 3: the writer threads, the client and the workers, watched by
/// [`supervise`] until the frontier is idle.
fn run_workers(
    run: &Run,
    segment: Segment,
    queued: Queued,
    signals: &AtomicU32,
) -> Result<Ran, Error> {
    let (s, crawl, log) = (run.s, run.crawl, run.log);
    let Segment {
        loaded,
        resumed,
        already_done,
        dns,
        tls,
        key_of,
        ..
    } = segment;
    let queues = loaded.keys.len();
    // A connection kept per queue between its requests, at most half the
    // sockets the run may open; the rest for requests in flight.
    let sockets = crew::open_files_room();
    let idle_connections = queues.clamp(16, 8192).min(sockets / 2);
    let room = sockets - idle_connections;
    let most_workers = s.workers(queues);
    if most_workers > room {
        log.info(format!(
            "at most {room} requests in flight, not {most_workers}: the limit on open files \
             (ulimit -n) leaves room for no more connections"
        ));
    }
    let most_workers = most_workers.min(room);
    let spare = Spare::default();
    let recorder = start_recorder(run, resumed.next_serial(), most_workers, spare.clone())?;
    let tx = recorder.sender();
    for line in resumed.missing_lines {
        let _ = tx.send(Msg::Log(line));
    }
    let hosts = HostFiles {
        holds: queued.holds,
        writer: Some(HostWriter::start(queued.db, queued.host_states)),
    };
    let client = client(s, dns.clone(), tls, idle_connections).map_err(Error::Start)?;
    let shared = share(
        run,
        queued.frontier,
        client,
        loaded.work,
        queued.journal,
        key_of,
        spare,
    )?;
    if shared.spend.spent_at_start() {
        // Nothing may be stored: no request is made.
        shared.frontier.stop();
    }

    let startup = run.started.elapsed();
    let first_workers = match s.threads {
        Some(_) => most_workers,
        None => most_workers.min(crew::FIRST_WORKERS),
    };
    let crew = Crew::start(&shared, &tx, &hosts.sender(), first_workers, most_workers)
        .map_err(Error::Start)?;
    let disk = DiskWatch {
        paths: vec![crawl.root().to_path_buf(), run.out.clone()],
        floor: s.disk_floor,
    };
    let (stop, stop_detail) = supervise(&Supervised {
        settings: s,
        min_hosts: min_hosts(s, queues, log),
        started: run.started,
        shared: &shared,
        recorder: &recorder,
        signals,
        crew: &crew,
        log,
        disk: &disk,
    });
    let workers = crew.count();
    crew.join();
    if workers > first_workers {
        log.info(format!(
            "{workers} workers (from {first_workers}: requests were slow and hosts waited for a \
             worker; at most {most_workers} for {queues} queues)"
        ));
    }
    let c = dns.counts();
    log.info(format!(
        "dns: {} lookups, {} answers from the cache",
        c.lookups.load(Ordering::Relaxed),
        c.cached.load(Ordering::Relaxed)
    ));
    Ok(Ran {
        stop,
        stop_detail,
        recorder,
        tx,
        hosts,
        shared,
        segment: SegmentCounts {
            lines: loaded.lines,
            malformed: loaded.malformed,
            queues,
            already_done,
        },
        startup,
    })
}

/// The HTTP client of a run that keeps at most `idle_connections`
/// connections between requests.
fn client(s: &Settings, dns: Dns, tls: Trust, idle_connections: usize) -> std::io::Result<Client> {
    Client::new(ClientConfig {
        user_agent: s.user_agent(),
        from: s.from.clone(),
        connect_timeout: s.connect_timeout,
        first_byte_timeout: s.first_byte_timeout,
        download_timeout: s.download_timeout,
        allow_private: s.allow_private,
        dns,
        proxy: s.proxy.as_ref().map(|p| p.proxy.clone()),
        idle_connections,
        tls,
    })
}

/// What the workers share: the frontier, the client, the work file, the
/// contact journal, the settings they read and the redirect checks.
fn share(
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
        encoders: Encoders::for_this_machine(s.warc_level, spare),
        response_clock: ResponseClock::default(),
        counters: Arc::new(Counters::default()),
        stopping: Arc::new(AtomicBool::new(false)),
        ending_round: AtomicBool::new(false),
        journal,
        failure: Mutex::new(None),
        agent_name: s.agent_name.clone(),
        max_body: s.max_body,
        batch: s.queue_batch,
        follow_redirects: s.follow_redirects,
        shard: s.shard,
        revisit_identical: s.revisit_identical,
        conditional_requests: s.conditional_requests,
        metadata_records: s.metadata_records,
        metadata_outlinks: s.metadata_outlinks,
        policy: s.policy.clone(),
        filter,
        seen,
        key_of,
        spend: start_spend(s, crawl, log)?,
    }))
}

/// `--min-hosts`, unless the segment has fewer queues (then 0, said in
/// the log): stopping early would leave it unfetched round after round.
fn min_hosts(s: &Settings, queues: usize, log: &RunLog) -> usize {
    if s.min_hosts > queues {
        log.info(format!(
            "--min-hosts {} ignored: the segment has only {} queues, so stopping early \
             would leave it unfetched round after round",
            s.min_hosts, queues
        ));
        0
    } else {
        s.min_hosts
    }
}

/// Step 4: after a failure, keep what is on disk for the next run; else
/// the leftover, the host state, `stats.json` and `DONE`.
fn finish(
    run: &Run,
    mut ran: Ran,
    uploads: Option<common::store::Background>,
) -> Result<Ended, Error> {
    let (crawl, id, log) = (run.crawl, run.id, run.log);
    let stop = ran.stop;
    // The workers have ended: every host update is sent. hosts.db is saved
    // and closed first, whatever happens next.
    let saved = ran.hosts.close();
    if stop == Stop::Failed {
        // Nothing more can be stored (or read): keep what is on disk for
        // the next run to resume from, and write no leftover and no DONE.
        drop(ran.tx);
        let failure = ran
            .shared
            .failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        drop(ran.shared);
        let cause = match (ran.recorder.finish(), failure) {
            (Err(e), _) => e.to_string(),
            (Ok(_), Some(msg)) => msg,
            (Ok(_), None) => "the run failed".to_string(),
        };
        return Err(Error::stopped(cause, &run.resume_hint));
    }
    let (leftover_urls, cuts) = write_leftover(
        &ran.shared.frontier,
        &ran.shared.work,
        &ran.tx,
        log,
        stop.cut(),
    )?;
    let warc_bytes = ran.shared.spend.stored();
    drop(ran.tx);
    let totals = ran
        .recorder
        .finish()
        .map_err(|e| Error::stopped(e, &run.resume_hint))?;
    match saved {
        // hosts.db holds every host's next contact: the journal is done with.
        Ok(whole) => {
            if !whole {
                log.info(format!(
                    "{}: its write-ahead log could not be folded into it now (a reader held                      it); copy hosts.db-wal with it, or let the next run fold it in",
                    crawl.hosts_db_path().display()
                ));
            }
            if let Err(e) = ran.shared.journal.remove() {
                log.info(format!(
                    "{}: not removed ({e}); the next run reads it, and waits a little more",
                    crawl.contacts_path(id).display()
                ));
            }
        }
        Err(e) => log.info(format!(
            "host state not saved: {e}; {} keeps the hosts contacted, so that the next run \
             waits for them",
            crawl.contacts_path(id).display()
        )),
    }
    let errors = ran.shared.counters.errors.load(Ordering::Relaxed);
    drop(ran.shared);
    // DONE only once every file of the run is in the WARC store.
    if let Some(uploads) = uploads {
        crate::upload::finish(run.crawl, run.id, uploads, log)?;
    }
    write_done(
        run,
        Ending {
            stop,
            detail: ran.stop_detail,
            cuts,
            warc_bytes,
        },
        &totals,
        &ran.segment,
        ran.startup,
        leftover_urls,
        errors,
    )?;
    Ok(if stop == Stop::Signal {
        Ended::Signal
    } else {
        Ended::Complete
    })
}

/// How a run ended, for `stats.json` and `DONE`.
struct Ending {
    stop: Stop,
    /// What a disk or budget stop says.
    detail: Option<String>,
    /// URLs sent to the leftover untried by a budget or the disk floor, by
    /// reason.
    cuts: BTreeMap<String, u64>,
    /// WARC bytes the run stored.
    warc_bytes: u64,
}

/// `stats.json`, then `DONE` (last: the run is complete), and the last line
/// of the run's log.
fn write_done(
    run: &Run,
    end: Ending,
    totals: &RecorderTotals,
    segment: &SegmentCounts,
    startup: Duration,
    leftover_urls: u64,
    errors: u64,
) -> Result<(), Error> {
    let (id, log, out) = (run.id, run.log, &run.out);
    let seconds = run.started.elapsed().as_secs_f64();
    let pages = totals.responses - totals.robots_responses;
    let stop_reason = end.stop.reason();
    let st = Stats {
        version: 1,
        segment: id.to_string(),
        started: common::timefmt::iso_millis(run.started_at),
        finished: common::timefmt::iso_millis(SystemTime::now()),
        seconds,
        stop_reason: stop_reason.into(),
        resumed: segment.already_done > 0,
        segment_urls: segment.lines,
        malformed_lines: segment.malformed,
        already_done: segment.already_done,
        queues: segment.queues as u64,
        attempts: totals.log_lines,
        responses: totals.responses,
        robots_responses: totals.robots_responses,
        payload_bytes: totals.payload_bytes,
        truncated: totals.truncated,
        outcomes: totals.outcomes.clone(),
        leftover: totals.leftover.clone(),
        warc_bytes: end.warc_bytes,
        stop_detail: end.detail.clone().unwrap_or_default(),
        cuts: end.cuts.clone(),
        warc_files: totals
            .warc_files
            .iter()
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect(),
        pages_per_second: pages as f64 / seconds.max(1e-9),
        startup_seconds: startup.as_secs_f64(),
        cpu_seconds: stats::cpu_time().as_secs_f64(),
        peak_rss_bytes: stats::peak_rss(),
    };
    st.write(&out.join(STATS_FILE))
        .map_err(Error::io(out.join(STATS_FILE)))?;
    let mut done = format!(
        "segment {id}\nstop_reason {stop_reason}\nfinished {}\n",
        st.finished
    );
    // Added lines (readers take the lines they know): why a disk or budget
    // stop ended the run, and the URLs each cut sent to the leftover.
    if let Some(d) = &end.detail {
        done.push_str(&format!("stop_detail {}\n", d.replace('\n', " ")));
    }
    if !end.cuts.is_empty() {
        let cuts: Vec<String> = end.cuts.iter().map(|(k, n)| format!("{k}={n}")).collect();
        done.push_str(&format!("cuts {}\n", cuts.join(" ")));
    }
    common::atomic::write_atomic(out.join(DONE_FILE), done.as_bytes())
        .map_err(Error::io(out.join(DONE_FILE)))?;
    if let Some(d) = &end.detail {
        log.info(format!("stopped ({stop_reason}): {d}"));
    }
    log.info(format!(
        "done ({stop_reason}) in {seconds:.1}s: {pages} pages ({:.0}/s), {} stored, {} errors, {leftover_urls} URLs to leftover; {}",
        st.pages_per_second,
        common::human::bytes(totals.payload_bytes),
        errors,
        out.display()
    ));
    Ok(())
}

/// The segment to fetch: the one named, or the oldest pending one; `None`
/// (after saying why) when there is nothing to do.
fn choose_segment(crawl: &CrawlDir, named: Option<&str>) -> Result<Option<String>, Error> {
    let Some(id) = named else {
        let pending = crawl
            .pending_segments()
            .map_err(Error::io(crawl.segments_dir()))?;
        if pending.is_empty() {
            common::runlog::say(format_args!(
                "{}: no segment waiting to be fetched ({})",
                crawl.root().display(),
                nothing_pending(crawl)?
            ));
        }
        return Ok(pending.into_iter().next());
    };
    if !crawl.segment_path(id).is_file() {
        return Err(Error::Usage(format!(
            "{}: no such segment (list them with `ls {}`)",
            crawl.segment_path(id).display(),
            crawl.segments_dir().display()
        )));
    }
    if crawl.is_fetched(id) {
        common::runlog::say(format_args!(
            "segment {id} is already fetched ({} exists); nothing to do",
            crawl.fetched_dir(id).join(DONE_FILE).display()
        ));
        return Ok(None);
    }
    Ok(Some(id.to_string()))
}

/// What to do when no segment waits, said for the state of `crawl`: a
/// directory where no crawl was started (refused: exit 2), fetched runs
/// the segmenter has not read yet, or a crawl whose every run was read.
fn nothing_pending(crawl: &CrawlDir) -> Result<String, Error> {
    let shown = crawl.top().display();
    let segments = crawl
        .segment_ids()
        .map_err(Error::io(crawl.segments_dir()))?;
    if segments.is_empty() && !crawl.bloom_path().exists() {
        return Err(Error::Usage(format!(
            "{}: no crawl was started here (no segment, no seen.bloom); start one with \
             `scripts/crawl.sh {shown} --seeds SEEDS_FILE` (or `segmenter inject {shown} \
             SEEDS_FILE`)",
            crawl.root().display()
        )));
    }
    let runs = crawl
        .completed_runs()
        .map_err(Error::io(crawl.fetched_root()))?;
    let consumed = common::listfile::read(&crawl.consumed_path(), &common::crawldir::CONSUMED_LIST)
        .map(|list| list.unwrap_or_default())
        .unwrap_or_default();
    let unread = runs
        .iter()
        .filter(|id| !consumed.iter().any(|(_, c)| c == *id))
        .count();
    Ok(if unread > 0 {
        format!(
            "{unread} fetched run(s) not read yet: `segmenter run {shown}` makes the next \
             segment from them"
        )
    } else {
        format!(
            "every fetched run was read and no URL waits in a segment; `segmenter next {shown}` \
             says what the crawl does next"
        )
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

/// The holds earlier runs left on hosts: the next contacts in hosts.db and
/// the requests in the contacts journals of runs that did not end cleanly.
struct Holds {
    /// The longest a run can hold a host ([`longest_hold`]); a later hold
    /// (a clock set back, a hand edit) is cut to it.
    longest: Duration,
    /// hosts.db, read for the hosts met on the way (redirect targets).
    db: Mutex<Option<HostDb>>,
    /// The contacts journals, by host.
    journaled: HashMap<String, contacts::LastContact>,
    /// The delay after a journaled request to a host whose robots.txt is
    /// not known now (ms): the longest `Crawl-delay` obeyed, which the
    /// robots.txt a dead run read (or was reading) may have said.
    unknown_crawl_delay_ms: i64,
    /// With `--key domain` or `--key ip`: the hosts held now, in hosts.db
    /// or the journals, by queue key. A key's queue waits for every host
    /// of it, not only for those of this segment.
    held_by_key: HashMap<String, Vec<String>>,
    /// The next contacts in hosts.db later than the start of the run (with
    /// `--key domain` or `--key ip`), by host.
    held_in_db: HashMap<String, i64>,
}

impl Holds {
    fn new(
        longest: Duration,
        max_crawl_delay: Duration,
        db: Option<HostDb>,
        journaled: HashMap<String, contacts::LastContact>,
        held_in_db: HashMap<String, i64>,
        key_of: Option<&KeyOf>,
    ) -> Holds {
        let mut held_by_key: HashMap<String, Vec<String>> = HashMap::new();
        if let Some(key_of) = key_of {
            let hosts: HashSet<&String> = held_in_db.keys().chain(journaled.keys()).collect();
            for host in hosts {
                held_by_key
                    .entry(key_of(host))
                    .or_default()
                    .push(host.clone());
            }
        }
        Holds {
            longest,
            db: Mutex::new(db),
            journaled,
            unknown_crawl_delay_ms: i64::try_from(max_crawl_delay.as_millis()).unwrap_or(i64::MAX),
            held_by_key,
            held_in_db,
        }
    }

    /// Closes hosts.db, opened to read. Done before the host writer ends,
    /// so that the writer's connection is the last one: closing it removes
    /// the emptied write-ahead log, and `hosts.db` is left alone, whole.
    fn close(&self) {
        *self.db.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// The latest next contact earlier runs left on `host` (Unix ms), the
    /// journaled request followed by `delay_ms` at least, or by the longest
    /// `Crawl-delay` obeyed unless `robots_known` says that the host's
    /// robots.txt is known now. (A run killed after it read a robots.txt,
    /// before it kept it anywhere, leaves only the request in its journal:
    /// whatever that robots.txt said, the host waits long enough.)
    fn of_host(
        &self,
        host: &str,
        state: Option<&HostState>,
        delay_ms: i64,
        robots_known: impl FnOnce() -> bool,
    ) -> Option<i64> {
        let journaled = self.journaled.get(host).map(|c| {
            let delay_ms = match robots_known() {
                true => delay_ms,
                false => delay_ms.max(self.unknown_crawl_delay_ms),
            };
            c.next_ms(delay_ms)
        });
        [
            state.and_then(|s| s.next_contact_ms),
            self.held_in_db.get(host).copied(),
            journaled,
        ]
        .into_iter()
        .flatten()
        .max()
    }

    /// `ms`, no later than the longest hold from `now_ms`.
    fn cut(&self, ms: i64, now_ms: i64) -> i64 {
        let longest = i64::try_from(self.longest.as_millis()).unwrap_or(i64::MAX);
        ms.min(now_ms.saturating_add(longest))
    }

    /// The hold on a host met on the way (not in the segment), under queue
    /// `key`: the host's own, and the other hosts' of the key when the key
    /// is new to the run.
    fn of_host_met(&self, key: &str, host: &str, new_key: bool) -> Option<std::time::Instant> {
        let now_ms = clock::now_ms();
        let stored = self
            .db
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .and_then(|db| db.get(host).ok().flatten());
        let others = new_key
            .then(|| self.held_by_key.get(key))
            .flatten()
            .into_iter()
            .flatten();
        let kept = |state: Option<&HostState>| {
            state
                .and_then(|s| s.robots.as_ref())
                .is_some_and(|r| r.reusable(now_ms))
        };
        std::iter::once(self.of_host(host, stored.as_ref(), 0, || kept(stored.as_ref())))
            .chain(others.map(|h| self.of_host(h, None, 0, || false)))
            .flatten()
            .max()
            .map(|ms| self.cut(ms, now_ms))
            .filter(|&ms| ms > now_ms)
            .map(instant_of)
    }
}

/// hosts.db as a run holds it once its workers may start: opened to read
/// for the holds of hosts met on the way, and to write by the host writer.
/// [`HostFiles::close`] closes them in that order, so that the writer's
/// connection is the last and leaves `hosts.db` one plain file, without
/// `-wal` and `-shm` beside it (see [`common::hoststate`]); dropped without
/// it (a run that ends early on an error), it does the same, waiting a
/// bounded time for the writer.
struct HostFiles {
    holds: Arc<Holds>,
    writer: Option<HostWriter>,
}

/// How long a run that ends on an error waits for the host writer to save
/// and close hosts.db.
const HOST_WRITER_GRACE: Duration = Duration::from_secs(10);

impl HostFiles {
    /// A sender of host updates for a worker.
    fn sender(&self) -> std::sync::mpsc::Sender<host_updates::HostUpdate> {
        self.writer.as_ref().expect("open").sender()
    }

    /// Saves what is pending and closes hosts.db: true if `hosts.db` alone
    /// is whole ([`HostWriter::finish`]). Call once, when the workers have
    /// ended.
    fn close(&mut self) -> Result<bool, common::hoststate::HostDbError> {
        self.holds.close();
        match self.writer.take() {
            Some(w) => w.finish(),
            None => Ok(false),
        }
    }
}

impl Drop for HostFiles {
    fn drop(&mut self) {
        self.holds.close();
        if let Some(w) = self.writer.take() {
            let _ = w.finish_within(HOST_WRITER_GRACE);
        }
    }
}

/// The longest a run can hold a host: a Retry-After (capped), a robots.txt
/// retry, or a delay (a Crawl-delay, capped, or the factor times a response
/// time, at most the download timeout; backed off after failures, or a
/// parked host's day), after a request that may last the download timeout.
fn longest_hold(s: &Settings) -> Duration {
    let p = &s.policy;
    let delay = [
        p.max_retry_after,
        s.robots_retry_delay,
        p.min_delay,
        p.max_crawl_delay,
        s.download_timeout.mul_f64(p.delay_factor),
        rules_longest_delay(s),
        p.backoff_max,
        common::politeness::PARKED_DELAY,
    ]
    .into_iter()
    .max()
    .unwrap_or_default();
    (delay + s.download_timeout).min(common::politeness::MAX_HOLD)
}

/// The longest delay a host rule can give a host: its `min_delay`, or
/// its `delay_factor` times a response time (at most the download timeout).
fn rules_longest_delay(s: &Settings) -> Duration {
    use common::rules::{Key, Value};
    let rules = s.host_rules.rules().iter();
    rules
        .flat_map(|r| [r.get(Key::MinDelay), r.get(Key::DelayFactor)])
        .map(|v| match v {
            Some(Value::Duration(d)) => *d,
            Some(Value::Number(f)) => s.download_timeout.mul_f64(f.max(0.0)),
            _ => Duration::ZERO,
        })
        .max()
        .unwrap_or_default()
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

/// Gives each key of the segment the WARC bytes it may store in the run:
/// `max_host_round_bytes`, and what `max_host_bytes` leaves of its first
/// host's bytes over the crawl (`hosts.db`).
fn set_byte_budgets(
    frontier: &Frontier,
    budgets: &crate::budget::Budgets,
    keys: &[feed::KeyRanges],
    host_states: &HashMap<String, HostState>,
) {
    for k in keys {
        let Some(id) = frontier.key_id(&k.name) else {
            continue;
        };
        if let Some(round) = budgets.host_round {
            frontier.set_byte_budget(id, round, Cut::HostRoundBytes);
        }
        if let Some(max) = budgets.host {
            let spent = host_states.get(&k.first_host).map_or(0, |h| h.bytes_total);
            frontier.set_byte_budget(id, max.saturating_sub(spent), Cut::HostBytes);
        }
    }
}

/// Starts the writer thread on the run's WARC files, crawl log and leftover.
fn start_recorder(
    run: &Run,
    first_serial: u32,
    workers: usize,
    spare: Spare,
) -> Result<Recorder, Error> {
    let (s, id) = (run.s, run.id);
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "localhost".into());
    Recorder::start(
        WarcWriterConfig {
            dir: run.out.clone(),
            prefix: warc_prefix(id),
            max_file_size: s.warc_max_size,
            first_serial,
            hostname: hostname.clone(),
            info: vec![
                (
                    "software".into(),
                    format!("fetcher/{}", env!("CARGO_PKG_VERSION")),
                ),
                ("hostname".into(), hostname.clone()),
                ("ip".into(), machine_ip()),
                ("operator".into(), s.agent_url.clone()),
                ("http-header-user-agent".into(), s.user_agent()),
                ("robots".into(), "obey".into()),
                (
                    "isPartOf".into(),
                    run.crawl
                        .top()
                        .canonicalize()
                        .ok()
                        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                        .unwrap_or_else(|| "crawl".into()),
                ),
                ("description".into(), format!("segment {id}")),
                (
                    common::warc::HTTP_RECORDS_FIELD.0.into(),
                    common::warc::HTTP_RECORDS_FIELD.1.into(),
                ),
            ]
            .into_iter()
            .chain(s.from.clone().map(|from| ("http-header-from".into(), from)))
            .chain(s.accept_invalid_certs.then(|| {
                let (k, v) = crate::tls::INVALID_CERTS_FIELD;
                (k.to_string(), v.to_string())
            }))
            .collect(),
        },
        &run.crawl.crawl_log_path(id),
        &run.crawl.leftover_path(id),
        workers,
        run.closed_to.clone(),
        spare,
    )
    .map_err(Error::from)
}

/// The machine's address for the `warcinfo` record: the first address of
/// a network interface that is not loopback (IPv4 first), else 127.0.0.1.
/// Read from the interfaces, so no name is resolved.
fn machine_ip() -> String {
    let mut found: Vec<std::net::IpAddr> = Vec::new();
    // SAFETY: getifaddrs fills a list that we only read, then free once.
    unsafe {
        let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
        if libc::getifaddrs(&mut list) == 0 {
            let mut cur = list;
            while !cur.is_null() {
                let addr = (*cur).ifa_addr;
                if !addr.is_null() {
                    match i32::from((*addr).sa_family) {
                        libc::AF_INET => {
                            let a = &*(addr as *const libc::sockaddr_in);
                            found.push(
                                std::net::Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr)).into(),
                            );
                        }
                        libc::AF_INET6 => {
                            let a = &*(addr as *const libc::sockaddr_in6);
                            found.push(std::net::Ipv6Addr::from(a.sin6_addr.s6_addr).into());
                        }
                        _ => {}
                    }
                }
                cur = (*cur).ifa_next;
            }
            libc::freeifaddrs(list);
        }
    }
    found
        .iter()
        .filter(|ip| !ip.is_loopback())
        .min_by_key(|ip| ip.is_ipv6())
        .map_or_else(|| "127.0.0.1".to_string(), ToString::to_string)
}

/// The scope/trap filter and `seen.bloom` that redirect targets followed
/// in the run must pass (nothing when redirects are not followed).
fn redirect_checks(
    s: &Settings,
    crawl: &CrawlDir,
) -> Result<(Option<UrlFilter>, Option<BloomFilter>), Error> {
    if s.follow_redirects == 0 {
        return Ok((None, None));
    }
    let scope = common::filter::Scope::load(&s.scope, crawl.top())?;
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

/// The leftover file: per key, in segment order, its retries, then what was
/// loaded, then what was never read; a given-up key also gets a crawl-log
/// line per URL saying why. Returns the number of URLs written, and those
/// a byte budget or the disk floor (`stop_cut`, the run's own stop) sent
/// there untried, by reason.
fn write_leftover(
    frontier: &Frontier,
    work: &crate::feed::WorkFile,
    tx: &std::sync::mpsc::SyncSender<Msg>,
    log: &RunLog,
    stop_cut: Option<Cut>,
) -> Result<(u64, BTreeMap<String, u64>), Error> {
    let mut count = 0u64;
    let mut cuts: BTreeMap<String, u64> = BTreeMap::new();
    for k in frontier.take_leftovers() {
        let not_before = k.not_before.map(unix_ms);
        for job in k.retries {
            count += 1;
            let _ = tx.send(Msg::Leftover(SegmentRecord {
                not_before,
                ..job.rec
            }));
        }
        // The URLs not attempted.
        let mut untried = 0u64;
        for job in &k.queued {
            untried += 1;
            send_leftover(tx, job, k.abandoned, not_before);
        }
        for r in k.ranges {
            // One batch at a time, so a huge key does not fill memory.
            work.read_all(r, |job| {
                untried += 1;
                send_leftover(tx, &job, k.abandoned, not_before);
            })?;
        }
        count += untried;
        if let Some(code) = k.abandoned {
            log.note(format!("queue {}: given up ({})", k.name, code.as_str()));
        }
        // Untried for a budget or the floor: the key's own cut, else the
        // run's (not for a key given up for failures).
        if let Some(cut) = k.cut.or(stop_cut.filter(|_| k.abandoned.is_none()))
            && untried > 0
        {
            *cuts.entry(cut.name().to_string()).or_default() += untried;
            if k.cut.is_some() {
                log.note(format!(
                    "queue {}: byte budget reached ({}); {untried} URLs to leftover",
                    k.name,
                    cut.name()
                ));
            }
        }
    }
    Ok((count, cuts))
}

fn send_leftover(
    tx: &std::sync::mpsc::SyncSender<Msg>,
    job: &Job,
    abandoned: Option<ErrorCode>,
    not_before: Option<i64>,
) {
    if let Some(code) = abandoned {
        let note = outcome::given_up_note(code);
        let line = error_line(
            &job.rec.url,
            job.rec.via,
            job.rec.hops,
            code,
            note.into(),
            Duration::ZERO,
        );
        let _ = tx.send(Msg::Log(line));
    }
    let (via, tries) = outcome::leftover_via(abandoned, job.rec.tries);
    let _ = tx.send(Msg::Leftover(SegmentRecord {
        not_before,
        ..job.to_record(via, tries)
    }));
}

/// Takes the lock of `fetched/ID/` for this process: a second fetcher on
/// the same segment would repair (cut) the files the first is writing.
/// The lock goes with the process, however it ends.
fn lock_output(crawl: &CrawlDir, id: &str) -> Result<common::lock::FileLock, Error> {
    let path = crawl.fetch_lock_path(id);
    match common::lock::try_lock(&path) {
        Ok(Some(lock)) => Ok(lock),
        Ok(None) => Err(Error::Locked(crawl.fetched_dir(id), id.to_string())),
        Err(e) => Err(Error::io(&path)(e)),
    }
}

/// Removes temporary files of an interrupted writer (an unfinished leftover file).
fn remove_temp_files(dir: &Path) {
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let name = e.file_name();
            if name
                .to_str()
                .is_some_and(|n| common::atomic::is_temp_name(n) || n == WORK_FILE)
            {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}
