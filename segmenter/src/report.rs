//! What a round did, counted per worker and summed, printed at the end to
//! stderr and to `CRAWL/logs/segmenter-TIMESTAMP.log`, and kept as JSON in
//! `CRAWL/logs/segmenter-TIMESTAMP.json` ([`Report::to_json`]), which
//! `segmenter status` reads the last round's figures from.
//!
//! The text report is `key: value` lines for people; scripts ask
//! `segmenter status --json` instead of parsing it.

use std::fmt::Write as _;
use std::ops::AddAssign;
use std::time::Duration;

use common::filter::Reject;
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};

/// Version of the JSON report's layout (`"version"` in the file); raised
/// when a key changes meaning or goes away.
pub const JSON_VERSION: u64 = 1;

/// Counters kept by each scan worker and summed with `+=`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
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
    /// Bytes of HTML bodies read.
    pub html_bytes: u64,
    /// Links found in pages (before any filter).
    pub links: u64,
    /// Redirect targets found.
    pub redirects: u64,
    /// Links not followed: `rel=nofollow`, or a nofollow page.
    pub nofollow: u64,
    /// Links beyond the per-page cap.
    pub over_page_cap: u64,
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
    /// Malformed lines in leftover or backlog files.
    pub bad_lines: u64,
    /// URLs that are not valid URLs.
    pub invalid_urls: u64,
    /// Refusals by each filter, in [`Reject::ALL`] order (in JSON, an
    /// object keyed by the reason's name).
    #[serde(serialize_with = "rejects_by_name")]
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
    #[serde(serialize_with = "sitemaps_by_kind")]
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
        self.html_bytes += o.html_bytes;
        self.links += o.links;
        self.redirects += o.redirects;
        self.nofollow += o.nofollow;
        self.over_page_cap += o.over_page_cap;
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

/// The selection stage's counters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Selection {
    /// Distinct URLs after merging copies.
    pub unique: u64,
    /// Distinct URLs never seen before.
    pub new: u64,
    /// Re-entered URLs (leftover, retry, backlog) that skipped the check.
    pub reentered: u64,
    /// URLs written to segments.
    pub scheduled: u64,
    /// Of them, URLs fetched before and due again.
    pub refetches: u64,
    /// URLs written to the backlog.
    pub backlogged: u64,
    /// URLs the fetcher stored without their being scheduled (redirects it
    /// followed): recorded as seen.
    pub already_fetched: u64,
    /// Hosts with at least one URL scheduled.
    pub hosts: u64,
    /// Of the new URLs, URLs the Bloom filter called seen that were in none
    /// of the exact sets (false positives), scheduled after all.
    pub rescued: u64,
    /// Hosts that hit `--max-per-host`.
    pub capped_hosts: u64,
    /// Hosts with more URLs than their delay allows in a round.
    pub time_capped_hosts: u64,
    /// Hosts that may not be asked before the round is over: all their
    /// URLs wait in the backlog.
    pub waiting_hosts: u64,
    /// Backlog URLs of hosts met out of order in the backlog file: kept
    /// there as they are, not scheduled.
    pub out_of_order: u64,
}

/// The Bloom filter's state after the round.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct BloomState {
    /// Items inserted over the filter's life.
    pub items: u64,
    /// Design load.
    pub expected_items: u64,
    /// Fraction of bits set.
    pub fill: f64,
    /// Estimated false-positive rate now.
    pub fp_rate: f64,
    /// Target rate at the design load.
    pub target_fp_rate: f64,
    /// Bits per item inserted.
    pub bits_per_item: f64,
    /// File size in bytes (bit array and journal).
    pub bytes: u64,
    /// URLs rescued over the crawl.
    pub rescued_total: u64,
    /// How the commit writes the filter: `unchanged`, `appended` (a journal
    /// block), `folded` (whole, the journal folded in), `grown` (rebuilt
    /// larger), `created`.
    pub commit: &'static str,
    /// Bytes the commit writes for the filter.
    pub written: u64,
    /// The growth of this round, if the filter grew.
    pub growth: Option<Growth>,
}

