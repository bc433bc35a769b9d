//! Links read from the fetcher's `metadata` records instead of the pages.
//!
//! Since WARC format 4 the fetcher lists the links of each 2xx HTML page in
//! the page's `metadata` record (`outlink: URL L CONTEXT` lines closed by a
//! `crawlLinks` summary; docs/formats.md), found by the same extractor
//! (`common::extract`) the scan would run. The scan takes them from there
//! when parsing the page itself would give the same links and the same
//! counts: the record has the summary, the page was decoded whole and is
//! under `max_page_size`, the parser read it to the end, nothing was over
//! the fetcher's cap and fewer links than `max_links_per_page` were listed
//! (so no cap cuts them differently), and the robots token the fetcher
//! obeyed is ours. Any other page is parsed, as are the pages of older
//! files and other tools' files, whose metadata records have no summary.

use common::extract::Skipped;
use common::warc::{METADATA_LINKS_SUMMARY, METADATA_OUTLINKS, WarcRecord};
use url::{Position, Url};

/// True if `meta` is the `metadata` record of the `response` record `page`
/// (its `WARC-Concurrent-To`), the record that may list the page's links.
pub fn is_metadata_of(meta: &WarcRecord, page: &WarcRecord) -> bool {
    meta.record_type() == Some("metadata")
        && page.record_type() == Some("response")
        && meta
            .header("WARC-Concurrent-To")
            .is_some_and(|to| page.header("WARC-Record-ID") == Some(to))
}

/// The canonical URL a page names, as its metadata record `block` keeps it
/// (`crawlCanonical`, [`common::warc::METADATA_CANONICAL`]), if it does.
pub fn canonical(block: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(block).ok()?;
    text.split("\r\n").find_map(|line| {
        let (name, value) = line.split_once(':')?;
        (name == common::warc::METADATA_CANONICAL).then(|| value.trim())
    })
}

/// What the scan needs to trust a link list.
pub struct Limits<'a> {
    /// `max_page_size`.
    pub max_page_size: u64,
    /// `max_links_per_page`.
    pub max_links: usize,
    /// Our robots product token.
    pub robots_name: Option<&'a str>,
}

/// A page's links as its metadata record lists them.
#[derive(Debug, PartialEq, Eq)]
pub struct Listed {
    /// Links not listed, by reason.
    pub skipped: Skipped,
    /// Decoded bytes of the page.
    pub body_bytes: u64,
}

/// The links the metadata record `block` lists, into `links` (appended,
/// in page order), if the record lists them all and the scan would find
/// the same ones by parsing the page (see the module's doc); `None` (and
/// `links` as it was) when the page must be parsed.
pub fn links(block: &[u8], limits: &Limits<'_>, links: &mut Vec<Url>) -> Option<Listed> {
    let start = links.len();
    let listed = read(block, limits, links);
    if listed.is_none() {
        links.truncate(start);
    }
    listed
}

fn read(block: &[u8], limits: &Limits<'_>, links: &mut Vec<Url>) -> Option<Listed> {
    let text = std::str::from_utf8(block).ok()?;
    let start = links.len();
    let mut summary = None;
    let (mut origin, mut scratch) = (None, String::new());
    for line in text.split("\r\n") {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim_start();
        if name == METADATA_OUTLINKS {
            let mut parts = value.split(' ');
            let (url, hop) = (parts.next()?, parts.next());
            // `R`: a redirect's target, read from the response itself.
            if hop == Some("L") {
                links.push(made(url, &mut origin, &mut scratch)?);
            }
        } else if name == METADATA_LINKS_SUMMARY {
            summary = Some(value);
        }
    }
    let s = Summary::parse(summary?)?;
    let trusted = s.decoded == "complete"
        && s.body_bytes < limits.max_page_size
        && !s.incomplete
        && s.skipped.over_cap == 0
        && s.listed < limits.max_links as u64
        && limits
            .robots_name
            .is_some_and(|ours| ours.eq_ignore_ascii_case(s.robots_name))
        && (links.len() - start) as u64 == s.listed;
    trusted.then_some(Listed {
        skipped: s.skipped,
        body_bytes: s.body_bytes,
    })
}

