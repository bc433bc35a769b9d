//! Running the real `warcio check` and `warcio index` on WARC files.
