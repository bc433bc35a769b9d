//! [`WarcWriter`]: request, response and metadata records, one gzip member
//! each, one `write` per exchange, files rolled at a size limit, each with
//! its CDXJ index written beside it when it is closed.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use sha1::{Digest, Sha1};

use super::cdxj;
use super::gzip::{MEMBER_OVERHEAD, MemberWriter, finish_member};
use super::ids::{IdGen, RECORD_ID_LEN};
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

/// Turns exchanges into their WARC records, compressed, ready for
/// [`WarcWriter::write_encoded`]. Compressing is most of the cost of
/// storing a page, so a fetcher can keep one encoder per worker thread and
/// leave only the `write` to the thread that owns the [`WarcWriter`]. An
/// encoder reuses its buffers and its deflate state.
///
/// Each record is compressed without its first line (`WARC/1.1`): the
/// writer puts that line back, with the `WARC-Warcinfo-ID` of the file the
/// record lands in, which only the writer knows (see `gzip::finish_member`).
pub struct ExchangeEncoder {
    gz: MemberWriter,
    ids: IdGen,
    /// Uncompressed WARC header of the record being built.
    head: Vec<u8>,
    ip: String,
}

/// The compressed records of one exchange (request, response or revisit,
/// and a metadata record when asked for), as made by
/// [`ExchangeEncoder::encode`], with the start of the CDXJ line of its
/// response. Reuse one value for many exchanges to keep its buffers.
#[derive(Debug, Clone, Default)]
pub struct EncodedExchange {
    /// Raw deflate streams of the records, end to end.
    deflated: Vec<u8>,
    /// Per record: where its stream ends in `deflated`, and the CRC-32 and
    /// length of what it compresses.
    records: Vec<(usize, u32, u32)>,
    /// The CDXJ line of the response or revisit record, up to its place in
    /// the file ([`cdxj::Capture::line_head`]), and which record it is.
    index: Option<(usize, String)>,
}

impl EncodedExchange {
    /// Compressed size of the records (without what the writer adds, a
    /// few dozen bytes per record).
    pub fn len(&self) -> usize {
        self.deflated.len()
    }

    /// True before anything was encoded into it.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    fn clear(&mut self) {
        self.deflated.clear();
        self.records.clear();
        self.index = None;
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

    /// Builds the request and response records of `ex` (and its metadata
    /// record, when it has fields for one) into `out`, replacing what it
    /// held.
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

    /// The records of one exchange, in the order they are stored: the
    /// request, the response (or revisit, whose CDXJ line starts here),
    /// then the metadata record when `ex` has fields for one.
    fn encode_as(
        &mut self,
        ex: &Exchange<'_>,
        revisit: Option<&Revisit>,
        out: &mut EncodedExchange,
    ) -> io::Result<()> {
        out.clear();
        let req_id = self.ids.record_id();
        let resp_id = self.ids.record_id();
        let date = timefmt::iso_millis(ex.date);
        self.ip.clear();
        if let Some(ip) = ex.ip {
            let _ = std::fmt::Write::write_fmt(&mut self.ip, format_args!("{ip}"));
        }
        self.request_record(ex, &req_id, &resp_id, &date, out)?;
        let (kind, payload_digest) =
            self.response_record(ex, revisit, &resp_id, &req_id, &date, out)?;
        let digest = payload_digest.map(|pd| {
            let mut d = String::with_capacity(37);
            d.push_str("sha1:");
            d.push_str(std::str::from_utf8(&pd).unwrap_or_default());
            d
        });
        let capture = cdxj::Capture {
            record_type: kind,
            url: ex.target_uri,
            date: &date,
            http_head: Some(ex.response_head),
            content_type: None,
            digest: digest.as_deref(),
        };
        out.index = Some((1, capture.line_head()));

        if let Some(fields) = ex.metadata {
            self.metadata(ex, fields, &resp_id, &date, out)?;
        }
        Ok(())
    }

