use std::net::IpAddr;
use std::path::Path;
use std::time::Duration;

use super::*;

const FILE: &str = r#"
# A crawl's rules.
[[rule]]
domain = "example.com"
min_delay = "2s"
delay_factor = 1.5
max_per_host = 200
weight = 2
drop_params = ["ref", "From_*"]

[[rule]]
host = "www.example.com"
min_delay = "10s"
max_host_pages = 0
max_host_bytes = "1GB"
sort_query = true
headers = { Cookie = "a=1", X-Team = "crawl" }
conditional_requests = false

[[rule]]
surt = "com,example,www,)/archive/"
deny = ["*"]
allow = ["/archive/index.html$"]
recrawl_max = "1d"

[[rule]]
surt = "com,example,www,)/archive/old/"
headers = { Cookie = "old=1" }

[[rule]]
domain = "com"
max_per_host = 5

[[rule]]
addresses = "10.0.0.0/8"
allow_private = true
min_delay = 0
lowercase_path = true

[[rule]]
addresses = "10.1.0.0/16"
min_delay = "250ms"
"#;

fn rules() -> HostRules {
    HostRules::parse(FILE, Path::new("host-rules.toml")).unwrap()
}

fn parse(text: &str) -> Result<HostRules, RulesError> {
    HostRules::parse(text, Path::new("r.toml"))
}

fn addr(s: &str) -> Option<IpAddr> {
    Some(s.parse().unwrap())
}

#[test]
fn every_key_reads_its_value() {
    let rules = rules();
    assert_eq!(rules.rules().len(), 7);
    let domain = &rules.rules()[0];
    assert_eq!(domain.line, 3);
    assert_eq!(domain.matches, Match::Domain("example.com".into()));
    assert_eq!(
        domain.get(Key::MinDelay),
        Some(&Value::Duration(Duration::from_secs(2)))
    );
    assert_eq!(domain.get(Key::DelayFactor), Some(&Value::Number(1.5)));
    assert_eq!(domain.get(Key::MaxPerHost), Some(&Value::Count(200)));
    assert_eq!(domain.get(Key::Weight), Some(&Value::Number(2.0)));
    assert_eq!(
        domain.get(Key::DropParams),
        Some(&Value::Names(vec!["ref".into(), "from_*".into()]))
    );
    let host = &rules.rules()[1];
    assert_eq!(host.line, 11);
    assert_eq!(host.get(Key::MaxHostPages), Some(&Value::Count(0)));
    assert_eq!(
        host.get(Key::MaxHostBytes),
        Some(&Value::Size(1_000_000_000))
    );
    assert_eq!(
        host.get(Key::Headers),
        Some(&Value::Headers(vec![
            ("Cookie".into(), "a=1".into()),
            ("X-Team".into(), "crawl".into())
        ]))
    );
    assert_eq!(rules.rules()[2].path(), Some("/archive/"));
    assert_eq!(
        rules.rules()[5].matches,
        Match::Addresses("10.0.0.0/8".parse().unwrap())
    );
    assert!(rules.changes_canonical_form());
}

#[test]
fn the_most_specific_rule_wins_key_by_key() {
    let rules = rules();
    let www = rules.for_host("www.example.com", None);
    assert_eq!(www.min_delay(), Some(Duration::from_secs(10)));
    assert_eq!(www.source(Key::MinDelay).unwrap().line, 11);
    // Not set by the host rule: from the domain's, then from `com`'s.
    assert_eq!(www.delay_factor(), Some(1.5));
    assert_eq!(www.max_per_host(), Some(200));
    assert_eq!(www.source(Key::MaxPerHost).unwrap().line, 3);
    assert_eq!(www.max_host_pages(), Some(None), "0 lifts the limit");
    assert_eq!(www.max_host_bytes(), Some(Some(1_000_000_000)));
    assert_eq!(www.weight(), 2.0);
    let lines: Vec<usize> = www.host_rules().map(|r| r.line).collect();
    assert_eq!(lines, [11, 3, 30]);

    let blog = rules.for_host("blog.example.com", None);
    assert_eq!(blog.min_delay(), Some(Duration::from_secs(2)));
    assert_eq!(blog.max_host_pages(), None);
    let other = rules.for_host("other.com", None);
    assert_eq!(other.max_per_host(), Some(5));
    assert_eq!(other.min_delay(), None);
    assert_eq!(other.weight(), 1.0);
    // `example.com.au` is not under `example.com`, nor under `com`.
    let au = rules.for_host("example.com.au", None);
    assert!(au.is_empty());
    // Only whole labels match: `myexample.com` is not under `example.com`.
    assert_eq!(rules.for_host("myexample.com", None).min_delay(), None);
}

