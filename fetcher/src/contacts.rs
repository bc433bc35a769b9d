//! The contacts journal: one line per request, written before the request
//! is sent, so that the next fetcher run knows which hosts a killed run was
//! talking to.
//!
//! The penalty box outlives a run through `hosts.db`, where every request's
//! next allowed contact is written in batches. A run killed with `kill -9`
//! (or a power cut) can lose the last batch, and it never records the
//! requests it had in flight. The journal fills that gap: before a request
//! goes out, its host, start time and the queue's delay are appended to
//! `CRAWL/contacts/ID.tsv` with one `write`, which outlives the process
//! (not a power cut: it is not synced, which would cost a disk write per
//! request; after a power cut the machine's restart takes longer than a
//! delay anyway).
//!
//! ```text
//! host  start_ms       delay_ms
//! a.example  1795514405250  5000
//! ```
//!
//! Every fetcher run reads all journals at its start: a request that a
//! dead run started ended at the latest when that run died (before now) or
//! when its download timeout ran out, so the host may be asked again one
//! delay after the earlier of the two: the delay in the journal, or the one
//! known now if longer (a robots.txt read just before the crash may have
//! set a `Crawl-delay`). When the host's robots.txt is not known now (the
//! dead run was reading it, or read it and was killed before the WARC file
//! or `hosts.db` kept it), the delay is at least the longest `Crawl-delay`
//! obeyed (`max_crawl_delay`), the most that robots.txt may have said: so
//! no kill point breaks a delay, and only a host whose robots.txt was lost
//! that way waits longer. A run removes its own journal once `hosts.db`
//! holds its hosts' next contacts; a journal whose requests are all long
//! over is removed by the next run that reads it.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::crawldir::CrawlDir;

/// The journal of one run, open for appending.
#[derive(Debug)]
pub struct Journal {
    file: File,
    path: PathBuf,
}

impl Journal {
    /// Opens (creating) the journal of run `id`; an earlier run of the same
    /// segment left its lines there, which stay.
    pub fn open(crawl: &CrawlDir, id: &str) -> io::Result<Journal> {
        std::fs::create_dir_all(crawl.contacts_dir())?;
        let path = crawl.contacts_path(id);
        let file = OpenOptions::new().create(true).append(true).open(&path)?;
        Ok(Journal { file, path })
    }

    /// The journal file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records that requests to these hosts start now, each on a queue
    /// whose delay is given: one `write` of their lines.
    pub fn record_all(&self, contacts: &[(&str, Duration)]) -> io::Result<()> {
        use std::fmt::Write as _;
        let now = crate::clock::now_ms();
        let mut lines = String::with_capacity(contacts.len() * 48);
        for (host, delay) in contacts {
            let _ = writeln!(lines, "{host}\t{now}\t{}", delay.as_millis());
        }
        (&self.file).write_all(lines.as_bytes())
    }

    /// Removes the journal: the host state now knows everything it said.
    pub fn remove(&self) -> io::Result<()> {
        std::fs::remove_file(&self.path)
    }
}

/// The last request to a host that a journal tells of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LastContact {
    /// When it ended at the latest (Unix ms).
    pub end_ms: i64,
    /// The queue's delay when it started, in ms.
    pub delay_ms: i64,
}

impl LastContact {
    /// The earliest next contact (Unix ms) after it, with a delay of at
    /// least `delay_ms`.
    pub fn next_ms(&self, delay_ms: i64) -> i64 {
        self.end_ms.saturating_add(self.delay_ms.max(delay_ms))
    }
}

