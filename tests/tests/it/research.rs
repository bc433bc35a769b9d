//! The research outputs as their users read them, with their own tools
//! (installed by `scripts/test.sh`): DuckDB queries the Parquet set that
//! `segmenter parquet` gathers from a crawl of the demo web, and its counts
//! (captures, by status, by host) are the crawl log's; warcio and FastWARC
//! read the WET and WAT files back (one `conversion` record per 2xx HTML
//! page, one `metadata` record with a JSON envelope per WARC record); and
//! on pages whose answers are known, the charset is right on every page,
//! the languages on every page of 200 characters or more, near-duplicates
//! are within 3 bits of simhash distance and unrelated pages beyond 10.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use common::crawllog::Status;
use common::warc::{WarcReader, WarcRecord};
use testkit::demo::{Demo, DemoParams};
use testkit::labelled::{self, Labelled};
use testkit::server::{Response, Routes, Server};
use testkit::{TempDir, bins, warcio};

use crate::support::{self, CrawlSettings, DemoCrawl};

/// What DuckDB, warcio and FastWARC find in a crawl's research outputs.
const READ_OUTPUTS: &str = r#"
import sys, json, glob, duckdb
from warcio.archiveiterator import ArchiveIterator
from fastwarc.warc import ArchiveIterator as FastIterator
crawl = sys.argv[1]
t = f"read_parquet('{crawl}/parquet/*.parquet')"
con = duckdb.connect()
q = lambda sql: con.sql(sql.format(T=t)).fetchall()
out = {
    'rows': q("select count(*) from {T}")[0][0],
    'by_status': {str(s): n for s, n in q("select fetch_status, count(*) from {T} group by 1")},
    'by_host': {h: n for h, n in q("select url_host_name, count(*) from {T} group by 1")},
    'texts': q("select count(*) from {T} where content_text_length is not null")[0][0],
    'subsets': {s: n for s, n in q("select subset, count(*) from {T} group by 1")},
    'charsets': {p: [c, s] for p, c, s in q(
        "select url_path, content_charset, content_charset_source from {T} "
        "where url_path in ('/latin1.html', '/cp1252.html', '/sjis.html', '/bom.html')")},
}
wet = {'warcio': 0, 'fastwarc': 0, 'texts': {}, 'langs': 0}
for f in glob.glob(f'{crawl}/fetched/*/*.warc.wet.gz'):
    for r in ArchiveIterator(open(f, 'rb')):
        if r.rec_type == 'conversion':
            wet['warcio'] += 1
            uri = r.rec_headers.get_header('WARC-Target-URI')
            assert r.rec_headers.get_header('WARC-Refers-To').startswith('<urn:uuid:')
            assert r.rec_headers.get_header('Content-Type') == 'text/plain'
            wet['langs'] += r.rec_headers.get_header('WARC-Identified-Content-Language') is not None
            wet['texts'][uri.split('/', 3)[3]] = r.content_stream().read().decode('utf-8')
    wet['fastwarc'] += sum(1 for r in FastIterator(open(f, 'rb'), parse_http=False)
                           if r.headers['WARC-Type'] == 'conversion')
wat = {'warcio': 0, 'fastwarc': 0, 'bad_json': 0, 'titles': 0, 'links': 0, 'kinds': {}}
for f in glob.glob(f'{crawl}/fetched/*/*.warc.wat.gz'):
    for r in ArchiveIterator(open(f, 'rb')):
        if r.rec_type != 'metadata':
            continue
        wat['warcio'] += 1
        try:
            env = json.loads(r.content_stream().read())['Envelope']
        except Exception:
            wat['bad_json'] += 1
            continue
        kind = env['WARC-Header-Metadata']['WARC-Type']
        wat['kinds'][kind] = wat['kinds'].get(kind, 0) + 1
        html = env['Payload-Metadata'].get('HTTP-Response-Metadata', {}).get('HTML-Metadata')
        if html:
            wat['titles'] += 'Title' in html['Head']
            wat['links'] += len(html['Links'])
    wat['fastwarc'] += sum(1 for r in FastIterator(open(f, 'rb'), parse_http=False)
                           if r.headers['WARC-Type'] == 'metadata')
out['wet'] = wet
out['wat'] = wat
print(json.dumps(out))
"#;

/// The crawl log's lines with an HTTP status: (by status, by host).
fn logged(crawl: &Path) -> (BTreeMap<String, u64>, BTreeMap<String, u64>) {
    let (mut by_status, mut by_host) = (BTreeMap::new(), BTreeMap::new());
    for run in std::fs::read_dir(crawl.join("fetched")).unwrap() {
        let log = run.unwrap().path().join("crawl.log");
        for line in std::fs::read_to_string(&log).unwrap_or_default().lines() {
            let l = common::crawllog::parse_line(line).unwrap();
            if let Status::Http(code) = l.status {
                *by_status.entry(code.to_string()).or_default() += 1;
                let host = url::Url::parse(&l.url)
                    .unwrap()
                    .host_str()
                    .unwrap()
                    .to_string();
                *by_host.entry(host).or_default() += 1;
            }
        }
    }
    (by_status, by_host)
}

