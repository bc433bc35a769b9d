//! Benchmark of link extraction, this extractor against the one it replaced
//! (the same extractor reading pages with `lol_html`,
//! `testkit::lol_html_reader`), on two inputs: the page the fetch
//! benchmark's server sends (10,000 bytes of prose with about 69 links,
//! 20,000 pages as in `scripts/bench-fetch.sh flat`) and the Rust
//! documentation installed with the toolchain
//! (`$(rustc --print sysroot)/share/doc/rust/html`), or any directory given
//! as the first argument.
//!
//! ```text
//! cargo run --release -p segmenter --example bench_extract [DIR] [--threads N]
//!     [--only new|old] [--input bench|docs] [--sample K]
//! ```
//!
//! All pages are read into memory first; then each extractor runs over them
//! on one thread (and this one on a rayon pool of N threads, default 2).
//! Each line gives µs per page and MB/s of HTML, per wall second and per
//! CPU second (steadier on a shared machine), and the links found; the two
//! extractors must find the same number. `--only`, `--input` and
//! `--sample K` (every K-th documentation page) make a run small enough for
//! `valgrind --tool=callgrind --toggle-collect='*bench_extract::measure*'`,
//! whose instruction count divided by the pages is the cost per page
//! whatever else runs on the machine. Pages get URLs under
//! `https://doc.rust-lang.org/` so that their relative links resolve
//! as on the web.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

use common::extract::{ExtractOptions, Extractor, Page, PageLinks, Skipped};
use rayon::prelude::*;
use testkit::lol_html_reader::LolHtmlReader;
use url::Url;

struct Doc {
    url: Url,
    body: Vec<u8>,
}

/// Which extractor.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Which {
    New,
    Old,
}

struct Args {
    dir: Option<PathBuf>,
    threads: usize,
    only: Option<Which>,
    input: Option<String>,
    sample: usize,
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
    let args = args()?;
    let options = ExtractOptions {
        max_links: 10_000,
        ..ExtractOptions::default()
    };
    let wants = |input: &str| args.input.as_deref().is_none_or(|i| i == input);
    if wants("bench") {
        let docs = bench_pages()?;
        compare("bench page", &docs, &options, &args);
    }
    if wants("docs") {
        let dir = match &args.dir {
            Some(d) => d.clone(),
            None => rust_docs()?,
        };
        let docs = read_docs(&dir, args.sample)?;
        compare("Rust docs", &docs, &options, &args);
    }
    Ok(())
}

/// Both extractors on one thread, then this one on the pool.
fn compare(input: &str, docs: &[Doc], options: &ExtractOptions, args: &Args) {
    let bytes: usize = docs.iter().map(|d| d.body.len()).sum();
    println!(
        "{input}: {} pages, {:.1} MB ({:.0} bytes a page)",
        docs.len(),
        bytes as f64 / 1e6,
        bytes as f64 / docs.len().max(1) as f64
    );
    let mut found = Vec::new();
    for which in [Which::New, Which::Old] {
        if args.only.is_some_and(|o| o != which) {
            continue;
        }
        let start = Instant::now();
        let cpu = cpu_seconds();
        let total = measure(docs, options, which);
        let label = match which {
            Which::New => "  this extractor, 1 thread",
            Which::Old => "  with lol_html, 1 thread",
        };
        report(
            label,
            docs.len(),
            bytes,
            start.elapsed().as_secs_f64(),
            cpu,
            &total,
        );
        found.push(total.links);
    }
    if let [new, old] = found[..] {
        println!(
            "  links: {new} and {old} ({})",
            if new == old {
                "the same number"
            } else {
                "DIFFERENT"
            }
        );
    }
    if args.only.is_none() && args.threads > 1 {
        in_a_pool(docs, bytes, options, args.threads);
    }
}

/// The command line: the input directory and the options.
fn args() -> Result<Args, String> {
    let mut parsed = Args {
        dir: None,
        threads: 2,
        only: None,
        input: None,
        sample: 1,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |what: &str| args.next().ok_or(format!("{arg} needs {what}"));
        match arg.as_str() {
            "--threads" => {
                parsed.threads = value("a number")?.parse().map_err(|e| format!("{e}"))?;
            }
            "--sample" => {
                parsed.sample = value("a number")?.parse().map_err(|e| format!("{e}"))?;
            }
            "--only" => {
                parsed.only = Some(match value("new or old")?.as_str() {
                    "new" => Which::New,
                    "old" => Which::Old,
                    other => return Err(format!("--only {other}: new or old")),
                });
            }
            "--input" => parsed.input = Some(value("bench or docs")?),
            _ => parsed.dir = Some(PathBuf::from(arg)),
        }
    }
    parsed.sample = parsed.sample.max(1);
    Ok(parsed)
}

