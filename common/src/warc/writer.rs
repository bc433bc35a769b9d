//! [`WarcWriter`]: request/response records, one gzip member each, one
//! `write` per exchange, files rolled at a size limit.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use sha1::{Digest, Sha1};

use super::gzip::MemberWriter;
use super::ids::IdGen;
use super::{Exchange, Revisit, RevisitProfile, StoredExchange, WarcWriterConfig};
use crate::atomic::sync_dir;
use crate::timefmt;

/// The `conformsTo` value of every `warcinfo` record.
const CONFORMS_TO: &str =
    "http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/";

/// The deflate level (libdeflate's, 0–12) used unless set otherwise.
/// Measured on 20,000 exchanges of Rust-docs HTML (`examples/bench_warc.rs`):
/// level 1 takes 45 % less CPU than zlib's level 3, used before, for files
/// 1.4 % larger; libdeflate's levels 3–4 make files of the old size or
/// smaller for about 27 % less CPU.
pub const DEFAULT_COMPRESSION_LEVEL: u32 = 1;

/// Turns exchanges into the bytes of their two WARC records (one gzip member
/// each), ready for [`WarcWriter::write_encoded`]. Compressing is most of
/// the cost of storing a page, so a fetcher can keep one encoder per worker
/// thread and leave only the `write` to the thread that owns the
/// [`WarcWriter`]. An encoder reuses its buffers and its deflate state.
pub struct ExchangeEncoder {
    gz: MemberWriter,
    ids: IdGen,
    /// Uncompressed WARC header of the record being built.
    head: Vec<u8>,
    ip: String,
}

/// The two compressed records of one exchange, as made by
/// [`ExchangeEncoder::encode`]. Reuse one value for many exchanges to keep
/// its buffer.
#[derive(Debug, Clone, Default)]
pub struct EncodedExchange {
    bytes: Vec<u8>,
}

impl EncodedExchange {
    /// Compressed size of both records.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// True before anything was encoded into it.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

impl Default for ExchangeEncoder {
    fn default() -> Self {
        ExchangeEncoder::new()
    }
}

impl ExchangeEncoder {
    /// An encoder at [`DEFAULT_COMPRESSION_LEVEL`].
    pub fn new() -> ExchangeEncoder {
        ExchangeEncoder::with_level(DEFAULT_COMPRESSION_LEVEL)
    }

    /// An encoder at deflate level `level` (libdeflate's, 0–12; more is 12).
    pub fn with_level(level: u32) -> ExchangeEncoder {
        ExchangeEncoder {
            gz: MemberWriter::new(level),
            ids: IdGen::new(),
            head: Vec::with_capacity(4096),
            ip: String::with_capacity(40),
        }
    }

    /// Builds the request and response records of `ex` into `out`
    /// (replacing what it held).
    pub fn encode(&mut self, ex: &Exchange<'_>, out: &mut EncodedExchange) -> io::Result<()> {
        self.encode_as(ex, None, out)
    }

    /// Builds the request record of `ex` and, in place of its response
    /// record, a `revisit` record: the response head alone (the payload is
    /// the one `revisit` refers to), with the profile and the record it
    /// refers to.
    pub fn encode_revisit(
        &mut self,
        ex: &Exchange<'_>,
        revisit: &Revisit,
        out: &mut EncodedExchange,
    ) -> io::Result<()> {
        self.encode_as(ex, Some(revisit), out)
    }

