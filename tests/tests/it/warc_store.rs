//! The WARC store (`warc_store = "s3://..."`) against a real S3 server on
//! loopback (moto): a crawl whose WARC files go to the store fetches the
//! same URLs and makes the same next segments as one that keeps them
//! locally, its objects pass `warcio check`, and no credential is written
//! anywhere, and `segmenter index` and `wacz` read the uploaded files back
//! (the package passes `wacz validate`); a crawl of two shards, fetched,
//! mapped and reduced shard by shard, puts each shard's files under
//! `PREFIX/shards/JJJ/` and fetches what it fetches with local files;
//! uploads survive a 503 storm and a store that goes down and
//! comes back; a fetch killed (`kill -9`) during an upload is resumed and
//! uploads everything once; a store gone for good ends the fetch with exit
//! code 4, its files kept, and the next fetch uploads them; an object is
//! never overwritten; the research outputs of uploaded WARC files go to the
//! store beside them, and `segmenter parquet` puts the set under the
//! crawl's prefix.

use crate::support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::store::{Manifest, StoreError, WarcStore};
use testkit::bins::{self, Finished, Signal};
use testkit::demo::{Demo, DemoParams};
use testkit::s3::{Fault, FaultProxy, S3Server, SECRET_KEY};
use testkit::{TempDir, warcio};

use support::{CrawlSettings, DemoCrawl, zstdcat};

const STEP: Duration = Duration::from_secs(120);
const BUCKET: &str = "warcs";

fn demo() -> Demo {
    Demo::with_params(DemoParams {
        crawl_delay: 0.2,
        ..DemoParams::small(11)
    })
}

/// `fetcher fetch CRAWL` reaching the store at `endpoint`, with `args`.
fn fetch(crawl: &Path, endpoint: std::net::SocketAddr, args: &[&str]) -> Command {
    let mut cmd = Command::new(bins::bin_path("fetcher"));
    cmd.arg("fetch")
        .arg(crawl)
        .args(["--progress", "none"])
        .args(args)
        .envs(S3Server::env(endpoint));
    cmd
}

fn segmenter(args: &[&str], crawl: &Path, endpoint: std::net::SocketAddr) -> Command {
    let mut cmd = Command::new(bins::bin_path("segmenter"));
    cmd.arg(args[0])
        .arg(crawl)
        .args(&args[1..])
        .envs(S3Server::env(endpoint));
    cmd
}

fn run(cmd: &mut Command, dir: &Path, code: i32) -> Finished {
    bins::run_within(cmd, dir, code, STEP)
}

/// A second crawl directory beside the demo crawl's, crawling the same
/// server with the same settings and `extra` lines in `[fetcher]`.
fn crawl_beside(c: &DemoCrawl, name: &str, extra: &str) -> PathBuf {
    let dir = c.scratch.path().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let toml = std::fs::read_to_string(c.crawl.join("crawl.toml")).unwrap();
    let toml = toml.replacen("[fetcher]\n", &format!("[fetcher]\n{extra}\n"), 1);
    std::fs::write(dir.join("crawl.toml"), toml).unwrap();
    dir
}

/// A store behind a fault relay, and a crawl directory beside a demo
/// crawl's that keeps its WARC files in `s3://BUCKET/c`, with `extra` lines
/// in `[fetcher]`.
struct Relayed {
    s3: S3Server,
    proxy: FaultProxy,
    c: DemoCrawl,
    crawl: PathBuf,
}

/// A store, and two crawl directories beside a demo crawl's: `local`
/// keeps its WARC files on disk, `stored` in `s3://BUCKET/PREFIX`.
struct LocalAndStored {
    s3: S3Server,
    c: DemoCrawl,
    local: PathBuf,
    stored: PathBuf,
}

