//! `fetcher fetch CRAWL [SEGMENT_ID]`: one run over one segment, from
//! choosing the segment to writing `DONE`.

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use common::crawldir::{CRAWL_LOG_FILE, CrawlDir, DONE_FILE, STATS_FILE};
use common::crawllog::{ErrorCode, LogLine, Status};
use common::hoststate::HostDb;
use common::segment::Via;
use common::warc::WarcWriterConfig;

use crate::access::{Access, Decision, RobotsOutcome};
use crate::feed::{self, Admit, KeyOf};
use crate::frontier::{Frontier, Job};
use crate::hoststore::{self, HostStore, robots_fresh};
use crate::http::{Client, ClientConfig, HostsMap};
use crate::politeness::Policy;
use crate::progress::{Counters, Mode, Progress};
use crate::resume;
use crate::settings::{KeyMode, Settings};
use crate::stats::{self, Stats};
use crate::store::{Msg, Store, is_retryable};
use crate::worker::{Shared, Worker};

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

/// A failure of the run: exit 1 (2 for configuration problems found late).
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// A configuration problem found while starting.
    #[error("{0}")]
    Config(String),
    /// Anything else.
    #[error("{0}")]
    Run(String),
}

fn run_err(e: impl std::fmt::Display) -> FetchError {
    FetchError::Run(e.to_string())
}

/// Diagnostics: to stderr and to `CRAWL/logs/fetcher-TIMESTAMP.log`.
#[derive(Debug, Clone)]
pub struct Diag {
    file: Option<Arc<Mutex<std::fs::File>>>,
}

impl Diag {
    fn open(path: &Path) -> Diag {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .ok()
            .map(|f| Arc::new(Mutex::new(f)));
        Diag { file }
    }

    /// Prints `fetcher: MSG` on stderr and in the log file.
    pub fn say(&self, msg: &str) {
        eprintln!("fetcher: {msg}");
        self.to_file(msg);
    }

    /// Writes to the log file only.
    pub fn to_file(&self, msg: &str) {
        if let Some(f) = &self.file {
            let stamp = common::timefmt::iso_millis(SystemTime::now());
            let mut f = f.lock().unwrap_or_else(|e| e.into_inner());
            let _ = writeln!(f, "{stamp} {msg}");
        }
    }
}

