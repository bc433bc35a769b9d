//! Test support shared by the fetcher's, the segmenter's and the end-to-end
//! tests: loopback HTTP servers with request logs, the demo web, and helpers
//! to find and run the project's binaries and `warcio`.
//!
//! - [`server`]: hosts on their own loopback addresses (`127.0.0.2`, ...)
//!   answering from closures or route tables, with misbehaviours (never
//!   answering, trickling, huge bodies, gzip bombs, cut bodies) and a
//!   request log per host; [`server::assert_polite`] checks politeness from
//!   the server's side.
//!   [`server::tls`] puts HTTPS in front of them, with certificates from a
//!   CA made at test time.
//! - [`demo`]: the demo web generated from a seed, its link graph, and the
//!   set of URLs a correct crawl fetches ([`demo::Demo::expected`]).
//! - [`rounds`]: the rounds benchmark's web, one large host and many small
//!   ones, whose politeness floor is known.
//! - [`scale`]: the scale benchmark's web, thousands of hosts whose pages
//!   and links are computed from their URLs, what a correct crawl of it
//!   fetches, its PageRank, and a one-thread server that counts what a
//!   polite crawl never does.
//! - [`bins`]: the project's binaries next to the test executable, run with
//!   a timeout and a report on failure.
//! - [`warcio`]: the real `warcio check` and `warcio index`.
//! - [`dns`]: a DNS server on loopback that answers, fails (`NXDOMAIN`,
//!   `SERVFAIL`), is slow or silent, and counts queries.
//! - [`proxy`]: an HTTP proxy on loopback (`CONNECT` tunnels and requests
//!   in absolute form) that logs what it was asked.
//! - [`s3`]: an S3 server on loopback (moto) and a relay in front of it
//!   that answers 503 or goes down, for the WARC store's tests.
//! - [`docs`]: the documentation checked against the programs (the
//!   `crawl.toml` reference, the links between the Markdown files).
//! - [`defaults`]: each setting's declared default against its `--help`
//!   and the guide.
//! - [`segment`]: segments of given URLs, for tests and benchmarks.
//! - [`labelled`]: pages whose charset, languages and near-duplicates are
//!   known, for the research outputs' detection.
//! - [`prom`]: metrics files as Prometheus' own parser reads them.
//! - [`serving`]: what the programs serving a web to scripts share (errors
//!   naming their subject, the ready file, signals).
//! - [`files`]: directory trees copied, and read to compare before and after.
//! - [`lol_html_reader`]: the link extractor's former reader (`lol_html`),
//!   the oracle of its replacement.
//! - [`prose`]: the pages the fetch benchmark's server sends.
//! - [`tempdir`]: the temporary directory of every test ([`TempDir`],
//!   kept and named when the test fails) and a crawl directory in one.
//! - [`Rng`]: the seeded generator of every test (`common::testutil::Rng`).
//!
//! The package also builds the `demo-web` binary, which serves the demo web
//! (or the rounds web, or a synthetic many-host web for benchmarks) to
//! scripts, and `scale-web`, which serves and describes the scale web.
#![deny(missing_docs)]

pub mod bins;
pub mod defaults;
pub mod demo;
pub mod dns;
pub mod docs;
pub mod files;
pub mod labelled;
pub mod lol_html_reader;
#[cfg(test)]
mod modgraph;
pub mod prom;
pub mod prose;
pub mod proxy;
pub mod report;
pub mod rounds;
pub mod s3;
pub mod scale;
pub mod segment;
pub mod server;
pub mod serving;
pub mod tempdir;
pub mod warcio;

pub use common::testutil::Rng;
pub use tempdir::TempDir;

/// `data` compressed as one gzip member (the default level): a body sent
/// with `Content-Encoding: gzip`, a `.gz` file.
pub fn gzip(data: impl AsRef<[u8]>) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data.as_ref()).expect("writing to memory");
    e.finish().expect("writing to memory")
}

/// The repository root (the directory above this package): where
/// `scripts/` and `docs/` are.
pub fn repo_root() -> std::path::PathBuf {
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().unwrap_or(manifest).to_path_buf()
}

/// The generator behind the generated webs ([`demo`], [`rounds`]) for
/// `seed`: the seed is mixed with a constant first, as it always was, so
/// that every seed keeps giving the same web.
pub(crate) fn web_rng(seed: u64) -> Rng {
    Rng::new(seed ^ 0x5DEE_CE66_D1CE_4E5B)
}
