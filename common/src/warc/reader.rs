//! [`WarcReader`]: gzip member by member, with offsets, reusing its buffers;
//! and [`recover`], which cuts a torn tail.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use flate2::{Crc, Decompress, FlushDecompress, Status};

use super::{Recovery, WarcError, WarcRecord};

/// Size of the compressed input buffer.
const IN_BUF: usize = 256 * 1024;
/// Size of the buffer each inflate call writes into.
const OUT_CHUNK: usize = 128 * 1024;
/// A WARC header longer than this is not believed.
const MAX_HEADER: usize = 1 << 20;

/// Reads the records of a `.warc.gz` file in order, one gzip member per
/// record (as [`WarcWriter`](super::WarcWriter) and most crawlers write them).
///
/// ```no_run
/// use common::warc::{WarcReader, WarcRecord};
/// let mut reader = WarcReader::open("crawl/fetched/00001/a.warc.gz", 1 << 20)?;
/// let mut rec = WarcRecord::default();
/// while reader.read_next(&mut rec)? {
///     println!("{} {} {:?}", rec.offset, rec.length, rec.target_uri());
/// }
/// # Ok::<(), common::warc::WarcError>(())
/// ```
pub struct WarcReader {
    path: PathBuf,
    file: File,
    max_block: usize,
    /// Compressed input: `buf[pos..end]` is not consumed yet.
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    /// File offset of `buf[0]`.
    buf_off: u64,
    eof: bool,
    done: bool,
    inflate: Decompress,
    chunk: Vec<u8>,
    /// Decompressed WARC header of the current record.
    hdr: Vec<u8>,
    /// Strings of earlier records' headers, reused.
    pool: Vec<String>,
}

/// Where the bytes of the member being inflated go.
struct Sink {
    /// The header has been parsed; bytes now belong to the block.
    in_block: bool,
    content_length: u64,
    /// Block bytes seen (kept or not).
    seen: u64,
    /// Bytes after the block (the `\r\n\r\n` that ends a record).
    tail: u64,
}

enum Failure {
    /// The file ends inside this member.
    Truncated,
    /// The member is not a WARC record in gzip.
    Malformed(String),
    Io(io::Error),
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Failure {
        Failure::Io(e)
    }
}

impl WarcReader {
    /// Opens a file. Blocks longer than `max_block` bytes are cut in memory
    /// (the rest is skipped, `block_cut` is set).
    pub fn open(path: impl AsRef<Path>, max_block: usize) -> Result<WarcReader, WarcError> {
        WarcReader::open_at(path, 0, max_block)
    }

    /// Opens a file to read from `offset` on, which must be where a record's
    /// gzip member starts (an offset from [`WarcRecord::offset`], a
    /// [`StoredExchange`](super::StoredExchange) or a CDX index).
    pub fn open_at(
        path: impl AsRef<Path>,
        offset: u64,
        max_block: usize,
    ) -> Result<WarcReader, WarcError> {
        let path = path.as_ref().to_path_buf();
        let io_err = |source| WarcError::Io {
            path: path.clone(),
            source,
        };
        let mut file = File::open(&path).map_err(io_err)?;
        if offset > 0 {
            file.seek(SeekFrom::Start(offset)).map_err(io_err)?;
        }
        Ok(WarcReader {
            path,
            file,
            max_block,
            buf: vec![0; IN_BUF],
            pos: 0,
            end: 0,
            buf_off: offset,
            eof: false,
            done: false,
            inflate: Decompress::new(false),
            chunk: vec![0; OUT_CHUNK],
            hdr: Vec::with_capacity(4096),
            pool: Vec::new(),
        })
    }

    /// The file being read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Fills `rec` with the next record; `Ok(false)` at a clean end. After an
    /// error the reader is finished (returns `Ok(false)`).
    pub fn read_next(&mut self, rec: &mut WarcRecord) -> Result<bool, WarcError> {
        if self.done {
            return Ok(false);
        }
        let offset = self.buf_off + self.pos as u64;
        match self.read_member(rec) {
            Ok(more) => {
                self.done = !more;
                Ok(more)
            }
            Err(f) => {
                self.done = true;
                let path = self.path.clone();
                Err(match f {
                    Failure::Truncated => WarcError::Truncated { path, offset },
                    Failure::Malformed(reason) => WarcError::Malformed {
                        path,
                        offset,
                        reason,
                    },
                    Failure::Io(source) => WarcError::Io { path, source },
                })
            }
        }
    }

