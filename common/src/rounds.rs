//! The round journal, `CRAWL/rounds.v1.tsv`: one line per crawl round that
//! ended, appended by the driver (`segmenter next --record`, which
//! `scripts/crawl.sh` calls between steps). It numbers the rounds (the next
//! round is the last line's number + 1, whatever happened to the logs), it
//! holds the figures of each round line, and reports and drivers read it
//! with [`read`].
//!
//! ```text
//! #round  segment  started                   ended                     end   urls  pages  new_urls  ...
//! 1       00001    2026-03-01T12:00:00.120Z  2026-03-01T12:00:41.950Z  done  3     3      42        ...
//! ```
//!
//! Tab-separated, the first line names the columns (it starts with `#`,
//! like any comment line); times are UTC, ISO 8601 with milliseconds;
//! seconds have three decimals; `-` is "none" (no segment, no stop reason, an
//! unknown count). The columns, in order: `round`, `segment` (the segment
//! fetched), `started`, `ended`, `end` (`done`: fetched and segmented, its
//! round line printed; `stop`: a STOP file or a signal ended its fetch
//! before it was complete), `urls` (in the segment), `pages` (HTTP responses other than
//! robots.txt, over every run of the segment), `new_urls` and
//! `new_segments` (what the round's own `segmenter run` wrote), then that
//! run's `history_new`, `refreshed_unchanged`, `refreshed_changed`,
//! `retired`, `sitemaps_read`, `sitemap_urls`, `sitemap_urls_new`,
//! `sitemap_urls_rejected`, `bad_sitemaps`, then `stop_reason` (why the
//! fetch ended), `fetch_seconds`, `segmenter_seconds` and `seconds` (the
//! whole round).
//!
//! Append-only with a recoverable tail: a line cut by `kill -9` (no newline
//! at its end) is not a round; the next append cuts it off first. A round
//! killed before its end has no line yet: the next run finishes it under
//! the same number. A line that is complete but not in the format is an
//! error naming the file and the line.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};

use crate::crawldir::CrawlDir;
use crate::timefmt;

/// The column names, the file's first line.
pub const HEADER: &str = "#round\tsegment\tstarted\tended\tend\turls\tpages\tnew_urls\t\
    new_segments\thistory_new\trefreshed_unchanged\trefreshed_changed\tretired\t\
    sitemaps_read\tsitemap_urls\tsitemap_urls_new\tsitemap_urls_rejected\tbad_sitemaps\t\
    stop_reason\tfetch_seconds\tsegmenter_seconds\tseconds";

/// How a round ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// Its segment was fetched and the fetched run segmented.
    Done,
    /// A STOP file (or a signal) stopped its fetch before it was complete:
    /// the fetch stopped cleanly and was segmented (stop reason `signal`),
    /// or the crawl stopped before that.
    Stop,
}

impl End {
    /// The word in the journal.
    pub fn as_str(self) -> &'static str {
        match self {
            End::Done => "done",
            End::Stop => "stop",
        }
    }
}

/// What the `segmenter run` that consumed a round's fetched run wrote and
/// learnt (from its report).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Figures {
    /// URLs in the segments it wrote.
    pub new_urls: u64,
    /// Segments it wrote.
    pub new_segments: u64,
    /// URLs fetched for the first time (history merge).
    pub history_new: u64,
    /// URLs fetched again and found unchanged.
    pub refreshed_unchanged: u64,
    /// URLs fetched again and found changed.
    pub refreshed_changed: u64,
    /// URLs retired (gone, moved, disallowed by robots.txt).
    pub retired: u64,
    /// Sitemaps read.
    pub sitemaps_read: u64,
    /// URLs the sitemaps listed.
    pub sitemap_urls: u64,
    /// Of them, new URLs taken.
    pub sitemap_urls_new: u64,
    /// Of them, URLs not taken.
    pub sitemap_urls_rejected: u64,
    /// Sitemaps not read to the end.
    pub bad_sitemaps: u64,
}

/// One line of the journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Round {
    /// The round's number (1, 2, ...).
    pub number: u64,
    /// The segment it fetched.
    pub segment: Option<String>,
    /// When it started and ended, Unix milliseconds.
    pub started_ms: i64,
    /// See `started_ms`.
    pub ended_ms: i64,
    /// How it ended.
    pub end: End,
    /// URLs in its segment (`None` if the segment could not be read).
    pub urls: Option<u64>,
    /// HTTP responses other than robots.txt.
    pub pages: u64,
    /// What its `segmenter run` wrote and learnt.
    pub figures: Figures,
    /// Why its fetch ended (`complete`, `tail`, `held`, ...), if it did.
    pub stop_reason: Option<String>,
    /// Time in its fetch steps and its segmenter steps, milliseconds.
    pub fetch_ms: u64,
    /// See `fetch_ms`.
    pub segmenter_ms: u64,
}

