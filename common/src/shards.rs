//! Shards: a crawl split into S parts fixed when it is created, so that S
//! machines can each fetch and segment one part.
//!
//! `CRAWL/shards.toml` (format version 1, written once by `segmenter inject
//! --shards S`) records S and the shard key:
//!
//! ```text
//! # written by segmenter inject --shards; fixed for the life of the crawl
//! version = 1
//! shards = 4
//! key = "host"
//! ```
//!
//! A URL's shard is `xxh3_64(key) mod S`, where the key is its host (`host`)
//! or its host's registrable domain (`domain`, for a crawl whose politeness
//! queues are domains, so that one domain's hosts share one shard). XXH3 is
//! a fixed, published hash: a host stays in its shard across rounds,
//! machines and Rust versions. Shard J's state lives in `CRAWL/shards/JJJ/`,
//! laid out like the root of a one-machine crawl ([`CrawlDir::shard`]). No
//! shard file (or `shards = 1`) is today's layout: the root holds the state.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::crawldir::CrawlDir;

pub use crate::crawldir::SHARDS_FILE;
/// The shard file's format version.
pub const VERSION: u32 = 1;
/// The most shards a crawl may have (`shards/000` .. `shards/999`).
pub const MAX_SHARDS: u32 = 1000;

/// What decides a URL's shard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum ShardKey {
    /// The host name.
    Host,
    /// The registrable domain of the host (www.example.co.uk → example.co.uk).
    Domain,
}

impl fmt::Display for ShardKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ShardKey::Host => "host",
            ShardKey::Domain => "domain",
        })
    }
}

/// A crawl's shard count and key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shards {
    /// The file's format version.
    pub version: u32,
    /// S, the number of shards.
    pub shards: u32,
    /// What a URL's shard is a hash of.
    pub key: ShardKey,
}

/// A problem with the shard file or a shard number.
#[derive(Debug)]
pub struct ShardError {
    /// The file or directory concerned.
    pub path: PathBuf,
    /// What is wrong and what to do.
    pub message: String,
}

impl fmt::Display for ShardError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for ShardError {}

impl Shards {
    /// One shard: today's layout.
    pub const ONE: Shards = Shards {
        version: VERSION,
        shards: 1,
        key: ShardKey::Host,
    };

    /// S shards keyed by `key`; S from 1 to [`MAX_SHARDS`].
    pub fn new(shards: u32, key: ShardKey) -> Result<Shards, String> {
        if shards == 0 || shards > MAX_SHARDS {
            return Err(format!(
                "--shards {shards}: use 1 to {MAX_SHARDS} (one per machine or task that runs \
                 at the same time is enough)"
            ));
        }
        Ok(Shards {
            version: VERSION,
            shards,
            key,
        })
    }

    /// Reads `CRAWL/shards.toml`; an absent file is one shard.
    pub fn load(top: &Path) -> Result<Shards, ShardError> {
        let path = top.join(SHARDS_FILE);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Shards::ONE),
            Err(e) => {
                return Err(ShardError {
                    path,
                    message: format!("{e}; the crawl's shard count cannot be known"),
                });
            }
        };
        let damaged = |what: String| ShardError {
            path: path.clone(),
            message: format!(
                "{what}. Repair: write `version = 1`, `shards = S` and `key = \"host\"` (or \
                 \"domain\") with the S of the `shards/` directories"
            ),
        };
        let s: Shards = toml::from_str(&text).map_err(|e| damaged(format!("damaged ({e})")))?;
        if s.version != VERSION {
            return Err(ShardError {
                path,
                message: format!(
                    "format version {} (this build reads version {VERSION}); use a newer build",
                    s.version
                ),
            });
        }
        Shards::new(s.shards, s.key).map_err(damaged)
    }

    /// Writes `CRAWL/shards.toml` (atomically).
    pub fn save(&self, top: &Path) -> std::io::Result<()> {
        let text = format!(
            "# written by segmenter inject --shards; fixed for the life of the crawl\n\
             version = {}\nshards = {}\nkey = \"{}\"\n",
            self.version, self.shards, self.key
        );
        crate::atomic::write_atomic(top.join(SHARDS_FILE), text.as_bytes())
    }

    /// True for more than one shard.
    pub fn is_sharded(&self) -> bool {
        self.shards > 1
    }

    /// The shard (0-based) of a URL whose host is `host`.
    pub fn shard_of(&self, host: &str) -> u32 {
        if self.shards <= 1 {
            return 0;
        }
        let key = match self.key {
            ShardKey::Host => host,
            ShardKey::Domain => crate::urlnorm::registrable_domain(host),
        };
        (xxhash_rust::xxh3::xxh3_64(key.as_bytes()) % u64::from(self.shards)) as u32
    }

    /// Every shard's view of the crawl at `top`, shard 0 first (the root
    /// itself for one shard).
    pub fn views(&self, top: &CrawlDir) -> Vec<CrawlDir> {
        if self.is_sharded() {
            (0..self.shards).map(|j| top.shard(j)).collect()
        } else {
            vec![top.clone()]
        }
    }
}

