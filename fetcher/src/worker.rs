//! Worker threads. A *dispatcher* takes a task from the frontier (a slot of
//! [`Flight`] first), writes the contact journal and starts the request on
//! the HTTP client's connection thread, then takes the next task without
//! waiting for the answer. When the request ends, a *finisher* stores the
//! response (compressing its WARC records, reading its links), hands it to
//! the writer thread and reports to the frontier and the host state. So the
//! requests in flight are not bounded by threads (see [`crate::crew`]).

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Sender, SyncSender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use common::bloom::BloomFilter;
use common::config::fetcher::FetcherValues;
use common::crawllog::{ErrorCode, LogLine, Status};
use common::filter::UrlFilter;
use common::segment::{SegmentRecord, Via};
use common::warc::WarcFields;

use common::politeness::Policy;

use crate::clock::{now_ms, unix_ms};
use crate::contacts::Journal;
use crate::feed::WorkFile;
use crate::flight::Flight;
use crate::frontier::{FetchReport, Frontier, Job, KeyId, RobotsReport, Skipped, Task};
use crate::host_updates::HostUpdate;
use crate::http::{Client, Failure, Request, Response};
use crate::outcome::{self, Verdict};
use crate::outlinks::Outlinks;
use crate::progress::Counters;
use crate::queue_key::KeyOf;
use crate::recorder::{Before, Encoders, Fetched, Msg, error_line};
use crate::robots::{MAX_ROBOTS_BYTES, Robots, RobotsOutcome};
use crate::robots_cache;

/// A duration in whole milliseconds, as the host state keeps it.
fn millis(d: Duration) -> u32 {
    u32::try_from(d.as_millis()).unwrap_or(u32::MAX)
}

/// Redirects followed when fetching robots.txt (RFC 9309 asks for at least five).
const ROBOTS_REDIRECTS: u32 = 5;

/// What one robots.txt request came to.
enum RobotsAnswer {
    /// Something to tell the frontier as it is (an interruption, a
    /// redirect to follow, rules that allow all).
    Report {
        report: RobotsReport,
        elapsed: Option<Duration>,
        /// A request went out to the host.
        contacted: bool,
    },
    /// The end of the chain: what the rules are read from.
    Final {
        outcome: RobotsOutcome,
        body: Vec<u8>,
        elapsed: Duration,
        /// The host's name does not resolve: not asked again.
        no_such_host: bool,
    },
}

/// Rules that let each URL of a host be tried (and refused, and logged)
/// on its own.
fn allow_all() -> RobotsReport {
    RobotsReport::Rules(Arc::new(Robots::allow_all()))
}

/// Response times that workers report, for the crew ([`crate::crew`]) to
/// judge whether more workers would pay.
#[derive(Debug, Default)]
pub struct ResponseClock {
    total_us: AtomicU64,
    count: AtomicU64,
}

impl ResponseClock {
    /// Notes one request that took `d` (answered or not).
    pub fn note(&self, d: Duration) {
        let us = u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        self.total_us.fetch_add(us, Ordering::Relaxed);
        self.count.fetch_add(1, Ordering::Relaxed);
    }

    /// The mean of the times noted since the last call, if any.
    pub fn take_mean(&self) -> Option<Duration> {
        let count = self.count.swap(0, Ordering::Relaxed);
        let total = self.total_us.swap(0, Ordering::Relaxed);
        (count > 0).then(|| Duration::from_micros(total / count))
    }
}

/// How a request ended, with what its finisher needs to know of it.
pub enum End {
    /// A request for a page.
    Fetch {
        /// Its queue.
        key: KeyId,
        /// The URL.
        job: Job,
        /// The response, or why there is none.
        result: Result<Response, Failure>,
    },
    /// A request for a robots.txt (or a redirect followed to read one).
    Robots(Box<RobotsRequest>, Result<Response, Failure>),
}

/// Requests a dispatcher starts at most at once (one lock of the frontier
/// and one write of the journal for them all).
const DISPATCH_BATCH: usize = 16;

