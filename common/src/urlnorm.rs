//! The canonical form of a URL: one spelling per resource, used both as the
//! dedup key and as the URL that is fetched.
//!
//! Rules (each covered by the table test):
//! lower-case scheme and host; IDNA hosts in punycode; no trailing dot in the
//! host; default port dropped; fragment dropped; dot segments resolved;
//! percent-encoding normalized (unreserved characters decoded, hex digits
//! upper case, unsafe characters escaped); empty path becomes `/`; session-id
//! parameters removed (`jsessionid`, `phpsessid`, `sid`, `aspsessionid`,
//! `cfid`, `cftoken`, and the `;jsessionid=` path form); a `?` with nothing
//! after it dropped. Only `http` and `https`.

use url::Url;

/// Why a string is not a crawlable URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    /// Not parseable as a URL.
    #[error("{url}: not a valid URL ({reason})")]
    Invalid {
        /// The input, as given.
        url: String,
        /// The parser's reason.
        reason: String,
    },
    /// A scheme other than http or https.
    #[error("{url}: scheme `{scheme}` is not crawled (only http and https)")]
    Scheme {
        /// The input, as given.
        url: String,
        /// The scheme found.
        scheme: String,
    },
    /// No host (e.g. `http:///path`).
    #[error("{url}: no host")]
    NoHost {
        /// The input, as given.
        url: String,
    },
}

/// Canonicalizes an absolute URL.
pub fn canonicalize(input: &str) -> Result<Url, UrlError> {
    let _ = input;
    todo!("canonicalize")
}

/// Resolves `href` against `base` (a page or `<base href>`) and canonicalizes it.
pub fn canonicalize_relative(base: &Url, href: &str) -> Result<Url, UrlError> {
    let _ = (base, href);
    todo!("canonicalize_relative")
}

/// Canonicalizes an already parsed URL.
pub fn canonicalize_url(url: Url) -> Result<Url, UrlError> {
    let _ = url;
    todo!("canonicalize_url")
}

/// What URLs are grouped by for politeness.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum KeyMode {
    /// The host name (default).
    #[default]
    Host,
    /// The registrable domain (`www.example.co.uk` → `example.co.uk`).
    Domain,
}

/// The host of a canonical URL (lower case, punycode, no port): the first
/// field of a segment line.
pub fn host_of(url: &Url) -> &str {
    url.host_str().unwrap_or("")
}

/// The registrable domain of a host through the public suffix list
/// (`a.b.example.co.uk` → `example.co.uk`). IP addresses, and hosts that are
/// themselves a public suffix, are returned unchanged.
pub fn registrable_domain(host: &str) -> &str {
    let _ = host;
    todo!("registrable_domain")
}

/// The queue key of a canonical URL for `mode`.
pub fn queue_key(url: &Url, mode: KeyMode) -> &str {
    match mode {
        KeyMode::Host => host_of(url),
        KeyMode::Domain => registrable_domain(host_of(url)),
    }
}
