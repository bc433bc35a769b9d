//! `fetched/ID/uploads.v1.tsv`: the files of a fetched run that were
//! uploaded to the WARC store. Append-only, one line per file, written
//! (and synced) after the object exists and before the local copy is
//! removed:
//!
//! ```text
//! # uploads v1: name size sha256 object
//! NAME<TAB>SIZE<TAB>SHA256<TAB>s3://bucket/prefix/fetched/00003/NAME
//! ```
//!
//! A last line cut by a crash (no line end) is not read, and is cut off
//! before the next line is appended: the file it names is still local, and
//! its upload is redone (it finds its object and checks it).

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The manifest's file name in a fetched run's directory.
pub const MANIFEST_FILE: &str = "uploads.v1.tsv";

/// The first line of a manifest.
const HEADER: &str = "# uploads v1: name size sha256 object\n";

/// One uploaded file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upload {
    /// The file's name in the run's directory.
    pub name: String,
    /// Its size in bytes.
    pub size: u64,
    /// The sha256 of its bytes, in hex.
    pub sha256: String,
    /// The object: `s3://bucket/KEY` or `file:///PATH`.
    pub url: String,
}

/// The uploads recorded for one run.
#[derive(Debug, Default)]
pub struct Manifest {
    path: PathBuf,
    uploads: Vec<Upload>,
}

impl Manifest {
    /// Reads `dir/uploads.v1.tsv`; empty if there is none. A line that
    /// does not read is an error naming the file and the line.
    pub fn read(dir: &Path) -> io::Result<Manifest> {
        let path = dir.join(MANIFEST_FILE);
        let text = match std::fs::read(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Ok(Manifest {
                    path,
                    uploads: Vec::new(),
                });
            }
            Err(e) => return Err(io::Error::new(e.kind(), format!("{}: {e}", path.display()))),
        };
        // A torn last line (a crash while appending) is not read.
        let whole = match text.iter().rposition(|&b| b == b'\n') {
            Some(i) => &text[..=i],
            None => &[][..],
        };
        let mut uploads = Vec::new();
        for (n, line) in String::from_utf8_lossy(whole).lines().enumerate() {
            if line.starts_with('#') || line.is_empty() {
                continue;
            }
            let bad = || {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "{}: line {}: not `name<TAB>size<TAB>sha256<TAB>object`; the objects it \
                         names are in the store, the local files were removed: restore the line \
                         (see docs/formats.md)",
                        path.display(),
                        n + 1
                    ),
                )
            };
            let f: Vec<&str> = line.split('\t').collect();
            let [name, size, sha256, url] = f[..] else {
                return Err(bad());
            };
            uploads.push(Upload {
                name: name.to_string(),
                size: size.parse().map_err(|_| bad())?,
                sha256: sha256.to_string(),
                url: url.to_string(),
            });
        }
        Ok(Manifest { path, uploads })
    }

    /// Every upload, in the order recorded.
    pub fn uploads(&self) -> &[Upload] {
        &self.uploads
    }

    /// The upload of the file `name`, if recorded.
    pub fn get(&self, name: &str) -> Option<&Upload> {
        self.uploads.iter().find(|u| u.name == name)
    }

    /// Appends `up` and syncs it: the file is uploaded for every reader
    /// from now on. A torn last line is cut off first.
    pub fn append(&mut self, up: Upload) -> io::Result<()> {
        let err = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", self.path.display()));
        let mut file = OpenOptions::new()
            .create(true)
            .read(true)
            .append(true)
            .open(&self.path)
            .map_err(err)?;
        let text = std::fs::read(&self.path).map_err(err)?;
        let keep = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        if keep < text.len() {
            file.set_len(keep as u64).map_err(err)?;
        }
        let mut line = String::new();
        if keep == 0 {
            line.push_str(HEADER);
        }
        line.push_str(&format!(
            "{}\t{}\t{}\t{}\n",
            up.name, up.size, up.sha256, up.url
        ));
        file.write_all(line.as_bytes()).map_err(err)?;
        file.sync_all().map_err(err)?;
        if keep == 0 {
            crate::atomic::sync_dir(self.path.parent().unwrap_or(Path::new("."))).map_err(err)?;
        }
        self.uploads.push(up);
        Ok(())
    }
}