fn local_and_stored(name: &str, prefix: &str) -> LocalAndStored {
    let s3 = S3Server::start();
    s3.create_bucket(BUCKET);
    let c = DemoCrawl::start(name, &demo(), CrawlSettings::default());
    let local = crawl_beside(&c, "local", "");
    let stored = crawl_beside(
        &c,
        "stored",
        &format!("warc_store = \"s3://{BUCKET}/{prefix}\""),
    );
    LocalAndStored {
        s3,
        c,
        local,
        stored,
    }
}

fn relayed(name: &str, extra: &str) -> Relayed {
    let s3 = S3Server::start();
    s3.create_bucket(BUCKET);
    let proxy = FaultProxy::start(s3.addr());
    let c = DemoCrawl::start(name, &demo(), CrawlSettings::default());
    let crawl = crawl_beside(
        &c,
        "stored",
        &format!("warc_store = \"s3://{BUCKET}/c\"\n{extra}"),
    );
    Relayed {
        s3,
        proxy,
        c,
        crawl,
    }
}

/// The URLs of a segment file, sorted.
fn segment_urls(path: &Path) -> Vec<String> {
    let mut urls: Vec<String> = zstdcat(path)
        .lines()
        .filter_map(|l| l.split('\t').nth(1).map(str::to_string))
        .collect();
    urls.sort();
    urls
}

/// URLs attempted, from every crawl log of the crawl.
fn attempted(crawl: &Path) -> BTreeSet<String> {
    support::Outcome::read(crawl)
        .log
        .into_iter()
        .map(|(_, l)| l.url)
        .collect()
}

/// Target URIs of the response records of `files`, each once per record.
fn response_urls(files: &[PathBuf]) -> Vec<String> {
    let mut urls = Vec::new();
    for f in files {
        let mut reader = common::warc::WarcReader::open(f, 1 << 22).unwrap();
        let mut rec = common::warc::WarcRecord::default();
        while reader.read_next(&mut rec).unwrap() {
            if rec.record_type() == Some("response") {
                urls.push(rec.target_uri().unwrap_or_default().to_string());
            }
        }
    }
    urls.sort();
    urls
}

/// The objects a run's manifest records, fetched into `into`; checks each
/// against its recorded size and sha256.
fn objects_of(run: &Path, s3: &S3Server, into: &Path) -> Vec<PathBuf> {
    std::fs::create_dir_all(into).unwrap();
    let manifest = Manifest::read(run).unwrap();
    let mut out = Vec::new();
    for up in manifest.uploads() {
        let key = up.url.strip_prefix(&format!("s3://{BUCKET}/")).unwrap();
        let bytes = s3.get(BUCKET, key);
        assert_eq!(bytes.len() as u64, up.size, "{}", up.url);
        let path = into.join(&up.name);
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(common::store::hash_file(&path).unwrap().1, up.sha256);
        if up.name.ends_with(".warc.gz") {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// Every file under `dir` that holds `needle`.
fn files_holding(dir: &Path, needle: &[u8]) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(bytes) = std::fs::read(&p)
                && bytes.windows(needle.len()).any(|w| w == needle)
            {
                found.push(p);
            }
        }
    }
    found
}