    /// The `request` record: the request head as sent, concurrent to the
    /// response `resp_id`.
    fn request_record(
        &mut self,
        ex: &Exchange<'_>,
        req_id: &[u8],
        resp_id: &[u8],
        date: &str,
        out: &mut EncodedExchange,
    ) -> io::Result<()> {
        let req_digest = sha1_base32(&[ex.request_head]);
        let req_payload = &ex.request_head[head_len(ex.request_head)..];
        let req_payload_digest = sha1_base32(&[req_payload]);
        self.head.clear();
        start_record(&mut self.head, "request", req_id, date);
        self.put_fetch_fields(ex);
        put_field(&mut self.head, "WARC-Concurrent-To", resp_id);
        put_digest(&mut self.head, "WARC-Block-Digest", &req_digest);
        put_digest(&mut self.head, "WARC-Payload-Digest", &req_payload_digest);
        put_field(
            &mut self.head,
            "Content-Type",
            b"application/http;msgtype=request",
        );
        end_header(&mut self.head, ex.request_head.len());
        let head = std::mem::take(&mut self.head);
        let stored = self.record(&[&head, ex.request_head, b"\r\n\r\n"], out);
        self.head = head;
        stored
    }

    /// The `response` record, or with `revisit` a `revisit` record. Returns
    /// its type and its payload digest when the record has one.
    fn response_record(
        &mut self,
        ex: &Exchange<'_>,
        revisit: Option<&Revisit>,
        resp_id: &[u8],
        req_id: &[u8],
        date: &str,
        out: &mut EncodedExchange,
    ) -> io::Result<(&'static str, Option<[u8; 32]>)> {
        // A revisit's block is the head alone; its payload digest is that of
        // the payload it stands for.
        let payload = if revisit.is_some() {
            &[][..]
        } else {
            ex.payload
        };
        let block_digest = sha1_base32(&[ex.response_head, payload]);
        let payload_digest = sha1_base32(&[ex.payload]);
        let kind = if revisit.is_some() {
            "revisit"
        } else {
            "response"
        };
        self.head.clear();
        start_record(&mut self.head, kind, resp_id, date);
        self.put_fetch_fields(ex);
        put_field(&mut self.head, "WARC-Concurrent-To", req_id);
        put_digest(&mut self.head, "WARC-Block-Digest", &block_digest);
        let with_payload_digest = match revisit {
            None => true,
            Some(r) => r.profile == RevisitProfile::IdenticalPayloadDigest,
        };
        if with_payload_digest {
            put_digest(&mut self.head, "WARC-Payload-Digest", &payload_digest);
        }
        if let Some(r) = revisit {
            self.put_revisit_fields(ex, r);
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
        let head = std::mem::take(&mut self.head);
        let stored = self.record(&[&head, ex.response_head, payload, b"\r\n\r\n"], out);
        self.head = head;
        stored?;
        Ok((kind, with_payload_digest.then_some(payload_digest)))
    }

    /// The fields that say what a revisit stands for: its profile, the
    /// record it refers to, and that record's URL and date.
    fn put_revisit_fields(&mut self, ex: &Exchange<'_>, r: &Revisit) {
        put_field(&mut self.head, "WARC-Profile", r.profile.uri().as_bytes());
        if let Some(id) = &r.refers_to {
            put_field(&mut self.head, "WARC-Refers-To", id.as_bytes());
        }
        put_field(
            &mut self.head,
            "WARC-Refers-To-Target-URI",
            ex.target_uri.as_bytes(),
        );
        if let Some(date) = r.refers_to_date {
            put_field(
                &mut self.head,
                "WARC-Refers-To-Date",
                timefmt::iso_millis(date).as_bytes(),
            );
        }
    }

    /// The fields every record of a fetch has after its date: the URL, the
    /// address, and how it was fetched (`WARC-Protocol`, one field per
    /// protocol, and `WARC-Cipher-Suite`).
    fn put_fetch_fields(&mut self, ex: &Exchange<'_>) {
        put_field(&mut self.head, "WARC-Target-URI", ex.target_uri.as_bytes());
        if !self.ip.is_empty() {
            put_field(&mut self.head, "WARC-IP-Address", self.ip.as_bytes());
        }
        for p in ex.protocols {
            put_field(&mut self.head, "WARC-Protocol", p.as_bytes());
        }
        if let Some(c) = ex.cipher_suite {
            put_field(&mut self.head, "WARC-Cipher-Suite", c.as_bytes());
        }
    }

    /// The `metadata` record of a fetch: `fields` as `application/warc-fields`.
    fn metadata(
        &mut self,
        ex: &Exchange<'_>,
        fields: &WarcFields,
        resp_id: &[u8],
        date: &str,
        out: &mut EncodedExchange,
    ) -> io::Result<()> {
        let block = fields.as_bytes();
        let id = self.ids.record_id();
        self.head.clear();
        start_record(&mut self.head, "metadata", &id, date);
        put_field(&mut self.head, "WARC-Target-URI", ex.target_uri.as_bytes());
        put_field(&mut self.head, "WARC-Concurrent-To", resp_id);
        put_digest(&mut self.head, "WARC-Block-Digest", &sha1_base32(&[block]));
        put_field(&mut self.head, "Content-Type", b"application/warc-fields");
        end_header(&mut self.head, block.len());
        let head = std::mem::take(&mut self.head);
        let stored = self.record(&[&head, block, b"\r\n\r\n"], out);
        self.head = head;
        stored
    }

    /// Compresses one record (without its version line) into `out`.
    fn record(&mut self, parts: &[&[u8]], out: &mut EncodedExchange) -> io::Result<()> {
        let (crc, len) = self.gz.deflate_raw(parts, &mut out.deflated)?;
        out.records.push((out.deflated.len(), crc, len));
        Ok(())
    }

    /// Appends `record` to `out` as one whole gzip member (its `WARC/1.1`
    /// line, a new `WARC-Record-ID`, `WARC-Date`, the record's own fields,
    /// `WARC-Block-Digest`, `Content-Type` and `Content-Length`), for files
    /// written by other means than [`WarcWriter`]: the records derived from
    /// a crawl's files (`conversion`, `metadata`) and their `warcinfo`.
    /// Returns the record's ID (`<urn:uuid:...>`).
    pub fn encode_record(&mut self, record: &Record<'_>, out: &mut Vec<u8>) -> io::Result<String> {
        let id = self.ids.record_id();
        self.head.clear();
        self.head.extend_from_slice(b"WARC/1.1\r\n");
        start_record(&mut self.head, record.kind, &id, record.date);
        for (name, value) in record.fields {
            put_field(&mut self.head, name, value.as_bytes());
        }
        put_digest(
            &mut self.head,
            "WARC-Block-Digest",
            &sha1_base32(&[record.block]),
        );
        put_field(
            &mut self.head,
            "Content-Type",
            record.content_type.as_bytes(),
        );
        end_header(&mut self.head, record.block.len());
        let head = std::mem::take(&mut self.head);
        let written = self.gz.member(&[&head, record.block, b"\r\n\r\n"], out);
        self.head = head;
        written?;
        Ok(String::from_utf8_lossy(&id).into_owned())
    }

    /// The `warcinfo` record that starts file `name`, whose record ID is `id`.
    fn encode_info(
        &mut self,
        name: &str,
        id: &[u8],
        info: &[(String, String)],
        out: &mut Vec<u8>,
    ) -> io::Result<()> {
        let mut block = Vec::with_capacity(512);
        for (k, v) in info {
            put_field(&mut block, k, v.as_bytes());
        }
        put_field(&mut block, "format", b"WARC File Format 1.1");
        put_field(&mut block, "conformsTo", CONFORMS_TO.as_bytes());
        self.head.clear();
        self.head.extend_from_slice(b"WARC/1.1\r\n");
        start_record(
            &mut self.head,
            "warcinfo",
            id,
            &timefmt::iso_millis(SystemTime::now()),
        );
        put_field(&mut self.head, "WARC-Filename", name.as_bytes());
        put_digest(&mut self.head, "WARC-Block-Digest", &sha1_base32(&[&block]));
        put_field(&mut self.head, "Content-Type", b"application/warc-fields");
        end_header(&mut self.head, block.len());
        self.gz.member(&[&self.head, &block, b"\r\n\r\n"], out)
    }
}

/// A record for [`ExchangeEncoder::encode_record`].
#[derive(Debug, Clone, Copy)]
pub struct Record<'a> {
    /// `WARC-Type`.
    pub kind: &'a str,
    /// `WARC-Date`, as it is to be written.
    pub date: &'a str,
    /// The fields after `WARC-Date`, in order (`WARC-Target-URI`,
    /// `WARC-Refers-To`, ...). A line end in a value becomes a space.
    pub fields: &'a [(&'a str, &'a str)],
    /// The block's `Content-Type`.
    pub content_type: &'a str,
    /// The block.
    pub block: &'a [u8],
}

