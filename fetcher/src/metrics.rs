//! The fetcher's metrics file, `crawl-NAME.fetch.prom` (or
//! `crawl-NAME.fetch-JJJ.prom` in shard J; see [`common::metrics`]):
//! written by a thread of its own when the segment is loaded, every
//! progress interval while the run goes on (whatever `--progress` shows;
//! also while the run ends: leftover, host state, uploads), and once more
//! when the run has ended, with `crawl_fetch_running 0`. So
//! `crawl_fetch_written_timestamp_seconds` moves as long as the process
//! lives.
//!
//! Pages, bytes, statuses and errors are counted from the segment's crawl
//! log, read on from where the last write stopped (whole lines only), so
//! that they are what the crawl log says, over every run of the segment;
//! the queues come from the frontier, the free space from the filesystem.
//! The time of the last page stored is carried from the previous file, so
//! that it stays the crawl's (the shard's) last page across runs.

use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

use common::crawllog::{ErrorCode, Tally};
use common::disk::DiskFloor;
use common::metrics::{Exposition, Kind, Place, seconds};

use crate::frontier::Frontier;
use crate::settings::Settings;

/// The name of the gauge carried from one run to the next.
const LAST_PAGE: &str = "crawl_fetch_last_page_timestamp_seconds";

/// The metrics file of one run, written by its own thread until dropped.
pub struct FetchMetrics {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

/// What the thread knows of the file.
struct MetricsFile {
    place: Place,
    file: PathBuf,
    labels: Vec<(&'static str, String)>,
    segment: String,
    started: SystemTime,
    every: Duration,
    log: LogTail,
    /// The last page of earlier runs (seconds since 1970; 0: none).
    last_page_before: f64,
    /// Where the free space is looked at, and the floor kept there.
    disk: (PathBuf, DiskFloor),
    /// A failed write was said (said once per run).
    warned: bool,
}

/// What the frontier says at a write during the run.
#[derive(Debug, Default, Clone, Copy)]
struct Queues {
    ready: usize,
    busy: usize,
    penalty: usize,
    with_work: usize,
    held: usize,
    backed_off: usize,
    robots_pending: usize,
    urls_left: u64,
}

impl FetchMetrics {
    /// Starts the file of the run over segment `id` (the segment loaded,
    /// its crawl log repaired, `frontier` filled): written at once, then
    /// every interval until the handle is dropped, and a last time then.
    /// A thread that cannot start costs the file only (said once).
    pub fn start(
        s: &Settings,
        id: &str,
        started: SystemTime,
        frontier: Arc<Frontier>,
    ) -> FetchMetrics {
        let mut file = MetricsFile::new(s, id, started);
        let (stop, stopped) = mpsc::channel::<()>();
        let every = file.every;
        let thread = std::thread::Builder::new()
            .name("metrics".into())
            .spawn(move || {
                file.write(Some(Queues::of(&frontier)));
                // A message or a closed channel: the run is over.
                while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(every) {
                    file.write(Some(Queues::of(&frontier)));
                }
                file.write(None);
            });
        match thread {
            Ok(thread) => FetchMetrics {
                stop: Some(stop),
                thread: Some(thread),
            },
            Err(e) => {
                common::runlog::say(format_args!("the metrics file is not written: {e}"));
                FetchMetrics {
                    stop: None,
                    thread: None,
                }
            }
        }
    }
}

impl Drop for FetchMetrics {
    /// Stops the thread, which writes the file a last time: the crawl log
    /// as the run left it, no queues.
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Queues {
    /// What `frontier` says now.
    fn of(frontier: &Frontier) -> Queues {
        let counts = frontier.counts();
        let census = frontier.census();
        Queues {
            ready: counts.ready,
            busy: counts.busy,
            penalty: counts.penalty,
            with_work: counts.with_work,
            held: frontier.pace().blocked,
            backed_off: census.backed_off,
            robots_pending: counts.robots_pending,
            urls_left: census.urls_left,
        }
    }
}

impl MetricsFile {
    fn new(s: &Settings, id: &str, started: SystemTime) -> MetricsFile {
        let shard = s.shard.as_ref().map(|(_, j)| *j);
        let file = s.metrics.fetch_file(shard);
        let every = if s.options.progress_interval.is_zero() {
            common::progress::DEFAULT_INTERVAL
        } else {
            s.options.progress_interval
        };
        MetricsFile {
            last_page_before: common::metrics::read_sample(&file, LAST_PAGE)
                .filter(|v| v.is_finite())
                .unwrap_or(0.0),
            place: s.metrics.clone(),
            labels: s.metrics.labels(shard),
            file,
            segment: id.to_string(),
            started,
            every,
            log: LogTail::new(s.crawl.crawl_log_path(id)),
            disk: (s.crawl.root().to_path_buf(), s.disk_floor),
            warned: false,
        }
    }

