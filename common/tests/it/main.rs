//! The integration tests of `common`: one test binary, one module per
//! topic. Its global allocator is [`watch_alloc`]'s; `full_disk` runs its
//! test in a process of its own.

mod alloc_counts;
mod full_disk;
mod warc_bombs;
mod warc_index;
mod watch_alloc;
