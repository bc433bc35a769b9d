//! Plain-text sitemaps: one URL per line, UTF-8.

use std::io::ErrorKind;

use super::input::{Capped, gzip_error};
use super::{Entry, Kind, Sink};

/// Reads lines from `r`.
/// Blank lines are skipped; lines that are not absolute http(s) URLs, or
/// not UTF-8, are counted as invalid. A last line cut off at `max_bytes`
/// counts as over the limit, not as a (truncated) URL.
pub(super) fn read<R: Capped>(mut r: R, sink: &mut Sink<'_>) {
    sink.summary.kind = Some(Kind::Text);
    let mut line = Vec::with_capacity(256);
    loop {
        line.clear();
        match r.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => {
                sink.summary.error = Some(gzip_error(r.delivered(), &e));
                return;
            }
        };
        if line.last() != Some(&b'\n') && (sink.summary.cut_at_bytes || r.cut()) {
            if !line.trim_ascii().is_empty() {
                sink.summary.over_limit += 1;
            }
            break;
        }
        let text = line.trim_ascii();
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
