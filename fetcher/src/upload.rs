//! The run's uploads to the WARC store (`warc_store`): started before the
//! workers, fed by the recorder with each closed WARC file, and finished
//! before `DONE`: whatever is still local then (a failed upload, the files
//! of a killed run) is uploaded, and a store that stays down ends the run
//! with [`Error::Store`] (exit code 4), its files kept, no `DONE`.

use std::path::Path;

use common::crawldir::CrawlDir;
use common::runlog::RunLog;
use common::store::{Background, RunUploads, StoreError, WarcStore};

use crate::error::Error;
use crate::settings::Settings;

/// The upload thread of the run in `out`, if the crawl has a WARC store.
pub fn start(
    s: &Settings,
    crawl: &CrawlDir,
    out: &Path,
    log: &RunLog,
) -> Result<Option<Background>, Error> {
    let Some(url) = &s.options.warc_store else {
        return Ok(None);
    };
    let mut store = WarcStore::open(url).map_err(|e| Error::Usage(e.to_string()))?;
    store.retry_time = s.options.warc_store_retry;
    let uploads = RunUploads::new(store, crawl.top(), out, s.options.warc_store_keep_local)
        .map_err(Error::io(out))?;
    log.info(format!(
        "WARC files go to {url} once closed{}",
        if s.options.warc_store_keep_local {
            " (local copies kept)"
        } else {
            ""
        }
    ));
    uploads.spawn().map(Some).map_err(Error::Start)
}

/// Waits for the uploads, then uploads what is still local.
pub fn finish(crawl: &CrawlDir, id: &str, uploads: Background, log: &RunLog) -> Result<(), Error> {
    let (mut uploads, failed) = uploads.finish();
    if let Some(e) = failed {
        log.warn(format_args!(
            "{}; retrying the files left before the run ends",
            common::exit::chain(&e)
        ));
    }
    let result = uploads.upload_rest();
    log.info(format!(
        "uploaded {} files ({}) to the WARC store; {} recorded in {}",
        uploads.files,
        common::human::bytes(uploads.bytes),
        uploads.manifest().uploads().len(),
        crawl
            .fetched_dir(id)
            .join(common::store::MANIFEST_FILE)
            .display()
    ));
    result.map_err(|e| match e {
        StoreError::Local { path, source } => Error::Io { path, source },
        StoreError::Unreachable { .. } => Error::Store(format!(
            "{}; the run's files are kept in {}, DONE is not written: run `fetcher fetch {} {id}` \
             again once the store answers, it uploads them",
            common::exit::chain(&e),
            crawl.fetched_dir(id).display(),
            crawl.root().display()
        )),
        other => Error::stopped(
            common::exit::chain(&other),
            "the run's files are kept locally, DONE is not written",
        ),
    })
}
