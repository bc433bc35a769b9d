//! Candidate URLs: the canonical form and the filters every URL passes
//! before it is sorted, and what is carried along with it.
//!
//! A candidate is sorted under the key `domain TAB host TAB hash url`
//! (registrable domain, host, the URL's Bloom hash, canonical URL). A tab
//! sorts below every byte a host can hold, so the byte order of keys is the
//! order of the (domain, host, hash, url) tuples: a domain's URLs are
//! adjacent, then a host's, and the copies of one URL meet.

use common::bloom::BloomHash;
use common::filter::{Reject, UrlFilter};
use common::segment::Via;
use common::urlnorm::UrlError;
use url::Url;

use crate::round::counts::Counts;

/// What travels with a candidate URL. When one URL is found several times
/// the copies are merged with [`Meta::absorb`], which is commutative and
/// associative, so the result does not depend on the order of the inputs
/// (threads, spill files).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Meta {
    /// Hops from a seed (the smallest of the copies).
    pub hops: u32,
    /// Links to the URL found this round (the sum of the copies).
    pub inlinks: u32,
    /// Earlier failed attempts (the largest of the copies).
    pub tries: u32,
    /// How it was found (the copy with the strongest reason, see [`via_rank`]).
    pub via: Via,
    /// Already scheduled once (leftover, retry, backlog): not checked
    /// against `seen.bloom`.
    pub exempt: bool,
    /// Stored by the fetcher this round without having been scheduled (it
    /// followed a redirect): recorded as seen, scheduled nowhere.
    pub fetched: bool,
    /// Called seen by `seen.bloom` but found in none of the crawl's exact
    /// sets ([`crate::round::seen::rescue`]): a false positive, scheduled after all.
    pub rescued: bool,
    /// Not to be requested before this Unix second (0: any time; the latest
    /// of the copies): a leftover URL's `not_before`, rounded up.
    pub not_before_s: u32,
}

impl Meta {
    /// Size of [`Meta::encode`]'s output.
    pub const ENCODED_LEN: usize = 18;

    /// Merges another copy of the same URL into this one.
    pub fn absorb(&mut self, other: &Meta) {
        self.hops = self.hops.min(other.hops);
        self.inlinks = self.inlinks.saturating_add(other.inlinks);
        self.tries = self.tries.max(other.tries);
        if via_rank(other.via) < via_rank(self.via) {
            self.via = other.via;
        }
        self.exempt |= other.exempt;
        self.fetched |= other.fetched;
        self.rescued |= other.rescued;
        self.not_before_s = self.not_before_s.max(other.not_before_s);
    }

    /// A URL read back from the backlog: exempt from the seen check (it
    /// went into `seen.bloom` when it went into the backlog), its
    /// not-before kept; a refetch stays `recrawl`, a sitemap to read
    /// `sitemap-file`.
    pub fn of_backlog(rec: &common::segment::SegmentRecord) -> Meta {
        Meta {
            hops: rec.hops,
            inlinks: rec.inlinks,
            tries: rec.tries,
            via: match rec.via {
                // Kept: a refetch carries validators, a sitemap is read as one.
                Via::Recrawl | Via::SitemapFile => rec.via,
                _ => Via::Backlog,
            },
            exempt: true,
            fetched: false,
            rescued: false,
            not_before_s: Meta::seconds_of(rec.not_before),
        }
    }

    /// A segment line's `not_before` (Unix ms) as [`Meta::not_before_s`].
    pub fn seconds_of(not_before_ms: Option<i64>) -> u32 {
        not_before_ms.map_or(0, |ms| {
            u32::try_from((ms.max(0) as u64).div_ceil(1000)).unwrap_or(u32::MAX)
        })
    }

    /// [`Meta::not_before_s`] as a segment line's `not_before` (Unix ms).
    pub fn not_before_ms(&self) -> Option<i64> {
        (self.not_before_s > 0).then(|| i64::from(self.not_before_s) * 1000)
    }

    /// Fixed-size little-endian form used in sort buffers.
    pub fn encode(&self) -> [u8; Meta::ENCODED_LEN] {
        let mut b = [0u8; Meta::ENCODED_LEN];
        b[0..4].copy_from_slice(&self.hops.to_le_bytes());
        b[4..8].copy_from_slice(&self.inlinks.to_le_bytes());
        b[8..12].copy_from_slice(&self.tries.to_le_bytes());
        b[12] = via_code(self.via);
        b[13] = u8::from(self.exempt) | u8::from(self.fetched) << 1 | u8::from(self.rescued) << 2;
        b[14..18].copy_from_slice(&self.not_before_s.to_le_bytes());
        b
    }