    fn encode_as(
        &mut self,
        ex: &Exchange<'_>,
        revisit: Option<&Revisit>,
        out: &mut EncodedExchange,
    ) -> io::Result<()> {
        let out = &mut out.bytes;
        out.clear();
        let req_id = self.ids.record_id();
        let resp_id = self.ids.record_id();
        self.ip.clear();
        if let Some(ip) = ex.ip {
            let _ = std::fmt::Write::write_fmt(&mut self.ip, format_args!("{ip}"));
        }

        let req_digest = sha1_base32(&[ex.request_head]);
        let req_payload = &ex.request_head[head_len(ex.request_head)..];
        let req_payload_digest = sha1_base32(&[req_payload]);
        self.head.clear();
        start_record(&mut self.head, "request", &req_id, ex.date);
        put_field(&mut self.head, "WARC-Target-URI", ex.target_uri.as_bytes());
        if !self.ip.is_empty() {
            put_field(&mut self.head, "WARC-IP-Address", self.ip.as_bytes());
        }
        put_field(&mut self.head, "WARC-Concurrent-To", &resp_id);
        put_digest(&mut self.head, "WARC-Block-Digest", &req_digest);
        put_digest(&mut self.head, "WARC-Payload-Digest", &req_payload_digest);
        put_field(
            &mut self.head,
            "Content-Type",
            b"application/http;msgtype=request",
        );
        end_header(&mut self.head, ex.request_head.len());
        self.gz
            .member(&[&self.head, ex.request_head, b"\r\n\r\n"], out)?;

        // A revisit's block is the head alone; its payload digest is that of
        // the payload it stands for.
        let payload = if revisit.is_some() {
            &[][..]
        } else {
            ex.payload
        };
        let block_digest = sha1_base32(&[ex.response_head, payload]);
        let payload_digest = sha1_base32(&[ex.payload]);
        self.head.clear();
        let kind = if revisit.is_some() {
            "revisit"
        } else {
            "response"
        };
        start_record(&mut self.head, kind, &resp_id, ex.date);
        put_field(&mut self.head, "WARC-Target-URI", ex.target_uri.as_bytes());
        if !self.ip.is_empty() {
            put_field(&mut self.head, "WARC-IP-Address", self.ip.as_bytes());
        }
        put_field(&mut self.head, "WARC-Concurrent-To", &req_id);
        put_digest(&mut self.head, "WARC-Block-Digest", &block_digest);
        match revisit {
            None => put_digest(&mut self.head, "WARC-Payload-Digest", &payload_digest),
            Some(r) => {
                if r.profile == RevisitProfile::IdenticalPayloadDigest {
                    put_digest(&mut self.head, "WARC-Payload-Digest", &payload_digest);
                }
                put_field(&mut self.head, "WARC-Profile", r.profile.uri().as_bytes());
                put_field(
                    &mut self.head,
                    "WARC-Refers-To-Target-URI",
                    ex.target_uri.as_bytes(),
                );
                if let Some(date) = r.refers_to_date {
                    put_field(
                        &mut self.head,
                        "WARC-Refers-To-Date",
                        timefmt::iso_seconds(date).as_bytes(),
                    );
                }
            }
        }
        if let Some(t) = ex.truncated.filter(|_| revisit.is_none()) {
            put_field(&mut self.head, "WARC-Truncated", t.as_str().as_bytes());
        }
        for (name, value) in ex.extra_fields {
            put_field(&mut self.head, name, value.as_bytes());
        }
        put_field(
            &mut self.head,
            "Content-Type",
            b"application/http;msgtype=response",
        );
        end_header(&mut self.head, ex.response_head.len() + payload.len());
        self.gz
            .member(&[&self.head, ex.response_head, payload, b"\r\n\r\n"], out)
    }