    fn read_member(&mut self, rec: &mut WarcRecord) -> Result<bool, Failure> {
        if !self.ensure(1)? {
            return Ok(false);
        }
        let offset = self.buf_off + self.pos as u64;
        for (name, value) in rec.headers.drain(..) {
            self.pool.push(name);
            self.pool.push(value);
        }
        rec.block.clear();
        rec.block_cut = false;
        rec.offset = offset;
        rec.length = 0;

        self.skip_gzip_header()?;
        self.inflate.reset(false);
        self.hdr.clear();
        let mut crc = Crc::new();
        let mut sink = Sink {
            in_block: false,
            content_length: 0,
            seen: 0,
            tail: 0,
        };
        let mut stalls = 0;
        loop {
            if self.pos == self.end && !self.eof {
                self.fill()?;
            }
            let (in0, out0) = (self.inflate.total_in(), self.inflate.total_out());
            let status = self
                .inflate
                .decompress(
                    &self.buf[self.pos..self.end],
                    &mut self.chunk,
                    FlushDecompress::None,
                )
                .map_err(|e| Failure::Malformed(format!("bad deflate data: {e}")))?;
            let used = (self.inflate.total_in() - in0) as usize;
            let made = (self.inflate.total_out() - out0) as usize;
            self.pos += used;
            if made > 0 {
                let out = &self.chunk[..made];
                crc.update(out);
                take(
                    out,
                    &mut sink,
                    &mut self.hdr,
                    rec,
                    &mut self.pool,
                    self.max_block,
                )?;
            }
            if status == Status::StreamEnd {
                break;
            }
            if used == 0 && made == 0 {
                if self.pos == self.end && self.eof {
                    return Err(Failure::Truncated);
                }
                // Input and room were there and nothing moved: should not
                // happen, but never spin on it.
                stalls += 1;
                if stalls > 3 {
                    return Err(Failure::Malformed("deflate stream stalls".into()));
                }
            } else {
                stalls = 0;
            }
        }

        if !self.ensure(8)? {
            return Err(Failure::Truncated);
        }
        let t = &self.buf[self.pos..self.pos + 8];
        let want_crc = u32::from_le_bytes([t[0], t[1], t[2], t[3]]);
        let want_len = u32::from_le_bytes([t[4], t[5], t[6], t[7]]);
        self.pos += 8;
        if want_crc != crc.sum() || want_len != crc.amount() {
            return Err(Failure::Malformed("gzip checksum mismatch".into()));
        }
        if !sink.in_block {
            return Err(Failure::Malformed(
                "no end of the WARC header in the member".into(),
            ));
        }
        if sink.seen < sink.content_length {
            return Err(Failure::Malformed(format!(
                "block has {} bytes, Content-Length says {}",
                sink.seen, sink.content_length
            )));
        }
        if sink.tail > 4 {
            return Err(Failure::Malformed(
                "more than one record in a gzip member (not supported)".into(),
            ));
        }
        rec.length = self.buf_off + self.pos as u64 - offset;
        Ok(true)
    }

    /// Checks and skips the gzip member header (RFC 1952, section 2.3).
    fn skip_gzip_header(&mut self) -> Result<(), Failure> {
        let have = self.ensure(10)?;
        let avail = &self.buf[self.pos..self.end];
        if avail[0] != 0x1f || (avail.len() > 1 && avail[1] != 0x8b) {
            return Err(Failure::Malformed("no gzip member starts here".into()));
        }
        if avail.len() > 2 && avail[2] != 8 {
            return Err(Failure::Malformed("gzip member is not deflate".into()));
        }
        if !have {
            return Err(Failure::Truncated);
        }
        let flags = avail[3];
        if flags & 0xe0 != 0 {
            return Err(Failure::Malformed("reserved gzip flags set".into()));
        }
        self.pos += 10;
        if flags & 4 != 0 {
            if !self.ensure(2)? {
                return Err(Failure::Truncated);
            }
            let xlen = usize::from(u16::from_le_bytes([
                self.buf[self.pos],
                self.buf[self.pos + 1],
            ]));
            if !self.ensure(2 + xlen)? {
                return Err(Failure::Truncated);
            }
            self.pos += 2 + xlen;
        }
        for flag in [8, 16] {
            if flags & flag != 0 {
                self.skip_zero_terminated()?;
            }
        }
        if flags & 2 != 0 {
            if !self.ensure(2)? {
                return Err(Failure::Truncated);
            }
            self.pos += 2;
        }
        Ok(())
    }

