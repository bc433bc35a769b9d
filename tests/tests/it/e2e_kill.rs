//! `kill -9` at random points of a crawl (in the fetcher, in the segmenter,
//! or `crawl.sh` with everything it runs), then `crawl.sh` again until the
//! crawl ends: it must end with the same pages fetched as an uninterrupted
//! crawl, none stored twice, none requested again after it was stored, and
//! no host asked sooner than its delay after its previous request, kills
//! and resumes included.

use crate::support;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use testkit::Rng;
use testkit::bins::report;
use testkit::demo::{Demo, DemoParams};
use testkit::warcio;

use support::{
    Background, CRAWL_TIMEOUT, CrawlSettings, DemoCrawl, requested_url, some, without_port,
};

/// Seeds of the random choices (what to kill, how, and when); each replays
/// the same choices.
const SEEDS: [u64; 3] = [7, 19, 2024];

/// Kills per seed before the crawl is let run to its end.
const KILLS: usize = 6;

/// How long after a kill a request its victim sent may still reach the
/// server's log.
const KILL_SLACK: Duration = Duration::from_millis(100);

/// How a run is killed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum How {
    /// `kill -9` of crawl.sh and of everything it started.
    Tree,
    /// `kill -9` of the program only; crawl.sh sees its step fail.
    ProgramOnly,
}

#[test]
fn killed_at_random_points_a_crawl_ends_as_an_uninterrupted_one() {
    let demo = Demo::with_params(DemoParams {
        crawl_delay: 0.2,
        ..DemoParams::small(5)
    });
    let settings = CrawlSettings::default();

    let reference = DemoCrawl::start("kill-reference", &demo, settings.clone());
    reference.crawl_to_the_end();
    let reference_pages: BTreeSet<String> = reference
        .outcome()
        .pages_stored()
        .keys()
        .map(|u| without_port(u))
        .collect();
    let expected: BTreeSet<String> = reference
        .web
        .expected(&reference.limits())
        .fetch
        .keys()
        .map(|u| without_port(u))
        .collect();
    // (Whether those are exactly the right pages is e2e_crawl's question;
    // here the uninterrupted crawl is the yardstick. It must not be a
    // degenerate one.)
    let missed: Vec<&String> = expected.difference(&reference_pages).collect();
    assert!(
        missed.is_empty(),
        "the uninterrupted crawl missed pages:\n{}",
        some(&missed, 20)
    );
    drop(reference);

    let mut programs_killed = BTreeSet::new();
    for seed in SEEDS {
        let killed = crawl_with_kills(seed, &demo, &settings, &reference_pages);
        programs_killed.extend(killed);
    }
    for program in ["fetcher", "segmenter"] {
        assert!(
            programs_killed.contains(program),
            "no run killed the {program} (killed: {programs_killed:?})"
        );
    }
}

/// One crawl with [`KILLS`] kills chosen by `seed`, then run to its end and
/// checked. Returns the programs that were killed.
fn crawl_with_kills(
    seed: u64,
    demo: &Demo,
    settings: &CrawlSettings,
    reference_pages: &BTreeSet<String>,
) -> BTreeSet<String> {
    let c = DemoCrawl::start(&format!("kill-{seed}"), demo, settings.clone());
    let mut rng = Rng::new(seed);
    let mut story = format!("seed {seed}:\n");
    // When each kill began and when its victims were dead.
    let mut kill_times: Vec<(Instant, Instant)> = Vec::new();
    let mut programs = BTreeSet::new();
    let mut ended = false;
    for k in 0..KILLS {
        let mut run = Background::start(c.crawl_sh(&[]), c.scratch.path(), &format!("run{k}"));
        let target = if rng.below(2) == 0 {
            "fetcher"
        } else {
            "segmenter"
        };
        let how = if rng.below(3) == 0 {
            How::ProgramOnly
        } else {
            How::Tree
        };
        // The fetcher runs for seconds, the segmenter for a moment.
        let delay = Duration::from_millis(match target {
            "fetcher" => rng.below(1500) as u64,
            _ => rng.below(40) as u64,
        });
        if !run.wait_for_step(target, Duration::from_secs(60)) {
            // crawl.sh ended before the program started: the crawl is over.
            let out = run.finish(CRAWL_TIMEOUT);
            let _ = writeln!(story, "  run {k}: ended before a {target} started");
            assert_eq!(
                out.code(),
                Some(0),
                "{story}{}",
                report(&out, Some(&c.crawl))
            );
            support::assert_crawl_ended(&out);
            ended = true;
            break;
        }
        std::thread::sleep(delay);
        let (begun, dead) = match how {
            How::Tree => {
                let begun = Instant::now();
                let (killed, _) = run.kill();
                let names: Vec<String> = killed.iter().map(|p| p.args.join(" ")).collect();
                let _ = writeln!(
                    story,
                    "  run {k}: {target} seen, {delay:?} later kill -9 of crawl.sh and {names:?}"
                );
                programs.extend(killed.iter().filter_map(|p| p.step().map(String::from)));
                (begun, Instant::now())
            }
            How::ProgramOnly => {
                // The step seen may have ended meanwhile: then the next
                // one (of either kind) is the victim, as soon as it starts.
                let pid = i32::try_from(run.child.id()).unwrap();
                let deadline = Instant::now() + Duration::from_secs(60);
                let victim = loop {
                    let step = support::descendants(pid)
                        .into_iter()
                        .find(|p| p.step().is_some());
                    if step.is_some()
                        || Instant::now() > deadline
                        || matches!(run.child.try_wait(), Ok(Some(_)))
                    {
                        break step;
                    }
                    std::thread::sleep(Duration::from_millis(2));
                };
                let begun = Instant::now();
                if let Some(v) = &victim {
                    // SAFETY: kill(2) has no memory-safety preconditions.
                    unsafe { libc::kill(v.pid, libc::SIGKILL) };
                    programs.extend(v.step().map(String::from));
                }
                let dead = Instant::now();
                let out = run.finish(CRAWL_TIMEOUT);
                let _ = writeln!(
                    story,
                    "  run {k}: {target} seen, {delay:?} later kill -9 of {:?}; crawl.sh exit {:?}",
                    victim.as_ref().map(|v| &v.name),
                    out.code()
                );
                match (&victim, out.code()) {
                    // The step was killed: crawl.sh says which, and fails.
                    (Some(v), Some(1)) => assert!(
                        out.stderr.contains(&format!("{} ", v.name))
                            && out
                                .stderr
                                .contains("failed with exit code 137 (killed by signal 9)"),
                        "{story}{}",
                        report(&out, Some(&c.crawl))
                    ),
                    // The program had just ended; crawl.sh went on.
                    (_, Some(0)) => {
                        if out.stdout.contains("nothing left")
                            || out.stdout.contains("nothing fetchable")
                        {
                            ended = true;
                        }
                    }
                    _ => panic!("{story}{}", report(&out, Some(&c.crawl))),
                }
                (begun, dead)
            }
        };
        kill_times.push((begun, dead));
        if ended {
            break;
        }
    }
    if !ended {
        let out = c.crawl_to_the_end();
        let _ = writeln!(story, "  then crawl.sh to the end:\n{}", out.stdout);
    }
    eprintln!("{story}");
    check_after_kills(&c, reference_pages, &kill_times, &story);
    programs
}

