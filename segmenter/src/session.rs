//! What `inject` and `run` do around a round: settings, the log file, the
//! lock, recovery from a killed run, and the report at the end.

use common::crawldir::CrawlDir;

use crate::flags::RoundFlags;
use crate::round::commit::{self, Lock, Recovery, Staging};
use common::exit::chain;

use crate::error::Error;
use crate::round::report::Report;
use crate::settings::Settings;
use common::runlog::RunLog;

/// The disk space a round may write before its commit (an estimate from
/// its inputs): a copy of `seen.bloom` (or, for a crawl that has none yet,
/// the new filter `settings` asks for), a new backlog and history (each the
/// size of the old one), the leftover lists and seeds read (they become
/// segments and backlog lines), and a tenth of the WARC bytes read (the
/// links found: sort spills and segments, compressed), which
/// [`crate::round::Plan::input_bytes`] gives.
pub fn space_needed(settings: &Settings, input: u64) -> u64 {
    let crawl = &settings.crawl;
    let size = |p: std::path::PathBuf| std::fs::metadata(p).map_or(0, |m| m.len());
    let bloom = crawl.bloom_path();
    let filter = if bloom.exists() {
        size(bloom)
    } else {
        common::bloom::BloomParams::optimal(settings.options.bloom_items, settings.options.bloom_fp)
            .map_or(0, |p| p.file_bytes())
    };
    filter
        + size(crawl.backlog_path())
        + crate::history::generations::bytes_on_disk(crawl.root())
        + input
}

/// A command holding the crawl directory.
pub struct Session {
    /// Validated settings.
    pub settings: Settings,
    /// This run's log.
    pub log: RunLog,
    _lock: Lock,
}

impl Session {
    /// Loads settings, opens the log, takes the lock and finishes or
    /// discards what a killed run left.
    pub fn start(crawl: CrawlDir, flags: &RoundFlags) -> Result<Session, Error> {
        let settings = Settings::load(crawl, flags)?;
        let crawl = &settings.crawl;
        let log = RunLog::open_or_append(
            "segmenter",
            settings.log.as_deref(),
            &crawl.new_log_path("segmenter"),
        );
        let lock = commit::lock(crawl)?;
        match commit::recover(crawl)? {
            Recovery::Clean => {}
            Recovery::RolledForward(files) => log.info(format_args!(
                "{}: finished the commit of an interrupted run ({} files moved)",
                crawl.root().display(),
                files.len()
            )),
            Recovery::Discarded => log.info(format_args!(
                "{}: discarded the unfinished work of an interrupted run",
                crawl.root().display()
            )),
            Recovery::DiscardedDamaged(file, problem) => log.warn(format_args!(
                "{}: damaged ({problem}): the interrupted round it belongs to had moved no \
                 file into place yet, so it was discarded and is done again",
                file.display()
            )),
        }
        Ok(Session {
            settings,
            log,
            _lock: lock,
        })
    }

    /// Passes `result` on; an error is also written to the log file (`main`
    /// prints it on stderr), so that the log of a failed run says why.
    pub fn record<T>(&self, result: Result<T, Error>) -> Result<T, Error> {
        if let Err(e) = &result {
            self.log.error_to_file(&chain(e));
        }
        result
    }

    /// A fresh staging directory for a round that reads `input` bytes
    /// (WARC files, leftover lists, seeds), after checking that the round
    /// fits above the free-disk floor ([`space_needed`]): if not, the
    /// round is refused ([`Error::Disk`], exit 3) with nothing changed.
    pub fn staging(&self, input: u64) -> Result<Staging, Error> {
        let crawl = &self.settings.crawl;
        let need = space_needed(&self.settings, input);
        if let Some(short) = common::disk::check(crawl.root(), self.settings.min_free_disk, need)
            .map_err(Error::io(crawl.root()))?
        {
            let hint = if crawl.bloom_path().exists() {
                ""
            } else {
                "; or start with a smaller seen-set (`--bloom-items`, [segmenter] bloom_items: \
                 1.2 MB per million URLs at 1 %; it grows with the crawl)"
            };
            return Err(Error::Disk(short, hint));
        }
        Staging::create(crawl)
    }

    /// Prints the report (stderr and log), keeps it as JSON in
    /// `logs/segmenter-TIMESTAMP.json` (beside the run's own log, under the
    /// same name) and warns about the Bloom filter's load. Called once the
    /// round has committed: a round that did not leaves no JSON report, nor
    /// does a `run` that consumed no fetched run and wrote no segment (one
    /// from cron with nothing to do: only the backlog went round).
    pub fn finish(&self, report: &Report) {
        self.log.block(&report.render());
        let nothing_done = matches!(report.command, "run" | "reduce")
            && report.consumed.is_empty()
            && report.segments.is_empty();
        if nothing_done {
            self.notes(report);
            return;
        }
        let path = match self.log.path() {
            Some(own) if !self.log.is_appended() => own,
            _ => self.settings.crawl.new_log_path("segmenter"),
        }
        .with_extension("json");
        if let Err(e) = common::atomic::write_atomic(&path, report.to_json().as_bytes()) {
            // The round is committed; only `segmenter status`'s last-round
            // figures miss it.
            self.log.warn(format_args!(
                "{}: cannot write the round's report: {e} (`segmenter status` shows no figures of this round)",
                path.display()
            ));
        }
        self.notes(report);
    }

    /// Warns about the Bloom filter's load, and says when no segment was
    /// written.
    fn notes(&self, report: &Report) {
        if report.bloom.past_design_load() {
            self.log.warn(format_args!(
                "{}: past its design load ({} items for {} designed, est. false-positive rate {:.4} for a target of {}): it grows at the next round",
                self.settings.crawl.bloom_path().display(),
                report.bloom.items,
                report.bloom.expected_items,
                report.bloom.fp_rate,
                report.bloom.target_fp_rate
            ));
        }
        if report.segments.is_empty() {
            self.log
                .info("no new segment: every URL found was seen before or refused by a filter");
        }
    }
}