    /// Inverse of [`Meta::encode`].
    pub fn decode(b: &[u8]) -> Meta {
        let word = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        Meta {
            hops: word(0),
            inlinks: word(4),
            tries: word(8),
            via: via_of_code(b[12]),
            exempt: b[13] & 1 != 0,
            fetched: b[13] & 2 != 0,
            rescued: b[13] & 4 != 0,
            not_before_s: word(14),
        }
    }
}

/// What a refetch brings of its last full response (the segment line's
/// `etag`, `last_modified`, `digest`, `fetched` and `record_id`): what the fetcher needs
/// for a conditional request and a `revisit` record. It travels beside a
/// candidate's [`Meta`] through the sort as bytes (empty for a URL that has
/// none), so that a refetch read back from a leftover or a backlog keeps it;
/// when copies of one URL meet, the one with the newest fetch is kept
/// ([`LastFetch::keep_newest`]).
///
/// The bytes are `FETCHED TAB digest TAB etag TAB last_modified TAB
/// record_id`: the fetch time as 16 hex digits (`-` × 16 when unknown), so
/// that the newest sorts last, then the fields as the segment line has them
/// (they hold no tab). Map outputs of version 1 ([`crate::state::mapped`]) carry
/// the first four fields only: read with no record ID.
pub struct LastFetch;

impl LastFetch {
    /// The bytes of `rec`'s last fetch into `out` (cleared; left empty
    /// when the line carries none).
    pub fn encode(rec: &common::segment::SegmentRecord, out: &mut Vec<u8>) {
        out.clear();
        if rec.etag.is_empty()
            && rec.last_modified.is_empty()
            && rec.digest.is_empty()
            && rec.fetched.is_none()
            && rec.record_id.is_empty()
        {
            return;
        }
        match rec.fetched {
            Some(ms) => out.extend_from_slice(format!("{:016x}", ms.max(0)).as_bytes()),
            None => out.extend_from_slice(&[b'-'; 16]),
        }
        for field in [&rec.digest, &rec.etag, &rec.last_modified, &rec.record_id] {
            out.push(b'\t');
            out.extend_from_slice(field.as_bytes());
        }
    }

    /// Sets `rec`'s last-fetch fields from `bytes` (all empty when `bytes`
    /// is empty or not in the form [`LastFetch::encode`] writes).
    pub fn apply(bytes: &[u8], rec: &mut common::segment::SegmentRecord) {
        rec.etag.clear();
        rec.last_modified.clear();
        rec.digest.clear();
        rec.fetched = None;
        rec.record_id.clear();
        let Ok(text) = std::str::from_utf8(bytes) else {
            return;
        };
        let mut f = text.split('\t');
        let (Some(time), Some(digest), Some(etag), Some(last_modified), record_id, None) =
            (f.next(), f.next(), f.next(), f.next(), f.next(), f.next())
        else {
            return;
        };
        rec.fetched = i64::from_str_radix(time, 16).ok();
        rec.digest.push_str(digest);
        rec.etag.push_str(etag);
        rec.last_modified.push_str(last_modified);
        rec.record_id.push_str(record_id.unwrap_or_default());
    }

    /// Merges another copy's bytes into `kept`: the newest fetch wins (ties
    /// by the bytes), whatever the order the copies come in.
    pub fn keep_newest(kept: &mut Vec<u8>, other: &[u8]) {
        if other > kept.as_slice() {
            kept.clear();
            kept.extend_from_slice(other);
        }
    }
}

/// Which `via` a merged URL keeps: a sitemap to read first (its via is
/// what makes the next round read it as a sitemap), then a retry (its
/// `tries` matter), then the other re-entries, then seeds, redirects and
/// links, and a page known only from a sitemap last.
pub fn via_rank(v: Via) -> u8 {
    match v {
        Via::SitemapFile => 0,
        Via::Retry => 1,
        Via::Leftover => 2,
        Via::Backlog => 3,
        Via::Seed => 4,
        Via::Redirect => 5,
        Via::Link => 6,
        Via::Robots => 7,
        Via::Recrawl => 8,
        Via::Sitemap => 9,
    }
}

