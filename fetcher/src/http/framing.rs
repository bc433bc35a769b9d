//! Where an HTTP/1.1 response body ends (RFC 9112 section 6.3): none, a
//! `Content-Length`, the last chunk of a `chunked` body, or the end of the
//! connection. The body is kept as it came (chunk sizes included, as the
//! WARC record holds it): the chunks are only scanned for their end.

/// How the end of a response body is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// No body (1xx, 204, 304).
    Empty,
    /// `Content-Length` bytes.
    Length(u64),
    /// `Transfer-Encoding: chunked`: up to the last chunk and its trailer.
    Chunked,
    /// Up to the end of the connection.
    UntilClose,
}

impl Framing {
    /// The framing of a response with `status`, its last
    /// `Transfer-Encoding` value and its `Content-Length` values; an error
    /// for lengths that do not agree or are not numbers.
    pub fn of(
        status: u16,
        transfer_encoding: Option<&[u8]>,
        lengths: &[&[u8]],
    ) -> Result<Framing, String> {
        if (100..200).contains(&status) || status == 204 || status == 304 {
            return Ok(Framing::Empty);
        }
        if let Some(te) = transfer_encoding {
            // Chunked must be the last coding; any other makes the body end
            // with the connection (and wins over a Content-Length).
            let last = te.rsplit(|&b| b == b',').next().unwrap_or(b"").trim_ascii();
            return Ok(if last.eq_ignore_ascii_case(b"chunked") {
                Framing::Chunked
            } else {
                Framing::UntilClose
            });
        }
        let mut length: Option<u64> = None;
        for value in lengths {
            // `Content-Length: 5, 5` is one length said twice.
            for part in value.split(|&b| b == b',') {
                let part = part.trim_ascii();
                let n = std::str::from_utf8(part)
                    .ok()
                    .filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
                    .and_then(|s| s.parse::<u64>().ok())
                    .ok_or_else(|| {
                        format!(
                            "bad Content-Length: {}",
                            String::from_utf8_lossy(value).trim()
                        )
                    })?;
                if length.is_some_and(|l| l != n) {
                    return Err("Content-Length values that differ".into());
                }
                length = Some(n);
            }
        }
        Ok(length.map_or(Framing::UntilClose, Framing::Length))
    }
}

/// Finds the end of a `chunked` body as its bytes arrive.
#[derive(Debug, Clone, Default)]
pub struct ChunkScanner {
    state: State,
    /// Bytes of the body scanned so far.
    at: usize,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum State {
    /// Reading a chunk size: its value so far and its digits.
    #[default]
    Size,
    SizeDigits(u64, u8),
    /// After the size: an extension or spaces, up to the line end.
    SizeRest(u64),
    /// In a chunk's data: bytes left.
    Data(u64),
    /// The line end after a chunk's data.
    DataEnd,
    /// After the last chunk: a trailer line, and whether it has bytes.
    Trailer(bool),
    /// The body ended (at `at`).
    Done,
}

impl ChunkScanner {
    /// Scans what `body` (everything received of the body so far) holds
    /// past what earlier calls saw. `Ok(Some(n))`: the body ends after its
    /// first `n` bytes; `Ok(None)`: more is needed; an error for bytes that
    /// cannot be chunked framing.
    pub fn scan(&mut self, body: &[u8]) -> Result<Option<usize>, String> {
        while self.at < body.len() {
            if let State::Data(left) = self.state {
                let take = (body.len() - self.at).min(usize::try_from(left).unwrap_or(usize::MAX));
                self.at += take;
                let left = left - take as u64;
                self.state = if left == 0 {
                    State::DataEnd
                } else {
                    State::Data(left)
                };
                continue;
            }
            let b = body[self.at];
            self.at += 1;
            self.state = self.step(b)?;
            if self.state == State::Done {
                return Ok(Some(self.at));
            }
        }
        Ok((self.state == State::Done).then_some(self.at))
    }

