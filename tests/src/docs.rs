//! Checks of the documentation against the programs: the `crawl.toml`
//! reference of `docs/guide.md` ([`Sample`], [`check_sample`]) and the
//! relative links between the Markdown files ([`broken_links`]).
//!
//! The reference is the `toml` block that follows the line
//! `<!-- crawl.toml reference ... -->`: every key with its default, or
//! commented out (`# key = example`) when it has no fixed default. Each
//! program's tests give [`check_sample`] the keys it reads (from its flags
//! and its settings types) and a way to resolve a `crawl.toml`; the check
//! then asks that every key is documented, that every documented key is
//! real, and that setting a key to its documented default, or to the
//! default its `--help` names, changes nothing in the resolved settings.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The line that precedes the reference block.
const SAMPLE_MARKER: &str = "<!-- crawl.toml reference";

/// A key of the `crawl.toml` reference.
#[derive(Debug, Clone, PartialEq)]
pub struct SampleKey {
    /// Its section (`fetcher`, `crawl`, ...).
    pub section: String,
    /// The key.
    pub key: String,
    /// The value written (the default, or an example when commented out).
    pub value: toml::Value,
    /// True when the line is commented out: no fixed default.
    pub commented: bool,
    /// Its line in the Markdown file.
    pub line: usize,
}

/// The `crawl.toml` reference of `docs/guide.md`.
#[derive(Debug, Clone)]
pub struct Sample {
    /// The file it was read from.
    pub path: PathBuf,
    /// Every key, in order.
    pub keys: Vec<SampleKey>,
}

impl Sample {
    /// Reads the reference from `docs/guide.md`; panics, saying what is
    /// wrong, when the block is missing or is not valid TOML.
    pub fn read() -> Sample {
        let path = crate::repo_root().join("docs").join("guide.md");
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        Sample::parse(&text, &path)
    }

    /// Reads the reference from `text`, the contents of `path`.
    pub fn parse(text: &str, path: &Path) -> Sample {
        let lines: Vec<&str> = text.lines().collect();
        let marker = lines
            .iter()
            .position(|l| l.starts_with(SAMPLE_MARKER))
            .unwrap_or_else(|| panic!("{}: no line starting {SAMPLE_MARKER:?}", path.display()));
        let open = marker + 1;
        assert_eq!(
            lines.get(open).copied(),
            Some("```toml"),
            "{}:{}: the reference must start right after the marker line",
            path.display(),
            open + 1
        );
        let close = (open + 1..lines.len())
            .find(|&i| lines[i] == "```")
            .unwrap_or_else(|| panic!("{}: the reference block never ends", path.display()));
        let block = lines[open + 1..close].join("\n");
        let active: toml::Table = toml::from_str(&block)
            .unwrap_or_else(|e| panic!("{}: the reference is not TOML: {e}", path.display()));
        let mut keys = Vec::new();
        let mut section = String::new();
        for (i, raw) in lines[open + 1..close].iter().enumerate() {
            let line = open + 2 + i;
            let l = raw.trim();
            if let Some(rest) = l.strip_prefix('[') {
                section = rest.split(']').next().unwrap_or_default().to_string();
                continue;
            }
            let (commented, l) = match l.strip_prefix("# ") {
                Some(rest) => (true, rest),
                None => (false, l),
            };
            let Some((key, _)) = l.split_once(" = ") else {
                continue;
            };
            let key = key.trim();
            if key.is_empty() || !key.bytes().all(|b| b.is_ascii_lowercase() || b == b'_') {
                continue;
            }
            let value = if commented {
                let one: toml::Table = toml::from_str(l).unwrap_or_else(|e| {
                    panic!(
                        "{}:{line}: commented-out key is not TOML: {e}",
                        path.display()
                    )
                });
                one[key].clone()
            } else {
                active[section.as_str()][key].clone()
            };
            keys.push(SampleKey {
                section: section.clone(),
                key: key.to_string(),
                value,
                commented,
                line,
            });
        }
        Sample {
            path: path.to_path_buf(),
            keys,
        }
    }

