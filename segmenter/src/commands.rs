//! One module per command of the `segmenter` binary: the leaves of the
//! crate. Only the crate root's dispatch ([`crate::execute`]) names them;
//! what two commands share lives here (checking
//! an input file), in the crawl-state layer ([`crate::state`]) or in the
//! round pipeline ([`crate::round`]).

pub(crate) mod import;
pub(crate) mod index;
pub(crate) mod inject;
pub(crate) mod inspect;
pub(crate) mod metrics;
pub(crate) mod next;
pub(crate) mod parquet;
pub(crate) mod prune;
pub(crate) mod repair;
pub(crate) mod report;
pub(crate) mod research;
pub(crate) mod run;
pub(crate) mod status;
pub(crate) mod wacz;

use std::path::Path;

use crate::error::Error;

/// Checks that an input named on the command line is a readable file.
pub(crate) fn input_file(path: &Path) -> Result<(), Error> {
    let meta = std::fs::metadata(path).map_err(Error::io(path))?;
    if !meta.is_file() {
        return Err(Error::Io {
            path: path.to_path_buf(),
            source: std::io::Error::other("not a file"),
        });
    }
    Ok(())
}
