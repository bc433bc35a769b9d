//! Throughput of the WARC writer and reader.
//!
//! ```text
//! cargo run --release -p common --example bench_warc -- [--pages N] [--max-page BYTES]
//!     [--html DIR | --synthetic BYTES] [--level 0-12] [--encoders N] [--dir DIR]
//! ```
//!
//! Writes N exchanges into one WARC file: by default one thread compresses
//! and writes (`WarcWriter::write_exchange`); with `--encoders N`, N threads
//! compress (`ExchangeEncoder`) and one thread writes (`write_encoded`). The pages are real HTML: up to 2,000 `.html` files of
//! at most `--max-page` bytes (default 64 KiB) from `--html DIR`, by default
//! the Rust documentation of the toolchain (`$(rustc --print
//! sysroot)/share/doc/rust/html`, installed with the `rust-docs`
//! component); `--synthetic BYTES` uses generated pages of about that size
//! instead. Then it reads the file back with `WarcReader` and times `zcat FILE > /dev/null` on the
//! same file for comparison. Prints records/s written, MB/s read (bytes of
//! uncompressed record blocks) and the reader's speed relative to zcat.

use std::net::{IpAddr, Ipv4Addr};
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use common::warc::{
    DEFAULT_COMPRESSION_LEVEL, DEFAULT_MAX_FILE_SIZE, EncodedExchange, Exchange, ExchangeEncoder,
    WarcReader, WarcRecord, WarcWriter, WarcWriterConfig,
};

struct Args {
    pages: usize,
    max_page: u64,
    html: Option<PathBuf>,
    synthetic: Option<usize>,
    level: Option<u32>,
    encoders: usize,
    dir: Option<PathBuf>,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        pages: 50_000,
        max_page: 64 * 1024,
        html: None,
        synthetic: None,
        level: None,
        encoders: 0,
        dir: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--pages" => args.pages = value()?.parse().map_err(|e| format!("--pages: {e}"))?,
            "--max-page" => {
                args.max_page = value()?.parse().map_err(|e| format!("--max-page: {e}"))?
            }
            "--html" => args.html = Some(PathBuf::from(value()?)),
            "--synthetic" => {
                args.synthetic = Some(value()?.parse().map_err(|e| format!("--synthetic: {e}"))?)
            }
            "--level" => args.level = Some(value()?.parse().map_err(|e| format!("--level: {e}"))?),
            "--encoders" => {
                args.encoders = value()?.parse().map_err(|e| format!("--encoders: {e}"))?
            }
            "--dir" => args.dir = Some(PathBuf::from(value()?)),
            "-h" | "--help" => {
                return Err(
                    "usage: bench_warc [--pages N] [--max-page BYTES] [--html DIR | --synthetic BYTES] \
                     [--level 0-12] [--encoders N] [--dir DIR]"
                        .into(),
                );
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(args)
}

/// Deterministic pseudo-random numbers (xorshift64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// An HTML page of about `size` bytes that compresses roughly like real
/// pages do (markup repeats, text and link targets vary).
fn synthetic_page(rng: &mut Rng, size: usize) -> Vec<u8> {
    const WORDS: &[&str] = &[
        "the",
        "of",
        "and",
        "crawler",
        "archive",
        "segment",
        "fetch",
        "host",
        "politeness",
        "robots",
        "delay",
        "queue",
        "domain",
        "link",
        "page",
        "index",
        "record",
        "library",
        "research",
        "history",
        "network",
        "server",
        "response",
        "content",
        "search",
        "data",
        "time",
        "year",
        "people",
        "world",
        "government",
        "university",
        "museum",
        "article",
    ];
    let mut out = String::with_capacity(size + 512);
    out.push_str(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>Page</title><link rel=\"stylesheet\" href=\"/static/site.css\"></head>\n\
         <body><nav class=\"menu\"><ul>",
    );
    while out.len() < size {
        match rng.below(4) {
            0 => {
                let id = rng.next() % 100_000;
                let w = WORDS[rng.below(WORDS.len())];
                out.push_str(&format!(
                    "<li><a href=\"https://www.example{}.test/{w}/{id}.html\" class=\"nav\">{w} {id}</a></li>\n",
                    rng.below(50)
                ));
            }
            _ => {
                out.push_str("<p>");
                for _ in 0..8 + rng.below(30) {
                    out.push_str(WORDS[rng.below(WORDS.len())]);
                    out.push(' ');
                }
                out.push_str("</p>\n");
            }
        }
    }
    out.push_str("</ul></nav></body></html>\n");
    out.into_bytes()
}

/// The toolchain's HTML documentation.
fn rust_docs() -> Result<PathBuf, String> {
    let out = Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .map_err(|e| format!("rustc --print sysroot: {e}"))?;
    let sysroot = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let docs = PathBuf::from(sysroot).join("share/doc/rust/html");
    if docs.is_dir() {
        Ok(docs)
    } else {
        Err(format!(
            "{}: no Rust documentation (rustup component add rust-docs), \
             give --html DIR or --synthetic BYTES",
            docs.display()
        ))
    }
}

/// `.html` files under `dir` of 1 KB to `max` bytes (bounded walk).
fn collect_html(dir: &std::path::Path, max: u64, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = entry.metadata() else { continue };
        if meta.is_dir() && out.len() < 200_000 {
            collect_html(&path, max, out);
        } else if path.extension().is_some_and(|e| e == "html")
            && (1024..=max).contains(&meta.len())
        {
            out.push(path);
        }
    }
}

