//! The history kept in generations (format version 5): a round writes only
//! the entries it changed, as a small sorted file, instead of the whole
//! history.
//!
//! `CRAWL/history.v5.list` names the generation files, oldest first, each
//! with its count of entries:
//!
//! ```text
//! # history v5 generations
//! history.v5.000001.tsv.zst  1048576
//! history.v5.000009.tsv.zst  20480
//! history.v5.000012.tsv.zst  9120
//! # end 3 xxh3 5f0c9e1b7a3d2c44
//! ```
//!
//! (a tab between name and count; the end line counts the generations and
//! hashes their lines, as the end line of a history file does its
//! entries).
//!
//! Each generation (`history.v5.NNNNNN.tsv.zst`) is a history file of its
//! own (header `# history v5`, the columns of version 4, sorted, with its
//! counted and hashed end line). The history is the generations read side
//! by side in that order, a URL's entry in a later generation replacing
//! its entries in the earlier ones ([`HistoryReader`]). A round's merge
//! writes one new generation holding the entries it changed: the URLs it
//! observed, those it handed out as due (their due time moved on), those
//! the schedule's bounds or a host rule changed ([`HistoryOut`]).
//!
//! Compaction is size-tiered ([`compaction_tail`]): when the newest
//! generations together hold at least half as many entries as the one
//! before them, they are merged with it into one file; so generations grow
//! geometrically from newest to oldest, there are about log2(history /
//! round) of them, and an entry is rewritten that many times over the
//! crawl instead of once a round. At most [`MAX_GENERATIONS`] are kept.
//!
//! Crash safety: generation files are never changed once written, and a
//! new one has a number no file of the crawl directory has. The round
//! stages its new generations and the new list; the commit
//! (`crate::round::commit`) moves the generations in first, then the list
//! (the one it replaces kept as `history.v5.list.prev`), then deletes the
//! generations no list names ([`collect_garbage`]: any file named
//! `history.v5.list*` counts, so a list moved aside keeps its generations).
//! At every moment the list in place names files that exist.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use super::{Entry, FileReader, HistoryError, HistoryWriter, SavedSummary, SummaryCounter};
use crate::round::backlog::host_key;

/// The list's file name in the crawl directory.
pub const LIST_FILE_NAME: &str = "history.v5.list";
/// A file that asks the next round to read the consumed runs still in
/// `fetched/` for the history too, under the entries it holds (left by
/// `segmenter repair` when it salvaged a history that lost a generation;
/// removed once a round has done so).
pub const REBUILD_FILE_NAME: &str = "history.v5.rebuild";
/// The list's first line (also how a list is told from a history file).
const LIST_HEADER: &str = "# history v5 generations";
const GENERATION_PREFIX: &str = "history.v5.";
const GENERATION_SUFFIX: &str = ".tsv.zst";
/// The newest generations are merged into the one before them when they
/// hold at least 1/`TIER_RATIO` of its entries.
pub const TIER_RATIO: u64 = 2;
/// Generations kept at most (the history is read from all at once).
pub const MAX_GENERATIONS: usize = 12;

/// The file name of generation `number`.
pub fn generation_name(number: u64) -> String {
    format!("{GENERATION_PREFIX}{number:06}{GENERATION_SUFFIX}")
}

/// The number of the generation file named `name`, if it is one.
pub fn generation_number(name: &str) -> Option<u64> {
    let digits = name
        .strip_prefix(GENERATION_PREFIX)?
        .strip_suffix(GENERATION_SUFFIX)?;
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
        .then(|| digits.parse().ok())
        .flatten()
}

/// One generation of the history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generation {
    /// Its file name.
    pub name: String,
    /// Entries in it.
    pub entries: u64,
}

/// The generations of a history, oldest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GenerationList {
    /// Oldest first.
    pub generations: Vec<Generation>,
}

impl GenerationList {
    /// True if the file at `path` is a list (not a history file of its own).
    pub fn is_list(path: &Path) -> io::Result<bool> {
        let mut start = [0u8; LIST_HEADER.len()];
        let mut f = File::open(path)?;
        let mut got = 0;
        while got < start.len() {
            match f.read(&mut start[got..])? {
                0 => break,
                n => got += n,
            }
        }
        Ok(&start[..got] == LIST_HEADER.as_bytes())
    }

