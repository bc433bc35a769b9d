//! A crawl on a small filesystem (a tmpfs of 4 MB mounted by the test) with
//! a free-space floor: the fetch ends cleanly at the floor (stop reason
//! `disk`), `crawl.sh` exits 3 with a line saying what to free, every file
//! is valid, a step that would cross the floor refuses to start and changes
//! nothing, and once space comes back the crawl goes on to the same end as
//! a crawl that never stopped. Mounting needs root: where the test cannot
//! mount, it says so and passes without running. Also: a new crawl whose
//! seen-set would not fit on an 8 MB filesystem is refused at the floor.

use crate::support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use testkit::TempDir;
use testkit::bins;
use testkit::server::{Request, Response, Server};

use support::Outcome;

const PAGES: usize = 60;

/// About 100 KB of letters: about 60 KB once deflated into a WARC record.
fn page(i: usize) -> String {
    let mut x = (i as u32).wrapping_mul(2_654_435_761).wrapping_add(11);
    let text: String = (0..100_000)
        .map(|_| {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            char::from(b'a' + (x >> 27) as u8 % 26)
        })
        .collect();
    format!("<p>{text}</p>")
}

/// A tmpfs mounted at a directory, unmounted on drop.
struct Mount(PathBuf);

impl Mount {
    /// Mounts a tmpfs of `size` at `dir`, or says why it cannot.
    fn tmpfs(dir: &Path, size: &str) -> Result<Mount, String> {
        std::fs::create_dir_all(dir).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "mount -t tmpfs failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(Mount(dir.to_path_buf()))
    }

    /// Gives the filesystem `size` (space coming back).
    fn resize(&self, size: &str) {
        let out = Command::new("mount")
            .args(["-o", &format!("remount,size={size}")])
            .arg(&self.0)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

fn web() -> Server {
    let home: String = (0..PAGES).map(|i| format!("<a href=/b{i}>b</a>")).collect();
    Server::builder()
        .host("big.test", move |req: &Request| match req.path() {
            "/robots.txt" => Response::not_found(),
            "/" => Response::html(home.clone()),
            p => {
                let i: usize = p.trim_start_matches("/b").parse().unwrap_or(0);
                Response::html(page(i))
            }
        })
        .start()
        .unwrap()
}

/// A crawl directory at `crawl` for `server`, with `floor` as min_free_disk.
fn setup(crawl: &Path, scratch: &Path, server: &Server, floor: &str) -> PathBuf {
    std::fs::create_dir_all(crawl).unwrap();
    let hosts = scratch.join("hosts");
    std::fs::write(&hosts, server.hosts_file()).unwrap();
    let seeds = scratch.join("seeds.txt");
    std::fs::write(&seeds, format!("{}\n", server.url("big.test", "/"))).unwrap();
    std::fs::write(
        crawl.join("crawl.toml"),
        format!(
            "[agent]\nname = \"testbot\"\nurl = \"https://example.org/testbot.html\"\n\
             [crawl]\nround_time = \"30s\"\nmin_free_disk = \"{floor}\"\n\
             [fetcher]\nallow_private = true\nhosts_file = \"{}\"\nmin_delay = \"20ms\"\n\
             delay_factor = 0\n\
             [segmenter]\nbloom_items = 1000\n",
            hosts.display()
        ),
    )
    .unwrap();
    seeds
}

fn crawl_sh_run(crawl: &Path, seeds: &Path, dir: &Path, code: i32) -> bins::Finished {
    support::crawl_sh_seeds(crawl, seeds, dir, code, Duration::from_secs(120))
}

fn stored(crawl: &Path) -> BTreeSet<String> {
    Outcome::read(crawl)
        .stored
        .iter()
        .filter(|s| s.status == 200)
        .map(|s| s.url.clone())
        .collect()
}

/// Every file under `dir` but the logs, lock files and the driver's own
/// records of its last step (`round.json`, which says that the step was
/// refused, and the metrics files, which say it failed), with its bytes.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    testkit::files::snapshot(dir, |p| {
        p.starts_with("logs")
            || p.starts_with("metrics")
            || p.to_string_lossy().ends_with(".lock")
            || p == Path::new("round.json")
    })
    .into_iter()
    .collect()
}