/// A growth of the Bloom filter.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Growth {
    /// Design load before.
    pub from_items: u64,
    /// Design load after.
    pub to_items: u64,
    /// File size before (bit array).
    pub from_bytes: u64,
    /// File size after.
    pub to_bytes: u64,
    /// Items the old filter held.
    pub items_before: u64,
    /// URLs read from the exact sets.
    pub urls_read: u64,
    /// Time the rebuild took.
    pub seconds: f64,
}

impl BloomState {
    /// True once the filter holds more than it was sized for (a growth
    /// prevents it; a filter that could not grow stays so).
    pub fn past_design_load(&self) -> bool {
        self.items > self.expected_items || self.fp_rate > self.target_fp_rate * 1.05
    }
}

/// The whole report of one `inject`, `import` or `run`. In JSON, durations
/// are seconds and `segments` a list of `{"id", "urls"}`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Report {
    /// `inject` or `run`.
    pub command: &'static str,
    /// Fetched runs consumed.
    pub consumed: Vec<String>,
    /// Scan counters.
    pub counts: Counts,
    /// Selection counters.
    pub selection: Selection,
    /// Segments written: ID and URL count.
    #[serde(serialize_with = "segment_list")]
    pub segments: Vec<(String, u64)>,
    /// Backlog size after the round.
    pub backlog: u64,
    /// Bloom filter state after the round.
    pub bloom: BloomState,
    /// The lookup of the URLs the Bloom filter called seen in the exact sets.
    pub rescue: crate::seen::rescue::RescueCounts,
    /// Sort spill files written to disk and their compressed size.
    pub sort_spills: u64,
    /// Bytes spilled.
    pub sort_bytes: u64,
    /// Time spent reading the inputs (scan and in-memory sort).
    #[serde(serialize_with = "seconds")]
    pub scan_time: Duration,
    /// Time spent merging, selecting and writing.
    #[serde(serialize_with = "seconds")]
    pub select_time: Duration,
    /// Wall time.
    #[serde(serialize_with = "seconds")]
    pub elapsed: Duration,
    /// The history merge (`run` only).
    pub history: Option<crate::history::HistoryCounts>,
    /// Time spent merging the history.
    #[serde(serialize_with = "seconds")]
    pub history_time: Duration,
    /// Time spent looking up the URLs the Bloom filter called seen.
    #[serde(serialize_with = "seconds")]
    pub rescue_time: Duration,
}

/// Figures of the report derived from others, written in the JSON report
/// under `totals` as the text report shows them.
#[derive(Debug, Clone, Serialize)]
struct Totals {
    /// Sitemaps read, all kinds.
    sitemaps_read: u64,
    /// URLs sitemaps listed that were not taken, for any reason.
    sitemap_urls_rejected: u64,
    /// URLs retired this round (`null` without a history merge).
    retired: Option<u64>,
    /// Inputs skipped as bad.
    bad_input: u64,
}

/// The JSON report file: the report, its layout version and the totals.
#[derive(Serialize)]
struct ReportFile<'a> {
    version: u64,
    #[serde(flatten)]
    report: &'a Report,
    totals: Totals,
}

impl Report {
    /// The report as one pretty-printed JSON object (with a final newline),
    /// as kept in `CRAWL/logs/segmenter-TIMESTAMP.json`.
    pub fn to_json(&self) -> String {
        let c = &self.counts;
        let file = ReportFile {
            version: JSON_VERSION,
            report: self,
            totals: Totals {
                sitemaps_read: c.sitemaps_read.iter().sum(),
                sitemap_urls_rejected: c.sitemap_rejected(),
                retired: self.history.as_ref().map(|h| h.retired_now()),
                bad_input: c.bad_input(),
            },
        };
        // Numbers, strings, lists and maps with string keys: nothing here
        // can fail to serialize (f64 NaN becomes null).
        let mut text = serde_json::to_string_pretty(&file).expect("the report serializes");
        text.push('\n');
        text
    }