/// The URL `text` (a listed link, in canonical form) parsed, without the
/// parser where that is sure to give the same URL: a link whose host is a
/// domain name is built from its parts as the extractor builds it
/// ([`common::extract::read_canonical`]); one that shares its origin with
/// the link before (`origin`; an address as its host) is made from that
/// one by setting its path and query, which parses neither scheme nor host
/// again, and kept only if it reads exactly as `text`. Any other is parsed
/// whole (and becomes the next origin). `scratch` is scratch space.
fn made(text: &str, origin: &mut Option<Url>, scratch: &mut String) -> Option<Url> {
    if let Some(url) = common::extract::read_canonical(text, scratch) {
        return Some(url);
    }
    if let Some(url) = origin.as_ref().and_then(|o| same_origin(o, text)) {
        return Some(url);
    }
    let url = Url::parse(text).ok()?;
    *origin = Some(url.clone());
    Some(url)
}

/// `text` made from `origin`'s scheme, host and port, if it has them
/// ([`common::extract::with_path_and_query`], see [`made`]).
fn same_origin(origin: &Url, text: &str) -> Option<Url> {
    let path_start = origin[..Position::BeforePath].len();
    let rest = text.strip_prefix(&origin[..Position::BeforePath])?;
    if !rest.starts_with('/') || rest.contains('#') {
        return None;
    }
    let query_start = rest.find('?').map(|q| path_start + q);
    common::extract::with_path_and_query(origin.clone(), text, path_start, query_start)
}

/// The `crawlLinks` value.
struct Summary<'a> {
    listed: u64,
    skipped: Skipped,
    incomplete: bool,
    body_bytes: u64,
    decoded: &'a str,
    robots_name: &'a str,
}