/// The records of every WARC file of the crawl, and its 2xx HTML pages.
fn warc_records(crawl: &Path) -> (u64, u64) {
    let (mut records, mut pages) = (0, 0);
    let mut rec = WarcRecord::default();
    for run in std::fs::read_dir(crawl.join("fetched")).unwrap() {
        for w in warcio::warc_files(&run.unwrap().path()) {
            let mut r = WarcReader::open(&w, usize::MAX).unwrap();
            while r.read_next(&mut rec).unwrap() {
                records += 1;
                let head = common::http::parse_response_head(&rec.block);
                let html = head.as_ref().is_some_and(|h| {
                    (200..300).contains(&h.status)
                        && common::extract::is_html(
                            h.header("Content-Type"),
                            &rec.block[h.body_offset..],
                        )
                });
                pages += u64::from(rec.record_type() == Some("response") && html);
            }
        }
    }
    (records, pages)
}

#[test]
fn a_crawls_outputs_are_read_by_duckdb_warcio_and_fastwarc() {
    let demo = Demo::with_params(DemoParams::small(31));
    let settings = CrawlSettings {
        fetcher_extra: "\n[segmenter]\nresearch_index = true\n".into(),
        ..CrawlSettings::default()
    };
    let c = DemoCrawl::start("research-demo", &demo, settings);
    let out = c.run_crawl_sh(&["--rounds", "3"]);
    bins::assert_code(&out, 0, Some(&c.crawl));
    // The rounds wrote the index of what they read (research_index).
    let consumed = std::fs::read_to_string(c.crawl.join("consumed.txt")).unwrap();
    for id in consumed.lines().filter(|l| !l.starts_with('#')) {
        for w in warcio::warc_files(&c.crawl.join("fetched").join(id)) {
            let stem = w.to_string_lossy().trim_end_matches(".warc.gz").to_string();
            assert!(
                Path::new(&format!("{stem}.parquet")).exists(),
                "{}",
                w.display()
            );
        }
    }
    bins::run(
        bins::segmenter_cmd().arg("research").arg(&c.crawl),
        &c.crawl,
    );
    bins::run(bins::segmenter_cmd().arg("parquet").arg(&c.crawl), &c.crawl);
    let found = support::python_json(READ_OUTPUTS, &[&c.crawl]);

    let (by_status, by_host) = logged(&c.crawl);
    let total: u64 = by_status.values().sum();
    assert!(total > 50, "{total} responses logged");
    assert_eq!(
        found["rows"], total,
        "rows against crawl-log lines with a status"
    );
    assert_eq!(found["by_status"], serde_json::json!(by_status));
    assert_eq!(found["by_host"], serde_json::json!(by_host));
    assert!(
        found["subsets"]["robotstxt"].as_u64() > Some(0),
        "{}",
        found["subsets"]
    );
    assert!(
        found["subsets"]["crawldiagnostics"].as_u64() > Some(0),
        "{}",
        found["subsets"]
    );

    // The demo's pages in other encodings.
    let charsets = &found["charsets"];
    assert_eq!(
        charsets["/latin1.html"],
        serde_json::json!(["windows-1252", "header"])
    );
    assert_eq!(
        charsets["/cp1252.html"],
        serde_json::json!(["windows-1252", "meta"])
    );
    assert_eq!(
        charsets["/sjis.html"],
        serde_json::json!(["Shift_JIS", "meta"])
    );
    assert_eq!(charsets["/bom.html"], serde_json::json!(["UTF-8", "bom"]));

    wet_and_wat_read_back(&c.crawl, &found, total);
}

/// One text record per 2xx HTML page and one metadata record per WARC
/// record (each a JSON envelope), read alike by warcio and FastWARC.
fn wet_and_wat_read_back(crawl: &Path, found: &serde_json::Value, total: u64) {
    let (records, pages) = warc_records(crawl);
    let wet = &found["wet"];
    assert_eq!(wet["warcio"], pages);
    assert_eq!(wet["fastwarc"], pages);
    assert_eq!(found["texts"], pages);
    let texts = wet["texts"].as_object().unwrap();
    let text_of = |path: &str| {
        texts
            .iter()
            .find(|(k, _)| k.ends_with(path))
            .map(|(_, v)| v.as_str().unwrap().to_string())
            .unwrap_or_else(|| panic!("no text for {path}"))
    };
    assert!(
        text_of("latin1.html").contains("Café, naïve, résumé"),
        "{}",
        text_of("latin1.html")
    );
    assert!(
        text_of("sjis.html").contains("日本語のページ"),
        "{}",
        text_of("sjis.html")
    );
    // One metadata record per WARC record, each a JSON envelope.
    let wat = &found["wat"];
    assert_eq!(wat["warcio"], records);
    assert_eq!(wat["fastwarc"], records);
    assert_eq!(wat["bad_json"], 0);
    assert_eq!(
        wat["kinds"]["response"].as_u64().unwrap() + wat["kinds"]["revisit"].as_u64().unwrap_or(0),
        total
    );
    assert!(
        wat["titles"].as_u64() >= Some(pages.saturating_sub(5)),
        "{wat}"
    );
    assert!(wat["links"].as_u64() > Some(pages), "{wat}");
}

