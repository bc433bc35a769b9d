//! The crawl's figures for a monitoring system: files in Prometheus' text
//! exposition format (version 0.0.4), as node_exporter's textfile collector
//! reads them, each rewritten whole and atomically ([`crate::atomic`]).
//!
//! ```text
//! # HELP crawl_fetch_pages_total HTTP responses to pages (robots.txt not included) in the segment's crawl log.
//! # TYPE crawl_fetch_pages_total counter
//! crawl_fetch_pages_total{crawl="news"} 1398
//! ```
//!
//! Where the files go and what they are named is [`Place`]: the directory
//! `[crawl] metrics_dir` (default `CRAWL/metrics/`), one file per writer so
//! that no file is ever written by two processes: `crawl-NAME.fetch.prom`
//! (the fetcher; `crawl-NAME.fetch-JJJ.prom` for shard J of a sharded
//! crawl) and `crawl-NAME.cycle.prom` (the driver's steps, written by the
//! segmenter). NAME is `[crawl] metrics_name`, by default the crawl
//! directory's own name, and every sample carries it as the label `crawl`.
//! [`Exposition`] builds a file's text; what each program writes is its own
//! business (the fetcher's `metrics` module, the segmenter's).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::config::CrawlConfig;

/// How a family's samples behave, as its `# TYPE` line says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Only goes up (reset to zero when what it counts starts again); its
    /// name ends in `_total`.
    Counter,
    /// Goes up and down.
    Gauge,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
        }
    }
}

/// The text of one file: families in the order they are added, each with
/// its `# HELP` and `# TYPE` lines, every sample carrying the file's own
/// labels first.
#[derive(Debug, Clone)]
pub struct Exposition {
    /// `crawl="news"` (and `,shard="3"`): the labels of every sample.
    base: String,
    text: String,
    /// Names of the families written, to refuse one written twice.
    names: Vec<String>,
}

impl Exposition {
    /// An empty file whose samples all carry `labels`.
    pub fn new(labels: &[(&str, &str)]) -> Exposition {
        Exposition {
            base: label_text(labels),
            text: String::with_capacity(4096),
            names: Vec::new(),
        }
    }

    /// A family of one sample.
    pub fn one(&mut self, name: &str, kind: Kind, help: &str, value: f64) -> &mut Self {
        self.by(name, kind, help, "", &[("", value)])
    }

    /// A family of one sample per value of the label `label` (no label
    /// of its own if `label` is empty).
    pub fn by<S: AsRef<str>>(
        &mut self,
        name: &str,
        kind: Kind,
        help: &str,
        label: &str,
        values: &[(S, f64)],
    ) -> &mut Self {
        debug_assert!(is_metric_name(name), "{name:?} is not a metric name");
        debug_assert!(
            (kind == Kind::Counter) == name.ends_with("_total"),
            "{name}: a counter's name ends in _total, and only a counter's"
        );
        debug_assert!(!self.names.iter().any(|n| n == name), "{name} twice");
        self.names.push(name.to_string());
        let _ = writeln!(self.text, "# HELP {name} {}", escape_help(help));
        let _ = writeln!(self.text, "# TYPE {name} {}", kind.as_str());
        for (value_of_label, value) in values {
            let mut labels = self.base.clone();
            if !label.is_empty() {
                if !labels.is_empty() {
                    labels.push(',');
                }
                let _ = write!(
                    labels,
                    "{label}=\"{}\"",
                    escape_label(value_of_label.as_ref())
                );
            }
            if labels.is_empty() {
                let _ = writeln!(self.text, "{name} {}", number(*value));
            } else {
                let _ = writeln!(self.text, "{name}{{{labels}}} {}", number(*value));
            }
        }
        self
    }

    /// The file's text.
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// `a="x",b="y"`.
fn label_text(labels: &[(&str, &str)]) -> String {
    labels
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escape_label(v)))
        .collect::<Vec<_>>()
        .join(",")
}

/// A label value as the format wants it: `\`, `"` and line feeds escaped.
fn escape_label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// A HELP text as the format wants it: `\` and line feeds escaped.
fn escape_help(v: &str) -> String {
    v.replace('\\', "\\\\").replace('\n', "\\n")
}