    /// The state after byte `b` (outside a chunk's data).
    fn step(&self, b: u8) -> Result<State, String> {
        let hex = |b: u8| (b as char).to_digit(16).map(u64::from);
        Ok(match (self.state, b) {
            (State::Size, _) => match hex(b) {
                Some(d) => State::SizeDigits(d, 1),
                None => return Err(format!("bad chunk size (byte {b:#04x})")),
            },
            (State::SizeDigits(v, n), _) if hex(b).is_some() => {
                if n >= 15 {
                    return Err("chunk size too large".into());
                }
                State::SizeDigits(v * 16 + hex(b).unwrap_or(0), n + 1)
            }
            (State::SizeDigits(v, _) | State::SizeRest(v), b'\n') => {
                if v == 0 {
                    State::Trailer(false)
                } else {
                    State::Data(v)
                }
            }
            (State::SizeDigits(v, _) | State::SizeRest(v), b';' | b' ' | b'\t' | b'\r') => {
                State::SizeRest(v)
            }
            (State::SizeRest(v), _) => State::SizeRest(v),
            (State::SizeDigits(..), _) => return Err(format!("bad chunk size (byte {b:#04x})")),
            (State::DataEnd, b'\r') => State::DataEnd,
            (State::DataEnd, b'\n') => State::Size,
            (State::DataEnd, _) => return Err("no line end after a chunk".into()),
            (State::Trailer(has_bytes), b'\n') => {
                if has_bytes {
                    State::Trailer(false)
                } else {
                    State::Done
                }
            }
            (State::Trailer(has_bytes), b'\r') => State::Trailer(has_bytes),
            (State::Trailer(_), _) => State::Trailer(true),
            (State::Data(_) | State::Done, _) => self.state,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn end_of(body: &[u8]) -> Result<Option<usize>, String> {
        ChunkScanner::default().scan(body)
    }

    #[test]
    fn chunked_bodies_end_after_the_last_chunk_and_its_trailer() {
        let body = b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n\r\n";
        assert_eq!(end_of(body), Ok(Some(body.len())));
        let with_trailer = b"3\r\nabc\r\n0\r\nExpires: never\r\n\r\nNEXT";
        assert_eq!(end_of(with_trailer), Ok(Some(with_trailer.len() - 4)));
        let bare_lf = b"A\r\n0123456789\r\n0\n\n";
        assert_eq!(end_of(bare_lf), Ok(Some(bare_lf.len())), "bare LF");
        assert_eq!(end_of(b"5\r\nhel"), Ok(None));
        assert_eq!(end_of(b"0\r\n"), Ok(None), "the trailer's end is missing");
        assert!(end_of(b"zz\r\n").is_err());
        assert!(end_of(b"5\r\nhelloX\r\n").is_err());
        assert!(end_of(b"1234567890abcdef0\r\n").is_err(), "too large");
    }

    #[test]
    fn chunks_are_found_byte_by_byte_as_in_one_piece() {
        let body = b"4\r\nwiki\r\n5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n0\r\n\r\n";
        let mut s = ChunkScanner::default();
        let mut found = None;
        for n in 1..=body.len() {
            found = s.scan(&body[..n]).unwrap();
            if found.is_some() {
                assert_eq!(n, body.len());
            }
        }
        assert_eq!(found, Some(body.len()));
    }

    #[test]
    fn framing_follows_the_status_and_headers() {
        assert_eq!(Framing::of(204, None, &[b"10"]), Ok(Framing::Empty));
        assert_eq!(Framing::of(304, None, &[]), Ok(Framing::Empty));
        assert_eq!(Framing::of(200, None, &[b" 10 "]), Ok(Framing::Length(10)));
        assert_eq!(Framing::of(200, None, &[b"7, 7"]), Ok(Framing::Length(7)));
        assert!(Framing::of(200, None, &[b"7", b"8"]).is_err());
        assert!(Framing::of(200, None, &[b"-1"]).is_err());
        assert_eq!(
            Framing::of(200, Some(b"gzip, Chunked"), &[b"10"]),
            Ok(Framing::Chunked),
            "chunked wins over a length"
        );
        assert_eq!(
            Framing::of(200, Some(b"gzip"), &[]),
            Ok(Framing::UntilClose)
        );
        assert_eq!(Framing::of(200, None, &[]), Ok(Framing::UntilClose));
    }
}
