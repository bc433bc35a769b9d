//! Feeding a domain-sorted segment to the frontier so that every host is
//! active at once while memory stays bounded.
//!
//! The segment is decompressed once into a plain work file
//! (`fetched/ID/.work.tsv`, same columns as the segment) and every key keeps
//! the byte ranges of its lines in that file. The frontier holds at most a
//! batch of URLs per key and reads the next batch from the key's position in
//! the file when its queue runs dry. A key's lines are usually adjacent (the
//! segment is sorted by domain), so a key is mostly one range.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use common::segment::{SegmentError, SegmentReader, SegmentRecord};

use crate::frontier::{Job, Range};

/// A problem reading the segment or the work file.
#[derive(Debug, thiserror::Error)]
pub enum FeedError {
    /// The segment cannot be read.
    #[error(transparent)]
    Segment(#[from] SegmentError),
    /// The work file failed.
    #[error("{path}: {source}")]
    Io {
        /// The work file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
}

/// What to do with a segment line while loading.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admit {
    /// Queue it.
    Queue,
    /// Already handled by an earlier run: leave it out.
    Skip,
}

/// One key's lines in the work file, in segment order.
#[derive(Debug, Clone, Default)]
pub struct KeyRanges {
    /// The key.
    pub name: String,
    /// Byte ranges of its lines.
    pub ranges: Vec<Range>,
    /// Number of URLs.
    pub urls: u64,
    /// A host of the key (the first seen).
    pub first_host: String,
    /// Its other hosts (with `--key domain` or `--key ip`), in order of
    /// appearance.
    pub other_hosts: Vec<String>,
    /// The latest `not_before` of its URLs (Unix ms), if any has one.
    pub not_before: Option<i64>,
}

impl KeyRanges {
    /// Every host of the key, the first one first.
    pub fn hosts(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.first_host.as_str()).chain(self.other_hosts.iter().map(String::as_str))
    }
}

/// The loaded segment.
#[derive(Debug)]
pub struct Loaded {
    /// The work file.
    pub work: WorkFile,
    /// Keys in order of first appearance.
    pub keys: Vec<KeyRanges>,
    /// URLs queued.
    pub urls: u64,
    /// Lines of the segment (queued or not).
    pub lines: u64,
    /// Malformed lines skipped.
    pub malformed: u64,
}

/// Reads `segment` into the work file at `work_path`. `key_of` gives the
/// queue key of a record, `admit` decides whether it is queued, and
/// `on_malformed` hears about each bad line (it is skipped).
pub fn load(
    segment: &Path,
    work_path: &Path,
    mut key_of: impl FnMut(&SegmentRecord) -> String,
    mut admit: impl FnMut(&SegmentRecord) -> Admit,
    mut on_malformed: impl FnMut(&SegmentError),
) -> Result<Loaded, FeedError> {
    let io_err = |source| FeedError::Io {
        path: work_path.to_path_buf(),
        source,
    };
    let mut reader = SegmentReader::open(segment)?;
    let file = File::create(work_path).map_err(io_err)?;
    let mut out = BufWriter::with_capacity(256 * 1024, file);
    let mut rec = SegmentRecord::default();
    let mut keys: Vec<KeyRanges> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    // Every host met (a host belongs to one key).
    let mut hosts: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut offset = 0u64;
    let mut line = Vec::new();
    let (mut urls, mut lines) = (0u64, 0u64);
    let mut last: Option<usize> = None;
    loop {
        match reader.read_next(&mut rec) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) if e.is_fatal() => return Err(e.into()),
            Err(e) => {
                on_malformed(&e);
                continue;
            }
        }
        lines += 1;
        if admit(&rec) == Admit::Skip {
            continue;
        }
        line.clear();
        rec.encode_line(&mut line);
        out.write_all(&line).map_err(io_err)?;
        let end = offset + line.len() as u64;
        let key = key_of(&rec);
        let idx = match last {
            Some(i) if keys[i].name == key => i,
            _ => match index.get(&key) {
                Some(&i) => i,
                None => {
                    keys.push(KeyRanges {
                        name: key.clone(),
                        first_host: rec.host.clone(),
                        ..KeyRanges::default()
                    });
                    index.insert(key, keys.len() - 1);
                    keys.len() - 1
                }
            },
        };
        last = Some(idx);
        let k = &mut keys[idx];
        if k.first_host != rec.host && !hosts.contains(&rec.host) {
            hosts.insert(rec.host.clone());
            k.other_hosts.push(rec.host.clone());
        }
        match k.ranges.last_mut() {
            Some(r) if r.1 == offset => r.1 = end,
            _ => k.ranges.push((offset, end)),
        }
        k.urls += 1;
        k.not_before = k.not_before.max(rec.not_before);
        urls += 1;
        offset = end;
    }
    let file = out.into_inner().map_err(|e| io_err(e.into_error()))?;
    drop(file);
    let work = WorkFile::open(work_path)?;
    Ok(Loaded {
        work,
        keys,
        urls,
        lines,
        malformed: reader.malformed(),
    })
}

