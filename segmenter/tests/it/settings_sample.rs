//! The `crawl.toml` reference of `docs/guide.md` against the segmenter:
//! every key the segmenter reads (`[agent]`, `[crawl]`, `[scope]`,
//! `[filter]`, `[segmenter]`, and the politeness keys of `[fetcher]`) is
//! documented, every key of its sections documented there is real, and each
//! default written there is the segmenter's own and the one its
//! `run --help` names (see `testkit::docs::check_sample`).

use std::collections::BTreeSet;

use clap::{Args as _, CommandFactory as _};
use common::config::{
    AgentConfig, CrawlConfig, CrawlSection, DEFAULT_KEEP_LOGS, FilterConfig, POLITENESS_KEYS,
    ScopeConfig, SharedOptions,
};
use common::crawldir::CrawlDir;
use segmenter::cli::{Cli, RoundFlags, SegmenterOptions};
use segmenter::settings::Settings;
use testkit::TempDir;
use testkit::defaults::assert_declared;
use testkit::docs::{KeyInfo, Program, Sample, check_sample, debug_fields, flag_keys};

/// The `[scope]` key each scope flag sets.
const SCOPE_FLAGS: [(&str, &str); 4] = [
    ("scope", "mode"),
    ("scope_hosts", "hosts"),
    ("scope_domains", "domains"),
    ("rules_file", "rules_file"),
];

/// Every key the segmenter reads, with the `--help` of its flag.
fn keys() -> Vec<KeyInfo> {
    let own: BTreeSet<String> = SegmenterOptions::augment_args(clap::Command::new("o"))
        .get_arguments()
        .map(|a| a.get_id().to_string())
        .collect();
    let filter = debug_fields(&FilterConfig::default());
    let shared: BTreeSet<String> = SharedOptions::augment_args(clap::Command::new("s"))
        .get_arguments()
        .map(|a| a.get_id().to_string())
        .collect();
    let mut keys = flag_keys(RoundFlags::augment_args(clap::Command::new("r")), |id| {
        if own.contains(id) {
            Some("segmenter")
        } else if shared.contains(id) {
            Some(if POLITENESS_KEYS.contains(&id) {
                "fetcher"
            } else {
                "crawl"
            })
        } else if filter.iter().any(|f| f == id) {
            Some("filter")
        } else if SCOPE_FLAGS.iter().any(|(flag, _)| *flag == id) {
            Some("scope")
        } else {
            None
        }
    });
    for k in keys.iter_mut().filter(|k| k.section == "scope") {
        let (_, key) = SCOPE_FLAGS.iter().find(|(flag, _)| *flag == k.key).unwrap();
        k.key = key.to_string();
    }
    // `[crawl] keep_logs` is read by `segmenter prune` (its --keep-logs).
    let prune = Cli::command()
        .find_subcommand("prune")
        .expect("a prune subcommand")
        .clone();
    keys.extend(flag_keys(prune, |id| {
        (id == "keep_logs").then_some("crawl")
    }));
    // `[crawl] metrics_dir` and `metrics_name` are read by `next --record`
    // and `segmenter metrics` (no flag).
    keys.extend(["metrics_dir", "metrics_name"].map(|key| KeyInfo {
        section: "crawl".to_string(),
        key: key.to_string(),
        help: None,
        default_in_help: false,
    }));
    let scope = debug_fields(&ScopeConfig::default());
    assert_eq!(
        scope.len(),
        SCOPE_FLAGS.len(),
        "a [scope] key without its flag: {scope:?}"
    );
    keys.extend(
        debug_fields(&AgentConfig::default())
            .into_iter()
            .map(|key| KeyInfo {
                section: "agent".to_string(),
                key,
                help: None,
                default_in_help: false,
            }),
    );
    keys
}

/// Whether `line` (`key = value`) is a valid line of `section`.
fn accepts(section: &str, line: &str) -> Result<(), String> {
    let ok = match section {
        "segmenter" => toml::from_str::<SegmenterOptions>(line).map(drop),
        "fetcher" => toml::from_str::<SharedOptions>(line).map(drop),
        "crawl" => toml::from_str::<CrawlSection>(line).map(drop),
        "scope" => toml::from_str::<ScopeConfig>(line).map(drop),
        "filter" => toml::from_str::<FilterConfig>(line).map(drop),
        "agent" => toml::from_str::<AgentConfig>(line).map(drop),
        other => return Err(format!("[{other}] is not a section the segmenter reads")),
    };
    ok.map_err(|e| e.to_string())
}

#[test]
fn the_crawl_toml_reference_holds_every_key_and_default_of_the_segmenter() {
    let crawl = TempDir::new("segmenter-settings-sample");
    let resolve = |text: &str| -> Result<String, String> {
        crawl.write("crawl.toml", text);
        let settings = Settings::load(CrawlDir::new(crawl.path()), &RoundFlags::default())
            .map_err(|e| e.to_string())?;
        // The retention `segmenter prune` resolves.
        let keep_logs = CrawlConfig::load(&crawl.join("crawl.toml"))
            .map_err(|e| e.to_string())?
            .crawl
            .keep_logs
            .map_or(DEFAULT_KEEP_LOGS, std::time::Duration::from);
        // Whether the Bloom parameters were given, not what they are.
        Ok(format!("{settings:#?}\nkeep_logs: {keep_logs:?}")
            .replace("bloom_explicit: true", "bloom_explicit: false"))
    };
    let sample = Sample::read();
    let problems = check_sample(
        &sample,
        &Program {
            name: "segmenter",
            owns: &["agent", "crawl", "scope", "filter", "segmenter"],
            keys: keys(),
            resolve: &resolve,
            accepts: &accepts,
        },
    );
    assert!(
        problems.is_empty(),
        "the crawl.toml reference disagrees with the segmenter:\n{}",
        problems.join("\n")
    );
}

#[test]
fn each_declared_default_is_the_one_run_help_and_the_reference_name() {
    let cli = <Cli as clap::CommandFactory>::command();
    let run = cli.find_subcommand("run").expect("a run subcommand");
    assert_declared::<SegmenterOptions>("segmenter run", run, "segmenter");
}
