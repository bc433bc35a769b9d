//! Which WARC files of a fetched run are read, and which of their records
//! are pages: the fetcher's `response` records, and those of other tools
//! (`resource` records of pages, as wget and warcio write them).

use std::path::{Path, PathBuf};

use common::crawldir::{CRAWL_LOG_FILE, DONE_FILE, LEFTOVER_NAME, STATS_FILE};
use common::http::{ResponseHead, parse_response_head};
use common::runlog::RunLog;
use common::store::MANIFEST_FILE;
use common::warc::{RevisitProfile, WarcRecord};

use crate::error::Error;
use crate::history::{Kind, Observation, clean_value};

/// True if a file of this name is read as WARC.
fn is_warc_name(name: &str) -> bool {
    name.ends_with(".warc.gz") || name.ends_with(".warc")
}

/// The WARC files (`*.warc.gz`, `*.warc`) of a fetched run's directory,
/// by name, with those its manifest records as uploaded to the WARC store
/// (open them with `common::store::readable`). Any other file, but for
/// those the fetcher writes, is reported as skipped.
pub fn fetched_warcs(dir: &Path, log: &RunLog) -> Result<Vec<PathBuf>, Error> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(Error::io(dir))? {
        let entry = entry.map_err(Error::io(dir))?;
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let known = name.starts_with('.')
            || name.starts_with(LEFTOVER_NAME)
            || name.ends_with(common::warc::cdxj::SUFFIX)
            || crate::derivatives::is_output_name(&name)
            || [DONE_FILE, CRAWL_LOG_FILE, STATS_FILE, MANIFEST_FILE].contains(&name.as_ref());
        if is_warc_name(&name) && !name.starts_with('.') {
            files.push(path);
        } else if !known {
            log.warn(format_args!(
                "{}: skipped: not a WARC file (only *.warc.gz and *.warc are read)",
                path.display()
            ));
        }
    }
    // And those uploaded to the WARC store, read from there.
    common::store::run_warcs(dir, files).map_err(Error::io(dir))
}

/// True for the records read as fetched pages: `response` records,
/// `revisit` records (a refetch that found the page unchanged: read for the
/// history, no links), and `resource` records of an `http(s)` URL.
pub fn is_page(rec: &WarcRecord) -> bool {
    match rec.record_type() {
        Some("response") => true,
        Some("resource" | "revisit") => rec
            .target_uri()
            .is_some_and(|u| u.starts_with("http://") || u.starts_with("https://")),
        _ => false,
    }
}

/// The HTTP head of a page record: parsed from a `response` block; for a
/// `resource` record (the payload alone), a `200` with the record's
/// `Content-Type`.
pub fn http_head(rec: &WarcRecord) -> Option<ResponseHead> {
    if rec.record_type() != Some("resource") {
        return parse_response_head(&rec.block);
    }
    Some(ResponseHead {
        status: 200,
        headers: rec
            .header("Content-Type")
            .map(|t| vec![("Content-Type".to_string(), t.to_string())])
            .unwrap_or_default(),
        body_offset: 0,
    })
}

/// A `WARC-Date` (or `WARC-Refers-To-Date`) as a time. It may carry more
/// (or fewer) digits of a second than the milliseconds `parse_iso` reads:
/// whole seconds are enough then.
fn warc_date(date: &str) -> Option<std::time::SystemTime> {
    let date = date.trim();
    common::timefmt::parse_iso(date).or_else(|| {
        let secs = date.get(..19)?;
        common::timefmt::parse_iso(&format!("{secs}Z"))
    })
}