/// A WARC file the writer closed, with the CDXJ index it wrote beside it:
/// the one place where a file is done (an upload can start from here).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClosedFile {
    /// The WARC file (synced).
    pub warc: PathBuf,
    /// Its index ([`cdxj::index_path`]), written atomically.
    pub index: PathBuf,
    /// Index lines (captures) in it.
    pub captures: u64,
}

/// Writes WARC files. Each exchange (request, response, metadata record,
/// one gzip member each) is compressed into memory; exchanges are written
/// in batches of up to [`BATCH`] bytes, one `write` call each, when the
/// batch is full and on [`WarcWriter::flush`] (a `write` costs the kernel
/// about as much for a few KB as for a few hundred: one per exchange took
/// four times the system time of one per batch). So a crash leaves at most
/// one torn batch at the end of the file, whose last exchange
/// [`recover`](super::recover) cuts off; a program that logs what it
/// stored flushes before it logs. Each record gets
/// the `WARC-Warcinfo-ID` of its file. The CDXJ lines of the file's
/// captures are gathered in bounded memory ([`cdxj::IndexSorter`]) and
/// written, sorted, beside the file when it is closed ([`ClosedFile`]).
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
///     protocols: &["http/1.1"],
///     cipher_suite: None,
///     metadata: None,
/// })?;
/// let files = w.finish()?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct WarcWriter {
    cfg: WarcWriterConfig,
    serial: u32,
    current: Option<OpenFile>,
    files: Vec<PathBuf>,
    closed: Vec<ClosedFile>,
    encoder: ExchangeEncoder,
    encoded: EncodedExchange,
}

