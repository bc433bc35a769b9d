//! Measurements of the seen-set for `scripts/bench-segment.sh bloom`.
//!
//! ```text
//! bloom-bench rebuild CRAWL DESIGN   # CRAWL/seen.bloom rebuilt from the exact sets for DESIGN URLs
//! bloom-bench fill FILE DESIGN N     # a new filter for DESIGN URLs holding N synthetic URLs
//! bloom-bench pages DESIGN K         # bytes an in-place write of K new URLs would dirty
//! bloom-bench layers N START         # a scalable Bloom filter (layers) against one rebuilt filter
//! ```
//!
//! `rebuild` is the work of a growth (the round does the same, into its
//! staging directory); `layers` is the design not chosen, measured: layers
//! of twice the capacity and half the false-positive rate of the one
//! before (so that their rates sum to at most the target), starting at
//! START URLs, filled with N; then N URLs never inserted are looked up.

use std::path::Path;
use std::time::Instant;

use common::bloom::{BloomFilter, BloomHash, BloomParams};
use common::crawldir::{CONSUMED_LIST, CrawlDir};
use segmenter::seen::{ExactSets, rebuild};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| -> &str {
        args.get(i).map(String::as_str).unwrap_or_else(|| {
            eprintln!("usage: see the doc comment of segmenter/examples/bloom-bench.rs");
            std::process::exit(2)
        })
    };
    let num = |i: usize| -> u64 { arg(i).parse().expect("a number") };
    match arg(0) {
        "rebuild" => rebuild_crawl(Path::new(arg(1)), num(2)),
        "fill" => fill(Path::new(arg(1)), num(2), num(3)),
        "pages" => pages(num(1), num(2)),
        "layers" => layers(num(1), num(2)),
        other => {
            eprintln!("bloom-bench: unknown mode {other}");
            std::process::exit(2)
        }
    }
}

/// A synthetic URL (`tag` keeps sets apart).
fn key(tag: &str, i: u64) -> String {
    format!(
        "https://www.site{}.example/{tag}/page-{i}.html",
        i % 100_003
    )
}

fn rebuild_crawl(root: &Path, design: u64) {
    let crawl = CrawlDir::new(root);
    let consumed: Vec<String> = common::listfile::read(&crawl.consumed_path(), &CONSUMED_LIST)
        .expect("consumed.txt")
        .unwrap_or_default()
        .into_iter()
        .map(|(_, id)| id)
        .collect();
    let sets = ExactSets::of_crawl(&crawl, &consumed).expect("the exact sets");
    let tmp = root.join("seen.bloom.rebuilding");
    let _ = std::fs::remove_file(&tmp);
    let params = BloomParams::optimal(design, 0.01).expect("parameters");
    let started = Instant::now();
    let mut filter = BloomFilter::create(&tmp, params).expect("a new filter");
    let counts = rebuild(&sets, &mut filter, None).expect("the rebuild");
    filter.seal().expect("sealed");
    let secs = started.elapsed().as_secs_f64();
    let items = filter.items();
    drop(filter);
    std::fs::rename(&tmp, crawl.bloom_path()).expect("renamed into place");
    println!(
        "rebuilt {} for {design} URLs ({} bytes) from {} URLs ({}) in {secs:.3} s: {:.0} URLs/s, \
         {items} items",
        crawl.bloom_path().display(),
        params.file_bytes(),
        counts.urls(),
        counts.describe(),
        counts.urls() as f64 / secs
    );
}

fn fill(path: &Path, design: u64, n: u64) {
    let _ = std::fs::remove_file(path);
    let params = BloomParams::optimal(design, 0.01).expect("parameters");
    let started = Instant::now();
    let f = BloomFilter::create(path, params).expect("a new filter");
    for i in 0..n {
        f.insert(key("fill", i).as_bytes());
    }
    f.seal().expect("sealed");
    println!(
        "{}: {} items for a design load of {design} ({} bytes) in {:.1} s",
        path.display(),
        f.items(),
        params.file_bytes(),
        started.elapsed().as_secs_f64()
    );
}

