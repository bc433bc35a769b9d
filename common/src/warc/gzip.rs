//! One gzip member (RFC 1952) per record, its deflate stream made by
//! libdeflate in one call over the whole record, which is held in memory.
//!
//! libdeflate compresses a buffer at once instead of a stream, and for
//! records of a few KB to a few hundred KB it takes less CPU than zlib for
//! the same size of output (`examples/bench_warc.rs`).

use std::io;

use libdeflater::{CompressionLvl, Compressor, Crc};

/// The fixed 10-byte member header: magic, deflate, no flags, no time,
/// no extra flags, unknown OS.
const HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];

/// Records shorter than this are stored in their member as they are (a
/// stored deflate block) instead of compressed. Compressing a record costs
/// libdeflate about 6.7 µs of set-up (its 128 KiB hash table and Huffman
/// codes) whatever the record's size: as much as the rest of storing a page
/// for the request and metadata records of a fetch (700 and 500 bytes),
/// which it shrinks by 90–180 bytes. Readers see the same records.
pub(crate) const STORED_BELOW: usize = 1024;

/// Buffers grown past this by a large record are freed after it (there is
/// a writer per compressor, several per core).
const KEEP_BUFFERS: usize = 1 << 20;

/// Compresses records into gzip members, reusing its compressor and its
/// buffers.
pub(crate) struct MemberWriter {
    deflate: Compressor,
    /// Level 0: the short records, stored.
    store: Compressor,
    /// The parts of a record put end to end, as libdeflate wants one slice.
    joined: Vec<u8>,
    /// Where libdeflate writes, as long as the longest bound so far (never
    /// shortened, so it is zeroed once, not for every record).
    scratch: Vec<u8>,
}