/// `1234` ms → `1.2` (seconds, cut to one decimal).
fn tenths(ms: u64) -> String {
    format!("{}.{}", ms / 1000, ms % 1000 / 100)
}

/// `1234` ms → `1.234` (seconds, as the journal keeps them).
fn seconds_ms(ms: u64) -> String {
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

/// `1.234` (or `1.2`, `1`) → 1234 ms.
fn parse_seconds(s: &str) -> Option<u64> {
    let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
    if frac.len() > 3 {
        return None;
    }
    let millis = format!("{frac:0<3}");
    Some(
        crate::parse_digits(whole.as_bytes())? * 1000
            + if frac.is_empty() {
                0
            } else {
                crate::parse_digits(millis.as_bytes())?
            },
    )
}

impl Round {
    /// Whole seconds from the round's start to its end, as clocks show them.
    pub fn seconds(&self) -> i64 {
        self.ended_ms.div_euclid(1000) - self.started_ms.div_euclid(1000)
    }

    /// The round line `crawl.sh` prints.
    pub fn line(&self) -> String {
        let f = &self.figures;
        let count = |n: Option<u64>| n.map_or("?".to_string(), |n| n.to_string());
        format!(
            "round {}: segment {}, {} URLs, {} pages fetched, {} URLs scheduled in {} segment(s); \
             history: {} new, {} refreshed ({} unchanged, {} changed), {} retired; \
             sitemaps: {} read, {} URLs, {} new, {} rejected, {} bad; \
             fetch {}s ({}), segmenter {}s; {}s",
            self.number,
            self.segment.as_deref().unwrap_or("-"),
            count(self.urls),
            self.pages,
            f.new_urls,
            f.new_segments,
            f.history_new,
            f.refreshed_unchanged + f.refreshed_changed,
            f.refreshed_unchanged,
            f.refreshed_changed,
            f.retired,
            f.sitemaps_read,
            f.sitemap_urls,
            f.sitemap_urls_new,
            f.sitemap_urls_rejected,
            f.bad_sitemaps,
            tenths(self.fetch_ms),
            self.stop_reason.as_deref().unwrap_or("-"),
            tenths(self.segmenter_ms),
            self.seconds()
        )
    }

    /// The journal line (without its newline).
    pub fn to_tsv(&self) -> String {
        let f = &self.figures;
        let time = |ms: i64| timefmt::iso_millis(timefmt::from_unix_millis(ms));
        let fields: Vec<String> = vec![
            self.number.to_string(),
            self.segment.clone().unwrap_or_else(|| "-".into()),
            time(self.started_ms),
            time(self.ended_ms),
            self.end.as_str().into(),
            self.urls.map_or("-".into(), |n| n.to_string()),
            self.pages.to_string(),
            f.new_urls.to_string(),
            f.new_segments.to_string(),
            f.history_new.to_string(),
            f.refreshed_unchanged.to_string(),
            f.refreshed_changed.to_string(),
            f.retired.to_string(),
            f.sitemaps_read.to_string(),
            f.sitemap_urls.to_string(),
            f.sitemap_urls_new.to_string(),
            f.sitemap_urls_rejected.to_string(),
            f.bad_sitemaps.to_string(),
            self.stop_reason.clone().unwrap_or_else(|| "-".into()),
            seconds_ms(self.fetch_ms),
            seconds_ms(self.segmenter_ms),
            self.seconds().to_string(),
        ];
        fields.join("\t")
    }

    /// Parses a journal line; the error says which field is wrong.
    pub fn parse(line: &str) -> Result<Round, String> {
        let fields: Vec<&str> = line.split('\t').collect();
        let columns = HEADER.split('\t').count();
        if fields.len() != columns {
            return Err(format!("{} fields, not {columns}", fields.len()));
        }
        let name = |i: usize| {
            HEADER
                .split('\t')
                .nth(i)
                .unwrap_or("?")
                .trim_start_matches('#')
        };
        let num = |i: usize| -> Result<u64, String> {
            crate::parse_digits(fields[i].as_bytes())
                .ok_or_else(|| format!("{}: `{}` is not a number", name(i), fields[i]))
        };
        let time = |i: usize| -> Result<i64, String> {
            timefmt::parse_iso(fields[i])
                .map(timefmt::unix_millis)
                .ok_or_else(|| format!("{}: `{}` is not a time", name(i), fields[i]))
        };
        let opt = |i: usize| (fields[i] != "-").then(|| fields[i].to_string());
        let secs = |i: usize| -> Result<u64, String> {
            parse_seconds(fields[i])
                .ok_or_else(|| format!("{}: `{}` is not seconds", name(i), fields[i]))
        };
        let end = match fields[4] {
            "done" => End::Done,
            "stop" => End::Stop,
            other => return Err(format!("end: `{other}` is neither done nor stop")),
        };
        Ok(Round {
            number: num(0)?,
            segment: opt(1),
            started_ms: time(2)?,
            ended_ms: time(3)?,
            end,
            urls: if fields[5] == "-" {
                None
            } else {
                Some(num(5)?)
            },
            pages: num(6)?,
            figures: Figures {
                new_urls: num(7)?,
                new_segments: num(8)?,
                history_new: num(9)?,
                refreshed_unchanged: num(10)?,
                refreshed_changed: num(11)?,
                retired: num(12)?,
                sitemaps_read: num(13)?,
                sitemap_urls: num(14)?,
                sitemap_urls_new: num(15)?,
                sitemap_urls_rejected: num(16)?,
                bad_sitemaps: num(17)?,
            },
            stop_reason: opt(18),
            fetch_ms: secs(19)?,
            segmenter_ms: secs(20)?,
        })
    }
}

/// The rounds of the journal of `crawl`, oldest first (none if it does not
/// exist). A cut last line is left out; a line not in the format is an
/// error naming the file, the line and the repair.
pub fn read(crawl: &CrawlDir) -> io::Result<Vec<Round>> {
    let path = crawl.rounds_path();
    let text = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io::Error::new(e.kind(), format!("{}: {e}", path.display()))),
    };
    let whole = match text.iter().rposition(|&b| b == b'\n') {
        Some(i) => &text[..=i],
        None => &[][..],
    };
    let text = String::from_utf8_lossy(whole);
    let mut rounds = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let round = Round::parse(line).map_err(|why| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{}:{}: not a round line ({why}). Repair: correct or delete the line \
                     (the journal numbers the rounds and keeps their figures; nothing \
                     else depends on it)",
                    path.display(),
                    i + 1
                ),
            )
        })?;
        rounds.push(round);
    }
    Ok(rounds)
}