    /// The active keys of `section` as `crawl.toml` text.
    pub fn section_text(&self, section: &str) -> String {
        let mut out = format!("[{section}]\n");
        for k in self
            .keys
            .iter()
            .filter(|k| k.section == section && !k.commented)
        {
            out.push_str(&format!("{} = {}\n", k.key, k.value));
        }
        out
    }
}

/// What a program says of one of its keys.
#[derive(Debug, Clone)]
pub struct KeyInfo {
    /// Its section.
    pub section: String,
    /// The key.
    pub key: String,
    /// The `--help` text of its flag, if it has one.
    pub help: Option<String>,
    /// Whether that text must name its default (`[default: ...]`): true
    /// for a flag that takes one value; a switch is off, and a list flag
    /// adds to the file's list.
    pub default_in_help: bool,
}

/// The keys of the flags of `cmd` (their ids, which are the field names:
/// `max_body` for `--max-body`), each in the section `section_of` gives
/// (`None`: not a key), with their `--help` texts.
pub fn flag_keys(
    cmd: clap::Command,
    section_of: impl Fn(&str) -> Option<&'static str>,
) -> Vec<KeyInfo> {
    cmd.get_arguments()
        .filter(|a| !matches!(a.get_id().as_str(), "help" | "version"))
        .filter_map(|a| {
            let section = section_of(a.get_id().as_str())?;
            Some(KeyInfo {
                section: section.to_string(),
                key: a.get_id().to_string(),
                help: a.get_long_help().or(a.get_help()).map(|h| h.to_string()),
                default_in_help: matches!(a.get_action(), clap::ArgAction::Set),
            })
        })
        .collect()
}

/// The names of the fields of a struct, read from its `{:#?}` form: for a
/// section of `crawl.toml` deserialized into a struct (`[filter]`), its keys.
pub fn debug_fields(value: &dyn std::fmt::Debug) -> Vec<String> {
    format!("{value:#?}")
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("    ")?;
            let (name, _) = rest.split_once(": ")?;
            let ident = !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
            ident.then(|| name.to_string())
        })
        .collect()
}

/// A program, as [`check_sample`] asks it.
pub struct Program<'a> {
    /// Its name, for messages.
    pub name: &'a str,
    /// The sections whose every key it reads (of others it may read a few).
    pub owns: &'a [&'a str],
    /// Every key it reads.
    pub keys: Vec<KeyInfo>,
    /// Its settings resolved from a whole `crawl.toml` (a dump to compare,
    /// such as their `Debug` form), or the error it gives.
    pub resolve: &'a dyn Fn(&str) -> Result<String, String>,
    /// Whether `key = value` is accepted in `section` (the check for a
    /// commented-out key, which may name a file that does not exist).
    pub accepts: &'a dyn Fn(&str, &str) -> Result<(), String>,
}

/// The `[default: ...]` of a `--help` text, up to its first comma (what
/// follows is prose: `[default: 0, never]`).
pub fn help_default(help: &str) -> Option<&str> {
    let start = help.rfind("[default: ")? + "[default: ".len();
    let rest = &help[start..];
    let end = rest.find(']')?;
    Some(rest[..end].split(", ").next().unwrap_or_default().trim())
}

/// `text` (a default as `--help` writes it) as a TOML value of the kind of
/// `like` (the documented one): a number or boolean as itself, anything
/// else as a string.
fn help_value(text: &str, like: &toml::Value) -> String {
    if like.is_float()
        && let Ok(x) = text.parse::<f64>()
    {
        return format!("{x:?}");
    }
    match toml::from_str::<toml::Table>(&format!("v = {text}")) {
        Ok(t) if !t["v"].is_str() => text.to_string(),
        _ => toml::Value::String(text.to_string()).to_string(),
    }
}

