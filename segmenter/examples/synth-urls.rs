//! Synthetic URLs for the segmenter's throughput benchmark: N lines over H
//! hosts (grouped three to a registrable domain, under several public
//! suffixes), skewed so that a few hosts have far more URLs than the
//! per-host cap, with about 10 % repeats of recent URLs and about 2 % URLs
//! that a filter refuses (repeated path segments, too long, too many
//! parameters). Deterministic.
//!
//! ```text
//! cargo run --release -p segmenter --example synth-urls -- N HOSTS OUT_FILE
//! ```

use std::io::{BufWriter, Write};

const SUFFIXES: [&str; 5] = ["com", "org", "net", "co.uk", "de"];
const WORDS: [&str; 16] = [
    "news", "blog", "post", "item", "page", "docs", "about", "archive", "tag", "user", "story",
    "view", "list", "topic", "help", "media",
];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() != 3 {
        eprintln!("usage: synth-urls N HOSTS OUT_FILE");
        std::process::exit(2);
    }
    let n: u64 = args[0].parse().expect("N");
    let hosts: u64 = args[1].parse().expect("HOSTS");
    let file = std::fs::File::create(&args[2]).expect("output file");
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    let mut recent: Vec<String> = Vec::with_capacity(1024);
    let mut line = String::new();
    for i in 0..n {
        line.clear();
        let r = next();
        if r % 10 == 0 && !recent.is_empty() {
            line.push_str(&recent[(r >> 8) as usize % recent.len()]);
        } else {
            // Skewed host: index = H · u², so low indices are frequent.
            let u = (next() >> 11) as f64 / (1u64 << 53) as f64;
            let h = ((hosts as f64) * u * u) as u64;
            let suffix = SUFFIXES[(h / 3 % SUFFIXES.len() as u64) as usize];
            let sub = ["www", "blog", "shop"][(h % 3) as usize];
            let w1 = WORDS[(r >> 16) as usize % WORDS.len()];
            let w2 = WORDS[(r >> 24) as usize % WORDS.len()];
            let id = next() % 1_000_000_000;
            use std::fmt::Write as _;
            let _ = write!(line, "https://{sub}.site{}.{suffix}/{w1}/{w2}/{id}", h / 3);
            match (r >> 32) % 1000 {
                0..=9 => line.push_str("/x/x/x/x"),
                10 => line.push_str(&"y".repeat(2100)),
                11..=19 => line.push_str("?a=1&b=2&c=3&d=4&e=5&f=6&g=7&h=8&i=9&j=10&k=11"),
                20..=59 => line.push_str("?page=2&sort=date"),
                _ => {}
            }
            if recent.len() < 1024 {
                recent.push(line.clone());
            } else {
                recent[(i % 1024) as usize].clone_from(&line);
            }
        }
        line.push('\n');
        out.write_all(line.as_bytes()).expect("write");
    }
    out.flush().expect("flush");
}
