//! Benchmark of sitemap parsing: a large generated sitemap set, read as
//! plain XML and as `.xml.gz`, against `zcat` over the same `.gz` files.
//!
//! ```text
//! cargo run --release -p segmenter --example bench_sitemap -- DIR [FILES [URLS_PER_FILE]]
//! ```
//!
//! Writes FILES (default 20) sitemaps of URLS_PER_FILE (default 50,000)
//! URLs with `<lastmod>` into DIR, as `sitemap-NN.xml` and
//! `sitemap-NN.xml.gz`, unless they are there already. All files are read
//! into memory first; each pass over them is single-threaded and timed
//! three times, the best time counts. Prints sitemap URLs/s and MB/s for
//! both forms, the time `zcat` takes to decompress the `.gz` files to
//! /dev/null, and the ratio of the `.gz` pass to it; then the time a
//! response only tried as a sitemap costs (a gzip file of something else,
//! a feed), read in full and with `Limits::sitemaps_only`.

use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use flate2::Compression;
use flate2::write::GzEncoder;
use segmenter::sitemap::{self, Limits};

/// Our own target for uncompressed XML on a small machine.
const TARGET_URLS_PER_SEC: f64 = 1_000_000.0;
const PASSES: usize = 3;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench_sitemap: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(
        args.next()
            .ok_or("usage: bench_sitemap DIR [FILES [URLS_PER_FILE]]")?,
    );
    let number = |a: Option<String>, default: usize| -> Result<usize, String> {
        a.map_or(Ok(default), |s| {
            s.parse().map_err(|_| format!("{s}: not a number"))
        })
    };
    let files = number(args.next(), 20)?;
    let per_file = number(args.next(), 50_000)?;

    fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut plain = Vec::new();
    let mut gz = Vec::new();
    for n in 0..files {
        let xml = dir.join(format!("sitemap-{n:02}.xml"));
        let xml_gz = dir.join(format!("sitemap-{n:02}.xml.gz"));
        if !xml.exists() || !xml_gz.exists() {
            generate(&xml, &xml_gz, n, per_file)?;
        }
        plain.push(fs::read(&xml).map_err(|e| format!("{}: {e}", xml.display()))?);
        gz.push(xml_gz);
    }
    let gz_bodies: Vec<Vec<u8>> = gz
        .iter()
        .map(|p| fs::read(p).map_err(|e| format!("{}: {e}", p.display())))
        .collect::<Result<_, _>>()?;
    let plain_bytes: usize = plain.iter().map(Vec::len).sum();
    let gz_bytes: usize = gz_bodies.iter().map(Vec::len).sum();
    let expected = (files * per_file) as u64;
    println!(
        "sitemaps: {files} files x {per_file} URLs with lastmod = {expected} URLs, {:.1} MB of XML, {:.1} MB gzip-compressed",
        plain_bytes as f64 / 1e6,
        gz_bytes as f64 / 1e6
    );

    let t_plain = best(|| pass(&plain, expected))?;
    let t_gz = best(|| pass(&gz_bodies, expected))?;
    let t_zcat = best(|| zcat(&gz))?;

    let rate = |t: Duration| expected as f64 / t.as_secs_f64();
    let mb = |t: Duration| plain_bytes as f64 / 1e6 / t.as_secs_f64();
    println!(
        "plain XML:  {:.3} s  ->  {:.0} sitemap URLs/s, {:.0} MB/s of XML   (target >= {:.0} URLs/s, our own target: {})",
        t_plain.as_secs_f64(),
        rate(t_plain),
        mb(t_plain),
        TARGET_URLS_PER_SEC,
        if rate(t_plain) >= TARGET_URLS_PER_SEC {
            "met"
        } else {
            "NOT MET"
        }
    );
    println!(
        "xml.gz:     {:.3} s  ->  {:.0} sitemap URLs/s, {:.0} MB/s of XML",
        t_gz.as_secs_f64(),
        rate(t_gz),
        mb(t_gz)
    );
    println!(
        "zcat:       {:.3} s  ->  {:.0} MB/s of XML (decompression only, to /dev/null)",
        t_zcat.as_secs_f64(),
        mb(t_zcat)
    );
    println!(
        "ratio to zcat: {:.2} (xml.gz parse time / zcat time)",
        t_gz.as_secs_f64() / t_zcat.as_secs_f64()
    );
    tried(&plain)?;
    Ok(())
}