    /// Reads the list at `path`.
    pub fn read(path: &Path) -> Result<GenerationList, HistoryError> {
        let text = std::fs::read_to_string(path).map_err(|source| HistoryError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        GenerationList::parse(&text).map_err(|problem| HistoryError::Damaged {
            path: path.to_path_buf(),
            problem,
        })
    }

    /// Parses the text of a list.
    pub fn parse(text: &str) -> Result<GenerationList, String> {
        let mut lines = text.lines();
        if lines.next() != Some(LIST_HEADER) {
            return Err(format!("line 1 is not `{LIST_HEADER}`"));
        }
        let mut list = GenerationList::default();
        let mut hash = xxhash_rust::xxh3::Xxh3::new();
        for (i, line) in lines.enumerate() {
            if line.starts_with("# end ") {
                let expected = end_line(list.generations.len(), &hash);
                if line != expected {
                    return Err(format!(
                        "the end line `{line}` does not match the {} generations listed \
                         (`{expected}`)",
                        list.generations.len()
                    ));
                }
                if !text.ends_with(&format!("{line}\n")) {
                    return Err(format!("line {}: text after the end line", i + 3));
                }
                return Ok(list);
            }
            let (name, entries) = line.split_once('\t').unwrap_or((line, ""));
            let (Some(number), Ok(entries)) = (generation_number(name), entries.parse::<u64>())
            else {
                return Err(format!(
                    "line {}: not `history.v5.NUMBER.tsv.zst TAB ENTRIES`: {line:?}",
                    i + 2
                ));
            };
            if list
                .generations
                .last()
                .is_some_and(|g| generation_number(&g.name) >= Some(number))
            {
                return Err(format!("line {}: {name} is out of order", i + 2));
            }
            list.generations.push(Generation {
                name: name.to_string(),
                entries,
            });
            hash.update(line.as_bytes());
            hash.update(b"\n");
        }
        Err("no end line (the file is cut)".into())
    }

    /// The list's text.
    pub fn encode(&self) -> String {
        let mut text = format!("{LIST_HEADER}\n");
        let mut hash = xxhash_rust::xxh3::Xxh3::new();
        for g in &self.generations {
            let line = format!("{}\t{}\n", g.name, g.entries);
            hash.update(line.as_bytes());
            text.push_str(&line);
        }
        text.push_str(&end_line(self.generations.len(), &hash));
        text.push('\n');
        text
    }

    /// Writes the list to `path`, atomically.
    pub fn write(&self, path: &Path) -> io::Result<()> {
        common::atomic::write_atomic(path, self.encode().as_bytes())
    }

    /// Where each generation of the list at `list` is, with the entries
    /// the list records for it.
    pub fn paths(&self, list: &Path) -> Vec<(PathBuf, u64)> {
        (self.generations.iter())
            .map(|g| (generation_path(list, &g.name), g.entries))
            .collect()
    }

    /// The highest generation number listed.
    fn last_number(&self) -> u64 {
        self.generations
            .iter()
            .filter_map(|g| generation_number(&g.name))
            .max()
            .unwrap_or(0)
    }
}

/// The list's end line: the generations listed and the xxh3 of their lines.
fn end_line(count: usize, hash: &xxhash_rust::xxh3::Xxh3) -> String {
    format!("# end {count} xxh3 {:016x}", hash.digest())
}

/// Where the generation `name` of the list at `list` is: beside the list,
/// or, for a list staged by a round, in the crawl directory (the
/// generations the round did not write, or already moved in by a commit).
pub fn generation_path(list: &Path, name: &str) -> PathBuf {
    let dir = list.parent().unwrap_or(Path::new("."));
    let beside = dir.join(name);
    let staged = dir
        .file_name()
        .is_some_and(|n| n == common::crawldir::SEGMENTER_STAGING_DIR);
    match dir.parent() {
        Some(root) if staged && !beside.exists() => root.join(name),
        _ => beside,
    }
}

/// How many of the newest generations (`entries`, oldest first) to merge
/// into one: 1 (none merged) unless the newest ones hold at least
/// 1/[`TIER_RATIO`] of the entries of the one before them, or there are
/// more than [`MAX_GENERATIONS`].
pub fn compaction_tail(entries: &[u64]) -> usize {
    let n = entries.len();
    if n == 0 {
        return 0;
    }
    let (mut take, mut sum) = (1, entries[n - 1]);
    while take < n {
        let before = entries[n - 1 - take];
        if sum.saturating_mul(TIER_RATIO) < before && n - take < MAX_GENERATIONS {
            break;
        }
        sum = sum.saturating_add(before);
        take += 1;
    }
    take
}

/// One generation file as [`HistoryReader`] reads it: its next entry and
/// that entry's `domain TAB host TAB` prefix.
struct Source {
    reader: FileReader,
    entry: Entry,
    prefix: Vec<u8>,
    host: String,
    have: bool,
    /// The entries the list records for it.
    listed: u64,
}

impl Source {
    fn advance(&mut self) -> Result<(), HistoryError> {
        self.have = self.reader.read_into(&mut self.entry)?;
        if !self.have && self.reader.entries_read() != self.listed {
            // Sound in itself, but not the file the list names: another
            // generation's file put in its place.
            return Err(HistoryError::Damaged {
                path: self.reader.path().to_path_buf(),
                problem: format!(
                    "it holds {} entries where its list records {} (is it another \
                     generation's file put in its place?)",
                    self.reader.entries_read(),
                    self.listed
                ),
            });
        }
        if self.have && self.entry.host != self.host {
            host_key(&self.entry.host, &mut self.prefix);
            self.host.clone_from(&self.entry.host);
        }
        Ok(())
    }

