//! Picking up a run that was killed (`kill -9`, power cut, second Ctrl-C).
//!
//! What an earlier run left in `fetched/ID/` tells what is done:
//! - the last WARC file may end in a torn record: it is cut off
//!   ([`common::warc::recover`]), but only from a file that starts with
//!   the fetcher's `warcinfo` record and whose damage is at its end; a
//!   file that is not ours is moved aside to `NAME.not-warc`, never cut,
//!   and damage with readable records after it is left in place (both
//!   with a warning);
//! - every response stored in the WARC files is done and is never fetched
//!   again; stored robots.txt responses are reused as the host's rules;
//! - the crawl log may end in a torn line: it is cut off; every URL it logs
//!   is done (errors included: their retries go to the leftover file),
//!   unless its line claims a response that no WARC file holds (a WARC file
//!   emptied, cut or moved away): then the URL is fetched again;
//! - lines of the crawl log that are not crawl-log lines (garbage) and
//!   lines claiming a missing response are moved, as they were, to
//!   `crawl.log.dropped`, each named with its line number in a warning,
//!   and the crawl log is rewritten without them (atomically), so that it
//!   agrees with the WARC files again;
//! - a response stored without its log line (killed in between), robots.txt
//!   included, gets its line written now, rebuilt from the WARC record;
//! - every WARC file of the earlier run is closed now (the resumed run
//!   starts a new one): its CDXJ index is built from what was read and
//!   written beside it unless the one there already says the same (the
//!   run was killed before the file's close wrote it, or the file was cut
//!   or damaged since).

use std::collections::{HashMap, HashSet};
use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use common::crawllog::{LogLine, Status, parse_line};
use common::http::parse_response_head;
use common::segment::Via;
use common::warc::cdxj;
use common::warc::{HOPS_FIELD, VIA_FIELD, WarcError, WarcReader, WarcRecord, list_files, recover};

/// Where the lines taken out of a crawl log go, beside it.
pub const DROPPED_SUFFIX: &str = ".dropped";

/// Lines named one by one in warnings; the rest are counted.
const NAMED_LINES: usize = 10;

/// What an earlier run of the same segment did.
#[derive(Debug, Default)]
pub struct Resumed {
    /// URLs attempted, with their outcome.
    pub done: HashMap<String, Status>,
    /// robots.txt responses stored: host → (status, body, when fetched in
    /// Unix ms, from the record's `WARC-Date`; 0 if it has none).
    pub robots: HashMap<String, (u16, Vec<u8>, i64)>,
    /// WARC files already there.
    pub warc_files: Vec<PathBuf>,
    /// Log lines to write for responses stored without one.
    pub missing_lines: Vec<LogLine>,
    /// Bytes cut off the last WARC file.
    pub warc_cut: u64,
    /// Bytes cut off the crawl log.
    pub log_cut: u64,
    /// CDXJ indexes written (missing, or not matching their WARC file).
    pub indexes_rebuilt: u64,
    /// Crawl-log lines kept.
    pub log_lines: u64,
    /// Where a last "WARC file" that was not one of ours was moved.
    pub moved_aside: Option<PathBuf>,
    /// Crawl-log lines that claimed a response no WARC file holds: their
    /// URLs are fetched again.
    pub lost_records: u64,
    /// Crawl-log lines that were not crawl-log lines.
    pub garbage_lines: u64,
    /// Damage found that a person should hear of, each naming its file.
    pub warnings: Vec<String>,
    /// Every URL with a `response` record in the WARC files.
    stored: HashSet<String>,
    /// Lines rebuilt from response records, for those the log lacks.
    rebuilt: Vec<LogLine>,
    /// robots.txt URLs with a line in the log.
    logged_robots: HashSet<String>,
}

impl Resumed {
    /// True if there was nothing to resume.
    pub fn is_fresh(&self) -> bool {
        self.done.is_empty() && self.warc_files.is_empty() && self.warnings.is_empty()
    }

    /// The serial number for the run's first new WARC file.
    pub fn next_serial(&self) -> u32 {
        self.warc_files
            .iter()
            .filter_map(|p| common::warc::file_serial(p))
            .max()
            .map_or(0, |s| s + 1)
    }

