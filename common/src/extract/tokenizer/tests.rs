//! The tokenizer against the HTML standard's rules, one row per rule: a
//! small page and its tokens, written `<Kind attr=value>` for start tags
//! (the kind of a tag the tokenizer does not name is `Other`), `</name>`
//! for end tags and `"text"` for text (`script"..."`, `raw"..."`,
//! `rcdata"..."`, `plain"..."`, `cdata"..."` for the other kinds).

use super::*;

/// Writes every token down.
#[derive(Default)]
struct Tokens(Vec<String>);

impl Handler for Tokens {
    fn wants_attributes(&mut self, _: Tag) -> bool {
        true
    }

    fn start_tag(&mut self, input: &[u8], tag: &StartTag<'_>) {
        let mut s = format!("<{:?}", tag.tag);
        for a in tag.attrs {
            let text = |r: &Range<usize>| String::from_utf8_lossy(&input[r.clone()]).into_owned();
            s.push_str(&format!(" {}={}", text(&a.name), text(&a.value)));
        }
        s.push('>');
        self.0.push(s);
    }

    fn end_tag(&mut self, input: &[u8], name: Range<usize>) {
        self.0
            .push(format!("</{}>", String::from_utf8_lossy(&input[name])));
    }

    fn text(&mut self, input: &[u8], text: Range<usize>, kind: TextKind) {
        let prefix = match kind {
            TextKind::Data => "",
            TextKind::RcData => "rcdata",
            TextKind::RawText => "raw",
            TextKind::Script => "script",
            TextKind::PlainText => "plain",
            TextKind::CData => "cdata",
        };
        self.0.push(format!(
            "{prefix}{:?}",
            String::from_utf8_lossy(&input[text])
        ));
    }
}

fn tokens(page: &str) -> Vec<String> {
    let mut t = Tokens::default();
    Tokenizer::new(1 << 20)
        .run(page.as_bytes(), &mut t)
        .expect("within the bound");
    t.0
}

