//! What the scale web answers: a page's HTML (its links among generated
//! prose), robots.txt, redirects and 404s.

use std::fmt::Write as _;

use super::{Node, RobotsKind, ScaleWeb};
use crate::Rng;

/// Words of the prose around the links: common words and a crawler's
/// vocabulary, so that pages compress about as real HTML does.
const WORDS: &[&str] = &[
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "was",
    "for",
    "on",
    "that",
    "with",
    "as",
    "by",
    "at",
    "from",
    "it",
    "an",
    "be",
    "this",
    "which",
    "or",
    "are",
    "were",
    "their",
    "has",
    "its",
    "archive",
    "record",
    "server",
    "page",
    "link",
    "host",
    "round",
    "segment",
    "harbour",
    "village",
    "mountain",
    "river",
    "winter",
    "summer",
    "market",
    "station",
    "council",
    "report",
    "century",
    "museum",
    "garden",
    "festival",
    "bridge",
    "school",
    "library",
    "history",
    "network",
    "measure",
    "between",
    "without",
    "another",
    "through",
    "several",
    "railway",
    "northern",
    "southern",
    "population",
    "election",
    "committee",
    "published",
    "original",
];

/// What to answer to a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The status code.
    pub status: u16,
    /// `Content-Type`.
    pub content_type: &'static str,
    /// `Location`, for a redirect.
    pub location: Option<String>,
    /// The body.
    pub body: Vec<u8>,
}

impl Answer {
    fn new(status: u16, content_type: &'static str, body: impl Into<Vec<u8>>) -> Answer {
        Answer {
            status,
            content_type,
            location: None,
            body: body.into(),
        }
    }

    fn not_found() -> Answer {
        Answer::new(404, "text/plain; charset=utf-8", &b"not found\n"[..])
    }
}

impl ScaleWeb {
    /// The answer of host `host` to `target`, with absolute links on
    /// `port`.
    pub fn answer(&self, host: u32, target: &str, port: u16) -> Answer {
        if target == "/robots.txt" {
            return match self.robots_txt(host) {
                Some(text) => Answer::new(200, "text/plain; charset=utf-8", text),
                None => Answer::not_found(),
            };
        }
        match self.node_of_target(host, target) {
            Some(Node::Page { host, page }) => Answer::new(
                200,
                "text/html; charset=utf-8",
                self.render(host, page, port),
            ),
            Some(Node::Redirect { host, page }) => {
                let location = self.url(Node::Page { host, page }, port);
                let mut a = Answer::new(
                    301,
                    "text/html; charset=utf-8",
                    format!("<a href=\"{location}\">moved</a>\n"),
                );
                a.location = Some(location);
                a
            }
            Some(Node::Private { .. }) => Answer::new(
                200,
                "text/html; charset=utf-8",
                "<!DOCTYPE html>\n<title>private</title>\n<p>Not for robots.</p>\n",
            ),
            Some(Node::Gone { .. } | Node::Outside { .. }) | None => Answer::not_found(),
        }
    }

    /// Host `host`'s robots.txt, or `None` where it has none (`404`).
    pub fn robots_txt(&self, host: u32) -> Option<String> {
        match self.robots_kind(host) {
            RobotsKind::Missing => None,
            RobotsKind::AllowAll => Some("User-agent: *\nAllow: /\n".into()),
            RobotsKind::Private => Some("User-agent: *\nDisallow: /private/\n".into()),
            RobotsKind::ShutOut => Some(format!(
                "# Everyone but {agent} is welcome.\nUser-agent: {agent}\nDisallow: /\n\n\
                 User-agent: *\nDisallow:\n",
                agent = self.params.agent
            )),
        }
    }

    /// The HTML of page `page` of host `host`: a title, then paragraphs of
    /// prose holding the page's links (same-host links relative, the others
    /// absolute on `port`), padded with prose to about `page_bytes`.
    pub fn render(&self, host: u32, page: u32, port: u16) -> String {
        let p = &self.params;
        let links = self.links(host, page);
        let name = self.host_name(host);
        let mut rng = Rng::new(super::mix(p.seed, 0x7E47 ^ host as u64, page as u64));
        let mut doc = String::with_capacity(p.page_bytes + 512);
        let _ = write!(
            doc,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <title>{name} page {page}</title>\n</head>\n<body>\n\
             <header><a href=\"/\">{name}</a></header>\n<main>\n<h1>Page {page} of {name}</h1>\n"
        );
        let words = |doc: &mut String, rng: &mut Rng, n: usize| {
            for _ in 0..n {
                doc.push_str(WORDS[rng.below(WORDS.len())]);
                doc.push(' ');
            }
        };
        // The links, a few to a paragraph.
        for chunk in links.chunks(4) {
            doc.push_str("<p>");
            for &to in chunk {
                let n = 3 + rng.below(8);
                words(&mut doc, &mut rng, n);
                let href = if to.host() == host && !matches!(to, Node::Outside { .. }) {
                    self.target(to)
                } else {
                    self.url(to, port)
                };
                let _ = write!(doc, "<a href=\"{href}\">");
                let n = 1 + rng.below(3);
                words(&mut doc, &mut rng, n);
                doc.push_str("</a> ");
            }
            doc.push_str("</p>\n");
        }
        let tail = "</main>\n<footer>The scale web.</footer>\n</body>\n</html>\n";
        while doc.len() + tail.len() + 8 < p.page_bytes {
            doc.push_str("<p>");
            let n = 8 + rng.below(24);
            words(&mut doc, &mut rng, n);
            doc.push_str("</p>\n");
        }
        doc.push_str(tail);
        doc
    }
}
