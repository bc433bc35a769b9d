//! A crawl's index files gathered into one queryable set: per fetched run
//! (and shard), its WARC files' `NAME.parquet` files merged into one file
//! per `subset`, sorted by `url_surtkey` then `fetch_time` (so that each
//! row group's statistics bound a key range and a lookup by URL or host
//! reads little), named `RUN[-sJJJ]-SUBSET[-pNN].parquet`, flat in one
//! directory (or under one prefix of the WARC store), so that
//! `read_parquet('DIR/*.parquet')` takes the whole crawl.
//!
//! A run's rows are merged in memory, at most [`PART_ROWS`] rows at a time
//! (about 600 bytes a row): a larger run gets several parts, each sorted.
//! The set's list (`gathered.v1.tsv`: run, shard, rows, files) says what
//! was gathered; a run already there is not read again (unless forced).

use std::fs::File;
use std::path::{Path, PathBuf};

use arrow_array::{
    Array, ArrayRef, RecordBatch, StringArray, TimestampMillisecondArray, UInt32Array,
};
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::errors::ParquetError;

use super::table::{schema, writer_properties};

/// Most rows merged and sorted at once.
pub const PART_ROWS: usize = 1 << 20;
/// The set's list of what it holds.
pub const LIST_FILE: &str = "gathered.v1.tsv";

/// The index files of one run to gather.
#[derive(Debug, Clone)]
pub struct RunFiles {
    /// The run's ID.
    pub id: String,
    /// Its shard, in a sharded crawl.
    pub shard: Option<u32>,
    /// Its index files (local copies).
    pub files: Vec<PathBuf>,
}

impl RunFiles {
    /// `RUN` or `RUN-sJJJ`: the start of its files' names.
    pub fn stem(&self) -> String {
        match self.shard {
            Some(j) => format!("{}-s{j:03}", self.id),
            None => self.id.clone(),
        }
    }
}

/// A file of the set, written.
#[derive(Debug, Clone)]
pub struct Part {
    /// Where it was written.
    pub path: PathBuf,
    /// Its rows.
    pub rows: u64,
}

/// Reads every row of `path` into batches, checking its columns are the
/// table's.
fn read_all(path: &Path) -> Result<Vec<RecordBatch>, ParquetError> {
    let file = File::open(path).map_err(|e| ParquetError::External(Box::new(e)))?;
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)?
        .with_batch_size(64 * 1024)
        .build()?;
    let want = schema();
    let mut out = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|e| ParquetError::External(Box::new(e)))?;
        if batch.schema().fields() != want.fields() {
            return Err(ParquetError::General(format!(
                "{}: not an index file of this version (its columns differ); write it again \
                 with `segmenter research --force`",
                path.display()
            )));
        }
        out.push(
            batch
                .with_schema(want.clone())
                .map_err(|e| ParquetError::External(Box::new(e)))?,
        );
    }
    Ok(out)
}

/// Sorts `batch` by subset, then `url_surtkey`, then `fetch_time`.
fn sorted(batch: &RecordBatch) -> Result<RecordBatch, ParquetError> {
    let column = |name: &str| -> Result<&ArrayRef, ParquetError> {
        batch
            .column_by_name(name)
            .ok_or_else(|| ParquetError::General(format!("no column {name}")))
    };
    let strings = |name: &str| -> Result<&StringArray, ParquetError> {
        column(name)?
            .as_any()
            .downcast_ref::<StringArray>()
            .ok_or_else(|| ParquetError::General(format!("column {name} is not text")))
    };
    let subset = strings("subset")?;
    let key = strings("url_surtkey")?;
    let time = column("fetch_time")?
        .as_any()
        .downcast_ref::<TimestampMillisecondArray>()
        .ok_or_else(|| ParquetError::General("column fetch_time is not a time".into()))?;
    let mut order: Vec<u32> = (0..batch.num_rows() as u32).collect();
    order.sort_by(|&a, &b| {
        let (a, b) = (a as usize, b as usize);
        (subset.value(a), key.value(a), time.value(a)).cmp(&(
            subset.value(b),
            key.value(b),
            time.value(b),
        ))
    });
    let indices = UInt32Array::from(order);
    Ok(arrow_select::take::take_record_batch(batch, &indices)?)
}

