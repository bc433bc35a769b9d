//! The recorder: the one thread that writes down what the run fetched and
//! left (WARC records, crawl-log lines and the leftover file), fed by
//! workers through a bounded channel (backpressure: workers wait when the
//! disk is slower than the network).
//!
//! Workers compress their own records ([`Encoders`]): deflate is most of
//! the cost of storing a page, and on one thread it capped the whole run at
//! what one core compresses. The writer only appends each exchange's bytes
//! (one gzip member per record, as before) and keeps the file offsets.
//!
//! Order of writes per fetch: the WARC records first (one `write` each),
//! then the crawl-log line; so a crawl-log line always means the response
//! is stored, and after `kill -9` the WARC files know at least as much as
//! the log ([`crate::resume`] relies on this).

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, sync_channel};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use common::crawllog::{ErrorCode, LogLine, Status, format_line};
use common::segment::{SegmentRecord, SegmentWriter, Via};
use common::warc::{
    ClosedFile, EncodedExchange, Exchange, ExchangeEncoder, HOPS_FIELD, Revisit, RevisitProfile,
    VIA_FIELD, WarcFields, WarcWriter, WarcWriterConfig, payload_digest,
};

use crate::http::Response;

/// A fetched response, its WARC records compressed, with its log line.
#[derive(Debug)]
pub struct Fetched {
    /// The request and response records, compressed.
    pub records: EncodedExchange,
    /// Payload bytes stored.
    pub payload_bytes: u64,
    /// The body was stored incomplete.
    pub truncated: bool,
    /// How the URL was found.
    pub via: Via,
    /// Its crawl-log line.
    pub log: LogLine,
}

/// What a refetch brings of its last fetch (from its segment line), to
/// store an unchanged response as a `revisit` record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Before {
    /// `WARC-Payload-Digest` of the last full response (empty: unknown).
    pub digest: String,
    /// When it was fetched.
    pub fetched: Option<std::time::SystemTime>,
    /// Its `WARC-Record-ID` (empty: unknown).
    pub record_id: String,
    /// Store a 200 with the same payload as a revisit.
    pub identical: bool,
}

impl Before {
    /// The last fetch of a refetch (`via` recrawl, or a URL with validators).
    pub fn of(rec: &SegmentRecord, identical: bool) -> Option<Before> {
        let refetch = rec.via == Via::Recrawl
            || !rec.etag.is_empty()
            || !rec.last_modified.is_empty()
            || !rec.digest.is_empty()
            || !rec.record_id.is_empty();
        refetch.then(|| Before {
            digest: rec.digest.clone(),
            fetched: rec.fetched.map(common::timefmt::from_unix_millis),
            record_id: rec.record_id.clone(),
            identical,
        })
    }

    /// Whether response `r` is stored as a `revisit` record, and why: a 304,
    /// or (when asked for) a 2xx with the last fetch's payload digest.
    pub fn revisit(&self, r: &Response) -> Option<Revisit> {
        let profile = if r.status == 304 {
            RevisitProfile::ServerNotModified
        } else if self.identical
            && (200..300).contains(&r.status)
            && r.truncated.is_none()
            && !self.digest.is_empty()
            && payload_digest(r.body()) == self.digest
        {
            RevisitProfile::IdenticalPayloadDigest
        } else {
            return None;
        };
        Some(Revisit {
            profile,
            refers_to: (!self.record_id.is_empty()).then(|| self.record_id.clone()),
            refers_to_date: self.fetched,
        })
    }
}

/// The buffers of compressed exchanges, given back by the writer thread
/// once written, for the workers' next pages: a page's records then cost
/// no allocation, and no buffer is freed on a thread other than the one
/// that made it.
#[derive(Clone, Default)]
pub struct Spare(Arc<Mutex<Vec<EncodedExchange>>>);

/// Most buffers kept in a [`Spare`] (each about the size of a page's records).
const SPARE_KEPT: usize = 64;

impl Spare {
    fn take(&self) -> EncodedExchange {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop()
            .unwrap_or_default()
    }

    fn put(&self, buffers: EncodedExchange) {
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if kept.len() < SPARE_KEPT {
            kept.push(buffers);
        }
    }
}

/// The gzip compressors that workers borrow to build their WARC records.
///
/// A compressor's state is a few hundred KB, so there are not one per
/// worker but at most a few per core, made on first need; a worker that
/// finds none free waits for one (compressing takes well under a
/// millisecond).
pub struct Encoders {
    /// Free compressors, how many were made, and how many workers wait.
    free: Mutex<(Vec<ExchangeEncoder>, usize, usize)>,
    returned: Condvar,
    max: usize,
    level: u32,
    spare: Spare,
}