/// Checks the reference against `program`; returns every problem found,
/// one a line (empty when they agree). The `[agent]` section of the sample
/// is part of every `crawl.toml` resolved.
pub fn check_sample(sample: &Sample, program: &Program) -> Vec<String> {
    let mut problems = Vec::new();
    let at = |k: &SampleKey| format!("{}:{}", sample.path.display(), k.line);
    let theirs: BTreeMap<(&str, &str), &KeyInfo> = program
        .keys
        .iter()
        .map(|k| ((k.section.as_str(), k.key.as_str()), k))
        .collect();
    let ours: BTreeMap<(&str, &str), &SampleKey> = sample
        .keys
        .iter()
        .map(|k| ((k.section.as_str(), k.key.as_str()), k))
        .collect();
    for (section, key) in theirs.keys() {
        if !ours.contains_key(&(section, key)) {
            problems.push(format!(
                "[{section}] {key}: a key of {} missing from the reference",
                program.name
            ));
        }
    }
    for k in sample
        .keys
        .iter()
        .filter(|k| program.owns.contains(&k.section.as_str()))
    {
        if !theirs.contains_key(&(k.section.as_str(), k.key.as_str())) {
            problems.push(format!(
                "{}: [{}] {}: not a key {} reads",
                at(k),
                k.section,
                k.key,
                program.name
            ));
        }
    }
    let agent = sample.section_text("agent");
    let with = |section: &str, line: &str| {
        let mut text = agent.clone();
        if section != "agent" {
            text.push_str(&format!("[{section}]\n"));
        }
        text.push_str(line);
        text.push('\n');
        text
    };
    let baseline = match (program.resolve)(&agent) {
        Ok(b) => b,
        Err(e) => {
            problems.push(format!(
                "{}: the reference's [agent] alone is refused: {e}",
                program.name
            ));
            return problems;
        }
    };
    for k in &sample.keys {
        let Some(info) = theirs.get(&(k.section.as_str(), k.key.as_str())) else {
            continue;
        };
        let line = format!("{} = {}", k.key, k.value);
        if k.commented {
            if let Err(e) = (program.accepts)(&k.section, &line) {
                problems.push(format!(
                    "{}: `{line}` is refused by {}: {e}",
                    at(k),
                    program.name
                ));
            }
            continue;
        }
        if k.section == "agent" {
            continue;
        }
        match (program.resolve)(&with(&k.section, &line)) {
            Ok(s) if s == baseline => {}
            Ok(_) => problems.push(format!(
                "{}: [{}] {line}: not the default of {} (setting it changes the settings)",
                at(k),
                k.section,
                program.name
            )),
            Err(e) => problems.push(format!("{}: [{}] {line}: refused: {e}", at(k), k.section)),
        }
        let Some(help) = &info.help else { continue };
        match help_default(help) {
            Some(text) => {
                let help_line = format!("{} = {}", k.key, help_value(text, &k.value));
                match (program.resolve)(&with(&k.section, &help_line)) {
                    Ok(s) if s == baseline => {}
                    Ok(_) => problems.push(format!(
                        "{}: [{}] {}: `--help` of {} says [default: {text}], which is not its default",
                        at(k),
                        k.section,
                        k.key,
                        program.name
                    )),
                    Err(e) => problems.push(format!(
                        "{}: [{}] {}: the `--help` default `{help_line}` is refused: {e}",
                        at(k),
                        k.section,
                        k.key
                    )),
                }
            }
            None if !info.default_in_help => {}
            None => problems.push(format!(
                "{}: [{}] {}: its `--help` in {} names no [default: ...]",
                at(k),
                k.section,
                k.key,
                program.name
            )),
        }
    }
    problems
}

/// Every relative link of the Markdown files `files` (`[text](path)`,
/// `[text](path#anchor)`, `[text](#anchor)`) whose file does not exist or
/// whose anchor is not a heading of that file, as `file:line: link: why`.
/// Links with a scheme (`https:`) are not followed.
pub fn broken_links(files: &[PathBuf]) -> Vec<String> {
    let mut out = Vec::new();
    for file in files {
        let text =
            std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let mut fenced = false;
        for (n, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
            }
            if fenced {
                continue;
            }
            for target in link_targets(line) {
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                let (path, anchor) = match target.split_once('#') {
                    Some((p, a)) => (p, Some(a)),
                    None => (target.as_str(), None),
                };
                let dest = if path.is_empty() {
                    file.clone()
                } else {
                    file.parent().unwrap_or(Path::new(".")).join(path)
                };
                let why = if !dest.exists() {
                    Some("no such file".to_string())
                } else if let Some(a) = anchor {
                    let headings = std::fs::read_to_string(&dest)
                        .map(|t| anchors(&t))
                        .unwrap_or_default();
                    (!headings.contains(a)).then(|| format!("no heading with anchor #{a}"))
                } else {
                    None
                };
                if let Some(why) = why {
                    out.push(format!("{}:{}: ({target}): {why}", file.display(), n + 1));
                }
            }
        }
    }
    out
}

