//! Test support shared by the fetcher's, the segmenter's and the end-to-end
//! tests: loopback HTTP servers with request logs, the demo web, and helpers
//! to find and run the project's binaries and `warcio`.
#![deny(missing_docs)]

pub mod bins;
pub mod demo;
pub mod server;
pub mod warcio;
