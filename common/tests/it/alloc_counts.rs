//! The hot paths of link processing allocate nothing beyond what they must:
//! canonicalizing an already canonical URL costs exactly the allocations of
//! parsing it, and filtering a URL (no regex rules) costs none (counted by
//! the binary's allocator, [`crate::watch_alloc`]).

use common::config::FilterConfig;
use common::filter::{Scope, UrlFilter};
use common::urlnorm::{canonicalize, canonicalize_relative, canonicalize_url};
use url::Url;

use crate::watch_alloc::allocations;

const CANONICAL: &[&str] = &[
    "http://example.com/",
    "https://www.example.co.uk/news/2024/article-123.html?id=5&page=2",
    "https://shop.example.de/category/item-42;color=red?sort=asc&lang=en",
    "http://127.0.0.2:8080/a/b/c/",
    "https://xn--bcher-kva.de/%C3%A4%2F?q=a%26b",
];

#[test]
fn canonical_urls_cost_only_their_parse() {
    for &u in CANONICAL {
        assert_eq!(canonicalize(u).unwrap().as_str(), u, "{u} is canonical");
        let parse = allocations(|| Url::parse(u).unwrap());
        let canon = allocations(|| canonicalize(u).unwrap());
        assert_eq!(canon, parse, "{u}: canonicalize allocates beyond the parse");
        let parsed = Url::parse(u).unwrap();
        let n = allocations(|| canonicalize_url(parsed).unwrap());
        assert_eq!(n, 0, "{u}: canonicalize_url allocated");
    }
}

#[test]
fn canonical_links_cost_only_their_join() {
    let base = Url::parse("https://www.example.com/dir/page.html").unwrap();
    for href in ["other.html", "/a/b?x=1", "../up/", "https://example.org/x"] {
        let join = allocations(|| base.join(href).unwrap());
        let canon = allocations(|| canonicalize_relative(&base, href).unwrap());
        assert_eq!(
            canon, join,
            "{href}: canonicalize_relative allocates beyond the join"
        );
    }
}

#[test]
fn filtering_allocates_nothing() {
    let mut scope = Scope::default();
    scope.domains.insert("example.com".to_string());
    scope.domains.insert("example.co.uk".to_string());
    scope.hosts.insert("127.0.0.2".to_string());
    let filter = UrlFilter {
        limits: FilterConfig::default(),
        scope,
    };
    let urls: Vec<Url> = [
        "http://example.com/",
        "https://www.example.co.uk/news/2024/05/article-123.html?id=5&page=2&year=2024",
        "http://127.0.0.2:8080/a/b/a/c/?from=2024-05-01",
        "http://other.org/outside",
    ]
    .iter()
    .map(|u| Url::parse(u).unwrap())
    .collect();
    let _ = filter.check(&urls[0], 0); // the first call fixes the current year
    for u in &urls {
        let n = allocations(|| filter.check(u, 3));
        assert_eq!(n, 0, "{u}: check allocated");
    }
}
