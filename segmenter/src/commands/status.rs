//! `segmenter status CRAWL [--json] [--no-backlog]`: where the crawl stands between steps,
//! for scripts (`scripts/crawl.sh`) and for a look by hand: the segments,
//! those still to fetch, the complete fetched runs not yet consumed, and the
//! URLs waiting in the backlog, the seen-set's size, fill and rescues;
//! and what the last `segmenter run` found
//! (`last_round`, `round_*`: from its JSON report, the newest
//! `logs/segmenter-*.json` of a `run`). It only reads; it takes no lock.
//! The figures are read by the crawl-state layer ([`crate::state::status`]).
//!
//! `--json` prints one line holding one flat object (`{"key":value,...}`:
//! numbers, strings, and lists of segment IDs, which hold no `,` or `"`), so
//! that a shell script can pick a key without a JSON parser; the text form
//! has the same keys, as `key: value` lines (lists separated by spaces).

use std::path::Path;

use common::crawldir::CrawlDir;

use crate::error::Error;
use crate::state::mapped::ShardTasks;
use crate::state::status::CrawlStatus;

/// Prints the status of the crawl directory `root` (of shard `shard`; of
/// every shard in turn for a sharded crawl without one).
pub fn status(root: &Path, shard: Option<u32>, json: bool, backlog: bool) -> Result<(), Error> {
    if !root.is_dir() {
        return Err(Error::Usage(format!(
            "{}: {}",
            root.display(),
            common::crawldir::no_such_crawl(root)
        )));
    }
    let shards = common::shards::Shards::load(root)?;
    if shards.is_sharded() && shard.is_none() {
        let mut text = String::new();
        let mut each: Vec<serde_json::Value> = Vec::new();
        for (j, view) in shards.views(&CrawlDir::new(root)).iter().enumerate() {
            let status = CrawlStatus::read(view, backlog)?;
            let tasks = ShardTasks::read(view, &shards)?;
            let rerun = tasks.rerun(root, j as u32);
            if json {
                let mut v = serde_json::to_value(&status).map_err(|e| Error::Io {
                    path: root.to_path_buf(),
                    source: e.into(),
                })?;
                v["shard"] = j.into();
                v["unmapped"] = tasks.unmapped.clone().into();
                v["unreduced"] = tasks.unreduced.into();
                v["rerun"] = rerun.into();
                each.push(v);
            } else {
                text.push_str(&format!("shard: {j} ({})\n", view.root().display()));
                text.push_str(&status.to_string());
                text.push_str(&format!(
                    "unmapped: {}\nunreduced: {}\nrerun: {rerun}\n\n",
                    tasks.unmapped.join(" "),
                    tasks.unreduced,
                ));
            }
        }
        if json {
            let totals = shard_totals(&each);
            let v = serde_json::json!({"shards": shards.shards, "key": shards.key.to_string(), "totals": totals, "per_shard": each});
            text = format!("{v}\n");
        }
        return common::exit::print(&text).map_err(Error::io("stdout"));
    }
    let crawl = common::shards::select(root, shard).map_err(|e| Error::Usage(e.to_string()))?;
    let status = CrawlStatus::read(&crawl, backlog)?;
    let text = if json {
        let line = serde_json::to_string(&status).map_err(|e| Error::Io {
            path: root.to_path_buf(),
            source: e.into(),
        })?;
        format!("{line}\n")
    } else {
        status.to_string()
    };
    common::exit::print(&text).map_err(Error::io("stdout"))
}

/// The sums of the shards' figures (`totals` of a sharded crawl's
/// `--json`): list lengths and counts; a count is `null` if any shard's is.
fn shard_totals(each: &[serde_json::Value]) -> serde_json::Value {
    let mut totals = serde_json::Map::new();
    for key in ["segments", "pending", "unconsumed", "unmapped"] {
        let n: usize = each
            .iter()
            .map(|v| v[key].as_array().map_or(0, Vec::len))
            .sum();
        totals.insert(key.to_string(), n.into());
    }
    for key in [
        "unreduced",
        "backlog_urls",
        "history_urls",
        "due_urls",
        "bloom_items",
        "bloom_bytes",
        "bloom_rescued",
    ] {
        let n: Option<u64> = each.iter().map(|v| v[key].as_u64()).sum();
        totals.insert(key.to_string(), n.into());
    }
    totals.into()
}