    fn key(&self) -> (&[u8], &str) {
        (&self.prefix, &self.entry.url)
    }
}

/// Generations read side by side, in the history's order: for each URL,
/// the entry of the newest generation that holds it.
struct MergedReader {
    /// Oldest first.
    sources: Vec<Source>,
}

impl MergedReader {
    /// Opens the generation files `paths` (oldest first), each with the
    /// entries its list records, checked at its end.
    fn open(paths: &[(PathBuf, u64)]) -> Result<MergedReader, HistoryError> {
        let mut sources = Vec::with_capacity(paths.len());
        for (path, listed) in paths {
            let Some(reader) = FileReader::open(path)? else {
                return Err(HistoryError::Damaged {
                    path: path.clone(),
                    problem: "a generation of the history is missing".into(),
                });
            };
            let mut s = Source {
                reader,
                entry: Entry::default(),
                prefix: Vec::new(),
                host: String::new(),
                have: false,
                listed: *listed,
            };
            s.advance()?;
            sources.push(s);
        }
        Ok(MergedReader { sources })
    }

    fn read_into(&mut self, e: &mut Entry) -> Result<bool, HistoryError> {
        // The smallest key; of equal keys, the newest generation's.
        let mut best: Option<usize> = None;
        for (i, s) in self.sources.iter().enumerate() {
            if s.have && best.is_none_or(|b| s.key() <= self.sources[b].key()) {
                best = Some(i);
            }
        }
        let Some(best) = best else {
            return Ok(false);
        };
        // The older entries of the same URL are passed over.
        let (older, newest) = self.sources.split_at_mut(best);
        for s in older {
            if s.have && s.key() == newest[0].key() {
                s.advance()?;
            }
        }
        let s = &mut self.sources[best];
        std::mem::swap(e, &mut s.entry);
        s.advance()?;
        Ok(true)
    }
}

enum Inner {
    File(Box<FileReader>),
    Merged(MergedReader),
}

/// Reads the fetch history entry by entry, in its order: the generations
/// of a list merged (a later generation's entry of a URL wins), or one
/// history file (a generation, a history of version 4 or before). A
/// damaged file is an error, at the latest at its end.
pub struct HistoryReader {
    inner: Inner,
    list: Option<GenerationList>,
    /// The entry [`HistoryReader::read_host_url`] reads into.
    scratch: Entry,
}

impl HistoryReader {
    /// Opens `path`, a list or a history file; `None` if there is no such
    /// file.
    pub fn open(path: &Path) -> Result<Option<HistoryReader>, HistoryError> {
        let is_list = match GenerationList::is_list(path) {
            Ok(is) => is,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(HistoryError::Io {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        if !is_list {
            return Ok(FileReader::open(path)?.map(|r| HistoryReader {
                inner: Inner::File(Box::new(r)),
                list: None,
                scratch: Entry::default(),
            }));
        }
        let list = GenerationList::read(path)?;
        let paths = list.paths(path);
        Ok(Some(HistoryReader {
            inner: Inner::Merged(MergedReader::open(&paths)?),
            list: Some(list),
            scratch: Entry::default(),
        }))
    }

    /// Opens the history of the crawl directory `root`: the current
    /// version, or else an older one ([`super::current_path`]); `None` if
    /// there is none.
    pub fn open_in(root: &Path) -> Result<Option<HistoryReader>, HistoryError> {
        HistoryReader::open(&super::current_path(root))
    }

    /// The generations read, if the history is kept in generations.
    pub fn generations(&self) -> Option<&GenerationList> {
        self.list.as_ref()
    }

    /// The next entry; `None` at the end.
    pub fn next_entry(&mut self) -> Result<Option<Entry>, HistoryError> {
        let mut e = Entry::default();
        Ok(self.read_into(&mut e)?.then_some(e))
    }

    /// Reads the next entry into `e` (reusing its strings); false at the
    /// end (the end lines are checked).
    pub fn read_into(&mut self, e: &mut Entry) -> Result<bool, HistoryError> {
        match &mut self.inner {
            Inner::File(r) => r.read_into(e),
            Inner::Merged(r) => r.read_into(e),
        }
    }

    /// The host and URL of the next entry (of one file, without parsing
    /// the rest of its line); `None` at the end.
    pub fn read_host_url(&mut self) -> Result<Option<(&str, &str)>, HistoryError> {
        match &mut self.inner {
            Inner::File(r) => r.read_host_url(),
            Inner::Merged(r) => {
                let e = &mut self.scratch;
                Ok(r.read_into(e)?.then_some((e.host.as_str(), e.url.as_str())))
            }
        }
    }
}

/// What a round wrote of the history.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Written {
    /// Entries of the round's new generation.
    pub entries: u64,
    /// Entries rewritten by compaction.
    pub compacted: u64,
    /// Bytes of the files written (the new generation, the compacted one).
    pub bytes: u64,
    /// Generations after the round.
    pub generations: usize,
}

/// The new history a round writes, staged: the round's generation (the
/// entries the merge changed, or, over a history of an older version or
/// none, every entry: the first generation), then compaction, the list and
/// the summary.
pub struct HistoryOut {
    list_path: PathBuf,
    /// The generations of the history read (`None`: it is written whole).
    base: Option<GenerationList>,
    writer: HistoryWriter,
    /// The number of the round's generation.
    number: u64,
}

impl HistoryOut {
    /// Stages the history at `list_path` (the crawl directory `root`'s,
    /// staged) over the generations `base` of the history read (`None`: an
    /// older version's, or none: the history is written whole).
    pub fn create(
        list_path: &Path,
        root: &Path,
        base: Option<GenerationList>,
    ) -> Result<HistoryOut, HistoryError> {
        let number = next_number(root, base.as_ref())?;
        let gen_path = generation_path_staged(list_path, number);
        Ok(HistoryOut {
            list_path: list_path.to_path_buf(),
            base,
            writer: HistoryWriter::create(&gen_path)?,
            number,
        })
    }

    /// True when every entry is written (no generations to build on).
    pub fn whole(&self) -> bool {
        self.base.is_none()
    }

    /// Appends an entry to the round's generation.
    pub fn write(&mut self, e: &Entry) -> Result<(), HistoryError> {
        self.writer.write(e)
    }

    /// Finishes the round's generation, compacts, writes the list and the
    /// summary counted by `summary` (as of `now_ms`, under the refetch
    /// bounds `bounds`).
    pub fn finish(
        self,
        now_ms: i64,
        summary: SummaryCounter,
        bounds: Option<String>,
    ) -> Result<Written, HistoryError> {
        let mut list = self.base.unwrap_or_default();
        let mut written = Written::default();
        let gen_path = self.writer.path().to_path_buf();
        if self.writer.entries() > 0 {
            written.entries = self.writer.finish()?;
            written.bytes += file_size(&gen_path);
            list.generations.push(Generation {
                name: generation_name(self.number),
                entries: written.entries,
            });
        }
        let tail = compaction_tail(
            &list
                .generations
                .iter()
                .map(|g| g.entries)
                .collect::<Vec<_>>(),
        );
        if tail > 1 {
            let at = list.generations.len() - tail;
            let paths = list.paths(&self.list_path).split_off(at);
            let number = self.number + 1;
            let out = generation_path_staged(&self.list_path, number);
            let entries = rewrite(&paths, &out)?;
            written.compacted = entries;
            written.bytes += file_size(&out);
            list.generations.truncate(at);
            list.generations.push(Generation {
                name: generation_name(number),
                entries,
            });
            // The round's own generation, merged, goes at once (the older
            // ones stay until no list names them: `collect_garbage`).
            if written.entries > 0 {
                std::fs::remove_file(&gen_path).map_err(|source| HistoryError::Io {
                    path: gen_path.clone(),
                    source,
                })?;
            }
        }
        written.generations = list.generations.len();
        let io = |source| HistoryError::Io {
            path: self.list_path.clone(),
            source,
        };
        list.write(&self.list_path).map_err(io)?;
        SavedSummary::write(&self.list_path, now_ms, summary, bounds).map_err(|source| {
            HistoryError::Io {
                path: super::summary_path(&self.list_path),
                source,
            }
        })?;
        Ok(written)
    }
}

fn file_size(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// Where a round stages generation `number`: beside its list.
fn generation_path_staged(list: &Path, number: u64) -> PathBuf {
    list.with_file_name(generation_name(number))
}

/// Merges the generation files `paths` (oldest first, each with the
/// entries its list records) into `out`; returns its entries.
pub fn rewrite(paths: &[(PathBuf, u64)], out: &Path) -> Result<u64, HistoryError> {
    let mut reader = MergedReader::open(paths)?;
    let mut writer = HistoryWriter::create(out)?;
    let mut e = Entry::default();
    while reader.read_into(&mut e)? {
        writer.write(&e)?;
    }
    writer.finish()
}

/// Reads the generation file at `path` to its end, checking it holds the
/// `entries` its list records.
pub fn check_generation(path: &Path, entries: u64) -> Result<(), HistoryError> {
    let mut reader = MergedReader::open(&[(path.to_path_buf(), entries)])?;
    let mut e = Entry::default();
    while reader.read_into(&mut e)? {}
    Ok(())
}

/// A generation number above every one the crawl directory `root` has
/// (listed, in the kept list, or a file left by a discarded round), so
/// that a new generation never takes the name of an existing file.
fn next_number(root: &Path, base: Option<&GenerationList>) -> Result<u64, HistoryError> {
    let mut last = base.map_or(0, GenerationList::last_number);
    let prev = common::crawldir::prev_path(&root.join(LIST_FILE_NAME));
    if GenerationList::is_list(&prev).unwrap_or(false)
        && let Ok(list) = GenerationList::read(&prev)
    {
        last = last.max(list.last_number());
    }
    let entries = std::fs::read_dir(root).map_err(|source| HistoryError::Io {
        path: root.to_path_buf(),
        source,
    })?;
    for e in entries.flatten() {
        if let Some(n) = e.file_name().to_str().and_then(generation_number) {
            last = last.max(n);
        }
    }
    Ok(last + 1)
}

/// The generations named by the file at `path`, whose name starts with
/// the list's: a sound list's; none for a history file of an older
/// version (a zstd frame: the `.prev` a conversion kept); `None` when it
/// is neither (a damaged list, say), so what it names is unknown.
fn listed(path: &Path) -> Option<Vec<String>> {
    const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];
    let mut start = [0u8; 4];
    File::open(path).ok()?.read_exact(&mut start).ok()?;
    if start == ZSTD_MAGIC {
        return Some(Vec::new());
    }
    let list = GenerationList::read(path).ok()?;
    Some(list.generations.into_iter().map(|g| g.name).collect())
}

/// Deletes the generation files of the crawl directory `root` that no list
/// names (merged by a compaction a round ago, or left by a discarded
/// round). Every file whose name starts with `history.v5.list` counts as a
/// list: the list, its `.prev`, one `segmenter repair` moved aside as
/// `.damaged`, one a user renamed; so a generation is kept while any of
/// them names it. Nothing is deleted when no list is in place (moved away:
/// its generations may be wanted back) or when one of those files does not
/// read as a list (what it names is unknown).
///
/// Returns what could not be done, each naming its file: a deletion that
/// fails costs only disk space, so it must not fail the commit (nor every
/// later one): the caller warns, and the next commit tries again.
pub fn collect_garbage(root: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    if !root.join(LIST_FILE_NAME).is_file() {
        return problems;
    }
    let entries = match std::fs::read_dir(root) {
        Ok(entries) => entries,
        Err(e) => {
            problems.push(format!(
                "{}: not read, so no unused history generation was deleted: {e}",
                root.display()
            ));
            return problems;
        }
    };
    let mut keep = Vec::new();
    let mut generations = Vec::new();
    for e in entries.flatten() {
        let Ok(name) = e.file_name().into_string() else {
            continue;
        };
        if name.starts_with(LIST_FILE_NAME) {
            match listed(&e.path()) {
                Some(names) => keep.extend(names),
                None => {
                    problems.push(format!(
                        "{}: does not read as a list: no unused history generation deleted; \
                         move it away or delete it",
                        e.path().display()
                    ));
                    return problems;
                }
            }
        } else if generation_number(&name).is_some() {
            generations.push((name, e.path()));
        }
    }
    for (name, path) in generations {
        if keep.contains(&name) {
            continue;
        }
        if let Err(e) = std::fs::remove_file(&path) {
            problems.push(format!(
                "{}: a history generation no list names any more, not deleted ({e}); \
                 the next round tries again, or delete it yourself",
                path.display()
            ));
        }
    }
    problems
}

/// Bytes of the history of the crawl directory `root` on disk (its
/// generations, or its one file).
pub fn bytes_on_disk(root: &Path) -> u64 {
    let path = super::current_path(root);
    match GenerationList::read(&path) {
        Ok(list) => (list.generations.iter())
            .map(|g| file_size(&generation_path(&path, &g.name)))
            .sum(),
        Err(_) => file_size(&path),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// An entry of `url` (on its host) written in round `round`.
    fn entry(url: &str, round: u32) -> Entry {
        let host = url.split('/').nth(2).unwrap().to_string();
        Entry {
            host,
            url: url.to_string(),
            hops: round,
            fetched_ms: 1_700_000_000_000 + i64::from(round),
            status: "200".into(),
            interval_s: 100,
            due_ms: 1_700_000_100_000,
            ..Entry::default()
        }
    }

    /// The entries in the history's order (domain, host, URL).
    fn sorted(mut entries: Vec<Entry>) -> Vec<Entry> {
        let key = |e: &Entry| {
            let mut prefix = Vec::new();
            host_key(&e.host, &mut prefix);
            (prefix, e.url.clone())
        };
        entries.sort_by_key(key);
        entries
    }

    fn write_generation(path: &Path, entries: &[Entry]) -> Generation {
        let mut w = HistoryWriter::create(path).unwrap();
        for e in entries {
            w.write(e).unwrap();
        }
        Generation {
            name: path.file_name().unwrap().to_string_lossy().into_owned(),
            entries: w.finish().unwrap(),
        }
    }

    fn read_all(path: &Path) -> Vec<Entry> {
        let mut r = HistoryReader::open(path).unwrap().unwrap();
        let mut all = Vec::new();
        while let Some(e) = r.next_entry().unwrap() {
            all.push(e);
        }
        all
    }

    /// URLs on hosts of several registrable domains, in no order.
    fn urls(n: usize, salt: usize) -> Vec<String> {
        (0..n)
            .map(|i| {
                let k = (i * 7 + salt * 3) % 40;
                match k % 3 {
                    0 => format!("http://www.d{}.test/p{k}", k % 5),
                    1 => format!("http://d{}.test/p{k}", k % 5),
                    _ => format!("http://shop.d{}.example.co.uk/p{k}", k % 4),
                }
            })
            .collect()
    }

    #[test]
    fn the_newest_generation_of_a_url_wins() {
        let dir = common::testutil::TempDir::new("history-generations-newest");
        let mut model: BTreeMap<String, Entry> = BTreeMap::new();
        let mut list = GenerationList::default();
        for round in 1..=4u32 {
            let mut entries: BTreeMap<String, Entry> = BTreeMap::new();
            for url in urls(10 + round as usize * 5, round as usize) {
                entries.insert(url.clone(), entry(&url, round));
            }
            let entries = sorted(entries.into_values().collect());
            for e in &entries {
                model.insert(e.url.clone(), e.clone());
            }
            let path = dir.join(&generation_name(u64::from(round) * 3));
            list.generations.push(write_generation(&path, &entries));
        }
        let list_path = dir.join(LIST_FILE_NAME);
        list.write(&list_path).unwrap();
        let read = read_all(&list_path);
        assert_eq!(read, sorted(model.into_values().collect()));
        assert_eq!(
            HistoryReader::open(&list_path)
                .unwrap()
                .unwrap()
                .generations(),
            Some(&list)
        );

        // Compacted into one file, it reads the same.
        let paths = list.paths(&list_path);
        let one = dir.join(&generation_name(99));
        let n = rewrite(&paths, &one).unwrap();
        assert_eq!(n, read.len() as u64);
        assert_eq!(read_all(&one), read);
    }

    #[test]
    fn small_generations_merge_into_larger_ones_log_times() {
        assert_eq!(compaction_tail(&[]), 0);
        assert_eq!(compaction_tail(&[1000]), 1);
        assert_eq!(compaction_tail(&[1000, 10]), 1);
        assert_eq!(compaction_tail(&[1000, 10, 10]), 2);
        assert_eq!(compaction_tail(&[1000, 300, 200]), 3);
        assert_eq!(compaction_tail(&[1000, 100, 0]), 1);
        // More than MAX_GENERATIONS: the newest merge until they fit.
        let many: Vec<u64> = (0..MAX_GENERATIONS as u32 + 1)
            .map(|i| 1u64 << (40 - 3 * i))
            .collect();
        assert_eq!(compaction_tail(&many), 2);

        // A million entries, then 1,000 changed a round for 1,000 rounds:
        // each entry rewritten a few times (about log2 of the ratio), not
        // once a round, and few generations at any time.
        let (base, delta, rounds) = (1_000_000u64, 1_000u64, 1_000u64);
        let mut gens = vec![base];
        let mut rewritten = 0;
        for _ in 0..rounds {
            gens.push(delta);
            rewritten += delta;
            let tail = compaction_tail(&gens);
            if tail > 1 {
                let at = gens.len() - tail;
                let merged: u64 = gens[at..].iter().sum();
                rewritten += merged;
                gens.truncate(at);
                gens.push(merged);
            }
            assert!(gens.len() <= 12, "{gens:?}");
        }
        let per_round = rewritten / rounds;
        // A whole rewrite each round would be 1,000,000 to 2,000,000.
        assert!(per_round < 30 * delta, "{per_round} entries a round");
    }

    #[test]
    fn a_round_writes_its_generation_and_compacts_into_the_staging_directory() {
        let dir = common::testutil::TempDir::new("history-generations-round");
        let root = dir.join("crawl");
        let staging = root.join(common::crawldir::SEGMENTER_STAGING_DIR);
        std::fs::create_dir_all(&staging).unwrap();
        let base_entries = sorted(urls(40, 0).iter().map(|u| entry(u, 1)).collect());
        let mut base_entries = base_entries;
        base_entries.dedup_by(|a, b| a.url == b.url);
        let g1 = write_generation(&root.join(generation_name(1)), &base_entries);
        let small = sorted(vec![entry("http://d1.test/p1", 2)]);
        let g2 = write_generation(&root.join(generation_name(2)), &small);
        let base = GenerationList {
            generations: vec![g1.clone(), g2.clone()],
        };
        base.write(&root.join(LIST_FILE_NAME)).unwrap();
        // A file left by a discarded round: its number is not taken again.
        std::fs::write(root.join(generation_name(7)), b"left").unwrap();

        // The round changes one URL: a generation of one entry, merged with
        // the one before it (as large).
        let list_path = staging.join(LIST_FILE_NAME);
        let mut out = HistoryOut::create(&list_path, &root, Some(base.clone())).unwrap();
        assert!(!out.whole());
        out.write(&entry("http://d2.test/p2", 3)).unwrap();
        let written = out
            .finish(0, SummaryCounter::new(0, 0, true), None)
            .unwrap();
        assert_eq!((written.entries, written.compacted), (1, 2));
        let list = GenerationList::read(&list_path).unwrap();
        assert_eq!(list.generations.len(), 2);
        assert_eq!(list.generations[0], g1);
        assert_eq!(list.generations[1].name, generation_name(9));
        assert!(staging.join(generation_name(9)).is_file());
        assert!(!staging.join(generation_name(8)).exists(), "merged");
        // The staged list reads the crawl's generations and its own.
        let mut model: BTreeMap<String, Entry> = BTreeMap::new();
        for e in base_entries
            .iter()
            .chain(&small)
            .chain([&entry("http://d2.test/p2", 3)])
        {
            model.insert(e.url.clone(), e.clone());
        }
        assert_eq!(read_all(&list_path), sorted(model.into_values().collect()));
        assert!(super::super::summary_path(&list_path).is_file());

        // Moved in as a commit does: the generations no list names go.
        std::fs::rename(
            staging.join(generation_name(9)),
            root.join(generation_name(9)),
        )
        .unwrap();
        let listed = root.join(LIST_FILE_NAME);
        std::fs::rename(&listed, common::crawldir::prev_path(&listed)).unwrap();
        std::fs::rename(&list_path, &listed).unwrap();
        assert!(collect_garbage(&root).is_empty());
        let mut left: Vec<String> = std::fs::read_dir(&root)
            .unwrap()
            .filter_map(|e| e.unwrap().file_name().into_string().ok())
            .filter(|n| generation_number(n).is_some())
            .collect();
        left.sort();
        // 1 and 2 stay while the .prev list names them; 7 goes.
        assert_eq!(
            left,
            [generation_name(1), generation_name(2), generation_name(9)]
        );
        std::fs::remove_file(common::crawldir::prev_path(&listed)).unwrap();
        assert!(collect_garbage(&root).is_empty());
        assert!(!root.join(generation_name(2)).exists());
        assert!(root.join(generation_name(1)).exists());
    }

    #[test]
    fn a_damaged_list_or_a_missing_generation_is_refused() {
        let dir = common::testutil::TempDir::new("history-generations-damaged");
        let list = GenerationList {
            generations: vec![Generation {
                name: generation_name(1),
                entries: 1,
            }],
        };
        let path = dir.join(LIST_FILE_NAME);
        let text = list.encode();
        std::fs::write(&path, &text[..text.find("# end").unwrap()]).unwrap();
        let err = HistoryReader::open(&path).err().unwrap().to_string();
        assert!(
            err.contains("no end line") && err.contains(LIST_FILE_NAME),
            "{err}"
        );
        std::fs::write(&path, text.replace("\t1\n", "\t2\n")).unwrap();
        let err = HistoryReader::open(&path).err().unwrap().to_string();
        assert!(err.contains("does not match"), "{err}");
        list.write(&path).unwrap();
        let err = HistoryReader::open(&path).err().unwrap().to_string();
        assert!(
            err.contains(&generation_name(1)) && err.contains("missing"),
            "{err}"
        );
        // A sound generation put in place of another is told by its count.
        let g1 = write_generation(
            &dir.join(&generation_name(1)),
            &[entry("http://a.test/", 1)],
        );
        let g2 = write_generation(
            &dir.join(&generation_name(2)),
            &sorted(vec![
                entry("http://a.test/x", 2),
                entry("http://b.test/", 2),
            ]),
        );
        let two = GenerationList {
            generations: vec![g1, g2],
        };
        two.write(&path).unwrap();
        assert_eq!(read_all(&path).len(), 3);
        std::fs::copy(dir.join(&generation_name(1)), dir.join(&generation_name(2))).unwrap();
        let mut r = HistoryReader::open(&path).unwrap().unwrap();
        let err = loop {
            match r.next_entry() {
                Ok(Some(_)) => continue,
                Ok(None) => panic!("read as sound"),
                Err(e) => break e.to_string(),
            }
        };
        assert!(
            err.contains(&generation_name(2))
                && err.contains("holds 1 entries where its list records 2"),
            "{err}"
        );
        // Garbage is not collected beside a list that does not read, and
        // the commit is told so (each round, until the list is fixed).
        std::fs::write(&path, "# history v5 generations\nxx\n").unwrap();
        std::fs::write(dir.join(&generation_name(3)), b"x").unwrap();
        let problems = collect_garbage(dir.path());
        assert_eq!(
            problems,
            [format!(
                "{}: does not read as a list: no unused history generation deleted; move it \
                 away or delete it",
                path.display()
            )]
        );
        assert!(dir.join(&generation_name(3)).exists());
    }

    #[test]
    fn a_generation_any_list_names_is_kept_and_none_without_a_list_in_place() {
        let dir = common::testutil::TempDir::new("history-generations-garbage");
        let list_of = |numbers: &[u64]| GenerationList {
            generations: (numbers.iter())
                .map(|&n| Generation {
                    name: generation_name(n),
                    entries: 1,
                })
                .collect(),
        };
        for n in 1..=5 {
            std::fs::write(dir.join(&generation_name(n)), b"x").unwrap();
        }
        let list = dir.join(LIST_FILE_NAME);
        // Moved away, as the repair message advises: nothing goes.
        list_of(&[1, 2])
            .write(&dir.join("history.v5.list.old"))
            .unwrap();
        assert!(collect_garbage(dir.path()).is_empty());
        assert!((1..=5).all(|n| dir.join(&generation_name(n)).exists()));
        // A list in place, its .prev, the one repair moved aside, one a
        // user renamed: what any of them names stays.
        list_of(&[4]).write(&list).unwrap();
        list_of(&[3])
            .write(&common::crawldir::prev_path(&list))
            .unwrap();
        list_of(&[2])
            .write(&dir.join("history.v5.list.damaged"))
            .unwrap();
        // The .prev a conversion kept: an older version's file names none.
        std::fs::write(dir.join("history.v5.list.prev.1"), [0x28, 0xb5, 0x2f, 0xfd]).unwrap();
        assert!(collect_garbage(dir.path()).is_empty());
        let left: Vec<bool> = (1..=5)
            .map(|n| dir.join(&generation_name(n)).exists())
            .collect();
        assert_eq!(left, [true, true, true, true, false]);
        // A list moved aside that does not read: what it names is unknown,
        // so nothing goes, and the commit is told which file stops it.
        std::fs::write(dir.join(&generation_name(5)), b"x").unwrap();
        let unread = dir.join("history.v5.list.damaged.1");
        std::fs::write(&unread, b"# history v5 gen").unwrap();
        let problems = collect_garbage(dir.path());
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].starts_with(&format!("{}: does not read as a list", unread.display()))
                && problems[0].contains("move it away or delete it"),
            "{problems:?}"
        );
        assert!(dir.join(&generation_name(5)).exists());

        // A generation that cannot be deleted (a directory of that name)
        // is named, and the others still go.
        std::fs::remove_file(dir.join("history.v5.list.damaged.1")).unwrap();
        std::fs::create_dir(dir.join(&generation_name(6))).unwrap();
        std::fs::write(dir.join(&generation_name(6)).join("x"), b"x").unwrap();
        let problems = collect_garbage(dir.path());
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains(&generation_name(6)), "{problems:?}");
        assert!(!dir.join(&generation_name(5)).exists());
    }
}
