//! What a round did, counted per worker and summed, printed at the end to
//! stderr and to `CRAWL/logs/segmenter-TIMESTAMP.log`, and kept as JSON in
//! `CRAWL/logs/segmenter-TIMESTAMP.json` ([`Report::to_json`]), which
//! `segmenter status` and the HTML page read ([`crate::state::reports`]).
//! This is one round's account; the crawl's HTML page, `segmenter report`,
//! is a command of its own (`commands/report.rs`).
//!
//! The text report is `key: value` lines for people; scripts ask
//! `segmenter status --json` instead of parsing it.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use common::filter::Reject;
use serde::ser::SerializeSeq;
use serde::{Serialize, Serializer};

use crate::round::counts::Counts;

/// Version of the JSON report's layout (`"version"` in the file); raised
/// when a key changes meaning or goes away. 2: a `reduce`'s `counts` also
/// hold the counts of the maps of its shard's own runs (listed in
/// `mapped`); in version 1 they held only the reduce's own inputs.
pub const JSON_VERSION: u64 = 2;

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
    /// Hosts held back by a budget or their failures, by reason
    /// ([`crate::round::caps::Hold`]: `backoff`, `parked`, `host-bytes`,
    /// `host-pages`, `domain-pages`, `crawl-bytes`), with the URLs that wait
    /// in the backlog for them.
    pub held: BTreeMap<&'static str, HeldBack>,
    /// URLs the per-host caps (`max_per_host`, the host's delay, a host
    /// that may not be asked in the round) sent to the backlog.
    pub capped_urls: u64,
    /// The cuts across hosts ([`crate::round::cut::Cut`]: `crawl-pages`,
    /// `segment-size`), with the hosts and URLs they sent to the backlog.
    pub cut: BTreeMap<&'static str, HeldBack>,
    /// In-links the round found to URLs that wait, added to their scores.
    pub waiting_links: u64,
    /// The scores of the URLs scheduled and of those in the backlog after
    /// the round.
    pub scores: Scores,
}

/// The distribution of the scores (in-links) of the URLs a round scheduled,
/// and of those left waiting in the backlog.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Scores {
    /// The URLs written to segments.
    pub scheduled: crate::round::score::ScoreQuantiles,
    /// The URLs in the backlog after the round.
    pub waiting: crate::round::score::ScoreQuantiles,
}

/// Hosts held back for one reason, the URLs they left in the backlog, and
/// the first few of them by name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct HeldBack {
    /// Hosts.
    pub hosts: u64,
    /// Their URLs sent to the backlog.
    pub urls: u64,
    /// The first [`HeldBack::EXAMPLES`] hosts.
    pub examples: Vec<String>,
}

impl HeldBack {
    /// Hosts named per reason.
    pub const EXAMPLES: usize = 10;

