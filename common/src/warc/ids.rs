//! Random version 4 UUIDs for `WARC-Record-ID`, without a dependency.
//!
//! A xoshiro256++ generator seeded once from the operating system
//! (`/dev/urandom`), mixed with the time and the process id, so that two
//! writers, even in two processes started at once, never share a sequence.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::io::Read;
use std::time::{SystemTime, UNIX_EPOCH};

/// Length of `<urn:uuid:xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx>`.
pub(crate) const RECORD_ID_LEN: usize = 47;

/// Generates record ids.
pub(crate) struct IdGen {
    s: [u64; 4],
}

impl IdGen {
    /// A generator with a fresh random seed.
    pub(crate) fn new() -> IdGen {
        let mut seed = [0u8; 32];
        let from_os = std::fs::File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut seed))
            .is_ok();
        let mut s = [0u64; 4];
        for (i, word) in s.iter_mut().enumerate() {
            let mut b = [0u8; 8];
            b.copy_from_slice(&seed[i * 8..i * 8 + 8]);
            *word = u64::from_le_bytes(b);
        }
        // Mix in std's randomly keyed hasher, the time and the pid as well:
        // this is the only entropy when /dev/urandom is missing, and harmless
        // otherwise.
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        for (i, word) in s.iter_mut().enumerate() {
            let mut h = RandomState::new().build_hasher();
            h.write_u64(nanos);
            h.write_u32(std::process::id());
            h.write_usize(i);
            h.write_u8(u8::from(from_os));
            *word ^= splitmix(h.finish().wrapping_add(i as u64));
        }
        if s == [0; 4] {
            s[0] = 0x9e37_79b9_7f4a_7c15;
        }
        IdGen { s }
    }

    fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// A new `<urn:uuid:...>` (version 4, RFC 4122 variant), lower-case hex.
    pub(crate) fn record_id(&mut self) -> [u8; RECORD_ID_LEN] {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&self.next_u64().to_le_bytes());
        b[8..].copy_from_slice(&self.next_u64().to_le_bytes());
        b[6] = (b[6] & 0x0f) | 0x40;
        b[8] = (b[8] & 0x3f) | 0x80;
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut out = [0u8; RECORD_ID_LEN];
        out[..10].copy_from_slice(b"<urn:uuid:");
        let mut j = 10;
        for (i, byte) in b.iter().enumerate() {
            if matches!(i, 4 | 6 | 8 | 10) {
                out[j] = b'-';
                j += 1;
            }
            out[j] = HEX[usize::from(byte >> 4)];
            out[j + 1] = HEX[usize::from(byte & 15)];
            j += 2;
        }
        out[j] = b'>';
        debug_assert_eq!(j + 1, RECORD_ID_LEN);
        out
    }
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn record_ids_are_v4_uuids_and_distinct() {
        let mut a = IdGen::new();
        let mut b = IdGen::new();
        let mut seen = HashSet::new();
        for _ in 0..10_000 {
            for id in [a.record_id(), b.record_id()] {
                let s = std::str::from_utf8(&id).unwrap().to_string();
                assert!(s.starts_with("<urn:uuid:") && s.ends_with('>'), "{s}");
                let u = &s[10..46];
                let groups: Vec<&str> = u.split('-').collect();
                let lens: Vec<usize> = groups.iter().map(|g| g.len()).collect();
                assert_eq!(lens, [8, 4, 4, 4, 12], "{s}");
                assert!(u.bytes().all(|c| c == b'-' || c.is_ascii_hexdigit()));
                assert!(!u.bytes().any(|c| c.is_ascii_uppercase()));
                assert_eq!(&groups[2][..1], "4", "version nibble: {s}");
                assert!("89ab".contains(&groups[3][..1]), "variant: {s}");
                assert!(seen.insert(s.clone()), "duplicate id {s}");
            }
        }
    }
}
