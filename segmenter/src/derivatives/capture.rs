//! One capture (a `response` or `revisit` record) read for the research
//! outputs: its row of the columnar index, and, for a 2xx HTML page, its
//! text (the WET record) and the outline of its markup (for the WAT
//! record).

use common::body::BodyDecoder;
use common::extract::{PageText, TextReader};
use common::http::{ResponseHead, parse_response_head, split_content_type};
use common::warc::WarcRecord;
use url::Url;

use super::charset::{self, Charset};
use super::simhash::Simhasher;
use super::table::Row;
use super::{language, mime};

/// Where the records come from: the same for every row of a file.
#[derive(Debug, Clone, Default)]
pub struct Origin {
    /// The crawl's name (its directory's name).
    pub crawl: String,
    /// The fetched run (`00003`, `00004-p02`).
    pub segment: String,
    /// The round: the run ID's number.
    pub round: i32,
    /// The shard of a sharded crawl.
    pub shard: Option<i32>,
    /// The WARC file's name.
    pub filename: String,
}

/// What was learned from a page's payload.
#[derive(Debug, Default)]
pub struct Facts {
    pub mime_detected: Option<&'static str>,
    pub charset: Option<Charset>,
    pub languages: String,
    pub simhash: Option<u64>,
    /// The text and outline, for a 2xx HTML page.
    pub page: Option<PageText>,
}

/// Reads captures; one per thread, reusing its buffers.
pub struct CaptureReader {
    decoder: BodyDecoder,
    text: TextReader,
    simhasher: Simhasher,
    /// Payloads are decoded up to this many bytes.
    max_body: usize,
}

impl CaptureReader {
    /// A reader that decodes at most `max_body` bytes of a payload.
    pub fn new(max_body: usize) -> CaptureReader {
        CaptureReader {
            decoder: BodyDecoder::default(),
            text: TextReader::new(),
            simhasher: Simhasher::default(),
            max_body,
        }
    }

    /// What the payload of `record` (a response whose head is `head`, for
    /// the page `url`) shows. A revisit has no payload to read.
    pub fn facts(&mut self, record: &WarcRecord, head: &ResponseHead, url: Option<&Url>) -> Facts {
        let mut facts = Facts::default();
        if record.record_type() != Some("response") {
            return facts;
        }
        let raw = &record.block[head.body_offset.min(record.block.len())..];
        let body = self.decoder.decode_response(head, raw, self.max_body).body;
        let content_type = head.header("Content-Type");
        let (declared, header_charset) = content_type.map_or(("", None), split_content_type);
        let declared = declared.trim().to_ascii_lowercase();
        let html = common::extract::is_html(content_type, body);
        facts.mime_detected = mime::detect(&declared, body, html);
        let textual = facts.mime_detected.is_some_and(|m| {
            m.starts_with("text/")
                || m.contains("xml")
                || m.contains("json")
                || m.contains("javascript")
        });
        if !textual && !html {
            return facts;
        }
        let tld = url
            .and_then(Url::host_str)
            .and_then(|h| h.rsplit('.').next())
            .filter(|l| !l.is_empty());
        let decided = charset::reconcile(header_charset, body, tld);
        facts.charset = Some(decided);
        if html && (200..300).contains(&head.status) {
            let page = self.text.read(&body[decided.bom_len..], decided.encoding);
            language::languages(&page.text, &mut facts.languages);
            facts.simhash = self.simhasher.hash(&page.text);
            facts.page = Some(page);
        }
        facts
    }
}

/// The `subset` of a capture, as Common Crawl's index splits them:
/// `robotstxt` (the crawler's robots.txt fetches), `warc` (2xx responses
/// and every revisit, which stands for a page stored before), and
/// `crawldiagnostics` (redirects, errors and other statuses).
fn subset(record: &WarcRecord, status: u16) -> &'static str {
    let via = record.header(common::warc::VIA_FIELD).map(str::trim);
    if via == Some("robots") {
        "robotstxt"
    } else if (200..300).contains(&status) || record.record_type() == Some("revisit") {
        "warc"
    } else {
        "crawldiagnostics"
    }
}