    /// Counts host `name` with `urls` URLs held back.
    pub fn add(&mut self, name: &str, urls: u64) {
        self.hosts += 1;
        self.urls += urls;
        if self.examples.len() < HeldBack::EXAMPLES {
            self.examples.push(name.to_string());
        }
    }
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
    /// A `reduce`'s: its shard's own runs whose map counts (`counts.json`)
    /// `counts` holds (links, rejects, pages, sitemaps ...); empty otherwise.
    pub mapped: Vec<String>,
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
    pub rescue: crate::round::seen::rescue::RescueCounts,
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
    /// What the history merge wrote (`run` only).
    pub history_written: Option<crate::history::generations::Written>,
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
    /// Hosts held back by a budget or their failures, all reasons.
    held_hosts: u64,
    /// URLs they left in the backlog, all reasons.
    held_urls: u64,
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
                held_hosts: self.selection.held.values().map(|h| h.hosts).sum(),
                held_urls: self.selection.held.values().map(|h| h.urls).sum(),
            },
        };
        // Numbers, strings, lists and maps with string keys: nothing here
        // can fail to serialize (f64 NaN becomes null).
        let mut text = serde_json::to_string_pretty(&file).expect("the report serializes");
        text.push('\n');
        text
    }

    /// The report as `key: value` lines, in the order of the round: what
    /// was read (the fetched runs and their sitemaps, or the seeds), what
    /// the filters let through, what was selected and where it went, the
    /// seen-set, the history merge, and the times.
    pub fn render(&self) -> String {
        let c = &self.counts;
        let mut out = Lines::default();
        out.line("command:", self.command.to_string());
        if self.command != "inject" {
            self.input_lines(&mut out);
            self.sitemap_lines(&mut out);
        } else {
            out.line("seeds:", c.seeds.to_string());
            out.line("bad seed lines:", c.bad_seed_lines.to_string());
        }
        self.filter_lines(&mut out);
        self.selection_lines(&mut out);
        self.bad_input_line(&mut out);
        self.bloom_lines(&mut out);
        if let Some(h) = &self.history {
            self.history_lines(h, &mut out);
        }
        self.time_lines(&mut out);
        out.0
    }

    /// What the fetched runs held: records, pages, links, and the URLs
    /// that came back (leftovers, retries, backlog, due).
    fn input_lines(&self, out: &mut Lines) {
        let c = &self.counts;
        if self.command == "run" {
            out.line(
                "runs consumed:",
                if self.consumed.is_empty() {
                    "none".to_string()
                } else {
                    self.consumed.join(" ")
                },
            );
        }
        if self.command == "reduce" {
            out.line(
                "maps counted:",
                if self.mapped.is_empty() {
                    "none (the figures below up to the dupes are the maps')".to_string()
                } else {
                    format!(
                        "{} (the figures below up to the dupes are their maps')",
                        self.mapped.join(" ")
                    )
                },
            );
        }
        out.line("warc files:", c.warc_files.to_string());
        out.line(
            "damaged records:",
            format!("{} ({} bytes skipped)", c.damaged_records, c.damaged_bytes),
        );
        out.line("responses:", c.responses.to_string());
        out.line("robots.txt responses:", c.robots_responses.to_string());
        out.line("revisit records:", c.revisits.to_string());
        out.line(
            "pages scanned:",
            format!(
                "{} ({} with links listed in metadata records)",
                c.html_pages, c.links_listed_pages
            ),
        );
        out.line("html bytes:", c.html_bytes.to_string());
        out.line("links found:", c.links.to_string());
        out.line("nofollow links:", c.nofollow.to_string());
        out.line(
            "over page cap:",
            format!(
                "{} links not taken, of {} pages over max_links_per_page",
                c.over_page_cap, c.pages_over_page_cap
            ),
        );
        out.line("same-page links:", c.same_page.to_string());
        out.line("incomplete pages:", c.incomplete_pages.to_string());
        out.line("bodies not decoded:", c.undecodable_bodies.to_string());
        out.line("redirects found:", c.redirects.to_string());
        out.line("leftover in:", c.leftover.to_string());
        out.line("retries in:", c.retries.to_string());
        out.line(
            "retries exhausted:",
            format!(
                "{} (not retried now: kept in the fetch history as failed, due again at \
                 recrawl_failed)",
                c.retries_exhausted
            ),
        );
        out.line("backlog in:", c.backlog_in.to_string());
        if c.respelled > 0 {
            out.line(
                "backlog respelled:",
                format!("{} (a host rule changed their canonical form)", c.respelled),
            );
        }
        out.line("due in:", c.due_in.to_string());
    }

    /// The sitemaps named, guessed and read, and what their URLs became.
    fn sitemap_lines(&self, out: &mut Lines) {
        let c = &self.counts;
        let kinds = crate::sitemap::Kind::NAMES
            .iter()
            .zip(c.sitemaps_read)
            .map(|(k, n)| format!("{k} {n}"))
            .collect::<Vec<_>>();
        out.line(
            "sitemaps named:",
            format!(
                "{} (robots.txt), {} guessed",
                c.sitemaps_named, c.sitemaps_guessed
            ),
        );
        out.line(
            "sitemaps read:",
            format!(
                "{} ({})",
                c.sitemaps_read.iter().sum::<u64>(),
                kinds.join(", ")
            ),
        );
        out.line(
            "bad sitemaps:",
            format!(
                "{} (bad XML or gzip, not read to the end); besides: over the limits {}, not a sitemap {}",
                c.bad_sitemaps, c.sitemaps_over_limit, c.sitemaps_not_sitemap
            ),
        );
        out.line("sitemap urls:", c.sitemap_urls.to_string());
        out.line("sitemap urls new:", c.sitemap_new.to_string());
        out.line(
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
        out.line(
            "sitemap lastmod hints:",
            c.sitemap_lastmod_hints.to_string(),
        );
    }

    /// What the filters turned away, the duplicates, the URLs rescued from
    /// the Bloom filter's false positives, and the candidates left.
    fn filter_lines(&self, out: &mut Lines) {
        let (c, s) = (&self.counts, &self.selection);
        out.line("invalid urls:", c.invalid_urls.to_string());
        for reason in Reject::ALL {
            out.line(
                &format!("rejected {}:", reason.name()),
                c.rejected(reason).to_string(),
            );
        }
        out.line("dupes:", c.dupes.to_string());
        let r = &self.rescue;
        out.line(
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
        out.line("candidates:", c.candidates.to_string());
    }

    /// What the selection made of the candidates: URLs and hosts
    /// scheduled, capped, held back (by reason) or sent to the backlog, and
    /// the segments written.
    fn selection_lines(&self, out: &mut Lines) {
        let s = &self.selection;
        out.line("unique urls:", s.unique.to_string());
        out.line("new urls:", s.new.to_string());
        out.line("re-entered:", s.reentered.to_string());
        out.line("scheduled:", s.scheduled.to_string());
        if self.command == "run" {
            out.line("refetches scheduled:", s.refetches.to_string());
        }
        out.line("hosts:", s.hosts.to_string());
        out.line("capped hosts:", s.capped_hosts.to_string());
        out.line("time-capped hosts:", s.time_capped_hosts.to_string());
        out.line("waiting hosts:", s.waiting_hosts.to_string());
        self.held_lines(out);
        out.line("to backlog:", s.backlogged.to_string());
        self.waiting_lines(out);
        if s.out_of_order > 0 {
            out.line("backlog out of order:", s.out_of_order.to_string());
        }
        if self.command != "inject" {
            out.line("already fetched:", s.already_fetched.to_string());
        }
        out.line("backlog size:", self.backlog.to_string());
        if self.segments.is_empty() {
            out.line("segments:", "none (no new URLs)".to_string());
        }
        for (id, n) in &self.segments {
            out.line(&format!("segment {id}:"), n.to_string());
        }
    }

    /// The hosts held back, one line per reason, with a few of their names.
    fn held_lines(&self, out: &mut Lines) {
        let s = &self.selection;
        let none = HeldBack::default();
        for reason in crate::round::caps::Hold::ALL.map(crate::round::caps::Hold::name) {
            let h = s.held.get(reason).unwrap_or(&none);
            let more = h.hosts.saturating_sub(h.examples.len() as u64);
            out.line(
                &format!("held {reason}:"),
                format!(
                    "{} hosts, {} URLs to the backlog ({}{})",
                    h.hosts,
                    h.urls,
                    h.examples.join(" "),
                    if more > 0 {
                        format!(" and {more} more")
                    } else {
                        String::new()
                    }
                ),
            );
        }
    }

    /// What each cut left waiting (the hosts' caps, the cuts across hosts,
    /// the holds), and the scores of what was scheduled and what waits.
    fn waiting_lines(&self, out: &mut Lines) {
        let s = &self.selection;
        let none = HeldBack::default();
        let cut = |name: &str| s.cut.get(name).unwrap_or(&none);
        let (pages, size) = (cut("crawl-pages"), cut("segment-size"));
        out.line(
            "left waiting:",
            format!(
                "per-host cap {} URLs, segment size {} URLs ({} hosts), crawl pages {} URLs \
                 ({} hosts), held {} URLs",
                s.capped_urls,
                size.urls,
                size.hosts,
                pages.urls,
                pages.hosts,
                s.held.values().map(|h| h.urls).sum::<u64>()
            ),
        );
        out.line(
            "in-links to waiting:",
            format!(
                "{} (added to the scores of URLs that wait)",
                s.waiting_links
            ),
        );
        out.line("scores scheduled:", s.scores.scheduled.line());
        out.line("scores waiting:", s.scores.waiting.line());
    }

    /// The inputs skipped as bad, in all and by kind.
    fn bad_input_line(&self, out: &mut Lines) {
        let c = &self.counts;
        out.line(
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
    }

    /// The seen-set's Bloom filter: its load, its commit and its growth.
    fn bloom_lines(&self, out: &mut Lines) {
        let b = &self.bloom;
        out.line(
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
        out.line(
            "bloom commit:",
            format!("{}, {} bytes written", b.commit, b.written),
        );
        if let Some(g) = &b.growth {
            out.line(
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
    }

    /// The history merge: what the history holds, what was fetched, what
    /// was retired or kept as failed.
    fn history_lines(&self, h: &crate::history::HistoryCounts, out: &mut Lines) {
        let c = &self.counts;
        out.line(
            "history:",
            format!(
                "{} urls ({} due now, {} by a sitemap's lastmod, {} waiting, {} retired, \
                 {} rescheduled by changed recrawl bounds), {:.3} s",
                h.entries,
                h.due,
                h.due_by_lastmod,
                h.waiting,
                h.retired,
                h.rescheduled,
                self.history_time.as_secs_f64()
            ),
        );
        if let Some(w) = &self.history_written {
            out.line(
                "history written:",
                format!(
                    "{} entries into the round's generation, {} rewritten by compaction, \
                     {} bytes; {} generation(s)",
                    w.entries, w.compacted, w.bytes, w.generations
                ),
            );
        }
        out.line("fetched new:", h.new.to_string());
        out.line("refetched unchanged:", h.unchanged.to_string());
        out.line("refetched changed:", h.changed.to_string());
        out.line(
            "retired:",
            format!(
                "{} (gone {}, moved {}, robots {})",
                h.retired_now(),
                h.gone,
                h.moved,
                h.robots
            ),
        );
        out.line("fetch failed:", h.failed.to_string());
        out.line(
            "kept as failed:",
            format!(
                "{} (retries ran out this round; {} failed URLs in the history, each due \
                 again at recrawl_failed)",
                h.gave_up, h.failing
            ),
        );
        if h.stale > 0 || c.unobserved > 0 {
            out.line(
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

    /// Sort spills, the times, and the rates.
    fn time_lines(&self, out: &mut Lines) {
        let c = &self.counts;
        let secs = self.elapsed.as_secs_f64().max(1e-9);
        out.line(
            "sort spills:",
            format!("{} files, {} bytes", self.sort_spills, self.sort_bytes),
        );
        out.line(
            "elapsed:",
            format!(
                "{secs:.3} s (scan {:.3} s, merge and write {:.3} s)",
                self.scan_time.as_secs_f64(),
                self.select_time.as_secs_f64()
            ),
        );
        if c.html_bytes > 0 {
            out.line(
                "html rate:",
                format!("{:.1} MB/s", c.html_bytes as f64 / 1e6 / secs),
            );
            out.line(
                "link rate:",
                format!("{:.0} links/s", c.links as f64 / secs),
            );
        }
        let inputs =
            c.links + c.redirects + c.seeds + c.leftover + c.retries + c.backlog_in + c.due_in;
        out.line("url rate:", format!("{:.0} urls/s", inputs as f64 / secs));
    }
}

/// The text report being built: `key: value` lines, the values aligned.
#[derive(Default)]
struct Lines(String);

impl Lines {
    /// Adds one line.
    fn line(&mut self, k: &str, v: String) {
        let _ = writeln!(self.0, "{k:<22} {v}");
    }
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