/// The fetch benchmark's pages, 20,000 of them (its 16 different pages in
/// turn), at URLs shaped like those it serves them under.
fn bench_pages() -> Result<Vec<Doc>, String> {
    let pages = testkit::prose::prose_pages(10_000);
    (0..20_000)
        .map(|i| {
            let url = format!("http://host{}.bench.test:8080/page/{}", i % 500, i / 500);
            Ok(Doc {
                url: Url::parse(&url).map_err(|e| format!("{url}: {e}"))?,
                body: pages[i % pages.len()].clone(),
            })
        })
        .collect()
}

/// Every `sample`-th HTML file under `dir`, in memory, with the URL it had
/// on the web.
fn read_docs(dir: &Path, sample: usize) -> Result<Vec<Doc>, String> {
    let start = Instant::now();
    let mut files = Vec::new();
    walk(dir, &mut files).map_err(|e| format!("{}: {e}", dir.display()))?;
    files.sort();
    let base = Url::parse("https://doc.rust-lang.org/").map_err(|e| e.to_string())?;
    let mut docs = Vec::with_capacity(files.len() / sample + 1);
    for path in files.iter().step_by(sample) {
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
        "(read {} files from {} in {:.1} s)",
        docs.len(),
        dir.display(),
        start.elapsed().as_secs_f64()
    );
    Ok(docs)
}

/// One extractor over every page, on this thread.
#[inline(never)]
fn measure(docs: &[Doc], options: &ExtractOptions, which: Which) -> Totals {
    let mut extractor = Extractor::new(options.clone());
    let lol_html = LolHtmlReader::new(options.max_parser_memory);
    let mut out = PageLinks::default();
    let mut total = Totals::default();
    for doc in docs {
        match which {
            Which::New => extractor.extract_into(&page(doc), &mut out),
            Which::Old => {
                extractor.extract_with_reader(&page(doc), &mut out, &mut |input, encoding, tag| {
                    lol_html.read(input, encoding, tag)
                })
            }
        }
        total.add(&out);
    }
    total
}

/// This extractor on a rayon pool, one extractor per worker.
fn in_a_pool(docs: &[Doc], bytes: usize, options: &ExtractOptions, threads: usize) {
    let pool = match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("bench_extract: no pool of {threads} threads: {e}");
            return;
        }
    };
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
        &format!("  this extractor, {threads} threads"),
        docs.len(),
        bytes,
        start.elapsed().as_secs_f64(),
        cpu,
        &total,
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
    links: u64,
    skipped: Skipped,
    incomplete: u64,
}

impl Totals {
    fn add(&mut self, out: &PageLinks) {
        self.links += out.links.len() as u64;
        self.skipped += out.skipped;
        self.incomplete += u64::from(out.incomplete);
    }

    fn merge(mut self, other: Totals) -> Totals {
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

fn report(what: &str, pages: usize, bytes: usize, secs: f64, cpu_before: Option<f64>, t: &Totals) {
    let s = &t.skipped;
    let cpu = cpu_seconds().zip(cpu_before).map(|(b, a)| b - a);
    let per_cpu = match cpu {
        Some(c) if c > 0.0 => format!(
            "{:.1} µs a page, {:.0} MB/s ({c:.2} CPU s)",
            c * 1e6 / pages as f64,
            bytes as f64 / 1e6 / c
        ),
        _ => "n/a".to_owned(),
    };
    println!(
        "{what:<30} {:>7.1} µs a page {:>6.0} MB/s | per CPU second: {per_cpu} | {} links kept; skipped: {} same page, {} scheme, {} invalid, {} nofollow, {} over cap; {} incomplete",
        secs * 1e6 / pages as f64,
        bytes as f64 / 1e6 / secs,
        t.links,
        s.same_page,
        s.scheme,
        s.invalid,
        s.nofollow,
        s.over_cap,
        t.incomplete,
    );
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
