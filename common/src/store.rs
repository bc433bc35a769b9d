//! The WARC store: where the WARC files of a crawl (and their CDXJ indexes)
//! go when they are not kept in the crawl directory, given as a URL
//! (`warc_store = "s3://bucket/prefix"`, or `file:///path` for a plain
//! directory elsewhere).
//!
//! A closed file is uploaded whole ([`WarcStore::upload`]): in one request
//! up to [`PART_SIZE`], in parts of that size above it (memory: one part),
//! create-if-absent, so that an object is never overwritten (in parts: to
//! a staging name `KEY.uploading`, then copied create-if-absent on the
//! server and removed; above 5 GiB, which S3 does not copy in one part,
//! and on a store that refuses that copy (`501 Not Implemented`: no
//! `UploadPartCopy`, or no conditional `CompleteMultipartUpload`),
//! straight to its name after a look: there the unique names are what
//! keeps objects from being overwritten); an upload that
//! fails is retried with backoff until a time limit. The upload is then
//! recorded in the run's manifest (`fetched/ID/uploads.v1.tsv`, [`manifest`])
//! with its size and sha256, and only then may the local copy be removed.
//! Readers list a run's WARC files with [`run_warcs`] (local files and
//! uploaded ones) and open each with [`readable`], which fetches an uploaded
//! file to a temporary file when it is not local (`TMPDIR/.store-PID-N/`,
//! removed when dropped; the first copy a process makes removes those of
//! readers that were killed, [`remove_stale_copies`]).
//!
//! Object names: `PREFIX/fetched/ID/NAME` (`PREFIX/shards/JJJ/fetched/ID/NAME`
//! in a sharded crawl), where NAME is the file's own name, which holds the
//! time the writer opened it (to the millisecond), a serial and the host
//! name: two attempts of one task never make the same name, and if they did,
//! create-if-absent makes the second an error, not an overwrite.
//!
//! Credentials and endpoint come from the environment (`AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`, `AWS_REGION`,
//! `AWS_ENDPOINT_URL`, `AWS_ALLOW_HTTP`, `AWS_VIRTUAL_HOSTED_STYLE_REQUEST`,
//! ...) or, without keys there, from the profile (`AWS_PROFILE`, else
//! `default`) of `~/.aws/credentials` and `~/.aws/config`. They are never
//! written anywhere: messages name the object URL only.

pub mod manifest;
mod profile;
pub mod upload;

use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::path::Path as ObjectPath;
use object_store::{
    ClientOptions, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, RetryConfig,
};
use sha2::{Digest, Sha256};

pub use manifest::{MANIFEST_FILE, Manifest, Upload};
pub use upload::{Background, RunUploads, UploadQueue};

/// Size of one part of a multipart upload, and the largest file uploaded
/// in one request. Memory held by an upload is about one part.
pub const PART_SIZE: usize = 8 * 1024 * 1024;

/// Suffix of the staging name of a file uploaded in parts (`KEY.uploading`),
/// copied to `KEY` once complete and removed. A run killed meanwhile
/// leaves it; the next upload of the file overwrites and removes it.
pub const STAGING_SUFFIX: &str = ".uploading";

/// The largest object S3 copies in one part (UploadPartCopy): larger files
/// are uploaded in parts to their name directly, after a look.
const MAX_COPY_SIZE: u64 = 5 << 30;

/// How long an upload is retried, unless set (`warc_store_retry`).
pub const DEFAULT_RETRY_TIME: Duration = Duration::from_secs(300);

/// What went wrong with the store. Messages name the object URL, never a
/// credential.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The store URL or its settings are wrong.
    #[error("{0}")]
    Config(String),
    /// A local file could not be read or written.
    #[error("{path}: {source}")]
    Local {
        /// The file.
        path: PathBuf,
        /// What happened.
        source: io::Error,
    },
    /// The store did not answer or refused, after retries.
    #[error("{url}: {message}")]
    Unreachable {
        /// The object URL.
        url: String,
        /// The last error (credentials are never part of it).
        message: String,
    },
    /// An object of this name holds other bytes: it is never overwritten.
    #[error(
        "{url}: an object of this name exists with other content (size {size}); it is not \
         overwritten: move the local file {local} aside or give the run a new name"
    )]
    Collision {
        /// The object URL.
        url: String,
        /// Size of the object found.
        size: u64,
        /// The local file that was to be uploaded.
        local: PathBuf,
    },
    /// An uploaded object is not what the manifest says.
    #[error("{url}: {message}")]
    Mismatch {
        /// The object URL.
        url: String,
        /// What differs.
        message: String,
    },
}

