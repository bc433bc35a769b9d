//! One module per command of the `segmenter` binary: the leaves of the
//! crate. Only the crate root's dispatch ([`crate::execute`]) names them;
//! what two commands share lives in the crawl-state layer
//! ([`crate::state`]) or the round pipeline ([`crate::round`]).

pub(crate) mod import;
pub(crate) mod inject;
pub(crate) mod inspect;
pub(crate) mod next;
pub(crate) mod parquet;
pub(crate) mod prune;
pub(crate) mod repair;
pub(crate) mod report;
pub(crate) mod research;
pub(crate) mod run;
pub(crate) mod wacz;