/// The directory of a program's work on the crawl at `root`: the root
/// itself for an unsharded crawl (with `shard` absent or 0), shard J's view
/// for `--shard J`. A sharded crawl without `--shard`, or a J out of range,
/// is refused with what to give.
pub fn select(root: &Path, shard: Option<u32>) -> Result<CrawlDir, ShardError> {
    let top = CrawlDir::new(root);
    let s = Shards::load(root)?;
    match shard {
        None if s.is_sharded() => Err(ShardError {
            path: root.to_path_buf(),
            message: format!(
                "a crawl of {} shards: give --shard J (0 to {}) for one shard's part",
                s.shards,
                s.shards - 1
            ),
        }),
        Some(j) if j >= s.shards => Err(ShardError {
            path: root.to_path_buf(),
            message: format!(
                "--shard {j}: this crawl has {} shard(s), numbered 0 to {}",
                s.shards,
                s.shards - 1
            ),
        }),
        Some(j) if s.is_sharded() => Ok(top.shard(j)),
        _ => Ok(top),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_of_is_stable_and_spread() {
        let s = Shards::new(4, ShardKey::Host).unwrap();
        // XXH3 is fixed: these values hold on every machine and build.
        let got: Vec<u32> = ["a.example", "b.example", "c.example", "www.example.org"]
            .iter()
            .map(|h| s.shard_of(h))
            .collect();
        let again: Vec<u32> = ["a.example", "b.example", "c.example", "www.example.org"]
            .iter()
            .map(|h| s.shard_of(h))
            .collect();
        assert_eq!(got, again);
        let mut counts = [0u32; 4];
        for i in 0..400 {
            counts[s.shard_of(&format!("host{i}.example")) as usize] += 1;
        }
        assert!(counts.iter().all(|&c| c > 60), "{counts:?}");
        assert_eq!(Shards::ONE.shard_of("a.example"), 0);
    }

    #[test]
    fn domain_key_keeps_a_domains_hosts_together() {
        let s = Shards::new(16, ShardKey::Domain).unwrap();
        let j = s.shard_of("example.co.uk");
        for h in ["www.example.co.uk", "a.b.example.co.uk", "example.co.uk"] {
            assert_eq!(s.shard_of(h), j, "{h}");
        }
    }

    #[test]
    fn file_round_trip_absent_and_damaged() {
        let root = std::env::temp_dir().join(format!("shards-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        assert_eq!(Shards::load(&root).unwrap(), Shards::ONE);
        let s = Shards::new(4, ShardKey::Domain).unwrap();
        s.save(&root).unwrap();
        assert_eq!(Shards::load(&root).unwrap(), s);
        let text = std::fs::read_to_string(root.join(SHARDS_FILE)).unwrap();
        assert!(text.contains("shards = 4\n") && text.contains("key = \"domain\""));

        assert_eq!(
            select(&root, Some(2)).unwrap(),
            CrawlDir::new(&root).shard(2)
        );
        let e = select(&root, None).unwrap_err().to_string();
        assert!(e.contains("give --shard J (0 to 3)"), "{e}");
        let e = select(&root, Some(4)).unwrap_err().to_string();
        assert!(e.contains("numbered 0 to 3"), "{e}");

        std::fs::write(
            root.join(SHARDS_FILE),
            "version = 1\nshards = 0\nkey = \"host\"\n",
        )
        .unwrap();
        let e = Shards::load(&root).unwrap_err().to_string();
        assert!(e.contains("shards.toml") && e.contains("Repair"), "{e}");
        std::fs::write(
            root.join(SHARDS_FILE),
            "version = 2\nshards = 4\nkey = \"host\"\n",
        )
        .unwrap();
        let e = Shards::load(&root).unwrap_err().to_string();
        assert!(e.contains("format version 2"), "{e}");
        std::fs::remove_file(root.join(SHARDS_FILE)).unwrap();
        assert_eq!(select(&root, None).unwrap(), CrawlDir::new(&root));
        assert_eq!(select(&root, Some(0)).unwrap(), CrawlDir::new(&root));
        std::fs::remove_dir_all(&root).unwrap();
    }
}
