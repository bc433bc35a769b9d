//! `segmenter wacz`: a crawl (or some of its rounds) as one WACZ 1.1.1
//! package, the ZIP file that ReplayWeb.page opens and web archives
//! exchange:
//!
//! ```text
//! archive/NAME.warc.gz      every WARC file of the runs taken (of every shard), stored as is
//! indexes/index.cdxj        their CDXJ indexes merged (segmenter index)
//! pages/pages.jsonl         one line per 2xx HTML page: url, ts, title
//! datapackage.json          every file with its sha256 and size
//! datapackage-digest.json   the sha256 of datapackage.json
//! ```
//!
//! Streamed: each WARC file is copied into the package through the ZIP
//! writer and a sha256 in one pass, the merged index goes straight into
//! its entry, and the pages list is gathered in a temporary file beside
//! the package, so memory does not grow with the crawl (a line of each
//! index being merged, a block of page records at a time). A page's title
//! is read from the start of its record only: its gzip member is read and
//! inflated a few KB at a time, up to 1 KB past `</title>`. The package
//! is written under a temporary name and renamed into place; ZIP64 is used
//! for files of 4 GiB or more.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use common::crawldir::CrawlDir;
use common::runlog::RunLog;
use rayon::prelude::*;
use serde::Serialize;
use sha2::{Digest, Sha256};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

use crate::error::Error;
use crate::extract::page_title;
use crate::state::warcs::{IndexedWarc, Rounds, indexed_warcs, merge_warc_indexes};

/// The WACZ version written (`wacz_version`).
pub const WACZ_VERSION: &str = "1.1.1";

/// Index lines whose pages are read together (on all cores).
const PAGE_BLOCK: usize = 2048;

/// Bytes of a page's record read to find its title.
const TITLE_BYTES: usize = 256 * 1024;

/// Bytes of a page read past the end of its title: the charset prescan
/// reads a page's first 1,024 bytes (WHATWG), so a `<meta charset>` after a
/// short title is seen as in the whole page.
const PRESCAN_BYTES: usize = 1024;

/// Bytes of a page's gzip member read at a time to find its title.
const READ_STEP: usize = 16 * 1024;

/// One file of the package, as `datapackage.json` lists it.
#[derive(Debug, Serialize)]
struct Resource {
    name: String,
    path: String,
    hash: String,
    bytes: u64,
}

/// One line of `pages/pages.jsonl`.
#[derive(Debug, Serialize)]
struct PageLine<'a> {
    url: &'a str,
    ts: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    title: Option<String>,
}

