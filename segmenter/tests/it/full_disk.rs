//! A disk that fills up while a round writes its files: the round fails
//! with an error naming the file, changes nothing in the crawl directory,
//! and the same command run again (with room) gives what a clean run gives.
//!
//! A full disk is simulated with a file-size limit (`RLIMIT_FSIZE`) on the
//! segmenter's process: a write past it fails with `EFBIG`, as one on a full
//! disk fails with `ENOSPC`. Four places: `seen.bloom` written whole (the
//! round adds more than its journal may hold), a sort run, the new segment,
//! the history's new generation (an I/O error, not a damaged history).

use crate::support;

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::Path;

use support::*;
use testkit::Rng;
use testkit::bins;

/// Every file of the crawl directory (logs aside) with its bytes.
fn files(root: &Path) -> BTreeMap<String, Vec<u8>> {
    testkit::files::snapshot(root, |p| p.starts_with("logs"))
        .into_iter()
        .map(|(p, bytes)| (p.display().to_string(), bytes))
        .collect()
}

/// A crawl with one fetched run whose links make a segment of a few
/// hundred KB (random paths compress badly).
fn prepare(tag: &str) -> TempCrawl {
    let crawl = TempCrawl::new(tag);
    // A 48 KB seen.bloom.
    inject(&crawl, "http://a.test/\n", &["--bloom-items", "40000"]);
    let mut rng = Rng::new(5);
    let pages: Vec<Page> = (0..100)
        .map(|i| {
            let links: Vec<String> = (0..200)
                .map(|_| format!("/{:016x}/{:016x}", rng.next_u64(), rng.next_u64()))
                .collect();
            let refs: Vec<&str> = links.iter().map(String::as_str).collect();
            Page::html(&format!("http://a.test/{i}"), 0, &refs)
        })
        .collect();
    write_done(&crawl, "00001", &pages);
    crawl
}

