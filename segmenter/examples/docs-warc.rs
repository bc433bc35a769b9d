//! Builds benchmark input for the segmenter: every `*.html` file under a
//! directory stored as a WARC response record (with its request record),
//! as if fetched from `BASE_URL/RELATIVE_PATH`, into a fetched run with
//! `DONE`.
//!
//! ```text
//! cargo run --release -p segmenter --example docs-warc -- HTML_DIR CRAWL/fetched/00001 [BASE_URL] [MAX_FILE_SIZE]
//! ```
//! `scripts/bench-segment.sh` runs it on the Rust documentation.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use common::warc::{Exchange, WarcWriter, WarcWriterConfig};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: docs-warc HTML_DIR OUT_DIR [BASE_URL] [MAX_FILE_SIZE]");
        std::process::exit(2);
    }
    let root = PathBuf::from(&args[0]);
    let out = PathBuf::from(&args[1]);
    let base = args
        .get(2)
        .cloned()
        .unwrap_or_else(|| "https://doc.rust-lang.org/".into());
    let max_file_size = args
        .get(3)
        .map(|s| common::human::parse_size(s).expect("a size"))
        .unwrap_or(128_000_000);

    let mut files = Vec::new();
    walk(&root, &mut files);
    files.sort();
    std::fs::create_dir_all(&out).expect("output directory");
    let mut w = WarcWriter::new(WarcWriterConfig {
        dir: out.clone(),
        prefix: "docs".into(),
        max_file_size,
        first_serial: 0,
        hostname: "bench".into(),
        info: vec![("software".into(), "segmenter docs-warc example".into())],
    })
    .expect("WARC writer");
    let mut html_bytes = 0u64;
    let extra = [
        ("X-Crawl-Hops", "1".to_string()),
        ("X-Crawl-Via", "link".to_string()),
    ];
    for path in &files {
        let body = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("docs-warc: {}: {e}", path.display());
                continue;
            }
        };
        let rel = path.strip_prefix(&root).expect("under root");
        let rel = rel.to_string_lossy().replace('\\', "/");
        let url = format!("{base}{rel}");
        let request = format!("GET /{rel} HTTP/1.1\r\nHost: doc.rust-lang.org\r\n\r\n");
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        w.write_exchange(&Exchange {
            target_uri: &url,
            date: SystemTime::now(),
            ip: None,
            request_head: request.as_bytes(),
            response_head: head.as_bytes(),
            payload: &body,
            truncated: None,
            extra_fields: &extra,
            protocols: &["http/1.1"],
            cipher_suite: None,
            metadata: None,
        })
        .expect("write record");
        html_bytes += body.len() as u64;
    }
    let written = w.finish().expect("finish WARC");
    std::fs::write(out.join("DONE"), b"").expect("DONE");
    println!(
        "pages {} html_bytes {} warc_files {}",
        files.len(),
        html_bytes,
        written.len()
    );
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in rd.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(t) if t.is_dir() => walk(&path, out),
            Ok(t) if t.is_file() && path.extension().is_some_and(|e| e == "html") => out.push(path),
            _ => {}
        }
    }
}