/// The store of one crawl: a client and the prefix of its object names.
pub struct WarcStore {
    /// `s3://bucket` or `file://` (no prefix, no credentials).
    base: String,
    /// The prefix of every object name (may be empty).
    prefix: String,
    client: Arc<dyn ObjectStore>,
    runtime: tokio::runtime::Runtime,
    /// Retries of one upload stop after this long.
    pub retry_time: Duration,
    /// The store refused the server-side copy create-if-absent once:
    /// files in parts go straight to their names from then on.
    copy_refused: AtomicBool,
}

impl std::fmt::Debug for WarcStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "WarcStore({})", self.url_of(""))
    }
}

/// Checks a store URL without connecting: `s3://BUCKET[/PREFIX]` or
/// `file:///PATH`. The error says what is accepted.
pub fn check_url(url: &str) -> Result<(), StoreError> {
    parse_url(url).map(|_| ())
}

enum Parsed {
    S3 { bucket: String, prefix: String },
    File { root: PathBuf, prefix: String },
}

fn parse_url(url: &str) -> Result<Parsed, StoreError> {
    let bad = |why: &str| {
        StoreError::Config(format!(
            "warc_store {url:?}: {why}; give s3://BUCKET/PREFIX or file:///PATH"
        ))
    };
    if let Some(rest) = url.strip_prefix("s3://") {
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if bucket.is_empty() || bucket.contains('@') || bucket.contains(':') {
            return Err(bad("no bucket name (credentials go in the environment)"));
        }
        return Ok(Parsed::S3 {
            bucket: bucket.to_string(),
            prefix: prefix.trim_matches('/').to_string(),
        });
    }
    if let Some(path) = url.strip_prefix("file://") {
        if !path.starts_with('/') {
            return Err(bad("a file URL names an absolute path"));
        }
        // Object names are absolute paths from `/`: the URL of an object
        // then says where it is, whatever the store's own path was.
        return Ok(Parsed::File {
            root: PathBuf::from(path),
            prefix: path.trim_matches('/').to_string(),
        });
    }
    Err(bad("unknown scheme"))
}

impl WarcStore {
    /// A client for the store at `url`; credentials from the environment.
    /// Nothing is sent until the first upload or download.
    pub fn open(url: &str) -> Result<WarcStore, StoreError> {
        WarcStore::open_with_env(url, std::env::vars())
    }

