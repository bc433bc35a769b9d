//! Plain-text sitemaps: one URL per line, UTF-8.

use std::io::{self, BufRead, ErrorKind};

use super::cap::{Capped, gzip_error};
use super::{Entry, Kind, MAX_LOC, Sink};

/// Bytes of a line kept: [`MAX_LOC`] and room for blanks around it; a
/// longer line is invalid, and the rest of it is skipped, not stored.
const LINE_BUF: usize = MAX_LOC + 256;

/// Reads lines from `r`.
/// Blank lines are skipped; lines that are not absolute http(s) URLs, or
/// not UTF-8, are counted as invalid. A last line cut off at `max_bytes`
/// counts as over the limit, not as a (truncated) URL.
pub(super) fn read<R: Capped>(mut r: R, sink: &mut Sink<'_>) {
    sink.summary.kind = Some(Kind::Text);
    let mut line = Vec::with_capacity(LINE_BUF);
    loop {
        let (ended, overlong) = match read_line(&mut r, &mut line) {
            Ok(Some(l)) => l,
            Ok(None) => break,
            Err(e) => {
                sink.summary.error = Some(gzip_error(r.delivered(), &e));
                return;
            }
        };
        let text = line.trim_ascii();
        if !ended && (sink.summary.cut_at_bytes || r.cut()) {
            if overlong || !text.is_empty() {
                sink.summary.over_limit += 1;
            }
            break;
        }
        if overlong {
            sink.summary.invalid += 1;
            continue;
        }
        if text.is_empty() {
            continue;
        }
        match std::str::from_utf8(text) {
            Ok(loc) => sink.entry(
                Kind::Text,
                &Entry {
                    loc,
                    lastmod_ms: None,
                    priority: None,
                },
                false,
            ),
            Err(_) => sink.summary.invalid += 1,
        }
    }
    sink.summary.cut_at_bytes |= r.cut();
}

/// Reads the next line into `line` (emptied first), keeping at most
/// [`LINE_BUF`] bytes of it. None at the end of the data; else whether the
/// line ended with a newline and whether it was longer than kept.
fn read_line(r: &mut impl BufRead, line: &mut Vec<u8>) -> io::Result<Option<(bool, bool)>> {
    line.clear();
    let mut overlong = false;
    let mut any = false;
    loop {
        let buf = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok(any.then_some((false, overlong)));
        }
        any = true;
        let (take, ended) = match memchr::memchr(b'\n', buf) {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        let room = LINE_BUF - line.len();
        if take > room {
            overlong = true;
        }
        line.extend_from_slice(&buf[..take.min(room)]);
        r.consume(take);
        if ended {
            return Ok(Some((true, overlong)));
        }
    }
}