/// CPU time (user + system) this process has used so far, from
/// `/proc/self/stat` (Linux; clock ticks of 10 ms). On a machine shared with
/// other work, speed per CPU second is steadier than speed per second.
fn cpu_time() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the parenthesized command name; utime and stime are the
    // 14th and 15th fields of the line.
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench_warc: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Loads the pages, writes them into one WARC file, reads it back, times
/// zcat on it, and prints the figures.
fn run() -> Result<(), String> {
    let args = parse_args()?;
    let dir = args
        .dir
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join(format!("bench-warc-{}", std::process::id())));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let corpus = Corpus::new(load_pages(&args)?);
    let level = args.level.unwrap_or(DEFAULT_COMPRESSION_LEVEL);
    let written = write_file(&args, &corpus, &dir, level)?;
    let read = read_file(&written.file)?;
    let start = Instant::now();
    let zcat = Command::new("zcat")
        .arg(&written.file)
        .stdout(Stdio::null())
        .status();
    let zcat_time = start.elapsed();
    print_figures(&args, &corpus, level, &written, &read);
    match zcat {
        Ok(s) if s.success() => println!(
            "zcat:  {:.2} s; reader speed / zcat speed = {:.2}",
            zcat_time.as_secs_f64(),
            zcat_time.as_secs_f64() / read.time.as_secs_f64()
        ),
        Ok(s) => println!("zcat:  failed ({s})"),
        Err(e) => println!("zcat:  not run ({e})"),
    }
    if args.dir.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    Ok(())
}

/// The distinct pages: generated (`--synthetic`), or the first 2,000
/// `.html` files of at most `--max-page` bytes under `--html` or the Rust
/// documentation.
fn load_pages(args: &Args) -> Result<Vec<Vec<u8>>, String> {
    if let Some(size) = args.synthetic {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        return Ok((0..256)
            .map(|_| {
                let n = size / 2 + rng.below(size.max(2));
                synthetic_page(&mut rng, n)
            })
            .collect());
    }
    let html = match &args.html {
        Some(d) => d.clone(),
        None => rust_docs()?,
    };
    let mut files = Vec::new();
    collect_html(&html, args.max_page, &mut files);
    if files.is_empty() {
        return Err(format!(
            "{}: no .html files of at most {} bytes",
            html.display(),
            args.max_page
        ));
    }
    files.sort();
    files.truncate(2000);
    files
        .iter()
        .map(|f| std::fs::read(f).map_err(|e| format!("{}: {e}", f.display())))
        .collect()
}

/// The request every exchange was made with.
const REQUEST: &[u8] = b"GET /section/page.html HTTP/1.1\r\nHost: www.example.test\r\n\
                    User-Agent: bench-bot/1.0 (+http://bot.example.test/)\r\n\
                    Accept: text/html,*/*;q=0.8\r\nAccept-Encoding: gzip\r\n\r\n";

/// The pages with their response heads: exchange `i` is page `i` modulo
/// their number, at a URL of its own.
struct Corpus {
    pages: Vec<Vec<u8>>,
    heads: Vec<Vec<u8>>,
}

