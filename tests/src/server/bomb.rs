//! A gzip stream that inflates to any number of zero bytes, crafted by hand
//! instead of compressed, so that a multi-gigabyte bomb costs nothing to build.
//!
//! The stream is one gzip member holding one dynamic-Huffman DEFLATE block
//! (RFC 1951, section 3.2.7) whose codes are chosen so that the repeated
//! symbol costs almost nothing:
//!
//! - literal/length alphabet: length code 285 (a match of 258 bytes) gets
//!   the 1-bit code `0`; literal 0 gets `10`, end-of-block gets `11`;
//! - distance alphabet: one code, distance 1, with the 1-bit code `0`.
//!
//! So the data is: literal 0 (`10`), then one 2-bit all-zero match per 258
//! output bytes, then a few literals for the remainder and end-of-block. The
//! run of matches is a run of zero *bits*: about 1 byte sent per 1032 bytes
//! inflated, and the server sends it from a static buffer of zeros. The
//! trailer carries the CRC-32 of the zeros, computed in logarithmic time.

/// A gzip stream inflating to `inflated` zero bytes, sent as `prefix`, then
/// `zero_bytes` zero bytes, then `suffix`.
#[derive(Debug)]
pub(super) struct GzipBomb {
    pub(super) prefix: Vec<u8>,
    pub(super) zero_bytes: u64,
    pub(super) suffix: Vec<u8>,
}

/// Order in which code-length code lengths are stored (RFC 1951).
const CL_ORDER: [usize; 19] = [
    16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
];

impl GzipBomb {
    pub(super) fn new(inflated: u64) -> GzipBomb {
        let mut w = BitWriter::default();
        // gzip header: magic, deflate, no flags, no time, no extra flags, OS unknown.
        w.bytes(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255]);
        // Final block, dynamic Huffman codes.
        w.bits(1, 1);
        w.bits(2, 2);
        w.bits(286 - 257, 5); // HLIT: literal/length codes 0..=285
        w.bits(0, 5); // HDIST: one distance code
        w.bits(18 - 4, 4); // HCLEN: the first 18 entries of CL_ORDER
        // Code-length alphabet: 18 → `0`, 1 → `10`, 2 → `11`.
        for &sym in &CL_ORDER[..18] {
            let len = match sym {
                18 => 1,
                1 | 2 => 2,
                _ => 0,
            };
            w.bits(len, 3);
        }
        let cl = |w: &mut BitWriter, sym: u32| match sym {
            18 => w.code(0b0, 1),
            1 => w.code(0b10, 2),
            2 => w.code(0b11, 2),
            _ => unreachable!("no code for code length symbol {sym}"),
        };
        let zeros = |w: &mut BitWriter, mut n: u32| {
            while n > 0 {
                let run = n.min(138);
                debug_assert!(run >= 11);
                cl(w, 18);
                w.bits(run - 11, 7);
                n -= run;
            }
        };
        // Literal/length code lengths: 0 → 2, 1..=255 → 0, 256 → 2,
        // 257..=284 → 0, 285 → 1; then the distance code length: 1.
        cl(&mut w, 2);
        zeros(&mut w, 255);
        cl(&mut w, 2);
        zeros(&mut w, 28);
        cl(&mut w, 1);
        cl(&mut w, 1);
        // Data: one literal zero, then the matches, then the rest as literals.
        let literal_zero = |w: &mut BitWriter| w.code(0b10, 2);
        let mut matches = 0;
        let mut tail_literals = 0;
        if inflated > 0 {
            literal_zero(&mut w);
            matches = (inflated - 1) / 258;
            tail_literals = (inflated - 1) % 258;
        }
        // Each match is two zero bits: finish the current byte with them;
        // if a run is left, the prefix ends here, the whole zero bytes are
        // counted, and the suffix starts with the leftover bits.
        let mut zero_bits = 2 * matches;
        let align = u64::from((8 - w.pending) % 8).min(zero_bits);
        w.bits(0, align as u32);
        zero_bits -= align;
        let (prefix, zero_bytes, mut w) = if zero_bits == 0 {
            (Vec::new(), 0, w)
        } else {
            debug_assert_eq!(w.pending, 0);
            let mut rest = BitWriter::default();
            rest.bits(0, (zero_bits % 8) as u32);
            (w.out, zero_bits / 8, rest)
        };
        for _ in 0..tail_literals {
            literal_zero(&mut w);
        }
        w.code(0b11, 2); // end of block
        w.flush();
        let mut suffix = w.out;
        suffix.extend_from_slice(&crc32_of_zeros(inflated).to_le_bytes());
        suffix.extend_from_slice(&(inflated as u32).to_le_bytes());
        GzipBomb {
            prefix,
            zero_bytes,
            suffix,
        }
    }

    /// Bytes sent.
    pub(super) fn compressed_len(&self) -> u64 {
        self.prefix.len() as u64 + self.zero_bytes + self.suffix.len() as u64
    }
}