impl Encoders {
    /// A pool of at most `max` compressors (at least one) at deflate
    /// level `level` (0–9, see [`common::warc::DEFAULT_COMPRESSION_LEVEL`]),
    /// taking their output buffers from `spare`.
    pub fn new(max: usize, level: u32, spare: Spare) -> Encoders {
        Encoders {
            free: Mutex::new((Vec::new(), 0, 0)),
            returned: Condvar::new(),
            max: max.max(1),
            level,
            spare,
        }
    }

    /// A pool sized for this machine: eight compressors per core (a worker
    /// may lose its core while it holds one; with fewer, others waited).
    pub fn for_this_machine(level: u32, spare: Spare) -> Encoders {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        Encoders::new(8 * cores, level, spare)
    }

    /// The request and response records of `response` to `url`, compressed;
    /// with `revisit`, a `revisit` record in place of the response record;
    /// with `metadata`, a metadata record after it.
    pub fn encode(
        &self,
        url: &str,
        via: Via,
        hops: u32,
        response: &Response,
        revisit: Option<&Revisit>,
        metadata: Option<&WarcFields>,
    ) -> std::io::Result<EncodedExchange> {
        let mut encoder = self.take();
        let extra = [
            (HOPS_FIELD, hops.to_string()),
            (VIA_FIELD, via.as_str().to_string()),
        ];
        let protocols: Vec<&str> = std::iter::once(response.http_protocol())
            .chain(response.tls.as_deref().map(|t| t.protocol.as_str()))
            .collect();
        let ex = Exchange {
            target_uri: url,
            date: response.date,
            ip: response.ip,
            request_head: &response.request,
            response_head: response.head(),
            payload: response.body(),
            truncated: response.truncated,
            extra_fields: &extra,
            protocols: &protocols,
            cipher_suite: response.tls.as_deref().map(|t| t.cipher_suite.as_str()),
            metadata,
        };
        let mut out = self.spare.take();
        let result = match revisit {
            Some(v) => encoder.encode_revisit(&ex, v, &mut out),
            None => encoder.encode(&ex, &mut out),
        };
        self.give_back(encoder);
        result.map(|()| out)
    }

    fn take(&self) -> ExchangeEncoder {
        let mut pool = self.free.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(e) = pool.0.pop() {
                return e;
            }
            if pool.1 < self.max {
                pool.1 += 1;
                return ExchangeEncoder::with_level(self.level);
            }
            pool.2 += 1;
            pool = self.returned.wait(pool).unwrap_or_else(|e| e.into_inner());
            pool.2 -= 1;
        }
    }

    fn give_back(&self, encoder: ExchangeEncoder) {
        let mut pool = self.free.lock().unwrap_or_else(|e| e.into_inner());
        pool.0.push(encoder);
        // A notification is a system call: only when someone waits.
        if pool.2 > 0 {
            self.returned.notify_one();
        }
    }
}

/// Messages to the writer thread.
#[derive(Debug)]
pub enum Msg {
    /// Recorder a response and log it.
    Fetched(Box<Fetched>),
    /// Log an attempt that stored nothing.
    Log(LogLine),
    /// Write a URL to the leftover file.
    Leftover(SegmentRecord),
}

/// What the writer did, for `stats.json`.
#[derive(Debug, Default, Clone)]
pub struct RecorderTotals {
    /// Responses stored (robots.txt included).
    pub responses: u64,
    /// Payload bytes stored.
    pub payload_bytes: u64,
    /// Responses stored truncated.
    pub truncated: u64,
    /// robots.txt responses stored.
    pub robots_responses: u64,
    /// Crawl-log lines written.
    pub log_lines: u64,
    /// Count per status class (`2xx`, ...) or error code.
    pub outcomes: BTreeMap<String, u64>,
    /// URLs written to leftover by `via`.
    pub leftover: BTreeMap<String, u64>,
    /// WARC files written.
    pub warc_files: Vec<PathBuf>,
    /// CDXJ indexes written (one per WARC file closed).
    pub indexes: u64,
    /// Captures in them.
    pub indexed_captures: u64,
}