/// A request about to start.
enum Start {
    Fetch { key: KeyId, job: Job },
    Robots(Box<RobotsRequest>),
}

/// A robots.txt request in flight (see [`Task::Robots`]).
pub struct RobotsRequest {
    key: KeyId,
    owner: KeyId,
    host: String,
    url: url::Url,
    /// The host `url` is on.
    url_host: String,
    hops: u32,
}

/// What every worker shares.
pub struct Shared {
    /// The frontier.
    pub frontier: Arc<Frontier>,
    /// The HTTP client.
    pub client: Client,
    /// The requests in flight: their slots and their ends.
    pub flight: Flight<End>,
    /// The segment's work file.
    pub work: Arc<WorkFile>,
    /// Compressors for the WARC records of what workers fetch.
    pub encoders: Encoders,
    /// How long requests take, for the crew to judge whether more workers pay.
    pub response_clock: ResponseClock,
    /// Progress counters.
    pub counters: Arc<Counters>,
    /// Set when stopping: failures from here on are interruptions.
    pub stopping: Arc<AtomicBool>,
    /// Set (with `stopping`) when the stop ends the round (tail, time limit,
    /// min-hosts) rather than interrupting it (a signal): a request then
    /// abandoned without an answer counts as a timeout.
    pub ending_round: AtomicBool,
    /// The contacts journal, written before each request.
    pub journal: Journal,
    /// Why the run cannot go on (the work file cannot be read), if it cannot.
    pub failure: Mutex<Option<String>>,
    /// Product token for robots.txt.
    pub agent_name: String,
    /// The shards of a sharded crawl and this run's: a redirect target of
    /// another shard is not followed (it is a link for the next round).
    pub shard: Option<(common::shards::Shards, u32)>,
    /// The crawl's host rules: per URL, `conditional_requests` over the
    /// crawl's and the `headers` added to requests; per host, the canonical
    /// form of redirect targets.
    pub host_rules: Arc<common::rules::HostRules>,
    /// The fetcher's own settings, as the run's settings hold them
    /// ([`crate::settings::Settings::options`]): the body limit, the URLs
    /// loaded per refill, the redirects followed, the records written...
    pub options: FetcherValues,
    /// Politeness (for Retry-After).
    pub policy: Policy,
    /// Checks for redirect targets (only when following redirects).
    pub filter: Option<UrlFilter>,
    /// `seen.bloom`, read-only, when following redirects.
    pub seen: Option<BloomFilter>,
    /// Queue key of a redirect target.
    pub key_of: KeyOf,
    /// WARC bytes stored, against the run's and the crawl's budgets.
    pub spend: crate::budget::Spend,
}

impl Shared {
    /// True once a worker hit an error that ends the run.
    pub fn failed(&self) -> bool {
        self.failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }

    /// Records an error that ends the run (the first one is kept) and stops
    /// handing out work.
    pub fn fail(&self, message: String) {
        self.failure
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get_or_insert(message);
        self.frontier.stop();
    }
}

/// How a request ended, for [`Worker::fetch`].
enum Step {
    /// The report for the frontier, and what the host state learns: the
    /// response time, and whether it failed.
    Done(Box<FetchReport>, Option<(Option<u32>, bool)>),
    /// The URL goes back to its queue untried.
    PutBack(Job),
}

/// Per-thread handles.
pub struct Worker {
    shared: Arc<Shared>,
    recorder: SyncSender<Msg>,
    hosts: Sender<HostUpdate>,
    /// Reads the links of pages for their metadata records (made on first use).
    outlinks: RefCell<Option<Outlinks>>,
    /// The block of the last metadata record, its buffer reused.
    metadata: RefCell<WarcFields>,
}

impl Worker {
    /// A worker sending to these channels.
    pub fn new(
        shared: Arc<Shared>,
        recorder: SyncSender<Msg>,
        hosts: Sender<HostUpdate>,
    ) -> Worker {
        Worker {
            shared,
            recorder,
            hosts,
            outlinks: RefCell::new(None),
            metadata: RefCell::new(WarcFields::new()),
        }
    }