#[test]
fn names_win_over_addresses_and_small_networks_over_large() {
    let rules = rules();
    let intranet = rules.for_host("wiki.corp", addr("10.1.2.3"));
    assert_eq!(intranet.min_delay(), Some(Duration::from_millis(250)));
    assert_eq!(intranet.allow_private(), Some(true));
    assert!(intranet.canon().lowercase_path);
    let elsewhere = rules.for_host("files.corp", addr("10.200.0.1"));
    assert_eq!(elsewhere.min_delay(), Some(Duration::ZERO));
    // Without its address, a name gets no address rule.
    assert!(rules.for_host("wiki.corp", None).is_empty());
    // An IP literal is its own address.
    let literal = rules.for_host("10.1.0.9", None);
    assert_eq!(literal.address(), addr("10.1.0.9"));
    assert_eq!(literal.min_delay(), Some(Duration::from_millis(250)));
    // A name rule beats the address rule, whatever the network.
    let www = rules.for_host("www.example.com", addr("10.1.2.3"));
    assert_eq!(www.min_delay(), Some(Duration::from_secs(10)));
    assert_eq!(www.allow_private(), Some(true), "no name rule sets it");
    let ipv6 = parse("[[rule]]\naddresses = \"fd00::/8\"\nallow_private = true\n").unwrap();
    assert_eq!(ipv6.for_host("[fd12::1]", None).allow_private(), Some(true));
    assert_eq!(
        ipv6.for_host("h.test", addr("fd12::1")).allow_private(),
        Some(true)
    );
    assert_eq!(
        ipv6.for_host("h.test", addr("fe80::1")).allow_private(),
        None
    );
}

#[test]
fn path_rules_apply_url_by_url() {
    let rules = rules();
    let www = rules.for_host("www.example.com", None);
    let paths: Vec<usize> = www.path_rules().map(|r| r.line).collect();
    assert_eq!(paths, [26, 20], "the longer path first");
    let home = www.for_url("/");
    assert_eq!(home.scope("/"), None);
    assert_eq!(home.headers()[0], ("Cookie".to_string(), "a=1".to_string()));
    assert_eq!(home.conditional_requests(), Some(false));
    let day = Duration::from_secs(86_400);
    let year = 365 * day;
    assert_eq!(home.recrawl_bounds(day, year), (day, year));

    let archived = www.for_url("/archive/2020/a.html");
    assert_eq!(archived.scope("/archive/2020/a.html"), Some(false));
    assert_eq!(
        archived.recrawl_bounds(7 * day, year),
        (day, day),
        "crossed bounds"
    );
    assert_eq!(archived.headers().len(), 2, "from the host rule");
    let index = www.for_url("/archive/index.html");
    assert_eq!(
        index.scope("/archive/index.html"),
        Some(true),
        "the longer pattern"
    );
    assert_eq!(index.scope("/archive/index.html?x"), Some(false));
    let old = www.for_url("/archive/old/x");
    assert_eq!(old.headers(), [("Cookie".to_string(), "old=1".to_string())]);
    assert_eq!(old.source(Key::Headers).unwrap().line, 26);
    assert_eq!(old.source(Key::Deny).unwrap().line, 20);
    // Path rules of one host do not reach another.
    let blog = rules.for_host("blog.example.com", None);
    assert_eq!(blog.path_rules().count(), 0);
    assert_eq!(blog.for_url("/archive/x").scope("/archive/x"), None);
}

#[test]
fn allow_wins_a_tie_as_in_robots_txt() {
    let rules = parse("[[rule]]\nhost = \"h.test\"\nallow = [\"/a/\"]\ndeny = [\"/a/\", \"/b\"]\n")
        .unwrap();
    let view = rules.for_host("h.test", None);
    assert_eq!(view.for_url("/a/x").scope("/a/x"), Some(true));
    assert_eq!(view.for_url("/b/x").scope("/b/x"), Some(false));
    assert_eq!(view.for_url("/c").scope("/c"), None);
}

#[test]
fn canonical_form_rules_compose_from_several_rules() {
    let rules = rules();
    let www = rules.canon("www.example.com");
    assert_eq!(www.drop_params, ["ref", "from_*"]);
    assert!(www.sort_query && !www.lowercase_path);
    let url =
        crate::urlnorm::canonicalize("http://www.example.com/A?z=1&ref=x&from_mail=1&b=2").unwrap();
    assert_eq!(www.apply(url).as_str(), "http://www.example.com/A?b=2&z=1");
    assert!(rules.canon("other.com").is_identity());
    let none = parse("[[rule]]\nhost = \"h.test\"\nmin_delay = 1\n").unwrap();
    assert!(!none.changes_canonical_form());
    assert!(HostRules::default().canon("h.test").is_identity());
}

