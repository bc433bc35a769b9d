//! Picking up a run that was killed (`kill -9`, power cut, second Ctrl-C).
//!
//! What an earlier run left in `fetched/ID/` tells what is done:
//! - the last WARC file may end in a torn record: it is cut off
//!   ([`common::warc::recover`]), but only from a file that starts with
//!   the fetcher's `warcinfo` record; anything else is moved aside to
//!   `NAME.not-warc`, never cut;
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
use common::warc::{HOPS_FIELD, VIA_FIELD, WarcError, WarcReader, WarcRecord, list_files, recover};

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
    /// Where a last "WARC file" that was not one of ours was moved.
    pub moved_aside: Option<PathBuf>,
}

impl Resumed {
    /// True if there was nothing to resume.
    pub fn is_fresh(&self) -> bool {
        self.done.is_empty() && self.warc_files.is_empty()
    }

    /// The serial number for the run's first new WARC file.
    pub fn next_serial(&self) -> u32 {
        self.warc_files
            .iter()
            .filter_map(|p| common::warc::file_serial(p))
            .max()
            .map_or(0, |s| s + 1)
    }

    /// What was found, for the log.
    pub fn describe(&self) -> String {
        let mut text = format!(
            "resuming: {} URLs already attempted, {} WARC files kept",
            self.done.len(),
            self.warc_files.len()
        );
        if self.warc_cut > 0 {
            text += &format!(", {} torn bytes cut off the last WARC file", self.warc_cut);
        }
        if let Some(aside) = &self.moved_aside {
            text += &format!(
                ", the last WARC file does not start with a WARC record of ours: moved aside, \
                 untouched, to {}",
                aside.display()
            );
        }
        if self.log_cut > 0 {
            text += &format!(", a torn crawl-log line cut ({} bytes)", self.log_cut);
        }
        text
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

/// Reads and repairs `dir` (= `fetched/ID/`), whose WARC files are named
/// with `warc_prefix`.
pub fn scan(dir: &Path, warc_prefix: &str, crawl_log: &Path) -> Result<Resumed, ResumeError> {
    let mut r = Resumed::default();
    scan_log(crawl_log, &mut r)?;

    // In serial order: the last one written is the one that can be torn.
    let files = list_files(dir, warc_prefix).map_err(|source| ResumeError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut files = files;
    if let Some(last) = files.last() {
        if written_by_us(last)? {
            r.warc_cut = recover(last)?.cut;
        } else {
            // Not a torn tail of ours: never cut, moved aside for a person.
            let aside = aside_path(last);
            std::fs::rename(last, &aside).map_err(|source| ResumeError::Io {
                path: last.clone(),
                source,
            })?;
            r.moved_aside = Some(aside);
            files.pop();
        }
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

/// True if `path` is empty or starts with a readable WARC record, as every
/// file the fetcher writes does (its `warcinfo`): only then can its tail be
/// a torn record of ours.
fn written_by_us(path: &Path) -> Result<bool, ResumeError> {
    let len = std::fs::metadata(path)
        .map_err(|source| ResumeError::Io {
            path: path.to_path_buf(),
            source,
        })?
        .len();
    if len == 0 {
        return Ok(true);
    }
    let mut rec = WarcRecord::default();
    Ok(WarcReader::open(path, MAX_BLOCK)?
        .read_next(&mut rec)
        .unwrap_or(false)
        && rec.record_type() == Some("warcinfo"))
}

/// `NAME.not-warc` beside `path` (a name no reader takes for a WARC file),
/// or `NAME.not-warc.N` if that exists.
fn aside_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(".not-warc");
    let base = PathBuf::from(name);
    let mut aside = base.clone();
    let mut n = 1;
    while aside.exists() && n < 1000 {
        aside = PathBuf::from(format!("{}.{n}", base.display()));
        n += 1;
    }
    aside
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
        .header(VIA_FIELD)
        .and_then(Via::parse)
        .unwrap_or(Via::Link);
    let hops = rec
        .header(HOPS_FIELD)
        .and_then(|h| h.parse().ok())
        .unwrap_or(0);
    let head = parse_response_head(&rec.block);
    let status = head.as_ref().map_or(0, |h| h.status);
    if via == Via::Robots {
        // A redirect says nothing about the rules: they are in the record of
        // its target, which may be on another host, or missing if the run
        // was killed before it. Such a host asks for robots.txt again.
        if (300..400).contains(&status) {
            return;
        }
        if let Ok(u) = url::Url::parse(url)
            && let Some(host) = u.host_str()
        {
            let body =
                common::body::decoded_payload(&rec.block, crate::robots::MAX_ROBOTS_BYTES + 1);
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
    // The note the line would have had, as far as the record tells.
    let location = head
        .as_ref()
        .and_then(|h| common::http::location(&rec.block[..h.body_offset.min(rec.block.len())]))
        .filter(|_| (300..400).contains(&status))
        .and_then(|loc| {
            let base = url::Url::parse(url).ok()?;
            common::urlnorm::canonicalize_relative(&base, &loc).ok()
        });
    let note = match (location, rec.header("WARC-Truncated")) {
        (Some(target), _) => format!("redirect {target}"),
        (None, Some("length")) => "too-big (recovered from WARC after a crash)".to_string(),
        (None, Some(why)) => format!("truncated {why} (recovered from WARC after a crash)"),
        (None, None) => "recovered from WARC after a crash".to_string(),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn record(url: &str, via: &str, head: &str, body: &str) -> WarcRecord {
        WarcRecord {
            headers: vec![
                ("WARC-Type".into(), "response".into()),
                ("WARC-Target-URI".into(), url.into()),
                ("WARC-Date".into(), "2026-01-02T03:04:05Z".into()),
                (VIA_FIELD.into(), via.into()),
                (HOPS_FIELD.into(), "2".into()),
            ],
            block: format!("{head}\r\n\r\n{body}").into_bytes(),
            ..WarcRecord::default()
        }
    }

    #[test]
    fn a_redirected_robots_txt_is_not_taken_for_the_rules() {
        let mut r = Resumed::default();
        let moved = record(
            "http://a.test/robots.txt",
            "robots",
            "HTTP/1.1 301 Moved\r\nLocation: http://b.test/robots.txt",
            "",
        );
        note_response(&moved, &mut r);
        assert!(r.robots.is_empty(), "a 301 is not an allow-all");
        let rules = record(
            "http://b.test/robots.txt",
            "robots",
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain",
            "User-agent: *\nDisallow: /x\n",
        );
        note_response(&rules, &mut r);
        let (status, body) = &r.robots["b.test"];
        assert_eq!(*status, 200);
        assert_eq!(body, b"User-agent: *\nDisallow: /x\n");
        assert!(r.missing_lines.is_empty(), "robots.txt is not a page");
    }

    #[test]
    fn a_file_that_is_not_a_warc_of_ours_is_moved_aside_never_cut() {
        let dir = common::testutil::TempDir::new("resume-foreign");
        let prefix = "crawl-00001";
        let not_warc = vec![b'x'; 5000];
        let name = format!("{prefix}-20260102030405000-00000-host.warc.gz");
        let path = dir.write(&name, &not_warc);
        let r = scan(dir.path(), prefix, &dir.join("crawl.log")).unwrap();
        let aside = r.moved_aside.clone().expect("moved aside");
        assert!(!path.exists());
        assert_eq!(std::fs::read(&aside).unwrap(), not_warc, "untouched");
        assert!(r.warc_files.is_empty() && r.warc_cut == 0);
        assert!(r.describe().contains("moved aside"), "{}", r.describe());
    }

    #[test]
    fn a_stored_page_without_its_log_line_is_done_and_gets_one() {
        let mut r = Resumed::default();
        let page = record(
            "http://a.test/old",
            "link",
            "HTTP/1.1 302 Found\r\nLocation: /new\r\nContent-Length: 0",
            "",
        );
        note_response(&page, &mut r);
        assert_eq!(r.done["http://a.test/old"], Status::Http(302));
        let line = &r.missing_lines[0];
        assert_eq!((line.via, line.hops), (Via::Link, 2));
        assert_eq!(
            line.note, "redirect http://a.test/new",
            "as a live run writes it"
        );
        // Logged already: nothing to add.
        note_response(&page, &mut r);
        assert_eq!(r.missing_lines.len(), 1);
    }
}