    /// Takes tasks from the frontier and starts them, until it has no more
    /// work or is stopping: a dispatcher's loop. It takes as many as it has
    /// free slots for, up to [`DISPATCH_BATCH`], and journals their
    /// requests with one write.
    pub fn dispatch(self) {
        let sh = &self.shared;
        let mut skipped = Vec::new();
        let mut tasks = Vec::with_capacity(DISPATCH_BATCH);
        loop {
            let slots = sh.flight.take_slots(DISPATCH_BATCH);
            let more = sh.frontier.next_tasks(slots, &mut tasks, &mut skipped);
            for s in skipped.drain(..) {
                self.log_skipped(s);
            }
            sh.flight.give_back(slots - tasks.len());
            if !more {
                break;
            }
            self.start_all(tasks.drain(..));
        }
    }

    /// Starts `tasks`, each holding a slot: a refill is read at once; the
    /// requests are journaled, with one write, then started.
    fn start_all(&self, tasks: impl Iterator<Item = Task>) {
        let sh = &self.shared;
        let mut contacts: Vec<(String, Duration)> = Vec::new();
        let mut starts = Vec::new();
        for task in tasks {
            match task {
                Task::Refill { key, range } => self.refill(key, range),
                Task::Fetch { key, job, delay } => {
                    contacts.push((job.rec.host.clone(), delay));
                    starts.push(Start::Fetch { key, job });
                }
                Task::Robots {
                    key,
                    owner,
                    host,
                    url,
                    hops,
                    delay,
                } => {
                    let Ok(url) = url::Url::parse(&url) else {
                        // Not a URL: each of the host's URLs is tried (and
                        // logged) on its own.
                        sh.frontier
                            .robots_done(key, owner, &host, allow_all(), None);
                        sh.flight.give_back(1);
                        continue;
                    };
                    let url_host = common::urlnorm::host_of(&url).to_string();
                    contacts.push((url_host.clone(), delay));
                    starts.push(Start::Robots(Box::new(RobotsRequest {
                        key,
                        owner,
                        host,
                        url,
                        url_host,
                        hops,
                    })));
                }
            }
        }
        if starts.is_empty() {
            return;
        }
        let journaled = self.note_contacts(&contacts);
        for start in starts {
            match (start, journaled) {
                (Start::Fetch { key, job }, true) => self.start_fetch(key, job),
                (Start::Robots(r), true) => self.start_robots(r),
                (Start::Fetch { key, job }, false) => {
                    let report = FetchReport {
                        interrupted: Some(job),
                        ..FetchReport::default()
                    };
                    sh.frontier.fetch_done(key, report);
                    sh.flight.give_back(1);
                }
                (Start::Robots(r), false) => {
                    let report = RobotsReport::Interrupted;
                    sh.frontier
                        .robots_done(r.key, r.owner, &r.host, report, None);
                    sh.flight.give_back(1);
                }
            }
        }
    }

    /// Reads the next URLs of queue `key` from the work file.
    fn refill(&self, key: KeyId, range: crate::frontier::Range) {
        let sh = &self.shared;
        match sh.work.read_batch(range, sh.options.queue_batch) {
            Ok((jobs, rest)) => sh.frontier.refilled(key, jobs, rest),
            Err(e) => {
                // The URLs are still in the segment; the next run resumes.
                sh.fail(e.to_string());
                sh.frontier.refilled(key, Vec::new(), Some(range));
            }
        }
        sh.flight.give_back(1);
    }

    /// Stores and reports the requests that ended, until the run is over:
    /// a finisher's loop.
    pub fn finish(self) {
        while let Some(end) = self.shared.flight.next_end() {
            match end {
                End::Fetch { key, job, result } => self.fetched(key, job, result),
                End::Robots(request, result) => self.robots_fetched(*request, result),
            }
            self.shared.flight.give_back(1);
        }
    }

    fn send(&self, msg: Msg) {
        // The writer goes away before the workers only when it failed (a
        // full disk): then stop handing out work at once rather than fetch
        // pages that cannot be stored. The supervisor reports the error.
        if self.recorder.send(msg).is_err() {
            self.shared.stopping.store(true, Ordering::SeqCst);
            self.shared.frontier.stop();
        }
    }