/// A byte code for a `Via` (sort buffers and spill files only).
pub fn via_code(v: Via) -> u8 {
    via_rank(v)
}

/// Inverse of [`via_code`].
pub fn via_of_code(c: u8) -> Via {
    match c {
        0 => Via::SitemapFile,
        1 => Via::Retry,
        2 => Via::Leftover,
        3 => Via::Backlog,
        4 => Via::Seed,
        5 => Via::Redirect,
        6 => Via::Link,
        7 => Via::Robots,
        8 => Via::Recrawl,
        _ => Via::Sitemap,
    }
}

/// Bytes of the hash in a sort key.
pub const HASH_LEN: usize = 16;

/// Appends the sort key `domain TAB host TAB HASH url` to `buf`, where
/// HASH is the URL's 16-byte Bloom hash, big-endian. Within a host, URLs
/// sort by hash (their order there does not matter: the per-host cap puts
/// them in priority order), which lets the in-memory sort compare integers.
pub fn push_key(buf: &mut Vec<u8>, domain_host: &[u8], hash: BloomHash, url: &[u8]) {
    buf.reserve(domain_host.len() + 1 + HASH_LEN + url.len());
    buf.extend_from_slice(domain_host);
    buf.push(b'\t');
    buf.extend_from_slice(&hash.0.to_be_bytes());
    buf.extend_from_slice(&hash.1.to_be_bytes());
    buf.extend_from_slice(url);
}

/// `domain TAB host`, the first part of a sort key.
pub fn domain_host(buf: &mut Vec<u8>, domain: &str, host: &str) {
    buf.clear();
    buf.extend_from_slice(domain.as_bytes());
    buf.push(b'\t');
    buf.extend_from_slice(host.as_bytes());
}

/// The parts of a sort key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyParts<'a> {
    /// Registrable domain.
    pub domain: &'a str,
    /// Host (the segment's queue key).
    pub host: &'a str,
    /// The URL's Bloom hash.
    pub hash: BloomHash,
    /// Canonical URL.
    pub url: &'a str,
}

/// Splits a key made by [`push_key`]; `None` if it is not one.
pub fn split_key(key: &[u8]) -> Option<KeyParts<'_>> {
    let t1 = memchr::memchr(b'\t', key)?;
    let t2 = t1 + 1 + memchr::memchr(b'\t', &key[t1 + 1..])?;
    let h = key.get(t2 + 1..t2 + 1 + HASH_LEN)?;
    let word = |b: &[u8]| u64::from_be_bytes(b.try_into().expect("8 bytes"));
    Some(KeyParts {
        domain: std::str::from_utf8(&key[..t1]).ok()?,
        host: std::str::from_utf8(&key[t1 + 1..t2]).ok()?,
        hash: BloomHash(word(&h[..8]), word(&h[8..])),
        url: std::str::from_utf8(&key[t2 + 1 + HASH_LEN..]).ok()?,
    })
}

/// The `domain TAB host TAB` prefix of a key: equal for all URLs of one host.
pub fn host_prefix(key: &[u8]) -> &[u8] {
    let first = memchr::memchr(b'\t', key).map_or(key.len(), |i| i + 1);
    let second = memchr::memchr(b'\t', &key[first..]).map_or(key.len(), |i| first + i + 1);
    &key[..second]
}

/// Canonical form and filters, in the order the report lists them.
pub struct Admission<'a> {
    filter: &'a UrlFilter,
}

