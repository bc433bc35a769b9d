//! `fetcher`: fetches one segment of a crawl politely into WARC files (see
//! the library's documentation).

fn main() -> std::process::ExitCode {
    common::exit::main("fetcher", fetcher::execute)
}
