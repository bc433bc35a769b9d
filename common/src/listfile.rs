//! List files of the crawl directory (`consumed.txt`, `scope.seeds`): one
//! entry per line, `#` to the end of a line is a comment.
//!
//! Format version 2 frames the entries, so that a file cut anywhere,
//! emptied, flipped or replaced is told from a short list:
//!
//! ```text
//! # consumed.txt v2
//! 00001
//! 00002
//! # end 2 xxh3 5f0c9e1b7a3d2c44
//! ```
//!
//! The trailer holds the number of entries and the XXH3-64 of the entries
//! (each followed by `\n`), in hex. A file without the header (version 1, or
//! written by hand) is still read; for it only an empty file, a cut last
//! line and entries the caller refuses are detected.
//!
//! ```
//! use common::listfile::{ListKind, parse, render};
//! let kind = ListKind { name: "consumed.txt", repair: "restore it" };
//! let text = render(&kind, ["00001", "00002"]);
//! let entries = parse("consumed.txt".as_ref(), &kind, &text).unwrap();
//! assert_eq!(entries, [(2, "00001".to_string()), (3, "00002".to_string())]);
//! assert!(parse("consumed.txt".as_ref(), &kind, &text[..text.len() - 3]).is_err());
//! ```

use std::path::{Path, PathBuf};

use xxhash_rust::xxh3::Xxh3;

/// Which list file, and how to repair it (for the message).
#[derive(Debug, Clone, Copy)]
pub struct ListKind {
    /// The file's name in the crawl directory; also the header's word.
    pub name: &'static str,
    /// What the user can do when the file is damaged.
    pub repair: &'static str,
}

/// A list file that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ListError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is not what the programs write: cut, emptied, changed.
    #[error("{path}: damaged: {problem}; nothing was changed. {repair}")]
    Damaged {
        /// The file.
        path: PathBuf,
        /// What is wrong, where.
        problem: String,
        /// How to repair it.
        repair: &'static str,
    },
}

impl ListError {
    /// `path` is damaged: `problem`.
    pub fn damaged(path: &Path, kind: &ListKind, problem: impl Into<String>) -> ListError {
        ListError::Damaged {
            path: path.to_path_buf(),
            problem: problem.into(),
            repair: kind.repair,
        }
    }
}

const VERSION: &str = "v2";

fn header(kind: &ListKind) -> String {
    format!("# {} {VERSION}", kind.name)
}

/// The text of a list file holding `entries`, in format version 2.
pub fn render<S: AsRef<str>>(kind: &ListKind, entries: impl IntoIterator<Item = S>) -> String {
    let mut text = header(kind);
    text.push('\n');
    let mut hash = Xxh3::new();
    let mut n = 0u64;
    for e in entries {
        let line = format!("{}\n", e.as_ref());
        hash.update(line.as_bytes());
        text.push_str(&line);
        n += 1;
    }
    text.push_str(&format!("# end {n} xxh3 {:016x}\n", hash.digest()));
    text
}

/// Reads the list file at `path`: its entries with their 1-based line
/// numbers, or `None` if there is no such file.
pub fn read(path: &Path, kind: &ListKind) -> Result<Option<Vec<(usize, String)>>, ListError> {
    match std::fs::read(path) {
        Ok(bytes) => {
            let text = String::from_utf8(bytes).map_err(|e| {
                ListError::damaged(
                    path,
                    kind,
                    format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()),
                )
            })?;
            parse(path, kind, &text).map(Some)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ListError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Parses the text of a list file (see [`read`]).
pub fn parse(path: &Path, kind: &ListKind, text: &str) -> Result<Vec<(usize, String)>, ListError> {
    let bad = |problem: String| ListError::damaged(path, kind, problem);
    if text.trim().is_empty() {
        return Err(bad(format!("the file is empty ({} bytes)", text.len())));
    }
    let lines = text.lines().count();
    if !text.ends_with('\n') {
        return Err(bad(format!(
            "line {lines} is cut (no newline at the end of the file: {} bytes)",
            text.len()
        )));
    }
    let framed = text.lines().next() == Some(header(kind).as_str());
    let mut entries = Vec::new();
    let mut hash = Xxh3::new();
    let mut trailer = None;
    for (i, line) in text.lines().enumerate() {
        if framed && (i == 0 || trailer.is_some()) {
            if trailer.is_some() {
                return Err(bad(format!("line {}: text after the end line", i + 1)));
            }
            continue;
        }
        if framed && line.starts_with("# end ") {
            trailer = Some(line);
            continue;
        }
        let entry = line.split('#').next().unwrap_or("").trim();
        if entry.is_empty() {
            continue;
        }
        if line
            .bytes()
            .any(|b| b.is_ascii_control() && b != b'\t' && b != b'\r')
        {
            return Err(bad(format!("line {}: control characters", i + 1)));
        }
        hash.update(line.as_bytes());
        hash.update(b"\n");
        entries.push((i + 1, entry.to_string()));
    }
    if framed {
        let expected = format!("# end {} xxh3 {:016x}", entries.len(), hash.digest());
        match trailer {
            None => {
                return Err(bad(format!(
                    "cut after line {lines}: the end line `# end N xxh3 ...` is missing"
                )));
            }
            Some(t) if t != expected => {
                return Err(bad(format!(
                    "the end line says `{t}` but the {} entries give `{expected}` (lines \
                     changed; if you edited the file by hand, delete its first and last lines)",
                    entries.len()
                )));
            }
            Some(_) => {}
        }
    } else if entries.is_empty() {
        return Err(bad("the file holds no entry".to_string()));
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KIND: ListKind = ListKind {
        name: "consumed.txt",
        repair: "restore it",
    };

    fn check(text: &str) -> Result<Vec<String>, String> {
        parse("x".as_ref(), &KIND, text)
            .map(|v| v.into_iter().map(|(_, e)| e).collect())
            .map_err(|e| e.to_string())
    }

    #[test]
    fn round_trip_and_every_cut_is_detected() {
        let text = render(&KIND, ["00001", "00002", "00003"]);
        assert_eq!(check(&text).unwrap(), ["00001", "00002", "00003"]);
        for cut in 0..text.len() {
            assert!(
                check(&text[..cut]).is_err(),
                "cut at {cut}: {:?}",
                &text[..cut]
            );
        }
        let empty = render(&KIND, Vec::<String>::new());
        assert_eq!(check(&empty).unwrap(), Vec::<String>::new());
    }

    #[test]
    fn flips_and_garbage_are_detected() {
        let text = render(&KIND, ["00001", "00002"]);
        let flipped = text.replace("00002", "00003");
        assert!(check(&flipped).unwrap_err().contains("end line says"));
        assert!(check(&format!("{text}garbage\n")).is_err());
    }

    #[test]
    fn version_1_is_read_with_what_can_be_checked() {
        assert_eq!(check("00001\n# c\n00002\n").unwrap(), ["00001", "00002"]);
        assert!(check("").unwrap_err().contains("empty"));
        assert!(check("00001\n0000").unwrap_err().contains("line 2 is cut"));
        assert!(check("# only a comment\n").is_err());
    }
}