#[test]
fn a_crawl_with_its_warcs_in_s3_fetches_and_segments_as_one_with_local_files() {
    let LocalAndStored {
        s3,
        c,
        local,
        stored,
    } = local_and_stored("warc-store-same", "crawl-a");
    let mut outputs = Vec::new();
    for crawl in [&local, &stored] {
        support::inject(crawl, &c.seeds, &c.crawl, STEP);
        for _round in 0..2 {
            outputs.push(run(&mut fetch(crawl, s3.addr(), &[]), crawl, 0));
            outputs.push(run(&mut segmenter(&["run"], crawl, s3.addr()), crawl, 0));
        }
    }
    // The same URLs fetched, the same next segments.
    assert_eq!(attempted(&local), attempted(&stored));
    for id in ["00002", "00003"] {
        let seg = |crawl: &Path| {
            let view = common::crawldir::CrawlDir::new(crawl);
            segment_urls(&view.segment_path(id))
        };
        let (a, b) = (seg(&local), seg(&stored));
        assert!(!a.is_empty(), "segment {id} is empty");
        assert_eq!(a, b, "segment {id} differs");
    }
    // No WARC file is left locally; every object reads back, is what the
    // manifest says, passes warcio check, and holds what the local crawl
    // stored.
    let mut from_store = Vec::new();
    let mut from_local = Vec::new();
    for id in ["00001", "00002"] {
        let run_dir = stored.join("fetched").join(id);
        assert!(run_dir.join("DONE").is_file());
        assert!(
            warcio::warc_files(&run_dir).is_empty(),
            "{}",
            bins::listing(&run_dir)
        );
        let objects = objects_of(&run_dir, &s3, &c.scratch.path().join("objects").join(id));
        assert!(!objects.is_empty());
        warcio::check(&objects).unwrap_or_else(|e| panic!("warcio check: {e}"));
        let keys = s3.keys(BUCKET, &format!("crawl-a/fetched/{id}/"));
        assert_eq!(
            keys.len(),
            Manifest::read(&run_dir).unwrap().uploads().len(),
            "{keys:?}"
        );
        assert!(keys.iter().any(|k| k.ends_with(".cdxj")), "{keys:?}");
        from_store.extend(response_urls(&objects));
        from_local.extend(response_urls(&warcio::warc_files(
            &local.join("fetched").join(id),
        )));
    }
    from_store.sort();
    from_local.sort();
    assert_eq!(from_store, from_local);
    // The secret key is nowhere: not in the crawl, its logs, or any output.
    assert_eq!(
        files_holding(&stored, SECRET_KEY.as_bytes()),
        Vec::<PathBuf>::new()
    );
    for out in &outputs {
        assert!(!out.stdout.contains(SECRET_KEY) && !out.stderr.contains(SECRET_KEY));
    }
    // `segmenter index` reads the uploaded files' indexes from the store:
    // the crawl's index has as many captures as the local crawl's.
    for crawl in [&local, &stored] {
        run(&mut segmenter(&["index"], crawl, s3.addr()), crawl, 0);
    }
    let captures = |crawl: &Path| {
        std::fs::read_to_string(crawl.join("index.cdxj"))
            .unwrap()
            .lines()
            .count()
    };
    assert!(captures(&local) > 10);
    assert_eq!(captures(&local), captures(&stored));
    // `segmenter wacz` packages the uploaded files, read back from the
    // store: `wacz validate` accepts the package, and it lists the pages of
    // the local crawl's.
    let mut listed = Vec::new();
    for crawl in [&local, &stored] {
        let package = crawl.with_extension("wacz");
        run(
            segmenter(&["wacz"], crawl, s3.addr())
                .arg("--out")
                .arg(&package),
            crawl,
            0,
        );
        listed.push(crate::archive_tools::wacz_pages(&package));
    }
    assert!(listed[0].len() > 10, "{} pages", listed[0].len());
    assert_eq!(listed[0], listed[1]);
    // `segmenter import` takes an object of the store.
    let (name, key) = first_upload(&stored.join("fetched/00001"));
    assert!(name.ends_with(".warc.gz"), "{name}");
    let imported = c.scratch.path().join("imported");
    let object = format!("s3://{BUCKET}/{key}");
    run(
        &mut segmenter(
            &["import", &object, "--min-free-disk", "0"],
            &imported,
            s3.addr(),
        ),
        &imported,
        0,
    );
    assert!(
        !segment_urls(&common::crawldir::CrawlDir::new(&imported).segment_path("00001")).is_empty()
    );
    // `segmenter repair` checks the objects against the manifest.
    let ok = run(&mut segmenter(&["repair"], &stored, s3.addr()), &stored, 0);
    assert!(ok.stdout.contains("uploaded files match"), "{}", ok.stdout);
    let (_, key) = first_upload(&stored.join("fetched/00001"));
    s3.put(BUCKET, &key, b"not what was uploaded");
    let bad = run(&mut segmenter(&["repair"], &stored, s3.addr()), &stored, 1);
    assert!(
        bad.stdout.contains(&key) && bad.stdout.contains("size"),
        "{}",
        bad.stdout
    );
}