/// A sample value: whole numbers without a fraction, others in Rust's
/// shortest exact form (`1767225600.123`), and the format's words for the
/// infinities and NaN.
fn number(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "+Inf" } else { "-Inf" }.into()
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// `[a-zA-Z_:][a-zA-Z0-9_:]*`.
fn is_metric_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_' || b == b':')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b':')
}

/// Seconds since 1970 with milliseconds, as a `_timestamp_seconds` gauge
/// holds them.
pub fn seconds(t: std::time::SystemTime) -> f64 {
    crate::timefmt::unix_millis(t) as f64 / 1000.0
}

/// Where a crawl's metrics files go, and the `crawl` label they carry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// The directory (`[crawl] metrics_dir`).
    pub dir: PathBuf,
    /// The crawl's name (`[crawl] metrics_name`).
    pub name: String,
}

impl Place {
    /// The place `[crawl]` of `cfg` names for the crawl directory `top`
    /// (the crawl's top directory, not a shard's). A name with other
    /// characters than letters, digits, `.`, `_` and `-` is refused; the
    /// default name, the directory's, has any other character replaced by
    /// `_`.
    pub fn of(cfg: &CrawlConfig, top: &Path) -> Result<Place, String> {
        let dir = match &cfg.crawl.metrics_dir {
            Some(d) => top.join(d),
            None => top.join(DEFAULT_DIR),
        };
        let name = match &cfg.crawl.metrics_name {
            Some(n) if is_crawl_name(n) => n.clone(),
            Some(n) => {
                return Err(format!(
                    "[crawl] metrics_name {n:?}: use letters, digits, '.', '_' and '-' only \
                     (it names the metrics files and is the `crawl` label of every figure)"
                ));
            }
            None => default_name(top),
        };
        Ok(Place { dir, name })
    }

    /// The fetcher's file: `crawl-NAME.fetch.prom`, or for shard `j`
    /// `crawl-NAME.fetch-JJJ.prom`.
    pub fn fetch_file(&self, shard: Option<u32>) -> PathBuf {
        match shard {
            Some(j) => self.file(&format!("fetch-{j:03}")),
            None => self.file("fetch"),
        }
    }

    /// The driver's file, written by the segmenter: `crawl-NAME.cycle.prom`.
    pub fn cycle_file(&self) -> PathBuf {
        self.file("cycle")
    }

    fn file(&self, what: &str) -> PathBuf {
        self.dir.join(format!("crawl-{}.{what}.prom", self.name))
    }

    /// The labels of every sample: `crawl`, and `shard` in a shard's file.
    pub fn labels(&self, shard: Option<u32>) -> Vec<(&'static str, String)> {
        let mut labels = vec![("crawl", self.name.clone())];
        if let Some(j) = shard {
            labels.push(("shard", j.to_string()));
        }
        labels
    }

    /// Writes `text` to `file` (one of this place's) atomically, creating
    /// the directory first if needed, and removes what a killed writer of
    /// the same file left (a hidden temporary file per `kill -9`).
    pub fn write(&self, file: &Path, text: &str) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        crate::atomic::remove_stale_temps(file, std::time::Duration::from_secs(2));
        crate::atomic::write_atomic(file, text.as_bytes())
    }
}

/// The metrics directory unless `[crawl] metrics_dir` names one: inside
/// the crawl directory.
pub const DEFAULT_DIR: &str = "metrics";

