//! Benchmark of link extraction on real HTML: the Rust documentation
//! installed with the toolchain (`$(rustc --print sysroot)/share/doc/rust/html`),
//! or any directory given as the first argument.
//!
//! ```text
//! cargo run --release -p segmenter --example bench_extract [DIR] [--threads N]
//! ```
//!
//! All `.html` files are read into memory first; then extraction runs over
//! them single-threaded and on a rayon pool of N threads (default 2), and,
//! as a reference, a bare lol_html pass that only reads `a[href]`. Each line
//! gives MB/s of HTML and links/s. Pages get URLs under
//! `https://doc.rust-lang.org/stable/` so that their relative links resolve
//! as on the web.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use common::extract::{ExtractOptions, Extractor, Page, PageLinks, Skipped};
use rayon::prelude::*;
use url::Url;

struct Doc {
    url: Url,
    body: Vec<u8>,
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench_extract: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let (dir, threads) = args()?;
    let docs = read_docs(&dir)?;
    let bytes: usize = docs.iter().map(|d| d.body.len()).sum();
    let options = ExtractOptions {
        max_links: 10_000,
        ..ExtractOptions::default()
    };
    one_thread(&docs, bytes, &options);
    in_a_pool(&docs, bytes, &options, threads)?;
    bare(&docs, bytes);
    Ok(())
}

/// The input directory (default: the Rust documentation) and `--threads`.
fn args() -> Result<(PathBuf, usize), String> {
    let mut dir = None;
    let mut threads = 2;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--threads" {
            threads = args
                .next()
                .and_then(|n| n.parse().ok())
                .ok_or("--threads needs a number")?;
        } else {
            dir = Some(PathBuf::from(arg));
        }
    }
    let dir = match dir {
        Some(d) => d,
        None => rust_docs()?,
    };
    Ok((dir, threads))
}

/// Every HTML file under `dir`, in memory, with the URL it had on the web.
fn read_docs(dir: &Path) -> Result<Vec<Doc>, String> {
    let start = Instant::now();
    let mut files = Vec::new();
    walk(dir, &mut files).map_err(|e| format!("{}: {e}", dir.display()))?;
    files.sort();
    let base = Url::parse("https://doc.rust-lang.org/stable/").map_err(|e| e.to_string())?;
    let mut docs = Vec::with_capacity(files.len());
    for path in &files {
        let body = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("bench_extract: {}: {e} (skipped)", path.display());
                continue;
            }
        };
        let rel = path.strip_prefix(dir).unwrap_or(path).to_string_lossy();
        let url = base.join(&rel).map_err(|e| format!("{rel}: {e}"))?;
        docs.push(Doc { url, body });
    }
    println!(
        "input: {} HTML files, {:.1} MB from {} (read in {:.1} s)",
        docs.len(),
        docs.iter().map(|d| d.body.len()).sum::<usize>() as f64 / 1e6,
        dir.display(),
        start.elapsed().as_secs_f64()
    );
    Ok(docs)
}

/// The extractor on one thread.
fn one_thread(docs: &[Doc], bytes: usize, options: &ExtractOptions) {
    let start = Instant::now();
    let cpu = cpu_seconds();
    let mut extractor = Extractor::new(options.clone());
    let mut out = PageLinks::default();
    let mut total = Totals::default();
    for doc in docs {
        extractor.extract_into(&page(doc), &mut out);
        total.add(&out);
    }
    report(
        "extract, 1 thread",
        bytes,
        start.elapsed().as_secs_f64(),
        cpu,
        &total,
    );
}

/// A rayon pool, one extractor per worker.
fn in_a_pool(
    docs: &[Doc],
    bytes: usize,
    options: &ExtractOptions,
    threads: usize,
) -> Result<(), String> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| e.to_string())?;
    let start = Instant::now();
    let cpu = cpu_seconds();
    let total = pool.install(|| {
        docs.par_iter()
            .map_init(
                || (Extractor::new(options.clone()), PageLinks::default()),
                |(extractor, out), doc| {
                    extractor.extract_into(&page(doc), out);
                    let mut t = Totals::default();
                    t.add(out);
                    t
                },
            )
            .reduce(Totals::default, Totals::merge)
    });
    report(
        &format!("extract, {threads} threads"),
        bytes,
        start.elapsed().as_secs_f64(),
        cpu,
        &total,
    );
    Ok(())
}

