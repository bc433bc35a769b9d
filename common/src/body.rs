//! The one decoder of HTTP bodies as they were received: remove the
//! transfer coding (`chunked`), then each content coding (`gzip`,
//! `deflate` with or without its zlib header, `br`, `zstd`), with a cap on
//! the decoded size so that a small compressed body cannot expand without
//! bound. When a body cannot be decoded the outcome says so and the bytes
//! as received are what is returned: nothing fetched is lost.
//!
//! ```
//! use common::body::{BodyDecoder, Outcome};
//! let mut d = BodyDecoder::default();
//! let got = d.decode(Some("chunked"), None, b"3;ext=1\r\nabc\r\n0\r\nX-T: 1\r\n\r\n", 1000);
//! assert_eq!((got.body, got.outcome), (&b"abc"[..], Outcome::Complete));
//! ```

use std::io::{self, Read};

use crate::http::ResponseHead;

/// How decoding went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The whole body was decoded.
    Complete,
    /// The decoded body reached the cap; the rest was not decoded.
    Cut,
    /// Decoding stopped at an error after some output (a cut or damaged
    /// stream); the body is what was decoded before it.
    Incomplete(String),
    /// Nothing could be decoded; the body is the one received (without its
    /// transfer coding when that part worked).
    Failed(String),
}

/// A decoded body, borrowed from the input or from the decoder's buffers.
#[derive(Debug)]
pub struct Decoded<'a> {
    /// The body: decoded, or as received when `outcome` is `Failed`.
    pub body: &'a [u8],
    /// How decoding went.
    pub outcome: Outcome,
}

/// Decodes bodies, reusing its buffers from one body to the next.
#[derive(Debug, Default)]
pub struct BodyDecoder {
    a: Vec<u8>,
    b: Vec<u8>,
}

/// Largest zstd window accepted (8 MiB, as browsers allow for HTTP): a
/// larger one would let a small body claim that much memory.
const ZSTD_WINDOW_LOG_MAX: u32 = 23;

impl BodyDecoder {
    /// Frees buffers grown past `keep` bytes by a large body, so that an
    /// idle decoder holds little.
    pub fn trim(&mut self, keep: usize) {
        for buf in [&mut self.a, &mut self.b] {
            if buf.capacity() > keep {
                *buf = Vec::new();
            }
        }
    }

    /// Decodes the body of a stored response whose head is `head` and whose
    /// body bytes (as received) are `raw`, keeping at most `max` decoded bytes.
    pub fn decode_response<'a>(
        &'a mut self,
        head: &ResponseHead,
        raw: &'a [u8],
        max: usize,
    ) -> Decoded<'a> {
        self.decode(
            head.header("Transfer-Encoding"),
            head.header("Content-Encoding"),
            raw,
            max,
        )
    }

    /// Decodes `raw` sent with these `Transfer-Encoding` and
    /// `Content-Encoding` values, keeping at most `max` decoded bytes.
    pub fn decode<'a>(
        &'a mut self,
        transfer_encoding: Option<&str>,
        content_encoding: Option<&str>,
        raw: &'a [u8],
        max: usize,
    ) -> Decoded<'a> {
        let chunked = transfer_encoding.is_some_and(|te| {
            te.rsplit(',')
                .next()
                .is_some_and(|last| last.trim().eq_ignore_ascii_case("chunked"))
        });
        // Where the current bytes are: the input, or buffer `a` or `b`.
        #[derive(Clone, Copy, PartialEq)]
        enum At {
            Raw,
            A,
            B,
        }
        let mut at = At::Raw;
        let mut outcome = Outcome::Complete;
        if chunked {
            self.a.clear();
            match dechunk(raw, &mut self.a) {
                Ok(()) => at = At::A,
                // Framing cut short: keep what it framed.
                Err(e) if !self.a.is_empty() => {
                    at = At::A;
                    outcome = Outcome::Incomplete(format!("chunked: {e}"));
                }
                // Not chunked after all: use the bytes as they are.
                Err(_) => {}
            }
        }
        let entity_at = at;
        let codings = content_encoding.unwrap_or("");
        // Content codings are listed in the order applied: undo the last first.
        for coding in codings.rsplit(',') {
            let coding = coding.trim();
            if coding.is_empty() || coding.eq_ignore_ascii_case("identity") {
                continue;
            }
            let (input, mut out, next) = match at {
                At::Raw => (raw, std::mem::take(&mut self.a), At::A),
                At::A => (&self.a[..], std::mem::take(&mut self.b), At::B),
                At::B => (&self.b[..], std::mem::take(&mut self.a), At::A),
            };
            out.clear();
            let step = decode_one(&coding.to_ascii_lowercase(), input, max, &mut out);
            match next {
                At::A => self.a = out,
                _ => self.b = out,
            }
            match step {
                Outcome::Failed(e) => {
                    // Give back the body as received, de-chunked if it was.
                    if entity_at == At::A && next == At::A {
                        self.a.clear();
                        let _ = dechunk(raw, &mut self.a);
                    }
                    return Decoded {
                        body: if entity_at == At::A { &self.a } else { raw },
                        outcome: Outcome::Failed(format!("{coding}: {e}")),
                    };
                }
                Outcome::Incomplete(e) => {
                    at = next;
                    outcome = Outcome::Incomplete(format!("{coding}: {e}"));
                    break;
                }
                Outcome::Cut => outcome = Outcome::Cut,
                Outcome::Complete => {}
            }
            at = next;
        }
        let body: &[u8] = match at {
            At::Raw => raw,
            At::A => &self.a,
            At::B => &self.b,
        };
        if body.len() > max {
            return Decoded {
                body: &body[..max],
                outcome: Outcome::Cut,
            };
        }
        Decoded { body, outcome }
    }
}