/// Most bytes of exchanges held before they are written.
pub const BATCH: usize = 256 * 1024;

struct OpenFile {
    path: PathBuf,
    file: File,
    /// Bytes of the file, written or in `pending`.
    len: u64,
    /// Exchanges not yet written, in full (the end of the file).
    pending: Vec<u8>,
    /// Exchanges in this file.
    exchanges: u64,
    /// The directory entry was fsynced.
    dir_synced: bool,
    /// `WARC/1.1` and the `WARC-Warcinfo-ID` line that start each record.
    prefix: Vec<u8>,
    prefix_crc: crc32fast::Hasher,
    /// CDXJ lines of the file's captures.
    index: cdxj::IndexSorter,
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
            closed: Vec::new(),
            encoder: ExchangeEncoder::new(),
            encoded: EncodedExchange::default(),
        })
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

    /// The files closed since the last call, each with its index.
    pub fn take_closed(&mut self) -> Vec<ClosedFile> {
        std::mem::take(&mut self.closed)
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

    /// Stores an exchange that an [`ExchangeEncoder`] built: held with the
    /// batch, which is written when it is full, at [`WarcWriter::flush`]
    /// and when the file is closed. A file that already holds exchanges is
    /// closed first if this one would take it past the size limit, and one
    /// that reaches it is closed after.
    pub fn write_encoded(&mut self, enc: &EncodedExchange) -> io::Result<StoredExchange> {
        if enc.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "nothing was encoded into this EncodedExchange",
            ));
        }
        let prefix_len = PREFIX_LEN;
        let size = (enc.deflated.len() + enc.records.len() * (MEMBER_OVERHEAD + prefix_len)) as u64;
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
        let exchange_start = cur.pending.len();
        let mut start = 0;
        let mut indexed = None;
        for (i, &(end, crc, len)) in enc.records.iter().enumerate() {
            let member_start = cur.pending.len() - exchange_start;
            finish_member(
                &cur.prefix,
                &cur.prefix_crc,
                &enc.deflated[start..end],
                crc,
                len,
                &mut cur.pending,
            );
            start = end;
            if let Some((record, head)) = &enc.index
                && *record == i
            {
                let length = cur.pending.len() - exchange_start - member_start;
                indexed = Some((head, member_start, length));
            }
        }
        let length = (cur.pending.len() - exchange_start) as u64;
        let stored = StoredExchange {
            file: cur.path.clone(),
            offset: cur.len,
            length,
        };
        if let Some((head, at, length)) = indexed {
            let name = cur
                .path
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default();
            cur.index
                .push_line(head, length as u64, cur.len + at as u64, &name);
        }
        cur.len += length;
        cur.exchanges += 1;
        if cur.len >= self.cfg.max_file_size {
            self.close_current()?;
        } else if cur.pending.len() >= BATCH {
            self.flush()?;
        }
        Ok(stored)
    }

    /// Writes the exchanges held so far (one `write`). After an error the
    /// file is left as it is (part of a batch may be in it): the next
    /// exchange starts a new file, and [`recover`](super::recover) cuts
    /// this one (its index is built again when it is read back).
    pub fn flush(&mut self) -> io::Result<()> {
        let Some(cur) = &mut self.current else {
            return Ok(());
        };
        if cur.pending.is_empty() {
            return Ok(());
        }
        if let Err(e) = cur.file.write_all(&cur.pending) {
            self.current = None;
            return Err(e);
        }
        cur.pending.clear();
        Ok(())
    }

    /// Flushes and fsyncs the current file.
    pub fn sync(&mut self) -> io::Result<()> {
        self.flush()?;
        if let Some(cur) = &mut self.current {
            cur.file.sync_data()?;
            if !cur.dir_synced {
                sync_dir(&self.cfg.dir)?;
                cur.dir_synced = true;
            }
        }
        Ok(())
    }

    /// Closes the current file (synced, its index written); returns every
    /// file written.
    pub fn finish(mut self) -> io::Result<Vec<PathBuf>> {
        self.close_current()?;
        Ok(std::mem::take(&mut self.files))
    }

    /// Closes the current file, if one is open (see [`WarcWriter::take_closed`]);
    /// the next record opens a new one.
    pub fn close_file(&mut self) -> io::Result<()> {
        self.close_current()
    }

    /// Closes the current file: synced, then its index written beside it.
    fn close_current(&mut self) -> io::Result<()> {
        self.sync()?;
        let Some(cur) = self.current.take() else {
            return Ok(());
        };
        let index = cdxj::index_path(&cur.path);
        let captures = cur
            .index
            .write(&index)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", index.display())))?;
        self.closed.push(ClosedFile {
            warc: cur.path,
            index,
            captures,
        });
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
        let id = self.encoder.ids.record_id();
        let mut member = Vec::with_capacity(1024);
        self.encoder
            .encode_info(&name, &id, &self.cfg.info, &mut member)?;
        file.write_all(&member)?;
        let mut prefix = Vec::with_capacity(PREFIX_LEN);
        prefix.extend_from_slice(b"WARC/1.1\r\nWARC-Warcinfo-ID: ");
        prefix.extend_from_slice(&id);
        prefix.extend_from_slice(b"\r\n");
        debug_assert_eq!(prefix.len(), PREFIX_LEN);
        let mut prefix_crc = crc32fast::Hasher::new();
        prefix_crc.update(&prefix);
        self.current = Some(OpenFile {
            path,
            file,
            len: member.len() as u64,
            pending: Vec::with_capacity(BATCH + 64 * 1024),
            exchanges: 0,
            dir_synced: false,
            prefix,
            prefix_crc,
            index: cdxj::IndexSorter::new(&self.cfg.dir),
        });
        Ok(())
    }
}