/// What DuckDB finds of each labelled page.
const READ_LABELS: &str = r#"
import sys, json, duckdb
rows = duckdb.sql(f"select url_path, content_charset, content_charset_source, content_languages, "
                  f"content_simhash from read_parquet('{sys.argv[1]}/fetched/*/*.parquet') "
                  f"where fetch_status = 200").fetchall()
print(json.dumps({p: [c, s, l, h] for p, c, s, l, h in rows}))
"#;

/// A web of the labelled pages, fetched once, its outputs written.
fn fetch_labelled(scratch: &TempDir, pages: &[Labelled]) -> PathBuf {
    let mut routes = Routes::new().route("/robots.txt", Response::not_found());
    for p in pages {
        routes = routes.route(
            &p.path,
            Response::status(200)
                .header("Content-Type", p.content_type.clone())
                .body(p.body.clone()),
        );
    }
    let server = Server::builder().host("lab.test", routes).start().unwrap();
    let crawl = support::crawl_of_server(&server, scratch.path(), "crawl", "labbot");
    let seeds: String = pages
        .iter()
        .map(|p| format!("{}\n", server.url("lab.test", &p.path)))
        .collect();
    let seeds = scratch.write("seeds.txt", seeds);
    bins::run(
        bins::segmenter_cmd().arg("inject").arg(&crawl).arg(&seeds),
        &crawl,
    );
    bins::run(
        bins::fetcher_cmd()
            .arg("fetch")
            .arg(&crawl)
            .args(["--progress", "none"]),
        &crawl,
    );
    bins::run(
        bins::segmenter_cmd()
            .arg("research")
            .arg(&crawl)
            .args(["--wet", "false", "--wat", "false"]),
        &crawl,
    );
    crawl
}

#[test]
fn charsets_languages_and_near_duplicates_of_labelled_pages() {
    let scratch = TempDir::new("research-labels");
    let articles = labelled::articles();
    let mut pages = labelled::language_pages();
    pages.extend(labelled::charset_pages());
    pages.extend(articles.pages.iter().cloned());
    let crawl = fetch_labelled(&scratch, &pages);
    let found = support::python_json(READ_LABELS, &[&crawl]);
    let row = |path: &str| -> &Vec<serde_json::Value> {
        found[path]
            .as_array()
            .unwrap_or_else(|| panic!("{path}: no row in {found}"))
    };

    let mut wrong = Vec::new();
    for p in &pages {
        let r = row(&p.path);
        if let Some((charset, source)) = p.charset {
            let got = (r[0].as_str().unwrap_or("-"), r[1].as_str().unwrap_or("-"));
            if got != (charset, source) {
                wrong.push(format!(
                    "{}: charset {got:?}, not {:?}",
                    p.path,
                    (charset, source)
                ));
            }
        }
        if let Some(expected) = p.languages {
            let got: BTreeSet<&str> = r[2]
                .as_str()
                .unwrap_or("")
                .split(',')
                .filter(|l| !l.is_empty())
                .collect();
            let want: BTreeSet<&str> = expected.iter().copied().collect();
            if got != want {
                wrong.push(format!("{}: languages {got:?}, not {want:?}", p.path));
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));

    let hash = |path: &str| {
        row(path)[3]
            .as_i64()
            .unwrap_or_else(|| panic!("{path}: no simhash")) as u64
    };
    let distance = |a: &str, b: &str| (hash(a) ^ hash(b)).count_ones();
    let mut table = Vec::new();
    for (a, b) in &articles.near_duplicates {
        let d = distance(a, b);
        table.push(format!("near-duplicate {a} {b}: {d} bits"));
        assert!(d <= 3, "{}", table.join("\n"));
    }
    for (i, a) in articles.unrelated.iter().enumerate() {
        for b in &articles.unrelated[i + 1..] {
            let d = distance(a, b);
            table.push(format!("unrelated {a} {b}: {d} bits"));
            assert!(d > 10, "{}", table.join("\n"));
        }
    }
    eprintln!("{}", table.join("\n"));
}
