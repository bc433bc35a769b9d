//! Turning the model into bytes on the wire: HTML documents in their
//! charsets, redirects, files, errors.

use crate::gzip;
use crate::server::Response;

use super::{Charset, Href, Html, Inner, LinkKind, Loc, Resource, SitemapDoc};

/// The text of a link as written in a page (`port` completes absolute ones).
pub(crate) fn href_text(href: &Href, port: u16) -> String {
    match href {
        Href::Text(s) => s.clone(),
        Href::Absolute { scheme, host, rest } => format!("{scheme}://{host}:{port}{rest}"),
    }
}

/// Escapes text for HTML content and double-quoted attribute values.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// The HTML document of `page` (as a string, before encoding).
pub(crate) fn document(page: &Html, port: u16) -> String {
    let href = |h: &Href| escape(&href_text(h, port));
    let mut head = String::new();
    match page.charset {
        Charset::Utf8 => head.push_str("<meta charset=\"utf-8\">\n"),
        Charset::Windows1252Meta => head.push_str("<meta charset=\"windows-1252\">\n"),
        Charset::ShiftJisMeta => head.push_str(
            "<meta http-equiv=\"Content-Type\" content=\"text/html; charset=Shift_JIS\">\n",
        ),
        Charset::Latin1Header | Charset::Utf8Bom => {}
    }
    head.push_str(&format!("<title>{}</title>\n", escape(&page.title)));
    if let Some(base) = &page.base {
        head.push_str(&format!("<base href=\"{}\">\n", href(base)));
    }
    if page.nofollow_meta {
        head.push_str("<meta name=\"robots\" content=\"nofollow\">\n");
    }
    let mut body = String::new();
    let mut anchors = String::new();
    for link in &page.links {
        let h = href(&link.href);
        let text = escape(&link.text);
        let rel = if link.nofollow {
            " rel=\"nofollow\""
        } else {
            ""
        };
        match link.kind {
            LinkKind::Anchor | LinkKind::Redirect => {
                anchors.push_str(&format!("<li><a href=\"{h}\"{rel}>{text}</a></li>\n"));
            }
            LinkKind::Canonical => {
                head.push_str(&format!("<link rel=\"canonical\" href=\"{h}\">\n"));
            }
            LinkKind::Refresh => {
                head.push_str(&format!(
                    "<meta http-equiv=\"refresh\" content=\"0; url={h}\">\n"
                ));
            }
            LinkKind::Area => body.push_str(&format!(
                "<map name=\"places\"><area shape=\"rect\" coords=\"0,0,100,100\" href=\"{h}\" alt=\"{text}\"></map>\n"
            )),
            LinkKind::Iframe => body.push_str(&format!("<iframe src=\"{h}\"></iframe>\n")),
            LinkKind::Frame => body.push_str(&format!("<frame src=\"{h}\">\n")),
        }
    }
    let mut doc = String::from("<!DOCTYPE html>\n<html>\n<head>\n");
    doc.push_str(&head);
    doc.push_str("</head>\n");
    if page.frameset {
        doc.push_str("<frameset cols=\"50%,50%\">\n");
        doc.push_str(&body);
        doc.push_str("</frameset>\n");
    } else {
        doc.push_str("<body>\n");
        doc.push_str(&format!(
            "<h1>{}</h1>\n<p>{}</p>\n",
            escape(&page.title),
            escape(&page.text)
        ));
        doc.push_str(&body);
        if !anchors.is_empty() {
            doc.push_str("<ul>\n");
            doc.push_str(&anchors);
            doc.push_str("</ul>\n");
        }
        doc.push_str("</body>\n");
    }
    doc.push_str("</html>\n");
    doc
}

/// The `Content-Type` and the bytes of `page`.
pub(crate) fn encode(page: &Html, port: u16) -> (&'static str, Vec<u8>) {
    let doc = document(page, port);
    match page.charset {
        Charset::Utf8 => ("text/html; charset=utf-8", doc.into_bytes()),
        Charset::Utf8Bom => {
            let mut bytes = b"\xEF\xBB\xBF".to_vec();
            bytes.extend_from_slice(doc.as_bytes());
            ("text/html", bytes)
        }
        Charset::Latin1Header => (
            "text/html; charset=iso-8859-1",
            encoding_rs::WINDOWS_1252.encode(&doc).0.into_owned(),
        ),
        Charset::Windows1252Meta => (
            "text/html",
            encoding_rs::WINDOWS_1252.encode(&doc).0.into_owned(),
        ),
        Charset::ShiftJisMeta => (
            "text/html",
            encoding_rs::SHIFT_JIS.encode(&doc).0.into_owned(),
        ),
    }
}

/// The answer to a request for `loc`.
pub(crate) fn response(inner: &Inner, loc: &Loc, port: u16) -> Response {
    match inner.resolve(loc) {
        None => Response::status(404)
            .header("Content-Type", "text/html; charset=utf-8")
            .body(format!(
                "<!DOCTYPE html>\n<title>Not found</title>\n<p>Nothing at {}.</p>\n",
                escape(&loc.target)
            )),
        Some(Resource::Html(page)) => {
            let (content_type, body) = encode(&page, port);
            let r = Response::status(200)
                .header("Content-Type", content_type)
                .body(body);
            if page.x_robots_nofollow {
                r.header("X-Robots-Tag", "nofollow")
            } else {
                r
            }
        }
        Some(Resource::Redirect {
            status, location, ..
        }) => Response::redirect(status, href_text(&location, port)),
        Some(Resource::File { content_type, body }) => Response::status(200)
            .header("Content-Type", content_type)
            .body(body),
        Some(Resource::Robots { rules, sitemaps }) => {
            let mut text = rules;
            for sm in &sitemaps {
                text.push_str(&format!("Sitemap: {}\n", inner.url(sm, port)));
            }
            Response::status(200)
                .header("Content-Type", "text/plain; charset=utf-8")
                .body(text.into_bytes())
        }
        Some(Resource::Sitemap(doc)) => {
            let xml = sitemap_xml(inner, &doc, port);
            match doc.gzip {
                Some(content_type) => Response::status(200)
                    .header("Content-Type", content_type)
                    .body(gzip(xml.as_bytes())),
                None => Response::status(200)
                    .header("Content-Type", "application/xml")
                    .body(xml.into_bytes()),
            }
        }
        Some(Resource::Status(code)) => Response::status(code)
            .header("Content-Type", "text/plain; charset=utf-8")
            .body(format!("status {code}\n")),
    }
}

/// The XML of a sitemap, its URLs absolute with `port`.
pub(crate) fn sitemap_xml(inner: &Inner, doc: &SitemapDoc, port: u16) -> String {
    let (root, item) = if doc.index {
        ("sitemapindex", "sitemap")
    } else {
        ("urlset", "url")
    };
    let mut xml = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\
         <{root} xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n"
    );
    for (i, entry) in doc.entries.iter().enumerate() {
        if doc.fault_after == Some(i) {
            // A closing tag that does not match: the parser stops here.
            xml.push_str(&format!(
                "  <{item}><loc>{}</lock></{item}>\n",
                escape(&inner.url(entry, port))
            ));
            continue;
        }
        xml.push_str(&format!(
            "  <{item}><loc>{}</loc></{item}>\n",
            escape(&inner.url(entry, port))
        ));
    }
    xml.push_str(&format!("</{root}>\n"));
    xml
}