/// Responses only tried as sitemaps (reached by a link): a gzip file of
/// something else (the sitemaps' XML with a text line before it, as a
/// tarball's first bytes would be) and a large feed, read in full as before
/// and with [`Limits::sitemaps_only`], which must stop at their first bytes.
fn tried(plain: &[Vec<u8>]) -> Result<(), String> {
    let doc = &plain[0];
    let mut other = b"not xml: a tarball's first bytes\n".to_vec();
    other.extend_from_slice(doc);
    let other_gz = {
        let mut e = GzEncoder::new(Vec::new(), Compression::fast());
        e.write_all(&other).map_err(|e| e.to_string())?;
        e.finish().map_err(|e| e.to_string())?
    };
    let mut feed = b"<rss version=\"2.0\"><channel>".to_vec();
    while feed.len() < doc.len() {
        feed.extend_from_slice(
            b"<item><title>t</title><link>https://news.example/a</link></item>\n",
        );
    }
    feed.extend_from_slice(b"</channel></rss>\n");
    // Well below the time of a full read: our own target.
    const TARGET_MS: f64 = 1.0;
    for (what, body, size) in [
        ("gzip, not XML", &other_gz, other.len()),
        ("RSS feed", &feed, feed.len()),
    ] {
        let time = |limits: Limits| {
            best(|| {
                let start = Instant::now();
                let s = sitemap::read(body, None, &limits, |_, _| {});
                std::hint::black_box(s);
                Ok(start.elapsed())
            })
        };
        let full = time(Limits::default())?;
        let only = time(Limits {
            sitemaps_only: true,
            ..Limits::default()
        })?;
        println!(
            "tried, {what} ({:.1} MB): read in full {:.1} ms, sitemaps_only {:.1} us   (target <= {TARGET_MS} ms: {})",
            size as f64 / 1e6,
            full.as_secs_f64() * 1e3,
            only.as_secs_f64() * 1e6,
            if only.as_secs_f64() * 1e3 <= TARGET_MS {
                "met"
            } else {
                "NOT MET"
            }
        );
    }
    Ok(())
}

/// The best of [`PASSES`] runs of `f`.
fn best(mut f: impl FnMut() -> Result<Duration, String>) -> Result<Duration, String> {
    let mut best = Duration::MAX;
    for _ in 0..PASSES {
        best = best.min(f()?);
    }
    Ok(best)
}

/// Reads every body; checks that all URLs were found and none refused.
fn pass(bodies: &[Vec<u8>], expected: u64) -> Result<Duration, String> {
    let limits = Limits::default();
    let start = Instant::now();
    let mut urls = 0u64;
    let mut loc_bytes = 0usize;
    let mut dated = 0u64;
    for body in bodies {
        let summary = sitemap::read(body, Some("application/xml"), &limits, |_, e| {
            loc_bytes += e.loc.len();
            dated += u64::from(e.lastmod_ms.is_some());
        });
        if let Some(err) = summary.error {
            return Err(format!("generated sitemap did not parse: {err}"));
        }
        urls += summary.entries;
    }
    let took = start.elapsed();
    if urls != expected || dated != expected || loc_bytes == 0 {
        return Err(format!(
            "found {urls} URLs ({dated} with a lastmod), expected {expected}"
        ));
    }
    Ok(took)
}

fn zcat(files: &[PathBuf]) -> Result<Duration, String> {
    let start = Instant::now();
    let status = Command::new("zcat")
        .args(files)
        .stdout(Stdio::null())
        .status()
        .map_err(|e| format!("zcat: {e}"))?;
    if !status.success() {
        return Err(format!("zcat: {status}"));
    }
    Ok(start.elapsed())
}

/// One sitemap of `count` URLs over a few hosts and path shapes, as
/// generated sitemaps of shops and news sites look, plain and gzip.
fn generate(xml: &Path, xml_gz: &Path, file: usize, count: usize) -> Result<(), String> {
    let mut doc = Vec::with_capacity(count * 130);
    doc.extend_from_slice(
        b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
          <urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    let sections = [
        "products",
        "news/2024",
        "category/garden-tools",
        "blog",
        "help/articles",
    ];
    for i in 0..count {
        let n = file * count + i;
        let day = 1 + n % 28;
        let month = 1 + (n / 28) % 12;
        writeln!(
            doc,
            "  <url>\n    <loc>https://www.shop{}.example/{}/{}-item-{n}.html</loc>\n    \
             <lastmod>2024-{month:02}-{day:02}T{:02}:{:02}:{:02}+00:00</lastmod>\n  </url>",
            n % 7,
            sections[n % sections.len()],
            n % 1000,
            n % 24,
            n % 60,
            (n / 60) % 60,
        )
        .map_err(|e| e.to_string())?;
    }
    doc.extend_from_slice(b"</urlset>\n");
    let write = |path: &Path, bytes: &[u8]| {
        fs::write(path, bytes).map_err(|e| format!("{}: {e}", path.display()))
    };
    write(xml, &doc)?;
    let file = fs::File::create(xml_gz).map_err(|e| format!("{}: {e}", xml_gz.display()))?;
    let mut enc = GzEncoder::new(BufWriter::new(file), Compression::default());
    enc.write_all(&doc)
        .and_then(|()| enc.finish()?.flush())
        .map_err(|e| format!("{}: {e}", xml_gz.display()))
}
