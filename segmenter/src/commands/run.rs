//! `segmenter run CRAWL`, `segmenter map CRAWL --shard I` and `segmenter
//! reduce CRAWL --shard J`: the round that consumes every complete fetched
//! run not yet consumed (its WARC files and leftover list) and the
//! backlog, and writes the next segment(s) ([`crate::round::inputs`]). On
//! a sharded crawl, `run` maps every shard, then reduces every shard: the
//! two halves of a round ([`crate::round::map`], [`crate::round::reduce`])
//! that a cluster runs as separate tasks.

use std::path::Path;

use common::crawldir::CrawlDir;
use common::shards::Shards;

use crate::error::Error;
use crate::flags::RoundFlags;
use crate::round::inputs::round;
use crate::round::map::map_all;
use crate::session::Session;

/// Runs `run`.
pub fn run(root: &Path, flags: &RoundFlags) -> Result<(), Error> {
    let shards = common::shards::Shards::load(root)?;
    if shards.is_sharded() {
        return run_all(root, &shards, flags);
    }
    let crawl = CrawlDir::open(root).map_err(Error::io(root))?;
    let session = Session::start(crawl, flags)?;
    session.record(round(&session, None))
}

/// Runs `segmenter map`.
pub fn map(root: &Path, shard: Option<u32>, flags: &RoundFlags) -> Result<(), Error> {
    let (crawl, shards) = open(root, shard)?;
    let session = Session::start(crawl, flags)?;
    session.record(map_all(&session, &shards))
}

/// The shard's view (its directories made) and the crawl's shards.
fn open(root: &Path, shard: Option<u32>) -> Result<(CrawlDir, Shards), Error> {
    CrawlDir::open(root).map_err(Error::io(root))?;
    let crawl = common::shards::select(root, shard).map_err(|e| Error::Usage(e.to_string()))?;
    crawl.create_subdirs().map_err(Error::io(crawl.root()))?;
    Ok((crawl, Shards::load(root)?))
}

/// Runs `segmenter reduce`: the round of shard `shard`, on the map
/// outputs addressed to it ([`crate::round::reduce`]).
pub fn reduce(root: &Path, shard: Option<u32>, flags: &RoundFlags) -> Result<(), Error> {
    let (crawl, shards) = open(root, shard)?;
    let session = Session::start(crawl, flags)?;
    session.record(round(&session, Some(&shards)))
}

/// `segmenter run` on a sharded crawl: map every shard, then reduce every
/// shard; the same steps as the tasks of a cluster, one after the other.
fn run_all(root: &Path, shards: &Shards, flags: &RoundFlags) -> Result<(), Error> {
    let top = CrawlDir::open(root).map_err(Error::io(root))?;
    for view in shards.views(&top) {
        view.create_subdirs().map_err(Error::io(view.root()))?;
        let session = Session::start(view, flags)?;
        session.record(map_all(&session, shards))?;
    }
    for view in shards.views(&top) {
        let session = Session::start(view, flags)?;
        session.record(round(&session, Some(shards)))?;
    }
    Ok(())
}
