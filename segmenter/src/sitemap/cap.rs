//! The byte source the readers read ([`text`](super::text),
//! [`xml`](super::xml)): uncompressed bytes up to the `max_bytes` cap,
//! knowing whether the document went on past it, and where a read error
//! happened.

use std::io::{self, BufRead, BufReader, Read};

use super::ParseError;

/// A source of uncompressed bytes that knows whether it was cut at the cap.
pub(super) trait Capped: BufRead {
    /// True once more data than the cap was found (and not read).
    fn cut(&self) -> bool;
    /// Uncompressed bytes delivered so far: where a read error happened.
    fn delivered(&self) -> u64;
}

impl Capped for &[u8] {
    fn cut(&self) -> bool {
        false
    }
    fn delivered(&self) -> u64 {
        0
    }
}

/// Reads at most `left` bytes from `inner`, then checks for one more.
pub(super) struct Cap<R> {
    inner: R,
    left: u64,
    delivered: u64,
    probed: bool,
    cut: bool,
    /// The compressed data is the start of a longer file: its end (or the
    /// decoder's "unexpected end") is a cut, not an error.
    truncated: bool,
}

impl<R> Cap<R> {
    /// Reads at most `left` bytes of `inner`; `truncated`: `inner` is the
    /// start of a longer document, whose end is a cut.
    pub(super) fn new(inner: R, left: u64, truncated: bool) -> Cap<R> {
        Cap {
            inner,
            left,
            delivered: 0,
            probed: false,
            cut: false,
            truncated,
        }
    }
}

impl<R: Read> Read for Cap<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.left == 0 {
            if !self.probed {
                self.probed = true;
                let mut one = [0u8; 1];
                // An error past the cap is not ours to report: nothing
                // after the cap is read.
                self.cut = matches!(self.inner.read(&mut one), Ok(n) if n > 0);
            }
            return Ok(0);
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let got = match self.inner.read(&mut buf[..want]) {
            Ok(0) if self.truncated => {
                self.cut = true;
                0
            }
            Err(e) if self.truncated && e.kind() == io::ErrorKind::UnexpectedEof => {
                self.cut = true;
                0
            }
            r => r?,
        };
        self.left -= got as u64;
        self.delivered += got as u64;
        Ok(got)
    }
}

impl<R: Read> Capped for BufReader<Cap<R>> {
    fn cut(&self) -> bool {
        self.get_ref().cut
    }
    fn delivered(&self) -> u64 {
        self.get_ref().delivered
    }
}

/// A read error from the gzip decoder at `offset` of the uncompressed data.
pub(super) fn gzip_error(offset: u64, e: &io::Error) -> ParseError {
    ParseError {
        offset,
        message: format!("bad gzip data: {e}"),
    }
}
