use std::io::Write;

use flate2::Compression;

use super::*;

const PAGE: &[u8] = b"<html><a href=\"/next\">next</a></html>";

fn gzip(b: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), Compression::default());
    e.write_all(b).unwrap();
    e.finish().unwrap()
}

fn zlib(b: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), Compression::default());
    e.write_all(b).unwrap();
    e.finish().unwrap()
}

fn raw_deflate(b: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::DeflateEncoder::new(Vec::new(), Compression::default());
    e.write_all(b).unwrap();
    e.finish().unwrap()
}

fn chunk(b: &[u8], size: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, c) in b.chunks(size).enumerate() {
        out.extend_from_slice(format!("{:x};n={i}\r\n", c.len()).as_bytes());
        out.extend_from_slice(c);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"0\r\nX-Trailer: yes\r\n\r\n");
    out
}

fn decode(te: Option<&str>, ce: Option<&str>, raw: &[u8], max: usize) -> (Vec<u8>, Outcome) {
    let mut d = BodyDecoder::default();
    let got = d.decode(te, ce, raw, max);
    (got.body.to_vec(), got.outcome)
}

#[test]
fn every_coding_decodes() {
    let zstd = zstd::encode_all(PAGE, 3).unwrap();
    let cases: [(Option<&str>, Option<&str>, Vec<u8>); 8] = [
        (None, None, PAGE.to_vec()),
        (Some("chunked"), None, chunk(PAGE, 5)),
        (None, Some("gzip"), gzip(PAGE)),
        (None, Some("x-gzip"), gzip(PAGE)),
        (None, Some("deflate"), zlib(PAGE)),
        (None, Some("Deflate"), raw_deflate(PAGE)),
        (Some("chunked"), Some("gzip"), chunk(&gzip(PAGE), 7)),
        (None, Some("zstd"), zstd),
    ];
    for (te, ce, raw) in cases {
        assert_eq!(
            decode(te, ce, &raw, 1 << 20),
            (PAGE.to_vec(), Outcome::Complete),
            "{te:?} {ce:?}"
        );
    }
    // Codings applied in turn are undone in turn.
    let twice = gzip(&zlib(PAGE));
    assert_eq!(
        decode(
            Some("chunked"),
            Some("deflate, gzip"),
            &chunk(&twice, 3),
            1000
        ),
        (PAGE.to_vec(), Outcome::Complete)
    );
}

#[test]
fn brotli_decodes() {
    let mut br = Vec::new();
    brotli::BrotliCompress(&mut &PAGE[..], &mut br, &Default::default()).unwrap();
    assert_eq!(
        decode(None, Some("br"), &br, 1000),
        (PAGE.to_vec(), Outcome::Complete)
    );
}

#[test]
fn what_cannot_be_decoded_is_given_back_as_received() {
    // A plain body labelled gzip.
    let (body, outcome) = decode(None, Some("gzip"), PAGE, 1000);
    assert_eq!(body, PAGE);
    assert!(
        matches!(outcome, Outcome::Failed(ref e) if e.starts_with("gzip")),
        "{outcome:?}"
    );
    // Chunked, then a coding nobody knows: the de-chunked body.
    let (body, outcome) = decode(Some("chunked"), Some("compress"), &chunk(PAGE, 4), 1000);
    assert_eq!(body, PAGE);
    assert!(matches!(outcome, Outcome::Failed(_)));
    // Labelled chunked but not: the bytes as they are.
    assert_eq!(decode(Some("chunked"), None, PAGE, 1000).0, PAGE);
}

#[test]
fn cut_streams_keep_what_was_decoded() {
    let gz = gzip(PAGE);
    let (body, outcome) = decode(None, Some("gzip"), &gz[..gz.len() - 8], 1000);
    assert_eq!(body, PAGE, "all data is there, only the trailer is missing");
    assert!(matches!(outcome, Outcome::Incomplete(_)), "{outcome:?}");
    let chunked = chunk(PAGE, 10);
    let (body, outcome) = decode(Some("chunked"), None, &chunked[..20], 1000);
    assert!(PAGE.starts_with(&body) && !body.is_empty());
    assert!(matches!(outcome, Outcome::Incomplete(ref e) if e.starts_with("chunked")));
}

#[test]
fn the_cap_holds_against_bombs() {
    let bomb = gzip(&vec![b'a'; 20_000_000]);
    assert!(bomb.len() < 100_000);
    let (body, outcome) = decode(None, Some("gzip"), &bomb, 1_000_000);
    assert_eq!((body.len(), outcome), (1_000_000, Outcome::Cut));
    let zst = zstd::encode_all(&vec![0u8; 5_000_000][..], 3).unwrap();
    assert_eq!(decode(None, Some("zstd"), &zst, 4096).0.len(), 4096);
    // Exactly the cap is complete; plain bodies are capped too.
    assert_eq!(decode(None, None, PAGE, PAGE.len()).1, Outcome::Complete);
    assert_eq!(
        decode(None, None, PAGE, 4),
        (PAGE[..4].to_vec(), Outcome::Cut)
    );
}

#[test]
fn trim_frees_only_buffers_a_large_body_grew() {
    let mut d = BodyDecoder::default();
    let big = vec![b'x'; 3 << 20];
    let raw = gzip(&big);
    let got = d.decode(None, Some("gzip"), &raw, 8 << 20);
    assert_eq!(got.body.len(), big.len());
    assert!(d.a.capacity().max(d.b.capacity()) >= big.len());
    d.trim(1 << 20);
    assert!(d.a.capacity() <= 1 << 20 && d.b.capacity() <= 1 << 20);
    // Still decodes after.
    let raw = gzip(PAGE);
    let got = d.decode(None, Some("gzip"), &raw, 1 << 20);
    assert_eq!(got.body, PAGE);
}
