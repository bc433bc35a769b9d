//! The link extractor against the extractor it replaced: every HTML page of
//! the Rust documentation on this machine, every HTML page of the demo web
//! and every hand-written case of `common::extract::cases`, read by the
//! extractor (its own tokenizer, plain links made directly) and by the
//! extractor as it was (`lol_html` as its reader, every link resolved the
//! general way: `testkit::lol_html_reader` through
//! `Extractor::extract_with_reader`). Both must give the same links, in the
//! same order and with the same contexts, on at least 99.9 % of the pages;
//! every page where they differ must be one of [`KNOWN`], each with the
//! rule of the HTML standard that makes the new answer the right one.
//!
//! The Rust documentation is read from `$(rustc --print sysroot)/share/
//! doc/rust/html` (the `rust-docs` component); without it, the test says so
//! and compares the rest.

use std::path::{Path, PathBuf};
use std::process::Command;

use common::extract::cases::{self, Case};
use common::extract::{ExtractOptions, Extractor, Page, PageLinks};
use testkit::demo::Demo;
use testkit::lol_html_reader::LolHtmlReader;
use url::Url;

/// The pages where the two extractors differ (a hand-written case by its
/// rule, another page by its URL), each with the rule of the HTML standard
/// (section 13.2.6, tree construction) that makes the new answer right.
/// lol_html keeps a stack of namespaces that it changes on start and end
/// tags alone, and two of its shortcuts show here.
const KNOWN: &[(&str, &str)] = &[
    (
        "a self-closing svg holds nothing: style after it is raw text",
        "13.2.6.4.7, \"in body\", a start tag whose tag name is \"svg\": the element \
         is inserted and, when the token is self-closing, popped at once; the page \
         goes on in HTML, where <style> is raw text (lol_html enters SVG anyway)",
    ),
    (
        "a breakout tag leaves nested SVG altogether",
        "13.2.6.5, a start tag such as <p> in foreign content: elements are popped \
         until the current node is an HTML element or an integration point, so out of \
         every svg element open (lol_html leaves only the innermost)",
    ),
];

/// One page to read.
#[derive(Clone)]
struct Input {
    /// What names it in [`KNOWN`] and in the report.
    id: String,
    url: Url,
    content_type: Option<String>,
    x_robots_tag: Option<String>,
    body: Vec<u8>,
}

/// How a set of pages compared.
#[derive(Default)]
struct Compared {
    pages: usize,
    equal: usize,
    /// The pages that differ: their id and what differs.
    different: Vec<(String, String)>,
}

impl Compared {
    fn add(&mut self, other: Compared) {
        self.pages += other.pages;
        self.equal += other.equal;
        self.different.extend(other.different);
    }
}

/// The links of a page as compared: URL and context, in document order.
fn links(out: &PageLinks) -> Vec<(String, &'static str)> {
    out.links
        .iter()
        .zip(&out.contexts)
        .map(|(url, context)| (url.to_string(), context.as_str()))
        .collect()
}

/// Reads `inputs` (each made when its turn comes, so that a large set is
/// never whole in memory) with both extractors and compares what they
/// give.
fn compare(inputs: impl Iterator<Item = Input>, options: &ExtractOptions) -> Compared {
    let mut new = Extractor::new(options.clone());
    let mut old = Extractor::new(options.clone());
    let lol_html = LolHtmlReader::new(options.max_parser_memory);
    let (mut got, mut want) = (PageLinks::default(), PageLinks::default());
    let mut compared = Compared::default();
    for input in inputs {
        let page = Page {
            url: &input.url,
            content_type: input.content_type.as_deref(),
            x_robots_tag: input.x_robots_tag.as_deref(),
            body: &input.body,
        };
        new.extract_into(&page, &mut got);
        old.extract_with_reader(&page, &mut want, &mut |body, encoding, tag| {
            lol_html.read(body, encoding, tag)
        });
        compared.pages += 1;
        let (new_links, old_links) = (links(&got), links(&want));
        if new_links == old_links && got.skipped == want.skipped {
            compared.equal += 1;
            continue;
        }
        let only_new: Vec<_> = new_links
            .iter()
            .filter(|l| !old_links.contains(l))
            .collect();
        let only_old: Vec<_> = old_links
            .iter()
            .filter(|l| !new_links.contains(l))
            .collect();
        compared.different.push((
            input.id.clone(),
            format!(
                "only in the new: {only_new:?}; only in the old: {only_old:?}; skipped new {:?} old {:?}",
                got.skipped, want.skipped
            ),
        ));
    }
    compared
}

