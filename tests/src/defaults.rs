//! The declared default of each setting (the `= DEFAULT` of its
//! declaration with [`common::options!`]) against the two places that
//! name it for a reader: the `[default: ...]` of its flag's `--help`, and
//! its line in the `crawl.toml` reference of `docs/guide.md`
//! ([`crate::docs::Sample`]). A default changed in one place and not the
//! others fails with the key named, the text found and the declared value.

use common::config::{Declared, POLITENESS_KEYS, SharedOptions};

use crate::docs::{Sample, help_default};

/// The value the program reads when `key` is given as `text` (TOML, or,
/// when that does not read, a TOML string: `--help` writes `10m` and
/// `host` bare), in its `Debug` form, as [`Declared::value_of`] gives it.
fn read_as<O: Declared>(key: &str, text: &str) -> Result<String, String> {
    let quoted = toml::Value::String(text.to_string()).to_string();
    let mut why = String::new();
    for value in [text, quoted.as_str()] {
        match toml::from_str::<O>(&format!("{key} = {value}")) {
            Ok(o) => return o.value_of(key).ok_or(format!("`{key}` is not a key")),
            Err(e) => why = e.to_string().lines().next().unwrap_or_default().to_string(),
        }
    }
    Err(why)
}

/// Checks the program's own settings `O` (the keys of `section`) and the
/// settings both programs share ([`SharedOptions`]: the
/// [`POLITENESS_KEYS`] of `[fetcher]` and the others of `[crawl]`) against
/// `docs/guide.md` and the `--help` of `command` ([`check_declared`]);
/// panics with every problem found.
pub fn assert_declared<O: Declared>(program: &str, command: &clap::Command, section: &'static str) {
    let sample = Sample::read();
    let mut problems = check_declared::<O>(&sample, program, command, &|_| section);
    problems.extend(check_declared::<SharedOptions>(
        &sample,
        program,
        command,
        &|key| match POLITENESS_KEYS.contains(&key) {
            true => "fetcher",
            false => "crawl",
        },
    ));
    assert!(
        problems.is_empty(),
        "defaults that differ from their declaration (common/src/config):\n{}",
        problems.join("\n")
    );
}