/// Each row: the rule (and where the standard says it), the page, its tokens.
fn check(rows: &[(&str, &str, &[&str])]) {
    let mut failures = Vec::new();
    for &(rule, page, want) in rows {
        let got = tokens(page);
        if got != want {
            failures.push(format!(
                "{rule}\n  page {page:?}\n  got  {got:?}\n  want {want:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn tags_and_attributes() {
    check(&[
        (
            "a start tag, text, an end tag",
            "<p name=x class=y>a</p>",
            &["<Other name=x class=y>", "\"a\"", "</p>"],
        ),
        (
            "quoted values hold > and the other quote (attribute value (double-quoted) state)",
            "<a href=\"x>y\" title='>' rel='a\"b'>t",
            &["<A href=x>y title=> rel=a\"b>", "\"t\""],
        ),
        (
            "an unquoted value runs to white space or > (quotes are part of it)",
            "<a href=x\"y rel=z>",
            &["<A href=x\"y rel=z>"],
        ),
        (
            "names without values, / between attributes, spaces around =",
            "<a/href=x name/rel = \"t\">",
            &["<A href=x name= rel=t>"],
        ),
        (
            "a value right after a quoted one (missing-whitespace-between-attributes)",
            "<a href='x'rel='y'>",
            &["<A href=x rel=y>"],
        ),
        (
            "= first in a name is part of it, and a quote in a name is too",
            "<a =\"b>c\" href=d>",
            &["<A =\"b=>", "\"c\\\" href=d>\""],
        ),
        (
            "> where a value should be ends the tag (missing-attribute-value)",
            "<a href=>x",
            &["<A href=>", "\"x\""],
        ),
        (
            "duplicate attributes are all reported (the first counts)",
            "<a href=1 HREF=2>",
            &["<A href=1 HREF=2>"],
        ),
        (
            "tag names in any case; carriage return, tab and form feed are white space",
            "<A\rHREF=x\tREL=y\x0Cname><IFRAME SRC=f></IFRAME>",
            &["<A HREF=x REL=y name=>", "<Iframe SRC=f>", "</IFRAME>"],
        ),
        (
            "self-closing and end tags with attributes (quoted > inside)",
            "<br/><a href=x /></a title=\">\">y",
            &["<Other>", "<A href=x>", "</a>", "\"y\""],
        ),
        (
            "< that starts no tag is text",
            "a < b <3 <> <=x </",
            &["\"a < b <3 <> <=x </\""],
        ),
        (
            "the end inside a tag drops the tag (eof-in-tag)",
            "x<a href='y",
            &["\"x\""],
        ),
        ("... an unquoted value", "x<a href=y", &["\"x\""]),
        ("... a name", "x<a", &["\"x\""]),
        ("... after /", "x<a /", &["\"x\""]),
    ]);
}

#[test]
fn comments_and_declarations() {
    check(&[
        (
            "a comment hides tags",
            "a<!-- <a href=x> -->b",
            &["\"a\"", "\"b\""],
        ),
        (
            "<!--> and <!---> are whole comments (abrupt-closing-of-empty-comment)",
            "<!-->a<!--->b",
            &["\"a\"", "\"b\""],
        ),
        (
            "--!> ends a comment (incorrectly-closed-comment), but not right after <!--",
            "<!-- c --!>d<!--!>e<!---!>f-->g",
            &["\"d\"", "\"f-->g\""],
        ),
        ("nested <!-- changes nothing", "<!-- <!-- -->h", &["\"h\""]),
        (
            "doctype, processing instruction, </ and a non-letter, <!x: to the first >",
            "<!DOCTYPE html>a<?php x ?>b</ x>c<!x>d</>e",
            &["\"a\"", "\"b\"", "\"c\"", "\"d\"", "\"e\""],
        ),
        (
            "a bogus comment ends at the first >, even in quotes",
            "<!DOCTYPE html PUBLIC \"a>b\">c",
            &["\"b\\\">c\""],
        ),
        (
            "CDATA outside SVG and MathML is a bogus comment",
            "<![CDATA[<a href=x>]]>",
            &["\"]]>\""],
        ),
        (
            "a comment cut off by the end",
            "x<!-- <a href=y>",
            &["\"x\""],
        ),
    ]);
}

#[test]
fn raw_text_elements() {
    check(&[
        (
            "script text up to </script (script data state)",
            "<script>if (a<b) { s = \"<a href=y>\" }</script>z",
            &[
                "<Script>",
                "script\"if (a<b) { s = \\\"<a href=y>\\\" }\"",
                "</script>",
                "\"z\"",
            ],
        ),
        (
            "only </script followed by white space, / or > ends it",
            "<script>a</scripts></script\nid=x>b",
            &["<Script>", "script\"a</scripts>\"", "</script>", "\"b\""],
        ),
        (
            "<!-- <script> in a script hides </script> (double escaped)",
            "<script><!-- <script> </script> x --></script>z",
            &[
                "<Script>",
                "script\"<!-- <script> </script> x -->\"",
                "</script>",
                "\"z\"",
            ],
        ),
        (
            "<!-- alone does not (escaped: </script> still ends it)",
            "<script><!--</script>a",
            &["<Script>", "script\"<!--\"", "</script>", "\"a\""],
        ),
        (
            "--> leaves the escaped state, <script> then is text",
            "<script><!-- --> <script> </script>a",
            &[
                "<Script>",
                "script\"<!-- --> <script> \"",
                "</script>",
                "\"a\"",
            ],
        ),
        (
            "a script never closed runs to the end",
            "<script>x<a href=y>",
            &["<Script>", "script\"x<a href=y>\""],
        ),
        (
            "style, xmp, iframe, noembed, noframes, noscript are raw text",
            "<style><a></style><xmp><a></xmp><iframe src=f><a></iframe>\
             <noembed><a></noembed><noframes><a></noframes><noscript><a></noscript>",
            &[
                "<Style>",
                "raw\"<a>\"",
                "</style>",
                "<Xmp>",
                "raw\"<a>\"",
                "</xmp>",
                "<Iframe src=f>",
                "raw\"<a>\"",
                "</iframe>",
                "<Noembed>",
                "raw\"<a>\"",
                "</noembed>",
                "<Noframes>",
                "raw\"<a>\"",
                "</noframes>",
                "<Noscript>",
                "raw\"<a>\"",
                "</noscript>",
            ],
        ),
        (
            "textarea and title are RCDATA, closed in any case",
            "<TITLE><a></TiTlE><textarea><!--</textarea>-->",
            &[
                "<Title>",
                "rcdata\"<a>\"",
                "</TiTlE>",
                "<Textarea>",
                "rcdata\"<!--\"",
                "</textarea>",
                "\"-->\"",
            ],
        ),
        (
            "plaintext runs to the end, whatever follows",
            "<plaintext><a href=x></plaintext>",
            &["<Plaintext>", "plain\"<a href=x></plaintext>\""],
        ),
    ]);
}

#[test]
fn foreign_content() {
    check(&[
        (
            "in SVG, style is an ordinary element",
            "<svg><style><a href=x></style></svg><style><a></style>",
            &[
                "<Svg>",
                "<Style>",
                "<A href=x>",
                "</style>",
                "</svg>",
                "<Style>",
                "raw\"<a>\"",
                "</style>",
            ],
        ),
        (
            "CDATA sections in SVG are text",
            "<svg><![CDATA[<a href=x>]]></svg>",
            &["<Svg>", "cdata\"<a href=x>\"", "</svg>"],
        ),
        (
            "a breakout start tag returns to HTML, out of nested SVG",
            "<svg><svg><div><style><a></style>",
            &[
                "<Svg>",
                "<Svg>",
                "<Other>",
                "<Style>",
                "raw\"<a>\"",
                "</style>",
            ],
        ),
        (
            "font with color, face or size breaks out; plain font does not",
            "<svg><font><style><a></style><font color=red><style><a></style>",
            &[
                "<Svg>",
                "<Font>",
                "<Style>",
                "<A>",
                "</style>",
                "<Font color=red>",
                "<Style>",
                "raw\"<a>\"",
                "</style>",
            ],
        ),
        (
            "</p> and </br> in SVG return to HTML",
            "<svg></p><style><a></style>",
            &["<Svg>", "</p>", "<Style>", "raw\"<a>\"", "</style>"],
        ),
        (
            "foreignObject is an HTML integration point, until its end tag",
            "<svg><foreignObject><style>a</style></foreignObject><style>b</style></svg>",
            &[
                "<Svg>",
                "<ForeignObject>",
                "<Style>",
                "raw\"a\"",
                "</style>",
                "</foreignObject>",
                "<Style>",
                "\"b\"",
                "</style>",
                "</svg>",
            ],
        ),
        (
            "MathML text integration points and annotation-xml encoding=text/html",
            "<math><mi><style>a</style></mi><style>b</style>\
             <annotation-xml encoding=\"TEXT/HTML\"><style>c</style></annotation-xml></math>",
            &[
                "<Math>",
                "<Mi>",
                "<Style>",
                "raw\"a\"",
                "</style>",
                "</mi>",
                "<Style>",
                "\"b\"",
                "</style>",
                "<AnnotationXml encoding=TEXT/HTML>",
                "<Style>",
                "raw\"c\"",
                "</style>",
                "</annotation-xml>",
                "</math>",
            ],
        ),
        (
            "a self-closing svg or math holds nothing: HTML goes on",
            "<svg/><style>a</style><math/><style>b</style>",
            &[
                "<Svg>", "<Style>", "raw\"a\"", "</style>", "<Math>", "<Style>", "raw\"b\"",
                "</style>",
            ],
        ),
    ]);
}

#[test]
fn memory_bound() {
    let mut t = Tokens::default();
    let deep = "<svg>".repeat(100);
    assert_eq!(
        Tokenizer::new(50).run(deep.as_bytes(), &mut t),
        Err(OverMemory)
    );
    // The same tokenizer reads the next page from a clean state.
    let mut t = Tokens::default();
    let mut tokenizer = Tokenizer::new(50);
    let _ = tokenizer.run(deep.as_bytes(), &mut t);
    let mut t = Tokens::default();
    tokenizer.run(b"<style>x</style>", &mut t).unwrap();
    assert_eq!(t.0, ["<Style>", "raw\"x\"", "</style>"]);
}

/// The end of a name as the scan finds it (16 bytes at a time) against one
/// byte at a time: every delimiter and a few bytes that only look like one
/// (control characters, which belong to the name), at every distance from
/// the start up to past one 16-byte block, and names cut by the end.
#[test]
fn names_end_where_one_byte_at_a_time_says() {
    let classes = [WS | GT | SLASH, WS | GT | SLASH | EQ];
    for &end in b" \t\n\r\x0c>/=\x01\x1f\x00x\xc3" {
        for len in 0..40 {
            let mut input = vec![b'n'; len];
            input.push(end);
            input.extend_from_slice(b"zz>");
            for class in classes {
                for from in [0, 1, len.saturating_sub(1)] {
                    let want = from
                        + input[from..]
                            .iter()
                            .position(|&b| is(b, class))
                            .unwrap_or(input.len() - from);
                    assert_eq!(
                        scan_to(&input, from, class),
                        want,
                        "{input:?} from {from}, class {class}"
                    );
                    let cut = &input[..len];
                    assert_eq!(scan_to(cut, from.min(len), class), len, "{cut:?}");
                }
            }
        }
    }
}
