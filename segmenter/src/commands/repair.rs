//! `segmenter repair CRAWL [--accept-loss]`: checks every state file of a
//! crawl directory (`consumed.txt`, `scope.seeds`, the backlog,
//! `seen.bloom`, `hosts.db`, the fetch history, the segments waiting to be
//! fetched, and the `.prev` generations kept of all but `hosts.db`) the way the programs that
//! read them do, and says for each whether it is sound.
//!
//! Without `--accept-loss` it only reads, and exits 1 if a file is
//! damaged. With it, each damaged file is moved aside to `NAME.damaged`
//! (never deleted) and replaced: `seen.bloom` by a filter rebuilt from the
//! exact sets (the history, the backlog and the segments not yet consumed,
//! once they are repaired themselves: it is checked last); the others by
//! their previous generation (`NAME.prev`) when that is there and sound, or
//! else by what can be rebuilt (the records that still decode; for the
//! history, a list of the generations that read whole, with the consumed
//! runs read under them by the next round) or by an empty state; every
//! replacement says exactly what is lost. `scope.seeds` without a sound `.prev` cannot be
//! rebuilt (only the user knows the seeds): it is left for the user, and
//! the exit status is 1.
//!
//! It also checks the files each fetched run uploaded to the WARC store
//! (`fetched/ID/uploads.v1.tsv`): every object exists with the recorded
//! size and sha256 (read whole); a difference makes the exit status 1.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use common::bloom::{BloomFilter, BloomParams};
use common::crawldir::{CONSUMED_LIST, CrawlDir};
use common::exit::Exit;
use common::listfile;
use common::segment::{SegmentReader, SegmentRecord, SegmentWriter};

use crate::health::{Health, Kind, check};
use crate::history;
use crate::round::commit::{self, prev_path};
use crate::round::seen::ExactSets;

/// The lock `scripts/crawl.sh` holds while it runs.
const CRAWL_LOCK: &str = ".crawl.lock";
use crate::error::Error;

/// One state file of the crawl directory.
struct StateFile {
    kind: Kind,
    path: PathBuf,
    /// The kept previous generation (`NAME.prev`) of a file of `kind`.
    is_prev: bool,
}

/// Every state file of `crawl`, in the order they are reported.
fn state_files(crawl: &CrawlDir) -> Result<Vec<StateFile>, Error> {
    let mut files = vec![
        StateFile {
            kind: Kind::ScopeSeeds,
            path: crawl.scope_seeds_path(),
            is_prev: false,
        },
        StateFile {
            kind: Kind::Consumed,
            path: crawl.consumed_path(),
            is_prev: false,
        },
        StateFile {
            kind: Kind::Backlog,
            path: crawl.backlog_path(),
            is_prev: false,
        },
        StateFile {
            kind: Kind::Hosts,
            path: crawl.hosts_db_path(),
            is_prev: false,
        },
        StateFile {
            kind: Kind::History,
            path: history::current_path(crawl.root()),
            is_prev: false,
        },
    ];
    for i in 0..files.len() {
        let prev = prev_path(&files[i].path);
        if files[i].kind != Kind::Hosts && prev.exists() {
            files.push(StateFile {
                kind: files[i].kind,
                path: prev,
                is_prev: true,
            });
        }
    }
    for id in crawl
        .pending_segments()
        .map_err(Error::io(crawl.segments_dir()))?
    {
        files.push(StateFile {
            kind: Kind::Segment,
            path: crawl.segment_path(&id),
            is_prev: false,
        });
    }
    // Last: a damaged filter is rebuilt from the others, repaired first.
    files.push(StateFile {
        kind: Kind::Bloom,
        path: crawl.bloom_path(),
        is_prev: false,
    });
    let prev = prev_path(&crawl.bloom_path());
    if prev.exists() {
        files.push(StateFile {
            kind: Kind::Bloom,
            path: prev,
            is_prev: true,
        });
    }
    Ok(files)
}

/// What a missing file of `kind` means.
fn missing_means(kind: Kind) -> &'static str {
    match kind {
        Kind::Consumed => "no fetched run consumed yet",
        Kind::ScopeSeeds => "no seeds injected (needed only with the default scope, --scope seeds)",
        Kind::Backlog => "empty backlog",
        Kind::Bloom => "no URL seen yet (the next round creates it)",
        Kind::Hosts => "no host state yet (the fetcher creates it)",
        Kind::History => {
            "no fetch history yet (the next round builds it from the consumed runs in fetched/)"
        }
        Kind::Segment | Kind::BloomAppend => "gone",
    }
}