/// Appends `round` to the journal of `crawl` (creating it with its header),
/// after cutting off a line left incomplete by a crash; synced to disk.
pub fn append(crawl: &CrawlDir, round: &Round) -> io::Result<()> {
    let path = crawl.rounds_path();
    let named = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", path.display()));
    let mut file = File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(named)?;
    let len = cut_incomplete_tail(&mut file).map_err(named)?;
    file.seek(SeekFrom::Start(len)).map_err(named)?;
    let mut text = String::new();
    if len == 0 {
        text.push_str(HEADER);
        text.push('\n');
    }
    text.push_str(&round.to_tsv());
    text.push('\n');
    file.write_all(text.as_bytes()).map_err(named)?;
    file.sync_data().map_err(named)?;
    if len == 0 {
        crate::atomic::sync_parent(&path).map_err(named)?;
    }
    Ok(())
}

/// Cuts `file` back to its last newline (a line a crash left without one is
/// not a round); returns the new length.
fn cut_incomplete_tail(file: &mut File) -> io::Result<u64> {
    let len = file.metadata()?.len();
    let mut pos = len;
    let mut buf = [0u8; 4096];
    while pos > 0 {
        let take = buf.len().min(usize::try_from(pos).unwrap_or(buf.len()));
        file.seek(SeekFrom::Start(pos - take as u64))?;
        file.read_exact(&mut buf[..take])?;
        if let Some(i) = buf[..take].iter().rposition(|&b| b == b'\n') {
            let end = pos - take as u64 + i as u64 + 1;
            if end < len {
                file.set_len(end)?;
            }
            return Ok(end);
        }
        pos -= take as u64;
    }
    if len > 0 {
        file.set_len(0)?;
    }
    Ok(0)
}