/// The parts of a row that are computed rather than borrowed: kept in one
/// place so that the row can borrow them.
#[derive(Debug, Default)]
pub struct Owned {
    surt: String,
    host_reversed: String,
    redirect: Option<String>,
    digest: Option<String>,
    mime_type: Option<String>,
}

/// The row of a capture. `None` when the record has no usable target URI
/// or HTTP head (it is counted by the caller).
pub fn row<'a>(
    record: &'a WarcRecord,
    head: &'a ResponseHead,
    url: &'a Url,
    facts: &'a Facts,
    origin: &'a Origin,
    owned: &'a mut Owned,
) -> Row<'a> {
    let target = record.target_uri().unwrap_or_default();
    owned.surt = common::warc::cdxj::surt(target);
    let host = url.host_str().unwrap_or_default();
    let is_name = matches!(url.host(), Some(url::Host::Domain(_)));
    let host_labels: Vec<&str> = if is_name {
        host.trim_end_matches('.').rsplit('.').collect()
    } else {
        Vec::new()
    };
    owned.host_reversed = host_labels.join(".");
    owned.redirect = head
        .header("Location")
        .and_then(|l| url.join(l.trim()).ok())
        .map(String::from);
    owned.digest = record.header("WARC-Payload-Digest").map(|d| {
        d.trim()
            .strip_prefix("sha1:")
            .unwrap_or(d.trim())
            .to_string()
    });
    owned.mime_type = head
        .header("Content-Type")
        .map(|ct| split_content_type(ct).0.trim().to_ascii_lowercase())
        .filter(|m| !m.is_empty());
    let registered = is_name.then(|| common::urlnorm::registrable_domain(host));
    let suffix = registered.and_then(|d| d.split_once('.').map(|(_, s)| s));
    let fetch_time_ms = record
        .header("WARC-Date")
        .and_then(|d| common::timefmt::parse_iso(d.trim()))
        .map_or(0, common::timefmt::unix_millis);
    let status = head.status;
    Row {
        url_surtkey: &owned.surt,
        url: target,
        host,
        host_labels,
        registry_suffix: suffix,
        registered_domain: registered,
        host_reversed: is_name.then_some(owned.host_reversed.as_str()),
        protocol: url.scheme(),
        port: url.port(),
        path: url.path(),
        query: url.query(),
        fetch_time_ms,
        status: i16::try_from(status).unwrap_or(i16::MAX),
        redirect: owned
            .redirect
            .as_deref()
            .filter(|_| (300..400).contains(&status)),
        digest: owned.digest.as_deref(),
        mime_type: owned.mime_type.as_deref(),
        mime_detected: facts.mime_detected,
        charset: facts.charset.map(|c| c.encoding.name()),
        languages: (!facts.languages.is_empty()).then_some(facts.languages.as_str()),
        truncated: record.header("WARC-Truncated").map(str::trim),
        record_id: record.header("WARC-Record-ID").unwrap_or_default(),
        filename: &origin.filename,
        offset: record.offset,
        length: record.length,
        segment: &origin.segment,
        crawl: &origin.crawl,
        subset: subset(record, status),
        record_type: record.record_type().unwrap_or_default(),
        charset_source: facts.charset.map(|c| c.source.as_str()),
        simhash: facts.simhash,
        text_length: facts.page.as_ref().map(|p| p.text.chars().count() as u64),
        round: origin.round,
        hops: record
            .header(common::warc::HOPS_FIELD)
            .and_then(|h| h.trim().parse().ok()),
        via: record.header(common::warc::VIA_FIELD).map(str::trim),
        shard: origin.shard,
    }
}

/// The HTTP head of a capture, if its block has one.
pub fn http_head(record: &WarcRecord) -> Option<ResponseHead> {
    parse_response_head(&record.block)
}
