//! Uploading the files of one fetched run: each closed WARC file and its
//! CDXJ index, recorded in the manifest, then (unless local copies are
//! kept) removed from the run's directory. [`RunUploads::spawn`] does it on
//! a thread of its own while the fetch goes on; [`RunUploads::upload_rest`]
//! uploads whatever is still local (a file whose upload failed, the files
//! of a killed run) before the run is marked complete.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Sender, channel};
use std::thread::JoinHandle;

use super::{Manifest, StoreError, WarcStore, is_warc_name};
use crate::warc::cdxj;

/// The uploads of one run.
#[derive(Debug)]
pub struct RunUploads {
    store: WarcStore,
    /// The crawl's top directory: object names are paths below it.
    top: PathBuf,
    /// `fetched/ID/`.
    dir: PathBuf,
    keep_local: bool,
    manifest: Manifest,
    /// Files uploaded by this process.
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
}

impl RunUploads {
    /// The uploads of the run in `dir` (below `top`), its manifest read.
    pub fn new(store: WarcStore, top: &Path, dir: &Path, keep_local: bool) -> io::Result<Self> {
        Ok(RunUploads {
            manifest: Manifest::read(dir)?,
            store,
            top: top.to_path_buf(),
            dir: dir.to_path_buf(),
            keep_local,
            files: 0,
            bytes: 0,
        })
    }

    /// The run's manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// Uploads the closed WARC file `warc` and its index (if there is one).
    pub fn upload_warc(&mut self, warc: &Path) -> Result<(), StoreError> {
        self.upload_file(warc)?;
        let index = cdxj::index_path(warc);
        if index.exists() {
            self.upload_file(&index)?;
        }
        Ok(())
    }

    /// Uploads one file unless recorded, records it, and removes the local
    /// copy unless copies are kept.
    fn upload_file(&mut self, path: &Path) -> Result<(), StoreError> {
        let name = super::file_name(path);
        if let Some(up) = self.manifest.get(&name) {
            // Recorded by a run killed before it removed the file.
            let size = std::fs::metadata(path).map(|m| m.len()).ok();
            if !self.keep_local && size == Some(up.size) {
                remove(path)?;
            }
            return Ok(());
        }
        let rel = path.strip_prefix(&self.top).unwrap_or(path);
        let key = self.store.key_of(rel);
        let up = self.store.upload(path, &key)?;
        self.files += 1;
        self.bytes += up.size;
        self.manifest
            .append(up)
            .map_err(|source| StoreError::Local {
                path: self.dir.join(super::MANIFEST_FILE),
                source,
            })?;
        if !self.keep_local {
            remove(path)?;
        }
        Ok(())
    }

    /// Uploads every WARC file and index still in the run's directory
    /// (a kept copy already recorded is left alone).
    pub fn upload_rest(&mut self) -> Result<(), StoreError> {
        let local = |source| StoreError::Local {
            path: self.dir.clone(),
            source,
        };
        let mut files = Vec::new();
        for entry in std::fs::read_dir(&self.dir).map_err(local)? {
            let entry = entry.map_err(local)?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let index = name.ends_with(cdxj::SUFFIX) && !name.starts_with('.');
            if is_warc_name(&name) || index {
                files.push(entry.path());
            }
        }
        files.sort();
        for f in files {
            self.upload_file(&f)?;
        }
        Ok(())
    }

    /// Runs the uploads on a thread of their own: send it each WARC file
    /// as it is closed. After a failure it uploads nothing more (the rest
    /// waits for [`RunUploads::upload_rest`]).
    pub fn spawn(self) -> io::Result<Background> {
        let (tx, rx) = channel::<Option<PathBuf>>();
        let thread = std::thread::Builder::new()
            .name("upload".into())
            .spawn(move || {
                let mut me = self;
                let mut failed = None;
                // Until `finish` says so (`None`), or every queue is gone.
                while let Ok(Some(warc)) = rx.recv() {
                    if failed.is_none()
                        && let Err(e) = me.upload_warc(&warc)
                    {
                        failed = Some(e);
                    }
                }
                (me, failed)
            })?;
        Ok(Background {
            queue: UploadQueue(tx),
            thread,
        })
    }
}

/// Uploads going on beside the fetch.
#[derive(Debug)]
pub struct Background {
    queue: UploadQueue,
    thread: JoinHandle<(RunUploads, Option<StoreError>)>,
}

/// Where closed WARC files are sent to be uploaded.
#[derive(Debug, Clone)]
pub struct UploadQueue(Sender<Option<PathBuf>>);

impl UploadQueue {
    /// Queues the closed WARC file `warc` (and its index). A stopped
    /// upload thread leaves it local: the run's last step uploads it.
    pub fn send(&self, warc: PathBuf) {
        let _ = self.0.send(Some(warc));
    }
}

impl Background {
    /// Where to send closed WARC files.
    pub fn queue(&self) -> UploadQueue {
        self.queue.clone()
    }

    /// Waits for the uploads queued so far (other queues may still be
    /// alive); returns the uploads and the first failure (the files it
    /// left are still local).
    pub fn finish(self) -> (RunUploads, Option<StoreError>) {
        let _ = self.queue.0.send(None);
        self.thread
            .join()
            .expect("the upload thread does not panic")
    }
}

fn remove(path: &Path) -> Result<(), StoreError> {
    std::fs::remove_file(path).map_err(|source| StoreError::Local {
        path: path.to_path_buf(),
        source,
    })
}
