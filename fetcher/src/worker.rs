//! A worker thread: takes a task from the frontier, does the network call
//! with no lock held, hands the result to the writer thread and reports
//! back to the frontier.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Sender, SyncSender};
use std::time::SystemTime;

use common::bloom::BloomFilter;
use common::crawllog::{ErrorCode, LogLine, Status};
use common::filter::UrlFilter;
use common::hoststate::RobotsEntry;
use common::segment::Via;

use crate::access::{Access, Decision, MAX_ROBOTS_BYTES, RobotsOutcome};
use crate::feed::{KeyOf, WorkFile};
use crate::frontier::{FetchReport, Frontier, Job, KeyId, RobotsReport, Skipped, Task};
use crate::hoststore::{HostUpdate, now_ms};
use crate::http::{Client, Failure, Response};
use crate::politeness::Policy;
use crate::progress::Counters;
use crate::store::{Fetched, Msg, is_retryable};

/// Redirects followed when fetching robots.txt (RFC 9309 asks for at least five).
const ROBOTS_REDIRECTS: u32 = 5;

/// What every worker shares.
pub struct Shared {
    /// The frontier.
    pub frontier: Arc<Frontier>,
    /// The HTTP client.
    pub client: Client,
    /// The segment's work file.
    pub work: Arc<WorkFile>,
    /// Progress counters.
    pub counters: Arc<Counters>,
    /// Set when stopping: failures from here on are interruptions.
    pub stopping: Arc<AtomicBool>,
    /// Product token for robots.txt.
    pub agent_name: String,
    /// Body limit.
    pub max_body: u64,
    /// URLs loaded per refill.
    pub batch: usize,
    /// Redirect hops followed in the run.
    pub follow_redirects: u32,
    /// Politeness (for Retry-After).
    pub policy: Policy,
    /// Checks for redirect targets (only when following redirects).
    pub filter: Option<UrlFilter>,
    /// `seen.bloom`, read-only, when following redirects.
    pub seen: Option<BloomFilter>,
    /// Queue key of a redirect target.
    pub key_of: KeyOf,
}

/// Per-thread handles.
pub struct Worker {
    shared: Arc<Shared>,
    store: SyncSender<Msg>,
    hosts: Sender<HostUpdate>,
}

impl Worker {
    /// A worker sending to these channels.
    pub fn new(shared: Arc<Shared>, store: SyncSender<Msg>, hosts: Sender<HostUpdate>) -> Worker {
        Worker {
            shared,
            store,
            hosts,
        }
    }

    /// Runs until the frontier has no more work or is stopping.
    pub fn run(self) {
        let mut skipped = Vec::new();
        while let Some(task) = self.shared.frontier.next_task(&mut skipped) {
            for s in skipped.drain(..) {
                self.log_skipped(s);
            }
            match task {
                Task::Refill { key, range } => {
                    let (jobs, rest) = match self.shared.work.read_batch(range, self.shared.batch) {
                        Ok(r) => r,
                        Err(e) => {
                            eprintln!("fetcher: {e}");
                            (Vec::new(), None)
                        }
                    };
                    self.shared.frontier.refilled(key, jobs, rest);
                }
                Task::Robots {
                    key,
                    host,
                    sample_url,
                } => self.robots(key, &host, &sample_url),
                Task::Fetch { key, job } => self.fetch(key, job),
            }
        }
        for s in skipped.drain(..) {
            self.log_skipped(s);
        }
    }

    fn send(&self, msg: Msg) {
        // The writer only goes away after every worker has stopped.
        let _ = self.store.send(msg);
    }

    fn log_skipped(&self, s: Skipped) {
        let note = match s.code {
            ErrorCode::Robots => "robots.txt disallows".to_string(),
            other => other.as_str().to_string(),
        };
        self.send(Msg::Log(LogLine {
            time: SystemTime::now(),
            status: Status::Error(s.code),
            bytes: 0,
            duration_ms: 0,
            content_type: String::new(),
            url: s.job.url,
            via: s.job.via,
            hops: s.job.hops,
            note,
        }));
    }

