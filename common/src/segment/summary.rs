//! The summary of a segment, leftover or backlog file that `fetcher
//! inspect` and `segmenter inspect` print: URLs, hosts, registrable domains,
//! hops, how URLs were found, malformed lines, and whether the lines of each
//! domain are together as the fetcher needs them.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

use super::{
    SegmentError, SegmentReader, SegmentRecord, Via, format_version_of, io_error, unix_ms_to_time,
};

/// How many malformed lines a [`SegmentSummary`] quotes.
const MALFORMED_EXAMPLES: usize = 5;

/// One host and its number of URLs, for [`SegmentSummary::top_hosts`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct HostCount {
    /// The host (queue key).
    pub host: String,
    /// Its URLs in the file.
    pub urls: u64,
}

/// What `fetcher inspect` and `segmenter inspect` print about a file in the
/// segment format: computed in one streaming pass, with memory proportional
/// to the number of distinct hosts.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SegmentSummary {
    /// The file, as given.
    pub file: String,
    /// Format version from the file-name suffix (`.v1.tsv.zst`), if any.
    pub format_version: Option<u32>,
    /// Compressed size in bytes.
    pub file_bytes: u64,
    /// Well-formed lines (URLs).
    pub urls: u64,
    /// Distinct hosts.
    pub hosts: u64,
    /// Distinct registrable domains of those hosts.
    pub domains: u64,
    /// True if the lines of each registrable domain are adjacent (as every
    /// segment written by the segmenter must be).
    pub grouped_by_domain: bool,
    /// The hosts with the most URLs, most first (ties by name).
    pub top_hosts: Vec<HostCount>,
    /// URLs per number of hops from a seed.
    pub hops: BTreeMap<u32, u64>,
    /// URLs per `via` word.
    pub via: BTreeMap<String, u64>,
    /// URLs with at least one earlier failed attempt (`tries` > 0).
    pub retried_urls: u64,
    /// URLs with a `not_before` time.
    pub not_before_urls: u64,
    /// The earliest `not_before` time (ISO 8601 UTC), if any.
    pub earliest_not_before: Option<String>,
    /// The latest `not_before` time (ISO 8601 UTC), if any.
    pub latest_not_before: Option<String>,
    /// Lines that were not in the format (skipped).
    pub malformed_lines: u64,
    /// The first few malformed lines, as `FILE:LINE: reason`.
    pub malformed_examples: Vec<String>,
}

impl SegmentSummary {
    /// Reads the file at `path` and summarizes it, listing the `top_n` hosts
    /// with the most URLs. Malformed lines are counted, not fatal; an
    /// unreadable or damaged file is an error.
    pub fn compute(path: impl AsRef<Path>, top_n: usize) -> Result<SegmentSummary, SegmentError> {
        let path = path.as_ref();
        let file_bytes = std::fs::metadata(path)
            .map_err(|e| io_error(path, e))?
            .len();
        let mut reader = SegmentReader::open(path)?;
        let mut rec = SegmentRecord::default();

        let mut urls = 0u64;
        let mut per_host: HashMap<String, u64> = HashMap::new();
        let mut hops: BTreeMap<u32, u64> = BTreeMap::new();
        let mut via = [0u64; Via::ALL.len()];
        let mut retried_urls = 0u64;
        let mut not_before_urls = 0u64;
        let mut latest_not_before: Option<i64> = None;
        let mut earliest_not_before: Option<i64> = None;
        let mut malformed_examples = Vec::new();

        // Lines of one host are normally adjacent: count a run of the same
        // host locally and touch the map only when the host changes.
        let mut run_host = String::new();
        let mut run_len = 0u64;
        let mut domains = DomainRuns::default();

        loop {
            match reader.read_next(&mut rec) {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) if e.is_fatal() => return Err(e),
                Err(e) => {
                    if malformed_examples.len() < MALFORMED_EXAMPLES {
                        malformed_examples.push(e.to_string());
                    }
                    continue;
                }
            }
            urls += 1;
            *hops.entry(rec.hops).or_insert(0) += 1;
            via[rec.via as usize] += 1;
            if rec.tries > 0 {
                retried_urls += 1;
            }
            if let Some(t) = rec.not_before {
                not_before_urls += 1;
                latest_not_before = latest_not_before.max(Some(t));
                earliest_not_before = Some(earliest_not_before.map_or(t, |e| e.min(t)));
            }
            if rec.host != run_host {
                add_run(&mut per_host, &run_host, run_len);
                run_host.clear();
                run_host.push_str(&rec.host);
                run_len = 0;
                domains.enter(crate::urlnorm::registrable_domain(&rec.host));
            }
            run_len += 1;
        }
        add_run(&mut per_host, &run_host, run_len);