    /// What was found, for the log (damage is in [`Resumed::warnings`]).
    pub fn describe(&self) -> String {
        let mut text = format!(
            "resuming: {} URLs already attempted, {} WARC files kept",
            self.done.len(),
            self.warc_files.len()
        );
        if self.warc_cut > 0 {
            text += &format!(", {} torn bytes cut off the last WARC file", self.warc_cut);
        }
        if self.log_cut > 0 {
            text += &format!(", a torn crawl-log line cut ({} bytes)", self.log_cut);
        }
        if self.indexes_rebuilt > 0 {
            text += &format!(
                ", {} CDXJ index(es) written for WARC files closed by the resume",
                self.indexes_rebuilt
            );
        }
        if self.lost_records > 0 {
            text += &format!(
                ", {} URLs fetched again (their responses are in no WARC file)",
                self.lost_records
            );
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
    // In serial order: the last one written is the one that can be torn.
    let mut files = list_files(dir, warc_prefix).map_err(|source| ResumeError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    if let Some(last) = files.last().cloned() {
        if !written_by_us(&last)? {
            // Not a torn tail of ours: never cut, moved aside for a person.
            let aside = aside_path(&last);
            std::fs::rename(&last, &aside).map_err(|source| ResumeError::Io {
                path: last.clone(),
                source,
            })?;
            r.warnings.push(format!(
                "{}: not a WARC file written by the fetcher (it does not start with its warcinfo \
                 record): moved aside, untouched, to {}; the pages the crawl log says it held \
                 are fetched again",
                last.display(),
                aside.display()
            ));
            r.moved_aside = Some(aside);
            files.pop();
        } else {
            match recover(&last) {
                Ok(cut) => r.warc_cut = cut.cut,
                // Damage with readable records after it is no torn tail:
                // nothing is cut; the new records go to a new file.
                Err(WarcError::Malformed { offset, reason, .. }) => r.warnings.push(format!(
                    "{}: offset {offset}: {reason}; the file is left as it is, its readable \
                     records are kept and the rest is fetched again",
                    last.display()
                )),
                Err(e) => return Err(e.into()),
            }
        }
    }
    let last = files.last().cloned();
    for file in &files {
        read_warc(file, Some(file) == last.as_ref(), &mut r, true)?;
    }
    // Files uploaded to the WARC store (local copy removed): read from a
    // temporary copy; their index is in the store.
    let all = common::store::run_warcs(dir, files.clone()).map_err(|source| ResumeError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    for file in all.iter().filter(|f| !files.contains(f)) {
        let copy = common::store::readable(file).map_err(|source| ResumeError::Io {
            path: file.clone(),
            source,
        })?;
        read_warc(copy.path(), false, &mut r, false)?;
    }
    r.warc_files = all;
    scan_log(crawl_log, &mut r)?;
    add_missing_lines(&mut r);
    Ok(r)
}

/// Responses stored without their log line get one; pages among them
/// are done.
fn add_missing_lines(r: &mut Resumed) {
    for line in std::mem::take(&mut r.rebuilt) {
        if line.via == Via::Robots {
            if r.logged_robots.insert(line.url.clone()) {
                r.missing_lines.push(line);
            }
        } else if !r.done.contains_key(&line.url) {
            r.done.insert(line.url.clone(), line.status);
            r.missing_lines.push(line);
        }
    }
}

/// Notes every response record of `file`, reading on past damage (which
/// is reported: the pages it held are fetched again).
/// With `index`, the file's CDXJ index is checked and rebuilt if need be.
fn read_warc(file: &Path, is_last: bool, r: &mut Resumed, index: bool) -> Result<(), ResumeError> {
    let len = std::fs::metadata(file)
        .map_err(|source| ResumeError::Io {
            path: file.to_path_buf(),
            source,
        })?
        .len();
    let mut lines = Vec::new();
    if len == 0 {
        // The last file can be empty after a kill right after it was
        // opened; any other was emptied.
        if !is_last {
            r.warnings.push(format!(
                "{}: empty WARC file; the pages the crawl log says it held are fetched again",
                file.display()
            ));
        }
        return if index {
            ensure_index(file, &mut lines, r)
        } else {
            Ok(())
        };
    }
    let filename = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut reader = WarcReader::open(file, MAX_BLOCK)?.resyncing();
    let mut rec = WarcRecord::default();
    loop {
        match reader.read_next(&mut rec) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e @ WarcError::Damaged { .. }) => {
                r.warnings.push(format!(
                    "{e}; the pages of the records lost are fetched again"
                ));
                continue;
            }
            Err(e) => {
                r.warnings.push(format!(
                    "{e}; the pages of the records lost are fetched again"
                ));
                break;
            }
        }
        // A refetch whose page did not change is stored as a `revisit`
        // record: it stands for its response as much as a `response` does.
        if matches!(rec.record_type(), Some("response" | "revisit")) {
            note_response(&rec, r);
        }
        lines.extend(cdxj::line_of(&rec, &filename));
    }
    if index {
        ensure_index(file, &mut lines, r)?;
    }
    Ok(())
}

/// Writes `lines` as the CDXJ index of `file`, unless the index there
/// holds exactly them.
fn ensure_index(file: &Path, lines: &mut [String], r: &mut Resumed) -> Result<(), ResumeError> {
    let path = cdxj::index_path(file);
    lines.sort_unstable();
    let mut want = String::with_capacity(lines.iter().map(|l| l.len() + 1).sum());
    for l in lines.iter() {
        want.push_str(l);
        want.push('\n');
    }
    if std::fs::read(&path).is_ok_and(|have| have == want.as_bytes()) {
        return Ok(());
    }
    cdxj::write_index(&path, lines).map_err(|source| ResumeError::Io { path, source })?;
    r.indexes_rebuilt += 1;
    Ok(())
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

/// `crawl.log.dropped` beside the crawl log at `path`.
pub fn dropped_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(DROPPED_SUFFIX);
    PathBuf::from(name)
}

/// Why a crawl-log line is not kept.
enum Drop {
    /// Not a crawl-log line.
    Garbage(String),
    /// A response that no WARC file holds.
    Lost,
}

/// Reads the crawl log against the WARC files read before: a torn last
/// line is cut; garbage lines and lines claiming a response that is not
/// stored are moved to `crawl.log.dropped` and the log is rewritten
/// without them.
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
    let mut number = 0u64;
    // Byte ranges of the lines kept, and the lines dropped.
    let mut kept: Vec<(u64, u64)> = Vec::new();
    let mut dropped: Vec<(u64, Vec<u8>, Drop)> = Vec::new();
    loop {
        line.clear();
        let n = reader.read_until(b'\n', &mut line).map_err(io)?;
        if n == 0 || line.last() != Some(&b'\n') {
            break;
        }
        number += 1;
        let start = good;
        good += n as u64;
        let parsed = std::str::from_utf8(&line)
            .map_err(|_| "not UTF-8 text".to_string())
            .and_then(parse_line);
        match parsed {
            Err(why) => dropped.push((number, line.clone(), Drop::Garbage(why))),
            Ok(l) if matches!(l.status, Status::Http(_)) && !r.stored.contains(&l.url) => {
                dropped.push((number, line.clone(), Drop::Lost));
                r.lost_records += u64::from(l.via != Via::Robots);
            }
            Ok(l) => {
                kept.push((start, good));
                r.log_lines += 1;
                if l.via != Via::Robots {
                    r.done.insert(l.url, l.status);
                } else {
                    r.logged_robots.insert(l.url);
                }
            }
        }
    }
    if dropped.is_empty() {
        if good < len {
            // A torn last line: the writer was killed in the middle of it.
            file.set_len(good).map_err(io)?;
            file.sync_all().map_err(io)?;
            r.log_cut = len - good;
        }
        return Ok(());
    }
    report_dropped(path, &dropped, r);
    // The dropped lines first, kept as they were, then the log without them.
    let aside = dropped_path(path);
    let mut out = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&aside)
        .map_err(|source| ResumeError::Io {
            path: aside.clone(),
            source,
        })?;
    let mut bytes = Vec::new();
    for (_, text, _) in &dropped {
        bytes.extend_from_slice(text);
    }
    out.write_all(&bytes)
        .and_then(|()| out.sync_all())
        .map_err(|source| ResumeError::Io {
            path: aside.clone(),
            source,
        })?;
    let content = std::fs::read(path).map_err(io)?;
    let mut new = common::atomic::AtomicFile::create(path).map_err(io)?;
    for (start, end) in kept {
        new.write_all(&content[start as usize..end as usize])
            .map_err(io)?;
    }
    new.commit().map_err(io)?;
    r.log_cut = len - good;
    Ok(())
}