/// Checks each key of the settings `O` (in the section `section_of` names)
/// against the `--help` of `command` (the subcommand of `program` whose
/// flags they are) and the reference `sample`: a key with a declared
/// default names it, the same, in its flag's `--help` (a flag that takes a
/// value) and in an active line of the reference; a key without one is
/// commented out there, or written with the value the program reads when
/// it is unset (`allow_private = false`). Returns every problem, one a line.
pub fn check_declared<O: Declared>(
    sample: &Sample,
    program: &str,
    command: &clap::Command,
    section_of: &dyn Fn(&str) -> &'static str,
) -> Vec<String> {
    let mut problems = Vec::new();
    let guide = sample.path.display();
    for (key, declared) in O::keys() {
        let section = section_of(key);
        let unset = O::default().value_of(key).expect("a declared key");
        let default = || match declared {
            true => format!("its declared default is {unset}"),
            false => "it declares no default".to_string(),
        };
        match command.get_arguments().find(|a| a.get_id().as_str() == key) {
            None => problems.push(format!(
                "[{section}] {key}: no flag --{} in `{program} --help`",
                key.replace('_', "-")
            )),
            Some(arg) if declared && matches!(arg.get_action(), clap::ArgAction::Set) => {
                let help = arg
                    .get_long_help()
                    .or(arg.get_help())
                    .map(|h| h.to_string());
                match help.as_deref().and_then(help_default) {
                    None => problems.push(format!(
                        "[{section}] {key}: `{program} --help` names no [default: ...]; {}",
                        default()
                    )),
                    Some(text) => match read_as::<O>(key, text) {
                        Ok(v) if v == unset => {}
                        Ok(v) => problems.push(format!(
                            "[{section}] {key}: `{program} --help` says [default: {text}] \
                             ({v}), but {}",
                            default()
                        )),
                        Err(e) => problems.push(format!(
                            "[{section}] {key}: `{program} --help` says [default: {text}], \
                             which is not a value of it ({e}); {}",
                            default()
                        )),
                    },
                }
            }
            Some(_) => {}
        }
        let Some(line) = sample
            .keys
            .iter()
            .find(|k| k.section == section && k.key == key)
        else {
            problems.push(format!(
                "{guide}: [{section}] {key}: missing from the reference; {}",
                default()
            ));
            continue;
        };
        let at = format!("{guide}:{}: [{section}] {key}", line.line);
        if line.commented {
            if declared {
                problems.push(format!(
                    "{at}: commented out, as a key without a default, but {}",
                    default()
                ));
            }
            continue;
        }
        match read_as::<O>(key, &line.value.to_string()) {
            Ok(v) if v == unset => {}
            Ok(v) => problems.push(format!(
                "{at} = {}: the program reads {v}, but {} (comment the line out if the \
                 key has no default)",
                line.value,
                default()
            )),
            Err(e) => problems.push(format!("{at} = {}: refused: {e}", line.value)),
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::Duration;

    use clap::Args as _;
    use common::config::DurationValue;

    use super::*;

    common::options! {
        /// Settings declared for this test.
        pub struct Example => ExampleValues {
            /// Longest wait [default: 10s].
            #[arg(long, value_name = "DURATION")]
            pub wait: Option<DurationValue> = Duration::from_secs(10),
            /// Tries [default: 3, then it gives up].
            #[arg(long, value_name = "N")]
            pub tries: Option<u32> = 3,
            /// A proxy [default: the environment's].
            #[arg(long, value_name = "URL")]
            pub proxy: Option<String>,
            /// A switch.
            #[arg(long)]
            pub open: bool,
        }
    }

    common::options! {
        /// The same, its `--help` drifted from its declaration.
        pub struct Drifted => DriftedValues {
            /// Longest wait [default: 5s].
            #[arg(long, value_name = "DURATION")]
            pub wait: Option<DurationValue> = Duration::from_secs(10),
            /// Tries.
            #[arg(long, value_name = "N")]
            pub tries: Option<u32> = 3,
        }
    }

    fn problems(guide: &str) -> Vec<String> {
        let text = format!("<!-- crawl.toml reference -->\n```toml\n[x]\n{guide}```\n");
        let sample = Sample::parse(&text, Path::new("guide.md"));
        let command = Example::augment_args(clap::Command::new("example"));
        check_declared::<Example>(&sample, "example", &command, &|_| "x")
    }

    #[test]
    fn a_default_that_drifts_is_named_with_its_key() {
        let agreed = "wait = \"10s\"\ntries = 3\n# proxy = \"http://p:3128\"\nopen = false\n";
        assert_eq!(problems(agreed), Vec::<String>::new());
        let drift = problems("wait = \"5s\"\ntries = 3\nproxy = \"http://p:3128\"\n");
        assert_eq!(drift.len(), 3, "{drift:#?}");
        let said = [
            "guide.md:4: [x] wait = \"5s\": the program reads 5s, but its declared default is 10s",
            "guide.md:6: [x] proxy = \"http://p:3128\": the program reads Some(\"http://p:3128\"), \
             but it declares no default",
            "guide.md: [x] open: missing from the reference; it declares no default",
        ];
        for (got, want) in drift.iter().zip(said) {
            assert!(got.starts_with(want), "{got}\nnot {want}");
        }
        let sample = Sample::parse(
            "<!-- crawl.toml reference -->\n```toml\n[x]\nwait = \"10s\"\ntries = 3\n```\n",
            Path::new("guide.md"),
        );
        let command = Drifted::augment_args(clap::Command::new("drifted"));
        let help = check_declared::<Drifted>(&sample, "drifted", &command, &|_| "x");
        assert_eq!(
            help,
            [
                "[x] wait: `drifted --help` says [default: 5s] (5s), but its declared default \
                 is 10s",
                "[x] tries: `drifted --help` names no [default: ...]; its declared default is 3"
            ]
        );
        let commented = problems("# wait = \"10s\"\ntries = 3\nopen = false\n");
        assert!(
            commented[0].contains("wait: commented out") && commented.len() == 2,
            "{commented:#?}"
        );
    }
}
