//! A crawl's WARC files, chosen by round (`--rounds`, [`Rounds`]), each
//! with its CDXJ index, and the merge of those indexes into one sorted
//! index: what `segmenter index`, `segmenter wacz` and the research outputs
//! read.
//!
//! The fetcher writes each WARC file's index beside it when it closes the
//! file ([`common::warc::cdxj`]). [`indexed_warcs`] takes the complete
//! fetched runs (all, or the rounds asked for), checks that each of their
//! WARC files has an index at least as new as itself, and builds those
//! that have none (a crawl made before the indexes, a file repaired since)
//! by reading the file. [`merge_warc_indexes`] merges them into one sorted
//! file: a k-way merge of sorted files, one line of each in memory (in
//! passes of at most [`FAN_IN`] files). A sharded crawl's runs are every
//! shard's (`shards/JJJ/fetched/`).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use common::crawldir::CrawlDir;
use common::runlog::RunLog;
use common::warc::cdxj;

use crate::error::Error;

/// Files merged at once (each holds a read buffer and a file handle).
const FAN_IN: usize = 128;

/// Which fetched runs a command takes: all, or those whose ID is in
/// `FIRST..LAST` (both included; `00003` alone is one run, `..00007` and
/// `00003..` are open ranges; a partitioned run `00004-p02` counts as
/// round 00004).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rounds {
    first: Option<u64>,
    last: Option<u64>,
}

impl Rounds {
    /// Parses `FIRST..LAST`, `FIRST..`, `..LAST` or `ID`.
    pub fn parse(text: &str) -> Result<Rounds, String> {
        let number = |s: &str| -> Result<Option<u64>, String> {
            if s.is_empty() {
                return Ok(None);
            }
            s.parse().map(Some).map_err(|_| {
                format!("--rounds {text}: {s:?} is not a round number (like 00003 or 3)")
            })
        };
        let (first, last) = match text.split_once("..") {
            Some((a, b)) => (number(a)?, number(b)?),
            None => {
                let n = number(text)?;
                (n, n)
            }
        };
        if let (Some(a), Some(b)) = (first, last)
            && a > b
        {
            return Err(format!(
                "--rounds {text}: the first round is after the last"
            ));
        }
        Ok(Rounds { first, last })
    }

    /// Whether the run `id` is one of those taken.
    pub fn contains(&self, id: &str) -> bool {
        let Some(n) = id.split('-').next().and_then(|n| n.parse::<u64>().ok()) else {
            return false;
        };
        self.first.is_none_or(|f| n >= f) && self.last.is_none_or(|l| n <= l)
    }
}

/// A WARC file of the crawl and its (checked) index.
#[derive(Debug, Clone)]
pub struct IndexedWarc {
    /// The WARC file (a temporary copy, of the same name, of a file
    /// uploaded to the WARC store).
    pub warc: PathBuf,
    /// Its CDXJ index, beside it.
    pub index: PathBuf,
    /// Its name in a package and in the merged index (`filename`): its
    /// file name, unless a file of another shard has the same one (see
    /// [`indexed_warcs`]).
    pub name: String,
    /// The temporary copies, removed when the last clone is dropped.
    _copies: Option<std::sync::Arc<[common::store::Readable; 2]>>,
}

impl IndexedWarc {
    /// The file's own name, when [`IndexedWarc::name`] is another.
    fn renamed_from(&self) -> Option<String> {
        let own = self.warc.file_name()?.to_string_lossy().into_owned();
        (own != self.name).then_some(own)
    }
}