#[test]
fn surt_prefixes_match_as_their_host_and_domain_spellings() {
    let rules = parse(
        "[[rule]]\nsurt = \"com,example,\"\nmin_delay = 3\n\
         [[rule]]\nsurt = \"com,example,www,)\"\nmin_delay = 4\n",
    )
    .unwrap();
    assert_eq!(
        rules.for_host("a.example.com", None).min_delay(),
        Some(Duration::from_secs(3))
    );
    assert_eq!(
        rules.for_host("www.example.com", None).min_delay(),
        Some(Duration::from_secs(4))
    );
    assert_eq!(host_surt("www.example.com"), "com,example,www,)");
    assert_eq!(host_surt("localhost"), "localhost,)");
}

#[test]
fn bad_rules_are_refused_with_their_line_and_reason() {
    let cases: &[(&str, usize, &str)] = &[
        (
            "[[rule]]\nhost = \"a.test\"\nmin_delay = \"soon\"\n",
            3,
            "min_delay:",
        ),
        (
            "[[rule]]\nhost = \"a.test\"\nmin_dealy = 1\n",
            3,
            "`min_dealy` is not a key",
        ),
        ("[[rule]]\nmin_delay = 1\n", 1, "matches nothing"),
        (
            "version = 2\n[[rule]]\nhost = \"a.test\"\n",
            1,
            "written for a newer crawler",
        ),
        ("version = \"1\"\n", 1, "a whole number"),
        (
            "[[rule]]\nhost = \"a.test\"\ndomain = \"a.test\"\n",
            3,
            "already has `host a.test`",
        ),
        (
            "\n[[rule]]\nhost = \"http://a.test/\"\n",
            3,
            "without scheme",
        ),
        ("[[rule]]\ndomain = \"*.a.test\"\n", 2, "wildcard"),
        (
            "[[rule]]\nsurt = \"http://(com,a,)\"\n",
            2,
            "without scheme",
        ),
        (
            "[[rule]]\nsurt = \"com,a\"\n",
            2,
            "each label ends with a comma",
        ),
        ("[[rule]]\nsurt = \"com,A,)\"\n", 2, "canonical form"),
        ("[[rule]]\nsurt = \"com,a,)x\"\n", 2, "starts with `/`"),
        (
            "[[rule]]\naddresses = \"10.0.0.0/33\"\n",
            2,
            "neither an address",
        ),
        (
            "[[rule]]\nhost = \"a.test\"\ndelay_factor = -1\n",
            3,
            "0 or more",
        ),
        (
            "[[rule]]\nhost = \"a.test\"\nweight = 0\n",
            3,
            "more than 0",
        ),
        (
            "[[rule]]\nhost = \"a.test\"\nmax_per_host = 0\n",
            3,
            "at least 1",
        ),
        (
            "[[rule]]\nhost = \"a.test\"\nmax_host_pages = -3\n",
            3,
            "0 or more",
        ),
        (
            "[[rule]]\nhost = \"a.test\"\nmax_host_bytes = \"lots\"\n",
            3,
            "max_host_bytes:",
        ),
        (
            "[[rule]]\nhost = \"a.test\"\nsort_query = \"yes\"\n",
            3,
            "`true` or `false`",
        ),
        (
            "[[rule]]\nhost = \"a.test\"\ndeny = \"/x\"\n",
            3,
            "a list of strings",
        ),
        (
            "[[rule]]\nhost = \"a.test\"\ndeny = [\"x/\"]\n",
            3,
            "starts with `/`",
        ),
        (
            "[[rule]]\nhost = \"a.test\"\ndeny = [\"/a$b\"]\n",
            3,
            "may only end",
        ),
        (
            "[[rule]]\nhost = \"a.test\"\ndrop_params = [\"a b\"]\n",
            3,
            "query parameter",
        ),
        (
            "[[rule]]\nhost = \"a.test\"\nheaders = { Host = \"b.test\" }\n",
            3,
            "the crawler writes it itself",
        ),
        (
            "[[rule]]\nhost = \"a.test\"\nheaders = { Range = \"bytes=0-99\" }\n",
            3,
            "may not be set by a rule",
        ),
        (
            "[[rule]]\nhost = \"a.test\"\nheaders = { \"Bad Name\" = \"x\" }\n",
            3,
            "not a header name",
        ),
        (
            "[[rule]]\nhost = \"a.test\"\nheaders = { X = \"a\\nb\" }\n",
            3,
            "one line",
        ),
        (
            "[[rule]]\nhost = \"a.test\"\nrecrawl_min = \"2d\"\nrecrawl_max = \"1d\"\n",
            1,
            "longer than recrawl_max",
        ),
        (
            "[[rule]]\nsurt = \"com,a,)/x/\"\nmin_delay = 1\n",
            1,
            "applies to a whole host",
        ),
        (
            "[[rule]]\nhost = \"a.test\"\n\n[[rule]]\nsurt = \"test,a,)\"\n",
            4,
            "matches what the rule of line 1",
        ),
        (
            "[[rule]]\naddresses = \"10.0.0.0/8\"\n[[rule]]\naddresses = \"10.9.9.9/8\"\n",
            3,
            "put their keys in one rule",
        ),
        ("[rule]\nhost = \"a.test\"\n", 1, "`[[rule]]` header"),
        ("[other]\nx = 1\n", 1, "rules only"),
        ("[[rule]]\nhost = \"a.test\"\nmin_delay = \n", 3, ""),
    ];
    for &(text, line, fragment) in cases {
        match parse(text) {
            Ok(_) => panic!("accepted:\n{text}"),
            Err(RulesError::Bad {
                line: got, message, ..
            }) => {
                assert_eq!(got, line, "{text:?}: {message}");
                assert!(message.contains(fragment), "{text:?}: {message}");
            }
            Err(e) => panic!("{text:?}: {e}"),
        }
    }
    let e = parse("[[rule]]\nhost = \"a.test\"\nmin_delay = \"soon\"\n").unwrap_err();
    assert!(e.to_string().starts_with("r.toml:3: min_delay: "), "{e}");
}

