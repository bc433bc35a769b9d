//! The HTML page: a header of key figures, then one section per question
//! (the crawl over time, outcomes, hosts, politeness, state health, where
//! to look next). Self-contained: the CSS is inline, the charts are inline
//! SVG, links are relative paths into the crawl directory; no script, no
//! font, nothing fetched.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use common::human;

use super::charts::{self, Kind, Series};
use super::gather::{Gathered, LOG_ROUNDS, RoundRow};

/// Rows of the table of rounds (the last ones).
const TABLE_ROUNDS: usize = 50;

const CSS: &str = "
body{font-family:sans-serif;margin:1.5em auto;max-width:62em;padding:0 1em;color:#222;line-height:1.4}
h1{font-size:1.5em;margin-bottom:.2em}h2{border-bottom:2px solid #1f77b4;padding-bottom:.1em;margin-top:1.8em}
.sub{color:#555;margin-top:0}
dl.tiles{display:flex;flex-wrap:wrap;gap:.6em;margin:1em 0}
dl.tiles div{border:1px solid #ccc;border-radius:4px;padding:.4em .8em;min-width:8em}
dl.tiles dt{font-size:.8em;color:#555}dl.tiles dd{margin:0;font-size:1.3em;font-weight:bold}
table{border-collapse:collapse;margin:.8em 0;font-size:.85em}
th,td{border:1px solid #ccc;padding:.15em .5em;text-align:right}
th{background:#eef3f8}td.l,th.l{text-align:left}
svg{max-width:100%;height:auto;display:block;margin:.8em 0}
.missing{background:#fff4e0;border-left:4px solid #ff7f0e;padding:.3em .6em}
.note{color:#555;font-size:.9em}
code{font-size:.95em}
@media print{body{max-width:none;margin:0}h2{break-before:auto}svg,table{break-inside:avoid}a{color:#222}}
";

/// Escapes text for HTML.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Where the page is, for its links: the crawl directory as seen from the
/// page's own directory (`.` when the page is inside it).
pub struct Place {
    /// The crawl directory's name, for the title.
    pub name: String,
    /// The crawl directory relative to the page.
    pub crawl_href: String,
    /// When the page was written (ISO 8601).
    pub generated: String,
}

impl Place {
    /// A link to `path` (relative to the crawl directory) with `text`.
    fn link(&self, path: &str, text: &str) -> String {
        let href = if self.crawl_href == "." {
            path.to_string()
        } else {
            format!("{}/{path}", self.crawl_href)
        };
        format!("<a href=\"{}\">{}</a>", esc(&href), esc(text))
    }
}

/// The whole page.
pub fn render(g: &Gathered, place: &Place) -> String {
    let mut out = String::with_capacity(1 << 20);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>Crawl report: {name}</title><style>{CSS}</style></head><body>\n\
         <h1>Crawl report: {name}</h1>\n<p class=\"sub\">Written {gen} by \
         <code>segmenter report</code> from the files the crawl keeps; rebuilt at the end \
         of every round by <code>scripts/crawl.sh</code>.</p>\n",
        name = esc(&place.name),
        gen = esc(&place.generated),
    );
    summary(&mut out, g);
    problems(&mut out, g);
    shard_table(&mut out, g);
    over_time(&mut out, g);
    outcomes(&mut out, g);
    hosts(&mut out, g);
    politeness(&mut out, g);
    health(&mut out, g);
    next_steps(&mut out, g, place);
    out.push_str("</body></html>\n");
    out
}

/// `n` or `?`.
fn opt(n: Option<u64>) -> String {
    n.map_or("?".into(), |n| n.to_string())
}

fn tile(out: &mut String, id: &str, label: &str, value: &str) {
    let _ = write!(
        out,
        "<div><dt>{}</dt><dd id=\"{id}\">{}</dd></div>",
        esc(label),
        esc(value)
    );
}

fn summary(out: &mut String, g: &Gathered) {
    let pages: u64 = g.rounds.iter().map(|r| r.round.pages).sum();
    let bytes: u64 = g
        .rounds
        .iter()
        .filter_map(|r| r.fetch.as_ref())
        .map(|f| f.warc_bytes)
        .sum();
    out.push_str("<dl class=\"tiles\">");
    if !g.shards.is_empty() {
        tile(out, "shards", "shards", &g.shards.len().to_string());
    }
    tile(out, "rounds", "rounds", &g.rounds.len().to_string());
    tile(out, "pages", "pages fetched", &pages.to_string());
    tile(out, "warc-bytes", "WARC bytes stored", &human::bytes(bytes));
    let s = g.status.as_ref();
    tile(
        out,
        "backlog",
        "URLs in the backlog",
        &opt(s.and_then(|s| s.backlog_urls)),
    );
    tile(
        out,
        "history",
        "URLs in the history",
        &opt(s.and_then(|s| s.history_urls)),
    );
    tile(
        out,
        "due",
        "due for a refetch now",
        &opt(s.and_then(|s| s.due_urls)),
    );
    tile(
        out,
        "pending",
        "segments to fetch",
        &s.map_or("?".into(), |s| s.pending.len().to_string()),
    );
    tile(
        out,
        "hosts",
        "hosts known",
        &g.hosts.as_ref().map_or("?".into(), |h| h.hosts.to_string()),
    );
    if let Some(last) = g.rounds.last() {
        let r = &last.round;
        let ended = common::timefmt::iso_seconds(common::timefmt::from_unix_millis(r.ended_ms));
        tile(
            out,
            "last-round",
            "last round ended",
            &format!(
                "{} ({})",
                ended,
                r.stop_reason.as_deref().unwrap_or(r.end.as_str())
            ),
        );
    }
    out.push_str("</dl>\n");
}

/// A sharded crawl's shards, one row each: where each stands, and the
/// task to run again where one failed.
fn shard_table(out: &mut String, g: &Gathered) {
    if g.shards.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "<h2 id=\"shards\">Shards</h2>\n<p>A crawl of {} shards, each in <code>shards/JJJ/</code>. \
         A shard's round is one of its fetched runs; the crawl's round k below adds up round k \
         of every shard (the longest fetch and reduce), and its figures add up every shard's \
         state.</p>",
        g.shards.len()
    );
    out.push_str("<table id=\"shards-table\"><tr><th>shard</th><th>rounds</th><th>pages</th><th>segments to fetch</th><th>runs not consumed</th><th>not mapped</th><th>map outputs not reduced</th><th>backlog</th><th>history</th><th>due now</th><th>seen URLs</th><th>seen fill</th><th>hosts</th><th class=\"l\">to run again</th></tr>\n");
    for r in &g.shards {
        let _ = writeln!(
            out,
            "<tr data-shard=\"{j}\"><td>{j:03}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td></tr>",
            r.runs,
            r.pages,
            r.pending,
            r.unconsumed,
            r.unmapped,
            r.unreduced,
            opt(r.backlog),
            opt(r.history),
            opt(r.due),
            opt(r.seen_items),
            r.seen_fill
                .map_or("?".into(), |f| format!("{:.2}%", f * 100.0)),
            opt(r.hosts),
            if r.rerun.is_empty() {
                "–".to_string()
            } else {
                format!("<code>{}</code>", esc(&r.rerun))
            },
            j = r.shard,
        );
    }
    out.push_str("</table>\n");
}

fn problems(out: &mut String, g: &Gathered) {
    if g.problems.is_empty() {
        return;
    }
    out.push_str("<div class=\"missing\" id=\"problems\"><p><b>Missing or damaged files</b> (the rest of the page is shown without them):</p><ul>\n");
    for p in g.problems.iter().take(50) {
        let _ = writeln!(out, "<li>{}</li>", esc(p));
    }
    if g.problems.len() > 50 {
        let _ = writeln!(out, "<li>… and {} more</li>", g.problems.len() - 50);
    }
    out.push_str("</ul></div>\n");
}

fn missing(out: &mut String, what: &str) {
    let _ = writeln!(out, "<p class=\"missing\">{}</p>", esc(what));
}

fn series_of(rows: &[RoundRow], f: impl Fn(&RoundRow) -> f64) -> Vec<f64> {
    rows.iter().map(f).collect()
}

fn over_time(out: &mut String, g: &Gathered) {
    out.push_str("<h2 id=\"over-time\">1. The crawl over time</h2>\n");
    let rows = &g.rounds;
    if rows.is_empty() {
        missing(
            out,
            "No round has ended yet (the round journal rounds.v1.tsv is empty or absent).",
        );
        return;
    }
    let x: Vec<u64> = rows.iter().map(|r| r.round.number).collect();
    let mut cumulative = 0.0;
    let cum: Vec<f64> = series_of(rows, |r| r.round.pages as f64)
        .into_iter()
        .map(|p| {
            cumulative += p;
            cumulative
        })
        .collect();
    out.push_str(&charts::per_round(
        "Pages fetched per round",
        "pages",
        &x,
        &[Series::new(
            "pages",
            series_of(rows, |r| r.round.pages as f64),
        )],
        Kind::Stacked,
    ));
    out.push_str(&charts::per_round(
        "Cumulative pages",
        "pages",
        &x,
        &[Series::new("pages so far", cum)],
        Kind::Lines,
    ));
    let rate = |r: &RoundRow| {
        if r.round.fetch_ms > 0 {
            r.round.pages as f64 * 1000.0 / r.round.fetch_ms as f64
        } else {
            0.0
        }
    };
    out.push_str(&charts::per_round(
        "Pages per second of fetch time",
        "pages/s",
        &x,
        &[Series::new("pages/s", series_of(rows, rate))],
        Kind::Lines,
    ));
    let gaps = time_chart(out, rows, &x);
    let rep = |f: fn(&super::gather::RunReport) -> u64| {
        move |r: &RoundRow| r.report.as_ref().map_or(0.0, |x| f(x) as f64)
    };
    out.push_str(&charts::per_round(
        "URLs per round: new (found for the first time), scheduled (in the next segments), of them refetches",
        "URLs",
        &x,
        &[
            Series::new("new URLs", series_of(rows, rep(|r| r.new))),
            Series::new(
                "scheduled",
                series_of(rows, |r| r.round.figures.new_urls as f64),
            ),
            Series::new("of them refetches", series_of(rows, rep(|r| r.refetches))),
        ],
        Kind::Grouped,
    ));
    out.push_str(&charts::per_round(
        "URLs waiting in the backlog after each round",
        "URLs",
        &x,
        &[Series::new("backlog", series_of(rows, rep(|r| r.backlog)))],
        Kind::Lines,
    ));
    let mut bytes = 0.0;
    let cum_bytes: Vec<f64> = rows
        .iter()
        .map(|r| {
            bytes += r.fetch.as_ref().map_or(0, |f| f.warc_bytes) as f64;
            bytes / 1e6
        })
        .collect();
    out.push_str(&charts::per_round(
        "Cumulative WARC bytes stored",
        "MB",
        &x,
        &[Series::new("MB so far", cum_bytes)],
        Kind::Lines,
    ));
    round_table(out, rows, &gaps);
    pruned_reports_note(out, g);
}

/// The note under the round table for rounds whose round report
/// `segmenter prune` removed: an expected gap, said once, not a problem
/// per round.
fn pruned_reports_note(out: &mut String, g: &Gathered) {
    if g.pruned_reports.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "<p class=\"note\" id=\"pruned-reports\">Of the {1} rounds, {0} no longer {2} a round report: \
         <code>segmenter prune</code> keeps the files of <code>logs/</code> for <code>[crawl] \
         keep_logs</code>. Their new URLs, backlog, seen-set and held hosts are not shown; \
         their other figures come from the round journal.</p>",
        esc(&super::gather::rounds_named(&g.pruned_reports)),
        g.rounds.len(),
        if g.pruned_reports.len() == 1 {
            "has"
        } else {
            "have"
        }
    );
}

/// The chart of each round's time; returns the gaps between rounds
/// (seconds), which the table shows and a note sums up (a gap of hours
/// before a resumed round would flatten every bar of the chart).
fn time_chart(out: &mut String, rows: &[RoundRow], x: &[u64]) -> Vec<f64> {
    let other = |r: &RoundRow| {
        (r.round.seconds() as f64 - (r.round.fetch_ms + r.round.segmenter_ms) as f64 / 1000.0)
            .max(0.0)
    };
    let gaps: Vec<f64> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            if i == 0 {
                0.0
            } else {
                ((r.round.started_ms - rows[i - 1].round.ended_ms) as f64 / 1000.0).max(0.0)
            }
        })
        .collect();
    out.push_str(&charts::per_round(
        "Time per round: fetch, segmenter, other (waits)",
        "seconds",
        x,
        &[
            Series::new(
                "fetch",
                series_of(rows, |r| r.round.fetch_ms as f64 / 1000.0),
            ),
            Series::new(
                "segmenter",
                series_of(rows, |r| r.round.segmenter_ms as f64 / 1000.0),
            ),
            Series::new("other", series_of(rows, other)),
        ],
        Kind::Stacked,
    ));
    if let Some((i, longest)) = gaps
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .filter(|(_, g)| **g >= 1.0)
    {
        let _ = writeln!(
            out,
            "<p class=\"note\" id=\"gaps\">Time between rounds (no round running): {:.0} s in all, \
             the longest {:.0} s before round {} (the table's <i>gap s</i> column).</p>",
            gaps.iter().sum::<f64>(),
            longest,
            rows[i].round.number
        );
    }
    gaps
}

fn round_table(out: &mut String, rows: &[RoundRow], gaps: &[f64]) {
    let skip = rows.len().saturating_sub(TABLE_ROUNDS);
    if skip > 0 {
        let _ = writeln!(
            out,
            "<p class=\"note\">The last {TABLE_ROUNDS} of {} rounds (all of them are in the charts and in <code>rounds.v1.tsv</code>).</p>",
            rows.len()
        );
    }
    out.push_str("<table id=\"rounds-table\"><tr><th>round</th><th class=\"l\">segment</th><th class=\"l\">ended</th><th class=\"l\">why the fetch ended</th><th>URLs</th><th>pages</th><th>pages/s</th><th>fetch s</th><th>segmenter s</th><th>gap s</th><th>new URLs</th><th>scheduled</th><th>refetches</th><th>backlog</th></tr>\n");
    for (i, r) in rows.iter().enumerate().skip(skip) {
        let j = &r.round;
        let rep = |f: fn(&super::gather::RunReport) -> u64| {
            r.report
                .as_ref()
                .map_or("–".to_string(), |x| f(x).to_string())
        };
        let rate = if j.fetch_ms > 0 {
            format!("{:.1}", j.pages as f64 * 1000.0 / j.fetch_ms as f64)
        } else {
            "–".into()
        };
        let _ = writeln!(
            out,
            "<tr data-round=\"{n}\"><td>{n}</td><td class=\"l\">{seg}</td><td class=\"l\">{ended}</td><td class=\"l\">{why}</td><td>{urls}</td><td class=\"pages\">{pages}</td><td>{rate}</td><td>{f:.1}</td><td>{s:.1}</td><td>{gap:.0}</td><td>{new}</td><td>{sch}</td><td>{re}</td><td class=\"backlog\">{bl}</td></tr>",
            n = j.number,
            seg = esc(j.segment.as_deref().unwrap_or("-")),
            ended = common::timefmt::iso_seconds(common::timefmt::from_unix_millis(j.ended_ms)),
            why = esc(j.stop_reason.as_deref().unwrap_or(j.end.as_str())),
            urls = j.urls.map_or("?".into(), |u| u.to_string()),
            pages = j.pages,
            f = j.fetch_ms as f64 / 1000.0,
            s = j.segmenter_ms as f64 / 1000.0,
            gap = gaps[i],
            new = rep(|x| x.new),
            sch = j.figures.new_urls,
            re = rep(|x| x.refetches),
            bl = rep(|x| x.backlog),
        );
    }
    out.push_str("</table>\n");
}

/// Outcome words grouped for the chart.
fn outcome_group(word: &str) -> &'static str {
    match word {
        "2xx" => "2xx",
        "3xx" => "3xx",
        "4xx" => "4xx",
        "5xx" => "5xx",
        "timeout" => "timeouts",
        "refused" | "connect" => "refused/connect",
        "dns" => "DNS",
        "tls" => "TLS",
        "robots" | "robots-unavailable" => "robots.txt",
        _ => "other",
    }
}

const OUTCOME_GROUPS: [&str; 10] = [
    "2xx",
    "3xx",
    "4xx",
    "5xx",
    "timeouts",
    "refused/connect",
    "DNS",
    "TLS",
    "robots.txt",
    "other",
];

fn outcomes(out: &mut String, g: &Gathered) {
    out.push_str("<h2 id=\"outcomes\">2. Outcomes</h2>\n");
    let rows = &g.rounds;
    let with_stats = rows.iter().filter(|r| r.fetch.is_some()).count();
    if with_stats == 0 {
        missing(
            out,
            "No fetched run's stats.json was found: outcomes per round are not shown.",
        );
    } else {
        outcome_charts(out, rows, with_stats);
    }
    if !rows.is_empty() {
        let x: Vec<u64> = rows.iter().map(|r| r.round.number).collect();
        out.push_str(&charts::per_round(
            "Fetch history: first fetches, refetches unchanged and changed, retired",
            "URLs",
            &x,
            &[
                Series::new(
                    "first fetch",
                    series_of(rows, |r| r.round.figures.history_new as f64),
                ),
                Series::new(
                    "unchanged",
                    series_of(rows, |r| r.round.figures.refreshed_unchanged as f64),
                ),
                Series::new(
                    "changed",
                    series_of(rows, |r| r.round.figures.refreshed_changed as f64),
                ),
                Series::new(
                    "retired",
                    series_of(rows, |r| r.round.figures.retired as f64),
                ),
            ],
            Kind::Stacked,
        ));
    }
    mime_table(out, g);
}

/// The outcomes per round from the fetches' stats.json (`with_stats` of
/// the rounds have one), their totals and the bytes per round.
fn outcome_charts(out: &mut String, rows: &[RoundRow], with_stats: usize) {
    let x: Vec<u64> = rows.iter().map(|r| r.round.number).collect();
    let mut totals: BTreeMap<String, u64> = BTreeMap::new();
    let series: Vec<Series> = OUTCOME_GROUPS
        .iter()
        .map(|&group| {
            Series::new(
                group,
                series_of(rows, |r| {
                    r.fetch.as_ref().map_or(0.0, |f| {
                        f.outcomes
                            .iter()
                            .filter(|(k, _)| outcome_group(k) == group)
                            .map(|(_, n)| *n as f64)
                            .sum()
                    })
                }),
            )
        })
        .filter(|s| s.values.iter().any(|v| *v > 0.0))
        .collect();
    for f in rows.iter().filter_map(|r| r.fetch.as_ref()) {
        for (k, n) in &f.outcomes {
            *totals.entry(k.clone()).or_default() += n;
        }
    }
    out.push_str(&charts::per_round(
        "Status codes and errors per round (stats.json of each fetch)",
        "attempts",
        &x,
        &series,
        Kind::Stacked,
    ));
    out.push_str("<table id=\"outcomes-table\"><tr><th class=\"l\">outcome</th><th>attempts, all rounds</th></tr>\n");
    for (k, n) in &totals {
        let _ = writeln!(out, "<tr><td class=\"l\">{}</td><td>{n}</td></tr>", esc(k));
    }
    let truncated: u64 = rows
        .iter()
        .filter_map(|r| r.fetch.as_ref())
        .map(|f| f.truncated)
        .sum();
    let _ = writeln!(
        out,
        "<tr><td class=\"l\">too big (stored truncated; counted above too)</td><td>{truncated}</td></tr>"
    );
    out.push_str("</table>\n");
    if with_stats < rows.len() {
        let _ = writeln!(
            out,
            "<p class=\"note\">{} of {} rounds have no stats.json.</p>",
            rows.len() - with_stats,
            rows.len()
        );
    }
    if rows
        .iter()
        .any(|r| r.fetch.as_ref().is_some_and(|f| f.resumed))
    {
        out.push_str(
            "<p class=\"note\">A resumed fetch's stats.json counts its last process only.</p>\n",
        );
    }
    out.push_str(&charts::per_round(
        "Bytes stored per round",
        "MB",
        &x,
        &[Series::new(
            "WARC bytes",
            series_of(rows, |r| {
                r.fetch.as_ref().map_or(0.0, |f| f.warc_bytes as f64 / 1e6)
            }),
        )],
        Kind::Stacked,
    ));
}

fn mime_table(out: &mut String, g: &Gathered) {
    let l = &g.logs;
    if l.runs.is_empty() {
        missing(out, "No crawl.log was read: media types are not shown.");
        return;
    }
    let mut mime: Vec<(&String, &u64)> = l.mime.iter().collect();
    mime.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let _ = writeln!(
        out,
        "<p class=\"note\">Media types of the pages of the last {} round(s) (their crawl.log, {} lines).</p>",
        l.runs.len(),
        l.lines
    );
    out.push_str(
        "<table id=\"mime-table\"><tr><th class=\"l\">media type</th><th>pages</th></tr>\n",
    );
    for (m, n) in mime.iter().take(10) {
        let _ = writeln!(out, "<tr><td class=\"l\">{}</td><td>{n}</td></tr>", esc(m));
    }
    if mime.len() > 10 {
        let rest: u64 = mime.iter().skip(10).map(|(_, n)| **n).sum();
        let _ = writeln!(
            out,
            "<tr><td class=\"l\">{} other types</td><td>{rest}</td></tr>",
            mime.len() - 10
        );
    }
    out.push_str("</table>\n");
}

fn delay_text(ms: Option<u64>) -> String {
    ms.map_or("–".into(), |ms| format!("{:.1} s", ms as f64 / 1000.0))
}

fn robots_text(status: Option<i64>) -> String {
    match status {
        None => "never fetched".into(),
        Some(0) => "unreachable".into(),
        Some(s) => s.to_string(),
    }
}

fn host_table(out: &mut String, title: &str, rows: &[common::hoststate::HostRow], now_ms: i64) {
    let _ = writeln!(out, "<h3>{}</h3>", esc(title));
    if rows.is_empty() {
        out.push_str("<p class=\"note\">None.</p>\n");
        return;
    }
    out.push_str("<table><tr><th class=\"l\">host</th><th>pages</th><th>errors</th><th>failures in a row</th><th>Crawl-delay</th><th class=\"l\">robots.txt</th><th>held for</th><th>bytes</th></tr>\n");
    for h in rows {
        let held = h
            .next_contact_ms
            .filter(|&t| t > now_ms)
            .map_or("–".into(), |t| {
                human::duration(std::time::Duration::from_millis((t - now_ms) as u64))
            });
        let _ = writeln!(
            out,
            "<tr><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td></tr>",
            esc(&h.host),
            h.pages,
            h.errors,
            h.consecutive_errors,
            delay_text(h.crawl_delay_ms),
            robots_text(h.robots_status),
            esc(&held),
            human::bytes(h.bytes)
        );
    }
    out.push_str("</table>\n");
}

fn hosts(out: &mut String, g: &Gathered) {
    out.push_str("<h2 id=\"hosts\">3. Hosts</h2>\n");
    let now = common::timefmt::unix_millis(std::time::SystemTime::now());
    match &g.hosts {
        None => missing(
            out,
            "hosts.db is absent or unreadable: the hosts are not shown.",
        ),
        Some(h) => {
            let _ = writeln!(
                out,
                "<p>{} hosts known; {} with a Crawl-delay; {} failing now; {} held now (may not be asked yet).</p>",
                h.hosts, h.with_crawl_delay, h.failing, h.held
            );
            out.push_str("<table id=\"robots-table\"><tr><th class=\"l\">robots.txt</th><th>hosts</th></tr>\n");
            for (label, n) in &h.robots {
                let _ = writeln!(
                    out,
                    "<tr><td class=\"l\">{}</td><td>{n}</td></tr>",
                    esc(label)
                );
            }
            out.push_str("</table>\n");
            let labels: Vec<String> = h
                .pages_per_host
                .iter()
                .map(|(l, _)| l.to_string())
                .collect();
            let values: Vec<f64> = h.pages_per_host.iter().map(|(_, n)| *n as f64).collect();
            out.push_str(&charts::buckets(
                "Hosts by pages fetched (over the crawl)",
                "hosts",
                &labels,
                &values,
            ));
            host_table(out, "Top hosts by pages", &h.top_pages, now);
            host_table(out, "Top hosts by errors", &h.top_errors, now);
            host_table(out, "Longest Crawl-delay", &h.top_delay, now);
            host_table(out, "Failing now (failures in a row)", &h.top_failing, now);
            host_table(
                out,
                "Held longest (penalty box, Retry-After, robots.txt retry, backoff)",
                &h.top_held,
                now,
            );
        }
    }
    out.push_str("<h3>Most URLs waiting in the backlog</h3>\n");
    match &g.summaries.backlog {
        None => out.push_str("<p class=\"note\">No backlog (or it could not be read).</p>\n"),
        Some(b) => {
            let _ = writeln!(
                out,
                "<p>{} URLs of {} hosts wait in the backlog.</p>",
                b.urls, b.hosts
            );
            out.push_str("<table id=\"backlog-table\"><tr><th class=\"l\">host</th><th>URLs waiting</th></tr>\n");
            for hc in &b.top_hosts {
                let _ = writeln!(
                    out,
                    "<tr><td class=\"l\">{}</td><td>{}</td></tr>",
                    esc(&hc.host),
                    hc.urls
                );
            }
            let shown: u64 = b.top_hosts.iter().map(|h| h.urls).sum();
            if b.hosts as usize > b.top_hosts.len() {
                let _ = writeln!(
                    out,
                    "<tr><td class=\"l\">{} other hosts</td><td>{}</td></tr>",
                    b.hosts as usize - b.top_hosts.len(),
                    b.urls.saturating_sub(shown)
                );
            }
            out.push_str("</table>\n");
        }
    }
    if let Some(report) = g.rounds.iter().rev().find_map(|r| r.report.as_ref()) {
        let _ = writeln!(
            out,
            "<p>Hosts held back by a budget or their failures in the last round report ({}):</p>",
            esc(&report.file)
        );
        if report.held_hosts.is_empty() {
            out.push_str("<p class=\"note\">None.</p>\n");
        } else {
            out.push_str("<table><tr><th class=\"l\">reason</th><th>hosts</th></tr>\n");
            for (k, n) in &report.held_hosts {
                let _ = writeln!(out, "<tr><td class=\"l\">{}</td><td>{n}</td></tr>", esc(k));
            }
            out.push_str("</table>\n");
        }
        waiting_cuts(out, report);
    }
}

/// What each cut of the last round left waiting, and the scores of the
/// URLs that wait (see the guide's "What is fetched first").
fn waiting_cuts(out: &mut String, report: &super::gather::RunReport) {
    if let Some(cuts) = &report.left_waiting {
        out.push_str("<p>URLs each cut of that round left waiting in the backlog:</p>\n");
        out.push_str("<table id=\"cuts-table\"><tr><th class=\"l\">cut</th><th>URLs</th></tr>\n");
        for (name, urls) in cuts {
            let _ = writeln!(out, "<tr><td class=\"l\">{name}</td><td>{urls}</td></tr>");
        }
        out.push_str("</table>\n");
    }
    if let Some([urls, p50, p90, p99, max]) = report.waiting_scores {
        let _ = writeln!(
            out,
            "<p id=\"waiting-scores\">Scores (in-links found, across rounds) of the {urls} URLs \
             waiting after that round: median {p50}, 90th percentile {p90}, 99th percentile \
             {p99}, most {max}.</p>"
        );
    }
}

fn politeness(out: &mut String, g: &Gathered) {
    out.push_str("<h2 id=\"politeness\">4. Politeness</h2>\n");
    let l = &g.logs;
    if l.runs.is_empty() {
        missing(
            out,
            "No crawl.log was read: the spacing of requests is not shown.",
        );
    } else {
        let _ = writeln!(
            out,
            "<p class=\"note\">From the crawl logs of the last {} round(s) (at most {LOG_ROUNDS} are read): the smallest time between the end of a request to a host and the start of the next, against the host's floor: the crawl's min_delay ({:.2} s) or its Crawl-delay if larger. The fetcher also waits a factor of the response time, and longer after failures.</p>",
            l.runs.len(),
            g.min_delay_ms as f64 / 1000.0
        );
        let labels = ["< 0.9×", "0.9–1×", "1–1.5×", "1.5–2×", "2–5×", "5×+"];
        let mut counts = [0f64; 6];
        let mut closest: Vec<(f64, &str, u64, u64)> = Vec::new();
        for (host, h) in &l.hosts {
            let Some(gap) = h.min_gap_ms else { continue };
            let floor = g
                .crawl_delays
                .get(host)
                .copied()
                .unwrap_or(0)
                .max(g.min_delay_ms)
                .max(1);
            let ratio = gap as f64 / floor as f64;
            let i = match ratio {
                r if r < 0.9 => 0,
                r if r < 1.0 => 1,
                r if r < 1.5 => 2,
                r if r < 2.0 => 3,
                r if r < 5.0 => 4,
                _ => 5,
            };
            counts[i] += 1.0;
            closest.push((ratio, host, gap, floor));
        }
        let labels: Vec<String> = labels.iter().map(|s| s.to_string()).collect();
        out.push_str(&charts::buckets(
            "Hosts by their smallest gap between requests, as a multiple of their floor",
            "hosts",
            &labels,
            &counts,
        ));
        closest.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(b.1)));
        let _ = writeln!(
            out,
            "<p id=\"too-close\">Hosts asked sooner than 0.9× their floor: <b>{}</b>.</p>",
            counts[0] as u64
        );
        out.push_str("<table id=\"gaps-table\"><tr><th class=\"l\">host (closest spacing first)</th><th>smallest gap</th><th>floor</th><th>ratio</th></tr>\n");
        for (ratio, host, gap, floor) in closest.iter().take(10) {
            let _ = writeln!(
                out,
                "<tr><td class=\"l\">{}</td><td>{:.3} s</td><td>{:.3} s</td><td>{ratio:.2}</td></tr>",
                esc(host),
                *gap as f64 / 1000.0,
                *floor as f64 / 1000.0
            );
        }
        out.push_str("</table>\n");
        let robots_retries: u64 = g
            .rounds
            .iter()
            .filter_map(|r| r.fetch.as_ref())
            .filter_map(|f| f.outcomes.get("robots-unavailable"))
            .sum();
        let _ = writeln!(
            out,
            "<p>Retry-After honoured (in the logs read): <b>{}</b>; URLs held because robots.txt was unavailable and is retried later (all rounds): <b>{robots_retries}</b>.</p>",
            l.retry_after
        );
    }
    held_chart(out, &g.rounds);
}

/// Hosts held back per round by reason, from the round reports.
fn held_chart(out: &mut String, rows: &[RoundRow]) {
    let mut reasons: Vec<String> = rows
        .iter()
        .filter_map(|r| r.report.as_ref())
        .flat_map(|r| r.held_hosts.keys().cloned())
        .collect();
    reasons.sort();
    reasons.dedup();
    if reasons.is_empty() {
        out.push_str("<p class=\"note\">No host was held back by a budget or its failures in any round report.</p>\n");
    } else {
        let x: Vec<u64> = rows.iter().map(|r| r.round.number).collect();
        let series: Vec<Series> = reasons
            .iter()
            .map(|k| {
                Series::new(
                    k,
                    series_of(rows, |r| {
                        r.report
                            .as_ref()
                            .and_then(|x| x.held_hosts.get(k))
                            .copied()
                            .unwrap_or(0) as f64
                    }),
                )
            })
            .collect();
        out.push_str(&charts::per_round(
            "Hosts held back per round, by reason (backoff, parked, budgets)",
            "hosts",
            &x,
            &series,
            Kind::Stacked,
        ));
    }
}

fn health(out: &mut String, g: &Gathered) {
    out.push_str("<h2 id=\"health\">5. State health</h2>\n");
    let rows = &g.rounds;
    let x: Vec<u64> = rows.iter().map(|r| r.round.number).collect();
    if rows.iter().any(|r| r.report.is_some()) {
        out.push_str(&charts::per_round(
            "Seen-set (Bloom filter): fill and false-positive estimate, %",
            "%",
            &x,
            &[
                Series::new(
                    "fill %",
                    series_of(rows, |r| {
                        r.report.as_ref().map_or(0.0, |x| x.bloom_fill * 100.0)
                    }),
                ),
                Series::new(
                    "false positives %",
                    series_of(rows, |r| {
                        r.report.as_ref().map_or(0.0, |x| x.bloom_fp * 100.0)
                    }),
                ),
            ],
            Kind::Lines,
        ));
        let grew: Vec<String> = rows
            .iter()
            .filter(|r| r.report.as_ref().is_some_and(|x| x.bloom_grew))
            .map(|r| r.round.number.to_string())
            .collect();
        let _ = writeln!(
            out,
            "<p>The seen-set grew (rebuilt larger) in round(s): {}.</p>",
            if grew.is_empty() {
                "none".to_string()
            } else {
                grew.join(", ")
            }
        );
        let damaged: u64 = rows
            .iter()
            .filter_map(|r| r.report.as_ref())
            .map(|r| r.damaged_records)
            .sum();
        let _ = writeln!(
            out,
            "<p>Damaged WARC records skipped by the segmenter (all rounds): <b>{damaged}</b>. Damaged or missing files this page found: <b>{}</b> (listed at the top). Repairs (<code>segmenter repair</code>) are not kept in the files this page reads: their output is in <code>logs/</code>.</p>",
            g.problems.len()
        );
    } else {
        missing(
            out,
            "No round report was found: the seen-set's history is not shown.",
        );
    }
    if !rows.is_empty() {
        out.push_str(&charts::per_round(
            "Sitemaps read, and the new URLs they gave",
            "count",
            &x,
            &[
                Series::new(
                    "sitemaps read",
                    series_of(rows, |r| r.round.figures.sitemaps_read as f64),
                ),
                Series::new(
                    "new URLs from sitemaps",
                    series_of(rows, |r| r.round.figures.sitemap_urls_new as f64),
                ),
            ],
            Kind::Lines,
        ));
    }
    seen_now(out, g);
    history_due(out, g);
}

/// "Where to look next" of a sharded crawl: each shard's directory.
fn shard_links(out: &mut String, g: &Gathered, place: &Place) {
    if let Some(r) = &g.last_report {
        let _ = writeln!(
            out,
            "<li>the newest reduce report: {}</li>",
            place.link(r, r)
        );
    }
    for r in &g.shards {
        let dir = format!("shards/{:03}", r.shard);
        let _ = writeln!(
            out,
            "<li>shard {:03}: {} (its reports and logs), {}, {}</li>",
            r.shard,
            place.link(&format!("{dir}/logs/"), &format!("{dir}/logs/")),
            place.link(&format!("{dir}/fetched/"), "fetched/"),
            place.link(&format!("{dir}/hosts.db"), "hosts.db"),
        );
    }
    let _ = writeln!(
        out,
        "<li>{}: the Slurm tasks' output (<code>slurm-STEP-JOB_TASK.log</code>); {}: the crawl's settings</li>",
        place.link("logs/", "logs/"),
        place.link("crawl.toml", "crawl.toml")
    );
    out.push_str("<li>where every shard stands now: <code>segmenter status CRAWL</code> (<code>--json</code>: one object with <code>per_shard</code>)</li>\n</ul>\n");
}

/// The seen-set as `segmenter status` reads it now.
fn seen_now(out: &mut String, g: &Gathered) {
    let Some(b) = g.status.as_ref().map(|s| &s.bloom) else {
        return;
    };
    let (Some(items), Some(fill), Some(fp)) = (b.bloom_items, b.bloom_fill, b.bloom_fp_rate) else {
        missing(
            out,
            "No seen-set (seen.bloom), or it cannot be read: its state is not shown.",
        );
        return;
    };
    let _ = writeln!(
        out,
        "<p id=\"seen-now\">Seen-set now: {items} URLs (design load {}), {:.2}% of bits set, \
         false-positive estimate {:.4}% (target {:.2}%), {} bytes; {} URLs rescued over the crawl \
         (called seen by the filter, found in none of the exact sets).</p>",
        opt(b.bloom_design_items),
        fill * 100.0,
        fp * 100.0,
        b.bloom_target_fp_rate.unwrap_or(0.0) * 100.0,
        opt(b.bloom_bytes),
        opt(b.bloom_rescued),
    );
}

/// The fetch history's size and when its URLs come due.
fn history_due(out: &mut String, g: &Gathered) {
    match &g.summaries.history {
        None => missing(
            out,
            "No fetch history (or it could not be read): when URLs come due is not shown.",
        ),
        Some(h) => {
            let _ = writeln!(
                out,
                "<p>Fetch history: {} URLs of {} hosts: {} active, {} failed, retired {} gone, {} moved, {} by robots.txt; {} seen to change.</p>",
                h.urls, h.hosts, h.active, h.failed, h.gone, h.moved, h.robots, h.changed_urls
            );
            let d = &h.due;
            let labels: Vec<String> = [
                "now",
                "< 1 hour",
                "< 1 day",
                "< 1 week",
                "< 30 days",
                "later",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            let values = [d.now, d.hour, d.day, d.week, d.month, d.later].map(|n| n as f64);
            out.push_str(&charts::buckets(
                "When URLs of the history come due for a refetch",
                "URLs",
                &labels,
                &values,
            ));
        }
    }
}

fn next_steps(out: &mut String, g: &Gathered, place: &Place) {
    out.push_str("<h2 id=\"next\">6. Where to look next</h2>\n<ul>\n");
    if !g.shards.is_empty() {
        shard_links(out, g, place);
        return;
    }
    let _ = writeln!(
        out,
        "<li>{}: one line per round (its figures and times)</li>",
        place.link("rounds.v1.tsv", "rounds.v1.tsv")
    );
    if let Some(r) = &g.last_report {
        let _ = writeln!(out, "<li>the last round report: {}</li>", place.link(r, r));
    }
    let last: Vec<&RoundRow> = g.rounds.iter().rev().take(5).collect();
    for r in &last {
        let n = r.round.number;
        let log = format!("logs/round-{n:05}.log");
        let mut line = format!("round {n}: {}", place.link(&log, &log));
        if let Some(seg) = &r.round.segment {
            let _ = write!(
                line,
                ", {}, {}",
                place.link(
                    &format!("fetched/{seg}/crawl.log"),
                    &format!("fetched/{seg}/crawl.log")
                ),
                place.link(&format!("fetched/{seg}/stats.json"), "stats.json")
            );
        }
        let _ = writeln!(out, "<li>{line}</li>");
    }
    let _ = writeln!(
        out,
        "<li>{}: per-host state (<code>sqlite3 hosts.db 'select host, robots_status, crawl_delay_ms, pages_total from hosts'</code>)</li>",
        place.link("hosts.db", "hosts.db")
    );
    let _ = writeln!(
        out,
        "<li>{}: the crawl's settings; {}: every program run's log</li>",
        place.link("crawl.toml", "crawl.toml"),
        place.link("logs/", "logs/")
    );
    out.push_str("<li>where the crawl stands now: <code>segmenter status CRAWL</code>; one segment: <code>segmenter inspect FILE</code></li>\n</ul>\n");
}

#[cfg(test)]
mod tests {
    use super::super::charts::tests::{rects, y_axis};
    use super::super::gather::RunReport;
    use super::*;
    use common::rounds::{End, Figures, Round};

    /// Round `n`, of 10 s, after a gap of `gap_s` seconds, whose run found
    /// `new` URLs and scheduled `scheduled`.
    fn row(n: u64, start_s: i64, new: u64, scheduled: u64) -> RoundRow {
        RoundRow {
            round: Round {
                number: n,
                segment: Some(format!("{n:05}")),
                started_ms: start_s * 1000,
                ended_ms: (start_s + 10) * 1000,
                end: End::Done,
                urls: Some(100),
                pages: 90,
                figures: Figures {
                    new_urls: scheduled,
                    new_segments: 1,
                    ..Figures::default()
                },
                stop_reason: Some("complete".into()),
                fetch_ms: 9_000,
                segmenter_ms: 500,
            },
            report: Some(RunReport {
                new,
                scheduled,
                ..RunReport::default()
            }),
            fetch: None,
        }
    }

    /// The SVG of the chart titled `title` in `html`.
    fn chart<'a>(html: &'a str, title: &str) -> &'a str {
        let at = html
            .find(title)
            .unwrap_or_else(|| panic!("no chart {title:?}"));
        let start = html[..at].rfind("<svg").unwrap();
        &html[start..at + html[at..].find("</svg>").unwrap()]
    }

    #[test]
    fn new_and_scheduled_urls_are_both_seen_and_named_alike() {
        let g = Gathered {
            rounds: vec![row(1, 0, 90, 90), row(2, 20, 469, 474)],
            ..Gathered::default()
        };
        let mut html = String::new();
        over_time(&mut html, &g);
        let svg = chart(&html, "URLs per round: new");
        let colour = |c: plotters::style::RGBColor| format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2);
        let bars = |c| -> Vec<(f64, f64)> {
            rects(svg)
                .into_iter()
                .filter(|r| r.4 == colour(c) && r.2 != 14.0)
                .map(|r| (r.0, r.0 + r.2))
                .collect()
        };
        let (new, scheduled) = (bars(charts::PALETTE[0]), bars(charts::PALETTE[1]));
        assert_eq!((new.len(), scheduled.len()), (2, 2), "{svg}");
        for (a, b) in new.iter().zip(&scheduled) {
            assert!(a.1 <= b.0, "the new URLs' bar is hidden: {a:?} {b:?}");
        }
        // The table: the run's new URLs, and the journal's scheduled ones
        // (the round line's figure).
        let table = &html[html.find("<tr data-round=\"2\">").unwrap()..];
        assert!(table.contains("<td>469</td><td>474</td>"), "{table}");
    }

    #[test]
    fn a_long_gap_between_rounds_does_not_flatten_the_time_chart() {
        let g = Gathered {
            rounds: vec![row(1, 0, 1, 1), row(2, 20, 1, 1), row(3, 730, 1, 1)],
            ..Gathered::default()
        };
        let mut html = String::new();
        over_time(&mut html, &g);
        let labels = y_axis(chart(&html, "Time per round"));
        let top: f64 = labels[0].parse().unwrap();
        assert!(top <= 12.0, "the axis goes to {top} for rounds of 10 s");
        assert!(html.contains("the longest 700 s before round 3"), "{html}");
    }
}
