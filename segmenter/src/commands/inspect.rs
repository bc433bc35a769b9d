//! `segmenter inspect FILE [--json]`: the summary of a segment, leftover or
//! backlog file, computed and printed by the same code as `fetcher inspect`
//! (`common::segment::SegmentSummary`); of the fetch history
//! (`history.v5.list`, one of its generations, an older version's file, or
//! their `.prev`): URLs due when, per host too, or with `--entries` its
//! entries; or of the seen-set (`seen.bloom`, or its `.prev`):
//! [`BloomSummary`].

use std::path::Path;

use common::segment::SegmentSummary;

use crate::error::Error;

/// Hosts listed in the summary (as `fetcher inspect`).
const TOP_HOSTS: usize = 10;

/// Prints the summary of `file` to stdout (with `entries`, a history's
/// entries).
pub fn inspect(file: &Path, json: bool, entries: bool) -> Result<(), Error> {
    let is_history = file
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("history.v"));
    if entries {
        if !is_history {
            return Err(Error::Usage(format!(
                "{}: --entries is for the fetch history (history.v5.list)",
                file.display()
            )));
        }
        return print_entries(file);
    }
    let is_bloom = file
        .file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("seen.bloom"));
    if is_bloom {
        return print(file, &BloomSummary::read(file)?, json);
    }
    if is_history {
        let now = common::timefmt::unix_millis(std::time::SystemTime::now());
        let summary = crate::history::HistorySummary::compute(file, now, TOP_HOSTS)
            .map_err(Error::damaged(crate::history::HISTORY_REPAIR))?;
        return print(file, &summary, json);
    }
    let summary = SegmentSummary::compute(file, TOP_HOSTS)?;
    print(file, &summary, json)
}

/// Prints the entries of the history `file`, one line each.
fn print_entries(file: &Path) -> Result<(), Error> {
    let damaged = Error::damaged(crate::history::HISTORY_REPAIR);
    let Some(mut r) = crate::history::HistoryReader::open(file).map_err(damaged)? else {
        return Err(Error::Io {
            path: file.to_path_buf(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
        });
    };
    let mut e = crate::history::Entry::default();
    let mut text = Vec::new();
    while r
        .read_into(&mut e)
        .map_err(Error::damaged(crate::history::HISTORY_REPAIR))?
    {
        e.encode_line(&mut text);
        if text.len() >= 64 * 1024 {
            print_text(&mut text)?;
        }
    }
    print_text(&mut text)
}

/// Prints `text` (whole lines of UTF-8) to stdout and clears it.
fn print_text(text: &mut Vec<u8>) -> Result<(), Error> {
    common::exit::print(&String::from_utf8_lossy(text)).map_err(Error::io("stdout"))?;
    text.clear();
    Ok(())
}

fn print<S: serde::Serialize + std::fmt::Display>(
    file: &Path,
    summary: &S,
    json: bool,
) -> Result<(), Error> {
    let text = if json {
        let mut t = serde_json::to_string_pretty(summary).map_err(|e| Error::Io {
            path: file.to_path_buf(),
            source: e.into(),
        })?;
        t.push('\n');
        t
    } else {
        summary.to_string()
    };
    common::exit::print(&text).map_err(Error::io("stdout"))
}

/// What `inspect` says of a Bloom filter file, after checking it whole
/// (journal checksums, the bit array against its count of bits set).
#[derive(Debug, serde::Serialize)]
pub struct BloomSummary {
    /// Format version (1 or 2).
    pub version: u32,
    /// Bits in the array.
    pub bits: u64,
    /// Hash functions.
    pub hashes: u32,
    /// Design load: the filter grows before it holds more.
    pub design_items: u64,
    /// Target false-positive rate at the design load.
    pub target_fp_rate: f64,
    /// Items inserted (insertions that set a new bit).
    pub items: u64,
    /// Bits set.
    pub bits_set: u64,
    /// Fraction of bits set.
    pub fill: f64,
    /// False-positive rate estimated from the fill (fill^k).
    pub estimated_fp_rate: f64,
    /// Bits per item.
    pub bits_per_item: f64,
    /// Journal blocks after the bit array, and their hashes and bytes.
    pub journal_blocks: u64,
    /// See `journal_blocks`.
    pub journal_hashes: u64,
    /// See `journal_blocks`.
    pub journal_bytes: u64,
    /// The file's size.
    pub file_bytes: u64,
    /// URLs rescued over the crawl.
    pub rescued: u64,
}

impl BloomSummary {
    /// Opens, checks and sums up the filter at `path`.
    pub fn read(path: &Path) -> Result<BloomSummary, Error> {
        let b = common::bloom::BloomFilter::open_read_only(path)
            .and_then(|b| b.verify().map(|()| b))
            .map_err(Error::damaged(crate::error::BLOOM_REPAIR))?;
        let p = b.params();
        let journal = b.journal();
        let bits_set = b.count_bits_set();
        let fill = bits_set as f64 / p.bits as f64;
        Ok(BloomSummary {
            version: b.version(),
            bits: p.bits,
            hashes: p.hashes,
            design_items: p.expected_items,
            target_fp_rate: p.target_fp_rate,
            items: b.items(),
            bits_set,
            fill,
            estimated_fp_rate: fill.powi(p.hashes as i32),
            bits_per_item: b.bits_per_item(),
            journal_blocks: journal.blocks,
            journal_hashes: journal.hashes,
            journal_bytes: journal.bytes,
            file_bytes: p.file_bytes() + journal.bytes,
            rescued: b.rescued(),
        })
    }
}

impl std::fmt::Display for BloomSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "format version: {}", self.version)?;
        writeln!(
            f,
            "size:           {} bits, {} hashes, {} bytes ({} of bit array, {} of journal)",
            self.bits,
            self.hashes,
            self.file_bytes,
            self.file_bytes - self.journal_bytes,
            self.journal_bytes
        )?;
        writeln!(
            f,
            "items:          {} of {} designed ({:.1} %); it grows before it passes its design load",
            self.items,
            self.design_items,
            self.items as f64 * 100.0 / self.design_items as f64
        )?;
        writeln!(
            f,
            "fill:           {:.4} ({} bits set)",
            self.fill, self.bits_set
        )?;
        writeln!(
            f,
            "est. fp rate:   {:.6} (target {} at the design load)",
            self.estimated_fp_rate, self.target_fp_rate
        )?;
        writeln!(f, "bits per item:  {:.2}", self.bits_per_item)?;
        writeln!(
            f,
            "journal:        {} block(s), {} hashes (folded into the bit array past a quarter of its size)",
            self.journal_blocks, self.journal_hashes
        )?;
        writeln!(f, "rescued:        {} URLs over the crawl", self.rescued)
    }
}
