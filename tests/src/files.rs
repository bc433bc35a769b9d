//! Whole directory trees in tests: copied ([`copy_tree`]), and read into
//! memory ([`snapshot`]) to check that a command changed nothing, or only
//! what it should.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Copies the tree `from` into `to` (created if needed). Panics naming what
/// cannot be copied.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("{}: {e}", to.display()));
    let entries = std::fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
    for e in entries.flatten() {
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap_or_else(|err| {
                panic!("{} to {}: {err}", e.path().display(), target.display())
            });
        }
    }
}

/// Every file under `dir` with its bytes, by its path relative to `dir`,
/// except those `skip` names (it is given each relative path, directories
/// too: a skipped directory is not entered). Panics naming what cannot be
/// read.
pub fn snapshot(dir: &Path, skip: impl Fn(&Path) -> bool) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
        for e in entries.flatten() {
            let path = e.path();
            let rel = path.strip_prefix(dir).unwrap_or(&path).to_path_buf();
            if skip(&rel) {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                let bytes =
                    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                out.insert(rel, bytes);
            }
        }
    }
    out
}

/// The names of the entries of directory `dir`, sorted. Panics naming a
/// directory that cannot be read.
pub fn names(dir: &Path) -> Vec<String> {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let mut names: Vec<String> = entries
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// True for the files whose content says nothing of a crawl's state: lock
/// files (`*.lock`, empty) and SQLite's shared-memory index (`*-shm`,
/// rebuilt by every reader); a [`snapshot`] leaves them out.
pub fn is_lock_or_index(rel: &Path) -> bool {
    let name = rel.to_string_lossy();
    name.ends_with(".lock") || name.ends_with("-shm")
}