fn pages(design: u64, k: u64) {
    let params = BloomParams::optimal(design, 0.01).expect("parameters");
    let page_count = params.file_bytes().div_ceil(4096) as usize;
    let mut touched = vec![false; page_count];
    for i in 0..k {
        for bit in BloomHash::of(key("new", i).as_bytes()).positions(params.bits, params.hashes) {
            touched[((64 + bit / 8) / 4096) as usize] = true;
        }
    }
    let dirty = touched.iter().filter(|&&t| t).count() as u64;
    println!(
        "in place: {k} new URLs in a filter for {design} ({} bytes) dirty {dirty} of {page_count} \
         pages: {} bytes written",
        params.file_bytes(),
        dirty * 4096
    );
}

/// A scalable Bloom filter: layers of growing capacity and tightening rate.
struct Layers {
    layers: Vec<(BloomFilter, u64)>,
    capacity: u64,
    fp: f64,
}

impl Layers {
    fn new(start: u64, target: f64) -> Layers {
        let mut l = Layers {
            layers: Vec::new(),
            capacity: start,
            fp: target / 2.0,
        };
        l.add_layer();
        l
    }

    fn add_layer(&mut self) {
        let params = BloomParams::optimal(self.capacity, self.fp).expect("parameters");
        let f = BloomFilter::empty("layer", params).expect("a layer");
        self.layers.push((f, self.capacity));
        self.capacity *= 2;
        self.fp /= 2.0;
    }

    fn contains(&self, h: BloomHash) -> bool {
        self.layers.iter().any(|(f, _)| f.contains_hash(h))
    }

    fn insert(&mut self, h: BloomHash) {
        if self.contains(h) {
            return;
        }
        let (last, cap) = self.layers.last().expect("a layer");
        if last.items() >= *cap {
            self.add_layer();
        }
        self.layers.last().expect("a layer").0.insert_hash(h);
    }

    fn bytes(&self) -> u64 {
        self.layers
            .iter()
            .map(|(f, _)| f.params().file_bytes())
            .sum()
    }
}

/// Fills with `n` keys, then looks up `n` others: (seconds to fill, measured
/// false-positive rate, ns per lookup).
fn probe(
    n: u64,
    mut insert: impl FnMut(BloomHash),
    contains: impl Fn(BloomHash) -> bool,
) -> (f64, f64, f64) {
    let started = Instant::now();
    for i in 0..n {
        insert(BloomHash::of(key("in", i).as_bytes()));
    }
    let fill = started.elapsed().as_secs_f64();
    let hashes: Vec<BloomHash> = (0..n)
        .map(|i| BloomHash::of(key("out", i).as_bytes()))
        .collect();
    let started = Instant::now();
    let fp = hashes.iter().filter(|h| contains(**h)).count();
    let lookup = started.elapsed().as_secs_f64();
    (fill, fp as f64 / n as f64, lookup * 1e9 / n as f64)
}

fn layers(n: u64, start: u64) {
    let target = 0.01;
    let layered = std::cell::RefCell::new(Layers::new(start, target));
    let (fill, fp, ns) = probe(
        n,
        |h| layered.borrow_mut().insert(h),
        |h| layered.borrow().contains(h),
    );
    let l = layered.borrow();
    println!(
        "layers:  {} layers from {start} URLs, {} bytes ({:.2} bits/URL) for {n} URLs; filled \
         in {fill:.1} s (growth: no reading); measured false-positive rate {:.4} % (target {} %); \
         lookup {ns:.0} ns",
        l.layers.len(),
        l.bytes(),
        l.bytes() as f64 * 8.0 / n as f64,
        fp * 100.0,
        target * 100.0
    );
    // What growth by rebuild leaves: one filter, its design load doubled
    // from `start` until it holds the items.
    let mut design = start;
    while design < n {
        design *= 2;
    }
    let single =
        BloomFilter::empty("single", BloomParams::optimal(design, target).unwrap()).unwrap();
    let (fill, fp, ns) = probe(
        n,
        |h| {
            single.insert_hash(h);
        },
        |h| single.contains_hash(h),
    );
    println!(
        "rebuilt: 1 filter for {design} URLs, {} bytes ({:.2} bits/URL) for {n} URLs; filled in \
         {fill:.1} s (growth: the exact sets read again); measured false-positive rate {:.4} % \
         (target {} %); lookup {ns:.0} ns",
        single.params().file_bytes(),
        single.params().file_bytes() as f64 * 8.0 / n as f64,
        fp * 100.0,
        target * 100.0
    );
}
