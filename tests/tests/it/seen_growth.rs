//! The seen-set grows with the crawl: a crawl started with
//! `--bloom-items 1000` that schedules over 50,000 distinct URLs in a few
//! rounds (the real fetcher and segmenter, against a generated web on
//! loopback) grows its Bloom filter several times and schedules exactly
//! what the same crawl with a filter large from the start schedules, round
//! by round: no URL is lost to a false positive (those it makes are
//! rescued, and counted).

use crate::support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use testkit::TempDir;
use testkit::bins;
use testkit::report::figure;
use testkit::server::{Request, Response, Server};

use support::zstdcat;

/// Hosts of the web.
const HOSTS: usize = 8;
/// Links from a page to its children.
const FANOUT: u64 = 500;
/// Rounds of the crawl (fetch, then segment).
const ROUNDS: usize = 4;

/// Page `n` of host `h` (served on `port`): links to its `FANOUT`
/// children (pages `n·FANOUT + 1 ...`), back to its parent and the home
/// page, and to the home pages of the next two hosts: most links of a
/// round are found many times, or were seen in an earlier round.
fn page(h: usize, port: &str, n: u64) -> String {
    let mut body = String::with_capacity(20 * FANOUT as usize);
    body.push_str("<html><body>");
    for i in 1..=FANOUT {
        body.push_str(&format!("<a href=/p/{}>c</a>", n * FANOUT + i));
    }
    body.push_str(&format!(
        "<a href=/p/{}>up</a><a href=/>home</a>",
        n / FANOUT
    ));
    for d in 1..=2 {
        body.push_str(&format!(
            "<a href=http://w{}.test:{port}/>next</a>",
            (h + d) % HOSTS
        ));
    }
    body.push_str("</body></html>");
    body
}

fn answer(h: usize, req: &Request) -> Response {
    let port = req
        .header("host")
        .and_then(|v| v.rsplit_once(':'))
        .map_or("80", |(_, p)| p);
    let path = req.path();
    if path == "/" {
        return Response::html(page(h, port, 0));
    }
    match path.strip_prefix("/p/").and_then(|n| n.parse().ok()) {
        Some(n) => Response::html(page(h, port, n)),
        None => Response::not_found(),
    }
}

/// A crawl directory for the web, made with `inject_flags`.
struct Crawl {
    root: PathBuf,
    /// The segmenter's reports, one per round.
    reports: Vec<String>,
}

impl Crawl {
    fn start(dir: &Path, server: &Server, hosts_file: &Path, inject_flags: &[&str]) -> Crawl {
        let root = dir.to_path_buf();
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(
            root.join("crawl.toml"),
            format!(
                "[agent]\nname = \"growbot\"\nurl = \"https://example.org/bot.html\"\n\n\
                 [fetcher]\nallow_private = true\nhosts_file = \"{}\"\nmin_delay = \"0ms\"\n\
                 delay_factor = 0\ntail_share = 0\n\n\
                 [segmenter]\nmax_per_host = 5\n",
                hosts_file.display()
            ),
        )
        .unwrap();
        let seeds = dir.with_extension("seeds");
        let lines: String = (0..HOSTS)
            .map(|h| format!("{}\n", server.url(&format!("w{h}.test"), "/")))
            .collect();
        std::fs::write(&seeds, lines).unwrap();
        let out = bins::run(
            bins::segmenter_cmd()
                .arg("inject")
                .arg(&root)
                .arg(&seeds)
                .args(inject_flags),
            &root,
        );
        Crawl {
            root,
            reports: vec![out.stderr],
        }
    }

    /// Fetches the segment waiting, then segments what it fetched.
    fn round(&mut self) {
        let next = format!("{:05}", self.reports.len());
        bins::run_within(
            bins::fetcher_cmd()
                .arg("fetch")
                .arg(&self.root)
                .arg(&next)
                .args(["--progress", "none"]),
            &self.root,
            0,
            Duration::from_secs(120),
        );
        let out = bins::run(
            bins::segmenter_cmd()
                .arg("run")
                .arg(&self.root)
                .env_remove("SEGMENTER_PAUSE_AT"),
            &self.root,
        );
        self.reports.push(out.stderr);
    }

