//! Metrics files (Prometheus' text exposition format) as Prometheus' own
//! parser reads them: `text_string_to_metric_families` of the Python
//! client `prometheus_client`, which `scripts/test.sh` installs into
//! `.venv/`. Many texts go through one Python process ([`parse`]), so
//! that a test can take snapshots of a file while it changes and have
//! them all read afterwards.
//!
//! The interpreter is the `METRICS_PYTHON` environment variable, else
//! `.venv/bin/python`, else `python` on `PATH`.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;

/// One metric family, as the parser gives it.
#[derive(Debug, Clone)]
pub struct Family {
    /// Its name (a counter's without `_total`, as the parser names it).
    pub name: String,
    /// `counter`, `gauge`, ... (`unknown` without a `# TYPE` line).
    pub kind: String,
    /// Its `# HELP` text.
    pub help: String,
    /// Its samples.
    pub samples: Vec<Sample>,
}

/// One sample.
#[derive(Debug, Clone)]
pub struct Sample {
    /// The sample's own name (`crawl_fetch_pages_total`).
    pub name: String,
    /// Its labels.
    pub labels: BTreeMap<String, String>,
    /// Its value, as Python's `repr` wrote it (`12.0`, `nan`, `inf`).
    value: String,
}

impl Sample {
    /// The value.
    pub fn value(&self) -> f64 {
        self.value
            .parse()
            .unwrap_or_else(|_| panic!("{}: value {:?}", self.name, self.value))
    }
}

/// The families of one file, with lookups by sample name.
#[derive(Debug, Clone)]
pub struct Parsed {
    /// The families, in the file's order.
    pub families: Vec<Family>,
}

impl Parsed {
    /// Every sample named `name`.
    pub fn samples(&self, name: &str) -> Vec<&Sample> {
        self.families
            .iter()
            .flat_map(|f| &f.samples)
            .filter(|s| s.name == name)
            .collect()
    }

    /// The value of the one sample named `name` (panics if there is not
    /// exactly one).
    pub fn value(&self, name: &str) -> f64 {
        match self.samples(name)[..] {
            [s] => s.value(),
            ref other => panic!("{} samples named {name}: {other:?}", other.len()),
        }
    }

    /// The value of the sample named `name` whose label `label` is `value`.
    pub fn value_where(&self, name: &str, label: &str, value: &str) -> f64 {
        let found: Vec<&Sample> = self
            .samples(name)
            .into_iter()
            .filter(|s| s.labels.get(label).map(String::as_str) == Some(value))
            .collect();
        match found[..] {
            [s] => s.value(),
            _ => panic!("{} samples {name}{{{label}=\"{value}\"}}", found.len()),
        }
    }
}

/// The program run with each text on its standard input, as JSON: every
/// family with its type, help and samples.
const PARSER: &str = r#"
import json, sys
from prometheus_client.parser import text_string_to_metric_families
out = []
for text in json.load(sys.stdin):
    families = []
    for f in text_string_to_metric_families(text):
        families.append({"name": f.name, "type": f.type, "help": f.documentation,
                         "samples": [{"name": s.name, "labels": s.labels, "value": repr(s.value)}
                                     for s in f.samples]})
    out.append(families)
json.dump(out, sys.stdout)
"#;

/// Each of `texts` read by the parser, in order. Panics with the parser's
/// message if one is not in the format, or with instructions if the
/// parser is not installed.
pub fn parse(texts: &[String]) -> Vec<Parsed> {
    let python = crate::warcio::python_tool("python", "METRICS_PYTHON");
    let mut child = Command::new(&python)
        .args(["-c", PARSER])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{}: {e}", python.display()));
    let input = serde_json::to_vec(texts).expect("texts serialize");
    child
        .stdin
        .take()
        .expect("stdin piped")
        .write_all(&input)
        .expect("the parser reads its input");
    let out = child.wait_with_output().expect("the parser ends");
    assert!(
        out.status.success(),
        "{} could not read the metrics ({}); scripts/test.sh installs prometheus_client into \
         .venv/:\n{}",
        python.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let files: Vec<Value> = serde_json::from_slice(&out.stdout).expect("the parser's JSON");
    files.iter().map(parsed).collect()
}

/// One file's families from the parser's JSON.
fn parsed(file: &Value) -> Parsed {
    let text = |v: &Value, key: &str| v[key].as_str().expect("a string").to_string();
    let families = file
        .as_array()
        .expect("a list of families")
        .iter()
        .map(|f| Family {
            name: text(f, "name"),
            kind: text(f, "type"),
            help: text(f, "help"),
            samples: f["samples"]
                .as_array()
                .expect("a list of samples")
                .iter()
                .map(|s| Sample {
                    name: text(s, "name"),
                    labels: s["labels"]
                        .as_object()
                        .expect("labels")
                        .iter()
                        .map(|(k, v)| (k.clone(), v.as_str().expect("a label value").into()))
                        .collect(),
                    value: text(s, "value"),
                })
                .collect(),
        })
        .collect();
    Parsed { families }
}