/// The name and object key of the first upload of a run.
fn first_upload(run: &Path) -> (String, String) {
    let m = Manifest::read(run).unwrap();
    let up = &m.uploads()[0];
    let key = up.url.strip_prefix(&format!("s3://{BUCKET}/")).unwrap();
    (up.name.clone(), key.to_string())
}

/// Small WARC files (several per run) and a short retry time.
const MANY_FILES: &str = "warc_max_size = \"4KiB\"\nwarc_store_retry = \"20s\"";

#[test]
fn uploads_ride_out_a_503_storm_and_a_store_that_goes_down_and_comes_back() {
    let Relayed {
        s3,
        proxy,
        c,
        crawl,
    } = relayed("warc-store-faults", MANY_FILES);
    support::inject(&crawl, &c.seeds, &c.crawl, STEP);
    // A storm of 503s: every upload is retried until it lands.
    proxy.slow_down(12);
    run(&mut fetch(&crawl, proxy.addr(), &[]), &crawl, 0);
    let (_, faulted) = proxy.counts();
    assert_eq!(faulted, 12);
    let run1 = crawl.join("fetched/00001");
    assert!(run1.join("DONE").is_file());
    let objects = objects_of(&run1, &s3, &c.scratch.path().join("o1"));
    assert!(objects.len() >= 2, "{} files", objects.len());
    assert!(warcio::warc_files(&run1).is_empty());
    let log_pages = stored_in_log(&run1);
    assert_eq!(response_urls(&objects), log_pages);

    // The store goes down after the first upload of the next run, and
    // comes back two seconds later: nothing is lost, nothing stored twice.
    run(&mut segmenter(&["run"], &crawl, proxy.addr()), &crawl, 0);
    proxy.down_after_puts(proxy.puts() + 1);
    let fetching = bins::spawn(&mut fetch(&crawl, proxy.addr(), &[])).unwrap();
    std::thread::sleep(Duration::from_secs(2));
    proxy.set(Fault::None);
    proxy.down_after_puts(usize::MAX);
    let out = fetching.finish(STEP);
    bins::assert_code(&out, 0, Some(&crawl));
    assert!(proxy.counts().1 > 12, "the store never went down");
    let run2 = crawl.join("fetched/00002");
    assert!(run2.join("DONE").is_file());
    let objects = objects_of(&run2, &s3, &c.scratch.path().join("o2"));
    // Each response once: none lost, none stored twice.
    assert_eq!(response_urls(&objects), stored_in_log(&run2));
}

/// The store answering again: the next fetch of segment 00001 uploads
/// what a run left, writes `DONE`, keeps no local WARC file, and every
/// response the crawl log names is stored once.
fn fetch_again_uploads_everything(crawl: &Path, proxy: &FaultProxy, s3: &S3Server, scratch: &Path) {
    let run1 = crawl.join("fetched/00001");
    proxy.set(Fault::None);
    run(&mut fetch(crawl, proxy.addr(), &[]), crawl, 0);
    assert!(run1.join("DONE").is_file());
    assert!(
        warcio::warc_files(&run1).is_empty(),
        "{}",
        bins::listing(&run1)
    );
    let objects = objects_of(&run1, s3, &scratch.join("o"));
    assert_eq!(response_urls(&objects), stored_in_log(&run1));
}

/// URLs the crawl log of `run` says got an HTTP response, robots.txt
/// included (as the WARC holds them), once per response, sorted.
fn stored_in_log(run: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(run.join("crawl.log")).unwrap();
    let mut urls: Vec<String> = text
        .lines()
        .filter_map(|l| common::crawllog::parse_line(l).ok())
        .filter(|l| matches!(l.status, common::crawllog::Status::Http(_)))
        .map(|l| l.url)
        .collect();
    urls.sort();
    urls
}

