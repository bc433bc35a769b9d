//! `segmenter status --host HOST`: the host rules that apply to one host,
//! and where each value in force comes from (a line of `host-rules.toml`,
//! or the crawl-wide setting behind it).

use std::path::Path;

use common::crawldir::CrawlDir;
use common::human;
use common::rules::{Key, Value};

use crate::error::Error;
use crate::flags::RoundFlags;
use crate::settings::Settings;

/// Prints the rules of `host` in the crawl `root` (text, or one line of
/// JSON): the crawl's settings are read as `segmenter run` reads them.
pub fn explain(root: &Path, host: &str, json: bool) -> Result<(), Error> {
    let host = canonical_host(host)?;
    let settings = Settings::load(CrawlDir::new(root), &RoundFlags::default())?;
    let explanation = settings
        .host_rules
        .for_host(&host, None)
        .explain(|key| crawl_wide(&settings, key));
    if json {
        let line = serde_json::to_string(&explanation).map_err(|e| Error::Io {
            path: root.to_path_buf(),
            source: e.into(),
        })?;
        println!("{line}");
    } else {
        print!("{explanation}");
    }
    Ok(())
}

/// The host as URLs of the crawl hold it (lower case, IDNA in punycode).
fn canonical_host(host: &str) -> Result<String, Error> {
    let url = common::urlnorm::canonicalize(&format!("http://{host}/"))
        .map_err(|e| Error::Usage(format!("--host {host}: not a host name ({e})")))?;
    Ok(common::urlnorm::host_of(&url).to_string())
}

/// The crawl-wide value behind `key` and where it is set, for the keys
/// the segmenter knows.
fn crawl_wide(s: &Settings, key: Key) -> Option<(String, String)> {
    let limit = |n: Option<u64>, show: fn(u64) -> String| n.map_or("no limit".into(), show);
    let (value, place) = match key {
        Key::MinDelay => (
            Value::Duration(s.policy.min_delay).to_string(),
            "[fetcher] min_delay",
        ),
        Key::DelayFactor => (s.policy.delay_factor.to_string(), "[fetcher] delay_factor"),
        Key::MaxPerHost => (
            s.options.max_per_host.to_string(),
            "[segmenter] max_per_host",
        ),
        Key::MaxHostPages => (
            limit(s.options.max_host_pages, |n| n.to_string()),
            "[segmenter] max_host_pages",
        ),
        Key::MaxHostBytes => (
            limit(s.max_host_bytes, human::bytes),
            "[crawl] max_host_bytes",
        ),
        Key::RecrawlMin => (
            Value::Duration(s.schedule.min).to_string(),
            "[segmenter] recrawl_min",
        ),
        Key::RecrawlMax => (
            Value::Duration(s.schedule.max).to_string(),
            "[segmenter] recrawl_max",
        ),
        _ => return None,
    };
    Some((value, format!("crawl-wide ({place})")))
}
