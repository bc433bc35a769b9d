//! [`WarcWriter`]: request/response records, one gzip member each, one
//! `write` per exchange, files rolled at a size limit.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use flate2::Compression;
use sha1::{Digest, Sha1};

use super::gzip::MemberWriter;
use super::ids::{IdGen, RECORD_ID_LEN};
use super::{Exchange, StoredExchange, WarcWriterConfig};
use crate::timefmt;

/// The `conformsTo` value of every `warcinfo` record.
const CONFORMS_TO: &str =
    "http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/";

/// Writes WARC files. Each exchange (request and response record, one gzip
/// member each) is compressed into memory and written with one `write` call,
/// so a crash leaves at most one torn exchange at the end of the file, which
/// [`recover`](super::recover) cuts off.
pub struct WarcWriter {
    cfg: WarcWriterConfig,
    serial: u32,
    current: Option<OpenFile>,
    files: Vec<PathBuf>,
    gz: MemberWriter,
    ids: IdGen,
    /// Uncompressed WARC header of the record being built.
    head: Vec<u8>,
    /// The compressed members of one exchange, written at once.
    out: Vec<u8>,
}

struct OpenFile {
    path: PathBuf,
    file: File,
    len: u64,
    /// Exchanges in this file.
    exchanges: u64,
    /// `WARC-Record-ID` of the file's `warcinfo` record, if known.
    info_id: Option<[u8; RECORD_ID_LEN]>,
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
            gz: MemberWriter::new(Compression::default()),
            ids: IdGen::new(),
            head: Vec::with_capacity(4096),
            out: Vec::with_capacity(64 * 1024),
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
        let info_id = first_record_id(&path);
        let file = OpenOptions::new().append(true).open(&path)?;
        let len = file.metadata()?.len();
        w.files.push(path.clone());
        w.current = Some(OpenFile {
            path,
            file,
            len,
            exchanges: 1,
            info_id,
            dir_synced: true,
        });
        Ok(w)
    }

    /// Sets the gzip compression level (0–9; default 6).
    pub fn set_compression_level(&mut self, level: u32) {
        self.gz = MemberWriter::new(Compression::new(level.min(9)));
    }

    /// The file records currently go to, if one is open.
    pub fn current_file(&self) -> Option<&Path> {
        self.current.as_ref().map(|f| f.path.as_path())
    }

    /// Stores a request and a response record.
    pub fn write_exchange(&mut self, ex: &Exchange<'_>) -> io::Result<StoredExchange> {
        // At most two rounds: when a new file is opened the records are
        // built again so that they name its warcinfo record.
        for _ in 0..2 {
            let info_id = self.current.as_ref().and_then(|f| f.info_id);
            self.build_exchange(ex, info_id.as_ref())?;
            let size = self.out.len() as u64;
            // Roll over before the exchange would push a file that already
            // holds exchanges past the limit.
            if let Some(cur) = &self.current
                && cur.exchanges > 0
                && cur.len + size > self.cfg.max_file_size
            {
                self.close_current()?;
            }
            if self.current.is_none() {
                self.open_next(ex.date)?;
                continue;
            }
            let cur = self.current.as_mut().expect("a file is open");
            cur.file.write_all(&self.out)?;
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
            return Ok(stored);
        }
        unreachable!("a freshly opened file takes any exchange")
    }

    /// Compresses the request and response records of `ex` into `self.out`.
    fn build_exchange(
        &mut self,
        ex: &Exchange<'_>,
        info_id: Option<&[u8; RECORD_ID_LEN]>,
    ) -> io::Result<()> {
        let req_id = self.ids.record_id();
        let resp_id = self.ids.record_id();
        let ip = ex.ip.map(|ip| ip.to_string());
        self.out.clear();

        let req_digest = sha1_base32(&[ex.request_head]);
        let req_payload = &ex.request_head[head_len(ex.request_head)..];
        let req_payload_digest = sha1_base32(&[req_payload]);
        self.head.clear();
        start_record(&mut self.head, "request", &req_id, ex.date);
        put_field(&mut self.head, "WARC-Target-URI", ex.target_uri.as_bytes());
        if let Some(ip) = &ip {
            put_field(&mut self.head, "WARC-IP-Address", ip.as_bytes());
        }
        put_field(&mut self.head, "WARC-Concurrent-To", &resp_id);
        if let Some(id) = info_id {
            put_field(&mut self.head, "WARC-Warcinfo-ID", id);
        }
        put_digest(&mut self.head, "WARC-Block-Digest", &req_digest);
        put_digest(&mut self.head, "WARC-Payload-Digest", &req_payload_digest);
        put_field(
            &mut self.head,
            "Content-Type",
            b"application/http;msgtype=request",
        );
        end_header(&mut self.head, ex.request_head.len());
        self.gz
            .member(&[&self.head, ex.request_head, b"\r\n\r\n"], &mut self.out)?;

        let block_digest = sha1_base32(&[ex.response_head, ex.payload]);
        let payload_digest = sha1_base32(&[ex.payload]);
        self.head.clear();
        start_record(&mut self.head, "response", &resp_id, ex.date);
        put_field(&mut self.head, "WARC-Target-URI", ex.target_uri.as_bytes());
        if let Some(ip) = &ip {
            put_field(&mut self.head, "WARC-IP-Address", ip.as_bytes());
        }
        put_field(&mut self.head, "WARC-Concurrent-To", &req_id);
        if let Some(id) = info_id {
            put_field(&mut self.head, "WARC-Warcinfo-ID", id);
        }
        put_digest(&mut self.head, "WARC-Block-Digest", &block_digest);
        put_digest(&mut self.head, "WARC-Payload-Digest", &payload_digest);
        if let Some(t) = ex.truncated {
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
        end_header(&mut self.head, ex.response_head.len() + ex.payload.len());
        self.gz.member(
            &[&self.head, ex.response_head, ex.payload, b"\r\n\r\n"],
            &mut self.out,
        )
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
    fn open_next(&mut self, date: SystemTime) -> io::Result<()> {
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

        let mut block = Vec::with_capacity(512);
        for (k, v) in &self.cfg.info {
            put_field(&mut block, k, v.as_bytes());
        }
        put_field(&mut block, "format", b"WARC File Format 1.1");
        put_field(&mut block, "conformsTo", CONFORMS_TO.as_bytes());
        let id = self.ids.record_id();
        self.head.clear();
        start_record(&mut self.head, "warcinfo", &id, date);
        put_field(&mut self.head, "WARC-Filename", name.as_bytes());
        put_digest(&mut self.head, "WARC-Block-Digest", &sha1_base32(&[&block]));
        put_field(&mut self.head, "Content-Type", b"application/warc-fields");
        end_header(&mut self.head, block.len());
        let mut member = Vec::with_capacity(1024);
        self.gz
            .member(&[&self.head, &block, b"\r\n\r\n"], &mut member)?;
        file.write_all(&member)?;
        self.files.push(path.clone());
        self.current = Some(OpenFile {
            path,
            file,
            len: member.len() as u64,
            exchanges: 0,
            info_id: Some(id),
            dir_synced: false,
        });
        Ok(())
    }
}

/// The `WARC-Record-ID` of the first record of `path` if it is a `warcinfo`.
fn first_record_id(path: &Path) -> Option<[u8; RECORD_ID_LEN]> {
    let mut r = super::WarcReader::open(path, 0).ok()?;
    let mut rec = super::WarcRecord::default();
    if !r.read_next(&mut rec).ok()? || rec.record_type() != Some("warcinfo") {
        return None;
    }
    rec.header("WARC-Record-ID")?.as_bytes().try_into().ok()
}

fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
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
    let (y, mo, d, h, mi, s, _) = timefmt::civil(date);
    let _ = write!(
        buf,
        "\r\nWARC-Date: {y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z\r\n"
    );
}

fn put_digest(buf: &mut Vec<u8>, name: &str, digest: &[u8; 32]) {
    buf.extend_from_slice(name.as_bytes());
    buf.extend_from_slice(b": sha1:");
    buf.extend_from_slice(digest);
    buf.extend_from_slice(b"\r\n");
}

/// Appends `name: value` and CRLF; control characters in either (which
/// would break the record's framing) become spaces, and a name loses any
/// colon.
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