#[test]
fn a_fetch_killed_during_an_upload_is_resumed_and_uploads_everything_once() {
    let Relayed {
        s3,
        proxy,
        c,
        crawl,
    } = relayed("warc-store-kill", MANY_FILES);
    support::inject(&crawl, &c.seeds, &c.crawl, STEP);
    // The first upload hangs; the fetcher is killed while it waits.
    proxy.set(Fault::Hold);
    let fetching = bins::spawn(&mut fetch(&crawl, proxy.addr(), &[])).unwrap();
    let deadline = std::time::Instant::now() + STEP;
    while proxy.counts().1 == 0 {
        assert!(std::time::Instant::now() < deadline, "no upload was tried");
        std::thread::sleep(Duration::from_millis(20));
    }
    fetching.signal(Signal::Kill).unwrap();
    let killed = fetching.finish(STEP);
    assert_ne!(killed.code(), Some(0));
    let run1 = crawl.join("fetched/00001");
    assert!(!run1.join("DONE").exists());
    fetch_again_uploads_everything(&crawl, &proxy, &s3, c.scratch.path());
}

#[test]
fn a_store_gone_for_good_ends_the_fetch_with_exit_4_and_the_next_fetch_uploads() {
    let Relayed {
        s3,
        proxy,
        c,
        crawl,
    } = relayed(
        "warc-store-down",
        "warc_max_size = \"4KiB\"\nwarc_store_retry = \"1s\"",
    );
    proxy.set(Fault::Down);
    // crawl.sh: the fetch cannot upload; the crawl stops with exit code 4,
    // saying so, the round open.
    let mut crawl_sh = Command::new(support::crawl_sh());
    crawl_sh
        .arg(&crawl)
        .arg("--bin")
        .arg(bins::bin_dir())
        .arg("--seeds")
        .arg(&c.seeds)
        .envs(S3Server::env(proxy.addr()));
    let out = support::Background::start(crawl_sh, c.scratch.path(), "crawl-sh").finish(STEP);
    bins::assert_code(&out, 4, Some(&crawl));
    assert!(
        out.stderr.contains("could not upload its WARC files"),
        "{}",
        out.stderr
    );
    assert!(!out.stdout.contains(SECRET_KEY) && !out.stderr.contains(SECRET_KEY));
    let run1 = crawl.join("fetched/00001");
    let log = std::fs::read_dir(crawl.join("logs"))
        .unwrap()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect::<String>();
    assert!(
        log.contains(&format!("s3://{BUCKET}/c/fetched/00001/")),
        "{log}"
    );
    assert!(log.contains("DONE is not written"), "{log}");
    assert!(!run1.join("DONE").exists());
    let kept = warcio::warc_files(&run1);
    assert!(kept.len() >= 2, "{}", bins::listing(&run1));
    assert_eq!(response_urls(&kept), stored_in_log(&run1));

    // The store is back: the next fetch of the segment uploads everything
    // and completes the run, fetching nothing twice.
    fetch_again_uploads_everything(&crawl, &proxy, &s3, c.scratch.path());
    assert_eq!(
        files_holding(&crawl, SECRET_KEY.as_bytes()),
        Vec::<PathBuf>::new()
    );
}

