//! The JSON of a WAT `metadata` record: what one WARC record holds, without
//! its payload, in the envelope Common Crawl's WAT files use (the Internet
//! Archive's "Web Archive Metadata" layout):
//!
//! ```text
//! {"Container": {"Filename", "Compressed", "Offset"},
//!  "Envelope": {"Format": "WARC", "WARC-Header-Length", "Actual-Content-Length",
//!    "Block-Digest", "WARC-Header-Metadata": {every WARC field},
//!    "Payload-Metadata": {"Actual-Content-Type",
//!      "HTTP-Response-Metadata": {"Response-Message": {"Version", "Status", "Reason"},
//!        "Headers": {...}, "Headers-Length", "Entity-Length",
//!        "HTML-Metadata": {"Head": {"Title", "Base", "Metas", "Link", "Scripts"},
//!                          "Links": [{"path": "A@/href", "url", "text"}, ...]}}
//!      | "HTTP-Request-Metadata": {"Request-Message": {"Method", "Path", "Version"}, ...}
//!      | "WARC-Metadata-Metadata": {"Metadata-Records": [{"Name", "Value"}]}
//!      | "WARC-Info-Metadata": {...}}}}
//! ```
//!
//! Numbers are strings, as in Common Crawl's files. A field or header that
//! occurs more than once has its values joined with `, `.

use common::extract::{PageText, TagLink};
use common::warc::WarcRecord;
use serde_json::{Map, Value, json};

/// The envelope of `record` (read from `filename`), with the HTML outline
/// of its page when it is an HTML response that was read.
pub fn envelope(record: &WarcRecord, filename: &str, html: Option<&PageText>) -> Value {
    let mut warc_fields = Map::new();
    let mut header_len = "WARC/1.1\r\n\r\n".len();
    for (name, value) in &record.headers {
        header_len += name.len() + value.len() + 4;
        join_into(&mut warc_fields, name, value);
    }
    let block_len = record
        .header("Content-Length")
        .and_then(|n| n.trim().parse::<u64>().ok())
        .unwrap_or(record.block.len() as u64);
    let content_type = record.header("Content-Type").unwrap_or_default();
    let mut envelope = json!({
        "Format": "WARC",
        "WARC-Header-Length": header_len.to_string(),
        "Actual-Content-Length": block_len.to_string(),
        "WARC-Header-Metadata": warc_fields,
    });
    if let Some(d) = record.header("WARC-Block-Digest") {
        envelope["Block-Digest"] = json!(d);
    }
    if let Some(d) = record.header("WARC-Payload-Digest") {
        envelope["Payload-Digest"] = json!(d);
    }
    envelope["Payload-Metadata"] = payload(record, content_type, block_len, html);
    json!({
        "Container": {
            "Filename": filename,
            "Compressed": filename.ends_with(".gz"),
            "Offset": record.offset.to_string(),
        },
        "Envelope": envelope,
    })
}

/// Adds `name: value` to `map`, after the value already there, if any.
fn join_into(map: &mut Map<String, Value>, name: &str, value: &str) {
    match map.get_mut(name) {
        Some(Value::String(old)) => {
            old.push_str(", ");
            old.push_str(value);
        }
        _ => {
            map.insert(name.to_string(), json!(value));
        }
    }
}

/// What the block is, by record type and content type.
fn payload(
    record: &WarcRecord,
    content_type: &str,
    block_len: u64,
    html: Option<&PageText>,
) -> Value {
    let mut out = json!({ "Actual-Content-Type": content_type });
    let kind = record.record_type().unwrap_or_default();
    let http = content_type.starts_with("application/http");
    match kind {
        "response" | "revisit" if http => {
            out["HTTP-Response-Metadata"] = http_response(&record.block, block_len, html);
        }
        "request" if http => {
            out["HTTP-Request-Metadata"] = http_request(&record.block, block_len);
        }
        "warcinfo" => {
            out["WARC-Info-Metadata"] = Value::Object(field_map(&record.block));
        }
        "metadata" if content_type.starts_with("application/warc-fields") => {
            let records: Vec<Value> = fields(&record.block)
                .map(|(n, v)| json!({ "Name": n, "Value": v }))
                .collect();
            out["WARC-Metadata-Metadata"] = json!({ "Metadata-Records": records });
        }
        _ => {}
    }
    out
}

