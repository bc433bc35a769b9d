//! The `crawl.toml` reference of `docs/guide.md` against the fetcher: every
//! key the fetcher reads (`[agent]`, `[crawl]`, `[scope]`, `[filter]`,
//! `[fetcher]`) is documented, every key documented there is real, and
//! each default written there is the fetcher's own and the one its
//! `fetch --help` names (see `testkit::docs::check_sample`).

use clap::{Args as _, Parser as _};
use common::config::{
    AgentConfig, CrawlSection, FilterConfig, POLITENESS_KEYS, ScopeConfig, SharedOptions,
};
use fetcher::cli::{Cli, Command, FetcherOptions};
use fetcher::settings::Settings;
use testkit::TempDir;
use testkit::defaults::assert_declared;
use testkit::docs::{KeyInfo, Program, Sample, check_sample, debug_fields, flag_keys};

/// Every key the fetcher reads, with the `--help` of its flag.
fn keys() -> Vec<KeyInfo> {
    let mut keys = flag_keys(
        FetcherOptions::augment_args(clap::Command::new("f")),
        |_| Some("fetcher"),
    );
    keys.extend(flag_keys(
        SharedOptions::augment_args(clap::Command::new("s")),
        |id| {
            Some(if POLITENESS_KEYS.contains(&id) {
                "fetcher"
            } else {
                "crawl"
            })
        },
    ));
    for (section, fields) in [
        ("agent", debug_fields(&AgentConfig::default())),
        ("scope", debug_fields(&ScopeConfig::default())),
        ("filter", debug_fields(&FilterConfig::default())),
    ] {
        keys.extend(fields.into_iter().map(|key| KeyInfo {
            section: section.to_string(),
            key,
            help: None,
            default_in_help: false,
        }));
    }
    keys
}

/// Whether `line` (`key = value`) is a valid line of `section`.
fn accepts(section: &str, line: &str) -> Result<(), String> {
    let key = line.split(" = ").next().unwrap_or_default();
    let ok = match section {
        "fetcher" if POLITENESS_KEYS.contains(&key) => {
            toml::from_str::<SharedOptions>(line).map(drop)
        }
        "fetcher" => toml::from_str::<FetcherOptions>(line).map(drop),
        "crawl" => toml::from_str::<CrawlSection>(line).map(drop),
        "scope" => toml::from_str::<ScopeConfig>(line).map(drop),
        "filter" => toml::from_str::<FilterConfig>(line).map(drop),
        "agent" => toml::from_str::<AgentConfig>(line).map(drop),
        other => return Err(format!("[{other}] is not a section the fetcher reads")),
    };
    ok.map_err(|e| e.to_string())
}

#[test]
fn the_crawl_toml_reference_holds_every_key_and_default_of_the_fetcher() {
    let crawl = TempDir::new("fetcher-settings-sample");
    let resolve = |text: &str| -> Result<String, String> {
        crawl.write("crawl.toml", text);
        let cli = Cli::try_parse_from([
            "fetcher".as_ref(),
            "fetch".as_ref(),
            crawl.path().as_os_str(),
        ])
        .map_err(|e| e.to_string())?;
        let Command::Fetch(args) = cli.command else {
            unreachable!("parsed as fetch")
        };
        // No environment: the proxy is the file's, or none.
        Settings::from_args_and_env(*args, |_| None)
            .map(|s| format!("{s:#?}"))
            .map_err(|e| e.to_string())
    };
    let sample = Sample::read();
    let problems = check_sample(
        &sample,
        &Program {
            name: "fetcher",
            // Not [crawl]: its keep_logs is read by `segmenter prune` only;
            // the segmenter's test checks that every key of it is real.
            owns: &["agent", "scope", "filter", "fetcher"],
            keys: keys(),
            resolve: &resolve,
            accepts: &accepts,
        },
    );
    assert!(
        problems.is_empty(),
        "the crawl.toml reference disagrees with the fetcher:\n{}",
        problems.join("\n")
    );
}

#[test]
fn each_declared_default_is_the_one_fetch_help_and_the_reference_name() {
    let cli = <Cli as clap::CommandFactory>::command();
    let fetch = cli.find_subcommand("fetch").expect("a fetch subcommand");
    assert_declared::<FetcherOptions>("fetcher fetch", fetch, "fetcher");
}