#[test]
fn two_attempts_of_one_task_never_overwrite_an_object() {
    let s3 = S3Server::start();
    s3.create_bucket(BUCKET);
    let scratch = TempDir::new("warc-store-attempts");
    let env = S3Server::env(s3.addr())
        .into_iter()
        .map(|(k, v)| (k.to_string(), v));
    let store = WarcStore::open_with_env(&format!("s3://{BUCKET}/t"), env).unwrap();
    let a = scratch.path().join("a.warc.gz");
    std::fs::write(&a, b"first attempt").unwrap();
    let key = store.key_of(Path::new("fetched/00001/a.warc.gz"));
    let up = store.upload(&a, &key).unwrap();
    assert_eq!(up.url, format!("s3://{BUCKET}/t/fetched/00001/a.warc.gz"));
    // The same bytes again (a killed attempt's upload, redone): fine.
    assert_eq!(store.upload(&a, &key).unwrap(), up);
    // Another attempt with other bytes under the same name: refused.
    std::fs::write(&a, b"second attempt").unwrap();
    let e = store.upload(&a, &key).unwrap_err();
    assert!(matches!(e, StoreError::Collision { .. }), "{e}");
    assert_eq!(s3.get(BUCKET, &key), b"first attempt");
    // A file larger than a part goes up in parts, and reads back whole.
    let big = scratch.path().join("big.warc.gz");
    let bytes = noise(common::store::PART_SIZE + 300_000, 7);
    std::fs::write(&big, &bytes).unwrap();
    let key = store.key_of(Path::new("fetched/00001/big.warc.gz"));
    let up = store.upload(&big, &key).unwrap();
    assert_eq!(up.size, bytes.len() as u64);
    assert!(s3.get(BUCKET, &key) == bytes);
    // Through a staging name, copied create-if-absent and removed.
    assert_eq!(
        s3.keys(BUCKET, "t/fetched/00001/"),
        ["t/fetched/00001/a.warc.gz", "t/fetched/00001/big.warc.gz"]
    );
    // The copy is create-if-absent on the server: one that finds the
    // object there (another upload between the look and the copy) leaves
    // it as it was.
    s3.put(BUCKET, "t/other.uploading", b"other bytes");
    assert!(!store.copy_if_absent("t/other.uploading", &key).unwrap());
    assert!(s3.get(BUCKET, &key) == bytes);
    assert!(
        store
            .copy_if_absent("t/other.uploading", "t/other")
            .unwrap()
    );
    assert_eq!(s3.get(BUCKET, "t/other"), b"other bytes");
    std::fs::write(&big, b"short").unwrap();
    assert!(matches!(
        store.upload(&big, &key).unwrap_err(),
        StoreError::Collision { .. }
    ));
}

/// `n` bytes that do not compress, from `seed`.
fn noise(n: usize, seed: u64) -> Vec<u8> {
    let mut rng = testkit::Rng::new(seed);
    (0..n).map(|_| rng.next_u64() as u8).collect()
}

#[test]
fn a_store_without_server_side_copies_takes_large_files_straight_to_their_names() {
    let s3 = S3Server::start();
    s3.create_bucket(BUCKET);
    let proxy = FaultProxy::start(s3.addr());
    proxy.refuse_copies();
    let scratch = TempDir::new("warc-store-no-copies");
    let env = S3Server::env(proxy.addr())
        .into_iter()
        .map(|(k, v)| (k.to_string(), v));
    let store = WarcStore::open_with_env(&format!("s3://{BUCKET}/t"), env).unwrap();
    let size = common::store::PART_SIZE + 300_000;
    let mut keys = Vec::new();
    for (i, seed) in [(0, 1), (1, 2)] {
        let file = scratch.path().join(format!("big-{i}.warc.gz"));
        let bytes = noise(size, seed);
        std::fs::write(&file, &bytes).unwrap();
        let key = store.key_of(&Path::new("fetched/00001").join(file.file_name().unwrap()));
        let refused_before = proxy.counts().1;
        let up = store.upload(&file, &key).unwrap();
        assert_eq!(up.size, size as u64);
        assert!(s3.get(BUCKET, &key) == bytes, "{key}: not the file's bytes");
        let refused = proxy.counts().1 - refused_before;
        if i == 0 {
            // The copy was asked for (and retried), refused, and the file
            // went up again to its own name.
            assert!(refused >= 1, "no copy was asked for");
        } else {
            // Once refused, never asked again.
            assert_eq!(refused, 0);
        }
        keys.push(key);
    }
    // No staging object left behind.
    assert_eq!(s3.keys(BUCKET, "t/"), keys);
    // Other bytes under a name taken: the look before the upload refuses
    // them, and the object stays as it was.
    let other = scratch.path().join("big-0.warc.gz");
    std::fs::write(&other, noise(size, 3)).unwrap();
    let e = store.upload(&other, &keys[0]).unwrap_err();
    assert!(matches!(e, StoreError::Collision { .. }), "{e}");
    assert!(s3.get(BUCKET, &keys[0]) == noise(size, 1));
}