/// Length of `WARC/1.1`, the `WARC-Warcinfo-ID` line and their line ends.
const PREFIX_LEN: usize = 10 + 18 + RECORD_ID_LEN + 2;

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

/// The first fields of a record (its version line is not here: see
/// [`ExchangeEncoder`]); `date` is its `WARC-Date`, with milliseconds.
fn start_record(buf: &mut Vec<u8>, kind: &str, id: &[u8], date: &str) {
    buf.extend_from_slice(b"WARC-Type: ");
    buf.extend_from_slice(kind.as_bytes());
    buf.extend_from_slice(b"\r\nWARC-Record-ID: ");
    buf.extend_from_slice(id);
    buf.extend_from_slice(b"\r\nWARC-Date: ");
    buf.extend_from_slice(date.as_bytes());
    buf.extend_from_slice(b"\r\n");
}

/// The block of an `application/warc-fields` record (a fetch's `metadata`
/// record), written field by field as it is built: `name: value` and CRLF
/// each, as [`put_field`] writes them, so that a page's hundreds of
/// `outlink` lines take neither a string each nor a second copy. Reuse one
/// value from record to record ([`WarcFields::clear`]) to keep its buffer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WarcFields {
    block: Vec<u8>,
}

impl WarcFields {
    /// No fields.
    pub fn new() -> WarcFields {
        WarcFields::default()
    }

