//! `segmenter report CRAWL [--out PATH]`: one self-contained HTML file that
//! shows a crawl at a glance: its rounds over time, outcomes, hosts,
//! politeness, the health of its state and where to look next, with charts
//! ([`charts`], drawn by `plotters` as inline SVG). Built from the files the
//! crawl keeps ([`gather`]), never from WARC bodies; written to a temporary
//! file and renamed into place (default `CRAWL/report.html`). A file that is
//! missing or damaged is named on the page, and the rest is shown. A
//! sharded crawl's page adds up every shard's files ([`shards`]) and has a
//! table of the shards. Each round's own report, which the page reads
//! among those files, is written by the round ([`crate::round::report`]).

mod charts;
mod gather;
mod page;
mod shards;

use std::path::{Path, PathBuf};
use std::time::Instant;

use common::crawldir::CrawlDir;

use crate::error::Error;

/// The page's file name in the crawl directory, by default.
pub const DEFAULT_NAME: &str = "report.html";

/// Writes the report of the crawl at `root` to `out` (default
/// `CRAWL/report.html`) and prints its path, size and build time.
pub fn report(root: &Path, out: Option<&Path>) -> Result<(), Error> {
    let started = Instant::now();
    if !root.is_dir() {
        return Err(Error::Usage(format!(
            "{}: not a crawl directory (no such directory); give the directory \
             scripts/crawl.sh crawls",
            root.display()
        )));
    }
    let crawl = CrawlDir::new(root);
    let out: PathBuf = out.map_or_else(|| root.join(DEFAULT_NAME), Path::to_path_buf);
    let page_dir = absolute(
        out.parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new(".")),
    );
    let name = absolute(root).file_name().map_or_else(
        || root.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let place = page::Place {
        name,
        crawl_href: gather::relative(&absolute(root), &page_dir),
        generated: common::timefmt::iso_seconds(std::time::SystemTime::now()),
    };
    let gathered = match common::shards::Shards::load(root) {
        Ok(shards) if shards.is_sharded() => shards::gather(&crawl, &shards),
        Ok(_) => gather::gather(&crawl),
        Err(e) => {
            let mut g = gather::gather(&crawl);
            g.problems
                .insert(0, format!("{e}; the crawl is read as one shard"));
            g
        }
    };
    for problem in &gathered.problems {
        common::runlog::say(format_args!("report: {problem}"));
    }
    let html = page::render(&gathered, &place);
    common::atomic::write_atomic(&out, html.as_bytes()).map_err(Error::io(&out))?;
    let line = format!(
        "{} ({}, {:.2} s)\n",
        out.display(),
        common::human::bytes(html.len() as u64),
        started.elapsed().as_secs_f64()
    );
    common::exit::print(&line).map_err(Error::io("stdout"))
}

/// `path` made absolute against the current directory, `.` and `..`
/// resolved where the directory exists.
fn absolute(path: &Path) -> PathBuf {
    if let Ok(p) = path.canonicalize() {
        return p;
    }
    std::env::current_dir().map_or_else(|_| path.to_path_buf(), |d| d.join(path))
}