/// `segmenter inject CRAWL SEEDS --shards 2`.
fn inject_shards(crawl: &Path, seeds: &Path) {
    let mut cmd = Command::new(bins::bin_path("segmenter"));
    cmd.arg("inject")
        .arg(crawl)
        .arg(seeds)
        .args(["--shards", "2", "--min-free-disk", "0"]);
    run(&mut cmd, crawl, 0);
}

/// One round of a 2-shard crawl as a cluster runs it, step by step: every
/// shard's fetch (`--shard J`), then every shard's map, then every shard's
/// reduce.
fn sharded_round(crawl: &Path, endpoint: std::net::SocketAddr) {
    let top = common::crawldir::CrawlDir::new(crawl);
    for j in 0..2u32 {
        if !top.shard(j).pending_segments().unwrap().is_empty() {
            let shard = j.to_string();
            run(&mut fetch(crawl, endpoint, &["--shard", &shard]), crawl, 0);
        }
    }
    for step in ["map", "reduce"] {
        for j in 0..2u32 {
            let shard = j.to_string();
            run(
                &mut segmenter(&[step, "--shard", &shard], crawl, endpoint),
                crawl,
                0,
            );
        }
    }
}

#[test]
fn a_sharded_crawl_with_its_warcs_in_s3_fetches_as_one_with_local_files() {
    let LocalAndStored {
        s3,
        c,
        local,
        stored,
    } = local_and_stored("warc-store-shards", "sharded");
    for crawl in [&local, &stored] {
        inject_shards(crawl, &c.seeds);
        for _round in 0..2 {
            sharded_round(crawl, s3.addr());
        }
    }
    let shard_roots = |crawl: &Path| -> Vec<PathBuf> {
        let top = common::crawldir::CrawlDir::new(crawl);
        (0..2).map(|j| top.shard(j).root().to_path_buf()).collect()
    };
    let attempted_all = |crawl: &Path| -> BTreeSet<String> {
        shard_roots(crawl)
            .iter()
            .flat_map(|r| attempted(r))
            .collect()
    };
    // The same URLs fetched, over two rounds of both shards.
    let urls = attempted_all(&local);
    assert!(urls.len() > 10, "{} URLs", urls.len());
    assert_eq!(urls, attempted_all(&stored));
    // Each shard's runs went to PREFIX/shards/JJJ/fetched/ID/, all of
    // them, and hold what the local crawl stored; nothing is left locally.
    let mut from_store = Vec::new();
    let mut from_local = Vec::new();
    let mut runs = 0;
    for (j, (s_root, l_root)) in shard_roots(&stored)
        .into_iter()
        .zip(shard_roots(&local))
        .enumerate()
    {
        let view = common::crawldir::CrawlDir::new(&stored).shard(j as u32);
        for id in ["00001", "00002"] {
            let run_dir = s_root.join("fetched").join(id);
            if !run_dir.exists() {
                continue;
            }
            runs += 1;
            assert!(run_dir.join("DONE").is_file());
            assert!(run_dir.join("mapped/DONE").is_file());
            assert!(
                warcio::warc_files(&run_dir).is_empty(),
                "{}",
                bins::listing(&run_dir)
            );
            let prefix = format!("sharded/shards/{j:03}/fetched/{id}/");
            let keys = s3.keys(BUCKET, &prefix);
            let manifest = Manifest::read(&run_dir).unwrap();
            assert_eq!(keys.len(), manifest.uploads().len(), "{keys:?}");
            for up in manifest.uploads() {
                assert_eq!(up.url, format!("s3://{BUCKET}/{prefix}{}", up.name));
            }
            let into = c.scratch.path().join(format!("objects-{j}-{id}"));
            let objects = objects_of(&run_dir, &s3, &into);
            assert!(!objects.is_empty(), "shard {j} run {id}");
            from_store.extend(response_urls(&objects));
            from_local.extend(response_urls(&warcio::warc_files(
                &l_root.join("fetched").join(id),
            )));
        }
        let consumed = std::fs::read_to_string(view.consumed_path()).unwrap_or_default();
        assert!(!consumed.is_empty(), "shard {j}: no run consumed");
    }
    assert!(runs >= 3, "{runs} runs fetched");
    // Nothing outside the shards' prefixes.
    let all = s3.keys(BUCKET, "sharded/");
    assert!(
        all.iter().all(|k| k.starts_with("sharded/shards/")),
        "{all:?}"
    );
    from_store.sort();
    from_local.sort();
    assert!(!from_store.is_empty());
    assert_eq!(from_store, from_local);
}