/// `name: value` lines of a block (WARC fields, an HTTP head after its
/// first line), lossily decoded.
fn fields(block: &[u8]) -> impl Iterator<Item = (String, String)> + '_ {
    block
        .split(|&b| b == b'\n')
        .map(|l| String::from_utf8_lossy(l.strip_suffix(b"\r").unwrap_or(l)).into_owned())
        .take_while(|l| !l.is_empty())
        .filter_map(|l| {
            let (n, v) = l.split_once(':')?;
            Some((n.trim().to_string(), v.trim().to_string()))
        })
}

fn field_map(block: &[u8]) -> Map<String, Value> {
    let mut map = Map::new();
    for (n, v) in fields(block) {
        join_into(&mut map, &n, &v);
    }
    map
}

/// Length of the HTTP head (through its blank line) at the start of
/// `block`, and the head's first line.
fn head_of(block: &[u8]) -> (usize, String) {
    let end = memchr::memmem::find(block, b"\r\n\r\n")
        .map(|i| i + 4)
        .or_else(|| memchr::memmem::find(block, b"\n\n").map(|i| i + 2))
        .unwrap_or(block.len());
    let first = block[..end]
        .split(|&b| b == b'\n')
        .next()
        .unwrap_or_default();
    let first = String::from_utf8_lossy(first.strip_suffix(b"\r").unwrap_or(first));
    (end, first.into_owned())
}

fn http_response(block: &[u8], block_len: u64, html: Option<&PageText>) -> Value {
    let (head_len, first) = head_of(block);
    let mut parts = first.splitn(3, ' ');
    let version = parts.next().unwrap_or_default();
    let status = parts.next().unwrap_or_default();
    let reason = parts.next().unwrap_or_default();
    let after_first = block[..head_len]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(head_len, |i| i + 1);
    let mut out = json!({
        "Response-Message": { "Version": version, "Status": status, "Reason": reason },
        "Headers": Value::Object(field_map(&block[after_first..head_len])),
        "Headers-Length": head_len.to_string(),
        "Entity-Length": block_len.saturating_sub(head_len as u64).to_string(),
        "Entity-Trailing-Slop-Length": "0",
    });
    if let Some(page) = html {
        out["HTML-Metadata"] = html_metadata(page);
    }
    out
}

fn http_request(block: &[u8], block_len: u64) -> Value {
    let (head_len, first) = head_of(block);
    let mut parts = first.splitn(3, ' ');
    let after_first = block[..head_len]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(head_len, |i| i + 1);
    json!({
        "Request-Message": {
            "Method": parts.next().unwrap_or_default(),
            "Path": parts.next().unwrap_or_default(),
            "Version": parts.next().unwrap_or_default(),
        },
        "Headers": Value::Object(field_map(&block[after_first..head_len])),
        "Headers-Length": head_len.to_string(),
        "Entity-Length": block_len.saturating_sub(head_len as u64).to_string(),
    })
}

fn link_json(link: &TagLink) -> Value {
    let mut map = Map::new();
    map.insert("path".into(), json!(link.path));
    map.insert("url".into(), json!(link.url));
    for (name, value) in &link.attrs {
        map.insert((*name).into(), json!(value));
    }
    Value::Object(map)
}

fn html_metadata(page: &PageText) -> Value {
    let mut head = Map::new();
    if let Some(t) = &page.title {
        head.insert("Title".into(), json!(t));
    }
    if let Some(b) = &page.base {
        head.insert("Base".into(), json!(b));
    }
    if !page.metas.is_empty() {
        let metas: Vec<Value> = page
            .metas
            .iter()
            .map(|m| Value::Object(m.iter().map(|(k, v)| (k.clone(), json!(v))).collect()))
            .collect();
        head.insert("Metas".into(), Value::Array(metas));
    }
    if !page.head_links.is_empty() {
        head.insert(
            "Link".into(),
            page.head_links.iter().map(link_json).collect(),
        );
    }
    if !page.head_scripts.is_empty() {
        head.insert(
            "Scripts".into(),
            page.head_scripts.iter().map(link_json).collect(),
        );
    }
    let links: Vec<Value> = page.links.iter().map(link_json).collect();
    json!({ "Head": head, "Links": links })
}