    /// Reads the crawl log on and writes the file; `None`: the run has
    /// ended. A failure is said once and costs nothing else.
    fn write(&mut self, queues: Option<Queues>) {
        let read = self.log.read_on();
        let text = self.render(queues.as_ref());
        let written = read.and_then(|()| self.place.write(&self.file, &text));
        if let Err(e) = written
            && !std::mem::replace(&mut self.warned, true)
        {
            common::runlog::say(format_args!(
                "{}: the metrics file is not up to date: {e}",
                self.file.display()
            ));
        }
    }

    fn render(&self, queues: Option<&Queues>) -> String {
        let labels: Vec<(&str, &str)> = self.labels.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let mut e = Exposition::new(&labels);
        let t = &self.log.tally;
        let running = queues.is_some();
        let q = queues.copied().unwrap_or_default();
        let last_page = t.last_page.map_or(0.0, seconds).max(self.last_page_before);
        e.one(
            "crawl_fetch_running",
            Kind::Gauge,
            "1 while a fetcher runs on this crawl (or shard), 0 once it has ended.",
            f64::from(u8::from(running)),
        )
        .by(
            "crawl_fetch_segment_info",
            Kind::Gauge,
            "The segment being fetched, or last fetched (always 1).",
            "segment",
            &[(self.segment.as_str(), 1.0)],
        )
        .one(
            "crawl_fetch_start_timestamp_seconds",
            Kind::Gauge,
            "When the fetcher run started.",
            seconds(self.started),
        )
        .one(
            "crawl_fetch_interval_seconds",
            Kind::Gauge,
            "How often this file is rewritten while the fetcher runs.",
            self.every.as_secs_f64(),
        )
        .one(
            "crawl_fetch_written_timestamp_seconds",
            Kind::Gauge,
            "When the fetcher wrote this file.",
            seconds(SystemTime::now()),
        )
        .one(
            LAST_PAGE,
            Kind::Gauge,
            "Time of the last page stored, in this run or an earlier one (0: none yet).",
            last_page,
        );
        self.counters(&mut e, t);
        self.gauges(&mut e, &q);
        e.text().to_string()
    }

    /// The crawl log's figures.
    fn counters(&self, e: &mut Exposition, t: &Tally) {
        let classes: Vec<(String, f64)> = (1..t.classes.len())
            .filter(|&c| (2..=5).contains(&c) || t.classes[c] > 0)
            .map(|c| (format!("{c}xx"), t.classes[c] as f64))
            .chain((t.classes[0] > 0).then(|| ("other".to_string(), t.classes[0] as f64)))
            .collect();
        let errors: Vec<(&str, f64)> = ErrorCode::ALL
            .iter()
            .zip(t.errors)
            .map(|(c, n)| (c.as_str(), n as f64))
            .collect();
        e.one(
            "crawl_fetch_pages_total",
            Kind::Counter,
            "HTTP responses to pages (robots.txt not included) in the segment's crawl log.",
            t.pages as f64,
        )
        .one(
            "crawl_fetch_page_bytes_total",
            Kind::Counter,
            "Body bytes of those responses, as received (the crawl log's bytes column).",
            t.page_bytes as f64,
        )
        .by(
            "crawl_fetch_responses_total",
            Kind::Counter,
            "HTTP responses to pages in the segment's crawl log, by status class.",
            "class",
            &classes,
        )
        .one(
            "crawl_fetch_robots_responses_total",
            Kind::Counter,
            "HTTP responses to robots.txt requests in the segment's crawl log.",
            t.robots as f64,
        )
        .by(
            "crawl_fetch_errors_total",
            Kind::Counter,
            "Crawl-log lines without an HTTP response, by the code the log gives.",
            "code",
            &errors,
        )
        .one(
            "crawl_fetch_attempts_total",
            Kind::Counter,
            "Crawl-log lines: URLs attempted, robots.txt included.",
            t.attempts as f64,
        );
    }