/// Warnings for the lines taken out of the crawl log: the first few by line
/// number, then how many.
fn report_dropped(path: &Path, dropped: &[(u64, Vec<u8>, Drop)], r: &mut Resumed) {
    let aside = dropped_path(path);
    let mut named = 0;
    for (number, text, why) in dropped {
        if named == NAMED_LINES {
            break;
        }
        named += 1;
        let excerpt: String = String::from_utf8_lossy(text)
            .trim_end()
            .chars()
            .take(120)
            .collect();
        r.warnings.push(match why {
            Drop::Garbage(reason) => format!(
                "{}:{number}: not a crawl-log line ({reason}): {excerpt:?}; moved to {}",
                path.display(),
                aside.display()
            ),
            Drop::Lost => format!(
                "{}:{number}: the response this line logs is in no WARC file of the run (a \
                 WARC file emptied, cut or moved away?): the URL is fetched again and the \
                 line moved to {}",
                path.display(),
                aside.display()
            ),
        });
    }
    if dropped.len() > named {
        r.warnings.push(format!(
            "{}: {} more lines moved to {} (garbage, or responses in no WARC file)",
            path.display(),
            dropped.len() - named,
            aside.display()
        ));
    }
    r.garbage_lines = dropped
        .iter()
        .filter(|(_, _, why)| matches!(why, Drop::Garbage(_)))
        .count() as u64;
}

