//! One gzip member (RFC 1952) per record, written around a raw deflate
//! stream so that one compressor is reset and reused for every record.

use std::io;

use flate2::{Compress, Compression, Crc, FlushCompress, Status};

/// The fixed 10-byte member header: magic, deflate, no flags, no time,
/// no extra flags, unknown OS.
const HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff];

/// Compresses records into gzip members, reusing its deflate state.
pub(crate) struct MemberWriter {
    deflate: Compress,
}

impl MemberWriter {
    pub(crate) fn new(level: Compression) -> MemberWriter {
        MemberWriter {
            deflate: Compress::new(level, false),
        }
    }

    /// Appends one complete gzip member holding the concatenation of `parts`
    /// to `out`.
    pub(crate) fn member(&mut self, parts: &[&[u8]], out: &mut Vec<u8>) -> io::Result<()> {
        self.deflate.reset();
        out.extend_from_slice(&HEADER);
        let mut crc = Crc::new();
        for part in parts {
            crc.update(part);
            self.deflate_part(part, out, FlushCompress::None)?;
        }
        self.deflate_part(&[], out, FlushCompress::Finish)?;
        out.extend_from_slice(&crc.sum().to_le_bytes());
        out.extend_from_slice(&crc.amount().to_le_bytes());
        Ok(())
    }

    fn deflate_part(
        &mut self,
        mut input: &[u8],
        out: &mut Vec<u8>,
        flush: FlushCompress,
    ) -> io::Result<()> {
        let finishing = matches!(flush, FlushCompress::Finish);
        if input.is_empty() && !finishing {
            return Ok(());
        }
        loop {
            if out.capacity() - out.len() < 1024 {
                out.reserve(input.len() / 2 + 16 * 1024);
            }
            let (in0, out0) = (self.deflate.total_in(), self.deflate.total_out());
            let status = self
                .deflate
                .compress_vec(input, out, flush)
                .map_err(io::Error::other)?;
            let used = (self.deflate.total_in() - in0) as usize;
            input = &input[used..];
            if finishing {
                if status == Status::StreamEnd {
                    return Ok(());
                }
            } else if input.is_empty() {
                return Ok(());
            }
            if used == 0 && self.deflate.total_out() == out0 {
                // No progress although there was room: give it more room.
                out.reserve(out.capacity().max(64 * 1024));
            }
        }
    }
}