impl Corpus {
    /// The pages, each with a response head that says its length.
    fn new(pages: Vec<Vec<u8>>) -> Corpus {
        let heads = pages
            .iter()
            .map(|p| {
                format!(
                    "HTTP/1.1 200 OK\r\nDate: Mon, 23 Nov 2026 04:27:02 GMT\r\nServer: nginx\r\n\
                     Content-Type: text/html; charset=utf-8\r\nX-Crawler-Content-Encoding: gzip\r\n\
                     Content-Length: {}\r\n\r\n",
                    p.len()
                )
                .into_bytes()
            })
            .collect();
        Corpus { pages, heads }
    }

    /// Payload bytes of the first `n` exchanges.
    fn payload_bytes(&self, n: usize) -> u64 {
        (0..n)
            .map(|i| self.pages[i % self.pages.len()].len() as u64)
            .sum()
    }

    /// Encodes the exchange the fetcher would hand over for page `i`.
    fn encode(
        &self,
        i: usize,
        enc: &mut ExchangeEncoder,
        out: &mut EncodedExchange,
        url: &mut String,
    ) -> std::io::Result<()> {
        let k = i % self.pages.len();
        url.clear();
        url.push_str("https://www.example");
        url.push_str(&(i % 1000).to_string());
        url.push_str(".test/section/page");
        url.push_str(&i.to_string());
        url.push_str(".html");
        let extra = [
            ("X-Crawl-Hops", (i % 5).to_string()),
            ("X-Crawl-Via", "link".to_string()),
        ];
        enc.encode(
            &Exchange {
                target_uri: url,
                date: SystemTime::now(),
                ip: Some(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2))),
                request_head: REQUEST,
                response_head: &self.heads[k],
                payload: &self.pages[k],
                truncated: None,
                extra_fields: &extra,
                protocols: &["http/1.1"],
                cipher_suite: None,
                metadata: None,
            },
            out,
        )
    }
}

/// The WARC file written, and what writing it took.
struct Written {
    file: PathBuf,
    size: u64,
    time: Duration,
    cpu: Option<Duration>,
    sync_time: Duration,
}

/// Writes `--pages` exchanges into one WARC file in `dir`, on this thread
/// or with `--encoders` threads, then closes it (its final fsync timed
/// apart: it measures the disk, not the writer).
fn write_file(
    args: &Args,
    corpus: &Corpus,
    dir: &std::path::Path,
    level: u32,
) -> Result<Written, String> {
    let mut writer = WarcWriter::new(WarcWriterConfig {
        dir: dir.to_path_buf(),
        prefix: "BENCH".into(),
        max_file_size: DEFAULT_MAX_FILE_SIZE * 100,
        first_serial: 0,
        hostname: "bench".into(),
        info: vec![("software".into(), "bench_warc".into())],
    })
    .map_err(|e| format!("{}: {e}", dir.display()))?;
    let start = Instant::now();
    let cpu_start = cpu_time();
    if args.encoders == 0 {
        write_on_one_thread(args.pages, corpus, &mut writer, level)?;
    } else {
        write_with_encoders(args.pages, args.encoders, corpus, &mut writer, level)?;
    }
    let time = start.elapsed();
    let cpu = cpu_time().zip(cpu_start).map(|(b, a)| b - a);
    let start = Instant::now();
    let files = writer.finish().map_err(|e| format!("finish: {e}"))?;
    let sync_time = start.elapsed();
    let file = files.into_iter().next().ok_or("nothing written")?;
    let size = std::fs::metadata(&file).map_err(|e| e.to_string())?.len();
    Ok(Written {
        file,
        size,
        time,
        cpu,
        sync_time,
    })
}

/// One thread compresses and writes (`WarcWriter::write_exchange` does
/// exactly this).
fn write_on_one_thread(
    pages: usize,
    corpus: &Corpus,
    writer: &mut WarcWriter,
    level: u32,
) -> Result<(), String> {
    let mut enc = ExchangeEncoder::with_level(level);
    let mut out = EncodedExchange::default();
    let mut url = String::new();
    for i in 0..pages {
        corpus
            .encode(i, &mut enc, &mut out, &mut url)
            .map_err(|e| format!("encode: {e}"))?;
        writer
            .write_encoded(&out)
            .map_err(|e| format!("write: {e}"))?;
    }
    Ok(())
}

