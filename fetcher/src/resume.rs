//! Picking up a run that was killed (`kill -9`, power cut, second Ctrl-C).
//!
//! What an earlier run left in `fetched/ID/` tells what is done:
//! - the last WARC file may end in a torn record: it is cut off
//!   ([`common::warc::recover`]);
//! - every response stored in the WARC files is done and is never fetched
//!   again; stored robots.txt responses are reused as the host's rules;
//! - the crawl log may end in a torn line: it is cut off; every URL it logs
//!   is done (errors included: their retries go to the leftover file);
//! - a response stored without its log line (killed in between) gets its
//!   line written now, rebuilt from the WARC record.

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use common::crawllog::{LogLine, Status, parse_line};
use common::http::parse_response_head;
use common::segment::Via;
use common::warc::{WarcError, WarcReader, WarcRecord, recover};

/// What an earlier run of the same segment did.
#[derive(Debug, Default)]
pub struct Resumed {
    /// URLs attempted, with their outcome.
    pub done: HashMap<String, Status>,
    /// robots.txt responses stored: host → (status, body).
    pub robots: HashMap<String, (u16, Vec<u8>)>,
    /// WARC files already there.
    pub warc_files: Vec<PathBuf>,
    /// Log lines to write for responses stored without one.
    pub missing_lines: Vec<LogLine>,
    /// Bytes cut off the last WARC file.
    pub warc_cut: u64,
    /// Bytes cut off the crawl log.
    pub log_cut: u64,
    /// Crawl-log lines kept.
    pub log_lines: u64,
}

impl Resumed {
    /// True if there was nothing to resume.
    pub fn is_fresh(&self) -> bool {
        self.done.is_empty() && self.warc_files.is_empty()
    }
}

/// A problem reading what the earlier run left.
#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    /// A file could not be read or repaired.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// A WARC file could not be read.
    #[error(transparent)]
    Warc(#[from] WarcError),
}

/// Largest record block read back (robots.txt bodies are at most 500 KiB).
const MAX_BLOCK: usize = 600 * 1024;

/// Reads and repairs `dir` (= `fetched/ID/`).
pub fn scan(dir: &Path, crawl_log: &Path) -> Result<Resumed, ResumeError> {
    let mut r = Resumed::default();
    scan_log(crawl_log, &mut r)?;

    let mut files: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.ends_with(".warc.gz") && !n.starts_with('.'))
            })
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(source) => {
            return Err(ResumeError::Io {
                path: dir.to_path_buf(),
                source,
            });
        }
    };
    files.sort();
    if let Some(last) = files.last() {
        r.warc_cut = recover(last)?.cut;
    }
    let mut rec = WarcRecord::default();
    for file in &files {
        let mut reader = WarcReader::open(file, MAX_BLOCK)?;
        loop {
            match reader.read_next(&mut rec) {
                Ok(true) => {}
                Ok(false) => break,
                // Only the last file can be torn, and it was repaired; stop
                // reading a damaged file at the damage.
                Err(_) => break,
            }
            if rec.record_type() != Some("response") {
                continue;
            }
            note_response(&rec, &mut r);
        }
    }
    r.warc_files = files;
    Ok(r)
}

fn scan_log(path: &Path, r: &mut Resumed) -> Result<(), ResumeError> {
    let io = |source| ResumeError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = match OpenOptions::new().read(true).write(true).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io(e)),
    };
    let len = file.metadata().map_err(io)?.len();
    let mut reader = BufReader::new(&file);
    let mut line = Vec::new();
    let mut good = 0u64;
    loop {
        line.clear();
        let n = reader.read_until(b'\n', &mut line).map_err(io)?;
        if n == 0 || line.last() != Some(&b'\n') {
            break;
        }
        good += n as u64;
        let text = String::from_utf8_lossy(&line);
        if let Ok(l) = parse_line(&text) {
            r.log_lines += 1;
            if l.via != Via::Robots {
                r.done.insert(l.url, l.status);
            }
        }
    }
    if good < len {
        // A torn last line: the writer was killed in the middle of it.
        file.set_len(good).map_err(io)?;
        file.sync_all().map_err(io)?;
        r.log_cut = len - good;
    }
    Ok(())
}

fn note_response(rec: &WarcRecord, r: &mut Resumed) {
    let Some(url) = rec.target_uri() else { return };
    let via = rec
        .header("X-Crawl-Via")
        .and_then(Via::parse)
        .unwrap_or(Via::Link);
    let hops = rec
        .header("X-Crawl-Hops")
        .and_then(|h| h.parse().ok())
        .unwrap_or(0);
    let head = parse_response_head(&rec.block);
    let status = head.as_ref().map_or(0, |h| h.status);
    if via == Via::Robots {
        if let Ok(u) = url::Url::parse(url)
            && let Some(host) = u.host_str()
        {
            let body = head
                .as_ref()
                .map(|h| rec.block[h.body_offset.min(rec.block.len())..].to_vec())
                .unwrap_or_default();
            r.robots.insert(host.to_string(), (status, body));
        }
        return;
    }
    if r.done.contains_key(url) {
        return;
    }
    let (content_type, bytes) = head
        .as_ref()
        .map(|h| {
            let ct = h
                .header("Content-Type")
                .map(|v| common::http::parse_content_type(v).0)
                .unwrap_or_default();
            let len = h
                .header("Content-Length")
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or((rec.block.len() - h.body_offset.min(rec.block.len())) as u64);
            (ct, len)
        })
        .unwrap_or_default();
    let time = rec
        .header("WARC-Date")
        .and_then(common::timefmt::parse_iso)
        .unwrap_or_else(SystemTime::now);
    let note = match head.as_ref().and_then(|h| h.header("Location")) {
        Some(loc) if (300..400).contains(&status) => format!("redirect {loc}"),
        _ => "recovered from WARC after a crash".to_string(),
    };
    r.done.insert(url.to_string(), Status::Http(status));
    r.missing_lines.push(LogLine {
        time,
        status: Status::Http(status),
        bytes,
        duration_ms: 0,
        content_type,
        url: url.to_string(),
        via,
        hops,
        note,
    });
}