    /// [`WarcStore::open`] with the `AWS_*` variables taken from `env`
    /// instead of the process environment.
    pub fn open_with_env(
        url: &str,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<WarcStore, StoreError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| StoreError::Config(format!("warc_store {url}: no async runtime: {e}")))?;
        let (base, prefix, client): (String, String, Arc<dyn ObjectStore>) = match parse_url(url)? {
            Parsed::S3 { bucket, prefix } => {
                let client = s3_client(&bucket, env)
                    .map_err(|e| StoreError::Config(format!("warc_store {url}: {e}")))?;
                (format!("s3://{bucket}"), prefix, Arc::new(client))
            }
            Parsed::File { root, prefix } => {
                std::fs::create_dir_all(&root).map_err(|source| StoreError::Local {
                    path: root.clone(),
                    source,
                })?;
                let client = object_store::local::LocalFileSystem::new_with_prefix("/")
                    .map_err(|e| StoreError::Config(format!("warc_store {url}: {e}")))?;
                ("file://".to_string(), prefix, Arc::new(client))
            }
        };
        Ok(WarcStore {
            base,
            prefix,
            client,
            runtime,
            retry_time: DEFAULT_RETRY_TIME,
            copy_refused: AtomicBool::new(false),
        })
    }

    /// The object name of a file at `rel` (a path relative to the crawl's
    /// top directory, `fetched/00003/NAME`).
    pub fn key_of(&self, rel: &Path) -> String {
        let rel = rel.to_string_lossy().replace('\\', "/");
        if self.prefix.is_empty() {
            rel
        } else {
            format!("{}/{rel}", self.prefix)
        }
    }

    /// `s3://bucket/KEY`: how messages and the manifest name an object.
    pub fn url_of(&self, key: &str) -> String {
        format!("{}/{key}", self.base)
    }

    /// Uploads the closed file `local` as `key`, retried with backoff until
    /// [`WarcStore::retry_time`] has passed. An object already there with the
    /// same bytes (an upload a killed run did not record) counts as
    /// uploaded; one with other bytes is a [`StoreError::Collision`].
    pub fn upload(&self, local: &Path, key: &str) -> Result<Upload, StoreError> {
        let (size, sha256) = hash_file(local)?;
        let url = self.url_of(key);
        let started = Instant::now();
        let mut wait = Duration::from_millis(200);
        loop {
            match self.runtime.block_on(self.put_file(local, key, size)) {
                Ok(()) => break,
                Err(Attempt::Exists) => {
                    self.check_same(local, key, size, &sha256)?;
                    break;
                }
                Err(Attempt::Local(source)) => {
                    return Err(StoreError::Local {
                        path: local.to_path_buf(),
                        source,
                    });
                }
                Err(Attempt::Store(e)) => {
                    if started.elapsed() + wait > self.retry_time {
                        return Err(StoreError::Unreachable {
                            url,
                            message: format!(
                                "upload failed for {:.0}s, given up: {}",
                                started.elapsed().as_secs_f64(),
                                clean(&e)
                            ),
                        });
                    }
                    crate::runlog::say(format_args!(
                        "{url}: upload failed ({}); retrying in {:.1}s",
                        clean(&e),
                        wait.as_secs_f64()
                    ));
                    std::thread::sleep(wait);
                    wait = (wait * 2).min(Duration::from_secs(10));
                }
            }
        }
        Ok(Upload {
            name: file_name(local),
            size,
            sha256,
            url,
        })
    }

    /// One try at putting the whole file.
    async fn put_file(&self, local: &Path, key: &str, size: u64) -> Result<(), Attempt> {
        let path = ObjectPath::from(key);
        let mut file = std::fs::File::open(local).map_err(Attempt::Local)?;
        if size <= PART_SIZE as u64 {
            let mut bytes = Vec::with_capacity(size as usize);
            file.read_to_end(&mut bytes).map_err(Attempt::Local)?;
            let opts = PutOptions {
                mode: PutMode::Create,
                ..PutOptions::default()
            };
            return match self.client.put_opts(&path, bytes.into(), opts).await {
                Ok(_) => Ok(()),
                Err(object_store::Error::AlreadyExists { .. }) => Err(Attempt::Exists),
                Err(e) => Err(Attempt::Store(e)),
            };
        }
        // Already there (a killed run's upload): no need to send it again.
        match self.client.head(&path).await {
            Ok(_) => return Err(Attempt::Exists),
            Err(object_store::Error::NotFound { .. }) => {}
            Err(e) => return Err(Attempt::Store(e)),
        }
        // object_store completes a multipart upload without a condition:
        // the parts go to a staging name, which is then copied to the
        // object's name create-if-absent (S3: one part copied on the
        // server, completed with `If-None-Match: *`) and removed. S3
        // copies at most 5 GiB in one part: a larger file goes straight to
        // its name, after the look above (names are unique: see the module
        // doc).
        if size > MAX_COPY_SIZE || self.copy_refused.load(Ordering::Relaxed) {
            return self.put_parts(&mut file, &path, size).await;
        }
        let staging = ObjectPath::from(format!("{key}{STAGING_SUFFIX}"));
        self.put_parts(&mut file, &staging, size).await?;
        let copied = self.client.copy_if_not_exists(&staging, &path).await;
        let _ = self.client.delete(&staging).await;
        match copied {
            Ok(()) => Ok(()),
            Err(object_store::Error::AlreadyExists { .. }) => Err(Attempt::Exists),
            Err(e) if is_not_implemented(&e) => {
                self.copy_refused.store(true, Ordering::Relaxed);
                crate::runlog::say(format_args!(
                    "{}: the store does not copy create-if-absent ({}); files over {} MiB \
                     now go straight to their names, kept from being overwritten by their \
                     unique names and a look before each upload",
                    self.url_of(key),
                    clean(&e),
                    PART_SIZE >> 20
                ));
                file.seek(io::SeekFrom::Start(0)).map_err(Attempt::Local)?;
                self.put_parts(&mut file, &path, size).await
            }
            Err(e) => Err(Attempt::Store(e)),
        }
    }

    /// The server-side copy create-if-absent of an upload in parts, from
    /// `from` to `to`, alone (for the tests: whether the store honours
    /// it); `Ok(false)` when `to` exists, left as it was.
    #[cfg(feature = "testutil")]
    pub fn copy_if_absent(&self, from: &str, to: &str) -> Result<bool, StoreError> {
        let copied = self.runtime.block_on(
            self.client
                .copy_if_not_exists(&ObjectPath::from(from), &ObjectPath::from(to)),
        );
        match copied {
            Ok(()) => Ok(true),
            Err(object_store::Error::AlreadyExists { .. }) => Ok(false),
            Err(e) => Err(StoreError::Unreachable {
                url: self.url_of(to),
                message: clean(&e),
            }),
        }
    }

    /// Uploads `size` bytes of `file` to `path` in parts of [`PART_SIZE`].
    async fn put_parts(
        &self,
        file: &mut std::fs::File,
        path: &ObjectPath,
        size: u64,
    ) -> Result<(), Attempt> {
        let mut upload = self
            .client
            .put_multipart(path)
            .await
            .map_err(Attempt::Store)?;
        let mut sent = 0u64;
        while sent < size {
            let mut part = vec![0u8; PART_SIZE.min((size - sent) as usize)];
            if let Err(e) = file.read_exact(&mut part) {
                let _ = upload.abort().await;
                return Err(Attempt::Local(e));
            }
            sent += part.len() as u64;
            if let Err(e) = upload.put_part(PutPayload::from(part)).await {
                let _ = upload.abort().await;
                return Err(Attempt::Store(e));
            }
        }
        match upload.complete().await {
            Ok(_) => Ok(()),
            Err(e) => {
                let _ = upload.abort().await;
                Err(Attempt::Store(e))
            }
        }
    }

    /// An object `key` exists: it is the upload of `local` if it has the
    /// same size and sha256.
    fn check_same(
        &self,
        local: &Path,
        key: &str,
        size: u64,
        sha256: &str,
    ) -> Result<(), StoreError> {
        let url = self.url_of(key);
        let collision = |found: u64| StoreError::Collision {
            url: url.clone(),
            size: found,
            local: local.to_path_buf(),
        };
        let found = self.size(key)?;
        if found != size {
            return Err(collision(found));
        }
        let mut hasher = Sha256::new();
        self.read_object(key, &mut HashWriter(&mut hasher))?;
        if hex(&hasher.finalize()) != sha256 {
            return Err(collision(found));
        }
        Ok(())
    }

    /// The size of object `key`.
    pub fn size(&self, key: &str) -> Result<u64, StoreError> {
        let path = ObjectPath::from(key);
        self.runtime
            .block_on(self.client.head(&path))
            .map(|m| m.size)
            .map_err(|e| StoreError::Unreachable {
                url: self.url_of(key),
                message: clean(&e),
            })
    }

    /// Copies object `key` to `out`, one part at a time; returns its size.
    pub fn read_object(&self, key: &str, out: &mut impl Write) -> Result<u64, StoreError> {
        let path = ObjectPath::from(key);
        let url = self.url_of(key);
        let unreachable = |e: object_store::Error| StoreError::Unreachable {
            url: url.clone(),
            message: clean(&e),
        };
        let size = self.size(key)?;
        let mut at = 0u64;
        while at < size {
            let end = (at + PART_SIZE as u64).min(size);
            let bytes = self
                .runtime
                .block_on(self.client.get_range(&path, at..end))
                .map_err(unreachable)?;
            out.write_all(&bytes).map_err(|e| StoreError::Unreachable {
                url: url.clone(),
                message: format!("writing the copy: {e}"),
            })?;
            at = end;
        }
        Ok(size)
    }

    /// Checks an uploaded file against its manifest line: the object
    /// exists, with the recorded size and sha256.
    pub fn verify(&self, up: &Upload) -> Result<(), StoreError> {
        let key = self.key_of_url(&up.url)?;
        let size = self.size(&key)?;
        if size != up.size {
            return Err(StoreError::Mismatch {
                url: up.url.clone(),
                message: format!("size {size}, recorded {}", up.size),
            });
        }
        let mut hasher = Sha256::new();
        self.read_object(&key, &mut HashWriter(&mut hasher))?;
        let sha = hex(&hasher.finalize());
        if sha != up.sha256 {
            return Err(StoreError::Mismatch {
                url: up.url.clone(),
                message: format!("sha256 {sha}, recorded {}", up.sha256),
            });
        }
        Ok(())
    }

    /// The object name of `url`, which must be in this store.
    fn key_of_url(&self, url: &str) -> Result<String, StoreError> {
        url.strip_prefix(&self.base)
            .and_then(|k| k.strip_prefix('/'))
            .map(str::to_string)
            .ok_or_else(|| StoreError::Config(format!("{url}: not in the store {}", self.base)))
    }
}

