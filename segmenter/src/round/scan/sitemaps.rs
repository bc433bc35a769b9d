//! Sitemaps in the scan: the `Sitemap:` lines of fetched robots.txt files
//! become sitemaps to fetch (`via` `sitemap-file`), and fetched sitemaps are
//! read with [`crate::sitemap::read`] instead of the link extractor.
//!
//! What a sitemap may list (the sitemaps protocol, "Sitemap file location"):
//! - URLs of its own scheme, host and port under its own directory
//!   (`http://a.test/news/sitemap.xml` lists `http://a.test/news/…`);
//! - any URL of its host, if that host's robots.txt names it;
//! - URLs of another host only if that host's robots.txt names it (looked
//!   up in `hosts.db`, read-only, once per host and worker).
//!
//! Everything else it lists is counted as rejected (protocol). An index
//! lists sitemaps: they are scheduled as `sitemap-file` one hop further,
//! while the level of the index stays below `sitemap_max_depth - 1`;
//! deeper entries are counted as rejected (depth). Levels: a sitemap its
//! host's robots.txt names, or one found otherwise (a link, the recrawl),
//! is level 0; one that came as `sitemap-file` otherwise (listed by an
//! index) is at its hops, which a redirect keeps. Pages become candidates
//! with `via` `sitemap`, one hop further.
//!
//! Being a sitemap is known from `via` `sitemap-file`, and, whatever way a
//! response came (a link found first, a leftover, a refetch), from its
//! host's robots.txt naming it. A record cut before its end (by the
//! fetcher's `max_body`, the record limit or `max_page_size`) is read as
//! far as it goes and counted over the limits.

use std::collections::HashMap;
use std::path::Path;

use common::body::Outcome;
use common::http::ResponseHead;
use common::segment::Via;
use common::urlnorm::{self, host_of};
use url::Url;

use super::{Worker, link_meta};
use crate::error::Error;
use crate::history::{self, Observation};
use crate::sitemap::{self, Kind, Limits};

/// What a worker keeps between sitemaps.
#[derive(Default)]
pub(super) struct SitemapState {
    /// Per host: the canonical sitemap URLs its robots.txt names.
    named: HashMap<String, Vec<String>>,
    /// The entries of the sitemap at hand.
    entries: Vec<Listed>,
}

/// One entry of the sitemap at hand.
struct Listed {
    /// Listed by an index: a sitemap, not a page.
    is_index: bool,
    /// As written (resolved and canonicalized later).
    loc: String,
    /// Its `<lastmod>`, Unix ms.
    lastmod_ms: Option<i64>,
}

/// A 2xx response record to read as a sitemap.
#[derive(Clone, Copy)]
pub(super) struct SitemapDoc<'a> {
    /// The WARC file and the record's offset, for warnings.
    pub path: &'a Path,
    pub offset: u64,
    /// The response's URL (canonical if it can be).
    pub url: &'a Url,
    pub head: &'a ResponseHead,
    /// Where the body starts in the record's block.
    pub body_offset: usize,
    /// The record's `X-Crawl-Hops`.
    pub hops: u32,
    /// Its sitemap level if it is known as a sitemap
    /// ([`Worker::known_sitemap`]), None if it is only tried as one.
    pub known_level: Option<u32>,
}

/// True for an HTML Content-Type (`text/html`, `application/xhtml+xml`).
fn is_html(content_type: Option<&str>) -> bool {
    content_type.is_some_and(|t| t.to_ascii_lowercase().contains("html"))
}

/// True if a 2xx response that did not come as a sitemap should be tried
/// as one: an XML or gzip body (cheap to tell), as docs/guide.md ("Sitemaps") says.
fn looks_like_sitemap(content_type: Option<&str>, body: &[u8]) -> bool {
    let ct = content_type.unwrap_or("").to_ascii_lowercase();
    let start = body
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .map_or(&[][..], |i| &body[i..]);
    let start = start.strip_prefix(b"\xef\xbb\xbf").unwrap_or(start);
    (ct.contains("xml") && !ct.contains("html"))
        || ct.contains("gzip")
        || start.starts_with(b"<?xml")
        || body.starts_with(&[0x1f, 0x8b])
}

