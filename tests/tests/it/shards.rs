//! A sharded crawl (`segmenter inject --shards S`): its layout, the
//! fetcher on one shard, and the same demo web crawled to its end with one
//! shard and with four (map and reduce through `segmenter run`), which must
//! fetch the same pages, each once, politely.

use crate::support;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::crawldir::CrawlDir;
use common::shards::{ShardKey, Shards};
use testkit::bins::{self, Finished};
use testkit::demo::{Demo, DemoParams};

use support::{CrawlSettings, DemoCrawl, Outcome, without_port, zstdcat};

/// Bound of one program run in these tests.
const STEP: Duration = Duration::from_secs(120);
/// Bound of the number of rounds of a crawl of the small demo.
const MAX_ROUNDS: usize = 40;

/// The settings of a sharded crawl of the demo: failing hosts are parked
/// (asked once a day) after failing for 2 s. On the real web the backoff
/// holds a dead host past the end of a round (`backoff_max` 1 h against
/// 30-minute rounds); with these tests' 1 s it would not, and since the URLs
/// of a host that fails as a whole use no try, the demo's dead hosts would
/// be in every segment: a driver that goes on while a segment waits (the
/// Slurm driver, [`crawl_to_the_end`]) would never end.
pub(crate) fn settings() -> CrawlSettings {
    CrawlSettings {
        fetcher_extra: "park_after = \"2s\"\n".into(),
        ..CrawlSettings::default()
    }
}

pub(crate) fn demo() -> Demo {
    Demo::with_params(DemoParams {
        crawl_delay: 0.2,
        ..DemoParams::small(7)
    })
}

fn segmenter(args: &[&str], crawl: &Path) -> Command {
    let mut cmd = Command::new(bins::bin_path("segmenter"));
    cmd.args(&args[..1]).arg(crawl).args(&args[1..]);
    cmd
}

fn run(cmd: &mut Command, dir: &Path, code: i32) -> Finished {
    bins::run_within(cmd, dir, code, STEP)
}

/// `fetcher fetch CRAWL [--shard J]` with the settings of `crawl.toml`.
fn fetch(c: &DemoCrawl, shard: Option<u32>) -> Command {
    let mut cmd = Command::new(bins::bin_path("fetcher"));
    cmd.arg("fetch").arg(&c.crawl).args(["--progress", "none"]);
    if let Some(j) = shard {
        cmd.arg("--shard").arg(j.to_string());
    }
    cmd
}

/// The earliest time a URL of the oldest pending segment of `view` may be
/// fetched (`None`: no segment; now or earlier: something to fetch).
fn earliest(view: &CrawlDir) -> Option<i64> {
    let id = view.pending_segments().unwrap().into_iter().next()?;
    let mut reader = common::segment::SegmentReader::open(view.segment_path(&id)).unwrap();
    let mut rec = common::segment::SegmentRecord::default();
    let mut first = i64::MAX;
    while reader.read_next(&mut rec).unwrap() {
        first = first.min(rec.not_before.unwrap_or(0));
    }
    Some(first)
}

/// Fetches every shard's pending segment, then `segmenter run`, until no
/// shard has a segment to fetch; the number of rounds. When every URL left
/// waits (the demo's host that fails), it waits as `crawl.sh` would.
pub(crate) fn crawl_to_the_end(c: &DemoCrawl, shards: u32) -> usize {
    let top = CrawlDir::new(&c.crawl);
    let views: Vec<(CrawlDir, Option<u32>)> = if shards > 1 {
        (0..shards).map(|j| (top.shard(j), Some(j))).collect()
    } else {
        vec![(top.clone(), None)]
    };
    for round in 0..MAX_ROUNDS {
        let Some(first) = views.iter().filter_map(|(v, _)| earliest(v)).min() else {
            return round;
        };
        let now = common::timefmt::unix_millis(std::time::SystemTime::now());
        if first > now {
            std::thread::sleep(Duration::from_millis((first - now).min(15_000) as u64 + 50));
        }
        for (view, arg) in &views {
            if !view.pending_segments().unwrap().is_empty() {
                run(&mut fetch(c, *arg), &c.crawl, 0);
            }
        }
        run(&mut segmenter(&["run"], &c.crawl), &c.crawl, 0);
    }
    panic!(
        "{}: still fetching after {MAX_ROUNDS} rounds",
        c.crawl.display()
    );
}

/// Pages stored (robots.txt left out), without ports, with their count.
fn pages(outcomes: &[Outcome]) -> Vec<(String, usize)> {
    let mut all: std::collections::BTreeMap<String, usize> = Default::default();
    for o in outcomes {
        for (url, stored) in o.pages_stored() {
            *all.entry(without_port(url)).or_default() += stored.len();
        }
    }
    all.into_iter().collect()
}