    fn log_skipped(&self, s: Skipped) {
        let j = &s.job;
        let line = error_line(
            &j.rec.url,
            j.rec.via,
            j.rec.hops,
            s.code,
            s.note,
            Duration::ZERO,
        );
        self.send(Msg::Log(line));
    }

    /// Stores a response (WARC records, crawl-log line); returns its WARC
    /// bytes, or `None` if it was not stored: the run's or the crawl's byte
    /// budget was already reached (the caller puts the URL back, untried),
    /// or it could not be compressed (the run fails).
    fn store_response(
        &self,
        url: &str,
        via: Via,
        hops: u32,
        r: Response,
        note: String,
        before: Option<Before>,
    ) -> Option<u64> {
        let note = match &r.accepted_invalid_certificate {
            Some(why) if note.is_empty() => format!("tls-unverified {why}"),
            Some(why) => format!("{note}; tls-unverified {why}"),
            None => note,
        };
        let log = LogLine {
            time: SystemTime::now(),
            status: Status::Http(r.status),
            bytes: r.body().len() as u64,
            duration_ms: r.elapsed.as_millis() as u64,
            content_type: r.content_type.clone(),
            url: url.to_string(),
            via,
            hops,
            note,
        };
        let revisit = before.as_ref().and_then(|b| b.revisit(&r));
        let mut fields = self.metadata.borrow_mut();
        fields.clear();
        if self.shared.options.metadata_records {
            metadata_fields(url, via, hops, &r, &mut fields);
            if self.shared.options.metadata_outlinks {
                let mut outlinks = self.outlinks.borrow_mut();
                let outlinks =
                    outlinks.get_or_insert_with(|| Outlinks::new(&self.shared.agent_name));
                outlinks.append(url, &r, self.shared.options.max_body, &mut fields);
            }
        }
        let metadata = self.shared.options.metadata_records.then_some(&*fields);
        let encoded = self
            .shared
            .encoders
            .encode(url, via, hops, &r, revisit.as_ref(), metadata);
        drop(fields);
        let records = match encoded {
            Ok(records) => records,
            Err(e) => {
                // Not logged: the next run fetches the URL again.
                self.shared
                    .fail(format!("{url}: cannot compress its WARC records: {e}"));
                return None;
            }
        };
        let size = records.len() as u64;
        if !self.shared.spend.reserve(size) {
            return None;
        }
        if self.shared.spend.cut().is_some() {
            // This response reached a byte budget: none is stored after it,
            // so no request more is started.
            self.shared.stopping.store(true, Ordering::SeqCst);
            self.shared.frontier.stop();
        }
        self.send(Msg::Fetched(Box::new(Fetched {
            records,
            payload_bytes: r.body().len() as u64,
            truncated: r.truncated.is_some(),
            via,
            log,
        })));
        Some(size)
    }

    /// Writes the journal lines of requests about to go to these hosts
    /// (each with its queue's delay); false (and the run fails) if they
    /// cannot be written: a request nobody would know of after a crash is
    /// not sent.
    fn note_contacts(&self, contacts: &[(String, Duration)]) -> bool {
        let lines: Vec<(&str, Duration)> = contacts.iter().map(|(h, d)| (h.as_str(), *d)).collect();
        match self.shared.journal.record_all(&lines) {
            Ok(()) => true,
            Err(e) => {
                self.shared.fail(format!(
                    "{}: cannot record a request before sending it: {e}",
                    self.shared.journal.path().display()
                ));
                false
            }
        }
    }

    /// True if a failure is the run stopping under a request (not something
    /// the host did); then, if the stop ends the round, `f` becomes the
    /// timeout it stands for and false is returned: the attempt counts.
    fn interrupted_by_stop(&self, f: &mut Failure) -> bool {
        let sh = &self.shared;
        if !(sh.stopping.load(Ordering::SeqCst) && outcome::may_be_cut_by_stop(f.code)) {
            return false;
        }
        if !sh.ending_round.load(Ordering::SeqCst) {
            return true;
        }
        f.code = ErrorCode::Timeout;
        f.message = format!(
            "no answer after {:.1}s; abandoned when the round ended",
            f.elapsed.as_secs_f64()
        );
        false
    }