fn is_crawl_name(n: &str) -> bool {
    !n.is_empty()
        && n.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// The crawl directory's name (of its absolute form: `.` is named too),
/// with characters a name may not hold replaced by `_`.
fn default_name(top: &Path) -> String {
    let abs = std::path::absolute(top).unwrap_or_else(|_| top.to_path_buf());
    let abs = abs.components().collect::<PathBuf>();
    let raw = abs
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "crawl".into());
    raw.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The value of the first sample of `name` in the file at `path` (one
/// this module wrote), if the file and the sample are there.
pub fn read_sample(path: &Path, name: &str) -> Option<f64> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines().find_map(|line| {
        let rest = line.strip_prefix(name)?;
        let rest = match rest.as_bytes().first()? {
            b'{' => &rest[rest.find('}')? + 1..],
            b' ' => rest,
            _ => return None,
        };
        let value = rest.trim();
        if value == "NaN" {
            return Some(f64::NAN);
        }
        value.replace("Inf", "inf").parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_have_help_type_and_the_file_labels() {
        let mut e = Exposition::new(&[("crawl", "news"), ("shard", "3")]);
        e.one("crawl_fetch_running", Kind::Gauge, "1 while it runs.", 1.0)
            .by(
                "crawl_fetch_responses_total",
                Kind::Counter,
                "Responses by class.",
                "class",
                &[("2xx", 12.0), ("5xx", 0.0)],
            );
        assert_eq!(
            e.text(),
            "# HELP crawl_fetch_running 1 while it runs.\n\
             # TYPE crawl_fetch_running gauge\n\
             crawl_fetch_running{crawl=\"news\",shard=\"3\"} 1\n\
             # HELP crawl_fetch_responses_total Responses by class.\n\
             # TYPE crawl_fetch_responses_total counter\n\
             crawl_fetch_responses_total{crawl=\"news\",shard=\"3\",class=\"2xx\"} 12\n\
             crawl_fetch_responses_total{crawl=\"news\",shard=\"3\",class=\"5xx\"} 0\n"
        );
    }

    #[test]
    fn values_and_labels_are_written_as_the_format_wants() {
        let mut e = Exposition::new(&[("crawl", "a\"b\\c\nd")]);
        e.one("x_seconds", Kind::Gauge, "a \\ and a\nline", 1767225600.123);
        let text = e.text();
        assert!(
            text.contains("# HELP x_seconds a \\\\ and a\\nline\n"),
            "{text}"
        );
        assert!(
            text.contains("x_seconds{crawl=\"a\\\"b\\\\c\\nd\"} 1767225600.123\n"),
            "{text}"
        );
        assert_eq!(number(f64::INFINITY), "+Inf");
        assert_eq!(number(f64::NAN), "NaN");
        assert_eq!(number(0.25), "0.25");
        assert_eq!(number(-3.0), "-3");
        let mut bare = Exposition::new(&[]);
        bare.one("y", Kind::Gauge, "h", 2.0);
        assert!(bare.text().ends_with("\ny 2\n"), "{}", bare.text());
    }

    #[test]
    fn a_sample_is_read_back() {
        let dir = crate::testutil::TempDir::new("metrics-read");
        let place = Place {
            dir: dir.join("m"),
            name: "news".into(),
        };
        let mut e = Exposition::new(&[("crawl", "news")]);
        e.one("a_b", Kind::Gauge, "h", 3.5)
            .one("a", Kind::Gauge, "h", 7.0);
        let file = place.fetch_file(None);
        place.write(&file, e.text()).unwrap();
        assert_eq!(file, dir.join("m").join("crawl-news.fetch.prom"));
        assert_eq!(read_sample(&file, "a"), Some(7.0));
        assert_eq!(read_sample(&file, "a_b"), Some(3.5));
        assert_eq!(read_sample(&file, "c"), None);
        assert_eq!(read_sample(&dir.join("none"), "a"), None);
    }

    #[test]
    fn the_place_follows_the_settings() {
        let top = Path::new("/data/my crawl");
        let mut cfg = CrawlConfig::default();
        let p = Place::of(&cfg, top).unwrap();
        assert_eq!(p.dir, top.join("metrics"));
        assert_eq!(p.name, "my_crawl");
        assert_eq!(
            p.fetch_file(Some(3)),
            top.join("metrics/crawl-my_crawl.fetch-003.prom")
        );
        assert_eq!(
            p.cycle_file(),
            top.join("metrics/crawl-my_crawl.cycle.prom")
        );
        cfg.crawl.metrics_dir = Some("/var/lib/node-exporter".into());
        cfg.crawl.metrics_name = Some("news-2026".into());
        let p = Place::of(&cfg, top).unwrap();
        assert_eq!(
            (p.dir.as_path(), p.name.as_str()),
            (Path::new("/var/lib/node-exporter"), "news-2026")
        );
        cfg.crawl.metrics_name = Some("a/b".into());
        let err = Place::of(&cfg, top).unwrap_err();
        assert!(err.contains("metrics_name \"a/b\""), "{err}");
    }
}