    /// The `warcinfo` record that starts file `name`.
    fn encode_info(
        &mut self,
        name: &str,
        info: &[(String, String)],
        out: &mut Vec<u8>,
    ) -> io::Result<()> {
        let mut block = Vec::with_capacity(512);
        for (k, v) in info {
            put_field(&mut block, k, v.as_bytes());
        }
        put_field(&mut block, "format", b"WARC File Format 1.1");
        put_field(&mut block, "conformsTo", CONFORMS_TO.as_bytes());
        let id = self.ids.record_id();
        self.head.clear();
        start_record(&mut self.head, "warcinfo", &id, SystemTime::now());
        put_field(&mut self.head, "WARC-Filename", name.as_bytes());
        put_digest(&mut self.head, "WARC-Block-Digest", &sha1_base32(&[&block]));
        put_field(&mut self.head, "Content-Type", b"application/warc-fields");
        end_header(&mut self.head, block.len());
        self.gz.member(&[&self.head, &block, b"\r\n\r\n"], out)
    }
}

/// Writes WARC files. Each exchange (request and response record, one gzip
/// member each) is compressed into memory and written with one `write` call,
/// so a crash leaves at most one torn exchange at the end of the file, which
/// [`recover`](super::recover) cuts off.
///
/// ```no_run
/// use common::warc::{Exchange, WarcWriter, WarcWriterConfig, DEFAULT_MAX_FILE_SIZE};
/// let mut w = WarcWriter::new(WarcWriterConfig {
///     dir: "crawl/fetched/00001".into(),
///     prefix: "CRAWL".into(),
///     max_file_size: DEFAULT_MAX_FILE_SIZE,
///     first_serial: 0,
///     hostname: "box1".into(),
///     info: vec![("software".into(), "fetcher/0.1".into())],
/// })?;
/// let hops = [("X-Crawl-Hops", "1".to_string())];
/// w.write_exchange(&Exchange {
///     target_uri: "http://example.com/",
///     date: std::time::SystemTime::now(),
///     ip: None,
///     request_head: b"GET / HTTP/1.1\r\nHost: example.com\r\n\r\n",
///     response_head: b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n",
///     payload: b"hi",
///     truncated: None,
///     extra_fields: &hops,
/// })?;
/// let files = w.finish()?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct WarcWriter {
    cfg: WarcWriterConfig,
    serial: u32,
    current: Option<OpenFile>,
    files: Vec<PathBuf>,
    encoder: ExchangeEncoder,
    encoded: EncodedExchange,
}

struct OpenFile {
    path: PathBuf,
    file: File,
    len: u64,
    /// Exchanges in this file.
    exchanges: u64,
    /// The directory entry was fsynced.
    dir_synced: bool,
}

