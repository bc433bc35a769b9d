//! The documentation as a reader follows it: the README stays a front page,
//! and every relative link between the Markdown files (README.md, docs/)
//! leads to a file, and to a heading, that exist. (The `crawl.toml`
//! reference is checked against each program by its own tests:
//! `settings_sample` in the fetcher's and the segmenter's.)

use std::path::PathBuf;

use testkit::docs::broken_links;

/// The README and every Markdown file of docs/, sorted.
fn markdown_files() -> Vec<PathBuf> {
    let root = testkit::repo_root();
    let docs = root.join("docs");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&docs)
        .unwrap_or_else(|e| panic!("{}: {e}", docs.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    files.sort();
    files.insert(0, root.join("README.md"));
    files
}

#[test]
fn every_relative_link_of_the_docs_leads_to_a_file_and_a_heading() {
    let files = markdown_files();
    assert!(files.len() > 1, "no docs/*.md: {files:?}");
    let broken = broken_links(&files);
    assert!(
        broken.is_empty(),
        "links that lead nowhere:\n{}",
        broken.join("\n")
    );
}

#[test]
fn the_readme_is_a_front_page_that_names_the_setup_and_test_commands() {
    let path = testkit::repo_root().join("README.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let lines = text.lines().count();
    assert!(
        lines <= 250,
        "README.md has {lines} lines: it is the front page (what, why, quick start, the \
         cycle, where to read on); the manual goes in docs/"
    );
    // CI and new contributors run these two, as the quick start says.
    for command in ["scripts/demo.sh", "scripts/test.sh"] {
        assert!(text.contains(command), "README.md does not name {command}");
        assert!(
            testkit::repo_root().join(command).is_file(),
            "{command} is gone"
        );
    }
}