/// What the journals found at the start of a run say: for each host whose
/// last journaled request may still hold it at `now_ms`, with its delay or
/// with `longest_delay` (the longest one a robots.txt may set, which a host
/// whose robots.txt is not known waits), that request.
pub fn read_all(
    crawl: &CrawlDir,
    own_id: &str,
    download_timeout: Duration,
    longest_delay: Duration,
    now_ms: i64,
) -> io::Result<HashMap<String, LastContact>> {
    let mut last: HashMap<String, LastContact> = HashMap::new();
    let entries = match std::fs::read_dir(crawl.contacts_dir()) {
        Ok(rd) => rd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(last),
        Err(e) => return Err(e),
    };
    let timeout_ms = i64::try_from(download_timeout.as_millis()).unwrap_or(i64::MAX);
    let horizon = Horizon {
        now_ms,
        longest_delay_ms: i64::try_from(longest_delay.as_millis()).unwrap_or(i64::MAX),
    };
    for entry in entries {
        let entry = entry?;
        if !entry.file_type()?.is_file() {
            continue;
        }
        let path = entry.path();
        let Some(id) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".tsv"))
        else {
            continue;
        };
        // This run's own journal is from a dead process (we hold the run's
        // lock); another run's is live if its lock is held. The lock of a
        // dead run is kept while its journal is read and maybe removed, so
        // that no fetcher resumes that run meanwhile.
        let run = if id == own_id {
            Run::Own
        } else {
            run_state(crawl, id)
        };
        if let Run::Alive = run {
            // Its requests may last their whole timeout.
            for (host, start_ms, delay_ms) in read_journal(&path)? {
                let end_ms = start_ms.saturating_add(timeout_ms);
                keep_latest(&mut last, host, LastContact { end_ms, delay_ms }, horizon);
            }
            continue;
        }
        // Dead: its requests ended by now at the latest.
        let mut relevant = false;
        for (host, start_ms, delay_ms) in read_journal(&path)? {
            let end_ms = start_ms.saturating_add(timeout_ms).min(now_ms);
            relevant |= keep_latest(&mut last, host, LastContact { end_ms, delay_ms }, horizon);
        }
        if !relevant && let Run::Dead { .. } = run {
            // Nothing in it matters any more; its run is gone.
            let _ = std::fs::remove_file(&path);
        }
        // (A dead run's lock is released here, after its journal.)
        drop(run);
    }
    Ok(last)
}

/// Whose journal it is.
enum Run {
    /// The run reading it (which holds its lock: the writer is dead).
    Own,
    /// A fetcher process works on that run.
    Alive,
    /// Nobody does; its lock (if it has a lock file) is held while its
    /// journal is read and maybe removed, so that no fetcher resumes the
    /// run meanwhile.
    Dead {
        _lock: Option<common::lock::FileLock>,
    },
}

/// Whether a fetcher process works on run `id`.
fn run_state(crawl: &CrawlDir, id: &str) -> Run {
    let lock = crawl.fetch_lock_path(id);
    if !lock.exists() {
        return Run::Dead { _lock: None };
    }
    match common::lock::try_lock(&lock) {
        Ok(Some(held)) => Run::Dead { _lock: Some(held) },
        // Held (or unreadable: the safe side is to assume it alive).
        Ok(None) | Err(_) => Run::Alive,
    }
}

/// When a journaled request stops mattering.
#[derive(Clone, Copy)]
struct Horizon {
    now_ms: i64,
    /// The longest delay that may follow a request.
    longest_delay_ms: i64,
}

/// Keeps `contact` for `host` if it may still hold the host (the latest
/// end and the longest delay of its requests); true if it does.
fn keep_latest(
    last: &mut HashMap<String, LastContact>,
    host: String,
    contact: LastContact,
    horizon: Horizon,
) -> bool {
    if contact.next_ms(horizon.longest_delay_ms) <= horizon.now_ms {
        return false;
    }
    let e = last.entry(host).or_insert(contact);
    e.end_ms = e.end_ms.max(contact.end_ms);
    e.delay_ms = e.delay_ms.max(contact.delay_ms);
    true
}