impl WarcWriter {
    /// Prepares a writer; the first file is opened on the first record.
    pub fn new(cfg: WarcWriterConfig) -> io::Result<WarcWriter> {
        if !cfg.dir.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("{}: WARC directory does not exist", cfg.dir.display()),
            ));
        }
        Ok(WarcWriter {
            serial: cfg.first_serial,
            cfg,
            current: None,
            files: Vec::new(),
            encoder: ExchangeEncoder::new(),
            encoded: EncodedExchange::default(),
        })
    }

    /// Continues an existing file (for example one that
    /// [`recover`](super::recover) made valid again after a crash): records
    /// are appended to it until it reaches the size limit; later files are
    /// numbered from `cfg.first_serial`. Its `warcinfo` record is not written
    /// again.
    pub fn append_to(cfg: WarcWriterConfig, path: impl AsRef<Path>) -> io::Result<WarcWriter> {
        let path = path.as_ref().to_path_buf();
        let mut w = WarcWriter::new(cfg)?;
        let file = OpenOptions::new().append(true).open(&path)?;
        let len = file.metadata()?.len();
        w.files.push(path.clone());
        w.current = Some(OpenFile {
            path,
            file,
            len,
            exchanges: 1,
            dir_synced: true,
        });
        Ok(w)
    }

    /// Sets the deflate level (0–12) of [`WarcWriter::write_exchange`]; default
    /// [`DEFAULT_COMPRESSION_LEVEL`].
    pub fn set_compression_level(&mut self, level: u32) {
        self.encoder = ExchangeEncoder::with_level(level);
    }

    /// The file records currently go to, if one is open.
    pub fn current_file(&self) -> Option<&Path> {
        self.current.as_ref().map(|f| f.path.as_path())
    }

    /// Stores a request and a `revisit` record in place of the response
    /// record (see [`ExchangeEncoder::encode_revisit`]).
    pub fn write_revisit(
        &mut self,
        ex: &Exchange<'_>,
        revisit: &Revisit,
    ) -> io::Result<StoredExchange> {
        let mut encoded = std::mem::take(&mut self.encoded);
        let result = self
            .encoder
            .encode_revisit(ex, revisit, &mut encoded)
            .and_then(|()| self.write_encoded(&encoded));
        self.encoded = encoded;
        result
    }

    /// Stores a request and a response record (compressing them on this
    /// thread; see [`ExchangeEncoder`] to compress elsewhere).
    pub fn write_exchange(&mut self, ex: &Exchange<'_>) -> io::Result<StoredExchange> {
        let mut encoded = std::mem::take(&mut self.encoded);
        let result = self
            .encoder
            .encode(ex, &mut encoded)
            .and_then(|()| self.write_encoded(&encoded));
        self.encoded = encoded;
        result
    }

    /// Stores an exchange that an [`ExchangeEncoder`] built, with one `write`.
    /// A file that already holds exchanges is closed first if this one would
    /// take it past the size limit, and one that reaches it is closed after.
    pub fn write_encoded(&mut self, enc: &EncodedExchange) -> io::Result<StoredExchange> {
        if enc.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "nothing was encoded into this EncodedExchange",
            ));
        }
        let size = enc.bytes.len() as u64;
        if let Some(cur) = &self.current
            && cur.exchanges > 0
            && cur.len + size > self.cfg.max_file_size
        {
            self.close_current()?;
        }
        if self.current.is_none() {
            self.open_next()?;
        }
        let cur = self.current.as_mut().expect("a file is open");
        if let Err(e) = cur.file.write_all(&enc.bytes) {
            // Part of the exchange may be in the file: never append after
            // it; the next exchange starts a new file, and recover() cuts
            // this one.
            self.current = None;
            return Err(e);
        }
        let stored = StoredExchange {
            file: cur.path.clone(),
            offset: cur.len,
            length: size,
        };
        cur.len += size;
        cur.exchanges += 1;
        if cur.len >= self.cfg.max_file_size {
            self.close_current()?;
        }
        Ok(stored)
    }

    /// Flushes and fsyncs the current file.
    pub fn sync(&mut self) -> io::Result<()> {
        if let Some(cur) = &mut self.current {
            cur.file.sync_data()?;
            if !cur.dir_synced {
                sync_dir(&self.cfg.dir)?;
                cur.dir_synced = true;
            }
        }
        Ok(())
    }

    /// Closes the current file (synced); returns every file written.
    pub fn finish(mut self) -> io::Result<Vec<PathBuf>> {
        self.close_current()?;
        Ok(std::mem::take(&mut self.files))
    }

    fn close_current(&mut self) -> io::Result<()> {
        self.sync()?;
        self.current = None;
        Ok(())
    }

    /// Opens the next file and writes its `warcinfo` record.
    fn open_next(&mut self) -> io::Result<()> {
        let name = format!(
            "{}-{}-{:05}-{}.warc.gz",
            file_name_part(&self.cfg.prefix),
            timefmt::compact_millis(SystemTime::now()),
            self.serial,
            file_name_part(&self.cfg.hostname),
        );
        let path = self.cfg.dir.join(&name);
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)?;
        self.serial += 1;
        self.files.push(path.clone());
        let mut member = Vec::with_capacity(1024);
        self.encoder
            .encode_info(&name, &self.cfg.info, &mut member)?;
        file.write_all(&member)?;
        self.current = Some(OpenFile {
            path,
            file,
            len: member.len() as u64,
            exchanges: 0,
            dir_synced: false,
        });
        Ok(())
    }
}

/// Keeps file names portable: anything but letters, digits, `.`, `_` and
/// `-` becomes `_`.
fn file_name_part(s: &str) -> String {
    let s: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() { "_".to_string() } else { s }
}

/// Length of the HTTP head (through the blank line) at the start of `msg`,
/// or all of it when there is no blank line.
fn head_len(msg: &[u8]) -> usize {
    msg.windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or(msg.len(), |i| i + 4)
}

/// The `WARC-Payload-Digest` value of a payload: `sha1:` and base32.
pub fn payload_digest(payload: &[u8]) -> String {
    let d = sha1_base32(&[payload]);
    format!("sha1:{}", String::from_utf8_lossy(&d))
}

