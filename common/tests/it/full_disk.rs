//! Every writer of `common` facing a full disk: the write fails with an
//! error, what was there before stays intact, no temporary file is left
//! behind, and what was reported stored can be read back.
//!
//! A full disk is simulated with a file-size limit (`RLIMIT_FSIZE`): a write
//! that would make a file larger than the limit fails with `EFBIG`, as one
//! on a full disk fails with `ENOSPC`. The limit applies to the whole
//! process, where other tests write files at the same time, so the test
//! runs in a process of its own: the test binary started again to run this
//! test alone ([`in_own_process`]). Only the soft limit is lowered, so it
//! can be raised again.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use common::atomic::{AtomicFile, write_atomic};
use common::bloom::{BloomFilter, BloomParams};
use common::hoststate::{HostDb, HostState, RobotsEntry};
use common::segment::{SegmentReader, SegmentRecord, SegmentWriter, Via};
use common::testutil::{Rng, TempDir};
use common::warc::{Exchange, WarcReader, WarcRecord, WarcWriter, WarcWriterConfig, recover};

/// Sets the soft file-size limit of this process (`None`: no limit).
fn limit_file_size(bytes: Option<u64>) {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read or fill the struct passed.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_FSIZE, &mut lim), 0);
        lim.rlim_cur = bytes.map_or(lim.rlim_max, |b| b.min(lim.rlim_max));
        assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &lim), 0);
    }
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Set in the environment of the test binary started by [`in_own_process`].
const OWN_PROCESS: &str = "COMMON_TEST_OWN_PROCESS";

/// True in the process that runs the test `name` (its path in the binary,
/// `full_disk::...`) by itself. In any other process, runs this binary
/// again with only that test, waits for it (two minutes at most), checks
/// that it ran and passed, and returns false.
fn in_own_process(name: &str) -> bool {
    if std::env::var_os(OWN_PROCESS).is_some() {
        return true;
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let mut child = Command::new(&exe)
        .args([name, "--exact", "--test-threads", "1", "--nocapture"])
        .env(OWN_PROCESS, "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {}: {e}", exe.display()));
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.try_wait().unwrap().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    if child.try_wait().unwrap().is_none() {
        let _ = child.kill();
    }
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("test result: ok. 1 passed"),
        "{name} in its own process: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    false
}

#[test]
fn a_full_disk_loses_nothing_and_leaves_no_temporary_files() {
    if !in_own_process("full_disk::a_full_disk_loses_nothing_and_leaves_no_temporary_files") {
        return;
    }
    // Without this, crossing the limit kills the process with SIGXFSZ.
    // SAFETY: setting a signal to be ignored has no handler to be unsafe.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    atomic_files();
    segments();
    warc_files();
    bloom_filters();
    host_database();
}

/// `write_atomic` and `AtomicFile`: a failed write or commit keeps the old
/// content and removes the temporary file.
fn atomic_files() {
    let dir = TempDir::new("full-atomic");
    let dest = dir.write("stats.json", b"old");
    limit_file_size(Some(64 * 1024));
    // Larger than the writer's buffer: fails in write_all.
    let big = write_atomic(&dest, &vec![b'x'; 1 << 20]).unwrap_err();
    // Smaller than the buffer, larger than the limit: fails in commit.
    let mut f = AtomicFile::create(&dest).unwrap();
    f.write_all(&vec![b'y'; 100 * 1024]).unwrap();
    let late = f.commit().unwrap_err();
    limit_file_size(None);
    for e in [big, late] {
        assert_eq!(e.raw_os_error(), Some(libc::EFBIG), "{e}");
    }
    assert_eq!(std::fs::read(&dest).unwrap(), b"old");
    assert_eq!(names(dir.path()), ["stats.json"], "temporary files left");
}

/// `SegmentWriter`: the error names the file, an existing segment at the
/// path survives, the temporary file goes.
fn segments() {
    let dir = TempDir::new("full-segment");
    let path = dir.join("00001.v5.tsv.zst");
    let rec = |i: u64, rng: &mut Rng| SegmentRecord {
        host: "a.test".into(),
        url: format!("http://a.test/{i}/{:x}{:x}", rng.next_u64(), rng.next_u64()),
        hops: 1,
        inlinks: 0,
        via: Via::Link,
        tries: 0,
        not_before: None,
        ..SegmentRecord::default()
    };
    let mut rng = Rng::new(5);
    let mut w = SegmentWriter::create(&path).unwrap();
    w.write(&rec(0, &mut rng)).unwrap();
    assert_eq!(w.finish().unwrap(), 1);
    let before = std::fs::read(&path).unwrap();

    limit_file_size(Some(64 * 1024));
    let mut w = SegmentWriter::create(&path).unwrap();
    let mut failed = None;
    for i in 0..100_000 {
        if let Err(e) = w.write(&rec(i, &mut rng)) {
            failed = Some(e);
            break;
        }
    }
    let e = match failed {
        Some(e) => {
            drop(w);
            e
        }
        None => w.finish().unwrap_err(),
    };
    limit_file_size(None);
    assert!(e.is_fatal(), "{e}");
    assert!(e.to_string().contains("00001.v5.tsv.zst"), "{e}");
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert_eq!(names(dir.path()), ["00001.v5.tsv.zst"]);
    let mut r = SegmentReader::open(&path).unwrap();
    let mut back = SegmentRecord::default();
    assert!(r.read_next(&mut back).unwrap());
    assert!(!r.read_next(&mut back).unwrap());
}

