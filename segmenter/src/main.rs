//! `segmenter`: builds the next segments of a crawl from fetched WARC files
//! (see the library's documentation).

fn main() -> std::process::ExitCode {
    common::exit::main("segmenter", segmenter::execute)
}