/// Reference: lol_html alone, reading `a[href]` as a plain program would.
fn bare(docs: &[Doc], bytes: usize) {
    let start = Instant::now();
    let cpu = cpu_seconds();
    let mut hrefs = 0u64;
    for doc in docs {
        hrefs += bare_lol_html(&doc.body);
    }
    let secs = start.elapsed().as_secs_f64();
    let cpu = cpu_seconds().zip(cpu).map(|(b, a)| b - a);
    println!(
        "{:<26} {:>6.1} MB/s {:>9.0} hrefs/s | per CPU-second: {} ({hrefs} a[href], {secs:.2} s)",
        "bare lol_html a[href]",
        bytes as f64 / 1e6 / secs,
        hrefs as f64 / secs,
        per_cpu(bytes, cpu),
    );
}

fn page(doc: &Doc) -> Page<'_> {
    Page {
        url: &doc.url,
        content_type: Some("text/html; charset=utf-8"),
        x_robots_tag: None,
        body: &doc.body,
    }
}

#[derive(Default)]
struct Totals {
    pages: u64,
    links: u64,
    skipped: Skipped,
    incomplete: u64,
}

impl Totals {
    fn add(&mut self, out: &PageLinks) {
        self.pages += 1;
        self.links += out.links.len() as u64;
        self.skipped += out.skipped;
        self.incomplete += u64::from(out.incomplete);
    }

    fn merge(mut self, other: Totals) -> Totals {
        self.pages += other.pages;
        self.links += other.links;
        self.skipped += other.skipped;
        self.incomplete += other.incomplete;
        self
    }
}

/// CPU time (user + system) of the whole process so far, from
/// `/proc/self/stat` (Linux; `None` elsewhere). On a machine shared with
/// other work, MB per CPU-second is steadier than MB per wall second.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which ends with the last `)`).
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    let ticks = Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .trim()
                .parse::<f64>()
                .ok()
        })
        .unwrap_or(100.0);
    Some((utime + stime) / ticks)
}

fn per_cpu(bytes: usize, cpu: Option<f64>) -> String {
    match cpu {
        Some(c) if c > 0.0 => format!("{:.1} MB/s ({c:.2} CPU s)", bytes as f64 / 1e6 / c),
        _ => "n/a".to_owned(),
    }
}

fn report(what: &str, bytes: usize, secs: f64, cpu_before: Option<f64>, t: &Totals) {
    let s = &t.skipped;
    let cpu = cpu_seconds().zip(cpu_before).map(|(b, a)| b - a);
    println!(
        "{what:<26} {:>6.1} MB/s {:>9.0} links/s | per CPU-second: {} ({} pages, {} links kept; skipped: {} same page, {} scheme, {} invalid, {} nofollow, {} over cap; {} incomplete; {secs:.2} s)",
        bytes as f64 / 1e6 / secs,
        t.links as f64 / secs,
        per_cpu(bytes, cpu),
        t.pages,
        t.links,
        s.same_page,
        s.scheme,
        s.invalid,
        s.nofollow,
        s.over_cap,
        t.incomplete,
    );
}

fn bare_lol_html(body: &[u8]) -> u64 {
    use lol_html::{HtmlRewriter, Settings, element};
    let mut n = 0u64;
    let mut rewriter = HtmlRewriter::new(
        Settings {
            element_content_handlers: vec![element!("a[href]", |el| {
                if el.get_attribute("href").is_some() {
                    n += 1;
                }
                Ok(())
            })],
            strict: false,
            ..Settings::new()
        },
        |_: &[u8]| {},
    );
    if rewriter.write(body).is_ok() {
        let _ = rewriter.end();
    } else {
        drop(rewriter);
    }
    n
}

fn rust_docs() -> Result<PathBuf, String> {
    let out = Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .map_err(|e| format!("rustc --print sysroot: {e}"))?;
    let sysroot = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    let dir = Path::new(&sysroot).join("share/doc/rust/html");
    if dir.is_dir() {
        Ok(dir)
    } else {
        Err(format!(
            "{}: no Rust documentation here (rustup component add rust-docs), or pass a directory",
            dir.display()
        ))
    }
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let path = entry.path();
        if kind.is_dir() {
            walk(&path, files)?;
        } else if kind.is_file() && path.extension().is_some_and(|e| e == "html") {
            files.push(path);
        }
    }
    Ok(())
}