/// Uploads `local`, a file of a fetched run (`dir/NAME`) made after the
/// run's WARC file `beside` was uploaded (the research outputs written
/// from it), next to that file's object (same store, same prefix, its own
/// name), create-if-absent; records it in the run's manifest and removes
/// the local copy. Returns the object's URL.
pub fn upload_beside(beside: &Upload, local: &Path) -> Result<String, StoreError> {
    let dir = local.parent().unwrap_or(Path::new("."));
    let (store, key) = store_of_url(&beside.url)?;
    let name = file_name(local);
    let key = match key.rsplit_once('/') {
        Some((parent, _)) => format!("{parent}/{name}"),
        None => name.clone(),
    };
    let mut manifest = Manifest::read(dir).map_err(|source| StoreError::Local {
        path: dir.join(MANIFEST_FILE),
        source,
    })?;
    if manifest.get(&name).is_none() {
        let up = store.upload(local, &key)?;
        manifest.append(up).map_err(|source| StoreError::Local {
            path: dir.join(MANIFEST_FILE),
            source,
        })?;
    }
    std::fs::remove_file(local).map_err(|source| StoreError::Local {
        path: local.to_path_buf(),
        source,
    })?;
    Ok(store.url_of(&key))
}

/// Uploads `local` to the crawl's own prefix in the WARC store, as `rel`
/// below it (`parquet/NAME`): the prefix is that of `beside`, an upload of
/// one of the crawl's runs (its key less `fetched/ID/NAME`, or
/// `shards/JJJ/fetched/ID/NAME`). Create-if-absent: the same bytes there
/// already count as uploaded, other bytes are a collision. Returns the
/// object's URL; the local file is left.
pub fn upload_to_crawl(beside: &Upload, rel: &str, local: &Path) -> Result<String, StoreError> {
    let (store, key) = store_of_url(&beside.url)?;
    let Some(prefix) = crawl_prefix(&key) else {
        return Err(StoreError::Config(format!(
            "{}: not the object of a fetched run (no fetched/ID/ in its name)",
            beside.url
        )));
    };
    let key = format!("{prefix}{rel}");
    store.upload(local, &key)?;
    Ok(store.url_of(&key))
}

