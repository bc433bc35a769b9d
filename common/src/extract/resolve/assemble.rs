//! A [`Url`] built from a canonical text the direct way wrote and the
//! offsets of its parts, without parsing the text again.
//!
//! The `url` crate has no constructor from parts, but it reads its own
//! fields back through `Url::deserialize_internal` (its `serde` feature),
//! which takes them as a tuple in the order `Url::serialize_internal`
//! writes them: the text, the ends of the scheme, user name and host, the
//! host's kind, the port, the start of the path, of the query and of the
//! fragment. The small deserializer here hands it those values; building a
//! link this way costs its allocation and copy, where `Url::set_path`
//! parsed the path again byte by byte (a quarter of the reader's time on
//! pages of many links). Only hosts that are domain names are built here
//! (the others go on the slower way), and the URL has no user name,
//! password or fragment. In builds with debug assertions the `url` crate
//! parses every URL built this way again and checks each field: the
//! extractor's tests cover this module too.

use std::fmt;

use serde::de::value::StrDeserializer;
use serde::de::{DeserializeSeed, Deserializer, IntoDeserializer, SeqAccess, Visitor};
use url::{Host, Position, Url};

/// Where the parts of a URL's origin end, for building URLs of that origin:
/// `scheme://host[:port]`, the host a domain name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Layout {
    /// The index of the scheme's `:`.
    scheme_end: u32,
    /// The index after the host.
    host_end: u32,
    port: Option<u16>,
    /// The length of the origin: where the path starts.
    path_start: u32,
}

impl Layout {
    /// The layout of `url`'s origin, if its host is a domain name and it has
    /// no user name or password.
    pub(super) fn of(url: &Url) -> Option<Layout> {
        if !matches!(url.host(), Some(Host::Domain(_)))
            || !url.username().is_empty()
            || url.password().is_some()
        {
            return None;
        }
        let scheme_end = url.scheme().len();
        let host_end = scheme_end + 3 + url.host_str()?.len();
        Layout::new(
            scheme_end,
            host_end,
            url.port(),
            url[..Position::BeforePath].len(),
        )
    }

    /// The layout of an origin `scheme://host[:port]` written with a domain
    /// name as its host, `path_start` bytes long.
    pub(super) fn new(
        scheme_end: usize,
        host_end: usize,
        port: Option<u16>,
        path_start: usize,
    ) -> Option<Layout> {
        Some(Layout {
            scheme_end: u32::try_from(scheme_end).ok()?,
            host_end: u32::try_from(host_end).ok()?,
            port,
            path_start: u32::try_from(path_start).ok()?,
        })
    }
}

/// The URL whose canonical text is `text`: the origin `layout` describes,
/// then a path, then a query from `query_start` (the index of its `?`) when
/// there is one; no fragment. `None` only if the `url` crate refuses the
/// parts (a layout it no longer reads this way).
pub(super) fn assemble(text: String, layout: Layout, query_start: Option<usize>) -> Option<Url> {
    let query_start = match query_start {
        Some(q) => Some(u32::try_from(q).ok()?),
        None => None,
    };
    Url::deserialize_internal(Parts {
        text: Some(text),
        layout,
        query_start,
        next: 0,
    })
    .ok()
}

/// The fields of a [`Url`] in the order `Url::deserialize_internal` reads
/// them, handed out one at a time.
struct Parts {
    text: Option<String>,
    layout: Layout,
    query_start: Option<u32>,
    /// The index of the next field.
    next: usize,
}

/// One field's value.
enum Part {
    Text(String),
    Number(u32),
    Optional(Option<u32>),
    /// The host's kind: a domain name.
    Domain,
}

/// The `url` crate refused the parts. A type of no size, so that the
/// results passed between the deserializer's calls stay small.
#[derive(Debug)]
struct Refused;

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the parts of a URL were refused")
    }
}

impl std::error::Error for Refused {}

impl serde::de::Error for Refused {
    fn custom<T: fmt::Display>(_: T) -> Refused {
        Refused
    }
}

impl<'de> Deserializer<'de> for Parts {
    type Error = Refused;

    #[inline]
    fn deserialize_any<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value, Refused> {
        visitor.visit_seq(&mut self)
    }

    #[inline]
    fn deserialize_tuple<V: Visitor<'de>>(
        mut self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, Refused> {
        visitor.visit_seq(&mut self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq
        tuple_struct map struct enum identifier ignored_any
    }
}

impl<'de> SeqAccess<'de> for Parts {
    type Error = Refused;

    #[inline]
    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Refused> {
        let layout = self.layout;
        // No user name or password: the user name ends where the host starts.
        let host_start = layout.scheme_end + 3;
        let part = match self.next {
            0 => Part::Text(self.text.take().unwrap_or_default()),
            1 => Part::Number(layout.scheme_end),
            2 | 3 => Part::Number(host_start),
            4 => Part::Number(layout.host_end),
            5 => Part::Domain,
            6 => Part::Optional(layout.port.map(u32::from)),
            7 => Part::Number(layout.path_start),
            8 => Part::Optional(self.query_start),
            9 => Part::Optional(None),
            _ => return Ok(None),
        };
        self.next += 1;
        seed.deserialize(part).map(Some)
    }
}

impl<'de> Deserializer<'de> for Part {
    type Error = Refused;

    #[inline]
    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Refused> {
        match self {
            Part::Text(text) => visitor.visit_string(text),
            Part::Number(n) => visitor.visit_u32(n),
            Part::Optional(None) => visitor.visit_none(),
            Part::Optional(Some(n)) => visitor.visit_some(Part::Number(n)),
            Part::Domain => {
                let domain: StrDeserializer<'_, Refused> = "Domain".into_deserializer();
                visitor.visit_enum(domain)
            }
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}