/// The WARC files of the complete runs `rounds` takes, oldest run first,
/// each with an up-to-date index (built where missing or older than its
/// file; each build is logged); of every shard in turn for a sharded
/// crawl (`shards/JJJ/fetched/`). An error if no run is taken.
///
/// Names stay as the fetcher wrote them (`crawl-ID-TIMESTAMP-SERIAL-HOST`).
/// In a sharded crawl two shards' runs have the same IDs; a name taken
/// twice (two tasks that opened a file of the same run ID in the same
/// millisecond on one machine) is told apart by `-sJJJ`, the shard, before
/// its `.warc.gz`, in the package and the merged index.
pub fn indexed_warcs(
    crawl: &CrawlDir,
    rounds: &Rounds,
    log: &RunLog,
) -> Result<Vec<IndexedWarc>, Error> {
    let shards = common::shards::Shards::load(crawl.root())?;
    let mut out = Vec::new();
    let (mut runs, mut built) = (0, 0);
    let mut names = std::collections::HashSet::new();
    for (j, view) in shards.views(crawl).iter().enumerate() {
        let ids: Vec<String> = view
            .completed_runs()
            .map_err(Error::io(view.fetched_root()))?
            .into_iter()
            .filter(|id| rounds.contains(id))
            .collect();
        runs += ids.len();
        for id in &ids {
            for warc in warc_files(&view.fetched_dir(id))? {
                let own = warc
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let name = if names.contains(&own) {
                    shard_name(&own, j)
                } else {
                    own
                };
                names.insert(name.clone());
                if !warc.exists() {
                    out.push(uploaded(&warc, name)?);
                    continue;
                }
                let index = cdxj::index_path(&warc);
                if !fresh(&warc, &index) {
                    build_index(&warc, &index, log)?;
                    built += 1;
                }
                out.push(IndexedWarc {
                    warc,
                    index,
                    name,
                    _copies: None,
                });
            }
        }
    }
    if runs == 0 {
        return Err(Error::Usage(format!(
            "{}: no complete fetched run (fetched/ID/DONE{}) in the rounds asked for; \
             `segmenter status` lists the crawl's runs",
            crawl.root().display(),
            if shards.is_sharded() {
                ", in any shard's shards/JJJ/"
            } else {
                ""
            }
        )));
    }
    log.info(format!(
        "{} WARC files in {runs} runs; {built} indexes built, the others as the fetcher wrote them",
        out.len(),
    ));
    Ok(out)
}

/// `NAME-sJJJ.warc.gz` for `NAME.warc.gz` of shard `j` (`.warc` alike).
fn shard_name(name: &str, j: usize) -> String {
    let (stem, ext) = match name.strip_suffix(".warc.gz") {
        Some(stem) => (stem, ".warc.gz"),
        None => (name.strip_suffix(".warc").unwrap_or(name), ".warc"),
    };
    format!("{stem}-s{j:03}{ext}")
}

/// Builds the index of `warc` (it had none, or an older one).
fn build_index(warc: &Path, index: &Path, log: &RunLog) -> Result<(), Error> {
    let mut lines = cdxj::index_warc(warc).map_err(|e| Error::Io {
        path: warc.to_path_buf(),
        source: io::Error::other(e.to_string()),
    })?;
    cdxj::write_index(index, &mut lines).map_err(Error::io(index))?;
    log.info(format!(
        "{}: index built ({} captures): the file had none, or a newer file",
        index.display(),
        lines.len()
    ));
    Ok(())
}

/// A WARC file uploaded to the WARC store, and its index (uploaded with
/// it), as temporary copies.
fn uploaded(warc: &Path, name: String) -> Result<IndexedWarc, Error> {
    let copy = |p: &Path| common::store::readable(p).map_err(Error::io(p));
    let w = copy(warc)?;
    let i = copy(&cdxj::index_path(warc))?;
    Ok(IndexedWarc {
        warc: w.path().to_path_buf(),
        index: i.path().to_path_buf(),
        name,
        _copies: Some(std::sync::Arc::new([w, i])),
    })
}

/// The `.warc.gz` and `.warc` files of a run directory, by name, with
/// those uploaded to the WARC store.
fn warc_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(Error::io(dir))? {
        let path = entry.map_err(Error::io(dir))?.path();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if (name.ends_with(".warc.gz") || name.ends_with(".warc")) && !name.starts_with('.') {
            files.push(path);
        }
    }
    common::store::run_warcs(dir, files).map_err(Error::io(dir))
}

/// True if `index` exists and was written after `warc` last changed.
fn fresh(warc: &Path, index: &Path) -> bool {
    let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified());
    match (modified(warc), modified(index)) {
        (Ok(w), Ok(i)) => i >= w,
        _ => false,
    }
}

/// Merges the indexes of `warcs` into `out`, in order, each capture's
/// `filename` the file's [`IndexedWarc::name`]; returns the lines written.
pub fn merge_warc_indexes(
    warcs: &[IndexedWarc],
    scratch: &Path,
    out: &mut impl Write,
) -> Result<u64, Error> {
    let inputs: Vec<Input> = warcs
        .iter()
        .map(|w| Input {
            path: w.index.clone(),
            rename: w.renamed_from().map(|own| {
                (
                    format!("\"filename\": \"{own}\""),
                    format!("\"filename\": \"{}\"", w.name),
                )
            }),
        })
        .collect();
    merge_inputs(inputs, scratch, out)
}

