//! Measures how fast the segment format is written and read.
//!
//! ```text
//! cargo run --release -p common --example bench_segment -- [LINES] [DIR]
//! ```
//! Writes LINES (default 5,000,000) URL records grouped by host, like a real
//! segment, into a file in DIR (default: the system temp directory), reads
//! them back with `SegmentReader`, prints lines/s for both and removes the file.
//!
//! Besides wall-clock rates it prints rates per second of CPU time spent by
//! this (single) thread, read from `/proc/thread-self/schedstat` on Linux:
//! on a busy machine those show what the format costs, not how loaded the
//! machine was.

use std::time::Instant;

use common::segment::{SegmentReader, SegmentRecord, SegmentWriter, Via};

fn main() {
    let mut args = std::env::args().skip(1);
    let lines: u64 = match args.next() {
        Some(s) => s.parse().unwrap_or_else(|_| {
            eprintln!("bench_segment: LINES must be a number, not {s:?}");
            std::process::exit(2)
        }),
        None => 5_000_000,
    };
    let dir = args.next().map_or_else(std::env::temp_dir, Into::into);
    let path = dir.join(format!("bench-segment-{}.v5.tsv.zst", std::process::id()));

    // Records are built before timing so that only the format is measured.
    // About 200 URLs per host, paths of realistic length and variety.
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let records: Vec<SegmentRecord> = (0..lines)
        .map(|i| {
            let host = format!("www.site{}.example", i / 200);
            let r = next();
            SegmentRecord {
                url: format!(
                    "https://{host}/section-{}/article-{:x}.html?page={}",
                    r % 40,
                    r >> 24,
                    r % 7
                ),
                host,
                hops: (r % 5) as u32,
                inlinks: (r % 13) as u32,
                via: if r % 10 == 0 {
                    Via::Redirect
                } else {
                    Via::Link
                },
                tries: 0,
                not_before: None,
                ..SegmentRecord::default()
            }
        })
        .collect();
    let text_bytes: usize = records
        .iter()
        .map(|r| r.host.len() + r.url.len() + 14)
        .sum();

    let (start, cpu_start) = (Instant::now(), cpu_seconds());
    let mut w = SegmentWriter::create(&path).unwrap_or_else(|e| fail(&e));
    for r in &records {
        w.write(r).unwrap_or_else(|e| fail(&e));
    }
    w.finish().unwrap_or_else(|e| fail(&e));
    let write_s = start.elapsed().as_secs_f64();
    let write_cpu = cpu_seconds().zip(cpu_start).map(|(b, a)| b - a);
    let file_bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    drop(records);

    let (start, cpu_start) = (Instant::now(), cpu_seconds());
    let mut r = SegmentReader::open(&path).unwrap_or_else(|e| fail(&e));
    let mut rec = SegmentRecord::default();
    let mut read = 0u64;
    let mut check = 0u64;
    while r.read_next(&mut rec).unwrap_or_else(|e| fail(&e)) {
        read += 1;
        check = check.wrapping_add(rec.url.len() as u64 + u64::from(rec.hops));
    }
    let read_s = start.elapsed().as_secs_f64();
    let read_cpu = cpu_seconds().zip(cpu_start).map(|(b, a)| b - a);
    let _ = std::fs::remove_file(&path);
    assert_eq!(read, lines, "read back a different number of lines");

    println!(
        "lines {lines}, text {:.1} MB, file {:.1} MB ({:.1} bytes/line)",
        text_bytes as f64 / 1e6,
        file_bytes as f64 / 1e6,
        file_bytes as f64 / lines.max(1) as f64
    );
    report("write", lines, text_bytes, write_s, write_cpu);
    report("read", lines, text_bytes, read_s, read_cpu);
    println!("(checksum {check})");
}

fn report(what: &str, lines: u64, text_bytes: usize, wall: f64, cpu: Option<f64>) {
    print!(
        "{what:<5}: {wall:.2} s wall, {:.0} lines/s, {:.0} MB/s of text",
        lines as f64 / wall,
        text_bytes as f64 / 1e6 / wall
    );
    match cpu {
        Some(cpu) => println!(
            "; {cpu:.2} s CPU, {:.0} lines per CPU-second",
            lines as f64 / cpu
        ),
        None => println!(),
    }
}

/// CPU time this thread has run, in seconds (Linux only).
fn cpu_seconds() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}

fn fail(e: &dyn std::error::Error) -> ! {
    eprintln!("bench_segment: {e}");
    std::process::exit(1)
}
