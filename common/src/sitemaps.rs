//! The `Sitemap:` lines of a robots.txt: where a site says its sitemaps are.
//!
//! The fetcher keeps them with the host's robots.txt in `hosts.db` (column
//! `sitemaps`); the segmenter schedules them and uses them to decide which
//! hosts a sitemap may list (the sitemaps protocol's cross-host rule). Both
//! read them with [`in_robots_txt`], so they agree on what a file names.
//!
//! ```
//! let robots = b"User-agent: *\nDisallow: /private\n\nSITEMAP: https://example.com/sitemap.xml\n\
//!                sitemap:/relative.xml\n";
//! assert_eq!(
//!     common::sitemaps::in_robots_txt(robots),
//!     ["https://example.com/sitemap.xml"]
//! );
//! ```

/// Most `Sitemap:` URLs taken from one robots.txt; the rest are ignored.
pub const MAX_PER_ROBOTS: usize = 1000;

/// Longest `Sitemap:` URL taken, in bytes (longer ones are ignored).
pub const MAX_URL_BYTES: usize = 2048;

/// The sitemap URLs a robots.txt names, in file order, without repeats:
/// the values of `Sitemap:` lines (field name in any case, anywhere in the
/// file, inside a group or not, within the part of the file the fetcher
/// parses: [`crate::robots_txt::parsed_part`]), `#` comments and surrounding
/// whitespace removed. Only absolute `http:` and `https:` URLs count (the protocol asks
/// for a fully qualified URL); at most [`MAX_PER_ROBOTS`] are returned.
/// Bytes that are not UTF-8 end no line and spoil only their own line.
pub fn in_robots_txt(body: &[u8]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let body = crate::robots_txt::parsed_part(body);
    for line in body.split(|&b| b == b'\n' || b == b'\r') {
        if out.len() >= MAX_PER_ROBOTS {
            break;
        }
        let Some(value) = sitemap_value(line) else {
            continue;
        };
        if !out.iter().any(|s| s == value) {
            out.push(value.to_string());
        }
    }
    out
}

/// The URL of one `Sitemap:` line, if the line is one and the URL is usable.
fn sitemap_value(line: &[u8]) -> Option<&str> {
    let line = std::str::from_utf8(line).ok()?;
    let line = line.trim_start_matches('\u{feff}').trim_start();
    let (field, value) = line.split_once(':')?;
    if !field.trim_end().eq_ignore_ascii_case("sitemap") {
        return None;
    }
    // A `#` starts a comment; URLs keep theirs percent-encoded.
    let value = value.split('#').next().unwrap_or("").trim();
    if value.is_empty() || value.len() > MAX_URL_BYTES || value.contains(char::is_whitespace) {
        return None;
    }
    let scheme_ok = value
        .get(..8)
        .is_some_and(|p| p.eq_ignore_ascii_case("https://"))
        || value
            .get(..7)
            .is_some_and(|p| p.eq_ignore_ascii_case("http://"));
    (scheme_ok && url::Url::parse(value).is_ok_and(|u| u.host_str().is_some())).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_past_the_part_the_fetcher_parses_are_not_taken() {
        let mut body = b"Sitemap: http://a.test/in.xml\n".to_vec();
        body.resize(crate::robots_txt::MAX_BYTES - 10, b'\n');
        // The limit cuts this line: half a URL must not be taken.
        body.extend_from_slice(b"Sitemap: http://a.test/cut-in-the-middle.xml\n");
        body.extend_from_slice(b"Sitemap: http://a.test/after.xml\n");
        assert_eq!(in_robots_txt(&body), ["http://a.test/in.xml"]);
    }

    #[test]
    fn sitemap_lines_anywhere_in_any_case() {
        let body = b"\xef\xbb\xbfSitemap: http://a.test/first.xml\r\n\
            User-agent: *\r\n\
            Disallow: /x\r\n\
            sitemap:   https://a.test/in-group.xml.gz   # the news\r\n\
            SiteMap : http://b.test/other-host.xml\n\
            \n\
            Sitemap: /relative.xml\n\
            Sitemap: ftp://a.test/x.xml\n\
            Sitemap:\n\
            Sitemap: http://a.test/two words.xml\n\
            Sitemaps: http://a.test/not-the-field.xml\n\
            # Sitemap: http://a.test/commented.xml\n\
            \xff\xfe Sitemap: http://a.test/bad-bytes.xml\n\
            Sitemap: http://a.test/first.xml\n";
        assert_eq!(
            in_robots_txt(body),
            [
                "http://a.test/first.xml",
                "https://a.test/in-group.xml.gz",
                "http://b.test/other-host.xml",
            ]
        );
    }

    #[test]
    fn at_most_a_thousand_and_none_too_long() {
        let mut body = String::new();
        for i in 0..MAX_PER_ROBOTS + 5 {
            body.push_str(&format!("Sitemap: http://a.test/s{i}.xml\n"));
        }
        let found = in_robots_txt(body.as_bytes());
        assert_eq!(found.len(), MAX_PER_ROBOTS);
        assert_eq!(found[0], "http://a.test/s0.xml");
        let long = format!("Sitemap: http://a.test/{}\n", "x".repeat(MAX_URL_BYTES));
        assert!(in_robots_txt(long.as_bytes()).is_empty());
        assert!(in_robots_txt(b"").is_empty());
    }
}
