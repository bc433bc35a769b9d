//! `fetched/ID/crawl.log`: one line per URL attempted, appended as the fetcher
//! goes, tab-separated:
//!
//! ```text
//! time                      status  bytes  ms   content-type  url                     via   hops  note
//! 2026-11-23T04:27:02.123Z  200     5120   84   text/html     https://example.com/a   link  1     -
//! 2026-11-23T04:27:02.300Z  301     0      12   text/html     https://example.com/b   link  1     redirect https://example.com/c
//! 2026-11-23T04:27:03.001Z  robots  0      0    -             https://example.com/x   link  1     -
//! ```
//! `status` is the HTTP status, or a word for what happened instead (see
//! [`ErrorCode`]); `note` starts with a code word when there is more to say
//! (`redirect TARGET`, `too-big ...`, `decode ...`, `retry-after 30s`,
//! error messages).
//! `awk -F'\t' '$2 !~ /^[0-9]/'` lists every URL that got no HTTP response.

use std::time::SystemTime;

use crate::segment::Via;

/// Outcomes without an HTTP status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorCode {
    /// The host name did not resolve.
    Dns,
    /// Connection refused.
    Refused,
    /// Connect, first-byte or whole-download timeout.
    Timeout,
    /// Other connection failures (reset, unreachable).
    Connect,
    /// TLS handshake or certificate failure.
    Tls,
    /// The server broke HTTP.
    Protocol,
    /// The body exceeded the size limit (stored truncated; note only).
    TooBig,
    /// The body could not be decoded (stored as received; note only).
    Decode,
    /// The address resolved to loopback, private, link-local or unspecified.
    PrivateAddress,
    /// Disallowed by robots.txt.
    Robots,
    /// robots.txt could not be fetched (5xx, 429, unreachable); retried later.
    RobotsUnavailable,
    /// The host asks for a Crawl-delay above the configured cap.
    CrawlDelay,
    /// The host failed too often and was dropped for this run.
    HostDropped,
    /// The URL is longer than the limit.
    UrlTooLong,
    /// Not a valid http(s) URL.
    BadUrl,
}

impl ErrorCode {
    /// Every code, for reports.
    pub const ALL: [ErrorCode; 15] = [
        ErrorCode::Dns,
        ErrorCode::Refused,
        ErrorCode::Timeout,
        ErrorCode::Connect,
        ErrorCode::Tls,
        ErrorCode::Protocol,
        ErrorCode::TooBig,
        ErrorCode::Decode,
        ErrorCode::PrivateAddress,
        ErrorCode::Robots,
        ErrorCode::RobotsUnavailable,
        ErrorCode::CrawlDelay,
        ErrorCode::HostDropped,
        ErrorCode::UrlTooLong,
        ErrorCode::BadUrl,
    ];

    /// The word written in the log.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::Dns => "dns",
            ErrorCode::Refused => "refused",
            ErrorCode::Timeout => "timeout",
            ErrorCode::Connect => "connect",
            ErrorCode::Tls => "tls",
            ErrorCode::Protocol => "protocol",
            ErrorCode::TooBig => "too-big",
            ErrorCode::Decode => "decode",
            ErrorCode::PrivateAddress => "private-address",
            ErrorCode::Robots => "robots",
            ErrorCode::RobotsUnavailable => "robots-unavailable",
            ErrorCode::CrawlDelay => "crawl-delay",
            ErrorCode::HostDropped => "host-dropped",
            ErrorCode::UrlTooLong => "url-too-long",
            ErrorCode::BadUrl => "bad-url",
        }
    }

    /// Inverse of [`ErrorCode::as_str`].
    pub fn parse(s: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// True if a line with this code stands for an attempt that reached
    /// the host, or tried to (a connection was opened or refused, a
    /// request sent): what politeness counts. False for a URL passed over
    /// without contact: disallowed or held by robots.txt (the robots.txt
    /// request has its own line), a Crawl-delay over the cap, a host
    /// dropped, a URL refused before any connection (bad, too long, a
    /// private address), a name that did not resolve.
    pub fn contacted_host(self) -> bool {
        match self {
            ErrorCode::Refused
            | ErrorCode::Timeout
            | ErrorCode::Connect
            | ErrorCode::Tls
            | ErrorCode::Protocol
            | ErrorCode::TooBig
            | ErrorCode::Decode => true,
            ErrorCode::Dns
            | ErrorCode::PrivateAddress
            | ErrorCode::Robots
            | ErrorCode::RobotsUnavailable
            | ErrorCode::CrawlDelay
            | ErrorCode::HostDropped
            | ErrorCode::UrlTooLong
            | ErrorCode::BadUrl => false,
        }
    }
}

