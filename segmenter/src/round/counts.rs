//! The counters of a round's scan: each scan worker keeps its own
//! [`Counts`], and they are summed with `+=` into the report
//! ([`crate::round::report`]); the progress line ([`crate::progress`]) reads them as
//! they grow.

use std::ops::AddAssign;

use common::filter::Reject;
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Counters kept by each scan worker and summed with `+=`. Read back from
/// JSON (a map's `counts.json`) with every counter optional (0 if absent).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Counts {
    /// Fetched runs read.
    pub runs: u64,
    /// WARC files read.
    pub warc_files: u64,
    /// WARC records read.
    pub records: u64,
    /// `response` records of pages (robots.txt fetches not included).
    pub responses: u64,
    /// `revisit` records (refetches found unchanged; no links read).
    pub revisits: u64,
    /// `response` records of robots.txt fetches (skipped).
    pub robots_responses: u64,
    /// Responses read as HTML.
    pub html_pages: u64,
    /// Of them, pages whose links were read from their WARC metadata
    /// record (listed by the fetcher) rather than parsed.
    pub links_listed_pages: u64,
    /// Bytes of HTML bodies read.
    pub html_bytes: u64,
    /// Links found in pages (before any filter).
    pub links: u64,
    /// Redirect targets found.
    pub redirects: u64,
    /// Links not followed: `rel=nofollow`, or a nofollow page.
    pub nofollow: u64,
    /// Links beyond the per-page cap (`max_links_per_page`), not taken.
    pub over_page_cap: u64,
    /// Pages that had links beyond the cap.
    pub pages_over_page_cap: u64,
    /// Links to the page itself (empty or fragment-only).
    pub same_page: u64,
    /// Pages whose markup the parser gave up on before the end.
    pub incomplete_pages: u64,
    /// Response bodies that could not be (wholly) decoded; links were read
    /// from what could be.
    pub undecodable_bodies: u64,
    /// Seed lines with a URL.
    pub seeds: u64,
    /// Seed lines that are not URLs.
    pub bad_seed_lines: u64,
    /// URLs from leftover lists (never attempted).
    pub leftover: u64,
    /// URLs from leftover lists to retry.
    pub retries: u64,
    /// Retries dropped after `max_tries` attempts.
    pub retries_exhausted: u64,
    /// URLs from the backlog.
    pub backlog_in: u64,
    /// URLs due again, from the fetch history.
    pub due_in: u64,
    /// Backlog URLs a host rule added or changed since they went to wait
    /// spells otherwise: scheduled under the new spelling, merged with its
    /// other copies.
    pub respelled: u64,
    /// Copies of URLs that wait already (in the backlog, or in a segment
    /// not yet fetched) that came again: a refetch come due, a leftover, a
    /// second backlog line. Dropped: the waiting URL is handed out once.
    pub waiting_copies: u64,
    /// Malformed lines in leftover or backlog files.
    pub bad_lines: u64,
    /// URLs that are not valid URLs.
    pub invalid_urls: u64,
    /// Refusals by each filter, in [`Reject::ALL`] order (in JSON, an
    /// object keyed by the reason's name).
    #[serde(
        serialize_with = "rejects_by_name",
        deserialize_with = "rejects_from_names"
    )]
    pub rejects: [u64; Reject::ALL.len()],
    /// Copies of URLs scheduled in an earlier round (refused by `seen.bloom`).
    pub dupes: u64,
    /// Candidates that passed the filters and the seen check (copies included).
    pub candidates: u64,
    /// WARC files that ended with a truncated record.
    pub truncated_files: u64,
    /// Files that are not WARC, or that could not be read.
    pub unreadable_files: u64,
    /// WARC files without a record (empty).
    pub empty_files: u64,
    /// Damaged stretches of WARC files skipped (a record each, at least).
    pub damaged_records: u64,
    /// Bytes of WARC files skipped as damaged.
    pub damaged_bytes: u64,
    /// Responses larger than `max_page_size`, skipped.
    pub too_large: u64,
    /// Responses labelled HTML that are not (binary content), skipped.
    pub not_html: u64,
    /// Response records whose block is not an HTTP response.
    pub bad_records: u64,
    /// Page records the history could not use (no HTTP head, no readable
    /// `WARC-Date`).
    pub unobserved: u64,
    /// `Sitemap:` URLs of robots.txt responses.
    pub sitemaps_named: u64,
    /// `/sitemap.xml` URLs guessed (`sitemap_guess`) for hosts whose
    /// robots.txt names no sitemap.
    pub sitemaps_guessed: u64,
    /// Sitemaps read, by kind (urlset, sitemapindex, rss, atom, text; in
    /// JSON, an object keyed by the kind).
    #[serde(
        serialize_with = "sitemaps_by_kind",
        deserialize_with = "sitemaps_from_kinds"
    )]
    pub sitemaps_read: [u64; 5],
    /// Responses fetched as sitemaps that are no sitemap (an HTML page at
    /// `/sitemap.xml`): read as pages.
    pub sitemaps_not_sitemap: u64,
    /// Sitemaps the parser gave up on (bad XML, bad gzip): what came
    /// before the fault was read.
    pub bad_sitemaps: u64,
    /// Sitemaps over the entry or byte limit.
    pub sitemaps_over_limit: u64,
    /// URLs sitemaps list (every entry, rejected ones included).
    pub sitemap_urls: u64,
    /// Of them, new URLs admitted (passed the filters and the seen check).
    pub sitemap_new: u64,
    /// Of them, URLs the protocol does not let the sitemap list (another
    /// directory, another host that does not name it).
    pub sitemap_rejected_protocol: u64,
    /// Of them, URLs refused by the scope and trap filters (also counted
    /// under their reason).
    pub sitemap_rejected_filters: u64,
    /// Of them, URLs past the entry or byte limit of their sitemap.
    pub sitemap_over_limit: u64,
    /// Of them, sitemaps of an index past `sitemap_max_depth`.
    pub sitemap_rejected_depth: u64,
    /// Of them, entries that are not URLs.
    pub sitemap_invalid: u64,
    /// Of them, URLs seen before with a `<lastmod>`: handed to the history.
    pub sitemap_lastmod_hints: u64,
}