/// Runs `fetch`.
pub fn run(s: Settings) -> Result<Ended, FetchError> {
    let crawl = CrawlDir::open(s.crawl.root()).map_err(run_err)?;
    let id = match &s.segment {
        Some(id) => {
            if !crawl.segment_path(id).is_file() {
                return Err(FetchError::Config(format!(
                    "{}: no such segment (list them with `ls {}`)",
                    crawl.segment_path(id).display(),
                    crawl.segments_dir().display()
                )));
            }
            if crawl.is_fetched(id) {
                eprintln!(
                    "fetcher: segment {id} is already fetched ({} exists); nothing to do",
                    crawl.fetched_dir(id).join(DONE_FILE).display()
                );
                return Ok(Ended::Nothing);
            }
            id.clone()
        }
        None => match crawl
            .pending_segments()
            .map_err(run_err)?
            .into_iter()
            .next()
        {
            Some(id) => id,
            None => {
                eprintln!(
                    "fetcher: {}: no segment waiting to be fetched (make one with `segmenter run {}`)",
                    crawl.root().display(),
                    crawl.root().display()
                );
                return Ok(Ended::Nothing);
            }
        },
    };
    let diag = Diag::open(&crawl.new_log_path("fetcher"));
    let out = crawl.fetched_dir(&id);
    std::fs::create_dir_all(&out).map_err(|e| run_err(format!("{}: {e}", out.display())))?;
    remove_temp_files(&out);
    let started_at = SystemTime::now();
    let started = Instant::now();
    diag.say(&format!(
        "fetching segment {id} into {} as {}",
        out.display(),
        s.user_agent()
    ));

    // What an interrupted earlier run already did.
    let crawl_log = out.join(CRAWL_LOG_FILE);
    let resumed = resume::scan(&out, &crawl_log).map_err(run_err)?;
    if !resumed.is_fresh() {
        diag.say(&format!(
            "resuming: {} URLs already attempted, {} WARC files kept{}{}",
            resumed.done.len(),
            resumed.warc_files.len(),
            if resumed.warc_cut > 0 {
                format!(
                    ", {} torn bytes cut off the last WARC file",
                    resumed.warc_cut
                )
            } else {
                String::new()
            },
            if resumed.log_cut > 0 {
                format!(", a torn crawl-log line cut ({} bytes)", resumed.log_cut)
            } else {
                String::new()
            }
        ));
    }

    let hosts_map = match &s.hosts_file {
        Some(p) => Some(HostsMap::load(p).map_err(FetchError::Config)?),
        None => None,
    };
    let key_of: KeyOf = {
        let hosts_map = hosts_map.clone();
        let mode = s.key;
        let cache: Mutex<HashMap<String, String>> = Mutex::new(HashMap::new());
        Arc::new(move |host: &str| match mode {
            KeyMode::Host => host.to_string(),
            KeyMode::Domain => common::urlnorm::registrable_domain(host).to_string(),
            KeyMode::Ip => {
                let mut c = cache.lock().unwrap_or_else(|e| e.into_inner());
                c.entry(host.to_string())
                    .or_insert_with(|| {
                        crate::http::resolve_for_key(host, hosts_map.as_ref())
                            .map_or_else(|| host.to_string(), |ip| ip.to_string())
                    })
                    .clone()
            }
        })
    };

    // Load the segment into the work file, leaving out what is done.
    let work_path = out.join(".work.tsv");
    let mut retries: Vec<(String, Job)> = Vec::new();
    let mut already_done = 0u64;
    let segment_path = crawl.segment_path(&id);
    let loaded = feed::load(
        &segment_path,
        &work_path,
        |r| key_of(&r.host),
        |r| match resumed.done.get(&r.url) {
            None => Admit::Queue,
            Some(status) => {
                already_done += 1;
                if is_retryable(*status) {
                    let mut job = Job::from_record(r);
                    match status {
                        Status::Error(
                            ErrorCode::HostDropped
                            | ErrorCode::CrawlDelay
                            | ErrorCode::RobotsUnavailable,
                        ) => job.via = Via::Leftover,
                        _ => {
                            job.via = Via::Retry;
                            job.tries += 1;
                        }
                    }
                    retries.push((key_of(&r.host), job));
                }
                Admit::Skip
            }
        },
        |e| diag.say(&e.to_string()),
    )
    .map_err(run_err)?;
    if loaded.malformed > 0 {
        diag.say(&format!(
            "{}: {} malformed lines skipped",
            segment_path.display(),
            loaded.malformed
        ));
    }

    let policy = Policy {
        min_delay: s.min_delay,
        delay_factor: s.delay_factor,
        max_crawl_delay: s.max_crawl_delay,
        max_retry_after: s.max_retry_after,
        max_failures: s.max_failures,
    };
    let frontier = Arc::new(Frontier::new(policy.clone(), s.robots_retry_delay));

    // Host state: remembered response times and robots.txt (24 h).
    let db = HostDb::open(crawl.hosts_db_path()).map_err(run_err)?;
    let host_states =
        hoststore::load(&db, loaded.keys.iter().map(|k| k.first_host.clone())).map_err(run_err)?;
    let now_ms = hoststore::now_ms();
    let mut cached_robots = 0;
    for k in &loaded.keys {
        let state = host_states.get(&k.first_host);
        let times = state
            .map(|s| s.response_times_ms.clone())
            .unwrap_or_default();
        let id = frontier.add_key(&k.name, k.ranges.clone(), &times);
        let robots = resumed
            .robots
            .get(&k.first_host)
            .map(|(st, body)| (*st, body.clone()))
            .or_else(|| {
                state
                    .and_then(|s| s.robots.as_ref())
                    .filter(|r| robots_fresh(r, now_ms))
                    .map(|r| (r.status, r.body.clone()))
            });
        if let Some((status, body)) = robots
            && let Decision::Rules(a) = Access::decide(
                RobotsOutcome::from_stored_status(status),
                &body,
                &s.agent_name,
            )
        {
            cached_robots += 1;
            frontier.set_robots(id, &k.first_host, Arc::new(a));
        }
    }
    for (key, job) in retries {
        if let Some(id) = frontier.key_id(&key) {
            frontier.add_retry(id, job);
        } else {
            let id = frontier.add_key(&key, Vec::new(), &[]);
            frontier.add_retry(id, job);
        }
    }
    diag.say(&format!(
        "{} URLs to fetch in {} queues ({} already done; robots.txt known for {} hosts)",
        loaded.urls,
        loaded.keys.len(),
        already_done,
        cached_robots
    ));

    // Output.
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "localhost".into());
    let store = Store::start(
        WarcWriterConfig {
            dir: out.clone(),
            prefix: format!("crawl-{id}"),
            max_file_size: s.warc_max_size,
            first_serial: resumed.warc_files.len() as u32,
            hostname,
            info: vec![
                (
                    "software".into(),
                    format!("fetcher/{}", env!("CARGO_PKG_VERSION")),
                ),
                ("operator".into(), s.agent_url.clone()),
                ("http-header-user-agent".into(), s.user_agent()),
                ("robots".into(), "obey".into()),
                ("description".into(), format!("segment {id}")),
            ],
        },
        &crawl_log,
        &crawl.leftover_path(&id),
    )
    .map_err(run_err)?;
    let tx = store.sender();
    for line in resumed.missing_lines {
        let _ = tx.send(Msg::Log(line));
    }
    let hosts = HostStore::start(db, host_states);

    let client = Client::new(ClientConfig {
        user_agent: s.user_agent(),
        connect_timeout: s.connect_timeout,
        first_byte_timeout: s.first_byte_timeout,
        download_timeout: s.download_timeout,
        allow_private: s.allow_private,
        hosts: hosts_map,
        idle_connections: loaded.keys.len().clamp(16, 512),
    });
    let (filter, seen) = if s.follow_redirects > 0 {
        let scope = common::filter::Scope::load(&s.scope, crawl.root()).map_err(run_err)?;
        let seen = if crawl.bloom_path().exists() {
            Some(common::bloom::BloomFilter::open_read_only(crawl.bloom_path()).map_err(run_err)?)
        } else {
            None
        };
        (
            Some(common::filter::UrlFilter {
                limits: s.filter.clone(),
                scope,
            }),
            seen,
        )
    } else {
        (None, None)
    };
    let counters = Arc::new(Counters::default());
    let stopping = Arc::new(AtomicBool::new(false));
    let shared = Arc::new(Shared {
        frontier: frontier.clone(),
        client: client.clone(),
        work: Arc::new(loaded.work),
        counters: counters.clone(),
        stopping: stopping.clone(),
        agent_name: s.agent_name.clone(),
        max_body: s.max_body,
        batch: s.queue_batch,
        follow_redirects: s.follow_redirects,
        policy,
        filter,
        seen,
        key_of,
    });

    // Signals: the first asks for a clean stop, the second exits at once.
    let signals = Arc::new(AtomicU32::new(0));
    install_signals(signals.clone()).map_err(run_err)?;

    let mut workers = Vec::with_capacity(s.threads);
    for i in 0..s.threads {
        let w = Worker::new(shared.clone(), tx.clone(), hosts.sender());
        let h = std::thread::Builder::new()
            .name(format!("worker-{i}"))
            .stack_size(256 * 1024)
            .spawn(move || w.run())
            .map_err(run_err)?;
        workers.push(h);
    }

    let mode = match s.progress {
        crate::cli::ProgressArg::Auto => {
            use std::io::IsTerminal;
            if std::io::stderr().is_terminal() {
                Mode::Live
            } else {
                Mode::Plain
            }
        }
        crate::cli::ProgressArg::Live => Mode::Live,
        crate::cli::ProgressArg::Plain => Mode::Plain,
        crate::cli::ProgressArg::None => Mode::Quiet,
    };
    let mut progress = Progress::new(mode);
    let mut stop_reason = "complete";
    let mut stop_at: Option<Instant> = None;
    loop {
        if frontier.wait_idle(Duration::from_millis(100)) {
            break;
        }
        if workers.iter().all(|w| w.is_finished()) {
            // Only reachable if workers died (a bug): stop rather than wait forever.
            diag.say("every worker thread has ended; writing what is left to leftover");
            break;
        }
        progress.tick(&counters, frontier.counts());
        if stop_at.is_none() {
            let reason = if signals.load(Ordering::SeqCst) > 0 {
                Some("signal")
            } else if s.time_limit.is_some_and(|t| started.elapsed() >= t) {
                Some("time-limit")
            } else if s.min_hosts > 0 && frontier.counts().with_work < s.min_hosts {
                Some("min-hosts")
            } else {
                None
            };
            if let Some(r) = reason {
                progress.clear();
                diag.say(&format!(
                    "stopping ({}): finishing requests in flight, at most {:?}",
                    match r {
                        "signal" => "signal received; a second one exits at once",
                        "time-limit" => "time limit reached",
                        _ => "too few hosts left with work",
                    },
                    s.stop_grace
                ));
                stop_reason = r;
                stopping.store(true, Ordering::SeqCst);
                frontier.stop();
                stop_at = Some(Instant::now());
            }
        } else if stop_at.is_some_and(|t| t.elapsed() >= s.stop_grace) {
            diag.say("grace period over: abandoning requests in flight");
            client.shutdown();
            stop_at = Some(Instant::now() + Duration::from_secs(3600));
        }
    }
    progress.clear();
    for w in workers {
        let _ = w.join();
    }

    let leftover_urls = write_leftover(&frontier, &shared.work, &tx, &diag)?;
    drop(tx);
    drop(shared);
    let totals = store.finish().map_err(run_err)?;
    if let Err(e) = hosts.finish() {
        diag.say(&format!("host state not saved: {e}"));
    }
    let _ = std::fs::remove_file(&work_path);

    let seconds = started.elapsed().as_secs_f64();
    let pages = totals.responses - totals.robots_responses;
    let st = Stats {
        version: 1,
        segment: id.clone(),
        started: common::timefmt::iso_millis(started_at),
        finished: common::timefmt::iso_millis(SystemTime::now()),
        seconds,
        stop_reason: stop_reason.into(),
        resumed: already_done > 0,
        segment_urls: loaded.lines,
        already_done,
        queues: loaded.keys.len() as u64,
        attempts: totals.log_lines,
        responses: totals.responses,
        robots_responses: totals.robots_responses,
        payload_bytes: totals.payload_bytes,
        truncated: totals.truncated,
        outcomes: totals.outcomes.clone(),
        leftover: totals.leftover.clone(),
        warc_files: totals
            .warc_files
            .iter()
            .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect(),
        pages_per_second: pages as f64 / seconds.max(1e-9),
        cpu_seconds: stats::cpu_time().as_secs_f64(),
        peak_rss_bytes: stats::peak_rss(),
    };
    st.write(&out.join(STATS_FILE))
        .map_err(|e| run_err(format!("{}: {e}", out.join(STATS_FILE).display())))?;
    let done = format!(
        "segment {id}\nstop_reason {stop_reason}\nfinished {}\n",
        st.finished
    );
    common::atomic::write_atomic(out.join(DONE_FILE), done.as_bytes())
        .map_err(|e| run_err(format!("{}: {e}", out.join(DONE_FILE).display())))?;
    diag.say(&format!(
        "done ({stop_reason}) in {seconds:.1}s: {pages} pages ({:.0}/s), {} stored, {} errors, {leftover_urls} URLs to leftover; {}",
        st.pages_per_second,
        crate::progress::human_bytes(totals.payload_bytes),
        counters.errors.load(Ordering::Relaxed),
        out.display()
    ));
    Ok(if stop_reason == "signal" {
        Ended::Signal
    } else {
        Ended::Complete
    })
}