/// The status column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// An HTTP response was received.
    Http(u16),
    /// No HTTP response; why.
    Error(ErrorCode),
}

/// One crawl log line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    /// When the attempt ended.
    pub time: SystemTime,
    /// What happened.
    pub status: Status,
    /// Body bytes stored, as received (transfer and content codings included).
    pub bytes: u64,
    /// Duration of the attempt in milliseconds.
    pub duration_ms: u64,
    /// Media type from `Content-Type`, or empty.
    pub content_type: String,
    /// The URL attempted.
    pub url: String,
    /// How it was found.
    pub via: Via,
    /// Hops from a seed.
    pub hops: u32,
    /// Extra information, starting with a code word; empty for none.
    pub note: String,
}

/// Appends `line` (with its newline) to `out`. Tabs and newlines inside fields
/// are replaced by spaces so that one attempt is always one line; an empty
/// field is written as `-`.
pub fn format_line(line: &LogLine, out: &mut String) {
    use std::fmt::Write as _;
    out.push_str(&crate::timefmt::iso_millis(line.time));
    out.push('\t');
    match line.status {
        Status::Http(code) => {
            let _ = write!(out, "{code}");
        }
        Status::Error(code) => out.push_str(code.as_str()),
    }
    let _ = write!(out, "\t{}\t{}\t", line.bytes, line.duration_ms);
    push_field(out, &line.content_type);
    out.push('\t');
    push_field(out, &line.url);
    let _ = write!(out, "\t{}\t{}\t", line.via, line.hops);
    push_field(out, &line.note);
    out.push('\n');
}

fn push_field(out: &mut String, s: &str) {
    if s.is_empty() {
        out.push('-');
    } else if !s.bytes().any(|b| matches!(b, b'\t' | b'\n' | b'\r')) {
        out.push_str(s);
    } else {
        out.extend(s.chars().map(|c| match c {
            '\t' | '\n' | '\r' => ' ',
            c => c,
        }));
    }
}

/// Parses one line written by [`format_line`] (with or without its newline).
/// A field written as `-` reads back empty.
pub fn parse_line(s: &str) -> Result<LogLine, String> {
    let s = s.strip_suffix('\n').unwrap_or(s);
    let s = s.strip_suffix('\r').unwrap_or(s);
    if s.contains(['\n', '\r']) {
        return Err("a line break inside the line (more than one line given?)".into());
    }
    let fields: Vec<&str> = s.split('\t').collect();
    let [time, status, bytes, ms, content_type, url, via, hops, note] = fields[..] else {
        return Err(format!(
            "expected 9 tab-separated fields, found {}",
            fields.len()
        ));
    };
    let time = crate::timefmt::parse_iso(time).ok_or_else(|| format!("bad time {time:?}"))?;
    let status = if !status.is_empty() && status.bytes().all(|b| b.is_ascii_digit()) {
        Status::Http(
            crate::parse_digits(status.as_bytes())
                .and_then(|n| u16::try_from(n).ok())
                .ok_or_else(|| format!("bad HTTP status {status:?}"))?,
        )
    } else {
        Status::Error(ErrorCode::parse(status).ok_or_else(|| format!("unknown status {status:?}"))?)
    };
    let number = |name: &str, v: &str| -> Result<u64, String> {
        crate::parse_digits(v.as_bytes()).ok_or_else(|| format!("bad {name} {v:?}"))
    };
    let field = |v: &str| {
        if v == "-" {
            String::new()
        } else {
            v.to_string()
        }
    };
    Ok(LogLine {
        time,
        status,
        bytes: number("bytes", bytes)?,
        duration_ms: number("duration", ms)?,
        content_type: field(content_type),
        url: field(url),
        via: Via::parse(via).ok_or_else(|| format!("unknown via {via:?}"))?,
        hops: u32::try_from(number("hops", hops)?).map_err(|_| format!("bad hops {hops:?}"))?,
        note: field(note),
    })
}

/// What a crawl log's lines add up to: `fetcher status` (through
/// [`crate::fetched::RunStatus`]) and the fetcher's metrics file count with
/// it, so that both say what `awk` on the file would.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    /// Lines: URLs attempted, robots.txt included.
    pub attempts: u64,
    /// HTTP responses other than robots.txt.
    pub pages: u64,
    /// Their body bytes as received (the `bytes` column).
    pub page_bytes: u64,
    /// Their count per status class: index 1 is `1xx` ... index 5 `5xx`;
    /// index 0 any other status.
    pub classes: [u64; 6],
    /// robots.txt HTTP responses.
    pub robots: u64,
    /// Attempts that got no HTTP response, per code (in the order of
    /// [`ErrorCode::ALL`]).
    pub errors: [u64; ErrorCode::ALL.len()],
    /// The `time` of the newest page line.
    pub last_page: Option<SystemTime>,
    /// Lines that could not be read (a line cut by a crash).
    pub bad_lines: u64,
}