    fn skip_zero_terminated(&mut self) -> Result<(), Failure> {
        let mut skipped = 0usize;
        loop {
            if !self.ensure(1)? {
                return Err(Failure::Truncated);
            }
            let avail = &self.buf[self.pos..self.end];
            if let Some(i) = avail.iter().position(|&b| b == 0) {
                self.pos += i + 1;
                return Ok(());
            }
            skipped += avail.len();
            self.pos = self.end;
            if skipped > MAX_HEADER {
                return Err(Failure::Malformed("endless gzip header field".into()));
            }
        }
    }

    /// Makes `n` bytes available at `pos`; false if the file ends first.
    fn ensure(&mut self, n: usize) -> io::Result<bool> {
        while self.end - self.pos < n {
            if self.eof {
                return Ok(false);
            }
            if self.pos + n > self.buf.len() && n > self.buf.len() {
                self.buf.resize(n, 0);
            }
            self.fill()?;
        }
        Ok(true)
    }

    /// Moves unread bytes to the front and reads more.
    fn fill(&mut self) -> io::Result<()> {
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.end, 0);
            self.buf_off += self.pos as u64;
            self.end -= self.pos;
            self.pos = 0;
        }
        if self.end == self.buf.len() {
            return Ok(());
        }
        loop {
            match self.file.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// Routes decompressed bytes: the WARC header until its blank line, then the
/// block (kept up to `max_block`), then the record's end.
fn take(
    mut data: &[u8],
    sink: &mut Sink,
    hdr: &mut Vec<u8>,
    rec: &mut WarcRecord,
    pool: &mut Vec<String>,
    max_block: usize,
) -> Result<(), Failure> {
    if !sink.in_block {
        let from = hdr.len().saturating_sub(3);
        let room = MAX_HEADER + 4 - hdr.len();
        let n = data.len().min(room);
        hdr.extend_from_slice(&data[..n]);
        match hdr[from..].windows(4).position(|w| w == b"\r\n\r\n") {
            Some(i) => {
                let end = from + i + 4;
                let rest = hdr.len() - end;
                // Bytes after the header's end were appended to `hdr` too;
                // hand them back to the block.
                data = &data[n - rest..];
                hdr.truncate(end);
                sink.content_length = parse_header(&hdr[..end - 2], rec, pool)?;
                sink.in_block = true;
            }
            None if hdr.len() > MAX_HEADER => {
                return Err(Failure::Malformed("WARC header longer than 1 MiB".into()));
            }
            None => return Ok(()),
        }
    }
    let remaining = sink.content_length - sink.seen;
    let n = (data.len() as u64).min(remaining) as usize;
    let keep = n.min(max_block.saturating_sub(rec.block.len()));
    rec.block.extend_from_slice(&data[..keep]);
    if keep < n {
        rec.block_cut = true;
    }
    sink.seen += n as u64;
    sink.tail += (data.len() - n) as u64;
    Ok(())
}

/// Parses `WARC/1.x` and the named fields (each line ends with CRLF) into
/// `rec.headers`; returns the `Content-Length`.
fn parse_header(text: &[u8], rec: &mut WarcRecord, pool: &mut Vec<String>) -> Result<u64, Failure> {
    let mut lines = text
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    let first = lines.next().unwrap_or_default();
    if !first.starts_with(b"WARC/") {
        return Err(Failure::Malformed(format!(
            "starts with {:?}, not WARC/1.x",
            String::from_utf8_lossy(&first[..first.len().min(40)])
        )));
    }
    for line in lines {
        if line.is_empty() {
            continue;
        }
        if line[0] == b' ' || line[0] == b'\t' {
            // A continuation line belongs to the previous field.
            let Some((_, value)) = rec.headers.last_mut() else {
                return Err(Failure::Malformed("continuation line first".into()));
            };
            value.push(' ');
            value.push_str(String::from_utf8_lossy(line.trim_ascii()).as_ref());
            continue;
        }
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            return Err(Failure::Malformed(format!(
                "header line without a colon: {:?}",
                String::from_utf8_lossy(&line[..line.len().min(80)])
            )));
        };
        let mut name = pool.pop().unwrap_or_default();
        name.clear();
        name.push_str(&String::from_utf8_lossy(line[..colon].trim_ascii()));
        let mut value = pool.pop().unwrap_or_default();
        value.clear();
        value.push_str(&String::from_utf8_lossy(line[colon + 1..].trim_ascii()));
        rec.headers.push((name, value));
    }
    let Some(cl) = rec.header("Content-Length") else {
        return Err(Failure::Malformed("no Content-Length".into()));
    };
    cl.parse::<u64>()
        .map_err(|_| Failure::Malformed(format!("bad Content-Length {cl:?}")))
}

