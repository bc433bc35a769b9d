//! The segmenter's integration tests: one test binary, one module per topic.
//! Each runs the real `segmenter` on crawl directories written by the test
//! (fetched runs made with `common::warc`); `support` holds what they share.

mod bad_input;
mod budgets;
mod crash;
mod foreign_warcs;
mod full_disk;
mod history;
mod inject;
mod planning;
mod progress;
mod repair;
mod rescue;
mod round_report;
mod rounds;
mod settings;
mod settings_sample;
mod sort;
mod support;
mod warc_formats;