/// Writes bits least-significant first, as DEFLATE packs them.
#[derive(Default)]
struct BitWriter {
    out: Vec<u8>,
    acc: u64,
    pending: u32,
}

impl BitWriter {
    fn bits(&mut self, value: u32, count: u32) {
        if count == 0 {
            return;
        }
        self.acc |= u64::from(value) << self.pending;
        self.pending += count;
        while self.pending >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.pending -= 8;
        }
    }

    /// A Huffman code: stored most-significant bit first.
    fn code(&mut self, code: u32, len: u32) {
        let reversed = code.reverse_bits() >> (32 - len);
        self.bits(reversed, len);
    }

    /// Byte-aligned bytes (only at a byte boundary).
    fn bytes(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.bits(u32::from(b), 8);
        }
    }

    /// Pads the last byte with zero bits.
    fn flush(&mut self) {
        if self.pending > 0 {
            self.out.push(self.acc as u8);
            self.acc = 0;
            self.pending = 0;
        }
    }
}

/// CRC-32 (the gzip one) of `n` zero bytes.
///
/// Feeding a zero byte to the CRC register is a linear map over GF(2); its
/// n-th power is built by repeated squaring, as zlib's `crc32_combine` does.
pub(super) fn crc32_of_zeros(n: u64) -> u32 {
    // The operator for one zero bit: shift right, xor the polynomial if the
    // bit shifted out was set. Column i is the image of bit i.
    let mut op = [0u32; 32];
    op[0] = 0xEDB8_8320;
    for (i, col) in op.iter_mut().enumerate().skip(1) {
        *col = 1 << (i - 1);
    }
    // One zero byte = eight zero bits.
    for _ in 0..3 {
        op = square(&op);
    }
    let mut reg = 0xFFFF_FFFFu32;
    let mut n = n;
    while n > 0 {
        if n & 1 == 1 {
            reg = apply(&op, reg);
        }
        n >>= 1;
        if n > 0 {
            op = square(&op);
        }
    }
    reg ^ 0xFFFF_FFFF
}

fn apply(op: &[u32; 32], mut vec: u32) -> u32 {
    let mut sum = 0;
    let mut i = 0;
    while vec != 0 {
        if vec & 1 == 1 {
            sum ^= op[i];
        }
        vec >>= 1;
        i += 1;
    }
    sum
}

fn square(op: &[u32; 32]) -> [u32; 32] {
    let mut out = [0u32; 32];
    for (o, &col) in out.iter_mut().zip(op) {
        *o = apply(op, col);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn assemble(b: &GzipBomb) -> Vec<u8> {
        let mut all = b.prefix.clone();
        all.resize(all.len() + b.zero_bytes as usize, 0);
        all.extend_from_slice(&b.suffix);
        all
    }

    #[test]
    fn crc_of_zeros_matches_a_plain_crc() {
        for n in [0u64, 1, 2, 7, 258, 1000, 123_457] {
            let mut crc = flate2::Crc::new();
            crc.update(&vec![0; n as usize]);
            assert_eq!(crc32_of_zeros(n), crc.sum(), "n = {n}");
        }
    }

    #[test]
    fn inflates_to_exactly_the_asked_length() {
        // Lengths around the 258-byte match size and the byte alignment of
        // the run of matches, including the case with no run at all.
        for n in [
            0u64,
            1,
            2,
            257,
            258,
            259,
            260,
            1033,
            4 * 258 + 1,
            100_000,
            3_000_001,
        ] {
            let bomb = GzipBomb::new(n);
            let gz = assemble(&bomb);
            assert_eq!(gz.len() as u64, bomb.compressed_len());
            let mut out = Vec::new();
            // GzDecoder checks the CRC and the length in the trailer.
            flate2::read::GzDecoder::new(&gz[..])
                .read_to_end(&mut out)
                .unwrap_or_else(|e| panic!("n = {n}: {e}"));
            assert_eq!(out.len() as u64, n);
            assert!(out.iter().all(|&b| b == 0));
        }
    }

    #[test]
    fn a_gigabyte_costs_about_a_megabyte() {
        let bomb = GzipBomb::new(1 << 30);
        assert!(
            bomb.compressed_len() < 1_100_000,
            "{}",
            bomb.compressed_len()
        );
        let mut decoder = flate2::read::GzDecoder::new(std::io::Cursor::new(assemble(&bomb)));
        let n = std::io::copy(&mut decoder, &mut std::io::sink()).unwrap();
        assert_eq!(n, 1 << 30);
    }
}