impl Tally {
    /// Counts one line (with or without its newline).
    pub fn add(&mut self, line: &str) {
        self.attempts += 1;
        let Ok(l) = parse_line(line) else {
            self.bad_lines += 1;
            return;
        };
        match (l.status, l.via) {
            (Status::Http(_), Via::Robots) => self.robots += 1,
            (Status::Http(code), _) => {
                self.pages += 1;
                self.page_bytes += l.bytes;
                let class = usize::from(code / 100);
                self.classes[if class < self.classes.len() { class } else { 0 }] += 1;
                self.last_page = self.last_page.max(Some(l.time));
            }
            (Status::Error(code), _) => {
                let i = ErrorCode::ALL.iter().position(|c| *c == code);
                self.errors[i.expect("every code is in ALL")] += 1;
            }
        }
    }

    /// Attempts that got no HTTP response.
    pub fn error_count(&self) -> u64 {
        self.errors.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::Rng;
    use crate::timefmt::from_unix_millis;

    fn line(status: Status, note: &str) -> LogLine {
        LogLine {
            time: from_unix_millis(1_795_408_022_123),
            status,
            bytes: 5120,
            duration_ms: 84,
            content_type: "text/html".into(),
            url: "https://example.com/a".into(),
            via: Via::Link,
            hops: 1,
            note: note.into(),
        }
    }

    #[test]
    fn a_tally_counts_pages_classes_errors_and_the_last_page() {
        let mut t = Tally::default();
        let mut text = String::new();
        let mut robots = line(Status::Http(404), "");
        robots.via = Via::Robots;
        let mut later = line(Status::Http(503), "");
        later.time = from_unix_millis(1_795_408_023_000);
        later.bytes = 7;
        for l in [
            line(Status::Http(200), ""),
            robots,
            later,
            line(Status::Http(301), "redirect https://example.com/b"),
            line(Status::Http(99), ""),
            line(Status::Error(ErrorCode::Timeout), ""),
        ] {
            format_line(&l, &mut text);
        }
        text.push_str("2026-11-23T04:27:0");
        for l in text.lines() {
            t.add(l);
        }
        assert_eq!((t.attempts, t.pages, t.robots, t.bad_lines), (7, 4, 1, 1));
        assert_eq!(t.page_bytes, 5120 * 3 + 7);
        assert_eq!(t.classes, [1, 0, 1, 1, 0, 1]);
        assert_eq!(t.error_count(), 1);
        assert_eq!(t.errors[2], 1, "timeout is the third code");
        assert_eq!(t.last_page, Some(from_unix_millis(1_795_408_023_000)));
    }

    #[test]
    fn the_documented_format() {
        let mut out = String::new();
        format_line(&line(Status::Http(200), ""), &mut out);
        assert_eq!(
            out,
            "2026-11-23T04:27:02.123Z\t200\t5120\t84\ttext/html\thttps://example.com/a\tlink\t1\t-\n"
        );
        out.clear();
        let mut l = line(Status::Error(ErrorCode::Robots), "");
        l.bytes = 0;
        l.duration_ms = 0;
        l.content_type.clear();
        format_line(&l, &mut out);
        assert_eq!(
            out,
            "2026-11-23T04:27:02.123Z\trobots\t0\t0\t-\thttps://example.com/a\tlink\t1\t-\n"
        );
        // format_line appends.
        format_line(&l, &mut out);
        assert_eq!(out.lines().count(), 2);
    }

    #[test]
    fn round_trips() {
        let mut lines = vec![
            line(Status::Http(200), ""),
            line(Status::Http(301), "redirect https://example.com/c"),
            line(Status::Http(999), "retry-after 30s"),
        ];
        for code in ErrorCode::ALL {
            lines.push(line(Status::Error(code), "some message: with colon"));
        }
        for via in [
            Via::Seed,
            Via::Redirect,
            Via::Leftover,
            Via::Retry,
            Via::Backlog,
            Via::Robots,
        ] {
            let mut l = line(Status::Http(404), "");
            l.via = via;
            l.hops = u32::MAX;
            l.bytes = u64::MAX;
            lines.push(l);
        }
        let mut empty = line(Status::Http(200), "");
        empty.content_type.clear();
        empty.url.clear();
        lines.push(empty);
        let mut out = String::new();
        for l in &lines {
            out.clear();
            format_line(l, &mut out);
            assert_eq!(out.matches('\n').count(), 1);
            assert_eq!(parse_line(&out).as_ref(), Ok(l), "{out:?}");
            assert_eq!(parse_line(out.trim_end()).as_ref(), Ok(l));
        }
    }

    #[test]
    fn tabs_and_newlines_in_fields_become_spaces() {
        let mut l = line(
            Status::Error(ErrorCode::Protocol),
            "bad\theader\nline\r\nend",
        );
        l.content_type = "text/html\t; x".into();
        l.url = "https://example.com/a\tb".into();
        let mut out = String::new();
        format_line(&l, &mut out);
        assert_eq!(out.matches('\n').count(), 1, "{out:?}");
        assert_eq!(out.matches('\t').count(), 8, "{out:?}");
        let back = parse_line(&out).unwrap();
        assert_eq!(back.note, "bad header line  end");
        assert_eq!(back.content_type, "text/html ; x");
        assert_eq!(back.url, "https://example.com/a b");
        assert_eq!(back.status, l.status);
    }

    #[test]
    fn bad_lines_are_errors() {
        let good =
            "2026-11-23T04:27:02.123Z\t200\t5120\t84\ttext/html\thttps://example.com/a\tlink\t1\t-";
        assert!(parse_line(good).is_ok());
        let bad = [
            ("", "9 tab-separated"),
            ("2026-11-23T04:27:02.123Z\t200", "9 tab-separated"),
            (&*good.replace("\t-", "\t-\textra"), "9 tab-separated"),
            (
                &*good.replace("\t200\t", "\tbogus\t"),
                "unknown status \"bogus\"",
            ),
            (&*good.replace("\t200\t", "\t\t"), "unknown status"),
            (&*good.replace("\t200\t", "\t70000\t"), "bad HTTP status"),
            (&*good.replace("2026-11", "2026-13"), "bad time"),
            (&*good.replace("\t5120\t", "\t-5\t"), "bad bytes"),
            (&*good.replace("\t84\t", "\tx\t"), "bad duration"),
            (&*good.replace("\tlink\t", "\tsomehow\t"), "unknown via"),
            (&*good.replace("\t1\t-", "\t99999999999\t-"), "bad hops"),
            // Only what format_line writes: no sign, no spaces.
            (&*good.replace("\t5120\t", "\t+5120\t"), "bad bytes"),
            (&*good.replace("\t84\t", "\t 84\t"), "bad duration"),
            (&*good.replace("\t1\t-", "\t+1\t-"), "bad hops"),
            (&*good.replace("/a", "/\n"), "line break"),
            (&*format!("{good}\n{good}"), "line break"),
        ];
        for (input, want) in bad {
            match parse_line(input) {
                Err(e) => assert!(e.contains(want), "{input:?}: {e}"),
                Ok(l) => panic!("{input:?} parsed as {l:?}"),
            }
        }
    }

    #[test]
    fn random_and_mangled_lines_are_errors_or_round_trip() {
        let good: Vec<char> = "2026-11-23T04:27:02.123Z\t200\t5120\t84\ttext/html\t\
                               https://example.com/a\tlink\t1\tredirect https://example.com/c"
            .chars()
            .collect();
        let pieces = [
            "\t",
            "-",
            "+",
            "0",
            "9",
            "é",
            "Z",
            "T",
            ":",
            ".",
            " ",
            "\n",
            "\r",
            "\0",
            "robots",
            "retry",
            "dns",
            "65536",
            "99999999999999999999",
            "2024-02-29",
            "\u{fffd}",
        ];
        let mut rng = Rng::new(3);
        let (mut parsed, mut refused) = (0, 0);
        for round in 0..20_000 {
            let line: String = if round % 5 == 0 {
                let bytes: Vec<u8> = (0..rng.below(120)).map(|_| rng.next_u64() as u8).collect();
                String::from_utf8_lossy(&bytes).into_owned()
            } else {
                let mut chars = good.clone();
                for _ in 0..1 + rng.below(3) {
                    let at = rng.below(chars.len());
                    let end = (at + rng.below(4)).min(chars.len());
                    let piece = pieces[rng.below(pieces.len())];
                    chars.splice(at..end, piece.chars());
                }
                chars.into_iter().collect()
            };
            match parse_line(&line) {
                Ok(l) => {
                    parsed += 1;
                    let mut out = String::new();
                    format_line(&l, &mut out);
                    assert_eq!(parse_line(&out), Ok(l), "{line:?} -> {out:?}");
                }
                Err(e) => {
                    refused += 1;
                    assert!(!e.is_empty());
                }
            }
        }
        assert!(
            parsed > 100 && refused > 100,
            "{parsed} parsed, {refused} refused"
        );
    }
}