/// A writer that passes bytes on and keeps their sha256 and count.
struct Hashing<W> {
    inner: W,
    sha: Sha256,
    bytes: u64,
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.sha.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

impl<W> Hashing<W> {
    fn new(inner: W) -> Hashing<W> {
        Hashing {
            inner,
            sha: Sha256::new(),
            bytes: 0,
        }
    }
    fn resource(self, path: &str) -> (W, Resource) {
        let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
        let hash = format!("sha256:{}", hex(&self.sha.finalize()));
        (
            self.inner,
            Resource {
                name,
                path: path.to_string(),
                hash,
                bytes: self.bytes,
            },
        )
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `segmenter wacz CRAWL --out FILE [--rounds R] [--title T]`.
pub fn wacz(crawl: &Path, out: &Path, rounds: &Rounds, title: Option<&str>) -> Result<(), Error> {
    let crawl = CrawlDir::open(crawl).map_err(Error::io(crawl))?;
    let log = RunLog::open("segmenter", &crawl.new_log_path("segmenter"));
    let started = std::time::Instant::now();
    let warcs = indexed_warcs(&crawl, rounds, &log)?;
    let scratch = Scratch {
        part: with_suffix(out, ".part"),
        pages: with_suffix(out, ".pages.part"),
        index: with_suffix(out, ".index.part"),
    };
    let written = write_package(&crawl, &warcs, title, &scratch);
    for f in [&scratch.pages, &scratch.index] {
        let _ = std::fs::remove_file(f);
    }
    let (captures, pages, size) = match written {
        Ok(w) => w,
        Err(e) => {
            let _ = std::fs::remove_file(&scratch.part);
            return Err(e);
        }
    };
    std::fs::rename(&scratch.part, out).map_err(Error::io(out))?;
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        common::atomic::sync_dir(dir).map_err(Error::io(dir))?;
    }
    let seconds = started.elapsed().as_secs_f64();
    log.info(format!(
        "{}: {} WARC files, {captures} captures, {pages} pages, {:.1} MB in {seconds:.1}s ({:.0} MB/s)",
        out.display(),
        warcs.len(),
        size as f64 / 1e6,
        size as f64 / 1e6 / seconds.max(1e-9),
    ));
    Ok(())
}

/// The files a package is made through: the package itself until it is
/// complete, and the merged index and pages list before they go in.
struct Scratch {
    part: PathBuf,
    pages: PathBuf,
    index: PathBuf,
}

/// Writes the package to `scratch.part`, synced; returns the captures,
/// the pages and its size. The merged index and the pages list are made on
/// another thread while this one copies the WARC files into the package.
fn write_package(
    crawl: &CrawlDir,
    warcs: &[IndexedWarc],
    title: Option<&str>,
    scratch: &Scratch,
) -> Result<(u64, u64, u64), Error> {
    let part = &scratch.part;
    let file = File::create(part).map_err(Error::io(part))?;
    let mut zip = ZipWriter::new(BufWriter::with_capacity(1 << 20, file));
    let mut resources = Vec::new();
    let stamp = zip_time(SystemTime::now());
    let stored = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Stored)
        .last_modified_time(stamp);
    // Level 2 (zlib-rs's fastest with Huffman codes of its own): the index
    // and pages list are deflated after the last WARC file, on the path of
    // the whole command; the merged index of the flat benchmark takes 7 %
    // of its size instead of 5 % at the default level 6.
    let deflated = SimpleFileOptions::default()
        .compression_method(CompressionMethod::Deflated)
        .compression_level(Some(2))
        .last_modified_time(stamp)
        .large_file(true);
    let (captures, pages) = std::thread::scope(|threads| {
        let lists = threads.spawn(|| lists(warcs, part, scratch));
        let copied = warcs.iter().try_for_each(|w| {
            let path = format!("archive/{}", w.name);
            let size = std::fs::metadata(&w.warc)
                .map_err(Error::io(&w.warc))?
                .len();
            let options = stored.large_file(size >= u64::from(u32::MAX));
            resources.push(add_file(&mut zip, &path, &w.warc, options, part)?);
            Ok::<_, Error>(())
        });
        let lists = lists.join().expect("the pages thread does not panic");
        copied.and(lists)
    })?;
    resources.push(add_file(
        &mut zip,
        "indexes/index.cdxj",
        &scratch.index,
        deflated,
        part,
    )?);
    resources.push(add_file(
        &mut zip,
        "pages/pages.jsonl",
        &scratch.pages,
        deflated,
        part,
    )?);
    let package = datapackage(crawl, title, resources);
    let package = serde_json::to_vec_pretty(&package).expect("plain JSON");
    let digest = serde_json::json!({
        "path": "datapackage.json",
        "hash": format!("sha256:{}", hex(&Sha256::digest(&package))),
    });
    let digest = serde_json::to_vec_pretty(&digest).expect("plain JSON");
    for (name, bytes) in [
        ("datapackage.json", &package),
        ("datapackage-digest.json", &digest),
    ] {
        zip.start_file(name, deflated).map_err(zip_error(part))?;
        zip.write_all(bytes).map_err(Error::io(part))?;
    }
    let mut file = zip.finish().map_err(zip_error(part))?;
    file.flush().map_err(Error::io(part))?;
    let file = file.into_inner().map_err(|e| Error::Io {
        path: part.clone(),
        source: e.into_error(),
    })?;
    file.sync_all().map_err(Error::io(part))?;
    Ok((captures, pages, file.metadata().map_or(0, |m| m.len())))
}

/// Makes the merged index and the pages list (scratch files); returns
/// their captures and pages.
fn lists(warcs: &[IndexedWarc], part: &Path, scratch: &Scratch) -> Result<(u64, u64), Error> {
    let dir = part.parent().unwrap_or(Path::new(".")).to_path_buf();
    let captures = {
        let path = &scratch.index;
        let mut w = BufWriter::new(File::create(path).map_err(Error::io(path))?);
        let n = merge_warc_indexes(warcs, &dir, &mut w)?;
        w.flush().map_err(Error::io(path))?;
        n
    };
    let files: HashMap<String, PathBuf> = warcs
        .iter()
        .map(|w| (w.name.clone(), w.warc.clone()))
        .collect();
    let pages = write_pages(&files, &scratch.index, &scratch.pages)?;
    Ok((captures, pages))
}

/// Copies the file `from` into the package as `path`, hashing it on the way.
fn add_file(
    zip: &mut ZipWriter<BufWriter<File>>,
    path: &str,
    from: &Path,
    options: SimpleFileOptions,
    part: &Path,
) -> Result<Resource, Error> {
    zip.start_file(path, options).map_err(zip_error(part))?;
    // Large reads: a few hundred system calls per GB, not 130,000.
    let mut input = BufReader::with_capacity(1 << 20, File::open(from).map_err(Error::io(from))?);
    let mut h = Hashing::new(zip);
    io::copy(&mut input, &mut h).map_err(Error::io(part))?;
    Ok(h.resource(path).1)
}

fn zip_error(part: &Path) -> impl Fn(zip::result::ZipError) -> Error + '_ {
    move |e| Error::Io {
        path: part.to_path_buf(),
        source: io::Error::other(e.to_string()),
    }
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(suffix);
    PathBuf::from(name)
}

