//! The pages the fetch benchmark's server sends (`bench_server` in the
//! fetcher's examples), for other benchmarks that want the same page: prose
//! in HTML with a link every 17 words or so (about 69 links in 10 KB).

/// Pages of `len` bytes that compress like prose in HTML (about 3:1; a
/// repeated sentence compresses 50:1 and would make compressing look
/// cheap): words drawn from a small vocabulary, with links and markup.
/// Several different pages, so that no two neighbours are the same.
pub fn prose_pages(len: usize) -> Vec<Vec<u8>> {
    const WORDS: &[&str] = &[
        "the", "of", "and", "to", "in", "is", "was", "for", "on", "that", "with", "as", "by",
        "crawler", "archive", "record", "server", "page", "link", "host", "round", "segment",
        "request", "response", "delay", "policy", "robots", "network", "latency", "figure",
        "measured", "between", "without", "another", "through", "several", "history", "library",
        "village", "mountain", "river", "winter", "summer", "market", "station", "council",
        "report", "century", "museum", "garden", "harbour", "festival", "bridge", "school",
    ];
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    (0..16)
        .map(|_| {
            let mut page =
                String::from("<!doctype html><html><head><title>bench</title></head><body>\n");
            while page.len() < len {
                page.push_str("<p>");
                for _ in 0..(8 + next() % 24) {
                    let w = WORDS[(next() % WORDS.len() as u64) as usize];
                    if next() % 17 == 0 {
                        page.push_str(&format!("<a href=\"/page/{}\">{w}</a> ", next() % 1000));
                    } else {
                        page.push_str(w);
                        page.push(' ');
                    }
                }
                page.push_str(&format!("{}.</p>\n", next() % 100_000));
            }
            page.truncate(len);
            page.into_bytes()
        })
        .collect()
}