    /// The report as `key: value` lines.
    pub fn render(&self) -> String {
        let c = &self.counts;
        let s = &self.selection;
        let secs = self.elapsed.as_secs_f64().max(1e-9);
        let mut out = String::new();
        let mut line = |k: &str, v: String| {
            let _ = writeln!(out, "{k:<22} {v}");
        };
        line("command:", self.command.to_string());
        if self.command != "inject" {
            if self.command == "run" {
                line(
                    "runs consumed:",
                    if self.consumed.is_empty() {
                        "none".to_string()
                    } else {
                        self.consumed.join(" ")
                    },
                );
            }
            line("warc files:", c.warc_files.to_string());
            line(
                "damaged records:",
                format!("{} ({} bytes skipped)", c.damaged_records, c.damaged_bytes),
            );
            line("responses:", c.responses.to_string());
            line("robots.txt responses:", c.robots_responses.to_string());
            line("revisit records:", c.revisits.to_string());
            line("pages scanned:", c.html_pages.to_string());
            line("html bytes:", c.html_bytes.to_string());
            line("links found:", c.links.to_string());
            line("nofollow links:", c.nofollow.to_string());
            line("over page cap:", c.over_page_cap.to_string());
            line("same-page links:", c.same_page.to_string());
            line("incomplete pages:", c.incomplete_pages.to_string());
            line("bodies not decoded:", c.undecodable_bodies.to_string());
            line("redirects found:", c.redirects.to_string());
            line("leftover in:", c.leftover.to_string());
            line("retries in:", c.retries.to_string());
            line("retries exhausted:", c.retries_exhausted.to_string());
            line("backlog in:", c.backlog_in.to_string());
            line("due in:", c.due_in.to_string());
            let kinds = crate::scan::SITEMAP_KINDS
                .iter()
                .zip(c.sitemaps_read)
                .map(|(k, n)| format!("{k} {n}"))
                .collect::<Vec<_>>();
            line(
                "sitemaps named:",
                format!(
                    "{} (robots.txt), {} guessed",
                    c.sitemaps_named, c.sitemaps_guessed
                ),
            );
            line(
                "sitemaps read:",
                format!(
                    "{} ({})",
                    c.sitemaps_read.iter().sum::<u64>(),
                    kinds.join(", ")
                ),
            );
            line(
                "bad sitemaps:",
                format!(
                    "{} (bad XML or gzip, not read to the end); besides: over the limits {}, not a sitemap {}",
                    c.bad_sitemaps, c.sitemaps_over_limit, c.sitemaps_not_sitemap
                ),
            );
            line("sitemap urls:", c.sitemap_urls.to_string());
            line("sitemap urls new:", c.sitemap_new.to_string());
            line(
                "sitemap urls rejected:",
                format!(
                    "{} (protocol {}, filters {}, limits {}, depth {}, invalid {})",
                    c.sitemap_rejected(),
                    c.sitemap_rejected_protocol,
                    c.sitemap_rejected_filters,
                    c.sitemap_over_limit,
                    c.sitemap_rejected_depth,
                    c.sitemap_invalid
                ),
            );
            line(
                "sitemap lastmod hints:",
                c.sitemap_lastmod_hints.to_string(),
            );
        } else {
            line("seeds:", c.seeds.to_string());
            line("bad seed lines:", c.bad_seed_lines.to_string());
        }
        line("invalid urls:", c.invalid_urls.to_string());
        for reason in Reject::ALL {
            line(
                &format!("rejected {}:", reason.name()),
                c.rejected(reason).to_string(),
            );
        }
        line("dupes:", c.dupes.to_string());
        let r = &self.rescue;
        line(
            "rescued:",
            format!(
                "{} (of {} distinct URLs the Bloom filter called seen: {} in the history, {} \
                 waiting, {} in neither, {} not checked), {:.3} s",
                s.rescued,
                r.suspects,
                r.in_history,
                r.waiting,
                r.found,
                r.unchecked,
                self.rescue_time.as_secs_f64()
            ),
        );
        line("candidates:", c.candidates.to_string());
        line("unique urls:", s.unique.to_string());
        line("new urls:", s.new.to_string());
        line("re-entered:", s.reentered.to_string());
        line("scheduled:", s.scheduled.to_string());
        if self.command == "run" {
            line("refetches scheduled:", s.refetches.to_string());
        }
        line("hosts:", s.hosts.to_string());
        line("capped hosts:", s.capped_hosts.to_string());
        line("time-capped hosts:", s.time_capped_hosts.to_string());
        line("waiting hosts:", s.waiting_hosts.to_string());
        line("to backlog:", s.backlogged.to_string());
        if s.out_of_order > 0 {
            line("backlog out of order:", s.out_of_order.to_string());
        }
        if self.command != "inject" {
            line("already fetched:", s.already_fetched.to_string());
        }
        line("backlog size:", self.backlog.to_string());
        if self.segments.is_empty() {
            line("segments:", "none (no new URLs)".to_string());
        }
        for (id, n) in &self.segments {
            line(&format!("segment {id}:"), n.to_string());
        }
        line(
            "bad input:",
            format!(
                "{} (truncated files {}, unreadable files {}, empty files {}, damaged records {}, bad records {}, too large {}, not html {}, bad lines {})",
                c.bad_input(),
                c.truncated_files,
                c.unreadable_files,
                c.empty_files,
                c.damaged_records,
                c.bad_records,
                c.too_large,
                c.not_html,
                c.bad_lines + c.bad_seed_lines
            ),
        );
        let b = &self.bloom;
        line(
            "bloom:",
            format!(
                "{} items of {} designed, fill {:.4}, est. fp rate {:.6} (target {}), {:.2} bits/item, {} bytes, {} rescued in all",
                b.items,
                b.expected_items,
                b.fill,
                b.fp_rate,
                b.target_fp_rate,
                b.bits_per_item,
                b.bytes,
                b.rescued_total
            ),
        );
        line(
            "bloom commit:",
            format!("{}, {} bytes written", b.commit, b.written),
        );
        if let Some(g) = &b.growth {
            line(
                "bloom growth:",
                format!(
                    "from {} to {} URLs ({} to {} bytes) in {:.3} s, rebuilt from {} URLs ({:.0} URLs/s)",
                    g.from_items,
                    g.to_items,
                    g.from_bytes,
                    g.to_bytes,
                    g.seconds,
                    g.urls_read,
                    g.urls_read as f64 / g.seconds.max(1e-9)
                ),
            );
        }
        if let Some(h) = &self.history {
            line(
                "history:",
                format!(
                    "{} urls ({} due now, {} by a sitemap's lastmod, {} waiting, {} retired), {:.3} s",
                    h.entries,
                    h.due,
                    h.due_by_lastmod,
                    h.waiting,
                    h.retired,
                    self.history_time.as_secs_f64()
                ),
            );
            line("fetched new:", h.new.to_string());
            line("refetched unchanged:", h.unchanged.to_string());
            line("refetched changed:", h.changed.to_string());
            line(
                "retired:",
                format!(
                    "{} (gone {}, moved {}, robots {})",
                    h.retired_now(),
                    h.gone,
                    h.moved,
                    h.robots
                ),
            );
            line("fetch failed:", h.failed.to_string());
            if h.stale > 0 || c.unobserved > 0 {
                line(
                    "history skipped:",
                    format!(
                        "{} (stale {}, unusable records {})",
                        h.stale + c.unobserved,
                        h.stale,
                        c.unobserved
                    ),
                );
            }
        }
        line(
            "sort spills:",
            format!("{} files, {} bytes", self.sort_spills, self.sort_bytes),
        );
        line(
            "elapsed:",
            format!(
                "{secs:.3} s (scan {:.3} s, merge and write {:.3} s)",
                self.scan_time.as_secs_f64(),
                self.select_time.as_secs_f64()
            ),
        );
        if c.html_bytes > 0 {
            line(
                "html rate:",
                format!("{:.1} MB/s", c.html_bytes as f64 / 1e6 / secs),
            );
            line(
                "link rate:",
                format!("{:.0} links/s", c.links as f64 / secs),
            );
        }
        let inputs =
            c.links + c.redirects + c.seeds + c.leftover + c.retries + c.backlog_in + c.due_in;
        line("url rate:", format!("{:.0} urls/s", inputs as f64 / secs));
        out
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
    for (kind, n) in crate::scan::SITEMAP_KINDS.iter().zip(read) {
        map.serialize_entry(kind, n)?;
    }
    map.end()
}

fn segment_list<S: Serializer>(segments: &[(String, u64)], s: S) -> Result<S::Ok, S::Error> {
    #[derive(Serialize)]
    struct Segment<'a> {
        id: &'a str,
        urls: u64,
    }
    let mut seq = s.serialize_seq(Some(segments.len()))?;
    for (id, urls) in segments {
        seq.serialize_element(&Segment { id, urls: *urls })?;
    }
    seq.end()
}