impl<'a> Summary<'a> {
    /// `listed N nofollow N scheme N invalid N same-page N over-cap N
    /// incomplete 0|1 body N decoded WORD robots-name TOKEN`; `None` if a
    /// part is missing or not a number.
    fn parse(value: &'a str) -> Option<Summary<'a>> {
        let mut words = value.split(' ');
        let mut pairs = std::iter::from_fn(|| Some((words.next()?, words.next()?)));
        let mut number = |key: &str| -> Option<u64> {
            let (k, v) = pairs.next()?;
            (k == key).then(|| v.parse().ok()).flatten()
        };
        let listed = number("listed")?;
        let skipped = Skipped {
            nofollow: number("nofollow")?,
            scheme: number("scheme")?,
            invalid: number("invalid")?,
            same_page: number("same-page")?,
            over_cap: number("over-cap")?,
        };
        let incomplete = number("incomplete")? != 0;
        let body_bytes = number("body")?;
        let mut word = |key: &str| -> Option<&'a str> {
            let (k, v) = pairs.next()?;
            (k == key).then_some(v)
        };
        let decoded = word("decoded")?;
        let robots_name = word("robots-name")?;
        Some(Summary {
            listed,
            skipped,
            incomplete,
            body_bytes,
            decoded,
            robots_name,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BLOCK: &str = "crawlVia: seed\r\ncrawlHops: 0\r\nfetchTimeMs: 3\r\n\
        outlink: http://a.test/x L a/@href\r\noutlink: http://b.test/ L iframe/@src\r\n\
        crawlLinks: listed 2 nofollow 1 scheme 2 invalid 0 same-page 1 over-cap 0 incomplete 0 \
        body 900 decoded complete robots-name linkbot\r\n";

    fn limits() -> Limits<'static> {
        Limits {
            max_page_size: 1 << 20,
            max_links: 1000,
            robots_name: Some("LinkBot"),
        }
    }

    fn read_links(block: &str, limits: &Limits<'_>) -> (Option<Listed>, Vec<String>) {
        let mut links = Vec::new();
        let got = links_of(block, limits, &mut links);
        (got, links.iter().map(|u| u.to_string()).collect())
    }

    fn links_of(block: &str, limits: &Limits<'_>, out: &mut Vec<Url>) -> Option<Listed> {
        links(block.as_bytes(), limits, out)
    }

    #[test]
    fn a_complete_list_is_read_with_its_counts() {
        let (got, urls) = read_links(BLOCK, &limits());
        assert_eq!(urls, ["http://a.test/x", "http://b.test/"]);
        let got = got.unwrap();
        assert_eq!(got.body_bytes, 900);
        assert_eq!(
            (
                got.skipped.nofollow,
                got.skipped.scheme,
                got.skipped.same_page
            ),
            (1, 2, 1)
        );
    }

    #[test]
    fn links_made_from_the_origin_before_equal_links_parsed() {
        let texts = [
            "http://a.test/x",
            "http://a.test/y/z?q=1&r=%20",
            "http://a.test/",
            "http://a.test:8080/p",
            "http://a.test/p?",
            "https://a.test/p",
            "http://b.test/%7Euser/a%2Fb",
            "http://b.test/a b",
            "http://b.test/x#frag",
            "http://127.0.0.2:81/page/3",
            "http://127.0.0.2:81/page/4?x",
            "http://[::1]/v6",
            "http://user@b.test/p",
            "http://b.test/../up",
            "http://b.test/./here",
            "HTTP://B.test/p",
            "http://b.test:80/p",
            "https://b.test:443/p",
            "http://b.test/p?q=%41",
            "http://b.test/p?q=%4a",
            "http://b.test/p;jsessionid=1",
            "http://b.test/p?jsessionid=1",
            "http://b.test./p",
            "http://xn--bcher-kva.test/p",
            "http://b\u{fc}cher.test/p",
        ];
        let (mut origin, mut scratch) = (None, String::new());
        for text in texts {
            let made = made(text, &mut origin, &mut scratch);
            assert_eq!(made, Url::parse(text).ok(), "{text}");
            if let Some(url) = made {
                // The same URL in every part, not only in its text.
                let parsed = Url::parse(text).unwrap();
                assert_eq!(
                    (url.host(), url.port(), url.path(), url.query()),
                    (parsed.host(), parsed.port(), parsed.path(), parsed.query()),
                    "{text}"
                );
            }
        }
    }

    #[test]
    fn anything_parsing_could_read_differently_falls_back_to_parsing() {
        let cases = [
            // No summary: an older fetcher, or outlinks turned off.
            BLOCK.replace("crawlLinks", "crawlNothing"),
            // Not decoded whole, cut off, over a cap, another token.
            BLOCK.replace("decoded complete", "decoded cut"),
            BLOCK.replace("incomplete 0", "incomplete 1"),
            BLOCK.replace("over-cap 0", "over-cap 3"),
            BLOCK.replace("robots-name linkbot", "robots-name otherbot"),
            // A summary that does not match its lines, or is malformed.
            BLOCK.replace("listed 2", "listed 3"),
            BLOCK.replace("body 900", "body x"),
            BLOCK.replace(" robots-name linkbot", ""),
        ];
        for block in &cases {
            let (got, urls) = read_links(block, &limits());
            assert!(got.is_none() && urls.is_empty(), "{block}");
        }
        let small = |max_page_size, max_links| Limits {
            max_page_size,
            max_links,
            ..limits()
        };
        assert!(read_links(BLOCK, &small(900, 1000)).0.is_none());
        assert!(read_links(BLOCK, &small(901, 1000)).0.is_some());
        assert!(read_links(BLOCK, &small(1 << 20, 2)).0.is_none());
        let no_token = Limits {
            robots_name: None,
            ..limits()
        };
        assert!(read_links(BLOCK, &no_token).0.is_none());
    }
}