    fn store_response(&self, url: &str, via: Via, hops: u32, r: Response, note: String) {
        let log = LogLine {
            time: SystemTime::now(),
            status: Status::Http(r.status),
            bytes: r.payload.len() as u64,
            duration_ms: r.elapsed.as_millis() as u64,
            content_type: r.content_type.clone(),
            url: url.to_string(),
            via,
            hops,
            note,
        };
        self.send(Msg::Fetched(Box::new(Fetched {
            url: url.to_string(),
            response: r,
            via,
            hops,
            log,
        })));
    }

    fn log_failure(&self, url: &str, via: Via, hops: u32, f: &Failure) {
        self.send(Msg::Log(LogLine {
            time: SystemTime::now(),
            status: Status::Error(f.code),
            bytes: 0,
            duration_ms: f.elapsed.as_millis() as u64,
            content_type: String::new(),
            url: url.to_string(),
            via,
            hops,
            note: f.message.clone(),
        }));
    }

    /// Fetches robots.txt (following up to five redirects, each stored and
    /// logged) and reports the rules.
    fn robots(&self, key: KeyId, host: &str, sample_url: &str) {
        let sh = &self.shared;
        let mut url = match url::Url::parse(sample_url).and_then(|u| u.join("/robots.txt")) {
            Ok(u) => u,
            Err(_) => {
                sh.frontier.robots_done(
                    key,
                    host,
                    RobotsReport::Rules(Arc::new(Access::allow_all())),
                    None,
                );
                return;
            }
        };
        sh.counters.robots.fetch_add(1, Ordering::Relaxed);
        let mut first_elapsed = None;
        let mut hops = 0;
        let (outcome, body) = loop {
            match sh
                .client
                .fetch(key, url.as_str(), MAX_ROBOTS_BYTES as u64 + 1)
            {
                Ok(r) => {
                    first_elapsed.get_or_insert(r.elapsed);
                    let status = r.status;
                    let target = r
                        .location
                        .as_deref()
                        .and_then(|l| url.join(l).ok())
                        .filter(|_| (300..400).contains(&status));
                    let note = target
                        .as_ref()
                        .map(|t| format!("redirect {t}"))
                        .unwrap_or_default();
                    let body = if (200..300).contains(&status) {
                        r.payload.clone()
                    } else {
                        Vec::new()
                    };
                    self.store_response(url.as_str(), Via::Robots, 0, r, note);
                    match target {
                        Some(t) if hops < ROBOTS_REDIRECTS => {
                            hops += 1;
                            url = t;
                        }
                        Some(_) => break (RobotsOutcome::TooManyRedirects, Vec::new()),
                        None => break (RobotsOutcome::Status(status), body),
                    }
                }
                Err(f) => {
                    if sh.stopping.load(Ordering::Relaxed) {
                        sh.frontier
                            .robots_done(key, host, RobotsReport::Interrupted, None);
                        return;
                    }
                    first_elapsed.get_or_insert(f.elapsed);
                    self.log_failure(url.as_str(), Via::Robots, 0, &f);
                    if f.code == ErrorCode::PrivateAddress {
                        // Nothing on this host can be fetched; let each URL
                        // be refused (and logged) on its own, without waiting.
                        sh.frontier.robots_done(
                            key,
                            host,
                            RobotsReport::Rules(Arc::new(Access::allow_all())),
                            None,
                        );
                        return;
                    }
                    break (RobotsOutcome::Unreachable, Vec::new());
                }
            }
        };
        let status = match outcome {
            RobotsOutcome::Status(s) => s,
            RobotsOutcome::TooManyRedirects => 310,
            RobotsOutcome::Unreachable => 0,
        };
        let decision = Access::decide(outcome, &body, &sh.agent_name);
        let crawl_delay_ms = match &decision {
            Decision::Rules(a) => a.crawl_delay().map(|d| d.as_millis() as u64),
            Decision::Unavailable => None,
        };
        let _ = self.hosts.send(HostUpdate::Robots {
            host: host.to_string(),
            entry: RobotsEntry {
                status,
                body,
                fetched_ms: now_ms(),
            },
            crawl_delay_ms,
        });
        let report = match decision {
            Decision::Rules(a) => RobotsReport::Rules(Arc::new(a)),
            Decision::Unavailable => RobotsReport::Unavailable,
        };
        sh.frontier.robots_done(key, host, report, first_elapsed);
    }