    fn log_failure(&self, url: &str, via: Via, hops: u32, f: &Failure) {
        let line = error_line(url, via, hops, f.code, f.message.clone(), f.elapsed);
        self.send(Msg::Log(line));
    }

    /// Starts one request for the robots.txt of a host (which queue
    /// `owner` waits for), through queue `key`: `/robots.txt` itself, or
    /// the target of its `hops`-th redirect (see [`RobotsRequest`]); its
    /// contact is journaled. Its end is [`Worker::robots_fetched`].
    fn start_robots(&self, robots: Box<RobotsRequest>) {
        let sh = &self.shared;
        sh.counters.robots.fetch_add(1, Ordering::Relaxed);
        let mut headers = Vec::new();
        add_rule_headers(
            &sh.host_rules,
            &robots.url_host,
            robots.url.as_str(),
            &mut headers,
        );
        // robots.txt is asked with the crawler's own Accept: a rule's could
        // draw a 406, and a 4xx robots.txt reads as "allow all".
        headers.retain(|(name, _)| !name.eq_ignore_ascii_case("accept"));
        let request = Request {
            key: robots.key,
            url: robots.url.to_string(),
            max_body: MAX_ROBOTS_BYTES as u64 + 1,
            headers,
        };
        let shared = self.shared.clone();
        sh.client.start(
            request,
            Box::new(move |result| shared.flight.push(End::Robots(robots, result))),
        );
    }

    /// The end of a robots.txt request: each response is stored and
    /// logged; a redirect (up to five) is reported for the frontier to
    /// schedule on its target's queue, the end of the chain gives the rules.
    fn robots_fetched(&self, req: RobotsRequest, result: Result<Response, Failure>) {
        let sh = &self.shared;
        let RobotsRequest {
            key,
            owner,
            host,
            url,
            url_host,
            hops,
        } = req;
        // Tells the frontier, and the host state when a request went out.
        let done = |report: RobotsReport, elapsed: Option<Duration>, contacted: bool| {
            let at = sh.frontier.robots_done(key, owner, &host, report, elapsed);
            if contacted {
                let _ = self.hosts.send(HostUpdate::Contact {
                    host: url_host.clone(),
                    next_contact_ms: unix_ms(at),
                });
            }
        };
        let answer = match result {
            Ok(mut r) => {
                r.check_decoding(MAX_ROBOTS_BYTES as u64 + 1);
                self.robots_response(&url, hops, r)
            }
            Err(f) => self.robots_failure(&url, f),
        };
        match answer {
            RobotsAnswer::Report {
                report,
                elapsed,
                contacted,
            } => done(report, elapsed, contacted),
            RobotsAnswer::Final {
                outcome,
                body,
                elapsed,
                no_such_host,
            } => {
                let report = self.robots_rules(&host, outcome, &body, no_such_host);
                done(report, Some(elapsed), true);
            }
        }
    }

