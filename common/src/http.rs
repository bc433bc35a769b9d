//! The HTTP messages stored in WARC `request`/`response` records.

/// The status line and headers of a stored HTTP response.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResponseHead {
    /// Status code.
    pub status: u16,
    /// Headers in order, names as sent.
    pub headers: Vec<(String, String)>,
    /// Offset of the body (the payload) in the block.
    pub body_offset: usize,
}

impl ResponseHead {
    /// The first header called `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Parses the head of an HTTP/1.x response at the start of `block`;
/// `None` if it is not one. Header values that are not UTF-8 are decoded lossily.
pub fn parse_response_head(block: &[u8]) -> Option<ResponseHead> {
    let _ = block;
    todo!("parse_response_head")
}

/// Splits a `Content-Type` value into the lower-case media type and the
/// `charset` parameter: `text/HTML; Charset="utf-8"` → (`text/html`, `Some("utf-8")`).
pub fn parse_content_type(value: &str) -> (String, Option<String>) {
    let _ = value;
    todo!("parse_content_type")
}