/// A problem writing output; fatal for the run.
#[derive(Debug, thiserror::Error)]
pub enum RecorderError {
    /// A file could not be written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The leftover file failed.
    #[error(transparent)]
    Segment(#[from] common::segment::SegmentError),
}

/// Handle to the writer thread.
pub struct Recorder {
    tx: Option<SyncSender<Msg>>,
    thread: Option<JoinHandle<Result<RecorderTotals, RecorderError>>>,
    failed: Arc<AtomicBool>,
}

impl Recorder {
    /// Starts the writer. `crawl_log` is opened for appending (a resumed run
    /// continues it). At most `queue` messages wait for the writer: each
    /// may hold a whole response (compressed), so with `queue` = the most
    /// workers, responses waiting take at most as much memory as those
    /// being read.
    pub fn start(
        warc: WarcWriterConfig,
        crawl_log: &Path,
        leftover: &Path,
        queue: usize,
        closed_to: Option<common::store::UploadQueue>,
        spare: Spare,
    ) -> Result<Recorder, RecorderError> {
        let log_file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(crawl_log)
            .map_err(|source| RecorderError::Io {
                path: crawl_log.to_path_buf(),
                source,
            })?;
        let out = WarcOut {
            dir: warc.dir.clone(),
            prefix: warc.prefix.clone(),
            closed_to,
            spare,
        };
        let writer = WarcWriter::new(warc).map_err(|source| RecorderError::Io {
            path: out.dir.clone(),
            source,
        })?;
        let leftover = SegmentWriter::create(leftover)?;
        let (tx, rx) = sync_channel(queue.max(1));
        let log_path = crawl_log.to_path_buf();
        let failed = Arc::new(AtomicBool::new(false));
        let flag = failed.clone();
        let thread = std::thread::Builder::new()
            .name("store".into())
            .spawn(move || {
                let result = run(rx, writer, out, log_file, log_path, leftover);
                // The receiver is gone by now: workers' sends fail at once.
                flag.store(result.is_err(), Ordering::SeqCst);
                result
            })
            .map_err(|source| RecorderError::Io {
                path: crawl_log.to_path_buf(),
                source,
            })?;
        Ok(Recorder {
            tx: Some(tx),
            thread: Some(thread),
            failed,
        })
    }

    /// True once the writer has stopped on an error (a full disk, ...):
    /// nothing more can be stored, so the run must stop; [`Recorder::finish`]
    /// returns the error.
    pub fn failed(&self) -> bool {
        self.failed.load(Ordering::SeqCst)
    }

    /// A sender for workers.
    pub fn sender(&self) -> SyncSender<Msg> {
        self.tx.clone().expect("recorder is running")
    }

    /// Closes the channel, waits for everything to be written, closes the
    /// WARC file and renames the leftover file into place.
    pub fn finish(mut self) -> Result<RecorderTotals, RecorderError> {
        drop(self.tx.take());
        match self.thread.take().expect("finish once").join() {
            Ok(r) => r,
            Err(_) => Err(RecorderError::Io {
                path: PathBuf::from("store thread"),
                source: std::io::Error::other("the writer thread panicked"),
            }),
        }
    }
}

/// How long the writer pauses between two batches while messages keep
/// coming (see `run`).
pub const BATCH_PAUSE: std::time::Duration = std::time::Duration::from_millis(1);

/// Where the WARC files go: their directory and name prefix, who is told
/// of each closed file (the uploads to the WARC store), and where written
/// buffers go back.
struct WarcOut {
    dir: PathBuf,
    prefix: String,
    closed_to: Option<common::store::UploadQueue>,
    spare: Spare,
}

/// Crawl-log lines held until the WARC records they tell of are written.
const LINES_HELD: usize = 64 * 1024;

/// The crawl log: lines held (formatted) until [`Log::write_after`] has
/// written the WARC bytes they tell of, then appended to the file.
struct Log {
    file: BufWriter<File>,
    path: PathBuf,
    held: String,
}

impl Log {
    fn error(&self, source: std::io::Error) -> RecorderError {
        RecorderError::Io {
            path: self.path.clone(),
            source,
        }
    }

    /// Holds the line of `l`, counted in `totals`.
    fn hold(&mut self, l: &LogLine, totals: &mut RecorderTotals) {
        format_line(l, &mut self.held);
        totals.log_lines += 1;
        *totals.outcomes.entry(outcome_name(l.status)).or_default() += 1;
    }

