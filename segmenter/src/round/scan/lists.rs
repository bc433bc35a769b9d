//! The lists a round reads beside the WARC files: fetched runs' leftover
//! lists (URLs never attempted, and retries) and seeds files (cut into
//! pieces read in parallel; problems reported in file order with their line
//! numbers once every piece is read).

use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::Path;

use common::crawllog::{self, ErrorCode};
use common::runlog::RunLog;
use common::segment::{SegmentReader, SegmentRecord, Via};
use common::urlnorm::{self, host_of, registrable_domain};
use url::Url;

use super::{Job, MIN_SEEDS_PIECE, PUBLISH_LINES, Worker};
use crate::error::Error;
use crate::history::{Kind, Observation};
use crate::round::candidates::{LastFetch, Meta};

/// Cuts a seeds file into jobs of similar size.
pub fn seeds_jobs(path: &Path, threads: usize) -> Result<Vec<Job>, Error> {
    let len = std::fs::metadata(path).map_err(Error::io(path))?.len();
    let pieces = (len / MIN_SEEDS_PIECE).clamp(1, 4 * threads.max(1) as u64);
    let step = len.div_ceil(pieces).max(1);
    Ok((0..pieces)
        .map(|i| Job::Seeds {
            path: path.to_path_buf(),
            piece: i as usize,
            start: (i * step).min(len),
            end: ((i + 1) * step).min(len),
        })
        .collect())
}

/// A problem with one seed line, reported once all pieces are read (so that
/// line numbers are known).
#[derive(Debug, Clone)]
pub(super) struct SeedNote {
    piece: usize,
    line: u64,
    message: String,
}

/// Logs seed problems in file order with their line numbers.
pub(super) fn report_seed_notes(
    log: &RunLog,
    jobs: &[Job],
    mut notes: Vec<SeedNote>,
    mut piece_lines: Vec<(usize, u64)>,
) {
    if notes.is_empty() {
        return;
    }
    let Some(path) = jobs.iter().find_map(|j| match j {
        Job::Seeds { path, .. } => Some(path),
        _ => None,
    }) else {
        return;
    };
    piece_lines.sort();
    let mut first_line = vec![0u64; piece_lines.len() + 1];
    for (piece, lines) in &piece_lines {
        if let Some(slot) = first_line.get_mut(piece + 1) {
            *slot = *lines;
        }
    }
    for i in 1..first_line.len() {
        first_line[i] += first_line[i - 1];
    }
    notes.sort_by_key(|n| (n.piece, n.line));
    for n in notes {
        let line = first_line.get(n.piece).copied().unwrap_or(0) + n.line;
        log.warn(format_args!("{}:{line}: {}", path.display(), n.message));
    }
}

