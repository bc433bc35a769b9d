//! A synthetic fetch history for the segmenter's history benchmark: N URLs
//! over H hosts (one registrable domain each, `siteNNNNNNN.com`), written
//! as `history.v1.tsv.zst` (format version 1, which `segmenter run` still
//! reads) in the documented format (header, lines sorted by domain, host
//! and URL, counted and hashed end line). Every URL was fetched
//! 40 days before now with a 30-day interval; `DUE_PERCENT` of them are due
//! now, the others in 1 to 30 days, or, with SPREAD_S, evenly over the next
//! SPREAD_S seconds (so that rounds run one after another each find the
//! URLs that came due since the one before). Deterministic but for the
//! times.
//!
//! ```text
//! cargo run --release -p segmenter --example synth-history -- N HOSTS DUE_PERCENT OUT_FILE [SPREAD_S]
//! ```

use std::io::{BufWriter, Write};
use std::time::{Duration, SystemTime};

use common::timefmt::iso_millis;
use xxhash_rust::xxh3::Xxh3;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if !(4..=5).contains(&args.len()) {
        eprintln!("usage: synth-history N HOSTS DUE_PERCENT OUT_FILE [SPREAD_S]");
        std::process::exit(2);
    }
    let spread_ms: Option<u64> = args
        .get(4)
        .map(|s| s.parse::<u64>().expect("SPREAD_S") * 1000);
    let n: u64 = args[0].parse().expect("N");
    let hosts: u64 = args[1].parse().expect("HOSTS");
    let due_percent: u64 = args[2].parse().expect("DUE_PERCENT");
    let file = std::fs::File::create(&args[3]).expect("output file");
    let mut out = zstd::stream::write::Encoder::new(BufWriter::with_capacity(1 << 20, file), 3)
        .expect("zstd")
        .auto_finish();
    let now = SystemTime::now();
    let fetched = iso_millis(now - Duration::from_secs(40 * 86_400));
    let due_now = iso_millis(now - Duration::from_secs(10 * 86_400));
    let per_host = n / hosts;
    let mut hash = Xxh3::new();
    let mut line = String::with_capacity(512);
    let mut written = 0u64;
    writeln!(out, "# history v1").unwrap();
    for h in 0..hosts {
        let host = format!("site{h:07}.com");
        let count = per_host + u64::from(h < n % hosts);
        for u in 0..count {
            let i = written;
            let due = if i * 7919 % 100 < due_percent {
                due_now.clone()
            } else if let Some(spread) = spread_ms {
                // (A stride coprime with most spreads: hosts get URLs due
                // all over it.)
                let at = i.wrapping_mul(0x9E37_79B9) % spread.max(1);
                iso_millis(now + Duration::from_millis(1 + at))
            } else {
                iso_millis(now + Duration::from_secs(86_400 * (1 + i % 30)))
            };
            line.clear();
            use std::fmt::Write as _;
            let _ = writeln!(
                line,
                "{host}\thttp://{host}/page/{u:08}\t{}\t{fetched}\t200\t2592000\t{}\t0\t{due}\tactive\t\
                 sha1:{:032X}\t\"{:x}\"\tTue, 24 Nov 2026 10:00:00 GMT",
                1 + u % 5,
                i % 3,
                i.wrapping_mul(0x9E37_79B9_7F4A_7C15),
                i
            );
            hash.update(line.as_bytes());
            out.write_all(line.as_bytes()).unwrap();
            written += 1;
        }
    }
    writeln!(out, "# end {written} xxh3 {:016x}", hash.digest()).unwrap();
}