/// What is lost when a file of `kind` is replaced by its `.prev`.
fn prev_loss(kind: Kind) -> &'static str {
    match kind {
        Kind::Consumed => {
            "the runs consumed by the last round are read again by the next one: their links \
             are dropped as seen, their leftover and retry URLs are scheduled (and fetched) again"
        }
        Kind::ScopeSeeds => "domains added by the last inject or import are out of scope again",
        Kind::Backlog => {
            "the URLs the last round put into the backlog (they are in seen.bloom: scheduled \
             again only when a page links to them again), and URLs the last round took from it \
             may be fetched twice"
        }
        Kind::History => {
            "what the last round learnt of its fetches: their URLs are fetched again when due \
             by the older entries, and pages first fetched in its runs have no history until \
             they are fetched again"
        }
        Kind::Bloom | Kind::BloomAppend | Kind::Hosts | Kind::Segment => "",
    }
}

/// Checks (and with `accept_loss`, repairs) the state files of `root`;
/// prints one report line per file to stdout.
pub fn repair(root: &Path, accept_loss: bool) -> Result<Exit, Error> {
    let crawl = CrawlDir::new(root);
    if !root.is_dir() {
        return Err(Error::Usage(format!(
            "{}: not a crawl directory (no such directory)",
            root.display()
        )));
    }
    // No round may change the files while they are checked and replaced,
    // and no crawl.sh loop may start a step.
    let _lock = commit::lock(&crawl)?;
    let crawl_lock = root.join(CRAWL_LOCK);
    let _crawl_lock = match common::lock::try_lock(&crawl_lock) {
        Ok(Some(lock)) => lock,
        Ok(None) => {
            return Err(Error::Usage(format!(
                "{}: held: scripts/crawl.sh is running on this crawl; stop it first",
                crawl_lock.display()
            )));
        }
        Err(e) => return Err(Error::io(&crawl_lock)(e)),
    };
    let mut out = String::new();
    let staging = root.join(commit::STAGING_DIR);
    if staging.exists() {
        if accept_loss {
            // Its roll-forward would undo the replacements.
            return Err(Error::Usage(format!(
                "{}: a round was interrupted: run `segmenter run {}` first, which finishes or \
                 discards it (or, if it refuses the round, move this directory away); nothing \
                 was changed",
                staging.display(),
                root.display()
            )));
        }
        let _ = writeln!(
            out,
            "{}: a round was interrupted: the next `segmenter run` finishes or discards it \
             (the files below are as they were before it)",
            staging.display()
        );
    }
    let mut damaged = 0usize;
    let mut unrepaired = 0usize;
    let mut history_damaged = false;
    let checked = check_all(
        &crawl,
        accept_loss,
        &mut out,
        (&mut damaged, &mut unrepaired, &mut history_damaged),
    );
    if let Err(e) = checked {
        // What was done so far, then the error.
        common::exit::print(&out).map_err(Error::io("stdout"))?;
        return Err(e);
    }
    // Files uploaded to the WARC store: checked against their manifest
    // lines (nothing to repair by hand here: the local copies are gone).
    let bad_uploads = check_uploads(&crawl, &mut out)?;
    let exit = if bad_uploads > 0 {
        let _ = writeln!(
            out,
            "{bad_uploads} uploaded file(s) differ from their manifest lines; the objects were              changed or lost in the store: restore them from a copy, or refetch their segments"
        );
        Exit::Failure
    } else if damaged == 0 {
        let _ = writeln!(out, "every state file is sound");
        Exit::Success
    } else if !accept_loss {
        let _ = writeln!(
            out,
            "{damaged} damaged file(s); nothing was changed. Repair each as docs/operations.md says \
             (\"When a file is damaged\"), or run `segmenter repair {} --accept-loss` to \
             replace them and accept the losses it names",
            root.display()
        );
        Exit::Failure
    } else if unrepaired > 0 {
        let _ = writeln!(
            out,
            "{} of {damaged} damaged file(s) repaired; the others need you (see above)",
            damaged - unrepaired
        );
        Exit::Failure
    } else {
        let _ = writeln!(out, "{}", repaired(damaged, history_damaged));
        Exit::Success
    };
    common::exit::print(&out).map_err(Error::io("stdout"))?;
    Ok(exit)
}