    /// Writes the WARC records held by `warc`, then the lines held, and
    /// flushes the log: a line on disk always means its response is too.
    fn write_after(&mut self, warc: &mut WarcWriter, out: &WarcOut) -> Result<(), RecorderError> {
        warc.flush().map_err(|source| RecorderError::Io {
            path: failed_warc_file(&out.dir, &out.prefix),
            source,
        })?;
        let written = self
            .file
            .write_all(self.held.as_bytes())
            .and_then(|()| self.file.flush());
        self.held.clear();
        written.map_err(|e| self.error(e))
    }
}

fn run(
    rx: Receiver<Msg>,
    mut warc: WarcWriter,
    out: WarcOut,
    log_file: File,
    log_path: PathBuf,
    mut leftover: SegmentWriter,
) -> Result<RecorderTotals, RecorderError> {
    let mut totals = RecorderTotals::default();
    let mut log = Log {
        file: BufWriter::with_capacity(64 * 1024, log_file),
        path: log_path,
        held: String::with_capacity(LINES_HELD + 4096),
    };
    // Set when a message came since the last pause: while messages keep
    // coming, the writer empties the channel, then pauses instead of
    // blocking on it, so that workers' sends find no receiver to wake (a
    // system call and a context switch per page otherwise). A pause that
    // brings nothing ends it: the writer blocks.
    let mut busy = false;
    loop {
        let msg = match rx.try_recv() {
            Ok(m) => m,
            Err(TryRecvError::Empty) => {
                // Nothing waiting: put the records and the log on disk
                // before waiting, so a crash loses as little as possible.
                log.write_after(&mut warc, &out)?;
                if std::mem::take(&mut busy) {
                    std::thread::sleep(BATCH_PAUSE);
                    continue;
                }
                match rx.recv() {
                    Ok(m) => m,
                    Err(_) => break,
                }
            }
            Err(TryRecvError::Disconnected) => break,
        };
        busy = true;
        match msg {
            Msg::Fetched(f) => {
                warc.write_encoded(&f.records)
                    .map_err(|source| RecorderError::Io {
                        path: failed_warc_file(&out.dir, &out.prefix),
                        source,
                    })?;
                for closed in warc.take_closed() {
                    file_closed(&closed, &mut totals, &out);
                }
                totals.responses += 1;
                totals.payload_bytes += f.payload_bytes;
                totals.truncated += u64::from(f.truncated);
                totals.robots_responses += u64::from(f.via == Via::Robots);
                log.hold(&f.log, &mut totals);
                out.spare.put(f.records);
            }
            Msg::Log(l) => log.hold(&l, &mut totals),
            Msg::Leftover(rec) => {
                *totals.leftover.entry(rec.via.as_str().into()).or_default() += 1;
                leftover.write(&rec)?;
            }
        }
        if log.held.len() >= LINES_HELD {
            log.write_after(&mut warc, &out)?;
        }
    }
    log.write_after(&mut warc, &out)?;
    log.file.get_ref().sync_all().map_err(|e| log.error(e))?;
    let warc_err = |source| RecorderError::Io {
        path: failed_warc_file(&out.dir, &out.prefix),
        source,
    };
    warc.close_file().map_err(warc_err)?;
    for closed in warc.take_closed() {
        file_closed(&closed, &mut totals, &out);
    }
    totals.warc_files = warc.finish().map_err(warc_err)?;
    leftover.finish()?;
    Ok(totals)
}

/// A WARC file is done: synced, its CDXJ index written beside it. The one
/// place a closed file passes through: it goes to the uploads, if the
/// crawl has a WARC store.
fn file_closed(closed: &ClosedFile, totals: &mut RecorderTotals, out: &WarcOut) {
    totals.indexes += 1;
    totals.indexed_captures += closed.captures;
    if let Some(queue) = &out.closed_to {
        queue.send(closed.warc.clone());
    }
}

/// The WARC file a failed write went to: the newest one of the run (the
/// writer forgets its file after a failed write), or the directory.
fn failed_warc_file(dir: &Path, prefix: &str) -> PathBuf {
    common::warc::list_files(dir, prefix)
        .ok()
        .and_then(|files| files.last().cloned())
        .unwrap_or_else(|| dir.to_path_buf())
}

/// The crawl-log line of an attempt that stored nothing.
pub fn error_line(
    url: &str,
    via: Via,
    hops: u32,
    code: ErrorCode,
    note: String,
    elapsed: std::time::Duration,
) -> LogLine {
    LogLine {
        time: std::time::SystemTime::now(),
        status: Status::Error(code),
        bytes: 0,
        duration_ms: elapsed.as_millis() as u64,
        content_type: String::new(),
        url: url.to_string(),
        via,
        hops,
        note,
    }
}

/// `2xx`, `3xx`, ... for HTTP statuses, the code word for errors.
pub fn outcome_name(s: Status) -> String {
    match s {
        Status::Http(code) => format!("{}xx", code / 100),
        Status::Error(code) => code.as_str().to_string(),
    }
}