#[test]
fn a_crawl_stops_at_the_disk_floor_and_goes_on_when_space_comes_back() {
    let scratch = TempDir::new("disk-floor");
    let server = web();
    let mnt = scratch.path().join("mnt");
    let mount = match Mount::tmpfs(&mnt, "4m") {
        Ok(m) => m,
        Err(why) => {
            eprintln!("SKIPPED: this test needs to mount a tmpfs (root): {why}");
            return;
        }
    };
    let crawl = mnt.join("crawl");
    let seeds = setup(&crawl, scratch.path(), &server, "2MB");

    // Round 1 fetches the home page; round 2 fills the disk to the floor.
    let out = crawl_sh_run(&crawl, &seeds, scratch.path(), 3);
    let line = out
        .stderr
        .lines()
        .find(|l| l.contains("free-disk floor"))
        .unwrap_or_else(|| panic!("no line says what to free:\n{}", out.stderr));
    eprintln!("crawl.sh: {line}");
    assert!(
        line.contains("free at least") && line.contains("min_free_disk"),
        "{line}"
    );
    let done = std::fs::read_to_string(crawl.join("fetched/00002/DONE")).unwrap();
    assert!(done.contains("stop_reason disk"), "{done}");
    let stats: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(crawl.join("fetched/00002/stats.json")).unwrap(),
    )
    .unwrap();
    let cut = stats["cuts"]["disk"].as_u64().unwrap_or(0);
    let before = stored(&crawl);
    eprintln!(
        "stopped at the floor: {} of {} pages stored, {cut} URLs to the leftover",
        before.len() - 1,
        PAGES
    );
    assert!(cut > 0 && before.len() < PAGES + 1, "{stats}");
    // Every file is whole: the WARC files check, and every URL is stored or
    // in the leftover.
    let warcs: Vec<PathBuf> = Outcome::read(&crawl).warc_files;
    testkit::warcio::check(&warcs).unwrap_or_else(|e| panic!("warcio check: {e}"));
    let left = support::zstdcat(&crawl.join("fetched/00002/leftover.v5.tsv.zst"));
    assert_eq!(left.lines().count() as u64, cut);

    // Still no room: the next run's first step refuses, changing nothing.
    let files = snapshot(&crawl);
    let out = crawl_sh_run(&crawl, &seeds, scratch.path(), 3);
    assert!(out.stderr.contains("did not start"), "{}", out.stderr);
    let after = snapshot(&crawl);
    let changed: Vec<_> = after
        .iter()
        .filter(|f| !files.contains(f))
        .chain(files.iter().filter(|f| !after.contains(f)))
        .map(|(p, _)| p.display().to_string())
        .collect();
    assert!(
        changed.is_empty(),
        "a refused step changed files: {changed:?}"
    );

    // Space comes back: the crawl goes on to its end.
    mount.resize("64m");
    let out = crawl_sh_run(&crawl, &seeds, scratch.path(), 0);
    assert!(
        out.stdout.contains("nothing left to fetch"),
        "{}",
        out.stdout
    );
    let report = std::fs::read_dir(crawl.join("logs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect::<Vec<_>>();
    for r in &report {
        let v: serde_json::Value = serde_json::from_str(r).unwrap();
        assert_eq!(
            v["totals"]["bad_input"], 0,
            "the segmenter read everything: {r}"
        );
    }
    let warcs: Vec<PathBuf> = Outcome::read(&crawl).warc_files;
    testkit::warcio::check(&warcs).unwrap_or_else(|e| panic!("warcio check: {e}"));
    let with_stop = stored(&crawl);

    // The same crawl without a floor reaches the same end.
    let reference = scratch.path().join("reference");
    let seeds = setup(&reference, scratch.path(), &server, "0");
    crawl_sh_run(&reference, &seeds, scratch.path(), 0);
    assert_eq!(with_stop, stored(&reference));
    assert_eq!(with_stop.len(), PAGES + 1);
    drop(mount);
}

#[test]
fn a_new_crawl_on_a_small_disk_is_refused_before_its_seen_set_fills_it() {
    let scratch = TempDir::new("disk-small");
    let mnt = scratch.path().join("mnt");
    let _mount = match Mount::tmpfs(&mnt, "8m") {
        Ok(m) => m,
        Err(why) => {
            eprintln!("SKIPPED: this test needs to mount a tmpfs (root): {why}");
            return;
        }
    };
    let crawl = mnt.join("crawl");
    std::fs::create_dir_all(&crawl).unwrap();
    let seeds = scratch.path().join("seeds.txt");
    std::fs::write(&seeds, "http://a.test/\n").unwrap();
    let inject = |toml: &str, code: i32| {
        std::fs::write(crawl.join("crawl.toml"), toml).unwrap();
        bins::run_expecting(
            bins::segmenter_cmd().arg("inject").arg(&crawl).arg(&seeds),
            scratch.path(),
            code,
        )
    };
    // A seen-set of 10 M URLs (12 MB) does not fit: refused at the floor,
    // as a round that would cross it is, before its filter is written.
    let out = inject(
        "[crawl]\nmin_free_disk = \"1MB\"\n[segmenter]\nbloom_items = 10000000\n",
        3,
    );
    assert!(
        out.stderr
            .contains("not enough free disk space to start the round")
            && out
                .stderr
                .contains("needed besides the free-disk floor min_free_disk = ")
            && out
                .stderr
                .contains("or start with a smaller seen-set (`--bloom-items`")
            && !out.stderr.contains("os error"),
        "{}",
        out.stderr
    );
    assert!(!crawl.join("seen.bloom").exists());
    assert!(!crawl.join("segments/00001.v5.tsv.zst").exists());
    // The default starting size fits (1.2 MB; it grows with the crawl).
    inject("[crawl]\nmin_free_disk = \"1MB\"\n", 0);
    let bloom = std::fs::metadata(crawl.join("seen.bloom")).unwrap().len();
    assert!(bloom < 1_300_000, "{bloom} bytes");
    assert!(crawl.join("segments/00001.v5.tsv.zst").is_file());
}