/// The crawl's prefix in a run file's key, with its `/` (`p/` of
/// `p/fetched/00003/NAME` and of `p/shards/002/fetched/00003/NAME`; empty
/// for `fetched/00003/NAME`).
fn crawl_prefix(key: &str) -> Option<&str> {
    let at = key
        .match_indices("fetched/")
        .map(|(i, _)| i)
        .filter(|&i| i == 0 || key.as_bytes()[i - 1] == b'/')
        .last()?;
    let head = &key[..at];
    let mut parts = head.trim_end_matches('/').rsplitn(3, '/');
    let (shard, shards) = (parts.next(), parts.next());
    let is_shard =
        shards == Some("shards") && shard.is_some_and(|j| j.bytes().all(|b| b.is_ascii_digit()));
    if is_shard {
        let cut = head.trim_end_matches('/').len() - shard.map_or(0, str::len) - "shards/".len();
        return Some(&head[..cut]);
    }
    Some(head)
}

/// The store of an object URL from a manifest: `s3://bucket/KEY` or
/// `file:///PATH`, with the key in it.
fn store_of_url(url: &str) -> Result<(WarcStore, String), StoreError> {
    let base = match parse_url(url)? {
        Parsed::S3 { bucket, .. } => format!("s3://{bucket}"),
        Parsed::File { .. } => "file:///".to_string(),
    };
    let store = WarcStore::open(&base)?;
    let key = store.key_of_url(url)?;
    Ok((store, key))
}

