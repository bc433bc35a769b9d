//! Benchmark of the visible-text reader (the text of WET records) on the
//! HTML pages of WARC files, one thread; writes each page's text for a
//! comparison with another extractor.
//!
//! ```text
//! cargo run --release -p segmenter --example bench_text -- OUT.jsonl FILE.warc.gz...
//! ```
//!
//! The 2xx HTML response records are read into memory first (payloads
//! decoded from their content coding); then the reader runs over them, and
//! only that is timed (CPU time of this thread). Prints the pages, the
//! bytes of HTML, the seconds and MB/s; OUT.jsonl gets one line per page:
//! `{"url": ..., "title": ..., "text": ...}`.

use std::io::{BufWriter, Write};
use std::process::ExitCode;

use common::body::BodyDecoder;
use common::extract::TextReader;
use common::warc::{WarcReader, WarcRecord};
use encoding_rs::{Encoding, UTF_8};

struct Page {
    url: String,
    body: Vec<u8>,
    encoding: &'static Encoding,
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench_text: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        return Err("usage: bench_text OUT.jsonl FILE.warc.gz...".into());
    }
    let pages = read_pages(&args[1..])?;
    let bytes: usize = pages.iter().map(|p| p.body.len()).sum();
    let mut reader = TextReader::new();
    let mut texts = Vec::with_capacity(pages.len());
    let started = cpu_seconds();
    for p in &pages {
        let start = Encoding::for_bom(&p.body).map_or(0, |(_, n)| n);
        texts.push(reader.read(&p.body[start..], p.encoding));
    }
    let seconds = cpu_seconds() - started;
    println!(
        "pages {} html_bytes {bytes} seconds {seconds:.3} mb_per_s {:.1}",
        pages.len(),
        bytes as f64 / 1e6 / seconds
    );
    let out = std::fs::File::create(&args[0]).map_err(|e| format!("{}: {e}", args[0]))?;
    let mut out = BufWriter::new(out);
    for (p, t) in pages.iter().zip(&texts) {
        let line = serde_json::json!({"url": p.url, "title": t.title, "text": t.text});
        writeln!(out, "{line}").map_err(|e| e.to_string())?;
    }
    out.flush().map_err(|e| e.to_string())
}

/// The 2xx HTML pages of the files, payloads decoded.
fn read_pages(files: &[String]) -> Result<Vec<Page>, String> {
    let mut pages = Vec::new();
    let mut decoder = BodyDecoder::default();
    let mut rec = WarcRecord::default();
    for f in files {
        let mut r = WarcReader::open(f, 64 << 20).map_err(|e| e.to_string())?;
        while r.read_next(&mut rec).map_err(|e| e.to_string())? {
            if rec.record_type() != Some("response") {
                continue;
            }
            let Some(head) = common::http::parse_response_head(&rec.block) else {
                continue;
            };
            let body = decoder
                .decode_response(&head, &rec.block[head.body_offset..], 64 << 20)
                .body;
            let ct = head.header("Content-Type");
            if !(200..300).contains(&head.status) || !common::extract::is_html(ct, body) {
                continue;
            }
            let declared = ct
                .and_then(|c| common::http::split_content_type(c).1)
                .and_then(|l| Encoding::for_label(l.as_bytes()));
            let encoding = Encoding::for_bom(body)
                .map(|(e, _)| e)
                .or(declared)
                .or_else(|| common::extract::meta_charset(body))
                .unwrap_or(UTF_8);
            pages.push(Page {
                url: rec.target_uri().unwrap_or_default().to_string(),
                body: body.to_vec(),
                encoding,
            });
        }
    }
    Ok(pages)
}

/// CPU seconds of this thread so far.
fn cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}