/// The decoded body (at most `max` bytes) of a stored HTTP response
/// `block` (head and body as received); empty if `block` has no HTTP head.
/// For a one-off; loops keep a [`BodyDecoder`].
pub fn decoded_payload(block: &[u8], max: usize) -> Vec<u8> {
    let Some(head) = crate::http::parse_response_head(block) else {
        return Vec::new();
    };
    let body = &block[head.body_offset.min(block.len())..];
    BodyDecoder::default()
        .decode_response(&head, body, max)
        .body
        .to_vec()
}

/// Removes chunked framing from `raw` into `out`: chunk extensions and
/// trailers are skipped, bare LF line ends accepted. An error means the
/// framing ended early or made no sense; `out` holds what came before.
pub fn dechunk(raw: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    let mut pos = 0;
    loop {
        let Some(eol) = memchr::memchr(b'\n', &raw[pos..]) else {
            return Err("cut before a chunk size".into());
        };
        let line = &raw[pos..pos + eol];
        pos += eol + 1;
        let size_text = line.split(|&b| b == b';').next().unwrap_or(&[]);
        let size_text = std::str::from_utf8(size_text)
            .map_err(|_| "bad chunk size".to_string())?
            .trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| format!("bad chunk size `{}`", size_text.escape_debug()))?;
        if size == 0 {
            // Trailers up to an empty line; a cut there loses nothing.
            return Ok(());
        }
        let end = pos.saturating_add(size);
        if end > raw.len() {
            out.extend_from_slice(&raw[pos..]);
            return Err("cut inside a chunk".into());
        }
        out.extend_from_slice(&raw[pos..end]);
        pos = end;
        // The CRLF after the data.
        if raw[pos..].starts_with(b"\r\n") {
            pos += 2;
        } else if raw[pos..].starts_with(b"\n") {
            pos += 1;
        } else if pos == raw.len() {
            return Err("cut after a chunk".into());
        } else {
            return Err("no line end after a chunk".into());
        }
    }
}

/// Undoes one content coding of `input` into `out`, at most `max` bytes.
fn decode_one(coding: &str, input: &[u8], max: usize, out: &mut Vec<u8>) -> Outcome {
    let result = match coding {
        "gzip" | "x-gzip" => read_capped(flate2::read::MultiGzDecoder::new(input), max, out),
        "deflate" if is_zlib(input) => read_capped(flate2::read::ZlibDecoder::new(input), max, out),
        // Many servers send raw deflate under this name.
        "deflate" => read_capped(flate2::read::DeflateDecoder::new(input), max, out),
        "br" => read_capped(
            brotli_decompressor::Decompressor::new(input, 32 * 1024),
            max,
            out,
        ),
        "zstd" => zstd::stream::read::Decoder::with_buffer(input)
            .and_then(|mut d| {
                d.window_log_max(ZSTD_WINDOW_LOG_MAX)?;
                Ok(d)
            })
            .and_then(|d| read_capped(d, max, out)),
        other => return Outcome::Failed(format!("unknown content coding `{other}`")),
    };
    match result {
        Ok(true) => Outcome::Cut,
        Ok(false) => Outcome::Complete,
        Err(e) if out.is_empty() => Outcome::Failed(e.to_string()),
        Err(e) => Outcome::Incomplete(e.to_string()),
    }
}

/// True if `b` starts with a zlib header (RFC 1950: deflate method, check bits).
fn is_zlib(b: &[u8]) -> bool {
    b.len() >= 2
        && b[0] & 0x0f == 8
        && b[0] >> 4 <= 7
        && (u16::from(b[0]) << 8 | u16::from(b[1])) % 31 == 0
}

/// Reads `r` to its end into `out`, stopping after `max` bytes; true if
/// it stopped there (more was left).
fn read_capped(mut r: impl Read, max: usize, out: &mut Vec<u8>) -> io::Result<bool> {
    let mut chunk = [0u8; 16 * 1024];
    loop {
        let room = (max + 1).saturating_sub(out.len());
        if room == 0 {
            out.truncate(max);
            return Ok(true);
        }
        let want = room.min(chunk.len());
        match r.read(&mut chunk[..want]) {
            Ok(0) => return Ok(false),
            Ok(n) => out.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests;