fn seconds<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_up() {
        let mut a = Counts {
            links: 3,
            ..Counts::default()
        };
        a.reject(Reject::Scope);
        let mut b = Counts {
            links: 4,
            ..Counts::default()
        };
        b.reject(Reject::Scope);
        b.reject(Reject::TooLong);
        a += &b;
        assert_eq!(a.links, 7);
        assert_eq!(a.rejected(Reject::Scope), 2);
        assert_eq!(a.rejected(Reject::TooLong), 1);
    }

    #[test]
    fn report_names_every_reject_reason() {
        let r = Report {
            command: "run",
            ..Report::default()
        };
        let text = r.render();
        for reason in Reject::ALL {
            assert!(text.contains(&format!("rejected {}:", reason.name())));
        }
        assert!(text.contains("segments:              none"));
    }

    #[test]
    fn json_report_has_named_counts_seconds_and_totals() {
        let mut counts = Counts {
            sitemap_urls: 9,
            sitemap_invalid: 2,
            sitemap_rejected_protocol: 1,
            ..Counts::default()
        };
        counts.sitemaps_read[1] = 3;
        counts.reject(Reject::Scope);
        let r = Report {
            command: "run",
            counts,
            segments: vec![("00004".to_string(), 17)],
            elapsed: Duration::from_millis(1500),
            history: Some(crate::history::HistoryCounts {
                gone: 2,
                robots: 1,
                ..Default::default()
            }),
            ..Report::default()
        };
        let text = r.to_json();
        assert!(text.ends_with("}\n"), "{text}");
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["version"], JSON_VERSION);
        assert_eq!(v["command"], "run");
        assert_eq!(v["elapsed"], 1.5);
        assert_eq!(v["counts"]["rejects"]["scope"], 1);
        assert_eq!(v["counts"]["sitemaps_read"]["sitemapindex"], 3);
        assert_eq!(
            v["segments"],
            serde_json::json!([{"id": "00004", "urls": 17}])
        );
        assert_eq!(v["history"]["gone"], 2);
        assert_eq!(v["totals"]["sitemaps_read"], 3);
        assert_eq!(v["totals"]["sitemap_urls_rejected"], 3);
        assert_eq!(v["totals"]["retired"], 3);

        let inject = Report {
            command: "inject",
            ..Report::default()
        };
        let v: serde_json::Value = serde_json::from_str(&inject.to_json()).unwrap();
        assert_eq!(v["history"], serde_json::Value::Null);
        assert_eq!(v["totals"]["retired"], serde_json::Value::Null);
    }
}