enum Attempt {
    Exists,
    Local(io::Error),
    Store(object_store::Error),
}

/// An error of the store as one line, with nothing secret: object_store's
/// messages hold the request URL and the response, never the signature's
/// key, but a URL's query (a presigned one) is cut all the same.
fn clean(e: &object_store::Error) -> String {
    let text = crate::exit::chain(e);
    match text.find("X-Amz-") {
        Some(i) => format!("{}...", &text[..i]),
        None => text,
    }
}

/// Whether the store answered that it does not do what was asked
/// (`501 Not Implemented`, or an S3 error `NotImplemented`), as against
/// failing to do it.
fn is_not_implemented(e: &object_store::Error) -> bool {
    let text = crate::exit::chain(e);
    text.contains("501 Not Implemented") || text.contains("<Code>NotImplemented</Code>")
}

fn s3_client(
    bucket: &str,
    env: impl IntoIterator<Item = (String, String)>,
) -> Result<object_store::aws::AmazonS3, String> {
    // The TLS library of the whole workspace, with ring: reqwest takes the
    // process default.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut builder = AmazonS3Builder::new()
        .with_bucket_name(bucket)
        .with_client_options(
            ClientOptions::new()
                .with_connect_timeout(Duration::from_secs(10))
                .with_timeout(Duration::from_secs(120)),
        )
        // A copy create-if-absent (the last step of an upload in parts):
        // one part copied, completed with `If-None-Match: *`.
        .with_copy_if_not_exists(object_store::aws::S3CopyIfNotExists::Multipart)
        .with_retry(RetryConfig {
            max_retries: 2,
            retry_timeout: Duration::from_secs(30),
            ..RetryConfig::default()
        });
    let mut has_keys = false;
    let mut has_region = false;
    for (name, value) in env {
        if !name.starts_with("AWS_") || value.is_empty() {
            continue;
        }
        if let Ok(key) = name.to_ascii_lowercase().parse::<AmazonS3ConfigKey>() {
            has_keys |= key == AmazonS3ConfigKey::AccessKeyId;
            has_region |= key == AmazonS3ConfigKey::Region;
            builder = builder.with_config(key, value);
        }
    }
    if !has_keys && let Some(p) = profile::read() {
        builder = builder
            .with_access_key_id(p.access_key_id)
            .with_secret_access_key(p.secret_access_key);
        if let Some(token) = p.session_token {
            builder = builder.with_token(token);
        }
        if let Some(region) = p.region
            && !has_region
        {
            builder = builder.with_region(region);
        }
    }
    builder.build().map_err(|e| crate::exit::chain(&e))
}

/// Size and sha256 (hex) of a file.
pub fn hash_file(path: &Path) -> Result<(u64, String), StoreError> {
    let local = |source| StoreError::Local {
        path: path.to_path_buf(),
        source,
    };
    let mut file = std::fs::File::open(path).map_err(local)?;
    let mut hasher = Sha256::new();
    let size = io::copy(&mut file, &mut HashWriter(&mut hasher)).map_err(local)?;
    Ok((size, hex(&hasher.finalize())))
}