/// What a page record says about its fetch, for the history: `WARC-Date`,
/// status, payload digest, validators, and the record holding the payload
/// (its own `WARC-Record-ID` and date, or for a revisit the ones it refers
/// to). `None` without a readable date.
pub fn observation(rec: &WarcRecord, head: &ResponseHead, hops: u32) -> Option<Observation> {
    let time = warc_date(rec.header("WARC-Date")?)?;
    let kind = match rec.record_type() {
        Some("revisit") => match rec.header("WARC-Profile").and_then(RevisitProfile::of_uri) {
            Some(RevisitProfile::ServerNotModified) => Kind::NotModified,
            Some(RevisitProfile::IdenticalPayloadDigest) => Kind::Identical,
            None => return None,
        },
        _ => Kind::Full,
    };
    let fetched_ms = common::timefmt::unix_millis(time);
    let (record_id, record_ms) = match kind {
        Kind::Full => (rec.header("WARC-Record-ID"), Some(fetched_ms)),
        // A revisit that stands for a capture of another URL (a
        // deduplicating crawler's) is no reference for this URL's own.
        _ if rec
            .header("WARC-Refers-To-Target-URI")
            .is_some_and(|u| Some(u.trim()) != rec.target_uri().map(str::trim)) =>
        {
            (None, None)
        }
        _ => (
            rec.header("WARC-Refers-To"),
            rec.header("WARC-Refers-To-Date")
                .and_then(warc_date)
                .map(common::timefmt::unix_millis),
        ),
    };
    let record_id = clean_value(record_id.unwrap_or(""));
    Some(Observation {
        fetched_ms,
        hops,
        status: head.status,
        robots: false,
        kind,
        digest: clean_value(rec.header("WARC-Payload-Digest").unwrap_or("")).to_string(),
        etag: clean_value(head.header("ETag").unwrap_or("")).to_string(),
        last_modified: clean_value(head.header("Last-Modified").unwrap_or("")).to_string(),
        // (A record ID without its date, or a date without the ID, is no
        // reference a revisit can make.)
        record_id: match record_ms {
            Some(_) => record_id.to_string(),
            None => String::new(),
        },
        record_ms: record_ms.filter(|_| !record_id.is_empty()),
        // Set by the scan, which reads the page's metadata and markup.
        canonical: String::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(kind: &str, fields: &[(&str, &str)]) -> WarcRecord {
        let mut headers = vec![
            ("WARC-Type".to_string(), kind.to_string()),
            (
                "WARC-Record-ID".to_string(),
                "<urn:uuid:00000000-0000-4000-8000-000000000002>".to_string(),
            ),
            (
                "WARC-Date".to_string(),
                "2026-11-25T10:00:00.500Z".to_string(),
            ),
            ("WARC-Target-URI".to_string(), "http://a.test/".to_string()),
        ];
        headers.extend(fields.iter().map(|(n, v)| (n.to_string(), v.to_string())));
        WarcRecord {
            headers,
            block: b"HTTP/1.1 200 OK\r\nETag: \"e\"\r\n\r\nbody".to_vec(),
            ..WarcRecord::default()
        }
    }

    fn observed(rec: &WarcRecord) -> Observation {
        observation(rec, &http_head(rec).unwrap(), 1).unwrap()
    }

    #[test]
    fn the_record_holding_the_payload_is_the_response_or_the_one_a_revisit_names() {
        let first = "<urn:uuid:00000000-0000-4000-8000-000000000001>";
        let response = observed(&record("response", &[]));
        assert_eq!(response.kind, Kind::Full);
        assert_eq!(
            response.record_id,
            "<urn:uuid:00000000-0000-4000-8000-000000000002>"
        );
        assert_eq!(response.record_ms, Some(response.fetched_ms));
        let identical = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest";
        let revisit = |more: &[(&str, &str)]| {
            let mut fields = vec![("WARC-Profile", identical)];
            fields.extend_from_slice(more);
            observed(&record("revisit", &fields))
        };
        let named = revisit(&[
            ("WARC-Refers-To", first),
            ("WARC-Refers-To-Target-URI", "http://a.test/"),
            ("WARC-Refers-To-Date", "2026-11-24T10:00:00.250Z"),
        ]);
        assert_eq!(named.kind, Kind::Identical);
        assert_eq!(named.record_id, first, "not the revisit's own ID");
        assert_eq!(named.record_ms, Some(1_795_514_400_250));
        // Without a date, or for a capture of another URL: no reference.
        for more in [
            &[("WARC-Refers-To", first)][..],
            &[
                ("WARC-Refers-To", first),
                ("WARC-Refers-To-Target-URI", "http://b.test/"),
                ("WARC-Refers-To-Date", "2026-11-24T10:00:00.250Z"),
            ][..],
        ] {
            let r = revisit(more);
            assert_eq!((r.record_id.as_str(), r.record_ms), ("", None), "{more:?}");
        }
    }
}