fn note_response(rec: &WarcRecord, r: &mut Resumed) {
    let Some(url) = rec.target_uri() else { return };
    r.stored.insert(url.to_string());
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
    // A redirect of robots.txt says nothing about the rules: they are in
    // the record of its target, which may be on another host, or missing
    // if the run was killed before it. Such a host asks for robots.txt
    // again.
    if via == Via::Robots
        && !(300..400).contains(&status)
        && let Ok(u) = url::Url::parse(url)
        && let Some(host) = u.host_str()
    {
        let body = common::body::decoded_payload(&rec.block, crate::robots::MAX_ROBOTS_BYTES + 1);
        let fetched_ms = rec
            .header("WARC-Date")
            .and_then(common::timefmt::parse_iso)
            .map_or(0, common::timefmt::unix_millis);
        r.robots
            .insert(host.to_string(), (status, body, fetched_ms));
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
    r.rebuilt.push(LogLine {
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
        let (status, body, fetched_ms) = &r.robots["b.test"];
        assert_eq!(*status, 200);
        let dated = common::timefmt::parse_iso("2026-01-02T03:04:05Z").unwrap();
        assert_eq!(
            *fetched_ms,
            common::timefmt::unix_millis(dated),
            "from WARC-Date"
        );
        assert_eq!(body, b"User-agent: *\nDisallow: /x\n");
        assert!(r.done.is_empty(), "robots.txt is not a page");
        // Both records get their log line, as robots.txt fetches.
        add_missing_lines(&mut r);
        assert_eq!(r.missing_lines.len(), 2);
        assert!(r.missing_lines.iter().all(|l| l.via == Via::Robots));
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
        let warning = r.warnings.join("\n");
        assert!(
            warning.contains("moved aside") && warning.contains(&name),
            "{warning}"
        );
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
        add_missing_lines(&mut r);
        assert_eq!(r.done["http://a.test/old"], Status::Http(302));
        let line = &r.missing_lines[0];
        assert_eq!((line.via, line.hops), (Via::Link, 2));
        assert_eq!(
            line.note, "redirect http://a.test/new",
            "as a live run writes it"
        );
        // Logged already: nothing to add.
        note_response(&page, &mut r);
        add_missing_lines(&mut r);
        assert_eq!(r.missing_lines.len(), 1);
    }
}