        let mut top_hosts: Vec<HostCount> = per_host
            .iter()
            .map(|(host, &urls)| HostCount {
                host: host.clone(),
                urls,
            })
            .collect();
        top_hosts.sort_unstable_by(|a, b| b.urls.cmp(&a.urls).then_with(|| a.host.cmp(&b.host)));
        top_hosts.truncate(top_n);

        Ok(SegmentSummary {
            file: path.display().to_string(),
            format_version: format_version_of(path),
            file_bytes,
            urls,
            hosts: per_host.len() as u64,
            domains: domains.seen.len() as u64,
            grouped_by_domain: domains.grouped,
            top_hosts,
            hops,
            via: Via::ALL
                .iter()
                .zip(via)
                .filter(|&(_, n)| n > 0)
                .map(|(v, n)| (v.as_str().to_string(), n))
                .collect(),
            retried_urls,
            not_before_urls,
            earliest_not_before: earliest_not_before
                .map(|ms| crate::timefmt::iso_millis(unix_ms_to_time(ms))),
            latest_not_before: latest_not_before
                .map(|ms| crate::timefmt::iso_millis(unix_ms_to_time(ms))),
            malformed_lines: reader.malformed(),
            malformed_examples,
        })
    }
}

fn add_run(per_host: &mut HashMap<String, u64>, host: &str, len: u64) {
    if len == 0 {
        return;
    }
    match per_host.get_mut(host) {
        Some(n) => *n += len,
        None => {
            per_host.insert(host.to_string(), len);
        }
    }
}

/// Tracks distinct registrable domains and whether each forms one block of lines.
#[derive(Default)]
struct DomainRuns {
    seen: HashSet<String>,
    current: String,
    grouped: bool,
    started: bool,
}

impl DomainRuns {
    fn enter(&mut self, domain: &str) {
        if !self.started {
            self.started = true;
            self.grouped = true;
        } else if domain == self.current {
            return;
        }
        if !self.seen.insert(domain.to_string()) {
            // This domain had a block before another domain came between.
            self.grouped = false;
        }
        self.current.clear();
        self.current.push_str(domain);
    }
}