/// The lines of a journal; a torn last line (the run was killed while
/// writing it) and lines that do not read are skipped.
fn read_journal(path: &Path) -> io::Result<Vec<(String, i64, i64)>> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut out = Vec::new();
    for line in BufReader::new(file).split(b'\n') {
        let line = line?;
        let text = String::from_utf8_lossy(&line);
        let mut fields = text.split('\t');
        let (Some(host), Some(start), Some(delay), None) =
            (fields.next(), fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        if let (Ok(start), Ok(delay)) = (start.parse::<i64>(), delay.parse::<i64>())
            && !host.is_empty()
        {
            out.push((host.to_string(), start, delay));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crawl(name: &str) -> (common::testutil::TempDir, CrawlDir) {
        let tmp = common::testutil::TempDir::new(&format!("contacts-{name}"));
        let crawl = CrawlDir::create(tmp.join("crawl")).unwrap();
        (tmp, crawl)
    }

    #[test]
    fn a_dead_runs_requests_hold_their_hosts_one_delay_from_now() {
        let (_tmp, c) = crawl("dead");
        let now = 1_000_000_000;
        std::fs::create_dir_all(c.contacts_dir()).unwrap();
        std::fs::write(
            c.contacts_path("00003"),
            format!(
                "a.test\t{}\t2000\nb.test\t{}\t500\nold.test\t{}\t100\ntorn\t12",
                now - 100,
                now - 50_000,
                now - 900_000
            ),
        )
        .unwrap();
        let got = read_all(&c, "00004", Duration::from_secs(120), Duration::ZERO, now).unwrap();
        // Dead: its requests ended by now at the latest.
        assert_eq!(got["a.test"].next_ms(0), now + 2000);
        assert_eq!(got["b.test"].next_ms(0), now + 500);
        // A longer delay known now (a Crawl-delay) wins.
        assert_eq!(got["b.test"].next_ms(3000), now + 3000);
        // Started 15 minutes ago with a 2-minute timeout: long over.
        assert_eq!(got.get("old.test"), None);
        assert_eq!(got.len(), 2);
        assert!(c.contacts_path("00003").exists(), "still relevant: kept");
        // Once its requests' timeouts and delays are over, nothing in it
        // matters: it is removed.
        let later = read_all(
            &c,
            "00004",
            Duration::from_secs(120),
            Duration::ZERO,
            now + 122_001,
        )
        .unwrap();
        assert!(later.is_empty());
        assert!(!c.contacts_path("00003").exists());
        std::fs::remove_dir_all(c.root()).unwrap();
    }

    #[test]
    fn a_request_is_kept_while_the_longest_delay_may_follow_it() {
        let (_tmp, c) = crawl("longest");
        let now = 1_000_000_000;
        std::fs::create_dir_all(c.contacts_dir()).unwrap();
        // A robots.txt request with no delay yet, by a run killed just now.
        std::fs::write(
            c.contacts_path("00003"),
            format!("a.test\t{}\t0\n", now - 20),
        )
        .unwrap();
        let read = |longest: u64| {
            read_all(
                &c,
                "00004",
                Duration::from_secs(5),
                Duration::from_millis(longest),
                now,
            )
            .unwrap()
        };
        assert_eq!(read(1500)["a.test"].next_ms(1500), now + 1500);
        assert!(read(0).is_empty(), "over when no delay can follow it");
        std::fs::remove_dir_all(c.root()).unwrap();
    }

    #[test]
    fn a_live_runs_requests_may_last_their_whole_timeout() {
        let (_tmp, c) = crawl("live");
        std::fs::create_dir_all(c.fetched_dir("00007")).unwrap();
        let _held = common::lock::try_lock(&c.fetch_lock_path("00007"))
            .unwrap()
            .unwrap();
        let j = Journal::open(&c, "00007").unwrap();
        j.record_all(&[("a.test", Duration::from_millis(300))])
            .unwrap();
        let now = crate::clock::now_ms();
        let got = read_all(&c, "00008", Duration::from_secs(10), Duration::ZERO, now).unwrap();
        let next = got["a.test"].next_ms(0);
        assert!(
            next >= now + 10_000 && next <= now + 10_300 + 1000,
            "{}",
            next - now
        );
        j.remove().unwrap();
        assert!(
            read_all(&c, "00008", Duration::from_secs(10), Duration::ZERO, now)
                .unwrap()
                .is_empty()
        );
        std::fs::remove_dir_all(c.root()).unwrap();
    }
}