fn check_after_kills(
    c: &DemoCrawl,
    reference_pages: &BTreeSet<String>,
    kill_times: &[(Instant, Instant)],
    story: &str,
) {
    // Reading everything back panics on a torn crawl-log line or WARC record.
    let outcome = c.outcome();
    let stored = outcome.pages_stored();
    let pages: BTreeSet<String> = stored.keys().map(|u| without_port(u)).collect();
    let missing: Vec<&String> = reference_pages.difference(&pages).collect();
    let extra: Vec<&String> = pages.difference(reference_pages).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "{story}pages fetched differ from the uninterrupted crawl:\nmissing:\n{}extra:\n{}",
        some(&missing, 20),
        some(&extra, 20)
    );
    let twice: Vec<String> = stored
        .iter()
        .filter(|(_, s)| s.len() > 1)
        .map(|(u, s)| {
            let runs: Vec<&str> = s.iter().map(|s| s.run.as_str()).collect();
            format!("{u} in runs {runs:?}")
        })
        .collect();
    assert!(
        twice.is_empty(),
        "{story}pages stored more than once:\n{}",
        some(&twice, 20)
    );

    // From the server's side: a page is requested again only if a kill came
    // between the two requests (its response was not stored yet). A kill
    // takes a while (find the processes, signal each), and a victim may
    // send a request until its signal lands; the server notes a request when
    // it reads it, a little later under load: hence the slack after a kill.
    let robots = c.web.expected(&c.limits()).robots;
    let mut requests: BTreeMap<String, Vec<Instant>> = BTreeMap::new();
    for e in c.web.logs() {
        let url = requested_url(&c.web, &e);
        if !robots.contains(&url) {
            requests.entry(url).or_default().push(e.start);
        }
    }
    let mut unexplained = Vec::new();
    for (url, mut starts) in requests {
        starts.sort();
        for pair in starts.windows(2) {
            let explained = kill_times
                .iter()
                .any(|&(begun, dead)| pair[0] <= dead + KILL_SLACK && begun <= pair[1]);
            if !explained {
                unexplained.push(format!(
                    "{url}: requested again {:.3}s later with no kill in between",
                    (pair[1] - pair[0]).as_secs_f64()
                ));
            }
        }
    }
    assert!(
        unexplained.is_empty(),
        "{story}pages fetched twice although stored:\n{}",
        some(&unexplained, 20)
    );

    // Every URL the servers saw is in a crawl log.
    let log = outcome.log_by_url();
    let unlogged: BTreeSet<String> = c
        .web
        .logs()
        .iter()
        .map(|e| requested_url(&c.web, e))
        .filter(|u| !log.contains_key(u.as_str()))
        .collect();
    assert!(
        unlogged.is_empty(),
        "{story}requested but not in any crawl.log:\n{}",
        some(&unlogged, 20)
    );

    if let Err(e) = warcio::check(&outcome.warc_files) {
        panic!("{story}{e}");
    }

    // Politeness holds across kills: a resumed run (or the next one) waits
    // each host's delay after the last request the killed run made, which
    // it knows from the contacts journal.
    let violations = c.politeness_violations();
    assert!(
        violations.is_empty(),
        "{story}politeness violated {} time(s) across kills:\n{}",
        violations.len(),
        some(&violations, 20)
    );
}