/// Encoder threads compress; this thread only writes, in any order.
/// Buffers go back to the encoders to be reused.
fn write_with_encoders(
    pages: usize,
    encoders: usize,
    corpus: &Corpus,
    writer: &mut WarcWriter,
    level: u32,
) -> Result<(), String> {
    let (full_tx, full_rx) = mpsc::sync_channel::<EncodedExchange>(64);
    let (empty_tx, empty_rx) = mpsc::channel::<EncodedExchange>();
    let empty_rx = std::sync::Mutex::new(empty_rx);
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| -> Result<(), String> {
        for _ in 0..encoders {
            let full_tx = full_tx.clone();
            let (next, empty_rx) = (&next, &empty_rx);
            scope.spawn(move || {
                let mut enc = ExchangeEncoder::with_level(level);
                let mut url = String::new();
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= pages {
                        break;
                    }
                    let mut out = empty_rx.lock().unwrap().try_recv().unwrap_or_default();
                    corpus
                        .encode(i, &mut enc, &mut out, &mut url)
                        .expect("encode");
                    if full_tx.send(out).is_err() {
                        break;
                    }
                }
            });
        }
        drop(full_tx);
        for out in full_rx {
            writer
                .write_encoded(&out)
                .map_err(|e| format!("write: {e}"))?;
            let _ = empty_tx.send(out);
        }
        Ok(())
    })
}

/// What reading the file back took, and what it held.
struct ReadBack {
    records: u64,
    block_bytes: u64,
    time: Duration,
    cpu: Option<Duration>,
}

/// Reads every record of `file` with `WarcReader`.
fn read_file(file: &std::path::Path) -> Result<ReadBack, String> {
    let start = Instant::now();
    let cpu_start = cpu_time();
    let mut reader = WarcReader::open(file, 1 << 20).map_err(|e| e.to_string())?;
    let mut rec = WarcRecord::default();
    let (mut records, mut block_bytes) = (0u64, 0u64);
    while reader.read_next(&mut rec).map_err(|e| e.to_string())? {
        records += 1;
        block_bytes += rec.block.len() as u64;
    }
    Ok(ReadBack {
        records,
        block_bytes,
        time: start.elapsed(),
        cpu: cpu_time().zip(cpu_start).map(|(b, a)| b - a),
    })
}

/// Prints the pages, file, write, read and per-CPU figures.
fn print_figures(args: &Args, corpus: &Corpus, level: u32, written: &Written, read: &ReadBack) {
    let payload_bytes = corpus.payload_bytes(args.pages);
    let (file_size, write_time, write_cpu) = (written.size, written.time, written.cpu);
    let (records, block_bytes, read_time, read_cpu) =
        (read.records, read.block_bytes, read.time, read.cpu);
    let mb = |bytes: u64, t: Duration| bytes as f64 / 1e6 / t.as_secs_f64();
    println!(
        "pages: {} ({} distinct) of {:.1} KB on average; file {:.1} MB (payload {:.1} MB, ratio {:.2})",
        args.pages,
        corpus.pages.len(),
        payload_bytes as f64 / args.pages as f64 / 1e3,
        file_size as f64 / 1e6,
        payload_bytes as f64 / 1e6,
        payload_bytes as f64 / file_size as f64
    );
    println!(
        "write: {:.0} exchanges/s ({:.1} MB/s of payload), {:.2} s + {:.2} s final fsync; level {level}, {}",
        args.pages as f64 / write_time.as_secs_f64(),
        mb(payload_bytes, write_time),
        write_time.as_secs_f64(),
        written.sync_time.as_secs_f64(),
        match args.encoders {
            0 => "compressed on the writing thread".to_string(),
            n => format!("{n} encoder threads"),
        }
    );
    println!(
        "read:  {:.0} MB/s of blocks ({records} records, {:.1} MB), {:.2} s",
        mb(block_bytes, read_time),
        block_bytes as f64 / 1e6,
        read_time.as_secs_f64()
    );
    let per_cpu = |n: f64, cpu: Option<Duration>| match cpu {
        Some(c) if !c.is_zero() => format!("{:.0}", n / c.as_secs_f64()),
        _ => "n/a".to_string(),
    };
    println!(
        "per CPU second: write {} exchanges, read {} MB (CPU {:.2} s and {:.2} s)",
        per_cpu(args.pages as f64, write_cpu),
        per_cpu(block_bytes as f64 / 1e6, read_cpu),
        write_cpu.unwrap_or_default().as_secs_f64(),
        read_cpu.unwrap_or_default().as_secs_f64()
    );
}
