//! The second half of a sharded crawl's round, after the maps
//! ([`crate::round::map`]): `segmenter reduce CRAWL --shard J` reads, from
//! every shard I, the `mapped/to-JJJ` file of every mapped run it has not
//! consumed ([`crate::state::mapped`]), drops the URLs shard J's
//! `seen.bloom` holds, and does the rest of a `run` round on shard J's
//! view: backlog, due refetches, history, caps, plan, sort, segments;
//! committed all or nothing as `run` commits. The map outputs take the
//! place of the scan's output ([`stage_mapped`]); the rest is the round's.

use std::path::Path;
use std::sync::Arc;

use crate::error::Error;
use crate::round::candidates::split_key;
use crate::round::counts::Counts;
use crate::round::scan::ScanOutput;
use crate::round::seen::Seen;
use crate::round::seen::rescue::Suspects;
use crate::round::sort::{Sorted, Sorter, SpillDir, SpillReader, SpillWriter};
use crate::state::mapped::{COUNTS_NAME, COUNTS_VERSION, Mapped};

/// Stages the map outputs into the round's sort: the candidates not in
/// `seen` (filtered in this pass, before anything is inserted, so the
/// result does not depend on timing), those it holds as suspects for the
/// rescue (when `rescue`), the observations as they are; copies in the
/// round's spill directory, since the merge removes what it merged. The
/// counts of the maps of the shard's own runs (`counts.json`) are added to
/// the round's (but `dupes` and `candidates`, which the reduce counts);
/// returns those runs (a map older than `counts.json` has none).
pub fn stage_mapped(
    mapped: &Mapped,
    seen: &Seen,
    rescue: bool,
    spills: &Arc<SpillDir>,
    memory: u64,
    scanned: &mut ScanOutput,
) -> Result<Vec<String>, Error> {
    let mut counted = Vec::new();
    for path in &mapped.observed {
        let dir = path.parent().unwrap_or(Path::new("."));
        if let Some(mut c) = read_counts(&dir.join(COUNTS_NAME))? {
            // The reduce counts its own seen check and candidates.
            (c.dupes, c.candidates) = (0, 0);
            scanned.counts += &c;
            counted.push(run_of(dir));
        }
    }
    let counts = &mut scanned.counts;
    let mut suspects = match rescue {
        true => Some(Suspects::new(Sorter::new(
            spills.clone(),
            (memory / 8) as usize,
        )?)),
        false => None,
    };
    let mut files = Vec::new();
    for path in &mapped.candidates {
        let out = spills.new_path();
        let mut r = SpillReader::open(path)?;
        let mut w = SpillWriter::create(&out)?;
        while r.advance()? {
            let (key, meta, carried) = r.record();
            let parts = split_key(key);
            if !meta.exempt
                && let Some(k) = parts
                && seen.contains(k.hash)
            {
                counts.dupes += 1;
                if let Some(s) = &mut suspects {
                    s.add(k.host, k.url, k.hash, *meta)?;
                }
                continue;
            }
            counts.candidates += 1;
            w.write(key, meta, carried)?;
        }
        w.finish()?;
        files.push(out);
    }
    scanned.sorted.push(Sorted::of_spills(files));
    if let Some(s) = suspects {
        scanned.suspects.push(s.finish()?);
    }
    let mut copies = Vec::new();
    for path in &mapped.observed {
        let out = spills.new_path();
        std::fs::copy(path, &out).map_err(Error::io(&out))?;
        copies.push(out);
    }
    scanned.observed.push(Sorted::of_spills(copies));
    Ok(counted)
}

/// The run ID of `fetched/ID/mapped/`.
fn run_of(mapped_dir: &Path) -> String {
    mapped_dir
        .parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Reads a map's `counts.json`; `None` if the map predates it (no file).
/// A file that cannot be read is an error that says what to do.
pub fn read_counts(path: &Path) -> Result<Option<Counts>, Error> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(path)(e)),
    };
    let bad = |why: String| Error::Io {
        path: path.to_path_buf(),
        source: std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "{why}. Repair: delete the run's mapped/ directory and map the run again \
                 (`segmenter map CRAWL --shard I`)"
            ),
        ),
    };
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| bad(format!("not a map's counts ({e})")))?;
    match v.get("version").and_then(serde_json::Value::as_u64) {
        Some(n) if n <= COUNTS_VERSION => {}
        n => {
            return Err(bad(format!(
                "version {n:?}: this segmenter reads up to version {COUNTS_VERSION}"
            )));
        }
    }
    let counts = serde_json::from_value(v.get("counts").cloned().unwrap_or_default())
        .map_err(|e| bad(format!("not a map's counts ({e})")))?;
    Ok(Some(counts))
}