impl std::fmt::Display for SegmentSummary {
    /// The human-readable report, several lines, ending in a newline.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let version = match self.format_version {
            Some(v) => v.to_string(),
            None => "unknown (no .vN.tsv.zst suffix; read as 1)".to_string(),
        };
        writeln!(f, "file:             {}", self.file)?;
        writeln!(f, "format version:   {version}")?;
        write!(f, "size:             {} bytes", self.file_bytes)?;
        if self.urls > 0 {
            write!(
                f,
                " ({:.1} bytes/URL)",
                self.file_bytes as f64 / self.urls as f64
            )?;
        }
        writeln!(f)?;
        writeln!(f, "URLs:             {}", self.urls)?;
        writeln!(f, "hosts:            {}", self.hosts)?;
        let grouped = if self.urls == 0 {
            ""
        } else if self.grouped_by_domain {
            ", lines grouped by domain"
        } else {
            ", NOT grouped by domain"
        };
        writeln!(f, "domains:          {}{grouped}", self.domains)?;
        writeln!(f, "retried URLs:     {}", self.retried_urls)?;
        write!(f, "not before:       {} URLs", self.not_before_urls)?;
        if let (Some(first), Some(last)) = (&self.earliest_not_before, &self.latest_not_before) {
            write!(f, ", from {first} to {last}")?;
        }
        writeln!(f)?;
        writeln!(f, "malformed lines:  {}", self.malformed_lines)?;
        for example in &self.malformed_examples {
            writeln!(f, "  {example}")?;
        }
        writeln!(f, "URLs by via:")?;
        for (word, n) in &self.via {
            writeln!(f, "  {word}: {n}")?;
        }
        writeln!(f, "URLs by hops from a seed:")?;
        for (hops, n) in &self.hops {
            writeln!(f, "  {hops}: {n}")?;
        }
        writeln!(f, "top hosts (URLs, host):")?;
        for h in &self.top_hosts {
            writeln!(f, "  {:>10}  {}", h.urls, h.host)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    use crate::segment::SegmentWriter;
    use crate::testutil::TempDir;

    fn summary_fixture(dir: &TempDir, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, zstd::encode_all(text.as_bytes(), 3).unwrap()).unwrap();
        path
    }

    const SUMMARY_TEXT: &str = "\
a.example.com\thttp://a.example.com/1\t0\t0\tseed\t0
a.example.com\thttp://a.example.com/2\t1\t3\tlink\t0
a.example.com\thttp://a.example.com/3\t1\t1\tlink\t0
b.example.com\thttp://b.example.com/\t2\t1\tredirect\t0
b.example.com\thttp://b.example.com/x\t2\t0\tretry\t2
this line is not in the format
www.shop.co.uk\thttps://www.shop.co.uk/\t1\t0\tlink\t0
www.shop.co.uk\thttps://www.shop.co.uk/cart\t3\t0\tleftover\t0
other.org\thttp://other.org/\t0\t0\tseed\t0
127.0.0.1\thttp://127.0.0.1:8080/\t0\t0\tbacklog\t0
";

    #[test]
    fn summary_counts_hosts_domains_hops_and_via() {
        let dir = TempDir::new("summary");
        let path = summary_fixture(&dir, "00007.v1.tsv.zst", SUMMARY_TEXT);
        let s = SegmentSummary::compute(&path, 3).unwrap();
        assert_eq!(s.format_version, Some(1));
        assert_eq!(s.file_bytes, std::fs::metadata(&path).unwrap().len());
        assert_eq!(s.urls, 9);
        assert_eq!(s.hosts, 5);
        // example.com, shop.co.uk, other.org, 127.0.0.1
        assert_eq!(s.domains, 4);
        assert!(s.grouped_by_domain);
        assert_eq!(
            s.top_hosts,
            vec![
                HostCount {
                    host: "a.example.com".into(),
                    urls: 3
                },
                HostCount {
                    host: "b.example.com".into(),
                    urls: 2
                },
                HostCount {
                    host: "www.shop.co.uk".into(),
                    urls: 2
                },
            ]
        );
        assert_eq!(s.hops, BTreeMap::from([(0, 3), (1, 3), (2, 2), (3, 1)]));
        let via: Vec<(&str, u64)> = s.via.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        assert_eq!(
            via,
            vec![
                ("backlog", 1),
                ("leftover", 1),
                ("link", 3),
                ("redirect", 1),
                ("retry", 1),
                ("seed", 2)
            ]
        );
        assert_eq!(s.retried_urls, 1);
        assert_eq!(s.malformed_lines, 1);
        assert_eq!(s.malformed_examples.len(), 1);
        assert!(
            s.malformed_examples[0].contains("00007.v1.tsv.zst:6:"),
            "{:?}",
            s.malformed_examples
        );
    }

    #[test]
    fn summary_notices_a_file_not_grouped_by_domain_and_sums_split_hosts() {
        let dir = TempDir::new("ungrouped");
        let path = summary_fixture(
            &dir,
            "x.v1.tsv.zst",
            "a.example.com\thttp://a.example.com/1\t0\t0\tseed\t0\n\
             other.org\thttp://other.org/\t0\t0\tseed\t0\n\
             b.example.com\thttp://b.example.com/\t0\t0\tseed\t0\n\
             a.example.com\thttp://a.example.com/2\t0\t0\tseed\t0\n",
        );
        let s = SegmentSummary::compute(&path, 10).unwrap();
        assert!(!s.grouped_by_domain);
        assert_eq!((s.urls, s.hosts, s.domains), (4, 3, 2));
        assert_eq!(
            s.top_hosts[0],
            HostCount {
                host: "a.example.com".into(),
                urls: 2
            }
        );
        assert!(s.to_string().contains("NOT grouped by domain"), "{s}");

        // Hosts of one domain in any order are still grouped.
        let path = summary_fixture(
            &dir,
            "y.v1.tsv.zst",
            "b.example.com\thttp://b.example.com/\t0\t0\tseed\t0\n\
             a.example.com\thttp://a.example.com/\t0\t0\tseed\t0\n\
             other.org\thttp://other.org/\t0\t0\tseed\t0\n",
        );
        assert!(
            SegmentSummary::compute(&path, 10)
                .unwrap()
                .grouped_by_domain
        );
    }

    #[test]
    fn summary_text_is_for_people_and_json_for_jq() {
        let dir = TempDir::new("render");
        let path = summary_fixture(&dir, "00007.v1.tsv.zst", SUMMARY_TEXT);
        let s = SegmentSummary::compute(&path, 2).unwrap();
        let text = s.to_string();
        for line in [
            "format version:   1",
            "URLs:             9",
            "hosts:            5",
            "domains:          4, lines grouped by domain",
            "malformed lines:  1",
            "URLs by via:",
            "  link: 3",
            "URLs by hops from a seed:",
            "  0: 3",
            "  3: 1",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in\n{text}"
            );
        }
        let top = text.split("top hosts (URLs, host):\n").nth(1).unwrap();
        assert_eq!(
            top,
            "           3  a.example.com\n           2  b.example.com\n"
        );

        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["urls"], 9);
        assert_eq!(json["hosts"], 5);
        assert_eq!(json["domains"], 4);
        assert_eq!(json["format_version"], 1);
        assert_eq!(json["grouped_by_domain"], true);
        assert_eq!(json["top_hosts"][0]["host"], "a.example.com");
        assert_eq!(json["top_hosts"][0]["urls"], 3);
        assert_eq!(json["hops"]["1"], 3);
        assert_eq!(json["via"]["seed"], 2);
        assert_eq!(json["malformed_lines"], 1);
        assert!(json["file"].as_str().unwrap().ends_with("00007.v1.tsv.zst"));
    }

    #[test]
    fn summary_of_unversioned_empty_and_damaged_files() {
        let dir = TempDir::new("summary-edge");
        let path = dir.join("list.tsv.zst");
        SegmentWriter::create(&path).unwrap().finish().unwrap();
        let s = SegmentSummary::compute(&path, 5).unwrap();
        assert_eq!(s.format_version, None);
        assert_eq!((s.urls, s.hosts, s.domains), (0, 0, 0));
        assert!(s.top_hosts.is_empty());
        assert!(s.to_string().contains("format version:   unknown"), "{s}");

        let path = summary_fixture(&dir, "t.v1.tsv.zst", SUMMARY_TEXT);
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        let e = SegmentSummary::compute(&path, 5).unwrap_err();
        assert!(
            e.is_fatal() && e.to_string().contains("t.v1.tsv.zst"),
            "{e}"
        );

        let e = SegmentSummary::compute(dir.join("missing.v1.tsv.zst"), 5).unwrap_err();
        assert!(e.to_string().contains("missing.v1.tsv.zst"), "{e}");
    }
}