/// `WarcWriter`: a failed write is an error; the writer never appends after
/// the torn exchange, so every exchange it reported stored reads back, and
/// `recover` makes the torn file valid.
fn warc_files() {
    let dir = TempDir::new("full-warc");
    let mut w = WarcWriter::new(WarcWriterConfig {
        dir: dir.path().to_path_buf(),
        prefix: "FULL".into(),
        max_file_size: 1 << 30,
        first_serial: 0,
        hostname: "box".into(),
        info: vec![("software".into(), "full-disk-test".into())],
    })
    .unwrap();
    w.set_compression_level(0);
    let mut rng = Rng::new(11);
    let bodies: Vec<Vec<u8>> = (0..40)
        .map(|_| (0..5000).map(|_| rng.next_u64() as u8).collect())
        .collect();
    let urls: Vec<String> = (0..40).map(|i| format!("http://a.test/{i}")).collect();
    let exchange = |i: usize| Exchange {
        target_uri: &urls[i],
        date: SystemTime::now(),
        ip: None,
        request_head: b"GET / HTTP/1.1\r\nHost: a.test\r\n\r\n",
        response_head: b"HTTP/1.1 200 OK\r\n\r\n",
        payload: &bodies[i],
        truncated: None,
        extra_fields: &[],
        protocols: &["http/1.1"],
        cipher_suite: None,
        metadata: None,
    };
    limit_file_size(Some(64 * 1024));
    let mut stored = Vec::new();
    let mut errors = 0;
    // An exchange is stored once it is written: the writer holds a batch
    // until flushed, and the fetcher flushes before it logs a response.
    for i in 0..20 {
        match w
            .write_exchange(&exchange(i))
            .and_then(|s| w.flush().map(|()| s))
        {
            Ok(s) => stored.push((i, s)),
            Err(e) => {
                assert_eq!(e.raw_os_error(), Some(libc::EFBIG), "{e}");
                errors += 1;
            }
        }
    }
    // Room again: the writer goes on, in a new file.
    limit_file_size(None);
    for i in 20..40 {
        stored.push((i, w.write_exchange(&exchange(i)).unwrap()));
    }
    let files = w.finish().unwrap();
    assert!(errors > 0, "the limit was never reached");
    assert!(files.len() >= 2, "{files:?}");

    // Every exchange reported stored is where the writer said.
    for (i, s) in &stored {
        let mut r = WarcReader::open_at(&s.file, s.offset, usize::MAX).unwrap();
        let mut rec = WarcRecord::default();
        assert!(r.read_next(&mut rec).unwrap(), "exchange {i}");
        assert!(r.read_next(&mut rec).unwrap(), "exchange {i}");
        assert_eq!(rec.target_uri(), Some(urls[*i].as_str()));
        assert!(rec.block.ends_with(&bodies[*i]), "exchange {i}");
    }
    // A file that hit the limit ends torn; recover cuts the torn exchange
    // and the file then reads cleanly, holding exactly what was stored in it.
    for (n, f) in files.iter().enumerate() {
        let r = recover(f).unwrap();
        if n == 0 {
            assert!(r.cut > 0, "{}: {r:?}", f.display());
        }
        let exchanges = stored.iter().filter(|(_, s)| s.file == *f).count() as u64;
        assert_eq!(r.records, 1 + 2 * exchanges, "{}", f.display());
        let mut reader = WarcReader::open(f, 0).unwrap();
        let mut rec = WarcRecord::default();
        let mut records = 0;
        while reader.read_next(&mut rec).unwrap() {
            records += 1;
        }
        assert_eq!(records, r.records, "{}", f.display());
    }
}

/// `BloomFilter::create`: no file appears when the bit array cannot be
/// allocated, and the error names the path.
fn bloom_filters() {
    let dir = TempDir::new("full-bloom");
    let path = dir.join("seen.bloom");
    limit_file_size(Some(64 * 1024));
    let e = BloomFilter::create(&path, BloomParams::optimal(1_000_000, 0.01).unwrap()).unwrap_err();
    limit_file_size(None);
    assert!(e.to_string().contains("seen.bloom"), "{e}");
    assert_eq!(names(dir.path()), Vec::<String>::new());
}

/// `HostDb::put_many`: a batch that does not fit is refused as a whole,
/// and what was stored before is still there.
fn host_database() {
    let dir = TempDir::new("full-hosts");
    let path = dir.join("hosts.db");
    let state = |i: usize, body: usize| HostState {
        host: format!("h{i}.test"),
        robots: Some(RobotsEntry {
            status: 200,
            body: vec![b'#'; body],
            fetched_ms: 1,
            sitemaps: Vec::new(),
        }),
        ..HostState::default()
    };
    let mut db = HostDb::open(&path).unwrap();
    db.put_many(&[state(0, 10), state(1, 10)]).unwrap();
    limit_file_size(Some(256 * 1024));
    let big: Vec<HostState> = (2..40).map(|i| state(i, 100_000)).collect();
    let e = db.put_many(&big).unwrap_err();
    limit_file_size(None);
    assert!(e.to_string().contains("hosts.db"), "{e}");
    drop(db);
    let db = HostDb::open(&path).unwrap();
    assert_eq!(db.count().unwrap(), 2);
    assert_eq!(db.get("h1.test").unwrap(), Some(state(1, 10)));
}