/// The closing line of a repair that replaced all `damaged` files; the
/// history's way of keeping them only when it was among them.
fn repaired(damaged: usize, history_damaged: bool) -> String {
    let history = if history_damaged {
        " (a damaged history generation under its own name, with the list kept as \
         history.v5.list.damaged)"
    } else {
        ""
    };
    format!(
        "{damaged} damaged file(s) repaired; each damaged file was kept as NAME.damaged{history}"
    )
}

/// Checks the uploads recorded in every fetched run's manifest (shards
/// included) against the objects in the store: one line per run that has
/// uploads, one per problem; returns the problems found.
fn check_uploads(crawl: &CrawlDir, out: &mut String) -> Result<usize, Error> {
    let mut roots = vec![crawl.fetched_root()];
    if let Ok(shards) = std::fs::read_dir(crawl.top().join("shards")) {
        let mut shards: Vec<PathBuf> = shards.flatten().map(|e| e.path().join("fetched")).collect();
        shards.sort();
        roots.extend(shards);
    }
    let mut bad = 0;
    for root in roots {
        let Ok(runs) = std::fs::read_dir(&root) else {
            continue;
        };
        let mut runs: Vec<PathBuf> = runs.flatten().map(|e| e.path()).collect();
        runs.sort();
        for run in runs {
            if !run.join(common::store::MANIFEST_FILE).exists() {
                continue;
            }
            let (checked, problems) = common::store::verify_run(&run).map_err(Error::io(&run))?;
            if problems.is_empty() {
                let _ = writeln!(
                    out,
                    "{}: {checked} uploaded files match their objects",
                    run.display()
                );
            }
            for p in &problems {
                let _ = writeln!(out, "{}: {p}", run.display());
            }
            bad += problems.len();
        }
    }
    Ok(bad)
}