/// A sorted file to merge, and the text its lines change on the way
/// (`"filename": "OLD"` to `"filename": "NEW"`), if any: the JSON's last
/// field, so the order of one file's lines stays.
struct Input {
    path: PathBuf,
    rename: Option<(String, String)>,
}

/// Merges the sorted `inputs` into `out`, in order; returns the lines
/// written. More than [`FAN_IN`] files are merged in passes through
/// temporary files in `scratch`.
fn merge_inputs(
    mut inputs: Vec<Input>,
    scratch: &Path,
    out: &mut impl Write,
) -> Result<u64, Error> {
    let mut temporary = Vec::new();
    while inputs.len() > FAN_IN {
        let mut next = Vec::new();
        for (n, group) in inputs.chunks(FAN_IN).enumerate() {
            let path = scratch.join(format!(".index-merge-{}-{n}.cdxj", temporary.len()));
            let mut w = BufWriter::new(File::create(&path).map_err(Error::io(&path))?);
            merge_group(group, &mut w)?;
            w.flush().map_err(Error::io(&path))?;
            temporary.push(path.clone());
            next.push(Input { path, rename: None });
        }
        inputs = next;
    }
    let lines = merge_group(&inputs, out);
    for t in &temporary {
        let _ = std::fs::remove_file(t);
    }
    lines
}

fn merge_group(inputs: &[Input], out: &mut impl Write) -> Result<u64, Error> {
    let mut readers = Vec::with_capacity(inputs.len());
    let mut heap = BinaryHeap::new();
    let next_line = |r: &mut BufReader<File>, i: usize| -> Result<Option<String>, Error> {
        let mut line = String::new();
        if r.read_line(&mut line).map_err(Error::io(&inputs[i].path))? == 0 {
            return Ok(None);
        }
        if let Some((old, new)) = &inputs[i].rename {
            line = line.replacen(old.as_str(), new, 1);
        }
        Ok(Some(line))
    };
    for (i, input) in inputs.iter().enumerate() {
        let p = &input.path;
        let mut r = BufReader::with_capacity(1 << 16, File::open(p).map_err(Error::io(p))?);
        if let Some(line) = next_line(&mut r, i)? {
            heap.push(Reverse((line, i)));
        }
        readers.push(r);
    }
    let mut written = 0;
    while let Some(Reverse((mut line, i))) = heap.pop() {
        if !line.ends_with('\n') {
            line.push('\n');
        }
        out.write_all(line.as_bytes()).map_err(|e| Error::Io {
            path: PathBuf::from("the merged index"),
            source: e,
        })?;
        written += 1;
        if let Some(line) = next_line(&mut readers[i], i)? {
            heap.push(Reverse((line, i)));
        }
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_parse_ranges_and_single_ids() {
        let r = Rounds::parse("00003..00005").unwrap();
        assert!(!r.contains("00002"));
        assert!(r.contains("00003") && r.contains("00004-p02") && r.contains("00005"));
        assert!(!r.contains("00006"));
        assert!(Rounds::parse("7").unwrap().contains("00007"));
        assert!(Rounds::parse("..2").unwrap().contains("00001"));
        assert!(Rounds::parse("2..").unwrap().contains("00009"));
        assert!(Rounds::default().contains("00001"));
        assert!(Rounds::parse("5..3").is_err());
        assert!(Rounds::parse("x").is_err());
    }

    #[test]
    fn a_shards_name_goes_before_the_extension() {
        assert_eq!(
            shard_name("crawl-00003-20260101-00000-h.warc.gz", 2),
            "crawl-00003-20260101-00000-h-s002.warc.gz"
        );
        assert_eq!(shard_name("x.warc", 11), "x-s011.warc");
    }

    #[test]
    fn merging_keeps_every_line_in_order() {
        let dir = common::testutil::TempDir::new("index-merge");
        let mut paths = Vec::new();
        for f in 0..300 {
            let p = dir.path().join(format!("{f}.cdxj"));
            let mut lines: Vec<String> = (0..5)
                .map(|i| format!("k{:04} {f}", (i * 300 + f) % 1000))
                .collect();
            lines.sort();
            std::fs::write(&p, lines.join("\n") + "\n").unwrap();
            paths.push(p);
        }
        let mut out = Vec::new();
        let inputs = paths
            .into_iter()
            .map(|path| Input { path, rename: None })
            .collect();
        assert_eq!(merge_inputs(inputs, dir.path(), &mut out).unwrap(), 1500);
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 1500);
        assert!(lines.windows(2).all(|w| w[0] <= w[1]));
    }
}