/// The work file, read by many workers at once (positioned reads).
#[derive(Debug)]
pub struct WorkFile {
    file: File,
    path: PathBuf,
}

impl WorkFile {
    /// Opens the work file for reading.
    pub fn open(path: &Path) -> Result<WorkFile, FeedError> {
        let file = File::open(path).map_err(|source| FeedError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(WorkFile {
            file,
            path: path.to_path_buf(),
        })
    }

    /// Reads up to `max` URLs from the start of `range`; returns them and
    /// the rest of the range, if any.
    pub fn read_batch(
        &self,
        range: Range,
        max: usize,
    ) -> Result<(Vec<Job>, Option<Range>), FeedError> {
        let (mut pos, end) = range;
        let mut jobs = Vec::with_capacity(max.min(1024));
        let mut buf = Vec::new();
        let mut rec = SegmentRecord::default();
        while jobs.len() < max && pos < end {
            let want = ((end - pos) as usize).min((64 * 1024).max(buf.capacity()));
            buf.resize(want, 0);
            self.file
                .read_exact_at(&mut buf, pos)
                .map_err(|source| FeedError::Io {
                    path: self.path.clone(),
                    source,
                })?;
            let mut used = 0;
            while jobs.len() < max {
                let Some(nl) = buf[used..].iter().position(|&b| b == b'\n') else {
                    break;
                };
                let line = &buf[used..used + nl];
                if rec.parse_line(line).is_ok() {
                    jobs.push(Job::from_record(&rec));
                }
                used += nl + 1;
            }
            if used == 0 {
                // A line longer than the buffer: read more at once.
                if want as u64 == end - pos {
                    // No newline before the end of the range: the file is
                    // damaged; stop this key rather than loop.
                    pos = end;
                    break;
                }
                buf.reserve(buf.len() * 2);
                continue;
            }
            pos += used as u64;
        }
        let rest = (pos < end).then_some((pos, end));
        Ok((jobs, rest))
    }

    /// Reads every URL of `range` (for the leftover at the end).
    pub fn read_all(&self, range: Range, mut each: impl FnMut(Job)) -> Result<(), FeedError> {
        let mut next = Some(range);
        while let Some(r) = next {
            let (jobs, rest) = self.read_batch(r, 4096)?;
            jobs.into_iter().for_each(&mut each);
            next = rest;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_follow_the_ranges() {
        let dir = common::testutil::TempDir::new("feed-batches");
        let path = dir.join("work.tsv");
        let mut text = Vec::new();
        for i in 0..10 {
            let rec = SegmentRecord {
                host: "h".into(),
                url: format!("http://h/{i}"),
                ..SegmentRecord::default()
            };
            rec.encode_line(&mut text);
        }
        std::fs::write(&path, &text).unwrap();
        let work = WorkFile::open(&path).unwrap();
        let (jobs, rest) = work.read_batch((0, text.len() as u64), 4).unwrap();
        assert_eq!(jobs.len(), 4);
        assert_eq!(jobs[3].rec.url, "http://h/3");
        let (jobs, rest) = work.read_batch(rest.unwrap(), 100).unwrap();
        assert_eq!(jobs.len(), 6);
        assert_eq!(jobs[0].rec.url, "http://h/4");
        assert!(rest.is_none());
    }
}