#[test]
fn path_patterns_match_as_robots_txt_rules() {
    let cases: &[(&str, &str, bool)] = &[
        ("/", "/anything", true),
        ("*", "/anything", true),
        ("/a", "/abc", true),
        ("/a", "/b/a", false),
        ("/a$", "/a", true),
        ("/a$", "/ab", false),
        ("/*.pdf", "/x/y.pdf?z", true),
        ("/*.pdf$", "/x/y.pdf?z", false),
        ("/*.pdf$", "/x/y.pdf", true),
        ("/a*b*c", "/aXbYc", true),
        ("/a*b*c", "/aXcYb", false),
        ("/a*b$", "/ab", true),
        ("/a*ab$", "/ab", false),
        ("/*?print=1", "/page?print=1", true),
        ("/*/*/", "/a/", false),
        ("/*/*/", "/a/b/", true),
    ];
    for &(pattern, path, want) in cases {
        let p = PathPattern::parse(pattern).unwrap();
        assert_eq!(p.matches(path), want, "{pattern} on {path}");
    }
}

#[test]
fn every_key_is_applied_so_no_rule_is_warned_about() {
    let text = "[[rule]]\nhost = \"a.test\"\nmin_delay = \"1s\"\n\n\
                [[rule]]\ndomain = \"b.test\"\nmax_per_host = 2\ndeny = [\"/x\"]\nweight = 2.0\n\
                recrawl_max = \"9d\"\n";
    let warnings = parse(text).unwrap().unapplied();
    assert!(warnings.is_empty(), "{warnings:?}");
    assert!(Key::ALL.iter().all(|k| k.applied()));
}

#[test]
fn a_url_scope_comes_from_the_patterns_of_its_host_and_path_rules() {
    let text = "[[rule]]\ndomain = \"example.com\"\ndeny = [\"/private/\"]\n\n\
                [[rule]]\nsurt = \"com,example,www,)/archive/\"\ndeny = [\"*\"]\n\n\
                [[rule]]\nhost = \"other.test\"\nmin_delay = \"1s\"\n";
    let rules = parse(text).unwrap();
    let scope = |u: &str| rules.scope(&url::Url::parse(u).unwrap());
    assert_eq!(scope("http://www.example.com/private/a?b=1"), Some(false));
    assert_eq!(scope("http://www.example.com/archive/2020/"), Some(false));
    assert_eq!(scope("http://blog.example.com/archive/2020/"), None);
    assert_eq!(scope("http://www.example.com/"), None);
    assert_eq!(scope("http://other.test/private/"), None);
    assert_eq!(scope("http://[::1]:8080/private/"), None);
    // Without a pattern in the file, nothing is looked up.
    let plain = parse("[[rule]]\nhost = \"other.test\"\nmin_delay = \"1s\"\n").unwrap();
    assert_eq!(
        plain.scope(&url::Url::parse("http://other.test/x").unwrap()),
        None
    );
}