/// The URLs of the fetch histories in `dirs` (their generations merged), without ports.
fn history_urls(dirs: &[std::path::PathBuf]) -> BTreeSet<String> {
    let mut urls = BTreeSet::new();
    for dir in dirs {
        for line in crate::support::history_text(dir).lines() {
            let url = line.split('\t').nth(1).expect("a URL column");
            assert!(
                urls.insert(without_port(url)),
                "{url} twice in the histories"
            );
        }
    }
    urls
}

#[test]
fn inject_with_shards_splits_the_seeds_by_host_and_fixes_the_layout() {
    let demo = demo();
    let c = DemoCrawl::start("shards-layout", &demo, CrawlSettings::default());
    let crawl = c.crawl.to_string_lossy().into_owned();
    let seeds = c.seeds.to_string_lossy().into_owned();
    run(
        Command::new(bins::bin_path("segmenter"))
            .args(["inject", &crawl, &seeds, "--shards", "4", "--key", "host"]),
        &c.crawl,
        0,
    );
    let text = std::fs::read_to_string(c.crawl.join("shards.toml")).unwrap();
    assert!(
        text.contains("version = 1\nshards = 4\nkey = \"host\"\n"),
        "{text}"
    );
    let shards = Shards::load(&c.crawl).unwrap();
    assert_eq!(shards, Shards::new(4, ShardKey::Host).unwrap());
    // Each seed is in its shard's first segment, and only there.
    let mut seen_seeds = BTreeSet::new();
    let top = CrawlDir::new(&c.crawl);
    for j in 0..4 {
        let view = top.shard(j);
        assert!(view.root().join("logs").is_dir(), "shard {j} laid out");
        for id in view.segment_ids().unwrap() {
            for line in zstdcat(&view.segment_path(&id)).lines() {
                let mut f = line.split('\t');
                let host = f.next().unwrap();
                let url = f.next().unwrap();
                assert_eq!(shards.shard_of(host), j, "{url} in shard {j}");
                assert!(seen_seeds.insert(url.to_string()), "{url} twice");
            }
        }
    }
    let seed_urls: BTreeSet<String> = std::fs::read_to_string(&c.seeds)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| common::urlnorm::canonicalize(l.trim()).unwrap().to_string())
        .collect();
    assert_eq!(seen_seeds, seed_urls);
    assert!(
        (0..4)
            .filter(|&j| !top.shard(j).segment_ids().unwrap().is_empty())
            .count()
            >= 2,
        "the seeds' hosts spread over the shards"
    );
    // The scope is the crawl's, at the root: every seed's domain.
    let scope = std::fs::read_to_string(c.crawl.join("scope.seeds")).unwrap();
    for url in &seed_urls {
        let u = url::Url::parse(url).unwrap();
        let domain = common::urlnorm::registrable_domain(u.host_str().unwrap());
        assert!(scope.lines().any(|l| l == domain), "{domain} in\n{scope}");
    }
    assert!(!c.crawl.join(".inject-shards").exists());
    assert!(!c.crawl.join("segments").read_dir().unwrap().any(|_| true));

    // Fixed at creation: another count is refused, nothing changes.
    let out = run(
        Command::new(bins::bin_path("segmenter")).args(["inject", &crawl, &seeds, "--shards", "2"]),
        &c.crawl,
        2,
    );
    assert!(
        out.stderr.contains("fixed when it was created"),
        "{}",
        out.stderr
    );
    assert_eq!(
        std::fs::read_to_string(c.crawl.join("shards.toml")).unwrap(),
        text
    );

    // The crawl cycle answers for every shard: the first round fetches
    // segment 00001 (an array of tasks, for scripts/slurm/crawl.sh).
    let out = run(&mut segmenter(&["next"], &c.crawl), &c.crawl, 0);
    assert!(
        out.stdout.starts_with("fetch 00001 logs/round-00001.log "),
        "{}",
        out.stdout
    );

    // The fetcher needs a shard, in range.
    let out = run(&mut fetch(&c, None), &c.crawl, 2);
    assert!(
        out.stderr.contains("give --shard J (0 to 3)"),
        "{}",
        out.stderr
    );
    let out = run(&mut fetch(&c, Some(4)), &c.crawl, 2);
    assert!(out.stderr.contains("numbered 0 to 3"), "{}", out.stderr);
    // With one, it touches its shard's files only.
    let j = (0..4)
        .find(|&j| !top.shard(j).segment_ids().unwrap().is_empty())
        .unwrap();
    run(&mut fetch(&c, Some(j)), &c.crawl, 0);
    let view = top.shard(j);
    assert!(view.is_fetched("00001"));
    assert!(view.hosts_db_path().exists());
    assert!(!top.hosts_db_path().exists() && !top.fetched_dir("00001").exists());
    for k in (0..4).filter(|&k| k != j) {
        assert!(
            !top.shard(k).hosts_db_path().exists(),
            "shard {k} untouched"
        );
    }

    // A map killed (kill -9) with its output complete but not yet renamed
    // into place leaves nothing a reduce reads; run again, it is done.
    let shard = j.to_string();
    let mut cmd = segmenter(&["map"], &c.crawl);
    cmd.args(["--shard", &shard])
        .env("SEGMENTER_PAUSE_AT", "mapped");
    let child = bins::spawn(&mut cmd).expect("cannot start the segmenter");
    let run_dir = view.fetched_dir("00001");
    let marker = run_dir.join(".mapped-tmp/DONE");
    let deadline = std::time::Instant::now() + STEP;
    while !marker.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(marker.exists(), "the map never wrote its marker");
    std::thread::sleep(Duration::from_millis(100));
    child.signal(bins::Signal::Kill).unwrap();
    child.finish(Duration::from_secs(10));
    assert!(!run_dir.join("mapped").exists());
    let out = run(
        segmenter(&["reduce"], &c.crawl).args(["--shard", &shard]),
        &c.crawl,
        0,
    );
    assert!(out.stderr.contains("not mapped yet"), "{}", out.stderr);
    run(
        segmenter(&["map"], &c.crawl).args(["--shard", &shard]),
        &c.crawl,
        0,
    );
    assert!(run_dir.join("mapped/DONE").is_file());
    assert!(!run_dir.join(".mapped-tmp").exists());
    let done = std::fs::read_to_string(run_dir.join("mapped/DONE")).unwrap();
    assert!(
        done.starts_with("segmenter-mapped v3\nRUN 00001\n") && done.ends_with("end\n"),
        "{done}"
    );
    run(
        segmenter(&["reduce"], &c.crawl).args(["--shard", &shard]),
        &c.crawl,
        0,
    );
    let consumed = std::fs::read_to_string(view.consumed_path()).unwrap();
    assert!(
        consumed.lines().any(|l| l == "00001")
            && consumed.lines().any(|l| l == format!("00001-s{j:03}")),
        "{consumed}"
    );
}