impl Counts {
    /// Counts one refusal.
    pub fn reject(&mut self, reason: Reject) {
        let i = Reject::ALL
            .iter()
            .position(|r| *r == reason)
            .expect("every reason is listed");
        self.rejects[i] += 1;
    }

    /// Refusals for one reason.
    pub fn rejected(&self, reason: Reject) -> u64 {
        Reject::ALL
            .iter()
            .position(|r| *r == reason)
            .map_or(0, |i| self.rejects[i])
    }

    /// URLs sitemaps listed that were not taken, for any reason.
    pub fn sitemap_rejected(&self) -> u64 {
        self.sitemap_rejected_protocol
            + self.sitemap_rejected_filters
            + self.sitemap_over_limit
            + self.sitemap_rejected_depth
            + self.sitemap_invalid
    }

    /// Inputs skipped as bad (files, records, pages, lines).
    pub fn bad_input(&self) -> u64 {
        self.truncated_files
            + self.unreadable_files
            + self.empty_files
            + self.damaged_records
            + self.too_large
            + self.not_html
            + self.bad_records
            + self.bad_lines
            + self.bad_seed_lines
    }
}

impl AddAssign<&Counts> for Counts {
    fn add_assign(&mut self, o: &Counts) {
        self.runs += o.runs;
        self.warc_files += o.warc_files;
        self.records += o.records;
        self.responses += o.responses;
        self.robots_responses += o.robots_responses;
        self.revisits += o.revisits;
        self.html_pages += o.html_pages;
        self.links_listed_pages += o.links_listed_pages;
        self.html_bytes += o.html_bytes;
        self.links += o.links;
        self.redirects += o.redirects;
        self.nofollow += o.nofollow;
        self.over_page_cap += o.over_page_cap;
        self.pages_over_page_cap += o.pages_over_page_cap;
        self.same_page += o.same_page;
        self.incomplete_pages += o.incomplete_pages;
        self.undecodable_bodies += o.undecodable_bodies;
        self.seeds += o.seeds;
        self.bad_seed_lines += o.bad_seed_lines;
        self.leftover += o.leftover;
        self.retries += o.retries;
        self.retries_exhausted += o.retries_exhausted;
        self.backlog_in += o.backlog_in;
        self.due_in += o.due_in;
        self.respelled += o.respelled;
        self.waiting_copies += o.waiting_copies;
        self.bad_lines += o.bad_lines;
        self.invalid_urls += o.invalid_urls;
        for (a, b) in self.rejects.iter_mut().zip(o.rejects) {
            *a += b;
        }
        self.dupes += o.dupes;
        self.candidates += o.candidates;
        self.truncated_files += o.truncated_files;
        self.unreadable_files += o.unreadable_files;
        self.empty_files += o.empty_files;
        self.damaged_records += o.damaged_records;
        self.damaged_bytes += o.damaged_bytes;
        self.too_large += o.too_large;
        self.not_html += o.not_html;
        self.bad_records += o.bad_records;
        self.unobserved += o.unobserved;
        self.sitemaps_named += o.sitemaps_named;
        self.sitemaps_guessed += o.sitemaps_guessed;
        for (a, b) in self.sitemaps_read.iter_mut().zip(o.sitemaps_read) {
            *a += b;
        }
        self.sitemaps_not_sitemap += o.sitemaps_not_sitemap;
        self.bad_sitemaps += o.bad_sitemaps;
        self.sitemaps_over_limit += o.sitemaps_over_limit;
        self.sitemap_urls += o.sitemap_urls;
        self.sitemap_new += o.sitemap_new;
        self.sitemap_rejected_protocol += o.sitemap_rejected_protocol;
        self.sitemap_rejected_filters += o.sitemap_rejected_filters;
        self.sitemap_over_limit += o.sitemap_over_limit;
        self.sitemap_rejected_depth += o.sitemap_rejected_depth;
        self.sitemap_invalid += o.sitemap_invalid;
        self.sitemap_lastmod_hints += o.sitemap_lastmod_hints;
    }
}