/// The runs of rows of one subset in a batch sorted by subset.
fn subset_ranges(batch: &RecordBatch) -> Vec<(String, usize, usize)> {
    let Some(subset) = batch
        .column_by_name("subset")
        .and_then(|c| c.as_any().downcast_ref::<StringArray>())
    else {
        return Vec::new();
    };
    let mut out: Vec<(String, usize, usize)> = Vec::new();
    for i in 0..subset.len() {
        let s = subset.value(i);
        match out.last_mut() {
            Some((name, _, end)) if name == s => *end = i + 1,
            _ => out.push((s.to_string(), i, i + 1)),
        }
    }
    out
}

/// Merges the index files of `run` into files of the set in `dir` (one per
/// subset and part of at most [`PART_ROWS`] rows), each written under a
/// temporary name and renamed into place.
pub fn gather_run(run: &RunFiles, dir: &Path) -> Result<Vec<Part>, ParquetError> {
    let mut parts = Vec::new();
    let mut pending: Vec<RecordBatch> = Vec::new();
    let mut rows = 0;
    let mut part_no = 0;
    for (i, file) in run.files.iter().enumerate() {
        for batch in read_all(file)? {
            rows += batch.num_rows();
            pending.push(batch);
        }
        let last = i + 1 == run.files.len();
        if rows >= PART_ROWS || (last && rows > 0) {
            let merged = arrow_select::concat::concat_batches(&schema(), &pending)?;
            pending.clear();
            rows = 0;
            let merged = sorted(&merged)?;
            for (subset, start, end) in subset_ranges(&merged) {
                let suffix = if part_no == 0 && last {
                    String::new()
                } else {
                    format!("-p{part_no:02}")
                };
                let name = format!("{}-{subset}{suffix}.parquet", run.stem());
                let path = dir.join(name);
                write_part(&path, &merged.slice(start, end - start))?;
                parts.push(Part {
                    path,
                    rows: (end - start) as u64,
                });
            }
            part_no += 1;
        }
    }
    Ok(parts)
}

fn write_part(path: &Path, batch: &RecordBatch) -> Result<(), ParquetError> {
    let io = |e: std::io::Error| ParquetError::External(Box::new(e));
    let file = common::atomic::AtomicFile::create(path).map_err(io)?;
    let mut writer = ArrowWriter::try_new(file, schema(), Some(writer_properties()))?;
    writer.write(batch)?;
    writer.into_inner()?.commit().map_err(io)
}

/// The runs the set in `dir` holds (run ID and shard), from its list.
pub fn gathered(dir: &Path) -> std::io::Result<std::collections::HashSet<(String, Option<u32>)>> {
    let text = match std::fs::read_to_string(dir.join(LIST_FILE)) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e),
    };
    Ok(text
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut f = l.split('\t');
            let id = f.next()?.to_string();
            let shard = f.next()?;
            Some((id, shard.parse().ok()))
        })
        .collect())
}

/// Records in the set's list that `run` was gathered into `files` (names,
/// or object URLs), `rows` rows; synced.
pub fn record_gathered(
    dir: &Path,
    run: &RunFiles,
    rows: u64,
    files: &[String],
) -> std::io::Result<()> {
    use std::io::Write as _;
    let path = dir.join(LIST_FILE);
    let new = !path.exists();
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)?;
    let mut line = String::new();
    if new {
        line.push_str("# gathered v1: run shard rows files\n");
    }
    let shard = run.shard.map_or("-".to_string(), |j| j.to_string());
    line.push_str(&format!(
        "{}\t{shard}\t{rows}\t{}\n",
        run.id,
        files.join(" ")
    ));
    f.write_all(line.as_bytes())?;
    f.sync_all()
}