#[test]
fn one_shard_and_four_shards_fetch_the_same_pages_each_once_politely() {
    let demo = demo();
    let one = DemoCrawl::start("shards-one", &demo, settings());
    support::inject(&one.crawl, &one.seeds, &one.crawl, STEP);
    let four = DemoCrawl::start("shards-four", &demo, settings());
    run(
        segmenter(&["inject"], &four.crawl)
            .arg(&four.seeds)
            .args(["--shards", "4"]),
        &four.crawl,
        0,
    );
    // The two crawls, each of its own servers, side by side.
    let (rounds_one, rounds_four) = std::thread::scope(|s| {
        let one = s.spawn(|| crawl_to_the_end(&one, 1));
        let four = crawl_to_the_end(&four, 4);
        (one.join().unwrap(), four)
    });
    let pages_one = pages(&[one.outcome()]);
    let top = CrawlDir::new(&four.crawl);
    let outcomes: Vec<Outcome> = (0..4).map(|j| Outcome::read(top.shard(j).root())).collect();
    let pages_four = pages(&outcomes);

    assert!(pages_one.len() > 30, "{} pages", pages_one.len());
    let twice: Vec<_> = pages_four.iter().filter(|(_, n)| *n > 1).collect();
    assert!(twice.is_empty(), "fetched more than once: {twice:?}");
    let set_one: BTreeSet<&String> = pages_one.iter().map(|(u, _)| u).collect();
    let set_four: BTreeSet<&String> = pages_four.iter().map(|(u, _)| u).collect();
    assert_eq!(
        set_one.symmetric_difference(&set_four).collect::<Vec<_>>(),
        Vec::<&&String>::new(),
        "one shard: {} pages in {rounds_one} rounds; four: {} pages in {rounds_four} rounds",
        set_one.len(),
        set_four.len()
    );
    // The same URLs in the fetch history (the shards' histories together).
    let history_one = history_urls(std::slice::from_ref(&one.crawl));
    let history_four = history_urls(
        &(0..4)
            .map(|j| top.shard(j).root().to_path_buf())
            .collect::<Vec<_>>(),
    );
    assert!(history_one.len() >= set_one.len());
    assert_eq!(
        history_one
            .symmetric_difference(&history_four)
            .collect::<Vec<_>>(),
        Vec::<&String>::new()
    );
    eprintln!(
        "equivalence: one shard {} pages in {rounds_one} rounds, four shards {} pages in \
         {rounds_four} rounds; {} URLs in the history of each",
        set_one.len(),
        set_four.len(),
        history_one.len()
    );
    let violations = four.politeness_violations();
    assert!(violations.is_empty(), "{violations:?}");
    // Every shard's runs were consumed by the reduces: nothing left behind.
    for j in 0..4 {
        let view = top.shard(j);
        let consumed = std::fs::read_to_string(view.consumed_path()).unwrap_or_default();
        for id in view.completed_runs().unwrap() {
            assert!(
                consumed.lines().any(|l| l == id),
                "shard {j}: {id} consumed"
            );
            assert!(view.fetched_dir(&id).join("mapped/DONE").is_file());
        }
    }
}