impl Worker<'_> {
    /// A robots.txt response record: its `Sitemap:` URLs (of a 2xx answer)
    /// become sitemaps to fetch; with `sitemap_guess`, `/sitemap.xml` of a
    /// host whose robots.txt names none.
    pub(super) fn robots_sitemaps(
        &mut self,
        robots_url: &Url,
        head: Option<&ResponseHead>,
    ) -> Result<(), Error> {
        let mut named = Vec::new();
        // A redirect names nothing: the record of where it led does.
        if head.is_some_and(|h| (300..400).contains(&h.status)) {
            return Ok(());
        }
        if let Some(head) = head
            && (200..300).contains(&head.status)
        {
            let body_offset = head.body_offset.min(self.record.block.len());
            let decoded = self.decoder.decode_response(
                head,
                &self.record.block[body_offset..],
                self.cfg.options.max_page_size as usize,
            );
            named = common::sitemaps::in_robots_txt(decoded.body);
        }
        let meta = link_meta(0, Via::SitemapFile);
        if named.is_empty() {
            if self.cfg.sitemaps.guess {
                let mut guess = robots_url.clone();
                guess.set_path("/sitemap.xml");
                guess.set_query(None);
                if let Ok(url) = urlnorm::canonicalize_url(guess) {
                    self.counts.sitemaps_guessed += 1;
                    if self.admission.admit(&url, 0, &mut self.counts) {
                        self.push(&url, meta)?;
                    }
                }
            }
            return Ok(());
        }
        for s in &named {
            self.counts.sitemaps_named += 1;
            match urlnorm::canonicalize(s) {
                Ok(url) => {
                    if self.admission.admit(&url, 0, &mut self.counts) {
                        self.push(&url, meta)?;
                    }
                }
                Err(e) => self.admission.count_url_error(&e, &mut self.counts),
            }
        }
        Ok(())
    }

    /// The sitemap level of a response known to be a sitemap, None if it
    /// is not known to be one (it may still look like one):
    /// - named by its host's robots.txt (`hosts.db`), whatever way it came
    ///   (a link, a leftover, the recrawl schedule): level 0;
    /// - `via` `sitemap-file` otherwise (listed by an index): its hops,
    ///   which are the levels below robots.txt for a sitemap reached from
    ///   there (a redirect keeps them).
    ///
    /// A response served as HTML is looked up only if it came as a sitemap.
    pub(super) fn known_sitemap(
        &mut self,
        url: &Url,
        via: Option<Via>,
        hops: u32,
        head: &ResponseHead,
    ) -> Result<Option<u32>, Error> {
        let as_file = via == Some(Via::SitemapFile);
        if as_file && hops == 0 {
            return Ok(Some(0));
        }
        if !as_file && is_html(head.header("Content-Type")) {
            return Ok(None);
        }
        if self.named_by_robots(host_of(url), url)? {
            return Ok(Some(0));
        }
        Ok(as_file.then_some(hops))
    }

    /// Reads a 2xx response as a sitemap if it is known as one
    /// ([`Worker::known_sitemap`]) or looks like one. False if it is not
    /// one: the caller then reads it as a page.
    pub(super) fn sitemap(&mut self, doc: &SitemapDoc<'_>) -> Result<bool, Error> {
        let as_sitemap = doc.known_level.is_some();
        let content_type = doc.head.header("Content-Type");
        let decoded = self.decoder.decode_response(
            doc.head,
            &self.record.block[doc.body_offset..],
            self.cfg.options.max_page_size as usize,
        );
        let body = decoded.body;
        if !as_sitemap && !looks_like_sitemap(content_type, body) {
            return Ok(false);
        }
        // Cut by the fetcher (`WARC-Truncated`, its --max-body), by the
        // record limit or by --max-page-size when decoding: read as far as
        // it goes, the last partial entry dropped.
        let truncated = self.record.block_cut
            || self.record.header("WARC-Truncated").is_some()
            || !matches!(decoded.outcome, Outcome::Complete | Outcome::Failed(_));
        let limits = Limits {
            max_entries: self.cfg.sitemaps.max_entries,
            max_bytes: self.cfg.sitemaps.max_bytes,
            truncated,
            // Only tried: a feed or a gzip file of anything else is left
            // at its first bytes.
            sitemaps_only: !as_sitemap,
        };
        let entries = &mut self.sitemaps.entries;
        entries.clear();
        let summary = sitemap::read(body, content_type, &limits, |kind, e| {
            entries.push(Listed {
                is_index: kind == Kind::Index,
                loc: e.loc.to_string(),
                lastmod_ms: e.lastmod_ms,
            });
        });
        let kept = body.len();
        let kind = match summary.kind {
            // Read only because it looked like XML or gzip: only the
            // sitemap roots count, and anything else (a feed, bad XML) is a
            // page like another.
            Some(Kind::UrlSet | Kind::Index) => summary.kind,
            _ if !as_sitemap => return Ok(false),
            // Fetched as a sitemap but none (an HTML page at /sitemap.xml).
            None if summary.error.is_none() => {
                self.counts.sitemaps_not_sitemap += 1;
                return Ok(false);
            }
            k => k,
        };
        if let Some(error) = &summary.error {
            self.counts.bad_sitemaps += 1;
            self.cfg.log.warn(format_args!(
                "{}: offset {}: {}: bad sitemap at {error}; {} URLs read before it",
                doc.path.display(),
                doc.offset,
                doc.url,
                summary.entries
            ));
        }
        let Some(kind) = kind else {
            return Ok(true);
        };
        self.count_sitemap(doc, kind, &summary, &limits, kept);
        self.list_entries(doc.url, doc.hops, doc.known_level.unwrap_or(0))?;
        Ok(true)
    }

    /// Counts a sitemap read (`kept`: its bytes at hand) and what it
    /// listed; says when it was cut or over the limits.
    fn count_sitemap(
        &mut self,
        doc: &SitemapDoc<'_>,
        kind: Kind,
        summary: &sitemap::Summary,
        limits: &Limits,
        kept: usize,
    ) {
        let (path, offset, page) = (doc.path.display(), doc.offset, doc.url);
        self.counts.sitemaps_read[kind as usize] += 1;
        self.counts.sitemap_urls += summary.entries + summary.over_limit + summary.invalid;
        self.counts.sitemap_invalid += summary.invalid;
        self.counts.sitemap_over_limit += summary.over_limit;
        if limits.truncated {
            self.counts.sitemaps_over_limit += 1;
            self.cfg.log.warn(format_args!(
                "{path}: offset {offset}: {page}: sitemap cut before its end ({kept} bytes kept; \
                 the fetcher's --max-body and the segmenter's --max-page-size ({} bytes) cap a \
                 sitemap): {} URLs read, {} URLs not read, the rest of the file not read",
                self.cfg.options.max_page_size, summary.entries, summary.over_limit,
            ));
        } else if summary.over_limit > 0 || summary.cut_at_bytes {
            self.counts.sitemaps_over_limit += 1;
            self.cfg.log.warn(format_args!(
                "{path}: offset {offset}: {page}: sitemap over the limits ({} URLs, {} bytes): \
                 {} URLs not read{}",
                limits.max_entries,
                limits.max_bytes,
                summary.over_limit,
                if summary.cut_at_bytes {
                    ", the rest of the file not read"
                } else {
                    ""
                }
            ));
        }
    }

    /// The entries of the sitemap at `page` (with `hops`, at `level`), read
    /// by [`Worker::sitemap`], each a candidate.
    fn list_entries(&mut self, page: &Url, hops: u32, level: u32) -> Result<(), Error> {
        let entries = std::mem::take(&mut self.sitemaps.entries);
        let mut result = Ok(());
        for e in &entries {
            result = self.sitemap_entry(page, hops, level, e);
            if result.is_err() {
                break;
            }
        }
        self.sitemaps.entries = entries;
        result
    }

    /// One URL a sitemap at `sitemap` (with `hops`, at `level`) lists.
    fn sitemap_entry(
        &mut self,
        sitemap: &Url,
        hops: u32,
        level: u32,
        listed: &Listed,
    ) -> Result<(), Error> {
        let Listed {
            is_index,
            ref loc,
            lastmod_ms,
        } = *listed;
        let url = match urlnorm::canonicalize_relative(sitemap, loc) {
            Ok(u) => u,
            Err(_) => {
                self.counts.sitemap_invalid += 1;
                return Ok(());
            }
        };
        if !self.allowed_by_protocol(sitemap, &url)? {
            self.counts.sitemap_rejected_protocol += 1;
            return Ok(());
        }
        let next_hops = hops.saturating_add(1);
        if is_index && level.saturating_add(1) >= self.cfg.sitemaps.max_depth {
            self.counts.sitemap_rejected_depth += 1;
            return Ok(());
        }
        if !self.admission.admit(&url, next_hops, &mut self.counts) {
            self.counts.sitemap_rejected_filters += 1;
            return Ok(());
        }
        let via = if is_index {
            Via::SitemapFile
        } else {
            Via::Sitemap
        };
        if self.push(&url, link_meta(next_hops, via))? {
            self.counts.sitemap_new += 1;
        } else if let Some(changed_ms) = lastmod_ms
            && !is_index
        {
            // Known already: a newer lastmod may make it due again.
            self.counts.sitemap_lastmod_hints += 1;
            let hint = Observation {
                fetched_ms: changed_ms,
                hops: next_hops,
                kind: history::Kind::Hint,
                ..Observation::default()
            };
            self.push_observation(&url, &hint)?;
        }
        Ok(())
    }

    /// The protocol's rule for a URL a sitemap lists (see the module doc).
    fn allowed_by_protocol(&mut self, sitemap: &Url, url: &Url) -> Result<bool, Error> {
        let same_origin = url.scheme() == sitemap.scheme()
            && url.host_str() == sitemap.host_str()
            && url.port_or_known_default() == sitemap.port_or_known_default();
        if same_origin {
            let path = sitemap.path();
            let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
            if url.path().starts_with(dir) {
                return Ok(true);
            }
        }
        // Elsewhere on its host, or on another host: that host's robots.txt
        // must name the sitemap.
        self.named_by_robots(host_of(url), sitemap)
    }

    /// True if the robots.txt of `host`, as `hosts.db` keeps it, names
    /// `sitemap`.
    fn named_by_robots(&mut self, host: &str, sitemap: &Url) -> Result<bool, Error> {
        if !self.sitemaps.named.contains_key(host) {
            let db = match self.cfg.shard_hosts_dbs {
                Some(s) => &s.dbs[s.shards.shard_of(host) as usize],
                None => self.cfg.hosts_db,
            };
            let state = match &*db.lock().expect("no panics") {
                Some(db) => db.get(host)?,
                None => None,
            };
            let names = match state {
                Some(state) => state
                    .robots
                    .map(|r| {
                        r.sitemaps
                            .iter()
                            .filter_map(|s| urlnorm::canonicalize(s).ok())
                            .map(String::from)
                            .collect()
                    })
                    .unwrap_or_default(),
                None => Vec::new(),
            };
            self.sitemaps.named.insert(host.to_string(), names);
        }
        Ok(self.sitemaps.named[host]
            .iter()
            .any(|s| s == sitemap.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_looks_like_a_sitemap() {
        assert!(looks_like_sitemap(Some("application/xml"), b""));
        assert!(looks_like_sitemap(Some("text/xml; charset=utf-8"), b""));
        assert!(looks_like_sitemap(Some("application/x-gzip"), b""));
        assert!(looks_like_sitemap(
            None,
            b"\n <?xml version=\"1.0\"?><urlset/>"
        ));
        assert!(looks_like_sitemap(
            Some("application/octet-stream"),
            b"\x1f\x8b\x08"
        ));
        assert!(!looks_like_sitemap(Some("text/html"), b"<html>"));
        assert!(!looks_like_sitemap(
            Some("application/xhtml+xml"),
            b"<html>"
        ));
        assert!(!looks_like_sitemap(Some("text/plain"), b"http://a.test/"));
    }
}