fn zip_time(t: SystemTime) -> zip::DateTime {
    let (y, mo, d, h, mi, s, _) = common::timefmt::civil(t);
    zip::DateTime::from_date_and_time(
        u16::try_from(y).unwrap_or(1980),
        mo as u8,
        d as u8,
        h as u8,
        mi as u8,
        s as u8,
    )
    .unwrap_or_default()
}

fn datapackage(
    crawl: &CrawlDir,
    title: Option<&str>,
    resources: Vec<Resource>,
) -> serde_json::Value {
    let now = common::timefmt::iso_seconds(SystemTime::now());
    let title = title.map(str::to_string).unwrap_or_else(|| {
        crawl
            .root()
            .canonicalize()
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "crawl".into())
    });
    serde_json::json!({
        "profile": "data-package",
        "wacz_version": WACZ_VERSION,
        "title": title,
        "created": now,
        "modified": now,
        "software": format!("segmenter {}", env!("CARGO_PKG_VERSION")),
        "resources": resources,
    })
}

/// Writes `pages.jsonl` to `path` from the merged index `merged`: a
/// header line, then the first 2xx `text/html` (or XHTML) capture of each
/// URL, with the title its page has (its record read from `files`, by
/// name); returns the pages written.
fn write_pages(files: &HashMap<String, PathBuf>, merged: &Path, path: &Path) -> Result<u64, Error> {
    let mut out = BufWriter::new(File::create(path).map_err(Error::io(path))?);
    out.write_all(
        b"{\"format\": \"json-pages-1.0\", \"id\": \"pages\", \"title\": \"All Pages\"}\n",
    )
    .map_err(Error::io(path))?;
    let mut input = BufReader::new(File::open(merged).map_err(Error::io(merged))?);
    let mut seen_in_key: Vec<String> = Vec::new();
    let mut key = String::new();
    let mut block: Vec<Capture> = Vec::with_capacity(PAGE_BLOCK);
    let mut line = String::new();
    let mut pages = 0;
    loop {
        line.clear();
        let n = input.read_line(&mut line).map_err(Error::io(merged))?;
        if n > 0
            && let Some(c) = Capture::of_line(line.trim_end())
        {
            // Captures of one key come together, oldest first: the first
            // of each URL is its page.
            if c.key != key {
                key.clone_from(&c.key);
                seen_in_key.clear();
            }
            if !seen_in_key.contains(&c.url) {
                seen_in_key.push(c.url.clone());
                block.push(c);
            }
        }
        if block.len() >= PAGE_BLOCK || (n == 0 && !block.is_empty()) {
            let titled: Vec<Option<String>> = block.par_iter().map(|c| c.title(files)).collect();
            for (c, title) in block.iter().zip(titled) {
                let page = PageLine {
                    url: &c.url,
                    ts: c.iso_time(),
                    title,
                };
                serde_json::to_writer(&mut out, &page).map_err(|e| Error::io(path)(e.into()))?;
                out.write_all(b"\n").map_err(Error::io(path))?;
                pages += 1;
            }
            block.clear();
        }
        if n == 0 {
            break;
        }
    }
    out.flush().map_err(Error::io(path))?;
    Ok(pages)
}

/// A page capture of the index: a 2xx HTML response.
struct Capture {
    key: String,
    ts: String,
    url: String,
    filename: String,
    offset: u64,
    length: u64,
}