impl MemberWriter {
    /// A writer at libdeflate level `level` (0 stores without compressing,
    /// 12 is the smallest; above 12 means 12).
    pub(crate) fn new(level: u32) -> MemberWriter {
        let level = CompressionLvl::new(level.min(12) as i32).unwrap_or_default();
        MemberWriter {
            deflate: Compressor::new(level),
            store: Compressor::new(CompressionLvl::new(0).unwrap_or_default()),
            joined: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// Appends to `out` the raw deflate stream of `parts` put end to end
    /// (no gzip header or trailer), stored if they are shorter than
    /// [`STORED_BELOW`]; returns their CRC-32 and length, for the trailer of
    /// a member that [`finish_member`] completes.
    pub(crate) fn deflate_raw(
        &mut self,
        parts: &[&[u8]],
        out: &mut Vec<u8>,
    ) -> io::Result<(u32, u32)> {
        let input: &[u8] = match parts {
            [one] => one,
            _ => {
                self.joined.clear();
                for part in parts {
                    self.joined.extend_from_slice(part);
                }
                &self.joined
            }
        };
        let len = u32::try_from(input.len()).map_err(|_| {
            io::Error::other(format!(
                "a WARC record of {} bytes is more than a gzip member can hold (4 GiB)",
                input.len()
            ))
        })?;
        let mut crc = Crc::new();
        crc.update(input);
        let deflate = if input.len() < STORED_BELOW {
            &mut self.store
        } else {
            &mut self.deflate
        };
        let bound = deflate.deflate_compress_bound(input.len());
        if self.scratch.len() < bound {
            self.scratch.resize(bound, 0);
        }
        let done = deflate.deflate_compress(input, &mut self.scratch[..bound]);
        if let Ok(n) = done {
            out.extend_from_slice(&self.scratch[..n]);
        }
        if bound > KEEP_BUFFERS {
            // A large body: its buffers are not kept for the small ones.
            self.scratch = Vec::new();
            self.joined = Vec::new();
        }
        done.map_err(|e| io::Error::other(format!("deflate: {e:?}")))?;
        Ok((crc.sum(), len))
    }

    /// Appends one complete gzip member holding the concatenation of `parts`
    /// to `out`: the header, [`MemberWriter::deflate_raw`], the trailer. On
    /// an error `out` is as it was.
    pub(crate) fn member(&mut self, parts: &[&[u8]], out: &mut Vec<u8>) -> io::Result<()> {
        let start = out.len();
        out.extend_from_slice(&HEADER);
        match self.deflate_raw(parts, out) {
            Ok((crc, len)) => {
                out.extend_from_slice(&crc.to_le_bytes());
                out.extend_from_slice(&len.to_le_bytes());
                Ok(())
            }
            Err(e) => {
                out.truncate(start);
                Err(e)
            }
        }
    }
}

/// Appends to `out` a gzip member whose data is `prefix` (kept as a stored
/// deflate block, at most 64 KiB) followed by what `deflated` compresses:
/// a raw deflate stream from [`MemberWriter::deflate_raw`] of `len` bytes
/// with CRC-32 `crc`. A stored block that is not the last one may precede
/// any deflate block (RFC 1951, 3.2.4), so the member is one valid stream;
/// this lets the thread that writes a file put a few bytes that only it
/// knows (the file's `warcinfo` record ID) at the start of records that
/// other threads compressed.
pub(crate) fn finish_member(
    prefix: &[u8],
    prefix_crc: &crc32fast::Hasher,
    deflated: &[u8],
    crc: u32,
    len: u32,
    out: &mut Vec<u8>,
) {
    let plen = u16::try_from(prefix.len()).expect("a record prefix is short");
    out.extend_from_slice(&HEADER);
    // BFINAL = 0, BTYPE = 00 (stored), padded to the byte.
    out.push(0);
    out.extend_from_slice(&plen.to_le_bytes());
    out.extend_from_slice(&(!plen).to_le_bytes());
    out.extend_from_slice(prefix);
    out.extend_from_slice(deflated);
    let mut whole = prefix_crc.clone();
    whole.combine(&crc32fast::Hasher::new_with_initial_len(
        crc,
        u64::from(len),
    ));
    out.extend_from_slice(&whole.finalize().to_le_bytes());
    out.extend_from_slice(&(u32::from(plen).wrapping_add(len)).to_le_bytes());
}

/// Bytes a member adds around its stored prefix and deflate stream.
pub(crate) const MEMBER_OVERHEAD: usize = HEADER.len() + 5 + 8;

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    /// Decodes one gzip member with an independent decoder (zlib's), which
    /// checks the header, the CRC-32 and the length in the trailer.
    fn gunzip(member: &[u8]) -> Vec<u8> {
        let mut d = flate2::read::GzDecoder::new(member);
        let mut out = Vec::new();
        d.read_to_end(&mut out).expect("a valid gzip member");
        assert!(d.into_inner().is_empty(), "nothing after the member");
        out
    }

    #[test]
    fn a_stored_prefix_and_a_deflate_stream_make_one_member() {
        let text = b"WARC-Type: response\r\n\r\n<p>some text that compresses text text</p>";
        for level in [0, 1, 9] {
            let mut w = MemberWriter::new(level);
            let mut deflated = Vec::new();
            let (crc, len) = w
                .deflate_raw(&[&text[..10], &text[10..]], &mut deflated)
                .unwrap();
            let prefix = b"WARC/1.1\r\nWARC-Warcinfo-ID: <urn:uuid:x>\r\n";
            let mut prefix_crc = crc32fast::Hasher::new();
            prefix_crc.update(prefix);
            let mut out = Vec::new();
            finish_member(prefix, &prefix_crc, &deflated, crc, len, &mut out);
            assert_eq!(out.len(), MEMBER_OVERHEAD + prefix.len() + deflated.len());
            assert_eq!(
                gunzip(&out),
                [&prefix[..], &text[..]].concat(),
                "level {level}"
            );
        }
    }

    #[test]
    fn every_level_makes_members_that_zlib_reads_back() {
        let text: Vec<u8> = (0..40_000u32)
            .flat_map(|i| format!("<p>{} {}</p>\n", i % 97, i * 7919 % 1013).into_bytes())
            .collect();
        let noise: Vec<u8> = (0..5_000u64)
            .map(|i| (i.wrapping_mul(6_364_136_223_846_793_005) >> 56) as u8)
            .collect();
        for level in [0, 1, 3, 6, 9, 12, 99] {
            let mut w = MemberWriter::new(level);
            let mut out = Vec::new();
            let cases: [&[&[u8]]; 5] = [
                &[b"WARC/1.1\r\n", &text, b"\r\n\r\n"],
                &[&text],
                &[&noise, b"", &noise],
                &[],
                &[b""],
            ];
            for parts in cases {
                out.clear();
                w.member(parts, &mut out).unwrap();
                assert_eq!(out[..10], HEADER, "level {level}");
                assert_eq!(gunzip(&out), parts.concat(), "level {level}");
            }
            // Members follow each other in one buffer, as in a WARC file.
            out.clear();
            w.member(&[b"first"], &mut out).unwrap();
            let first = out.len();
            w.member(&[&text], &mut out).unwrap();
            assert_eq!(gunzip(&out[..first]), b"first");
            assert_eq!(gunzip(&out[first..]), text);
            if level >= 1 {
                assert!(
                    out.len() - first < text.len() / 3,
                    "level {level} compresses"
                );
            }
        }
    }

    #[test]
    fn short_records_are_stored_and_longer_ones_compressed() {
        let line = b"WARC-Concurrent-To: <urn:uuid:00000000-0000-0000-0000-000000000000>\r\n";
        let short: Vec<u8> = line
            .iter()
            .cycle()
            .take(STORED_BELOW - 1)
            .copied()
            .collect();
        let long: Vec<u8> = line.iter().cycle().take(STORED_BELOW).copied().collect();
        let mut w = MemberWriter::new(1);
        let mut out = Vec::new();
        w.member(&[&short[..10], &short[10..]], &mut out).unwrap();
        // Header, one final stored block (1 + 4 bytes) holding the record
        // as it is, trailer.
        assert_eq!(out.len(), HEADER.len() + 5 + short.len() + 8);
        assert_eq!(&out[HEADER.len() + 5..][..short.len()], &short[..]);
        assert_eq!(gunzip(&out), short);
        out.clear();
        w.member(&[&long], &mut out).unwrap();
        assert!(out.len() < long.len() / 4, "{} bytes", out.len());
        assert_eq!(gunzip(&out), long);
    }
}