#[test]
fn a_file_may_say_its_version() {
    let text = "version = 1\n\n[[rule]]\nhost = \"a.test\"\nmax_per_host = 5\n";
    let rules = parse(text).unwrap();
    assert_eq!(rules.for_host("a.test", None).max_per_host(), Some(5));
    assert_eq!(rules.rules()[0].line, 3);
}

#[test]
fn a_missing_file_is_no_rule_and_an_unreadable_one_an_error() {
    let dir = crate::testutil::TempDir::new("rules-load");
    let none = HostRules::load(dir.path()).unwrap();
    assert!(none.is_empty());
    assert_eq!(none.path(), dir.join(RULES_FILE));
    assert!(none.for_host("a.test", None).is_empty());
    std::fs::create_dir(dir.join(RULES_FILE)).unwrap();
    let e = HostRules::load(dir.path()).unwrap_err();
    assert!(e.to_string().contains(RULES_FILE), "{e}");
    std::fs::remove_dir(dir.join(RULES_FILE)).unwrap();
    std::fs::write(dir.join(RULES_FILE), FILE).unwrap();
    assert_eq!(HostRules::load(dir.path()).unwrap().rules().len(), 7);
}

#[test]
fn the_explanation_says_where_each_value_comes_from() {
    let rules = rules();
    let www = rules.for_host("www.example.com", None);
    let crawl_wide = |key: Key| match key {
        Key::DelayFactor | Key::MinDelay => Some(("5s".into(), "crawl.toml [fetcher]".into())),
        Key::MaxPerHost => Some(("1000".into(), "default".into())),
        _ => None,
    };
    let e = www.explain(crawl_wide);
    let rules_listed: Vec<usize> = e.rules.iter().map(|r| r.0).collect();
    assert_eq!(rules_listed, [26, 20, 11, 3, 30]);
    let find = |key: &str, under: Option<&str>| {
        e.values
            .iter()
            .find(|v| v.key == key && v.under.as_deref() == under)
            .unwrap_or_else(|| panic!("{key} {under:?}"))
            .clone()
    };
    assert_eq!(find("min_delay", None).value, "10s");
    assert_eq!(
        find("min_delay", None).source,
        Source::Rule {
            line: 11,
            matches: "host www.example.com".into()
        }
    );
    assert_eq!(find("max_per_host", None).value, "200");
    assert_eq!(find("lowercase_path", None).source, Source::Unset);
    assert_eq!(find("deny", Some("/archive/")).value, "[\"*\"]");
    let text = e.to_string();
    assert!(text.contains("line 11    host www.example.com"), "{text}");
    assert!(text.contains("deny under /archive/"), "{text}");
    assert!(text.contains("address not known yet"), "{text}");
    let other = rules.for_host("a.org", None).explain(crawl_wide);
    assert!(
        other
            .to_string()
            .contains("no rule of host-rules.toml applies")
    );
    assert_eq!(
        other
            .values
            .iter()
            .find(|v| v.key == "min_delay")
            .unwrap()
            .source,
        Source::CrawlWide("crawl.toml [fetcher]".into())
    );
}

#[test]
fn the_url_keys_come_from_the_path_rule_then_the_host_rules() {
    let rules = rules();
    assert!(rules.sets(Key::Headers) && rules.sets(Key::RecrawlMax));
    assert!(!rules.sets(Key::RecrawlMin));
    let www = "www.example.com";
    assert_eq!(rules.conditional_requests(www, "/a"), Some(false));
    assert_eq!(rules.conditional_requests("example.com", "/a"), None);
    assert_eq!(
        rules.headers(www, "/archive/x"),
        [
            ("Cookie".to_string(), "a=1".to_string()),
            ("X-Team".to_string(), "crawl".to_string())
        ]
    );
    assert!(rules.headers("blog.example.com", "/").is_empty());
    let (min, max) = (Duration::from_secs(60), Duration::from_secs(400_000));
    let day = Duration::from_secs(86_400);
    assert_eq!(
        rules.recrawl_bounds(www, "/archive/x", min, max),
        (min, day)
    );
    assert_eq!(rules.recrawl_bounds(www, "/other", min, max), (min, max));
    // Without a rule on them, no lookup: the crawl's values.
    let none = HostRules::default();
    assert_eq!(none.conditional_requests(www, "/a"), None);
    assert_eq!(none.recrawl_bounds(www, "/a", min, max), (min, max));
    let url = url::Url::parse("http://www.example.com/A?z=1&ref=x&b=2").unwrap();
    assert_eq!(
        rules.host_form(url.clone()).as_str(),
        "http://www.example.com/A?b=2&z=1"
    );
    assert_eq!(none.host_form(url.clone()), url);
}