impl Capture {
    fn of_line(line: &str) -> Option<Capture> {
        /// The fields of an index line that the pages list needs.
        #[derive(serde::Deserialize)]
        struct Fields<'a> {
            #[serde(borrow)]
            url: Cow<'a, str>,
            #[serde(borrow)]
            mime: Option<Cow<'a, str>>,
            #[serde(borrow)]
            status: Option<Cow<'a, str>>,
            #[serde(borrow)]
            offset: Cow<'a, str>,
            #[serde(borrow)]
            length: Cow<'a, str>,
            #[serde(borrow)]
            filename: Cow<'a, str>,
        }
        let (key, rest) = line.split_once(' ')?;
        let (ts, json) = rest.split_once(' ')?;
        // Most captures are not pages: look before parsing.
        if !json.contains("\"status\": \"2") || !json.contains("html") {
            return None;
        }
        let f: Fields = serde_json::from_str(json).ok()?;
        let status: u16 = f.status?.parse().ok()?;
        if !(200..300).contains(&status)
            || !matches!(f.mime.as_deref()?, "text/html" | "application/xhtml+xml")
        {
            return None;
        }
        Some(Capture {
            key: key.to_string(),
            ts: ts.to_string(),
            url: f.url.to_string(),
            filename: f.filename.to_string(),
            offset: f.offset.parse().ok()?,
            length: f.length.parse().ok()?,
        })
    }

    /// `2026-11-24T10:00:05Z` from the 14-digit timestamp.
    fn iso_time(&self) -> String {
        let t = &self.ts;
        if t.len() < 14 {
            return t.clone();
        }
        format!(
            "{}-{}-{}T{}:{}:{}Z",
            &t[0..4],
            &t[4..6],
            &t[6..8],
            &t[8..10],
            &t[10..12],
            &t[12..14]
        )
    }

    /// The page's title, read from its record (`None` if it has none or
    /// the record cannot be read).
    fn title(&self, files: &HashMap<String, PathBuf>) -> Option<String> {
        let path = files.get(&self.filename)?;
        TITLES.with_borrow_mut(|r| r.title(path, self.offset, self.length))
    }
}

thread_local! {
    /// What each thread reading titles keeps from page to page.
    static TITLES: std::cell::RefCell<TitleReader> = std::cell::RefCell::new(TitleReader::new());
}

/// Reads pages' titles from their records: the WARC file last read kept
/// open (one open per file and thread), and the buffers and inflate state
/// reused from record to record (a fresh decoder per page allocated and
/// cleared its state each time).
struct TitleReader {
    open: Option<(PathBuf, File)>,
    /// Compressed bytes of the record read so far.
    member: Vec<u8>,
    /// Inflated bytes of the record so far.
    record: Vec<u8>,
    inflate: flate2::Decompress,
}

impl TitleReader {
    fn new() -> TitleReader {
        TitleReader {
            open: None,
            member: Vec::with_capacity(READ_STEP),
            record: Vec::with_capacity(TITLE_BYTES.min(64 * 1024)),
            inflate: flate2::Decompress::new(false),
        }
    }

    /// The title of the page whose record is the gzip member of `length`
    /// bytes at `offset` in the WARC file `path`.
    fn title(&mut self, path: &Path, offset: u64, length: u64) -> Option<String> {
        self.inflate_start(path, offset, length)?;
        let record = &self.record;
        let block_start = memchr::memmem::find(record, b"\r\n\r\n")? + 4;
        let block = &record[block_start..];
        let head = common::http::parse_response_head(block)?;
        let body = common::body::decoded_payload(block, 64 * 1024);
        page_title(head.header("Content-Type"), &body)
    }

    /// Inflates the start of the record into `self.record`: up to the end of
    /// its title and [`PRESCAN_BYTES`] more (so that the charset prescan sees
    /// what it would see in the whole page), at most [`TITLE_BYTES`]. Reads
    /// the member [`READ_STEP`] bytes at a time, as inflating needs them:
    /// most titles are in a page's first KB.
    fn inflate_start(&mut self, path: &Path, offset: u64, length: u64) -> Option<()> {
        if self.open.as_ref().is_none_or(|(p, _)| p != path) {
            self.open = Some((path.to_path_buf(), File::open(path).ok()?));
        }
        let (_, file) = self.open.as_ref()?;
        let limit = length.min(TITLE_BYTES as u64) as usize;
        self.member.clear();
        self.record.clear();
        self.inflate.reset(false);
        let mut in_stream = false;
        let mut used = 0;
        let mut title_end: Option<usize> = None;
        while self.record.len() < TITLE_BYTES {
            if used == self.member.len() && self.member.len() < limit {
                // More of the member, where inflating stopped for want of it.
                let have = self.member.len();
                let want = (have + READ_STEP).min(limit);
                self.member.resize(want, 0);
                let read = std::os::unix::fs::FileExt::read_at(
                    file,
                    &mut self.member[have..],
                    offset + have as u64,
                )
                .ok()?;
                self.member.truncate(have + read);
                if read == 0 {
                    break;
                }
            }
            if !in_stream {
                used = deflate_start(&self.member)?;
                in_stream = true;
            }
            let out_at = self.record.len();
            let step = if out_at == 0 { 2048 } else { 4096 };
            self.record.resize(out_at + step, 0);
            let (in0, out0) = (self.inflate.total_in(), self.inflate.total_out());
            let status = self.inflate.decompress(
                &self.member[used..],
                &mut self.record[out_at..],
                flate2::FlushDecompress::None,
            );
            let made = (self.inflate.total_out() - out0) as usize;
            used += (self.inflate.total_in() - in0) as usize;
            self.record.truncate(out_at + made);
            // A member cut short ends in an error, after the bytes it had.
            let more = matches!(status, Ok(flate2::Status::Ok | flate2::Status::BufError));
            if title_end.is_none() {
                let seen = out_at.saturating_sub(8);
                title_end = find_ascii_ci(&self.record[seen..], b"</title").map(|p| seen + p);
            }
            if title_end.is_some_and(|t| self.record.len() >= t + PRESCAN_BYTES)
                || !more
                || (made == 0 && (used < self.member.len() || self.member.len() >= limit))
            {
                break;
            }
        }
        Some(())
    }
}

