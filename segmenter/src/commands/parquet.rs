//! `segmenter parquet CRAWL`: the crawl's columnar index as one queryable
//! set. Writes the index file (`NAME.parquet`) of each WARC file of the
//! runs taken that lacks one, then gathers each run's files into the set
//! ([`crate::derivatives::gather`]): `CRAWL/parquet/` (or `--out DIR`), or,
//! when the crawl's WARC files were uploaded to a WARC store, the prefix
//! `parquet/` of the crawl in that store (the set's list stays in
//! `CRAWL/parquet/`).

use std::path::Path;

use common::crawldir::CrawlDir;
use common::runlog::RunLog;
use common::store::Manifest;

use crate::derivatives::gather::{self, RunFiles};
use crate::derivatives::{self, Run, Settings, Wanted, outputs_of};
use crate::error::Error;
use crate::state::warcs::Rounds;

/// What `segmenter parquet` was asked.
pub struct Request<'a> {
    pub crawl: &'a Path,
    pub rounds: &'a Rounds,
    /// Where the set goes, instead of `CRAWL/parquet/` or the store.
    pub out: Option<&'a Path>,
    /// Gather runs already gathered again.
    pub force: bool,
    pub threads: usize,
}

/// The command.
pub fn parquet(req: &Request<'_>) -> Result<(), Error> {
    let dir = CrawlDir::open(req.crawl).map_err(Error::io(req.crawl))?;
    let log = RunLog::open("segmenter", &dir.new_log_path("segmenter"));
    let runs = derivatives::runs(&dir, |id| req.rounds.contains(id))?;
    if runs.is_empty() {
        return Err(Error::Usage(format!(
            "{}: no complete fetched run (fetched/ID/DONE) in the rounds asked for; \
             `segmenter status` lists the crawl's runs",
            req.crawl.display()
        )));
    }
    let settings = Settings {
        wanted: Wanted {
            index: true,
            wet: false,
            wat: false,
        },
        threads: req.threads,
        max_page_size: 16 << 20,
        force: false,
    };
    let made =
        derivatives::derive_runs(&derivatives::crawl_name(req.crawl), &runs, &settings, &log);
    if made.failed > 0 {
        return Err(failed(req.crawl, made.failed));
    }
    if made.files > 0 {
        log.info(format!(
            "{} index files written: the files had none",
            made.files
        ));
    }
    let set = req
        .out
        .map_or_else(|| dir.top().join("parquet"), Path::to_path_buf);
    std::fs::create_dir_all(&set).map_err(Error::io(&set))?;
    let done = gather::gathered(&set).map_err(Error::io(&set))?;
    let (mut gathered, mut rows, mut files) = (0, 0, 0);
    let mut place = set.display().to_string();
    for run in &runs {
        if !req.force && done.contains(&(run.id.clone(), run.shard)) {
            continue;
        }
        let (names, n) = gather_one(run, &set, req.out.is_none(), &mut place)?;
        gathered += 1;
        rows += n;
        files += names.len();
    }
    log.info(format!(
        "{gathered} runs gathered into {place}: {rows} rows in {files} files; {} runs were there \
         already. Query: duckdb -c \"SELECT count(*) FROM read_parquet('{}/*.parquet')\"",
        runs.len() - gathered,
        place.trim_end_matches('/'),
    ));
    Ok(())
}

fn failed(crawl: &Path, n: u64) -> Error {
    Error::Io {
        path: crawl.to_path_buf(),
        source: std::io::Error::other(format!(
            "the index files of {n} WARC files could not be written (see the warnings above)"
        )),
    }
}

/// Gathers one run into `set` (then into the store beside its WARC files
/// when they were uploaded and `to_store`); records it in the set's list.
/// Returns the names of its files and its rows.
fn gather_one(
    run: &Run,
    set: &Path,
    to_store: bool,
    place: &mut String,
) -> Result<(Vec<String>, u64), Error> {
    let manifest = Manifest::read(&run.dir).map_err(Error::io(&run.dir))?;
    let mut copies = Vec::new();
    let mut inputs = Vec::new();
    let mut uploaded = None;
    for warc in derivatives::run_warcs(&run.dir).map_err(Error::io(&run.dir))? {
        let index = outputs_of(&warc).index;
        if index.exists() {
            inputs.push(index);
            continue;
        }
        let name = file_name(&index);
        uploaded = uploaded.or_else(|| manifest.get(&name).cloned());
        let copy = common::store::readable(&index).map_err(Error::io(&index))?;
        inputs.push(copy.path().to_path_buf());
        copies.push(copy);
    }
    let files = RunFiles {
        id: run.id.clone(),
        shard: run.shard,
        files: inputs,
    };
    let parts = gather::gather_run(&files, set).map_err(|e| Error::Io {
        path: run.dir.clone(),
        source: std::io::Error::other(e.to_string()),
    })?;
    let rows = parts.iter().map(|p| p.rows).sum();
    let mut names = Vec::new();
    for part in &parts {
        let name = file_name(&part.path);
        match (&uploaded, to_store) {
            (Some(up), true) => {
                let url =
                    common::store::upload_to_crawl(up, &format!("parquet/{name}"), &part.path)
                        .map_err(|e| Error::Io {
                            path: part.path.clone(),
                            source: std::io::Error::other(e.to_string()),
                        })?;
                let _ = std::fs::remove_file(&part.path);
                *place = url.trim_end_matches(&name).to_string();
                names.push(url);
            }
            _ => names.push(name),
        }
    }
    gather::record_gathered(set, &files, rows, &names).map_err(Error::io(set))?;
    drop(copies);
    Ok((names, rows))
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}