/// What [`scan_valid`] found.
pub(super) struct Scan {
    /// Complete records kept.
    pub(super) records: u64,
    /// Where they end.
    pub(super) valid_len: u64,
    /// Offset of a member that is not a WARC record, if reading stopped there.
    pub(super) malformed_at: Option<u64>,
}

/// The number of complete records at the start of `path` and where they
/// end, leaving out a last `request` record whose response is missing (the
/// writer stores the two together, so such a request belongs to a torn
/// exchange).
pub(super) fn scan_valid(path: &Path) -> Result<Scan, WarcError> {
    let mut reader = WarcReader::open(path, 0)?;
    let mut rec = WarcRecord::default();
    let mut records = 0u64;
    let mut valid_len = 0u64;
    let mut malformed_at = None;
    // Where the records stand before the last one, if it is a request.
    let mut before_request = None;
    loop {
        match reader.read_next(&mut rec) {
            Ok(true) => {
                before_request =
                    (rec.record_type() == Some("request")).then_some((records, valid_len));
                records += 1;
                valid_len = rec.offset + rec.length;
            }
            Ok(false) | Err(WarcError::Truncated { .. }) => break,
            Err(WarcError::Malformed { offset, .. }) => {
                malformed_at = Some(offset);
                break;
            }
            Err(e) => return Err(e),
        }
    }
    let (records, valid_len) = before_request.unwrap_or((records, valid_len));
    Ok(Scan {
        records,
        valid_len,
        malformed_at,
    })
}

/// The offset of the first complete WARC record that starts after `from`,
/// if any: a damaged member followed by good ones is not a torn tail.
fn later_record(path: &Path, from: u64) -> Result<Option<u64>, WarcError> {
    const MAGIC: [u8; 3] = [0x1f, 0x8b, 8];
    let io_err = |source| WarcError::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut file = File::open(path).map_err(io_err)?;
    file.seek(SeekFrom::Start(from + 1)).map_err(io_err)?;
    let mut buf = vec![0u8; 1 << 20];
    // `buf[..keep]` holds the last bytes of the previous block, so that a
    // magic number split across two reads is still seen.
    let (mut base, mut keep) = (from + 1, 0usize);
    let mut tries = 0;
    let mut rec = WarcRecord::default();
    loop {
        let n = match file.read(&mut buf[keep..]) {
            Ok(0) => return Ok(None),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(io_err(e)),
        };
        let filled = keep + n;
        for i in 0..filled.saturating_sub(MAGIC.len() - 1) {
            if buf[i..i + MAGIC.len()] != MAGIC {
                continue;
            }
            let at = base + i as u64;
            if WarcReader::open_at(path, at, 0)?
                .read_next(&mut rec)
                .unwrap_or(false)
            {
                return Ok(Some(at));
            }
            tries += 1;
            if tries >= 10_000 {
                // So much gzip-like garbage is damage too: keep it all.
                return Ok(Some(at));
            }
        }
        keep = (MAGIC.len() - 1).min(filled);
        buf.copy_within(filled - keep..filled, 0);
        base += (filled - keep) as u64;
    }
}

/// Cuts a torn last record off `path` (after `kill -9` or a power cut), so
/// that the file is valid again; fsyncs the file.
///
/// Everything from the first member that is incomplete or not a WARC record
/// on is removed (the writer only ever appends, so that is the torn tail),
/// and so is a `request` record left without its `response` at the end:
/// the file ends with a complete exchange again. A damaged member that has
/// readable records after it is not a torn tail: then nothing is cut and
/// the error says where the damage is.
pub fn recover(path: impl AsRef<Path>) -> Result<Recovery, WarcError> {
    let path = path.as_ref();
    let io_err = |source| WarcError::Io {
        path: path.to_path_buf(),
        source,
    };
    let Scan {
        records,
        valid_len,
        malformed_at,
    } = scan_valid(path)?;
    if let Some(bad) = malformed_at
        && let Some(good) = later_record(path, bad)?
    {
        return Err(WarcError::Malformed {
            path: path.to_path_buf(),
            offset: bad,
            reason: format!(
                "damaged record followed by a readable one at offset {good}: \
                 not a torn tail, so nothing was cut"
            ),
        });
    }
    let file = OpenOptions::new().write(true).open(path).map_err(io_err)?;
    let len = file.metadata().map_err(io_err)?.len();
    if valid_len < len {
        file.set_len(valid_len).map_err(io_err)?;
    }
    file.sync_all().map_err(io_err)?;
    Ok(Recovery {
        records,
        valid_len,
        cut: len.saturating_sub(valid_len),
    })
}