    /// A response to a robots.txt request, stored: a redirect to follow
    /// (up to five), or the end of the chain with its status and body.
    fn robots_response(&self, url: &url::Url, hops: u32, r: Response) -> RobotsAnswer {
        let sh = &self.shared;
        let status = r.status;
        let elapsed = r.elapsed;
        sh.response_clock.note(elapsed);
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
            r.decoded_body(MAX_ROBOTS_BYTES + 1)
        } else {
            Vec::new()
        };
        crate::pause::pause_point("robots-read");
        let interrupted = RobotsAnswer::Report {
            report: RobotsReport::Interrupted,
            elapsed: None,
            contacted: true,
        };
        if self
            .store_response(url.as_str(), Via::Robots, 0, r, note, None)
            .is_none()
        {
            // Not stored (a byte budget reached): asked again later.
            return interrupted;
        }
        let (outcome, body) = match target {
            Some(_) if sh.stopping.load(Ordering::Relaxed) => return interrupted,
            Some(t) if hops < ROBOTS_REDIRECTS => {
                return RobotsAnswer::Report {
                    report: RobotsReport::Redirect {
                        key: (sh.key_of)(common::urlnorm::host_of(&t)),
                        url: t.to_string(),
                        hops: hops + 1,
                    },
                    elapsed: Some(elapsed),
                    contacted: true,
                };
            }
            Some(_) => (RobotsOutcome::TooManyRedirects, Vec::new()),
            None => (RobotsOutcome::Status(status), body),
        };
        RobotsAnswer::Final {
            outcome,
            body,
            elapsed,
            no_such_host: false,
        }
    }

    /// A robots.txt request that got no response, logged: the host is
    /// unreachable (for good when its name does not resolve).
    fn robots_failure(&self, url: &url::Url, mut f: Failure) -> RobotsAnswer {
        if self.interrupted_by_stop(&mut f) {
            return RobotsAnswer::Report {
                report: RobotsReport::Interrupted,
                elapsed: None,
                contacted: true,
            };
        }
        self.log_failure(url.as_str(), Via::Robots, 0, &f);
        if f.code == ErrorCode::PrivateAddress {
            // Nothing on this host can be fetched: no use waiting.
            return RobotsAnswer::Report {
                report: allow_all(),
                elapsed: None,
                contacted: false,
            };
        }
        // A name that does not resolve will not resolve a minute later:
        // asking again would only hold the host's URLs back.
        let no_such_host = Verdict::of_failed_request(f.code, f.permanent)
            .give_up
            .is_some();
        RobotsAnswer::Final {
            outcome: RobotsOutcome::Unreachable,
            body: Vec::new(),
            elapsed: f.elapsed,
            no_such_host,
        }
    }

    /// The rules at the end of a robots.txt chain, kept in the host state
    /// (with their crawl delay), as the report for the frontier.
    fn robots_rules(
        &self,
        host: &str,
        outcome: RobotsOutcome,
        body: &[u8],
        no_such_host: bool,
    ) -> RobotsReport {
        let rules = Robots::after_fetch(outcome, body, &self.shared.agent_name);
        let crawl_delay_ms = rules
            .as_ref()
            .and_then(|r| r.crawl_delay())
            .map(|d| d.as_millis() as u64);
        let _ = self.hosts.send(HostUpdate::Robots {
            host: host.to_string(),
            entry: robots_cache::entry(outcome, body, now_ms()),
            crawl_delay_ms,
        });
        match rules {
            Some(rules) => RobotsReport::Rules(Arc::new(rules)),
            None => RobotsReport::Unavailable {
                ask_again: !no_such_host,
            },
        }
    }

    /// Starts the request for `job` through queue `key` (its contact
    /// journaled); its end is [`Worker::fetched`].
    fn start_fetch(&self, key: KeyId, job: Job) {
        let sh = &self.shared;
        // A refetch asks whether the page changed since its last fetch
        // (unless conditional requests are off: an archival crawl, or a
        // rule on the URL says so).
        let mut headers = Vec::new();
        let refetch = !job.rec.etag.is_empty() || !job.rec.last_modified.is_empty();
        let conditional = refetch
            && crate::url_parts::path_and_query(&job.rec.url)
                .and_then(|p| sh.host_rules.conditional_requests(&job.rec.host, &p))
                .unwrap_or(sh.options.conditional_requests);
        if conditional && !job.rec.etag.is_empty() {
            headers.push(("if-none-match".into(), job.rec.etag.clone()));
        }
        if conditional && !job.rec.last_modified.is_empty() {
            headers.push(("if-modified-since".into(), job.rec.last_modified.clone()));
        }
        add_rule_headers(&sh.host_rules, &job.rec.host, &job.rec.url, &mut headers);
        let request = Request {
            key,
            url: job.rec.url.clone(),
            max_body: sh.options.max_body,
            headers,
        };
        let shared = self.shared.clone();
        sh.client.start(
            request,
            Box::new(move |result| shared.flight.push(End::Fetch { key, job, result })),
        );
    }

    /// The end of the request for `job`: stored and logged, reported to
    /// the frontier and the host state.
    fn fetched(&self, key: KeyId, job: Job, result: Result<Response, Failure>) {
        let sh = &self.shared;
        let host = job.rec.host.clone();
        let step = match result {
            Ok(mut r) => {
                r.check_decoding(sh.options.max_body);
                self.answered(job, r)
            }
            Err(f) => self.failed(job, f),
        };
        let (report, learned) = match step {
            Step::Done(report, learned) => (*report, learned),
            Step::PutBack(job) => {
                // Back to the queue untried; the host was contacted all the same.
                let report = FetchReport {
                    interrupted: Some(job),
                    ..FetchReport::default()
                };
                let (at, _) = sh.frontier.fetch_done(key, report);
                let _ = self.hosts.send(HostUpdate::Contact {
                    host,
                    next_contact_ms: unix_ms(at),
                });
                return;
            }
        };
        let stored_bytes = report.stored_bytes;
        let (at, more) = sh.frontier.fetch_done(key, report);
        let next_contact_ms = unix_ms(at);
        let update = match learned {
            Some((response_ms, failed)) => HostUpdate::Request {
                host,
                response_ms,
                failed,
                next_contact_ms,
                stored_bytes,
            },
            None => HostUpdate::Contact {
                host,
                next_contact_ms,
            },
        };
        let _ = self.hosts.send(update);
        if !more {
            sh.client.forget(key);
        }
    }

    /// A response to `job`: stored and logged, and what it means for the
    /// URL and its host; put back untried if a byte budget was reached.
    fn answered(&self, job: Job, r: Response) -> Step {
        let sh = &self.shared;
        let mut report = FetchReport::default();
        sh.response_clock.note(r.elapsed);
        let status = r.status;
        let target = if (300..400).contains(&status) {
            r.location.as_deref().and_then(|l| {
                url::Url::parse(&job.rec.url)
                    .ok()
                    .and_then(|base| common::urlnorm::canonicalize_relative(&base, l).ok())
                    .map(|t| sh.host_rules.host_form(t))
            })
        } else {
            None
        };
        let mut notes = self.notes_of(&r, target.as_ref());
        if outcome::honours_retry_after(status)
            && let Some(wait) = r
                .retry_after
                .as_deref()
                .and_then(|v| sh.policy.retry_after(v, SystemTime::now()))
        {
            notes.push(format!("retry-after {wait:?}"));
            report.retry_after = Some(wait);
        }
        let Verdict { retry, failed, .. } = Verdict::of_response(status, r.truncated);
        report.failed = failed;
        report.response_time = Some(r.elapsed);
        if retry {
            report.retry = Some(job.clone());
        }
        if failed {
            sh.counters.error();
        }
        let learned = Some((Some(millis(r.elapsed)), failed));
        let body_bytes = r.body().len() as u64;
        if let Some(t) = target
            && job.redirects < sh.options.follow_redirects
        {
            report.follow = self.follow(&job, t);
        }
        let before = Before::of(&job.rec, sh.options.revisit_identical);
        let rec = &job.rec;
        let note = notes.join("; ");
        match self.store_response(&rec.url, rec.via, rec.hops, r, note, before) {
            Some(bytes) => {
                sh.counters.page(body_bytes);
                report.stored_bytes = bytes;
                Step::Done(Box::new(report), learned)
            }
            // Not stored: the run is ending at a byte budget.
            None => Step::PutBack(job),
        }
    }

    /// The crawl-log notes of a response: redirect target, truncation,
    /// decoding problems.
    fn notes_of(&self, r: &Response, target: Option<&url::Url>) -> Vec<String> {
        let max_body = self.shared.options.max_body;
        let mut notes = Vec::new();
        if let Some(t) = target {
            notes.push(format!("redirect {t}"));
        }
        if let Some(t) = r.truncated {
            notes.push(match t {
                common::warc::Truncated::Length => format!("too-big truncated at {max_body} bytes"),
                other => format!("truncated {}", other.as_str()),
            });
        }
        if let Some(e) = &r.decode_error {
            notes.push(format!(
                "{} {e}; stored as received",
                ErrorCode::Decode.as_str()
            ));
        }
        if r.decoded_too_big {
            notes.push(format!(
                "{} decoded body over {max_body} bytes",
                ErrorCode::TooBig.as_str()
            ));
        }
        notes
    }

    /// A request to `job` that got no response: logged, and what it means
    /// for the URL and its host; put back untried if the run stopping cut it.
    fn failed(&self, job: Job, mut f: Failure) -> Step {
        let sh = &self.shared;
        sh.response_clock.note(f.elapsed);
        if self.interrupted_by_stop(&mut f) {
            return Step::PutBack(job);
        }
        sh.counters.error();
        self.log_failure(&job.rec.url, job.rec.via, job.rec.hops, &f);
        let Verdict {
            retry,
            failed,
            give_up,
        } = Verdict::of_failed_request(f.code, f.permanent);
        let mut report = FetchReport {
            failed,
            give_up,
            ..FetchReport::default()
        };
        let mut learned = None;
        if failed {
            // A timeout is a response time too: at least that long.
            let took = (f.code == ErrorCode::Timeout).then(|| millis(f.elapsed));
            report.response_time = took.map(|_| f.elapsed);
            learned = Some((took, true));
        }
        if retry {
            report.retry = Some(job);
        }
        Step::Done(Box::new(report), learned)
    }

    /// A redirect target to queue in this run, if it passes the checks.
    fn follow(&self, from: &Job, target: url::Url) -> Option<(String, Job)> {
        let sh = &self.shared;
        let hops = from.rec.hops + 1;
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
        if let Some((shards, j)) = sh.shard
            && shards.shard_of(&host) != j
        {
            return None;
        }
        let key = (sh.key_of)(&host);
        Some((
            key,
            Job {
                rec: SegmentRecord {
                    host,
                    url: target.to_string(),
                    hops,
                    inlinks: 0,
                    via: Via::Redirect,
                    tries: 0,
                    not_before: None,
                    ..SegmentRecord::default()
                },
                redirects: from.redirects + 1,
            },
        ))
    }
}

