//! [`WarcReader`]: the records of a WARC file with their offsets, reusing
//! its buffers: one gzip member per record, one member for several records
//! (or the whole file), or uncompressed. It can skip a damaged stretch and
//! go on ([`WarcReader::resyncing`]). And [`recover`], which cuts a torn tail.
//!
//! A gzip member is inflated in one call by libdeflate when all of it is in
//! the input buffer and it holds at most [`WHOLE_OUT`] bytes (a record of
//! an ordinary page); otherwise, and wherever the data is damaged, by the
//! streaming inflater, which tells how far the member is good.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use flate2::{Crc, Decompress, FlushDecompress, Status};
use memchr::memmem;

use super::inflate::WholeMember;
use super::{Recovery, WarcError, WarcRecord};

/// Size of the compressed input buffer.
const IN_BUF: usize = 1 << 20;
/// Size of the buffer each inflate call writes into.
const OUT_CHUNK: usize = 128 * 1024;
/// Room for a gzip member inflated whole (see [`WholeMember`]): members
/// that hold more, or that do not end within the input buffer, are
/// inflated the streaming way.
const WHOLE_OUT: usize = 1 << 20;
/// After a member could not be inflated whole, this many members are
/// inflated the streaming way before trying again (a file of large records
/// does not pay for a failed attempt on each).
const WHOLE_BACKOFF: u32 = 4;
/// A WARC header longer than this is not believed.
const MAX_HEADER: usize = 1 << 20;
/// How a gzip member of deflate data starts (RFC 1952).
const GZIP_MAGIC: [u8; 3] = [0x1f, 0x8b, 8];
/// After damage, at most this many places that look like a gzip member are
/// tried before reading goes on at the next one, whatever it holds.
const MAX_PROBES: u32 = 10_000;
/// Compressed bytes inflated to check that a gzip member holds a record.
const PROBE_BYTES: usize = 4096;
/// What every WARC header starts with.
const MAGIC: &[u8] = b"WARC/";
/// How a record is found again in a damaged stream: at the start of a line.
const RECORD_LINE: &[u8] = b"\nWARC/1.";

/// Reads the records of a WARC file in order: `.warc.gz` with one gzip
/// member per record (as [`WarcWriter`](super::WarcWriter) and most crawlers
/// write them), several records per member (a file compressed as a whole),
/// or an uncompressed `.warc`. The format is told by the first bytes.
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
    /// Go on after damage ([`WarcReader::resyncing`]).
    resync: bool,
    /// Raw input: `buf[pos..end]` is not consumed yet.
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    /// File offset of `buf[0]`.
    buf_off: u64,
    eof: bool,
    /// Told by the first bytes read.
    format: Option<Format>,
    inflate: Decompress,
    crc: Crc,
    /// Inflates members whole when they fit.
    whole: WholeMember,
    /// Members to inflate the streaming way before trying whole again.
    whole_backoff: u32,
    /// A gzip member is being inflated.
    member_open: bool,
    /// File offset of the last gzip member started.
    member_start: u64,
    /// No record has started in that member yet.
    member_fresh: bool,
    /// Where the last gzip member to end ended.
    member_end: u64,
    /// Decoded bytes: `out[opos..oend]` is not parsed yet.
    out: Vec<u8>,
    opos: usize,
    oend: usize,
    /// Offset of `out[0]` in the decoded stream (the file offset when
    /// uncompressed).
    out_off: u64,
    /// WARC header of the current record.
    hdr: Vec<u8>,
    /// Offset of the current record (see [`WarcRecord::offset`]).
    rec_start: u64,
    /// Strings of earlier records' headers, reused.
    pool: Vec<String>,
    done: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Gzip,
    Plain,
}

enum Failure {
    /// The file ends inside this record.
    Truncated,
    /// The gzip layer is damaged: member header, deflate data, checksum.
    Gzip(String),
    /// The record is damaged: its header or its framing.
    Record(String),
    Io(io::Error),
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Failure {
        Failure::Io(e)
    }
}

