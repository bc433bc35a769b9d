//! Path patterns of `allow` and `deny`, written as robots.txt writes its
//! rules: matched against a URL's path and query from their start, `*`
//! for any run of characters, `$` at the end for "and nothing after".

/// One path pattern (`/private/`, `/*.pdf$`, `*`).
///
/// ```
/// use common::rules::PathPattern;
/// let pdf = PathPattern::parse("/*.pdf$").unwrap();
/// assert!(pdf.matches("/docs/a.pdf"));
/// assert!(!pdf.matches("/docs/a.pdf?x=1"));
/// assert!(PathPattern::parse("/private/").unwrap().matches("/private/a?b"));
/// assert!(PathPattern::parse("private").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathPattern {
    text: String,
}

impl PathPattern {
    /// Reads a pattern: it starts with `/` or `*`.
    pub fn parse(text: &str) -> Result<PathPattern, String> {
        if !(text.starts_with('/') || text.starts_with('*')) {
            return Err(format!(
                "`{text}`: a path pattern starts with `/` (or `*`), as in robots.txt"
            ));
        }
        if text.bytes().any(|b| b <= b' ' || b >= 0x7f) {
            return Err(format!(
                "`{text}`: no spaces, control or non-ASCII characters: write them \
                 percent-encoded, as canonical URLs do (`%20`, `%C3%A9`)"
            ));
        }
        if text.strip_suffix('$').unwrap_or(text).contains('$') {
            return Err(format!("`{text}`: `$` may only end a pattern"));
        }
        Ok(PathPattern {
            text: text.to_string(),
        })
    }

    /// The pattern's length: the longer of two matching patterns decides.
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        self.text.len()
    }

    /// True if the pattern matches `path_and_query` (`/a/b?x=1`).
    pub fn matches(&self, path_and_query: &str) -> bool {
        let (body, anchored) = match self.text.strip_suffix('$') {
            Some(b) => (b, true),
            None => (self.text.as_str(), false),
        };
        let mut pieces = body.split('*');
        let first = pieces.next().unwrap_or("");
        let Some(mut rest) = path_and_query.strip_prefix(first) else {
            return false;
        };
        let pieces: Vec<&str> = pieces.collect();
        let Some((last, middle)) = pieces.split_last() else {
            return !anchored || rest.is_empty();
        };
        // Each middle piece at its leftmost place leaves the most room
        // for the ones after it.
        for piece in middle {
            match rest.find(piece) {
                Some(i) => rest = &rest[i + piece.len()..],
                None => return false,
            }
        }
        match anchored {
            true => rest.len() >= last.len() && rest.ends_with(last),
            false => rest.contains(last),
        }
    }
}

impl std::fmt::Display for PathPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}