/// Where the deflate stream of the gzip member that starts `member` begins
/// (RFC 1952, 2.3: the fixed header, then optional fields its flags name).
fn deflate_start(member: &[u8]) -> Option<usize> {
    if member.get(..3)? != [0x1f, 0x8b, 8] {
        return None;
    }
    let flags = member[3];
    let mut at = 10;
    if flags & 4 != 0 {
        let xlen = u16::from_le_bytes([*member.get(at)?, *member.get(at + 1)?]);
        at += 2 + usize::from(xlen);
    }
    for name_or_comment in [8, 16] {
        if flags & name_or_comment != 0 {
            at += memchr::memchr(0, member.get(at..)?)? + 1;
        }
    }
    if flags & 2 != 0 {
        at += 2;
    }
    (at <= member.len()).then_some(at)
}

/// Where `hay` first holds `needle` (lower-case ASCII, starting with `<`),
/// ASCII case ignored.
fn find_ascii_ci(hay: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memchr_iter(b'<', hay).find(|&p| {
        hay.len() - p >= needle.len() && hay[p..p + needle.len()].eq_ignore_ascii_case(needle)
    })
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    /// A gzip member with a file name in its header (flag FNAME), holding
    /// a WARC response record whose HTTP head is long enough that the
    /// title comes after the first bytes inflated, with a `<meta charset>`
    /// after the title.
    fn member(title: &[u8]) -> Vec<u8> {
        let mut body = b"<html><head><title>".to_vec();
        body.extend_from_slice(title);
        body.extend_from_slice(b"</title><meta charset=\"windows-1252\"></head><body>");
        body.extend(std::iter::repeat_n(b'x', 100_000));
        let mut http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Pad: ".to_vec();
        http.extend(std::iter::repeat_n(b'p', 3000));
        http.extend_from_slice(b"\r\n\r\n");
        http.extend_from_slice(&body);
        let mut record = format!(
            "WARC/1.1\r\nWARC-Type: response\r\nContent-Length: {}\r\n\r\n",
            http.len()
        )
        .into_bytes();
        record.extend_from_slice(&http);
        record.extend_from_slice(b"\r\n\r\n");
        let mut gz = flate2::GzBuilder::new()
            .filename("record.warc")
            .write(Vec::new(), flate2::Compression::fast());
        gz.write_all(&record).unwrap();
        gz.finish().unwrap()
    }

    #[test]
    fn a_title_is_read_from_the_start_of_its_record() {
        let dir = common::testutil::TempDir::new("wacz-title");
        let first = member(b"caf\xe9");
        let second = member(b"second page");
        let path = dir.write("a.warc.gz", [&first[..], &second[..]].concat());
        let mut reader = TitleReader::new();
        let title = reader.title(&path, 0, first.len() as u64);
        // é in windows-1252, as the <meta> after the title says.
        assert_eq!(title.as_deref(), Some("café"));
        // Stopped 1 KB past the title, far from the record's end.
        assert!(
            reader.record.len() < 3000 + 1024 + 4096,
            "{}",
            reader.record.len()
        );
        let title = reader.title(&path, first.len() as u64, second.len() as u64);
        assert_eq!(title.as_deref(), Some("second page"));
        // Not a gzip member: no title.
        assert_eq!(reader.title(&path, 5, 100), None);
    }
}