impl<'a> Admission<'a> {
    /// Admits URLs through `filter`.
    pub fn new(filter: &'a UrlFilter) -> Admission<'a> {
        Admission { filter }
    }

    /// Counts a URL the canonical form refused.
    pub fn count_url_error(&self, e: &UrlError, counts: &mut Counts) {
        match e {
            UrlError::Scheme { .. } => counts.reject(Reject::Scheme),
            UrlError::Invalid { .. } | UrlError::NoHost { .. } => counts.invalid_urls += 1,
        }
    }

    /// Applies the filters to a canonical URL; counts a refusal.
    pub fn admit(&self, url: &Url, hops: u32, counts: &mut Counts) -> bool {
        match self.filter.check(url, hops) {
            Ok(()) => true,
            Err(reason) => {
                counts.reject(reason);
                false
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(hops: u32, inlinks: u32, tries: u32, via: Via, exempt: bool) -> Meta {
        Meta {
            hops,
            inlinks,
            tries,
            via,
            exempt,
            fetched: false,
            rescued: false,
            not_before_s: 0,
        }
    }

    #[test]
    fn merging_copies_is_order_independent() {
        let copies = [
            meta(3, 1, 0, Via::Link, false),
            meta(1, 1, 0, Via::Redirect, false),
            meta(5, 0, 2, Via::Retry, true),
            meta(2, 4, 0, Via::Backlog, true),
        ];
        let mut forward = copies[0];
        for c in &copies[1..] {
            forward.absorb(c);
        }
        let mut backward = copies[3];
        for c in copies[..3].iter().rev() {
            backward.absorb(c);
        }
        assert_eq!(forward, backward);
        assert_eq!(forward, meta(1, 6, 2, Via::Retry, true));
    }

    #[test]
    fn a_refetch_keeps_its_newest_last_fetch() {
        use common::segment::SegmentRecord;
        let rec = |ms: i64, etag: &str| SegmentRecord {
            etag: etag.into(),
            last_modified: "Tue, 24 Nov 2026 09:00:00 GMT".into(),
            digest: "sha1:ABC".into(),
            fetched: Some(ms),
            record_id: format!("<urn:uuid:{ms}>"),
            ..SegmentRecord::default()
        };
        let (mut older, mut newer) = (Vec::new(), Vec::new());
        LastFetch::encode(&rec(1_000, "\"v1\""), &mut older);
        LastFetch::encode(&rec(2_000, "\"v2\""), &mut newer);
        let mut back = SegmentRecord::default();
        LastFetch::apply(&newer, &mut back);
        assert_eq!(back, rec(2_000, "\"v2\""));
        for (first, second) in [(&older, &newer), (&newer, &older)] {
            let mut kept = Vec::new();
            LastFetch::keep_newest(&mut kept, first);
            LastFetch::keep_newest(&mut kept, second);
            assert_eq!(kept, newer);
        }
        let mut none = Vec::new();
        LastFetch::encode(&SegmentRecord::default(), &mut none);
        assert!(none.is_empty());
        LastFetch::apply(&none, &mut back);
        assert_eq!(back, SegmentRecord::default());
        // The four fields of a version 1 map output: no record ID.
        LastFetch::apply(
            b"00000000000007d0\tsha1:ABC\t\"v2\"\tTue, 24 Nov 2026 09:00:00 GMT",
            &mut back,
        );
        assert_eq!(
            back,
            SegmentRecord {
                record_id: String::new(),
                ..rec(2_000, "\"v2\"")
            }
        );
    }

    #[test]
    fn meta_round_trips() {
        for via in Via::ALL {
            let m = meta(7, 70_000, 3, via, true);
            assert_eq!(Meta::decode(&m.encode()), m);
            let f = Meta { fetched: true, ..m };
            assert_eq!(Meta::decode(&f.encode()), f);
            let r = Meta { rescued: true, ..m };
            assert_eq!(Meta::decode(&r.encode()), r);
        }
    }

    #[test]
    fn keys_sort_like_tuples() {
        let key = |domain: &str, host: &str, url: &str| {
            let mut dh = Vec::new();
            domain_host(&mut dh, domain, host);
            let mut k = Vec::new();
            push_key(&mut k, &dh, BloomHash::of(url.as_bytes()), url.as_bytes());
            k
        };
        let a = key("example.com", "example.com", "http://example.com/z");
        let b = key("example.com", "a.example.com", "http://a.example.com/");
        let c = key("example.co", "www.example.co", "http://www.example.co/");
        // (example.co, ..) < (example.com, a..) < (example.com, example.com, ..)
        assert!(c < b && b < a);
        let parts = split_key(&b).unwrap();
        assert_eq!(parts.domain, "example.com");
        assert_eq!(parts.host, "a.example.com");
        assert_eq!(parts.url, "http://a.example.com/");
        assert_eq!(parts.hash, BloomHash::of(b"http://a.example.com/"));
        assert_eq!(host_prefix(&b), b"example.com\ta.example.com\t");
    }
}
