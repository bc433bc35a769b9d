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

/// Compresses records into gzip members, reusing its compressor and its
/// buffer.
pub(crate) struct MemberWriter {
    deflate: Compressor,
    /// The parts of a record put end to end, as libdeflate wants one slice.
    joined: Vec<u8>,
}

impl MemberWriter {
    /// A writer at libdeflate level `level` (0 stores without compressing,
    /// 12 is the smallest; above 12 means 12).
    pub(crate) fn new(level: u32) -> MemberWriter {
        let level = CompressionLvl::new(level.min(12) as i32).unwrap_or_default();
        MemberWriter {
            deflate: Compressor::new(level),
            joined: Vec::new(),
        }
    }

    /// Appends one complete gzip member holding the concatenation of `parts`
    /// to `out`.
    pub(crate) fn member(&mut self, parts: &[&[u8]], out: &mut Vec<u8>) -> io::Result<()> {
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
        out.extend_from_slice(&HEADER);
        let start = out.len();
        let bound = self.deflate.deflate_compress_bound(input.len());
        out.resize(start + bound, 0);
        let n = self
            .deflate
            .deflate_compress(input, &mut out[start..])
            .map_err(|e| io::Error::other(format!("deflate: {e:?}")));
        match n {
            Ok(n) => out.truncate(start + n),
            Err(e) => {
                out.truncate(start - HEADER.len());
                return Err(e);
            }
        }
        out.extend_from_slice(&crc.sum().to_le_bytes());
        out.extend_from_slice(&len.to_le_bytes());
        Ok(())
    }
}

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
}
