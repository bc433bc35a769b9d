//! The integration tests of `common`: one test binary, one module per topic.

mod warc_bombs;