/// The leftover file: per key, in segment order, its retries, then what was
/// loaded, then what was never read; a given-up key also gets a crawl-log
/// line per URL saying why. Returns the number of URLs written.
fn write_leftover(
    frontier: &Frontier,
    work: &crate::feed::WorkFile,
    tx: &std::sync::mpsc::SyncSender<Msg>,
    diag: &Diag,
) -> Result<u64, FetchError> {
    let mut count = 0u64;
    for k in frontier.take_leftovers() {
        for job in k.retries {
            count += 1;
            let _ = tx.send(Msg::Leftover(job.to_record(job.via, job.tries)));
        }
        for job in &k.queued {
            count += 1;
            send_leftover(tx, job, k.abandoned);
        }
        for r in k.ranges {
            // One batch at a time, so a huge key does not fill memory.
            work.read_all(r, |job| {
                count += 1;
                send_leftover(tx, &job, k.abandoned);
            })
            .map_err(run_err)?;
        }
        if let Some(code) = k.abandoned {
            diag.to_file(&format!("queue {}: given up ({})", k.name, code.as_str()));
        }
    }
    Ok(count)
}

fn send_leftover(tx: &std::sync::mpsc::SyncSender<Msg>, job: &Job, abandoned: Option<ErrorCode>) {
    if let Some(code) = abandoned {
        let note = match code {
            ErrorCode::CrawlDelay => "robots.txt Crawl-delay above --max-crawl-delay; host skipped",
            ErrorCode::HostDropped => "host dropped after consecutive failures",
            ErrorCode::RobotsUnavailable => "robots.txt unavailable; retry in a later run",
            _ => "",
        };
        let _ = tx.send(Msg::Log(LogLine {
            time: SystemTime::now(),
            status: Status::Error(code),
            bytes: 0,
            duration_ms: 0,
            content_type: String::new(),
            url: job.url.clone(),
            via: job.via,
            hops: job.hops,
            note: note.into(),
        }));
    }
    let _ = tx.send(Msg::Leftover(job.to_record(Via::Leftover, job.tries)));
}

/// Removes temporary files of an interrupted writer (an unfinished leftover file).
fn remove_temp_files(dir: &Path) {
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let name = e.file_name();
            if name
                .to_str()
                .is_some_and(|n| common::atomic::is_temp_name(n) || n == ".work.tsv")
            {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
}

fn install_signals(count: Arc<AtomicU32>) -> std::io::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            for _ in signals.forever() {
                if count.fetch_add(1, Ordering::SeqCst) >= 1 {
                    eprintln!("\nfetcher: second signal: exiting now; run fetch again to resume");
                    std::process::exit(131);
                }
            }
        })?;
    Ok(())
}
