//! The one thread that writes: WARC records, crawl-log lines and the
//! leftover file, fed by workers through a bounded channel (backpressure:
//! workers wait when the disk is slower than the network).
//!
//! Order of writes per fetch: the WARC records first (one `write` each),
//! then the crawl-log line; so a crawl-log line always means the response
//! is stored, and after `kill -9` the WARC files know at least as much as
//! the log ([`crate::resume`] relies on this).

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, sync_channel};
use std::thread::JoinHandle;

use common::crawllog::{ErrorCode, LogLine, Status, format_line};
use common::segment::{SegmentRecord, SegmentWriter, Via};
use common::warc::{Exchange, WarcWriter, WarcWriterConfig};

use crate::http::Response;

/// A fetched response to store, with its log line.
#[derive(Debug)]
pub struct Fetched {
    /// The URL.
    pub url: String,
    /// The response.
    pub response: Response,
    /// How the URL was found.
    pub via: Via,
    /// Hops from a seed.
    pub hops: u32,
    /// Its crawl-log line.
    pub log: LogLine,
}

/// Messages to the writer thread.
#[derive(Debug)]
pub enum Msg {
    /// Store a response and log it.
    Fetched(Box<Fetched>),
    /// Log an attempt that stored nothing.
    Log(LogLine),
    /// Write a URL to the leftover file.
    Leftover(SegmentRecord),
}

/// What the writer did, for `stats.json`.
#[derive(Debug, Default, Clone)]
pub struct StoreTotals {
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
}

/// A problem writing output; fatal for the run.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
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
pub struct Store {
    tx: Option<SyncSender<Msg>>,
    thread: Option<JoinHandle<Result<StoreTotals, StoreError>>>,
}

impl Store {
    /// Starts the writer. `crawl_log` is opened for appending (a resumed run
    /// continues it).
    pub fn start(
        warc: WarcWriterConfig,
        crawl_log: &Path,
        leftover: &Path,
    ) -> Result<Store, StoreError> {
        let log_file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(crawl_log)
            .map_err(|source| StoreError::Io {
                path: crawl_log.to_path_buf(),
                source,
            })?;
        let warc_dir = warc.dir.clone();
        let writer = WarcWriter::new(warc).map_err(|source| StoreError::Io {
            path: warc_dir.clone(),
            source,
        })?;
        let leftover = SegmentWriter::create(leftover)?;
        let (tx, rx) = sync_channel(1024);
        let log_path = crawl_log.to_path_buf();
        let thread = std::thread::Builder::new()
            .name("store".into())
            .spawn(move || run(rx, writer, warc_dir, log_file, log_path, leftover))
            .map_err(|source| StoreError::Io {
                path: crawl_log.to_path_buf(),
                source,
            })?;
        Ok(Store {
            tx: Some(tx),
            thread: Some(thread),
        })
    }

    /// A sender for workers.
    pub fn sender(&self) -> SyncSender<Msg> {
        self.tx.clone().expect("store is running")
    }

    /// Closes the channel, waits for everything to be written, closes the
    /// WARC file and renames the leftover file into place.
    pub fn finish(mut self) -> Result<StoreTotals, StoreError> {
        drop(self.tx.take());
        match self.thread.take().expect("finish once").join() {
            Ok(r) => r,
            Err(_) => Err(StoreError::Io {
                path: PathBuf::from("store thread"),
                source: std::io::Error::other("the writer thread panicked"),
            }),
        }
    }
}

fn run(
    rx: Receiver<Msg>,
    mut warc: WarcWriter,
    warc_dir: PathBuf,
    log_file: File,
    log_path: PathBuf,
    mut leftover: SegmentWriter,
) -> Result<StoreTotals, StoreError> {
    let mut totals = StoreTotals::default();
    let mut log = BufWriter::with_capacity(64 * 1024, log_file);
    let mut line = String::with_capacity(512);
    let log_err = |source| StoreError::Io {
        path: log_path.clone(),
        source,
    };
    loop {
        let msg = match rx.try_recv() {
            Ok(m) => m,
            Err(TryRecvError::Empty) => {
                // Nothing waiting: put the log on disk before blocking, so a
                // crash loses as little as possible.
                log.flush().map_err(log_err)?;
                match rx.recv() {
                    Ok(m) => m,
                    Err(_) => break,
                }
            }
            Err(TryRecvError::Disconnected) => break,
        };
        match msg {
            Msg::Fetched(f) => {
                let r = &f.response;
                let extra = [
                    ("X-Crawl-Hops", f.hops.to_string()),
                    ("X-Crawl-Via", f.via.as_str().to_string()),
                ];
                let ex = Exchange {
                    target_uri: &f.url,
                    date: r.date,
                    ip: r.ip,
                    request_head: &r.request_head,
                    response_head: &r.response_head,
                    payload: &r.payload,
                    truncated: r.truncated,
                    extra_fields: &extra,
                };
                warc.write_exchange(&ex).map_err(|source| StoreError::Io {
                    path: warc_dir.clone(),
                    source,
                })?;
                totals.responses += 1;
                totals.payload_bytes += r.payload.len() as u64;
                totals.truncated += u64::from(r.truncated.is_some());
                totals.robots_responses += u64::from(f.via == Via::Robots);
                write_log(&mut log, &f.log, &mut line, &mut totals).map_err(log_err)?;
            }
            Msg::Log(l) => write_log(&mut log, &l, &mut line, &mut totals).map_err(log_err)?,
            Msg::Leftover(rec) => {
                *totals.leftover.entry(rec.via.as_str().into()).or_default() += 1;
                leftover.write(&rec)?;
            }
        }
    }
    log.flush().map_err(log_err)?;
    log.get_ref().sync_all().map_err(log_err)?;
    totals.warc_files = warc.finish().map_err(|source| StoreError::Io {
        path: warc_dir.clone(),
        source,
    })?;
    leftover.finish()?;
    Ok(totals)
}

fn write_log(
    out: &mut impl Write,
    l: &LogLine,
    buf: &mut String,
    totals: &mut StoreTotals,
) -> std::io::Result<()> {
    buf.clear();
    format_line(l, buf);
    out.write_all(buf.as_bytes())?;
    totals.log_lines += 1;
    *totals.outcomes.entry(outcome_name(l.status)).or_default() += 1;
    Ok(())
}

/// `2xx`, `3xx`, ... for HTTP statuses, the code word for errors.
pub fn outcome_name(s: Status) -> String {
    match s {
        Status::Http(code) => format!("{}xx", code / 100),
        Status::Error(code) => code.as_str().to_string(),
    }
}

/// True if a crawl-log outcome is worth retrying in a later run.
pub fn is_retryable(s: Status) -> bool {
    match s {
        Status::Http(code) => code == 429 || code >= 500,
        Status::Error(code) => matches!(
            code,
            ErrorCode::Dns
                | ErrorCode::Refused
                | ErrorCode::Timeout
                | ErrorCode::Connect
                | ErrorCode::Protocol
                | ErrorCode::RobotsUnavailable
                | ErrorCode::CrawlDelay
                | ErrorCode::HostDropped
        ),
    }
}
