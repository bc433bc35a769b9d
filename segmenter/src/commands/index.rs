//! `segmenter index`: one sorted CDXJ index of a crawl's WARC files, for
//! a replay tool (pywb) or a lookup (`grep`, `look`): the indexes of the
//! runs asked for ([`crate::state::warcs`]), merged, written atomically.

use std::io::{BufWriter, Write};
use std::path::Path;

use common::atomic::AtomicFile;
use common::crawldir::CrawlDir;
use common::runlog::RunLog;

use crate::error::Error;
use crate::state::warcs::{Rounds, indexed_warcs, merge_warc_indexes};

/// `segmenter index CRAWL [--rounds R] [--out FILE]`: writes the merged
/// index (default `CRAWL/index.cdxj`) atomically.
pub fn index(crawl: &Path, rounds: &Rounds, out: Option<&Path>) -> Result<(), Error> {
    let crawl = CrawlDir::open(crawl).map_err(Error::io(crawl))?;
    let log = RunLog::open("segmenter", &crawl.new_log_path("segmenter"));
    let warcs = indexed_warcs(&crawl, rounds, &log)?;
    let out_path = out.map_or_else(|| crawl.root().join("index.cdxj"), Path::to_path_buf);
    let scratch = out_path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf();
    let mut file = AtomicFile::create(&out_path).map_err(Error::io(&out_path))?;
    let lines = {
        let mut w = BufWriter::with_capacity(1 << 16, &mut file);
        let lines = merge_warc_indexes(&warcs, &scratch, &mut w)?;
        w.flush().map_err(Error::io(&out_path))?;
        lines
    };
    file.commit().map_err(Error::io(&out_path))?;
    log.info(format!(
        "{}: {lines} captures from {} WARC files",
        out_path.display(),
        warcs.len()
    ));
    Ok(())
}
