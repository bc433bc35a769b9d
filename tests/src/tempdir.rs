//! Scratch space for tests: the one temporary directory of every test
//! ([`TempDir`], from `common::testutil`: unique per test, removed when the
//! test passes, kept and named on stderr when it fails) and a crawl
//! directory inside one ([`TempCrawl`]).
//!
//! ```
//! use testkit::tempdir::TempCrawl;
//!
//! let crawl = TempCrawl::new("doc-example");
//! let seeds = crawl.side("seeds.txt"); // beside the crawl directory, not in it
//! std::fs::write(&seeds, "http://a.test/\n").unwrap();
//! assert!(crawl.root().is_dir());
//! assert!(crawl.segment_ids().unwrap().is_empty()); // a `CrawlDir` too
//! ```

use std::ops::Deref;
use std::path::{Path, PathBuf};

use common::crawldir::CrawlDir;

pub use common::testutil::TempDir;

/// An empty crawl directory, `crawl/` inside a [`TempDir`] (so that it goes
/// or stays with it), with room beside it for the files a test gives the
/// programs (seeds, rules, copies). It is also the [`CrawlDir`] of that
/// directory.
#[derive(Debug)]
pub struct TempCrawl {
    /// The crawl directory.
    pub dir: CrawlDir,
    tmp: TempDir,
}

impl TempCrawl {
    /// A fresh, empty crawl directory for the test `tag` names.
    pub fn new(tag: &str) -> TempCrawl {
        let tmp = TempDir::new(tag);
        let root = tmp.join("crawl");
        std::fs::create_dir_all(&root)
            .unwrap_or_else(|e| panic!("cannot create {}: {e}", root.display()));
        TempCrawl {
            dir: CrawlDir::new(root),
            tmp,
        }
    }

    /// The crawl directory's path.
    pub fn root(&self) -> &Path {
        self.dir.root()
    }

    /// `name` beside (not inside) the crawl directory, for seeds files,
    /// rules files and copies of the crawl.
    pub fn side(&self, name: &str) -> PathBuf {
        self.tmp.join(name)
    }

    /// The temporary directory holding the crawl directory.
    pub fn tmp(&self) -> &TempDir {
        &self.tmp
    }
}

impl Deref for TempCrawl {
    type Target = CrawlDir;

    fn deref(&self) -> &CrawlDir {
        &self.dir
    }
}