/// The number of the next round of `crawl`: the journal's last + 1. A
/// crawl directory from before the journal goes on after its highest
/// `logs/round-NNNNN.log`.
pub fn next_number(crawl: &CrawlDir, rounds: &[Round]) -> u64 {
    if let Some(last) = rounds.last() {
        return last.number + 1;
    }
    if crawl.rounds_path().exists() {
        return 1;
    }
    let highest = std::fs::read_dir(crawl.logs_dir())
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name();
            let n = name
                .to_str()?
                .strip_prefix("round-")?
                .strip_suffix(".log")?;
            n.parse::<u64>().ok()
        })
        .max();
    highest.map_or(1, |n| n + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(number: u64) -> Round {
        Round {
            number,
            segment: Some(format!("{number:05}")),
            started_ms: 1_772_366_400_120,
            ended_ms: 1_772_366_441_950,
            end: End::Done,
            urls: Some(1437),
            pages: 1398,
            figures: Figures {
                new_urls: 812,
                new_segments: 1,
                history_new: 1398,
                sitemaps_read: 3,
                sitemap_urls: 16,
                sitemap_urls_new: 11,
                sitemap_urls_rejected: 3,
                ..Figures::default()
            },
            stop_reason: Some("tail".into()),
            fetch_ms: 41_234,
            segmenter_ms: 150,
        }
    }

    fn scratch(name: &str) -> (crate::testutil::TempDir, CrawlDir) {
        let tmp = crate::testutil::TempDir::new(&format!("rounds-{name}"));
        let crawl = CrawlDir::create(tmp.join("crawl")).unwrap();
        (tmp, crawl)
    }

    #[test]
    fn the_round_line_reads_as_crawl_sh_always_printed_it() {
        assert_eq!(
            round(2).line(),
            "round 2: segment 00002, 1437 URLs, 1398 pages fetched, 812 URLs scheduled \
             in 1 segment(s); history: 1398 new, 0 refreshed (0 unchanged, 0 changed), 0 retired; \
             sitemaps: 3 read, 16 URLs, 11 new, 3 rejected, 0 bad; fetch 41.2s (tail), \
             segmenter 0.1s; 41s"
        );
    }

    #[test]
    fn lines_read_back_as_written() {
        let r = round(7);
        assert_eq!(Round::parse(&r.to_tsv()).unwrap(), r);
        let stopped = Round {
            segment: None,
            urls: None,
            end: End::Stop,
            stop_reason: None,
            ..round(8)
        };
        assert_eq!(Round::parse(&stopped.to_tsv()).unwrap(), stopped);
        assert!(Round::parse("1\t00001").unwrap_err().contains("fields"));
        let bad = r.to_tsv().replacen("1437", "many", 1);
        assert!(
            Round::parse(&bad).unwrap_err().contains("urls: `many`"),
            "{bad}"
        );
    }

    #[test]
    fn a_tail_cut_by_a_crash_is_not_a_round_and_is_cut_off_by_the_next_append() {
        let (_tmp, crawl) = scratch("tail");
        append(&crawl, &round(1)).unwrap();
        append(&crawl, &round(2)).unwrap();
        let path = crawl.rounds_path();
        let mut text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with(&format!("{HEADER}\n")));
        // kill -9 half way through round 3's line.
        let third = round(3).to_tsv();
        text.push_str(&third[..20]);
        std::fs::write(&path, &text).unwrap();
        let read_back: Vec<u64> = read(&crawl).unwrap().iter().map(|r| r.number).collect();
        assert_eq!(read_back, [1, 2]);
        assert_eq!(next_number(&crawl, &read(&crawl).unwrap()), 3);
        append(&crawl, &round(3)).unwrap();
        let read_back: Vec<u64> = read(&crawl).unwrap().iter().map(|r| r.number).collect();
        assert_eq!(read_back, [1, 2, 3]);
        // A damaged complete line is refused, named.
        let text = std::fs::read_to_string(&path)
            .unwrap()
            .replacen("\tdone\t", "\tdne\t", 1);
        std::fs::write(&path, text).unwrap();
        let err = read(&crawl).unwrap_err().to_string();
        assert!(err.contains("rounds.v1.tsv:2: not a round line"), "{err}");
        std::fs::remove_dir_all(crawl.root()).unwrap();
    }

    #[test]
    fn numbering_goes_on_from_the_journal_not_the_logs() {
        let (_tmp, crawl) = scratch("numbers");
        // Before the journal: after the highest round log.
        std::fs::write(crawl.logs_dir().join("round-00041.log"), "").unwrap();
        assert_eq!(next_number(&crawl, &[]), 42);
        append(&crawl, &round(42)).unwrap();
        // Logs deleted (or more of them): the journal decides.
        std::fs::remove_file(crawl.logs_dir().join("round-00041.log")).unwrap();
        assert_eq!(next_number(&crawl, &read(&crawl).unwrap()), 43);
        std::fs::remove_dir_all(crawl.root()).unwrap();
    }
}