    /// Appends the field `name: value`. CR and LF in the value become
    /// spaces, and control characters, spaces and colons in the name `_`,
    /// so that neither can break the record's framing.
    pub fn push(&mut self, name: &str, value: &str) {
        put_field(&mut self.block, name, value.as_bytes());
    }

    /// Appends the field `name` whose value is `parts` put end to end
    /// (e.g. a URL, a separator and a word), cleaned as by
    /// [`WarcFields::push`].
    pub fn push_parts(&mut self, name: &str, parts: &[&str]) {
        put_name(&mut self.block, name);
        let value_start = self.block.len();
        for part in parts {
            self.block.extend_from_slice(part.as_bytes());
        }
        end_value(&mut self.block, value_start);
    }

    /// Removes every field, keeping the buffer.
    pub fn clear(&mut self) {
        self.block.clear();
    }

    /// True if no field was added.
    pub fn is_empty(&self) -> bool {
        self.block.is_empty()
    }

    /// The fields as they are stored: `name: value` and CRLF each.
    pub fn as_bytes(&self) -> &[u8] {
        &self.block
    }
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
/// (Names and values are copied whole when they are clean, as they
/// nearly always are: this runs for every field of every record.)
fn put_field(buf: &mut Vec<u8>, name: &str, value: &[u8]) {
    buf.reserve(name.len() + value.len() + 4);
    put_name(buf, name);
    let value_start = buf.len();
    buf.extend_from_slice(value);
    end_value(buf, value_start);
}

/// Ends the field whose value starts at `value_start` in `buf`: CR and LF
/// in the value become spaces (see [`put_field`]), then CRLF.
fn end_value(buf: &mut Vec<u8>, value_start: usize) {
    let value = &mut buf[value_start..];
    if memchr::memchr2(b'\r', b'\n', value).is_some() {
        for c in value.iter_mut().filter(|c| **c == b'\r' || **c == b'\n') {
            *c = b' ';
        }
    }
    buf.extend_from_slice(b"\r\n");
}

/// Appends `name: ` with control characters, spaces and colons in the
/// name turned into `_` (see [`put_field`]).
fn put_name(buf: &mut Vec<u8>, name: &str) {
    let bad_in_name = |c: u8| c.is_ascii_control() || c == b':' || c == b' ';
    let name = name.as_bytes();
    if name.iter().any(|&c| bad_in_name(c)) {
        buf.extend(name.iter().map(|&c| if bad_in_name(c) { b'_' } else { c }));
    } else {
        buf.extend_from_slice(name);
    }
    buf.extend_from_slice(b": ");
}

fn end_header(buf: &mut Vec<u8>, content_length: usize) {
    buf.extend_from_slice(b"Content-Length: ");
    push_decimal(buf, content_length as u64);
    buf.extend_from_slice(b"\r\n\r\n");
}

/// Appends `n` in decimal (without the formatting machinery).
fn push_decimal(buf: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    buf.extend_from_slice(&digits[at..]);
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