/// [`compare`] on two threads, each making its half of the inputs from
/// `sources` with `make`.
fn compare_in_parallel<T: Sync>(
    sources: &[T],
    make: impl Fn(&T) -> Input + Sync,
    options: &ExtractOptions,
) -> Compared {
    let (first, second) = sources.split_at(sources.len() / 2);
    let make = &make;
    std::thread::scope(|s| {
        let other = s.spawn(|| compare(second.iter().map(make), options));
        let mut compared = compare(first.iter().map(make), options);
        compared.add(other.join().expect("the comparing thread does not panic"));
        compared
    })
}

/// The hand-written cases, as pages at their URL.
fn case_inputs() -> Vec<Input> {
    let url = Url::parse(cases::PAGE).expect("the cases' URL parses");
    cases::ALL
        .iter()
        .flat_map(|table| table.iter())
        .map(|case: &Case| Input {
            id: case.rule.to_string(),
            url: url.clone(),
            content_type: case.content_type.map(str::to_string),
            x_robots_tag: case.x_robots_tag.map(str::to_string),
            body: case.body.to_vec(),
        })
        .collect()
}

/// Every HTML page of the demo web, as served on port 80.
fn demo_inputs() -> Vec<Input> {
    Demo::generate(1)
        .html_pages(80)
        .into_iter()
        .map(|page| Input {
            id: page.url.clone(),
            url: Url::parse(&page.url).expect("a demo URL parses"),
            content_type: Some(page.content_type.to_string()),
            x_robots_tag: page.x_robots_tag.map(str::to_string),
            body: page.body,
        })
        .collect()
}

/// The Rust documentation of the toolchain, if it is installed.
fn rust_docs() -> Option<PathBuf> {
    let out = Command::new("rustc")
        .args(["--print", "sysroot"])
        .output()
        .ok()?;
    let sysroot = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let dir = Path::new(&sysroot).join("share/doc/rust/html");
    dir.is_dir().then_some(dir)
}

/// Every HTML file under `dir`.
fn html_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).expect("the documentation is readable") {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "html") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The page of the documentation in `dir` at `path`, at the URL and with
/// the head that the segmenter's documentation WARC gives it
/// (`segmenter/examples/docs-warc.rs`, as `scripts/bench-segment.sh docs`
/// builds it): the same pages as the WARC's response records.
fn docs_page(dir: &Path, path: &Path) -> Input {
    let base = Url::parse("https://doc.rust-lang.org/").expect("a URL");
    let rel = path.strip_prefix(dir).expect("under the directory");
    let url = base.join(&rel.to_string_lossy()).expect("a page URL");
    Input {
        id: url.to_string(),
        url,
        content_type: Some("text/html; charset=utf-8".to_string()),
        x_robots_tag: None,
        body: std::fs::read(path).expect("a page is readable"),
    }
}

#[test]
fn the_link_reader_finds_the_links_the_old_one_found() {
    let mut all = Compared::default();
    let mut report = Vec::new();
    let sets: [(&str, Vec<Input>, ExtractOptions); 2] = [
        ("hand-written cases", case_inputs(), cases::options()),
        ("demo web", demo_inputs(), ExtractOptions::default()),
    ];
    for (name, inputs, options) in sets {
        let compared = compare_in_parallel(&inputs, Input::clone, &options);
        report.push(format!(
            "{name}: {} of {} pages equal",
            compared.equal, compared.pages
        ));
        all.add(compared);
    }
    match rust_docs() {
        Some(dir) => {
            let files = html_files(&dir);
            let options = ExtractOptions {
                max_links: 10_000,
                ..ExtractOptions::default()
            };
            let compared = compare_in_parallel(&files, |f| docs_page(&dir, f), &options);
            report.push(format!(
                "Rust documentation ({}): {} of {} pages equal",
                dir.display(),
                compared.equal,
                compared.pages
            ));
            all.add(compared);
        }
        None => report.push(
            "Rust documentation: NOT COMPARED, not installed with this toolchain \
             (rustup component add rust-docs)"
                .to_string(),
        ),
    }
    for (id, diff) in &all.different {
        let rule = KNOWN.iter().find(|(known, _)| known == id);
        report.push(format!(
            "different: {id}: {diff}; {}",
            rule.map_or("NO RULE SAYS WHY", |(_, rule)| rule)
        ));
    }
    println!("{}", report.join("\n"));

    let unknown = all
        .different
        .iter()
        .filter(|(id, _)| !KNOWN.iter().any(|(known, _)| known == id))
        .count();
    assert_eq!(
        unknown,
        0,
        "pages differ and no rule says why:\n{}",
        report.join("\n")
    );
    // The list stays true: each page it names still differs (the cases
    // are always read).
    for (known, _) in KNOWN {
        assert!(
            all.different.iter().any(|(id, _)| id == known),
            "{known:?} no longer differs: take it off the list"
        );
    }
    assert!(
        all.equal * 1000 >= all.pages * 999,
        "{} of {} pages equal: under 99.9 %",
        all.equal,
        all.pages
    );
}
