//! Mistakes at the edges, as a newcomer makes them: a typo in `crawl.toml`,
//! a crawl directory that does not exist or where no crawl was started, a
//! seeds file without a seed, a URL of 5,000 characters. Each program
//! refuses with the same message and exit code whichever meets it first,
//! names the file or directory and what to do, and creates nothing.

use testkit::TempDir;
use testkit::bins::{self, Finished, fetcher_cmd, segmenter_cmd};
use testkit::files::names;
use testkit::server::{Request, Response, Server};

use crate::support;

/// `crawl.toml` with an agent (so that the fetcher's own check of it is
/// passed) and `rest`.
fn crawl_toml(rest: &str) -> String {
    format!("[agent]\nname = \"testbot\"\nurl = \"https://example.org/bot.html\"\n{rest}")
}

/// Asserts that the program's stderr holds `part`.
#[track_caller]
fn assert_said(out: &Finished, part: &str) {
    assert!(
        out.stderr.contains(part),
        "{part:?} not in:\n{}",
        out.stderr
    );
}

/// stderr without the program's name in front of each line.
fn message(out: &Finished, program: &str) -> String {
    out.stderr
        .lines()
        .map(|l| l.strip_prefix(program).unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_mistake_anywhere_in_crawl_toml_is_refused_alike_by_both_programs() {
    let scratch = TempDir::new("inputs-toml");
    let seeds = scratch.join("seeds.txt");
    std::fs::write(&seeds, "http://a.test/\n").unwrap();
    let cases = [
        (
            "[fetcher]\nmin_delai = \"1s\"\n",
            "[fetcher]: unknown key `min_delai`; did you mean `min_delay`?",
        ),
        (
            "[fetcher]\nthreads = \"many\"\n",
            "[fetcher] threads = \"many\": invalid type: string \"many\"",
        ),
        (
            "[segmenter]\nthreads = \"many\"\n",
            "[segmenter] threads = \"many\": invalid type: string \"many\"",
        ),
        (
            "[fetcher]\nmin_free_disk = \"1GB\"\n",
            "[fetcher]: unknown key `min_free_disk`; it is a key of [crawl]",
        ),
    ];
    for (i, (rest, expected)) in cases.into_iter().enumerate() {
        let crawl = scratch.join(&format!("crawl-{i}"));
        std::fs::create_dir_all(&crawl).unwrap();
        std::fs::write(crawl.join("crawl.toml"), crawl_toml(rest)).unwrap();
        let inject = bins::run_expecting(
            segmenter_cmd().arg("inject").arg(&crawl).arg(&seeds),
            &crawl,
            2,
        );
        let fetch = bins::run_expecting(fetcher_cmd().arg("fetch").arg(&crawl), &crawl, 2);
        let said = message(&inject, "segmenter: ");
        assert!(
            said.starts_with(&format!(
                "{}: {expected}",
                crawl.join("crawl.toml").display()
            )),
            "{rest}: {said}"
        );
        assert_eq!(said, message(&fetch, "fetcher: "), "{rest}");
        assert_eq!(said.lines().count(), 1, "{said}");
        // Refused before anything was made.
        assert_eq!(names(&crawl), ["crawl.toml"], "{rest}");
    }
    // The list after a misspelt key is the section's whole list.
    let crawl = scratch.join("crawl-0");
    let out = bins::run_expecting(fetcher_cmd().arg("fetch").arg(&crawl), &crawl, 2);
    for key in ["min_delay", "delay_factor", "backoff_max"] {
        assert_said(&out, &format!(" {key},"));
    }
}

#[test]
fn a_directory_without_a_crawl_is_refused_naming_the_command_that_starts_one() {
    let scratch = TempDir::new("inputs-dirs");
    let missing = scratch.join("mycrawl");
    let shown = missing.display().to_string();
    let expected = format!(
        "{shown}: no such crawl directory; start a crawl there with `scripts/crawl.sh {shown} \
         --seeds SEEDS_FILE` (or `segmenter inject {shown} SEEDS_FILE`)"
    );
    // crawl.sh without --seeds, refused with exit 2.
    let crawl_sh = || {
        bins::run_expecting(
            std::process::Command::new(support::crawl_sh())
                .arg(&missing)
                .arg("--bin")
                .arg(bins::bin_dir()),
            scratch.path(),
            2,
        )
    };
    // The fetcher looks at the directory before the user agent.
    let fetch = bins::run_expecting(fetcher_cmd().arg("fetch").arg(&missing), scratch.path(), 2);
    assert_eq!(message(&fetch, "fetcher: "), expected);
    let status = bins::run_expecting(
        segmenter_cmd().arg("status").arg(&missing),
        scratch.path(),
        2,
    );
    assert_eq!(message(&status, "segmenter: "), expected);
    let sh = crawl_sh();
    assert!(
        sh.stderr.starts_with(&format!(
            "crawl.sh: {shown}: no such crawl directory; start a crawl there with: "
        )) && sh
            .stderr
            .contains(&format!("crawl.sh {shown} --seeds SEEDS_FILE")),
        "{}",
        sh.stderr
    );
    assert!(!missing.exists(), "a directory was made");

    // A directory where no crawl was started: refused, left as it was.
    std::fs::create_dir_all(&missing).unwrap();
    let fetch = bins::run_expecting(
        fetcher_cmd().arg("fetch").arg(&missing).args([
            "--agent-name",
            "testbot",
            "--agent-url",
            "http://bot.test/",
        ]),
        scratch.path(),
        2,
    );
    assert!(
        fetch.stderr.starts_with(&format!(
            "fetcher: {shown}: no crawl was started here (no segment, no seen.bloom); start one \
             with `scripts/crawl.sh {shown} --seeds SEEDS_FILE`"
        )),
        "{}",
        fetch.stderr
    );
    let sh = crawl_sh();
    assert_said(&sh, "no crawl was started here");
    assert!(names(&missing).is_empty(), "{:?}", names(&missing));
}

#[test]
fn with_no_segment_waiting_the_fetcher_says_what_the_state_of_the_crawl_asks_for() {
    let server = Server::builder()
        .host("a.test", |req: &Request| match req.path() {
            "/robots.txt" => Response::not_found(),
            _ => Response::html("<p>no links</p>"),
        })
        .start()
        .unwrap();
    let scratch = TempDir::new("inputs-nothing");
    let crawl = scratch.join("crawl");
    let hosts = scratch.join("hosts");
    std::fs::write(&hosts, server.hosts_file()).unwrap();
    let seeds = scratch.join("seeds.txt");
    std::fs::write(&seeds, format!("{}\n", server.url("a.test", "/"))).unwrap();
    bins::run(
        segmenter_cmd()
            .arg("inject")
            .arg(&crawl)
            .arg(&seeds)
            .args(["--min-free-disk", "0"]),
        &crawl,
    );
    bins::run(&mut bins::fetch_cmd(&crawl, &hosts), &crawl);
    let shown = crawl.display();
    // The fetched run waits for the segmenter.
    let out = bins::run(&mut bins::fetch_cmd(&crawl, &hosts), &crawl);
    assert_said(
        &out,
        &format!(
            "no segment waiting to be fetched (1 fetched run(s) not read yet: `segmenter run \
             {shown}` makes the next segment from them)"
        ),
    );
    // Read, and nothing new found: the segmenter has nothing to make.
    bins::run(
        segmenter_cmd()
            .arg("run")
            .arg(&crawl)
            .args(["--min-free-disk", "0"]),
        &crawl,
    );
    let out = bins::run(&mut bins::fetch_cmd(&crawl, &hosts), &crawl);
    assert_said(
        &out,
        &format!(
            "every fetched run was read and no URL waits in a segment; `segmenter next {shown}` \
             says what the crawl does next"
        ),
    );
    assert!(!out.stderr.contains("`segmenter run"), "{}", out.stderr);
}

#[test]
fn a_seeds_file_without_a_seed_is_refused_and_leaves_nothing() {
    let scratch = TempDir::new("inputs-seeds");
    let crawl = scratch.join("crawl");
    let long = format!("http://a.test/{}", "x".repeat(4986));
    let seeds = scratch.join("seeds.txt");
    std::fs::write(
        &seeds,
        format!("not a url\nftp://a.test/file\n# a comment\n\n{long}\n"),
    )
    .unwrap();
    let out = bins::run_expecting(
        segmenter_cmd().arg("inject").arg(&crawl).arg(&seeds),
        scratch.path(),
        2,
    );
    let said = message(&out, "segmenter: ");
    assert_eq!(said.lines().count(), 1, "{said}");
    for part in [
        "seeds.txt: no seed to crawl: every line was refused (3): line 1: not a url: not a \
         valid URL",
        "line 2: ftp://a.test/file: scheme `ftp` is not crawled",
        "line 5: http://a.test/xxx",
        "xxx (5,000 characters): refused by the too-long filter",
        "Nothing was created or changed",
    ] {
        assert!(said.contains(part), "{part:?} not in: {said}");
    }
    assert!(said.len() < 600, "{} characters: {said}", said.len());
    assert!(!crawl.exists(), "a crawl was made: {:?}", names(&crawl));

    let only_comments = scratch.join("comments.txt");
    std::fs::write(&only_comments, "# seeds to come\n\n").unwrap();
    let out = bins::run_expecting(
        segmenter_cmd()
            .arg("inject")
            .arg(&crawl)
            .arg(&only_comments),
        scratch.path(),
        2,
    );
    assert_said(
        &out,
        "no seed to crawl: it holds no URL, only blank lines and comments",
    );
    assert!(!crawl.exists());

    // Beside a good seed, the long URL is refused in a line of its own,
    // cut short.
    std::fs::write(&seeds, format!("{long}\nhttp://a.test/\n")).unwrap();
    let out = bins::run(
        segmenter_cmd()
            .arg("inject")
            .arg(&crawl)
            .arg(&seeds)
            .args(["--min-free-disk", "0"]),
        scratch.path(),
    );
    let line = out
        .stderr
        .lines()
        .find(|l| l.contains("seeds.txt:1:"))
        .unwrap_or_else(|| panic!("the long URL is not named:\n{}", out.stderr));
    assert!(
        line.contains("(5,000 characters)") && line.len() < 300,
        "{} characters: {line}",
        line.len()
    );
    assert!(
        crawl.join("segments").is_dir(),
        "the good seed makes a crawl"
    );
}