/// `sha1:` digest of the concatenation of `parts`, base32 (RFC 4648).
pub(crate) fn sha1_base32(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = Sha1::new();
    for p in parts {
        h.update(p);
    }
    let digest = h.finalize();
    let mut out = [0u8; 32];
    data_encoding::BASE32.encode_mut(&digest, &mut out);
    out
}

fn start_record(buf: &mut Vec<u8>, kind: &str, id: &[u8], date: SystemTime) {
    buf.extend_from_slice(b"WARC/1.1\r\nWARC-Type: ");
    buf.extend_from_slice(kind.as_bytes());
    buf.extend_from_slice(b"\r\nWARC-Record-ID: ");
    buf.extend_from_slice(id);
    buf.extend_from_slice(b"\r\nWARC-Date: ");
    buf.extend_from_slice(timefmt::iso_seconds(date).as_bytes());
    buf.extend_from_slice(b"\r\n");
}

fn put_digest(buf: &mut Vec<u8>, name: &str, digest: &[u8; 32]) {
    buf.extend_from_slice(name.as_bytes());
    buf.extend_from_slice(b": sha1:");
    buf.extend_from_slice(digest);
    buf.extend_from_slice(b"\r\n");
}

/// Appends `name: value` and CRLF without letting either break the
/// record's framing: in the name, control characters, spaces and colons
/// become `_`; in the value, CR and LF become spaces.
fn put_field(buf: &mut Vec<u8>, name: &str, value: &[u8]) {
    for &c in name.as_bytes() {
        buf.push(if c.is_ascii_control() || c == b':' || c == b' ' {
            b'_'
        } else {
            c
        });
    }
    buf.extend_from_slice(b": ");
    if value.iter().any(|&c| c == b'\r' || c == b'\n') {
        buf.extend(
            value
                .iter()
                .map(|&c| if c == b'\r' || c == b'\n' { b' ' } else { c }),
        );
    } else {
        buf.extend_from_slice(value);
    }
    buf.extend_from_slice(b"\r\n");
}

fn end_header(buf: &mut Vec<u8>, content_length: usize) {
    let _ = write!(buf, "Content-Length: {content_length}\r\n\r\n");
}

/// The WARC files of `dir` written with file-name prefix `prefix`
/// (`PREFIX-TIMESTAMP-SERIAL-HOST.warc.gz`), in serial order. A resumed
/// fetch uses it to find the file to [`recover`](super::recover) and the
/// next serial (see [`file_serial`]).
pub fn list_files(dir: &Path, prefix: &str) -> io::Result<Vec<PathBuf>> {
    let prefix = file_name_part(prefix);
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if let Some((p, serial)) = parse_name(&path)
            && p == prefix
        {
            found.push((serial, path));
        }
    }
    found.sort();
    Ok(found.into_iter().map(|(_, p)| p).collect())
}

/// The serial number in the name of a file written by [`WarcWriter`].
pub fn file_serial(path: &Path) -> Option<u32> {
    parse_name(path).map(|(_, serial)| serial)
}

/// Splits `PREFIX-TIMESTAMP-SERIAL-HOST.warc.gz` into prefix and serial.
fn parse_name(path: &Path) -> Option<(&str, u32)> {
    let name = path.file_name()?.to_str()?.strip_suffix(".warc.gz")?;
    // The prefix may hold dashes, the host name too; the timestamp and the
    // serial are the first 17-digit and 5-digit fields in a row.
    let fields: Vec<&str> = name.split('-').collect();
    (1..fields.len().saturating_sub(2)).find_map(|i| {
        let (ts, serial) = (fields[i], fields[i + 1]);
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if ts.len() == 17 && digits(ts) && serial.len() >= 5 && digits(serial) {
            let prefix_len = fields[..i].iter().map(|f| f.len() + 1).sum::<usize>() - 1;
            Some((&name[..prefix_len], serial.parse().ok()?))
        } else {
            None
        }
    })
}