/// Checks each state file of `crawl`, and with `accept_loss` replaces the
/// damaged ones; one line per file (and per replacement) into `out`; counts
/// the damaged files, those not repaired, and whether the history was one.
fn check_all(
    crawl: &CrawlDir,
    accept_loss: bool,
    out: &mut String,
    (damaged, unrepaired, history_damaged): (&mut usize, &mut usize, &mut bool),
) -> Result<(), Error> {
    let root = crawl.root();
    for f in state_files(crawl)? {
        let shown = f.path.display();
        match check(f.kind, &f.path) {
            Health::Missing => {
                let _ = writeln!(out, "{shown}: missing: {}", missing_means(f.kind));
            }
            Health::Sound(detail) => {
                let _ = writeln!(out, "{shown}: sound: {detail}");
            }
            Health::Damaged(problem) => {
                *damaged += 1;
                *history_damaged |= f.kind == Kind::History;
                let _ = writeln!(out, "{shown}: DAMAGED: {problem}");
                if accept_loss && f.is_prev {
                    let aside = move_aside(&f.path)?;
                    let _ = writeln!(
                        out,
                        "{shown}: repaired: moved away to {}; lost: nothing now, but until \
                         the next round there is no sound previous generation to go back to",
                        aside.display()
                    );
                } else if accept_loss {
                    match fix(f.kind, &f.path, crawl)? {
                        Some(done) => {
                            let _ = writeln!(out, "{shown}: repaired: {done}");
                        }
                        None => {
                            *unrepaired += 1;
                            let _ = writeln!(
                                out,
                                "{shown}: NOT repaired: there is no sound .prev to restore, \
                                 and only you know the seeds: write their registrable \
                                 domains into it, one a line, or move it away and run \
                                 `segmenter inject {} SEEDS_FILE` again (it adds the domains \
                                 of the seeds file)",
                                root.display()
                            );
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// Replaces the damaged file `path` of `kind`, keeping it as
/// `NAME.damaged`; what was done and what is lost, or `None` if it cannot
/// be replaced.
fn fix(kind: Kind, path: &Path, crawl: &CrawlDir) -> Result<Option<String>, Error> {
    let prev = prev_path(path);
    let prev_sound = matches!(
        kind,
        Kind::Consumed | Kind::ScopeSeeds | Kind::Backlog | Kind::History
    ) && matches!(check(kind, &prev), Health::Sound(_));
    if kind == Kind::ScopeSeeds && !prev_sound {
        return Ok(None);
    }
    if kind == Kind::History && !prev_sound {
        return salvage_history(path, &prev, crawl).map(Some);
    }
    let is_list = kind == Kind::History
        && history::generations::GenerationList::is_list(path).unwrap_or(false);
    let aside = move_aside(path)?;
    let kept = kept_as(&aside, is_list);
    if prev_sound {
        copy_into_place(&prev, path)?;
        return Ok(Some(format!(
            "restored from {}; lost: {}; {kept}",
            prev.display(),
            prev_loss(kind)
        )));
    }
    let done = match kind {
        Kind::Consumed => {
            let runs = crawl
                .completed_runs()
                .map_err(Error::io(crawl.fetched_root()))?
                .len();
            common::atomic::write_atomic(
                path,
                listfile::render(&CONSUMED_LIST, [""; 0]).as_bytes(),
            )
            .map_err(Error::io(path))?;
            format!(
                "no sound {} to restore: reset to an empty list; lost: nothing, but the {runs} \
                 complete fetched runs are all read again by the next round (their links \
                 are mostly dropped as seen, their leftover and retry URLs are scheduled and \
                 fetched again)",
                prev.display()
            )
        }
        Kind::Backlog | Kind::Segment => {
            let (kept_urls, why) = salvage(&aside, path)?;
            let lost = "they are in seen.bloom, so they come back only when a page links to \
                        them again (then they are rescued)";
            format!(
                "kept the {kept_urls} URLs that could be read; lost: every URL after the \
                 damage ({why}); {lost}"
            )
        }
        Kind::Bloom => rebuild_bloom(path, &prev, crawl)?,
        Kind::History => unreachable!("salvaged above"),
        Kind::Hosts => {
            for side in ["-wal", "-shm"] {
                let mut name = path.as_os_str().to_os_string();
                name.push(side);
                let side = PathBuf::from(name);
                if side.exists() {
                    move_aside(&side)?;
                }
            }
            "moved away; the fetcher creates a new one; lost: the politeness state (robots.txt \
             is fetched again, Crawl-delays, response times, error counts and next-contact \
             times start from zero: a host may be asked once sooner than its delay)"
                .to_string()
        }
        Kind::ScopeSeeds => unreachable!("handled above"),
        Kind::BloomAppend => unreachable!("only staged"),
    };
    Ok(Some(format!("{done}; {kept}")))
}

/// Added to a salvage's losses in a shard's directory: a shard's reduce
/// does not read the consumed runs, so the mark recovers nothing there.
const SHARD_SALVAGE: &str = " (in a shard's directory the consumed runs are not read again: \
    the shard keeps only its sound generations)";

/// Whether `crawl` is one shard's directory (`CRAWL/shards/JJJ/` of a
/// crawl with a `shards.toml`), as a view or given by its path.
fn in_shard(crawl: &CrawlDir) -> bool {
    let root = crawl.root();
    crawl.is_shard()
        || (root.parent())
            .filter(|p| p.file_name() == Some("shards".as_ref()))
            .and_then(Path::parent)
            .is_some_and(|top| top.join(common::crawldir::SHARDS_FILE).is_file())
}

/// What became of the damaged file moved to `aside`: a damaged list keeps
/// every generation it names (no generation a `history.v5.list*` file
/// names is deleted, and a damaged generation keeps its own name).
fn kept_as(aside: &Path, is_list: bool) -> String {
    if is_list {
        format!(
            "the damaged list is kept as {0}, and with it every generation it names \
             (delete {0} once you no longer need them)",
            aside.display()
        )
    } else {
        format!("the damaged file is kept as {}", aside.display())
    }
}

/// Salvages the damaged history at `path` that has no sound `prev`: a new
/// list of the generations it names that read whole, and the mark that has
/// the next round read the consumed runs still in `fetched/` under them
/// (an entry kept wins over an older fetch; a URL only a lost generation
/// held gets its entry back from its fetches). When the list does not read
/// or no generation does, the history is moved away and the next round
/// builds it anew. What was done and lost.
///
/// Safe to kill and run again at any point: the generations are checked
/// where they are before anything changes (one that cannot be read, as
/// opposed to one that is damaged, stops the repair with nothing
/// changed); the new list is written under a temporary name, then the
/// mark, then the damaged list is copied aside and the new one renamed
/// over it, so a list is always in place.
fn salvage_history(path: &Path, prev: &Path, crawl: &CrawlDir) -> Result<String, Error> {
    use history::generations::{GenerationList, REBUILD_FILE_NAME};
    let list = GenerationList::read(path).ok();
    let (kept, lost) = match &list {
        Some(list) => sound_generations(list, crawl)?,
        None => (GenerationList::default(), Vec::new()),
    };
    let Some(list) = list.filter(|_| !kept.generations.is_empty()) else {
        let is_list = GenerationList::is_list(path).unwrap_or(false);
        let aside = move_aside(path)?;
        return Ok(format!(
            "no sound {} to restore: moved away; the next round builds a new history from \
             the consumed runs still in fetched/; lost: the schedule (intervals and change \
             counts start again; URLs whose runs were deleted are not refetched); {}",
            prev.display(),
            kept_as(&aside, is_list)
        ));
    };
    let new = common::atomic::temp_path(path);
    kept.write(&new).map_err(Error::io(&new))?;
    let mark = crawl.root().join(REBUILD_FILE_NAME);
    let aside = aside_name(path);
    let swapped = common::atomic::write_atomic(&mark, b"read the consumed runs for the history\n")
        .map_err(Error::io(&mark))
        .and_then(|()| copy_into_place(path, &aside))
        .and_then(|()| std::fs::rename(&new, path).map_err(Error::io(path)));
    if let Err(e) = swapped {
        let _ = std::fs::remove_file(&new);
        return Err(e);
    }
    common::atomic::sync_parent(path).map_err(Error::io(path))?;
    Ok(format!(
        "rebuilt from the {} of its {} generations that read whole, and {} asks the next \
         round to read the consumed runs still in fetched/ under them (an entry kept wins \
         over an older fetch); lost: {}: a URL whose latest entry was there goes by an older \
         entry of a kept generation, or gets a new one from its fetches still in fetched/ \
         (its interval and change count start again), or else has none until it is fetched \
         again{}; {}",
        kept.generations.len(),
        list.generations.len(),
        mark.display(),
        lost.join("; "),
        if in_shard(crawl) { SHARD_SALVAGE } else { "" },
        kept_as(&aside, true)
    ))
}

/// The generations of `list` (in the crawl directory of `crawl`) that read
/// whole, as a list, and what each damaged one lost. A generation that
/// cannot be read (permissions, an I/O error) is an error naming it: it is
/// not known to be damaged, so it must not be dropped.
fn sound_generations(
    list: &history::generations::GenerationList,
    crawl: &CrawlDir,
) -> Result<(history::generations::GenerationList, Vec<String>), Error> {
    let mut kept = history::generations::GenerationList::default();
    let mut lost = Vec::new();
    for g in &list.generations {
        let file = crawl.root().join(&g.name);
        match history::generations::check_generation(&file, g.entries) {
            Ok(()) => kept.generations.push(g.clone()),
            Err(history::HistoryError::Io { path, source }) => {
                let source = std::io::Error::new(
                    source.kind(),
                    format!(
                        "{source}: this history generation could not be read, so it is not \
                         known to be damaged; nothing was changed: make it readable (its \
                         permissions, the disk) and run repair again"
                    ),
                );
                return Err(Error::Io { path, source });
            }
            Err(e) => lost.push(format!("{} entries of {}", g.entries, e)),
        }
    }
    Ok((kept, lost))
}

/// Rebuilds `seen.bloom` (moved aside) from the crawl's exact sets, with
/// the parameters of `prev` if it is sound (its design load raised to
/// twice the URLs found), or else a design load of twice the URLs found (at
/// least the default) at 1 %; what was done and what is lost.
fn rebuild_bloom(path: &Path, prev: &Path, crawl: &CrawlDir) -> Result<String, Error> {
    let consumed = crate::state::runs::read_consumed(&crawl.consumed_path())?;
    let sets = ExactSets::of_crawl(crawl, &consumed)?;
    let found = crate::round::seen::rebuild::count(&sets, None)?;
    let (design, fp, rescued) = match BloomFilter::open_read_only(prev) {
        Ok(p) if p.verify().is_ok() => (
            p.params().expected_items,
            p.params().target_fp_rate,
            p.rescued(),
        ),
        _ => (crate::settings::DEFAULT_BLOOM_ITEMS, 0.01, 0),
    };
    let design = design.max(found.urls().saturating_mul(2)).max(1);
    let params = BloomParams::optimal(design, fp)?;
    let tmp = common::atomic::temp_path(path);
    let mut filter = BloomFilter::create(&tmp, params)?;
    let counts = crate::round::seen::rebuild(&sets, &mut filter, None);
    let sealed = counts.and_then(|c| {
        filter.set_rescued(rescued);
        filter.seal()?;
        Ok(c)
    });
    let items = filter.items();
    drop(filter);
    let counts = match sealed {
        Ok(c) => c,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    };
    std::fs::rename(&tmp, path).map_err(Error::io(path))?;
    common::atomic::sync_parent(path).map_err(Error::io(path))?;
    Ok(format!(
        "rebuilt from the exact sets ({}): {items} URLs, a design load of {design} at {fp}; \
         lost: URLs in none of them (fetches that failed without a response, pages whose \
         WARC record was unreadable) are new again: a page linking to one \
         schedules it once more",
        counts.describe()
    ))
}

/// Writes to `to` the records of `from` that decode; their number, and
/// where reading stopped.
fn salvage(from: &Path, to: &Path) -> Result<(u64, String), Error> {
    let mut writer = SegmentWriter::create(to)?;
    let mut why = "nothing after it".to_string();
    if let Ok(mut reader) = SegmentReader::open(from) {
        let mut rec = SegmentRecord::default();
        loop {
            match reader.read_next(&mut rec) {
                Ok(true) => writer.write(&rec)?,
                Ok(false) => break,
                Err(e) if e.is_fatal() => {
                    why = format!("reading stopped at line {}", reader.line());
                    break;
                }
                Err(_) => {}
            }
        }
    } else {
        why = "the file could not be opened".to_string();
    }
    let kept = writer.finish()?;
    Ok((kept, why))
}

/// Renames `path` to `NAME.damaged` (or `NAME.damaged.N`), which no
/// program reads.
fn move_aside(path: &Path) -> Result<PathBuf, Error> {
    let aside = aside_name(path);
    std::fs::rename(path, &aside).map_err(Error::io(path))?;
    Ok(aside)
}

/// `NAME.damaged` for `path`, or `NAME.damaged.N` for the first `N` free.
fn aside_name(path: &Path) -> PathBuf {
    let mut base = path.as_os_str().to_os_string();
    base.push(".damaged");
    let base = PathBuf::from(base);
    let mut aside = base.clone();
    let mut n = 1;
    while aside.exists() && n < 10_000 {
        aside = PathBuf::from(format!("{}.{n}", base.display()));
        n += 1;
    }
    aside
}

/// Copies `from` to `to` under a temporary name, then renames it in place.
fn copy_into_place(from: &Path, to: &Path) -> Result<(), Error> {
    let tmp = common::atomic::temp_path(to);
    std::fs::copy(from, &tmp).map_err(Error::io(&tmp))?;
    std::fs::File::open(&tmp)
        .and_then(|f| f.sync_all())
        .and_then(|()| std::fs::rename(&tmp, to))
        .map_err(Error::io(to))?;
    common::atomic::sync_parent(to).map_err(Error::io(to))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shard_s_directory_is_known_by_its_path_or_its_view() {
        let dir = common::testutil::TempDir::new("repair-in-shard");
        let shard = dir.join("shards").join("003");
        std::fs::create_dir_all(&shard).unwrap();
        // No shards.toml: a directory that happens to be called so.
        assert!(!in_shard(&CrawlDir::new(&shard)));
        std::fs::write(dir.join(common::crawldir::SHARDS_FILE), b"").unwrap();
        assert!(in_shard(&CrawlDir::new(&shard)));
        assert!(in_shard(&CrawlDir::new(dir.path()).shard(3)));
        assert!(!in_shard(&CrawlDir::new(dir.path())));
    }
}