    /// The frontier's figures (all 0 once the run has ended) and the disk.
    fn gauges(&self, e: &mut Exposition, q: &Queues) {
        let space = common::disk::space(&self.disk.0).ok();
        let n = |v: usize| v as f64;
        e.by(
            "crawl_fetch_queues",
            Kind::Gauge,
            "Queues (hosts, by default) with work: ready for a request, with one in flight, or \
             waiting their delay in the penalty box.",
            "state",
            &[
                ("ready", n(q.ready)),
                ("busy", n(q.busy)),
                ("penalty_box", n(q.penalty)),
            ],
        )
        .one(
            "crawl_fetch_queues_with_work",
            Kind::Gauge,
            "Queues that still have URLs to fetch in this run.",
            n(q.with_work),
        )
        .one(
            "crawl_fetch_queues_held",
            Kind::Gauge,
            "Queues with work held longer than their delay (robots.txt to ask again, \
             Retry-After, backoff).",
            n(q.held),
        )
        .one(
            "crawl_fetch_queues_backed_off",
            Kind::Gauge,
            "Queues with work whose host failed since its last success (delay backed off).",
            n(q.backed_off),
        )
        .one(
            "crawl_fetch_robots_pending_hosts",
            Kind::Gauge,
            "Hosts whose robots.txt is being fetched.",
            n(q.robots_pending),
        )
        .one(
            "crawl_fetch_urls_waiting",
            Kind::Gauge,
            "URLs of the segment not handed to a worker yet in this run.",
            q.urls_left as f64,
        )
        .one(
            "crawl_fetch_disk_free_bytes",
            Kind::Gauge,
            "Free space on the crawl directory's filesystem.",
            space.map_or(f64::NAN, |s| s.free as f64),
        )
        .one(
            "crawl_fetch_disk_floor_bytes",
            Kind::Gauge,
            "The free space the fetcher keeps (min_free_disk); it ends the round there.",
            space.map_or(f64::NAN, |s| self.disk.1.bytes(s.total) as f64),
        );
    }
}

/// A crawl log read on from where the last read stopped, whole lines only.
struct LogTail {
    path: PathBuf,
    /// Bytes counted (up to the end of a line).
    offset: u64,
    tally: Tally,
}

impl LogTail {
    fn new(path: PathBuf) -> LogTail {
        LogTail {
            path,
            offset: 0,
            tally: Tally::default(),
        }
    }

    /// Counts the whole lines written since the last call (none if the
    /// file is not there yet).
    fn read_on(&mut self) -> std::io::Result<()> {
        let mut file = match File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        file.seek(SeekFrom::Start(self.offset))?;
        let mut input = BufReader::new(file);
        let mut line = Vec::with_capacity(512);
        loop {
            line.clear();
            let n = input.read_until(b'\n', &mut line)?;
            // The end, or a line still being written: read again next time.
            if n == 0 || line.last() != Some(&b'\n') {
                return Ok(());
            }
            self.tally.add(&String::from_utf8_lossy(&line));
            self.offset += n as u64;
        }
    }
}