/// What a gzip member header looks like so far.
enum GzipHeader {
    /// It is this long.
    Len(usize),
    /// More bytes are needed.
    Incomplete,
    Bad(&'static str),
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
            resync: false,
            buf: vec![0; IN_BUF],
            pos: 0,
            end: 0,
            buf_off: offset,
            eof: false,
            format: None,
            inflate: Decompress::new(false),
            crc: Crc::new(),
            whole: WholeMember::new(),
            whole_backoff: 0,
            member_open: false,
            member_start: offset,
            member_fresh: false,
            member_end: offset,
            out: vec![0; OUT_CHUNK],
            opos: 0,
            oend: 0,
            out_off: offset,
            hdr: Vec::with_capacity(4096),
            rec_start: offset,
            pool: Vec::new(),
            done: false,
        })
    }

    /// Makes the reader go on after damage: a damaged record or gzip member
    /// is returned as [`WarcError::Damaged`] (where it is, why, how many
    /// bytes were skipped) and the next call reads the next record found
    /// after it: the next gzip member that holds a record, or the next line
    /// starting with `WARC/1.` in an uncompressed file or inside a member.
    /// Without it, the first error ends the reading (what [`recover`]
    /// needs).
    pub fn resyncing(mut self) -> WarcReader {
        self.resync = true;
        self
    }

    /// The file being read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Fills `rec` with the next record; `Ok(false)` at a clean end. After an
    /// error the reader is finished (returns `Ok(false)`), unless it is
    /// [resyncing](WarcReader::resyncing) and the error is
    /// [`WarcError::Damaged`].
    pub fn read_next(&mut self, rec: &mut WarcRecord) -> Result<bool, WarcError> {
        if self.done {
            return Ok(false);
        }
        let failure = match self.read_record(rec) {
            Ok(more) => {
                self.done = !more;
                return Ok(more);
            }
            Err(f) => f,
        };
        let (path, offset) = (self.path.clone(), self.rec_start);
        let io_err = |source| WarcError::Io {
            path: path.clone(),
            source,
        };
        let (reason, in_stream) = match failure {
            Failure::Io(source) => {
                self.done = true;
                return Err(io_err(source));
            }
            Failure::Truncated => (None, false),
            Failure::Gzip(reason) => (Some(reason), false),
            Failure::Record(reason) => (Some(reason), true),
        };
        let resumed = if self.resync {
            self.resynchronise(in_stream, &rec.block).map_err(|e| {
                self.done = true;
                io_err(e)
            })?
        } else {
            None
        };
        let Some(resumed_at) = resumed else {
            self.done = true;
            return Err(match reason {
                None => WarcError::Truncated { path, offset },
                Some(reason) if !self.resync => WarcError::Malformed {
                    path,
                    offset,
                    reason,
                },
                Some(reason) => {
                    let len = self.file.metadata().map_err(io_err)?.len();
                    WarcError::Damaged {
                        path,
                        offset,
                        reason,
                        skipped: len.saturating_sub(offset),
                        resumed_at: None,
                    }
                }
            });
        };
        Err(WarcError::Damaged {
            path,
            offset,
            reason: reason.unwrap_or_else(|| "the file ends inside the record".into()),
            skipped: resumed_at.saturating_sub(offset),
            resumed_at: Some(resumed_at),
        })
    }

    /// One record into `rec`: find where it starts, read its header up to
    /// the blank line, its block up to `Content-Length`, then check that
    /// the record ends where it says. `false` at the clean end of the file.
    fn read_record(&mut self, rec: &mut WarcRecord) -> Result<bool, Failure> {
        self.recycle(rec);
        let format = match self.format {
            Some(f) => f,
            None => {
                let f = self.detect()?;
                *self.format.insert(f)
            }
        };
        if !self.find_record_start(format)? {
            return Ok(false);
        }
        rec.offset = self.rec_start;
        let header_end = self.read_header(format)?;
        let content_length = parse_header(&self.hdr[..header_end - 2], rec, &mut self.pool)?;
        self.read_block(format, content_length, rec)?;
        self.check_record_end(format, content_length)?;
        rec.length = self.record_length(format);
        Ok(true)
    }

    /// Empties `rec` for the next record, its header strings kept in the
    /// pool for reuse.
    fn recycle(&mut self, rec: &mut WarcRecord) {
        for (name, value) in rec.headers.drain(..) {
            self.pool.push(name);
            self.pool.push(value);
        }
        rec.block.clear();
        rec.block_cut = false;
        rec.length = 0;
        self.hdr.clear();
    }

    /// The record's first byte, after the line ends of the one before,
    /// starting the next gzip member if need be; sets `rec_start`. `false`
    /// at the clean end of the file.
    fn find_record_start(&mut self, format: Format) -> Result<bool, Failure> {
        self.rec_start = self.position();
        loop {
            let data = &self.out[self.opos..self.oend];
            self.opos += data
                .iter()
                .take_while(|&&b| b == b'\r' || b == b'\n')
                .count();
            if self.opos < self.oend {
                break;
            }
            if self.produce()? {
                continue;
            }
            if format == Format::Plain || !self.ensure(1)? {
                return Ok(false);
            }
            self.rec_start = self.buf_off + self.pos as u64;
            self.start_member()?;
        }
        self.rec_start = match format {
            Format::Plain => self.out_off + self.opos as u64,
            Format::Gzip if self.member_fresh => self.member_start,
            Format::Gzip => self.buf_off + self.pos as u64,
        };
        self.member_fresh = false;
        Ok(true)
    }

    /// The header into `hdr`, up to and with its blank line; returns its
    /// length. Leaves the bytes after it, the block's, unparsed.
    fn read_header(&mut self, format: Format) -> Result<usize, Failure> {
        let header_end = loop {
            let data = &self.out[self.opos..self.oend];
            let n = data.len().min(MAX_HEADER + 4 - self.hdr.len());
            let from = self.hdr.len().saturating_sub(3);
            self.hdr.extend_from_slice(&data[..n]);
            self.opos += n;
            // Say at once when a member is something else gzipped (a log, a
            // tarball), rather than after inflating a megabyte of it.
            let k = self.hdr.len().min(MAGIC.len());
            if self.hdr[..k] != MAGIC[..k] {
                return Err(not_warc(&self.hdr));
            }
            if let Some(i) = memmem::find(&self.hdr[from..], b"\r\n\r\n") {
                let end = from + i + 4;
                // Bytes after the header's end belong to the block.
                self.opos -= self.hdr.len() - end;
                break end;
            }
            if self.hdr.len() > MAX_HEADER {
                return Err(Failure::Record("WARC header longer than 1 MiB".into()));
            }
            if !self.produce()? {
                return Err(match format {
                    Format::Plain => Failure::Truncated,
                    Format::Gzip => {
                        Failure::Record("no end of the WARC header in the member".into())
                    }
                });
            }
        };
        self.hdr.truncate(header_end);
        Ok(header_end)
    }

    /// The block's `content_length` bytes, kept in `rec` up to `max_block`
    /// (`block_cut` says when some were left out).
    fn read_block(
        &mut self,
        format: Format,
        content_length: u64,
        rec: &mut WarcRecord,
    ) -> Result<(), Failure> {
        let mut remaining = content_length;
        loop {
            let avail = self.oend - self.opos;
            let n = (avail as u64).min(remaining) as usize;
            let keep = n.min(self.max_block.saturating_sub(rec.block.len()));
            rec.block
                .extend_from_slice(&self.out[self.opos..self.opos + keep]);
            rec.block_cut |= keep < n;
            self.opos += n;
            remaining -= n as u64;
            if remaining == 0 {
                return Ok(());
            }
            if !self.produce()? {
                return Err(match format {
                    Format::Plain => Failure::Truncated,
                    Format::Gzip => Failure::Record(format!(
                        "block has {} bytes, Content-Length says {content_length}",
                        content_length - remaining
                    )),
                });
            }
        }
    }

    /// The record's end: line ends (`\r\n\r\n`), then the end of the
    /// member (whose checksum is checked) or of the file, or the next
    /// record. Without that, the Content-Length was wrong: the record is
    /// damaged.
    fn check_record_end(&mut self, format: Format, content_length: u64) -> Result<(), Failure> {
        let mut tail = [0u8; 4];
        let mut tail_len = 0;
        loop {
            let data = &self.out[self.opos..self.oend];
            let n = data
                .iter()
                .take_while(|&&b| b == b'\r' || b == b'\n')
                .count();
            let k = n.min(tail.len() - tail_len);
            tail[tail_len..tail_len + k].copy_from_slice(&data[..k]);
            tail_len += k;
            self.opos += n;
            if self.opos < self.oend || !self.produce()? {
                break;
            }
        }
        // In a gzip member, what follows must be a record: the member's
        // checksum, which would catch damage, comes only at its end.
        let trusted_tail = format == Format::Plain && &tail == b"\r\n\r\n";
        if self.opos < self.oend && !trusted_tail {
            while self.oend - self.opos < RECORD_LINE.len() - 1 && self.produce()? {}
            if !self.out[self.opos..self.oend].starts_with(&RECORD_LINE[1..]) {
                return Err(Failure::Record(format!(
                    "no record after the {content_length}-byte block (wrong Content-Length?)"
                )));
            }
        }
        Ok(())
    }

    /// The bytes the record just read takes in the file: up to the end of
    /// its gzip member when the member ended with it.
    fn record_length(&self, format: Format) -> u64 {
        match format {
            Format::Gzip if !self.member_open && self.opos == self.oend => {
                self.member_end - self.rec_start
            }
            _ => self.position().saturating_sub(self.rec_start),
        }
    }

    /// Where reading stands in the file: exact when uncompressed or between
    /// gzip members, the compressed bytes read so far inside a member.
    fn position(&self) -> u64 {
        match self.format {
            Some(Format::Plain) => self.out_off + self.opos as u64,
            _ => self.buf_off + self.pos as u64,
        }
    }

    /// Gzip or uncompressed, by the first bytes (by the name if they are
    /// neither, so that damage at the start of a `.gz` is found as such).
    fn detect(&mut self) -> io::Result<Format> {
        self.ensure(MAGIC.len())?;
        let head = &self.buf[self.pos..self.end];
        Ok(if head.starts_with(&GZIP_MAGIC[..2]) {
            Format::Gzip
        } else if !head.is_empty() && MAGIC.starts_with(&head[..head.len().min(MAGIC.len())]) {
            Format::Plain
        } else if self.path.extension().is_some_and(|e| e == "gz") {
            Format::Gzip
        } else {
            Format::Plain
        })
    }

    /// Decodes more bytes into `out`; false if none can come without
    /// starting a new gzip member (or at the end of an uncompressed file).
    fn produce(&mut self) -> Result<bool, Failure> {
        to_front(
            &mut self.out,
            &mut self.opos,
            &mut self.oend,
            &mut self.out_off,
        );
        if self.oend == self.out.len() {
            self.out.resize(2 * self.out.len(), 0);
        }
        if self.format == Some(Format::Plain) {
            if self.pos == self.end {
                self.fill()?;
            }
            let n = (self.end - self.pos).min(self.out.len() - self.oend);
            self.out[self.oend..self.oend + n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
            self.pos += n;
            self.oend += n;
            return Ok(n > 0);
        }
        if !self.member_open {
            return Ok(false);
        }
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
                    &mut self.out[self.oend..],
                    FlushDecompress::None,
                )
                .map_err(|e| Failure::Gzip(format!("bad deflate data: {e}")))?;
            let used = (self.inflate.total_in() - in0) as usize;
            let made = (self.inflate.total_out() - out0) as usize;
            self.pos += used;
            self.crc.update(&self.out[self.oend..self.oend + made]);
            self.oend += made;
            if status == Status::StreamEnd {
                self.end_member()?;
                return Ok(true);
            }
            if made > 0 {
                return Ok(true);
            }
            if used == 0 {
                if self.pos == self.end && self.eof {
                    return Err(Failure::Truncated);
                }
                // Input and room were there and nothing moved: should not
                // happen, but never spin on it.
                stalls += 1;
                if stalls > 3 {
                    return Err(Failure::Gzip("deflate stream stalls".into()));
                }
            } else {
                stalls = 0;
            }
        }
    }

    /// Checks the gzip member header (RFC 1952, section 2.3) at `pos` and
    /// starts inflating after it.
    fn start_member(&mut self) -> Result<(), Failure> {
        self.member_start = self.buf_off + self.pos as u64;
        if self.inflate_whole()? {
            return Ok(());
        }
        loop {
            match gzip_header(&self.buf[self.pos..self.end]) {
                GzipHeader::Len(n) => {
                    self.pos += n;
                    break;
                }
                GzipHeader::Bad(why) => return Err(Failure::Gzip(why.into())),
                GzipHeader::Incomplete if self.end - self.pos > MAX_HEADER => {
                    return Err(Failure::Gzip("endless gzip header field".into()));
                }
                GzipHeader::Incomplete => {
                    if !self.ensure(self.end - self.pos + 1)? {
                        return Err(Failure::Truncated);
                    }
                }
            }
        }
        self.inflate.reset(false);
        self.crc.reset();
        self.member_open = true;
        self.member_fresh = true;
        Ok(())
    }

    /// Inflates the member at `pos` in one call into `out` when it ends
    /// within the input buffer and fits [`WHOLE_OUT`]; true if it did (the
    /// member is then read to its end, its checksum checked). Otherwise
    /// nothing has moved and the member is inflated the streaming way,
    /// which also finds any damage in it.
    fn inflate_whole(&mut self) -> Result<bool, Failure> {
        if self.whole_backoff > 0 {
            self.whole_backoff -= 1;
            return Ok(false);
        }
        if self.end - self.pos < self.buf.len() / 2 && !self.eof {
            self.fill()?;
        }
        to_front(
            &mut self.out,
            &mut self.opos,
            &mut self.oend,
            &mut self.out_off,
        );
        if self.out.len() < self.oend + WHOLE_OUT {
            self.out.resize(self.oend + WHOLE_OUT, 0);
        }
        let room = &mut self.out[self.oend..self.oend + WHOLE_OUT];
        let Some((used, made)) = self.whole.inflate(&self.buf[self.pos..self.end], room) else {
            self.whole_backoff = WHOLE_BACKOFF;
            return Ok(false);
        };
        self.oend += made;
        self.pos += used;
        self.member_end = self.buf_off + self.pos as u64;
        self.member_open = false;
        self.member_fresh = true;
        Ok(true)
    }

    /// Checks the member's trailer (CRC-32 and length of what it holds).
    fn end_member(&mut self) -> Result<(), Failure> {
        self.member_open = false;
        if !self.ensure(8)? {
            return Err(Failure::Truncated);
        }
        let t = &self.buf[self.pos..self.pos + 8];
        let want_crc = u32::from_le_bytes([t[0], t[1], t[2], t[3]]);
        let want_len = u32::from_le_bytes([t[4], t[5], t[6], t[7]]);
        self.pos += 8;
        self.member_end = self.buf_off + self.pos as u64;
        if want_crc != self.crc.sum() || want_len != self.crc.amount() {
            return Err(Failure::Gzip("gzip checksum mismatch".into()));
        }
        Ok(())
    }

    /// After damage, moves to the next record; returns its offset, or
    /// `None` if the file has no record after the damage. `in_stream`: the
    /// decoded bytes are intact but the record is not, so the next record is
    /// looked for in them first (in `block`, what was kept of the damaged
    /// record's block, too).
    fn resynchronise(&mut self, in_stream: bool, block: &[u8]) -> io::Result<Option<u64>> {
        if self.format == Some(Format::Plain) {
            // What was read is the file itself: look again from the second
            // byte of the damaged record.
            self.seek_raw(self.rec_start + 1)?;
            self.opos = 0;
            self.oend = 0;
            self.out_off = self.rec_start + 1;
            return match self.find_record_line() {
                Err(Failure::Io(e)) => Err(e),
                found => Ok(found.unwrap_or(None)),
            };
        }
        if in_stream {
            // Put back what the record took (its first byte aside): a
            // record may start inside a block whose length was wrong.
            let rest = self.oend - self.opos;
            let mut back = Vec::with_capacity(self.hdr.len() + block.len() + rest + OUT_CHUNK);
            back.extend_from_slice(self.hdr.get(1..).unwrap_or_default());
            back.extend_from_slice(block);
            back.extend_from_slice(&self.out[self.opos..self.oend]);
            self.out_off =
                (self.out_off + self.opos as u64).saturating_sub((back.len() - rest) as u64);
            self.oend = back.len();
            self.opos = 0;
            back.resize(back.len() + OUT_CHUNK, 0);
            self.out = back;
            match self.find_record_line() {
                Ok(found) => return Ok(found),
                Err(Failure::Io(e)) => return Err(e),
                // The member itself is damaged further on.
                Err(_) => {}
            }
        }
        self.opos = 0;
        self.oend = 0;
        self.member_open = false;
        self.resync_gzip(self.member_start + 1)
    }

    /// Reads on to the next line that starts a record.
    fn find_record_line(&mut self) -> Result<Option<u64>, Failure> {
        loop {
            if let Some(i) = memmem::find(&self.out[self.opos..self.oend], RECORD_LINE) {
                self.opos += i + 1;
                return Ok(Some(self.position()));
            }
            self.opos = self
                .opos
                .max(self.oend.saturating_sub(RECORD_LINE.len() - 1));
            if !self.produce()? {
                self.opos = self.oend;
                let more = self.format == Some(Format::Gzip) && self.ensure(1)?;
                return Ok(more.then(|| self.buf_off + self.pos as u64));
            }
        }
    }

    /// Moves to the first gzip member at or after `from` that inflates to
    /// the start of a WARC record.
    fn resync_gzip(&mut self, from: u64) -> io::Result<Option<u64>> {
        self.seek_raw(from)?;
        let mut probes = 0;
        let mut probe = Decompress::new(false);
        loop {
            if !self.ensure(GZIP_MAGIC.len())? {
                self.pos = self.end;
                return Ok(None);
            }
            let Some(i) = memmem::find(&self.buf[self.pos..self.end], &GZIP_MAGIC) else {
                self.pos = self.end - (GZIP_MAGIC.len() - 1);
                continue;
            };
            self.pos += i;
            let at = self.buf_off + self.pos as u64;
            probes += 1;
            if probes > MAX_PROBES || self.holds_record(at, &mut probe)? {
                return Ok(Some(at));
            }
            self.pos += 1;
        }
    }

    /// True if the gzip member at `at` inflates to the start of a record.
    fn holds_record(&self, at: u64, probe: &mut Decompress) -> io::Result<bool> {
        let mut input = [0u8; PROBE_BYTES];
        let mut n = 0;
        while n < input.len() {
            match self.file.read_at(&mut input[n..], at + n as u64) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        let GzipHeader::Len(h) = gzip_header(&input[..n]) else {
            return Ok(false);
        };
        probe.reset(false);
        let mut first = [0u8; 8];
        let ok = probe
            .decompress(&input[h..n], &mut first, FlushDecompress::None)
            .is_ok();
        let made = probe.total_out() as usize;
        Ok(ok && first[..made].starts_with(&RECORD_LINE[1..]))
    }

    /// Moves the raw input to file offset `at`.
    fn seek_raw(&mut self, at: u64) -> io::Result<()> {
        if at >= self.buf_off && at <= self.buf_off + self.end as u64 {
            self.pos = (at - self.buf_off) as usize;
        } else {
            self.file.seek(SeekFrom::Start(at))?;
            self.buf_off = at;
            self.pos = 0;
            self.end = 0;
            self.eof = false;
        }
        Ok(())
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
        to_front(
            &mut self.buf,
            &mut self.pos,
            &mut self.end,
            &mut self.buf_off,
        );
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

/// Moves the unread bytes `buf[*pos..*end]` to the front; `off` is the
/// stream offset of `buf[0]`.
fn to_front(buf: &mut [u8], pos: &mut usize, end: &mut usize, off: &mut u64) {
    if *pos > 0 {
        buf.copy_within(*pos..*end, 0);
        *off += *pos as u64;
        *end -= *pos;
        *pos = 0;
    }
}

/// Parses a gzip member header (RFC 1952, section 2.3) at the start of `b`.
fn gzip_header(b: &[u8]) -> GzipHeader {
    for (i, &want) in GZIP_MAGIC.iter().enumerate() {
        match b.get(i) {
            None => return GzipHeader::Incomplete,
            Some(&got) if got != want => {
                return GzipHeader::Bad(if i < 2 {
                    "no gzip member starts here"
                } else {
                    "gzip member is not deflate"
                });
            }
            Some(_) => {}
        }
    }
    let Some(&flags) = b.get(3) else {
        return GzipHeader::Incomplete;
    };
    if flags & 0xe0 != 0 {
        return GzipHeader::Bad("reserved gzip flags set");
    }
    let mut n = 10;
    if flags & 4 != 0 {
        let Some(x) = b.get(n..n + 2) else {
            return GzipHeader::Incomplete;
        };
        n += 2 + usize::from(u16::from_le_bytes([x[0], x[1]]));
    }
    for flag in [8, 16] {
        if flags & flag != 0 {
            match b.get(n..).and_then(|rest| memchr::memchr(0, rest)) {
                Some(i) => n += i + 1,
                None => return GzipHeader::Incomplete,
            }
        }
    }
    if flags & 2 != 0 {
        n += 2;
    }
    if b.len() < n {
        GzipHeader::Incomplete
    } else {
        GzipHeader::Len(n)
    }
}

/// The error for a record whose text does not start with [`MAGIC`].
fn not_warc(text: &[u8]) -> Failure {
    Failure::Record(format!(
        "starts with {:?}, not WARC/1.x",
        String::from_utf8_lossy(&text[..text.len().min(40)])
    ))
}

/// Parses `WARC/1.x` and the named fields (each line ends with CRLF) into
/// `rec.headers`; returns the `Content-Length`.
fn parse_header(text: &[u8], rec: &mut WarcRecord, pool: &mut Vec<String>) -> Result<u64, Failure> {
    let mut lines = text
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    let first = lines.next().unwrap_or_default();
    if !first.starts_with(MAGIC) {
        return Err(not_warc(first));
    }
    for line in lines {
        if line.is_empty() {
            continue;
        }
        if line[0] == b' ' || line[0] == b'\t' {
            // A continuation line belongs to the previous field.
            let Some((_, value)) = rec.headers.last_mut() else {
                return Err(Failure::Record("continuation line first".into()));
            };
            value.push(' ');
            value.push_str(String::from_utf8_lossy(line.trim_ascii()).as_ref());
            continue;
        }
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            return Err(Failure::Record(format!(
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
        return Err(Failure::Record("no Content-Length".into()));
    };
    // Digits only, as the spec says (`str::parse` would take `+3`).
    crate::parse_digits(cl.as_bytes())
        .ok_or_else(|| Failure::Record(format!("bad Content-Length {cl:?}")))
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

/// The offset of the first gzip member holding a WARC record that starts
/// after `from`, if any: a damaged member followed by good ones is not a
/// torn tail.
fn later_record(path: &Path, from: u64) -> Result<Option<u64>, WarcError> {
    let mut reader = WarcReader::open(path, 0)?;
    reader
        .resync_gzip(from + 1)
        .map_err(|source| WarcError::Io {
            path: path.to_path_buf(),
            source,
        })
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
