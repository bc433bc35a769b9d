//! `fetcher`: fetches one segment of a crawl politely into WARC files (see
//! the library's documentation).

/// mimalloc instead of glibc's allocator: a fetch allocates and frees a
/// response's buffers, URLs and records on one thread and hands them to
/// another, where glibc's malloc and free took about 8 % of the fetcher's CPU
/// (docs/architecture.md, "Why each dependency").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    common::exit::main("fetcher", fetcher::execute)
}