#[test]
fn research_outputs_of_a_crawl_in_s3_go_beside_its_warcs_and_the_set_under_its_prefix() {
    let LocalAndStored { s3, c, stored, .. } = local_and_stored("warc-store-research", "crawl-r");
    support::inject(&stored, &c.seeds, &c.crawl, STEP);
    run(&mut fetch(&stored, s3.addr(), &[]), &stored, 0);
    // The round writes the Parquet index (on by default), `research` the
    // WET and WAT files, each from a copy of the uploaded WARC file.
    run(&mut segmenter(&["run"], &stored, s3.addr()), &stored, 0);
    run(
        &mut segmenter(&["research"], &stored, s3.addr()),
        &stored,
        0,
    );
    run(&mut segmenter(&["parquet"], &stored, s3.addr()), &stored, 0);

    let keys = s3.keys(BUCKET, "crawl-r/");
    let warcs: Vec<&String> = keys
        .iter()
        .filter(|k| k.ends_with(".warc.gz") && !k.ends_with(".wet.gz") && !k.ends_with(".wat.gz"))
        .collect();
    assert!(!warcs.is_empty(), "{keys:?}");
    let run_dir = stored.join("fetched").join("00001");
    let manifest = Manifest::read(&run_dir).unwrap();
    for w in &warcs {
        let stem = w.trim_end_matches(".warc.gz");
        for suffix in [".parquet", ".warc.wet.gz", ".warc.wat.gz"] {
            let key = format!("{stem}{suffix}");
            assert!(keys.contains(&key), "{key} not in the store: {keys:?}");
            let name = key.rsplit('/').next().unwrap();
            assert!(manifest.get(name).is_some(), "{name} not in the manifest");
            assert!(!run_dir.join(name).exists(), "{name} left locally");
        }
    }
    // The gathered set is under the crawl's prefix; its rows are the
    // responses of the crawl log.
    let set: Vec<&String> = keys
        .iter()
        .filter(|k| k.starts_with("crawl-r/parquet/"))
        .collect();
    assert!(!set.is_empty(), "{keys:?}");
    let copies = c.scratch.path().join("set");
    std::fs::create_dir_all(&copies).unwrap();
    for k in &set {
        std::fs::write(
            copies.join(k.rsplit('/').next().unwrap()),
            s3.get(BUCKET, k),
        )
        .unwrap();
    }
    let log = std::fs::read_to_string(run_dir.join("crawl.log")).unwrap();
    let responses = log
        .lines()
        .filter(|l| {
            l.split('\t')
                .nth(1)
                .is_some_and(|s| s.bytes().all(|b| b.is_ascii_digit()))
        })
        .count();
    let rows = support::python_json(
        "import duckdb, sys; print(duckdb.sql(f\"select count(*) from read_parquet('{sys.argv[1]}/*.parquet')\").fetchall()[0][0])",
        &[&copies],
    );
    assert_eq!(rows, responses as u64);
}