fn rejects_by_name<S: Serializer>(
    rejects: &[u64; Reject::ALL.len()],
    s: S,
) -> Result<S::Ok, S::Error> {
    let mut map = s.serialize_map(Some(rejects.len()))?;
    for (reason, n) in Reject::ALL.iter().zip(rejects) {
        map.serialize_entry(reason.name(), n)?;
    }
    map.end()
}

fn sitemaps_by_kind<S: Serializer>(read: &[u64; 5], s: S) -> Result<S::Ok, S::Error> {
    let mut map = s.serialize_map(Some(read.len()))?;
    for (kind, n) in crate::sitemap::Kind::NAMES.iter().zip(read) {
        map.serialize_entry(kind, n)?;
    }
    map.end()
}

/// A count by name read back into its array, in the order of `names`; a
/// name this build does not know is an error (a newer writer's file).
fn by_names<'de, D: Deserializer<'de>, const N: usize>(
    d: D,
    names: [&str; N],
    what: &str,
) -> Result<[u64; N], D::Error> {
    let map = std::collections::BTreeMap::<String, u64>::deserialize(d)?;
    let mut out = [0; N];
    for (name, n) in map {
        let i = names.iter().position(|k| *k == name).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown {what} {name:?} (written by a newer segmenter?)"
            ))
        })?;
        out[i] = n;
    }
    Ok(out)
}

fn rejects_from_names<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<[u64; Reject::ALL.len()], D::Error> {
    by_names(d, Reject::ALL.map(Reject::name), "reject reason")
}

fn sitemaps_from_kinds<'de, D: Deserializer<'de>>(d: D) -> Result<[u64; 5], D::Error> {
    by_names(d, crate::sitemap::Kind::NAMES, "sitemap kind")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_read_back_from_json_and_absent_counters_are_zero() {
        let mut c = Counts {
            links: 12,
            records: 3,
            ..Counts::default()
        };
        c.reject(Reject::Scope);
        c.sitemaps_read[2] = 4;
        let text = serde_json::to_string(&c).unwrap();
        assert_eq!(serde_json::from_str::<Counts>(&text).unwrap(), c);
        let partial: Counts = serde_json::from_str(r#"{"links": 5}"#).unwrap();
        assert_eq!(partial.links, 5);
        assert_eq!(partial.rejects, [0; Reject::ALL.len()]);
        let newer = serde_json::from_str::<Counts>(r#"{"rejects": {"no-such": 1}}"#);
        assert!(newer.unwrap_err().to_string().contains("no-such"));
    }
}