/// Runs `segmenter run` on `crawl` with a file-size limit; returns the
/// last line of stderr (the error) and a dump for assertion messages.
fn run_with_file_limit(crawl: &TempCrawl, limit: libc::rlim_t, extra: &[&str]) -> (String, String) {
    let root = crawl.root().to_str().unwrap().to_string();
    let mut cmd = segmenter_cmd(&["run", &root, "--max-per-host", "100000", "--min-delay", "0"]);
    cmd.args(extra);
    // SAFETY: between fork and exec the child only calls signal and
    // setrlimit, which are async-signal-safe.
    unsafe {
        cmd.pre_exec(move || {
            // Ignored, SIGXFSZ turns into an EFBIG error from write.
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let lim = libc::rlimit {
                rlim_cur: limit,
                rlim_max: limit,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = bins::run_with_timeout(&mut cmd, bins::DEFAULT_TIMEOUT).unwrap();
    let context = format!(
        "(with RLIMIT_FSIZE {limit})\n{}",
        bins::report(&out, Some(crawl.root()))
    );
    assert_eq!(out.code(), Some(1), "{context}");
    let last = out.stderr.lines().last().unwrap_or_default().to_string();
    assert!(last.starts_with("segmenter: "), "{context}");
    assert!(last.contains("File too large"), "{context}");
    (last, context)
}

#[test]
fn a_full_disk_fails_the_round_cleanly_and_a_rerun_works() {
    let crawl = prepare("full-disk");
    let before = files(crawl.root());

    // Small segments, but no room for seen.bloom (48 KB), which the round
    // writes whole: its 20,000 new URLs would make a journal block larger
    // than a quarter of the filter.
    let (error, context) = run_with_file_limit(&crawl, 16 * 1024, &["--max-segment-size", "100"]);
    assert!(error.contains("seen.bloom"), "{context}");
    assert_eq!(files(crawl.root()), before, "{context}");

    // Room for seen.bloom, not for the segment.
    let (error, context) = run_with_file_limit(&crawl, 64 * 1024, &[]);
    assert!(error.contains("00002.v5.tsv.zst"), "{context}");
    // The run's log says why it failed.
    let message = error.trim_start_matches("segmenter: ");
    let logged = fs::read_dir(crawl.dir.logs_dir())
        .unwrap()
        .flatten()
        .any(|e| {
            let text = fs::read_to_string(e.path()).unwrap_or_default();
            text.lines()
                .any(|l| l.contains(" error ") && l.ends_with(message))
        });
    assert!(logged, "no log line for `{message}`\n{context}");
    // Nothing changed, nothing left behind.
    assert_eq!(files(crawl.root()), before, "{context}");

    // A sort with little memory: merging its spill files makes one too large.
    let (error, context) = run_with_file_limit(&crawl, 64 * 1024, &["--memory", "16KiB"]);
    assert!(error.contains("/sort/spill-"), "{context}");
    assert_eq!(files(crawl.root()), before, "{context}");

    // With room again, the same command gives what a clean run gives.
    run_round(&crawl, &["--max-per-host", "100000", "--min-delay", "0"]);
    let clean = prepare("full-disk-clean");
    run_round(&clean, &["--max-per-host", "100000", "--min-delay", "0"]);
    // (The inputs differ in their WARC file names, which hold a time.)
    let outputs = |root: &Path| {
        let mut all = files(root);
        all.retain(|name, _| !name.starts_with("fetched/"));
        all
    };
    let (got, want) = (outputs(crawl.root()), outputs(clean.root()));
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>()
    );
    for (name, bytes) in &want {
        if name.ends_with(".tsv.zst") && !name.starts_with("history") {
            assert_eq!(
                read_records(&crawl.root().join(name)),
                read_records(&clean.root().join(name)),
                "{name}"
            );
        } else if name.starts_with("history-summary") {
            // The same counts; when they were made (so the due times after
            // it) and the history's size and time (it holds random record
            // IDs) differ.
            let counts = |bytes: &[u8]| {
                let mut v: serde_json::Value = serde_json::from_slice(bytes).unwrap();
                for key in ["as_of_ms", "history_bytes", "history_mtime_ns", "due_after"] {
                    v.as_object_mut().unwrap().remove(key);
                }
                v["counts"].as_object_mut().unwrap().remove("next_due_ms");
                v
            };
            assert_eq!(counts(&got[name]), counts(bytes), "{name}");
        } else if name.starts_with("history") && name.ends_with(".tsv.zst") {
            // A generation of the history: the same but for the record IDs
            // of the responses, which each crawl's WARC files draw at
            // random. (Its list, plain text, is compared as it is.)
            let text = |bytes: &[u8]| -> Vec<Vec<String>> {
                let text = String::from_utf8(zstd::decode_all(bytes).unwrap()).unwrap();
                text.lines()
                    .filter(|l| !l.starts_with('#'))
                    .map(|l| {
                        let mut f: Vec<String> = l.split('\t').map(str::to_string).collect();
                        assert!(f[13].starts_with("<urn:uuid:"), "{l}");
                        f[13].clear();
                        f
                    })
                    .collect()
            };
            assert_eq!(text(&got[name]), text(bytes), "{name}");
        } else {
            assert!(got[name] == *bytes, "{name} differs");
        }
    }
    assert_eq!(segments(&crawl)["00002"].len(), 20_000);
}

#[test]
fn a_full_disk_while_the_history_is_written_is_an_io_error_not_damage() {
    let crawl = TempCrawl::new("full-disk-history");
    inject(&crawl, "http://a.test/\n", &[]);
    // Many pages without links: the history's new generation is tens of
    // KB, the first file the round writes past the limit.
    let pages: Vec<Page> = (0..1000)
        .map(|i| Page::html(&format!("http://a.test/p{i}"), 1, &[]))
        .collect();
    write_done(&crawl, "00001", &pages);
    let before = files(crawl.root());
    let (error, context) = run_with_file_limit(&crawl, 16 * 1024, &[]);
    assert!(error.contains("history.v5.000001.tsv.zst"), "{context}");
    // Said as the write that failed: the history in place is sound, and
    // the repair of a damaged one would throw away the last round.
    assert!(
        !error.contains("damaged") && !error.contains("Repair"),
        "{context}"
    );
    assert_eq!(files(crawl.root()), before, "{context}");
    // With room again, the round goes on.
    run_round(&crawl, &[]);
    assert_eq!(history_text(crawl.root()).lines().count(), 1000);
}