/// Adds to `headers` those the host rules give the requests for `url` (of
/// `host`), if any rule sets some.
fn add_rule_headers(
    rules: &common::rules::HostRules,
    host: &str,
    url: &str,
    headers: &mut Vec<(std::borrow::Cow<'static, str>, String)>,
) {
    if !rules.sets(common::rules::Key::Headers) {
        return;
    }
    if let Some(path) = crate::url_parts::path_and_query(url) {
        let ruled = rules.headers(host, &path).iter();
        headers.extend(ruled.map(|(n, v)| (n.clone().into(), v.clone())));
    }
}

/// The fields of the `metadata` record of a fetch, named as Heritrix names
/// them where the meaning is the same: `seed` (a seed), `fetchTimeMs`
/// (request to end of response), `outlink` (a redirect's target, `R`, with
/// the context `location`); and the crawler's own `crawlVia` (how the URL
/// was scheduled, the crawl log's via word) and `crawlHops` (links and
/// redirects from a seed). Heritrix's `via` (the page a link was found on)
/// and `hopsFromSeed` (the path of hop types) are not kept in segments,
/// so they are not written.
/// The links of a page are added by [`Outlinks::append`].
fn metadata_fields(url: &str, via: Via, hops: u32, r: &Response, fields: &mut WarcFields) {
    if via == Via::Seed {
        fields.push("seed", "");
    }
    fields.push("crawlVia", via.as_str());
    fields.push("crawlHops", &hops.to_string());
    fields.push("fetchTimeMs", &r.elapsed.as_millis().to_string());
    if (300..400).contains(&r.status)
        && let Some(location) = r.location.as_deref()
        && let Ok(base) = url::Url::parse(url)
        && let Ok(target) = base.join(location)
    {
        let parts = [target.as_str(), " R location"];
        fields.push_parts(common::warc::METADATA_OUTLINKS, &parts);
    }
}