    /// The URLs of segment `id`, in their order.
    fn segment(&self, id: &str) -> Vec<String> {
        let path = self.root.join("segments").join(format!("{id}.v5.tsv.zst"));
        zstdcat(&path)
            .lines()
            .map(|l| l.split('\t').nth(1).unwrap().to_string())
            .collect()
    }

    /// Every URL scheduled, in the segments and the backlog: each once.
    fn scheduled(&self) -> BTreeSet<String> {
        let backlog = self.root.join("backlog.v5.tsv.zst");
        let all: Vec<String> = (1..=self.reports.len())
            .flat_map(|i| self.segment(&format!("{i:05}")))
            .chain(
                zstdcat(&backlog)
                    .lines()
                    .map(|l| l.split('\t').nth(1).unwrap().to_string()),
            )
            .collect();
        let set: BTreeSet<String> = all.iter().cloned().collect();
        if set.len() != all.len() {
            let mut seen = BTreeSet::new();
            let twice: Vec<&String> = all.iter().filter(|u| !seen.insert(*u)).collect();
            panic!(
                "{}: {} URLs scheduled twice: {:?}",
                self.root.display(),
                twice.len(),
                &twice[..twice.len().min(20)]
            );
        }
        set
    }

    /// The sum of a report figure over the rounds.
    fn total(&self, key: &str) -> u64 {
        self.reports
            .iter()
            .map(|r| if r.contains(key) { figure(r, key) } else { 0 })
            .sum()
    }

    fn growths(&self) -> Vec<&str> {
        self.reports
            .iter()
            .flat_map(|r| r.lines().filter(|l| l.starts_with("bloom growth:")))
            .collect()
    }
}

#[test]
fn a_filter_started_small_grows_and_schedules_what_a_large_one_does() {
    let mut builder = Server::builder();
    for h in 0..HOSTS {
        builder = builder.host(format!("w{h}.test"), move |r: &Request| answer(h, r));
    }
    let server = builder.start().unwrap();
    let scratch = TempDir::new("seen-growth");
    let hosts_file = scratch.path().join("hosts");
    std::fs::write(&hosts_file, server.hosts_file()).unwrap();

    let mut small = Crawl::start(
        &scratch.path().join("small"),
        &server,
        &hosts_file,
        &["--bloom-items", "1000"],
    );
    let mut large = Crawl::start(&scratch.path().join("large"), &server, &hosts_file, &[]);
    for _ in 0..ROUNDS {
        small.round();
        large.round();
    }

    // Round by round, the same segments, in the same order.
    for i in 1..=ROUNDS + 1 {
        let id = format!("{i:05}");
        assert!(
            small.segment(&id) == large.segment(&id),
            "segment {id} differs:\n{}\n---\n{}",
            small.reports[i - 1],
            large.reports[i - 1]
        );
    }
    let (s, l) = (small.scheduled(), large.scheduled());
    let lost: Vec<&String> = l.difference(&s).collect();
    let extra: Vec<&String> = s.difference(&l).collect();
    let growths = small.growths();
    println!(
        "URLs scheduled: {} with --bloom-items 1000, {} with a 10 M filter; false \
         rejections: {}; scheduled by the small filter only: {}; rescued: {} (small), {} \
         (large); growths of the small filter: {}",
        s.len(),
        l.len(),
        lost.len(),
        extra.len(),
        small.total("rescued:"),
        large.total("rescued:"),
        growths.len()
    );
    for g in &growths {
        println!("    {g}");
    }
    assert!(s.len() >= 50_000, "{}", s.len());
    assert!(lost.is_empty() && extra.is_empty(), "{lost:?} {extra:?}");
    assert!(growths.len() >= 2, "{growths:?}");
    assert!(large.growths().is_empty());
    // The small filter made false positives, and each was rescued.
    assert!(small.total("rescued:") > 0);
    // It ends below its design load, like every round (its count of items
    // leaves out the few URLs that set no new bit).
    let last = small.reports.last().unwrap();
    let bloom = last.lines().find(|l| l.starts_with("bloom:")).unwrap();
    let items: u64 = bloom.split_whitespace().nth(1).unwrap().parse().unwrap();
    let design: u64 = bloom.split_whitespace().nth(4).unwrap().parse().unwrap();
    assert!(
        items <= design && items as usize >= s.len() * 99 / 100,
        "{bloom}"
    );
}