struct HashWriter<'a>(&'a mut Sha256);

impl Write for HashWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// True for the names of WARC files (`*.warc.gz`, `*.warc`).
pub fn is_warc_name(name: &str) -> bool {
    (name.ends_with(".warc.gz") || name.ends_with(".warc")) && !name.starts_with('.')
}

/// The WARC files of the fetched run in `dir`: those on disk, and those of
/// its manifest that are not (uploaded, local copy removed), as the paths
/// they had (`dir/NAME`), sorted by name. Open them with [`readable`].
pub fn run_warcs(dir: &Path, local: Vec<PathBuf>) -> io::Result<Vec<PathBuf>> {
    let mut files = local;
    let manifest = Manifest::read(dir)?;
    for up in manifest.uploads() {
        let path = dir.join(&up.name);
        if is_warc_name(&up.name) && !files.contains(&path) && !path.exists() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// A WARC file ready to read: the local file, or a temporary copy of its
/// uploaded object (removed when this is dropped).
#[derive(Debug)]
pub struct Readable {
    path: PathBuf,
    /// For a temporary copy: the lock of its directory, held while it
    /// lives ([`remove_stale_copies`]).
    copy_lock: Option<crate::lock::FileLock>,
}

impl Readable {
    /// The file to open.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// True when this is a copy fetched from the store.
    pub fn fetched(&self) -> bool {
        self.copy_lock.is_some()
    }
}

impl Drop for Readable {
    fn drop(&mut self) {
        if self.copy_lock.is_some() {
            let _ = std::fs::remove_file(&self.path);
            if let Some(dir) = self.path.parent() {
                let _ = std::fs::remove_file(dir.join(COPY_LOCK));
                let _ = std::fs::remove_dir(dir);
            }
        }
    }
}

/// `path` itself if it exists; else, when the manifest of its directory
/// records it as uploaded, a copy of the object, of the same name, in a
/// directory of its own in the temporary directory (`TMPDIR`), checked
/// against the recorded size and sha256.
pub fn readable(path: &Path) -> io::Result<Readable> {
    if path.exists() {
        return Ok(Readable {
            path: path.to_path_buf(),
            copy_lock: None,
        });
    }
    let not_found = || {
        io::Error::new(
            io::ErrorKind::NotFound,
            format!("{}: no such file", path.display()),
        )
    };
    let (dir, name) = match (path.parent(), path.file_name()) {
        (Some(d), Some(n)) => (d, n.to_string_lossy()),
        _ => return Err(not_found()),
    };
    let manifest = Manifest::read(dir)?;
    let Some(up) = manifest.get(&name) else {
        return Err(not_found());
    };
    // In a directory of its own, under the file's own name (a WACZ
    // package names its files after them).
    let (tmp_dir, lock) = copy_dir()?;
    let copy = Readable {
        path: tmp_dir.join(&*name),
        copy_lock: Some(lock),
    };
    fetch_copy(up, copy.path()).map_err(|e| io::Error::other(crate::exit::chain(&e)))?;
    Ok(copy)
}

/// A temporary copy of the object at `url` (`s3://BUCKET/KEY`), for
/// reading; removed when dropped.
pub fn readable_url(url: &str) -> io::Result<Readable> {
    let fail = |e: StoreError| io::Error::other(crate::exit::chain(&e));
    let (store, key) = store_of_url(url).map_err(fail)?;
    let name = key.rsplit('/').next().unwrap_or("object").to_string();
    let (tmp_dir, lock) = copy_dir()?;
    let copy = Readable {
        path: tmp_dir.join(name),
        copy_lock: Some(lock),
    };
    let mut file = std::fs::File::create(copy.path())?;
    store.read_object(&key, &mut file).map_err(fail)?;
    file.flush()?;
    Ok(copy)
}

/// Prefix of the directories of temporary copies in `TMPDIR`:
/// `.store-PID-N`, PID the reader's process id.
const COPY_DIR_PREFIX: &str = ".store-";

/// The lock file in the directory of a temporary copy, locked by its
/// reader while the copy lives.
const COPY_LOCK: &str = ".lock";

/// A new directory for one temporary copy, `TMPDIR/.store-PID-N`, and
/// the lock of it. The first call of a process removes the copies that
/// readers killed before their copies were dropped left behind
/// ([`remove_stale_copies`]).
fn copy_dir() -> io::Result<(PathBuf, crate::lock::FileLock)> {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    static CLEANED: std::sync::Once = std::sync::Once::new();
    let tmp = std::env::temp_dir();
    CLEANED.call_once(|| {
        remove_stale_copies(&tmp);
    });
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = tmp.join(format!("{COPY_DIR_PREFIX}{}-{n}", std::process::id()));
    let with_path = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", dir.display()));
    std::fs::create_dir_all(&dir).map_err(with_path)?;
    match crate::lock::try_lock(&dir.join(COPY_LOCK)).map_err(with_path)? {
        Some(lock) => Ok((dir, lock)),
        None => Err(with_path(io::Error::other(
            "locked by another reader; remove the directory if no reader runs",
        ))),
    }
}

/// Removes from `tmp` the directories of temporary copies
/// (`.store-PID-N`) whose process is gone: a reader killed (`kill -9`)
/// while it held a copy leaves it there. Whether a process lives is asked
/// of `/proc/PID`, so this removes nothing where there is no `/proc`
/// (outside Linux), nor anything that is not such a directory; a directory
/// whose process id has since been reused stays until that process ends
/// too. A directory whose lock (`.lock`, held by its reader) is taken stays
/// as well: its reader lives where `/proc` does not show it (another PID
/// namespace sharing `TMPDIR`). Returns the number of directories removed.
pub fn remove_stale_copies(tmp: &Path) -> usize {
    let proc = Path::new("/proc");
    if !proc.join("self").exists() {
        return 0;
    }
    let Ok(entries) = std::fs::read_dir(tmp) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(COPY_DIR_PREFIX))
            .and_then(|rest| rest.split_once('-'))
            .filter(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if !is_dir || pid == std::process::id() || proc.join(pid.to_string()).exists() {
            continue;
        }
        // Held while removing: a reader that locks it now finds it gone.
        let Ok(Some(_lock)) = crate::lock::try_lock(&entry.path().join(COPY_LOCK)) else {
            continue;
        };
        if std::fs::remove_dir_all(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// Downloads an uploaded file to `to`, checking its size and sha256.
fn fetch_copy(up: &Upload, to: &Path) -> Result<(), StoreError> {
    let (store, key) = store_of_url(&up.url)?;
    let local = |source| StoreError::Local {
        path: to.to_path_buf(),
        source,
    };
    let mut file = std::fs::File::create(to).map_err(local)?;
    let mut hasher = Sha256::new();
    let size = {
        let mut tee = Tee(&mut file, &mut hasher);
        store.read_object(&key, &mut tee)?
    };
    file.flush().map_err(local)?;
    let sha = hex(&hasher.finalize());
    if size != up.size || sha != up.sha256 {
        return Err(StoreError::Mismatch {
            url: up.url.clone(),
            message: format!(
                "read back {size} bytes with sha256 {sha}; the manifest says {} bytes, {} \
                 (check it with `segmenter repair`)",
                up.size, up.sha256
            ),
        });
    }
    Ok(())
}

struct Tee<'a>(&'a mut std::fs::File, &'a mut Sha256);

impl Write for Tee<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write_all(buf)?;
        self.1.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// Checks every upload recorded in the run directory `dir` against its
/// object; returns the uploads checked and the problems found.
pub fn verify_run(dir: &Path) -> io::Result<(usize, Vec<String>)> {
    let manifest = Manifest::read(dir)?;
    let mut problems = Vec::new();
    let mut checked = 0;
    for up in manifest.uploads() {
        checked += 1;
        let result = store_of_url(&up.url).and_then(|(store, _)| store.verify(up));
        if let Err(e) = result {
            problems.push(crate::exit::chain(&e));
        }
    }
    Ok((checked, problems))
}

#[cfg(test)]
mod tests;
