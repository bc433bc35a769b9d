//! The crawl-state layer: what a crawl directory's files say, read by
//! the commands, the driver's decisions ([`crate::cycle`]) and the HTML
//! report, of one machine's crawl or of each shard.

pub(crate) mod mapped;
pub(crate) mod report_summaries;
pub(crate) mod reports;
pub(crate) mod runs;
pub(crate) mod status;
pub(crate) mod warcs;