    fn fetch(&self, key: KeyId, job: Job) {
        let sh = &self.shared;
        let mut report = FetchReport::default();
        match sh.client.fetch(key, &job.url, sh.max_body) {
            Ok(r) => {
                let status = r.status;
                let mut notes = Vec::new();
                let target = if (300..400).contains(&status) {
                    r.location.as_deref().and_then(|l| {
                        url::Url::parse(&job.url)
                            .ok()
                            .and_then(|base| common::urlnorm::canonicalize_relative(&base, l).ok())
                    })
                } else {
                    None
                };
                if let Some(t) = &target {
                    notes.push(format!("redirect {t}"));
                }
                if let Some(t) = r.truncated {
                    notes.push(match t {
                        common::warc::Truncated::Length => {
                            format!("too-big truncated at {} bytes", sh.max_body)
                        }
                        other => format!("truncated {}", other.as_str()),
                    });
                }
                if matches!(status, 429 | 503)
                    && let Some(wait) = r
                        .retry_after
                        .as_deref()
                        .and_then(|v| sh.policy.retry_after(v, SystemTime::now()))
                {
                    notes.push(format!("retry-after {}s", wait.as_secs()));
                    report.retry_after = Some(wait);
                }
                let failed = status >= 500 || r.truncated == Some(common::warc::Truncated::Time);
                report.failed = failed;
                report.response_time = Some(r.elapsed);
                if status == 429 || status >= 500 {
                    report.retry = Some(Job {
                        via: Via::Retry,
                        tries: job.tries + 1,
                        ..job.clone()
                    });
                }
                if failed {
                    sh.counters.error();
                }
                let _ = self.hosts.send(HostUpdate::Request {
                    host: job.host.clone(),
                    response_ms: Some(r.elapsed.as_millis().min(u32::MAX as u128) as u32),
                    failed,
                });
                sh.counters.page(r.payload.len() as u64);
                if let Some(t) = target
                    && job.redirects < sh.follow_redirects
                {
                    report.follow = self.follow(&job, t);
                }
                self.store_response(&job.url, job.via, job.hops, r, notes.join("; "));
            }
            Err(f) => {
                if sh.stopping.load(Ordering::Relaxed)
                    && matches!(
                        f.code,
                        ErrorCode::Timeout | ErrorCode::Connect | ErrorCode::Protocol
                    )
                {
                    report.interrupted = Some(job);
                    sh.frontier.fetch_done(key, report);
                    return;
                }
                sh.counters.error();
                self.log_failure(&job.url, job.via, job.hops, &f);
                let status = Status::Error(f.code);
                let counts = matches!(
                    f.code,
                    ErrorCode::Timeout
                        | ErrorCode::Refused
                        | ErrorCode::Connect
                        | ErrorCode::Dns
                        | ErrorCode::Protocol
                        | ErrorCode::Tls
                );
                report.failed = counts;
                if counts {
                    let _ = self.hosts.send(HostUpdate::Request {
                        host: job.host.clone(),
                        response_ms: None,
                        failed: true,
                    });
                }
                if is_retryable(status) {
                    report.retry = Some(Job {
                        via: Via::Retry,
                        tries: job.tries + 1,
                        ..job
                    });
                }
            }
        }
        if !sh.frontier.fetch_done(key, report) {
            sh.client.forget(key);
        }
    }

    /// A redirect target to queue in this run, if it passes the checks.
    fn follow(&self, from: &Job, target: url::Url) -> Option<(String, Job)> {
        let sh = &self.shared;
        let hops = from.hops + 1;
        if let Some(f) = &sh.filter
            && f.check(&target, hops).is_err()
        {
            return None;
        }
        if let Some(seen) = &sh.seen
            && seen.contains(target.as_str().as_bytes())
        {
            return None;
        }
        let host = common::urlnorm::host_of(&target).to_string();
        let key = (sh.key_of)(&host);
        Some((
            key,
            Job {
                host,
                url: target.to_string(),
                hops,
                inlinks: 0,
                via: Via::Redirect,
                tries: 0,
                redirects: from.redirects + 1,
            },
        ))
    }
}