impl Worker<'_> {
    /// A file of the segment format: a leftover list ([`Worker::reentry`]),
    /// or with `backlog` the backlog ([`Worker::respelled_backlog`]), whose
    /// bad lines and read errors are the backlog stream's to report (it
    /// reads every line again).
    pub(super) fn segment_file(&mut self, path: &Path, backlog: bool) -> Result<(), Error> {
        let mut reader = match SegmentReader::open(path) {
            Ok(r) => r,
            Err(_) if backlog => return Ok(()),
            Err(e) => {
                self.counts.unreadable_files += 1;
                self.cfg.log.warn(format_args!("{e}; file skipped"));
                return Ok(());
            }
        };
        loop {
            let mut rec = std::mem::take(&mut self.segment_record);
            let step = reader.read_next(&mut rec);
            if reader.line() % PUBLISH_LINES == 0 {
                self.publish();
            }
            let result = match step {
                Ok(true) if backlog => self.respelled_backlog(&rec),
                Ok(true) => self.reentry(&rec),
                Ok(false) => {
                    self.segment_record = rec;
                    return Ok(());
                }
                Err(e) if backlog && !e.is_fatal() => Ok(()),
                Err(_) if backlog => {
                    self.segment_record = rec;
                    return Ok(());
                }
                Err(e) if !e.is_fatal() => {
                    self.counts.bad_lines += 1;
                    self.cfg.log.warn(format_args!("{e}; line skipped"));
                    Ok(())
                }
                Err(e) => {
                    self.counts.unreadable_files += 1;
                    self.cfg
                        .log
                        .warn(format_args!("{e}; the rest of the file is skipped"));
                    self.segment_record = rec;
                    return Ok(());
                }
            };
            self.segment_record = rec;
            result?;
        }
    }

    /// The URLs of a crawl log that robots.txt denied, as observations for
    /// the history (which retires them). Only the lines whose status is
    /// `robots` are parsed; a line that does not parse is counted and skipped.
    pub(super) fn robots_denied(&mut self, path: &Path) -> Result<(), Error> {
        if self.observed.is_none() {
            return Ok(());
        }
        let file = match File::open(path) {
            Ok(f) => f,
            Err(e) => {
                self.counts.unreadable_files += 1;
                self.cfg
                    .log
                    .warn(format_args!("{}: {e}; file skipped", path.display()));
                return Ok(());
            }
        };
        let mut input = BufReader::new(file);
        let mut line = Vec::new();
        let mut number = 0u64;
        loop {
            line.clear();
            match input.read_until(b'\n', &mut line) {
                Ok(0) => return Ok(()),
                Ok(_) => number += 1,
                Err(e) => {
                    self.counts.unreadable_files += 1;
                    self.cfg.log.warn(format_args!(
                        "{}: line {}: {e}; the rest of the file is skipped",
                        path.display(),
                        number + 1
                    ));
                    return Ok(());
                }
            }
            let robots = ErrorCode::Robots.as_str().as_bytes();
            let mut fields = line.split(|&b| b == b'\t');
            if fields.nth(1) != Some(robots) {
                continue;
            }
            let text = String::from_utf8_lossy(&line);
            let Ok(entry) = crawllog::parse_line(text.trim_end_matches(['\n', '\r'])) else {
                self.counts.bad_lines += 1;
                self.cfg.log.warn(format_args!(
                    "{}: line {number}: not a crawl-log line; skipped",
                    path.display()
                ));
                continue;
            };
            let Ok(url) = Url::parse(&entry.url)
                .map_err(|_| ())
                .and_then(|u| urlnorm::canonicalize_url(u).map_err(|_| ()))
            else {
                continue;
            };
            let obs = Observation {
                fetched_ms: common::timefmt::unix_millis(entry.time),
                hops: entry.hops,
                robots: true,
                ..Observation::default()
            };
            self.push_observation(&url, &obs)?;
        }
    }

    fn reentry(&mut self, rec: &SegmentRecord) -> Result<(), Error> {
        let via = if rec.via == Via::Retry {
            self.counts.retries += 1;
            if rec.tries >= self.cfg.options.max_tries {
                // Not dropped: the history keeps it as `failed`, due again
                // at `recrawl_failed` (a host that comes back is crawled
                // again).
                self.counts.retries_exhausted += 1;
                if let Ok(url) = urlnorm::canonicalize(&rec.url) {
                    let obs = Observation {
                        fetched_ms: common::timefmt::unix_millis(std::time::SystemTime::now()),
                        hops: rec.hops,
                        kind: Kind::Exhausted,
                        ..Observation::default()
                    };
                    self.push_observation(&url, &obs)?;
                }
                return Ok(());
            }
            Via::Retry
        } else {
            self.counts.leftover += 1;
            Via::Leftover
        };
        let Some(url) = self.admitted(rec) else {
            return Ok(());
        };
        let meta = Meta {
            hops: rec.hops,
            inlinks: rec.inlinks,
            tries: rec.tries,
            via,
            exempt: true,
            fetched: false,
            rescued: false,
            // The fetcher's hold on its host, kept for the next segment
            // while it lasts.
            not_before_s: Meta::seconds_of(
                rec.not_before
                    .filter(|&t| t > common::timefmt::unix_millis(std::time::SystemTime::now())),
            ),
        };
        self.push_line(&url, meta, rec)
    }

    /// The URL of a list's line `rec`, canonical, if it is valid and the
    /// filters admit it (what they refuse is counted).
    fn admitted(&mut self, rec: &SegmentRecord) -> Option<Url> {
        let url = match urlnorm::canonicalize(&rec.url) {
            Ok(u) => u,
            Err(e) => {
                self.admission.count_url_error(&e, &mut self.counts);
                return None;
            }
        };
        self.admission
            .admit(&url, rec.hops, &mut self.counts)
            .then_some(url)
    }

    /// Adds the URL `url` of a list's line `rec` to the sort: a refetch
    /// keeps its validators and last fetch for the next segment (a
    /// conditional request, a revisit record).
    fn push_line(&mut self, url: &Url, meta: Meta, rec: &SegmentRecord) -> Result<(), Error> {
        let mut carried = std::mem::take(&mut self.carried);
        LastFetch::encode(rec, &mut carried);
        let pushed = self.push_carrying(url, meta, &carried);
        self.carried = carried;
        pushed.map(|_| ())
    }

    /// A line of the backlog: when its host's rules respell its URL (a
    /// rule added or changed since it went to wait), the URL goes into the
    /// sort under its new spelling, where it meets the other spellings of
    /// the page (the backlog's, the leftover's, a refetch's, the links')
    /// and is checked against the seen-set like a new URL (a spelling
    /// fetched already is not fetched again). The backlog's stream skips
    /// the same lines, so that each URL waits once.
    fn respelled_backlog(&mut self, rec: &SegmentRecord) -> Result<(), Error> {
        if self.host_rules().respelled(&rec.url).is_none() {
            return Ok(());
        }
        self.counts.respelled += 1;
        let Some(url) = self.admitted(rec) else {
            return Ok(());
        };
        let meta = Meta {
            exempt: false,
            ..Meta::of_backlog(rec)
        };
        self.push_line(&url, meta, rec)
    }

    pub(super) fn seeds(
        &mut self,
        path: &Path,
        piece: usize,
        start: u64,
        end: u64,
    ) -> Result<(), Error> {
        let file = match File::open(path) {
            Ok(f) => f,
            Err(e) => {
                // The caller checked the file exists; losing it now is fatal.
                return Err(Error::Io {
                    path: path.to_path_buf(),
                    source: e,
                });
            }
        };
        let mut input = BufReader::with_capacity(1 << 18, file);
        let mut pos = start;
        let io_err = |e| Error::Io {
            path: path.to_path_buf(),
            source: e,
        };
        if start > 0 {
            // This piece owns the lines that start at or after `start`.
            input.seek(SeekFrom::Start(start - 1)).map_err(io_err)?;
            pos = start - 1;
            self.line.clear();
            pos += input.read_until(b'\n', &mut self.line).map_err(io_err)? as u64;
        }
        let mut line_no = 0u64;
        while pos < end {
            self.line.clear();
            let n = input.read_until(b'\n', &mut self.line).map_err(io_err)?;
            if n == 0 {
                break;
            }
            pos += n as u64;
            line_no += 1;
            if line_no.is_multiple_of(PUBLISH_LINES) {
                self.publish();
            }
            let line = std::mem::take(&mut self.line);
            let result = self.seed_line(&line, piece, line_no);
            self.line = line;
            result?;
        }
        self.piece_lines.push((piece, line_no));
        Ok(())
    }

    fn seed_line(&mut self, raw: &[u8], piece: usize, line: u64) -> Result<(), Error> {
        let Ok(text) = std::str::from_utf8(raw) else {
            self.counts.bad_seed_lines += 1;
            self.note(piece, line, "not UTF-8 text; skipped".into());
            return Ok(());
        };
        let text = strip_comment(text);
        if text.is_empty() {
            return Ok(());
        }
        self.counts.seeds += 1;
        let url = match urlnorm::canonicalize(text) {
            Ok(u) => u,
            Err(e) => {
                self.admission.count_url_error(&e, &mut self.counts);
                self.counts.bad_seed_lines += 1;
                self.note(piece, line, format!("{e}; skipped"));
                return Ok(());
            }
        };
        // The domains of seeds that reach the sort are read off the merged
        // stream (where they come sorted, so for free); the others are
        // collected here.
        match self.cfg.filter.check(&url, 0) {
            Ok(()) => {
                let meta = Meta {
                    hops: 0,
                    inlinks: 0,
                    tries: 0,
                    via: Via::Seed,
                    exempt: false,
                    fetched: false,
                    rescued: false,
                    not_before_s: 0,
                };
                if !self.push(&url, meta)? {
                    self.seed_domain(&url);
                }
                Ok(())
            }
            Err(reason) => {
                self.seed_domain(&url);
                self.counts.reject(reason);
                self.note(
                    piece,
                    line,
                    format!(
                        "{}: refused by the {} filter",
                        common::human::clipped(url.as_str()),
                        reason.name()
                    ),
                );
                Ok(())
            }
        }
    }

    fn seed_domain(&mut self, url: &Url) {
        let domain = registrable_domain(host_of(url));
        if !self.seed_domains.contains(domain) {
            self.seed_domains.insert(domain.to_string());
        }
    }

    fn note(&mut self, piece: usize, line: u64, message: String) {
        self.seed_notes.push(SeedNote {
            piece,
            line,
            message,
        });
    }
}

/// A seeds line without its comment: a line whose first non-blank
/// character is `#` is all comment; otherwise ` #` (after a blank) starts
/// one. (A `#` inside a URL is a fragment and has no blank before it.)
pub fn strip_comment(line: &str) -> &str {
    let line = line.trim();
    if line.starts_with('#') {
        return "";
    }
    if memchr::memchr(b'#', line.as_bytes()).is_none() {
        return line;
    }
    let cut = line
        .char_indices()
        .find(|&(i, c)| c == '#' && line[..i].ends_with(char::is_whitespace))
        .map_or(line.len(), |(i, _)| i);
    line[..cut].trim_end()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_in_seed_lines() {
        assert_eq!(strip_comment("  # a comment"), "");
        assert_eq!(strip_comment("http://a.test/ # why"), "http://a.test/");
        assert_eq!(strip_comment("http://a.test/#frag"), "http://a.test/#frag");
        assert_eq!(strip_comment("\thttp://a.test/x  "), "http://a.test/x");
    }
}