/// The targets of the inline links of one line of Markdown, code spans
/// left out.
fn link_targets(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_code = false;
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'`' => in_code = !in_code,
            b']' if !in_code && bytes.get(i + 1) == Some(&b'(') => {
                if let Some(end) = line[i + 2..].find(')') {
                    out.push(line[i + 2..i + 2 + end].to_string());
                    i += 2 + end;
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// The anchors GitHub gives the headings of a Markdown text: lower case,
/// spaces to `-`, every character but letters, digits, `-` and `_`
/// dropped; a repeated heading gets `-1`, `-2`, ...
pub fn anchors(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        if fenced || !line.starts_with('#') {
            continue;
        }
        let title = line.trim_start_matches('#');
        if !title.starts_with(' ') {
            continue;
        }
        let slug: String = title
            .trim()
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        let n = seen.entry(slug.clone()).or_insert(0);
        out.insert(if *n == 0 {
            slug.clone()
        } else {
            format!("{slug}-{n}")
        });
        *n += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors_follow_github() {
        let a = anchors(
            "# Guide\n## Settings (`CRAWL/crawl.toml`)\n## Rounds: how long, and when they end\n```\n# not a heading\n```\n## Rounds: how long, and when they end\n",
        );
        for want in [
            "guide",
            "settings-crawlcrawltoml",
            "rounds-how-long-and-when-they-end",
            "rounds-how-long-and-when-they-end-1",
        ] {
            assert!(a.contains(want), "{want} not in {a:?}");
        }
        assert!(!a.contains("not-a-heading"));
    }

    #[test]
    fn a_link_to_a_missing_file_or_heading_is_reported() {
        let dir = crate::TempDir::new("docs-links");
        std::fs::write(dir.join("b.md"), "# B\n## Part two\n").unwrap();
        let a = dir.write(
            "a.md",
            "# A\nsee [b](b.md), [two](b.md#part-two), [here](#a), `[code](x.md)`\n\
             [gone](c.md) and [nowhere](b.md#part-three) and [web](https://example.org/x)\n",
        );
        let broken = broken_links(&[a]);
        assert_eq!(broken.len(), 2, "{broken:#?}");
        assert!(
            broken[0].ends_with("a.md:3: (c.md): no such file"),
            "{}",
            broken[0]
        );
        assert!(
            broken[1].contains("no heading with anchor #part-three"),
            "{}",
            broken[1]
        );
    }

    #[test]
    fn the_sample_is_read_with_commented_keys_and_their_lines() {
        let text = "x\n<!-- crawl.toml reference -->\n```toml\n[agent]\nname = \"bot\"  # c\n\n[fetcher]\nmin_delay = \"5s\" # see [Rounds]\n# threads = 64   # default: grown\n```\n";
        let s = Sample::parse(text, Path::new("guide.md"));
        let got: Vec<(&str, &str, bool, usize)> = s
            .keys
            .iter()
            .map(|k| (k.section.as_str(), k.key.as_str(), k.commented, k.line))
            .collect();
        assert_eq!(
            got,
            [
                ("agent", "name", false, 5),
                ("fetcher", "min_delay", false, 8),
                ("fetcher", "threads", true, 9)
            ]
        );
        assert_eq!(s.keys[2].value, toml::Value::Integer(64));
        assert_eq!(s.section_text("fetcher"), "[fetcher]\nmin_delay = \"5s\"\n");
        assert_eq!(help_default("Connect timeout [default: 10s]."), Some("10s"));
        assert_eq!(help_default("Stop [default: 0, never]"), Some("0"));
        assert_eq!(help_value("5", &toml::Value::Float(5.0)), "5.0");
        assert_eq!(
            help_value("host", &toml::Value::String("host".into())),
            "\"host\""
        );
        assert_eq!(help_value("64", &toml::Value::Integer(64)), "64");
    }
}
