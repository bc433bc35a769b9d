//! One fetch of a URL as the scan sees it, and how it travels through the
//! round's external sort to the history merge.
//!
//! Observations are sorted with the candidates' sorter ([`crate::round::sort`]),
//! in sorters of their own: the key's URL part is `URL NUL FIELDS` under a
//! zero hash, so a host's observations come out by URL, and those of one URL
//! by fetch time (the first field, fixed-width hex), oldest first, the
//! order the history applies them in. The fields after the key's URL are
//! `TIME hops status kind digest etag last_modified record_id record_date
//! canonical` (tab-separated); map outputs of version 2
//! ([`crate::state::mapped`]) have the first nine, read with no canonical hint,
//! those of version 1 the first seven, read with the record unknown too.

use super::clean_value;

/// How a fetch was stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Kind {
    /// A full response.
    #[default]
    Full,
    /// A `revisit` record, profile server-not-modified (a 304).
    NotModified,
    /// A `revisit` record, profile identical-payload-digest.
    Identical,
    /// Not a fetch: a sitemap says the URL changed at `fetched_ms` (its
    /// `<lastmod>`). Makes a URL in the history due if that is after its
    /// last fetch; never adds a URL to the history.
    Hint,
    /// Not a fetch: the URL's retries ran out (`--max-tries` failed
    /// rounds) at `fetched_ms`. Kept in the history as `failed`, due again
    /// much later (never dropped).
    Exhausted,
}

impl Kind {
    fn code(self) -> char {
        match self {
            Kind::Full => 'f',
            Kind::NotModified => 'n',
            Kind::Identical => 'i',
            Kind::Hint => 'h',
            Kind::Exhausted => 'x',
        }
    }

    fn of_code(c: &str) -> Option<Kind> {
        Some(match c {
            "f" => Kind::Full,
            "n" => Kind::NotModified,
            "i" => Kind::Identical,
            "h" => Kind::Hint,
            "x" => Kind::Exhausted,
            _ => return None,
        })
    }
}

/// One fetch of a URL.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Observation {
    /// When (`WARC-Date`), Unix ms; for a [`Kind::Hint`], when the page
    /// changed (its sitemap `<lastmod>`), not a fetch.
    pub fetched_ms: i64,
    /// Hops from a seed (`X-Crawl-Hops`).
    pub hops: u32,
    /// The HTTP status (0 when `robots`).
    pub status: u16,
    /// Disallowed by robots.txt (from the crawl log; no response).
    pub robots: bool,
    /// Full response or revisit.
    pub kind: Kind,
    /// `WARC-Payload-Digest` (empty: none).
    pub digest: String,
    /// `ETag` (empty: none).
    pub etag: String,
    /// `Last-Modified` (empty: none).
    pub last_modified: String,
    /// The `WARC-Record-ID` of the response holding the payload: this
    /// record's own for a full response, the one a revisit refers to
    /// (`WARC-Refers-To`) for a revisit (empty: unknown).
    pub record_id: String,
    /// That response's `WARC-Date`, Unix ms (a revisit's
    /// `WARC-Refers-To-Date`; `None`: unknown).
    pub record_ms: Option<i64>,
    /// The canonical URL the page names (`<link rel=canonical>`, a `Link`
    /// header), a hint (empty: none).
    pub canonical: String,
}

impl Observation {
    /// `url NUL fields`: the URL part of the sort key.
    pub fn encode(&self, url: &str, out: &mut String) {
        use std::fmt::Write;
        out.clear();
        out.push_str(url);
        out.push('\0');
        let status = if self.robots {
            "r".to_string()
        } else {
            self.status.to_string()
        };
        let record_ms = match self.record_ms {
            Some(ms) => format!("{:016x}", ms.max(0)),
            None => "-".to_string(),
        };
        let _ = write!(
            out,
            "{:016x}\t{}\t{status}\t{}\t{}\t{}\t{}\t{}\t{record_ms}\t{}",
            self.fetched_ms.max(0),
            self.hops,
            self.kind.code(),
            clean_value(&self.digest),
            clean_value(&self.etag),
            clean_value(&self.last_modified),
            clean_value(&self.record_id),
            clean_value(&self.canonical),
        );
    }

    /// Inverse of [`Observation::encode`]: the URL and the observation.
    pub fn decode(text: &str) -> Option<(&str, Observation)> {
        let (url, rest) = text.split_once('\0')?;
        let mut f = rest.split('\t');
        let time = i64::from_str_radix(f.next()?, 16).ok()?;
        let hops = f.next()?.parse().ok()?;
        let status = f.next()?;
        let kind = Kind::of_code(f.next()?)?;
        let (robots, status) = match status {
            "r" => (true, 0),
            s => (false, s.parse().ok()?),
        };
        let mut obs = Observation {
            fetched_ms: time,
            hops,
            status,
            robots,
            kind,
            digest: f.next()?.to_string(),
            etag: f.next()?.to_string(),
            last_modified: f.next()?.to_string(),
            record_id: String::new(),
            record_ms: None,
            canonical: String::new(),
        };
        // (Without the record's two fields: a version 1 map output.)
        if let Some(record_id) = f.next() {
            obs.record_id = record_id.to_string();
            obs.record_ms = match f.next()? {
                "-" => None,
                ms => Some(i64::from_str_radix(ms, 16).ok()?),
            };
            // (Without it: a version 2 map output.)
            if let Some(canonical) = f.next() {
                obs.canonical = canonical.to_string();
            }
        }
        f.next().is_none().then_some((url, obs))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_sorts_by_url_then_time() {
        let obs = |ms: i64| Observation {
            fetched_ms: ms,
            hops: 2,
            status: 200,
            robots: false,
            kind: Kind::Identical,
            digest: "sha1:ABC".into(),
            etag: "\"v1\"".into(),
            last_modified: String::new(),
            record_id: "<urn:uuid:1>".into(),
            record_ms: Some(ms - 1),
            canonical: "http://www.a.test/".into(),
        };
        let mut a = String::new();
        obs(5).encode("http://a.test/", &mut a);
        assert_eq!(Observation::decode(&a), Some(("http://a.test/", obs(5))));
        let mut b = String::new();
        obs(300).encode("http://a.test/", &mut b);
        let mut c = String::new();
        obs(1).encode("http://a.test/x", &mut c);
        assert!(a < b && b < c);
        let r = Observation {
            robots: true,
            ..Observation::default()
        };
        r.encode("http://a.test/", &mut a);
        assert_eq!(Observation::decode(&a).unwrap().1, r);
        // As a version 1 map output has it: no record.
        let old = "http://a.test/\u{0}0000000000000005\t2\t200\ti\tsha1:ABC\t\"v1\"\t";
        let (url, back) = Observation::decode(old).unwrap();
        assert_eq!(url, "http://a.test/");
        assert_eq!(
            back,
            Observation {
                record_id: String::new(),
                record_ms: None,
                canonical: String::new(),
                ..obs(5)
            }
        );
        // As a version 2 map output has it: no canonical hint.
        let mut v2 = String::new();
        obs(5).encode("http://a.test/", &mut v2);
        let v2 = v2.trim_end_matches("\thttp://www.a.test/");
        let (_, back) = Observation::decode(v2).unwrap();
        assert_eq!(
            back,
            Observation {
                canonical: String::new(),
                ..obs(5)
            }
        );
    }
}
