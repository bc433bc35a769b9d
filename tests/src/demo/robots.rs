//! A small, plain RFC 9309 evaluator for the demo's own robots.txt files,
//! used to compute what a correct crawler may fetch. It is written for
//! clarity, not speed, and only needs to be right for the rules the demo
//! serves (which its tests cover).
//!
//! - Groups start with one or more `User-agent` lines; a `User-agent` line
//!   after a rule starts a new group.
//! - The groups whose agent equals the crawler's product token
//!   (case-insensitive) apply, merged; if none, the `*` groups; if none,
//!   everything is allowed.
//! - The longest matching pattern (in bytes) wins; `Allow` wins a tie; no
//!   match means allowed. `*` matches any run of characters, a final `$`
//!   anchors the end. `/robots.txt` is always allowed.
//! - `Crawl-delay` (seconds, fractions allowed) of the applying groups.

/// The parsed rules of one robots.txt for one product token.
#[derive(Debug, Clone, Default)]
pub(crate) struct Rules {
    /// `(allow, pattern)`.
    rules: Vec<(bool, String)>,
    crawl_delay: Option<f64>,
}

#[derive(Debug, Default)]
struct Group {
    agents: Vec<String>,
    rules: Vec<(bool, String)>,
    crawl_delay: Option<f64>,
}

impl Rules {
    /// The rules of `text` that apply to `product_token`.
    pub(crate) fn parse(text: &str, product_token: &str) -> Rules {
        let mut groups: Vec<Group> = Vec::new();
        let mut in_agents = false;
        for raw in text.lines() {
            let line = raw.split('#').next().unwrap_or("").trim();
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let key = key.trim().to_ascii_lowercase();
            let value = value.trim();
            match key.as_str() {
                "user-agent" => {
                    if !in_agents {
                        groups.push(Group::default());
                        in_agents = true;
                    }
                    if let Some(g) = groups.last_mut() {
                        g.agents.push(value.to_ascii_lowercase());
                    }
                }
                "allow" | "disallow" => {
                    in_agents = false;
                    if let Some(g) = groups.last_mut()
                        && !value.is_empty()
                    {
                        g.rules.push((key == "allow", value.to_string()));
                    }
                }
                "crawl-delay" => {
                    in_agents = false;
                    if let (Some(g), Ok(d)) = (groups.last_mut(), value.parse::<f64>()) {
                        g.crawl_delay = Some(d);
                    }
                }
                _ => {}
            }
        }
        let token = product_token.to_ascii_lowercase();
        let pick = |name: &str| -> Vec<&Group> {
            groups
                .iter()
                .filter(|g| g.agents.iter().any(|a| a == name))
                .collect()
        };
        let mut chosen = pick(&token);
        if chosen.is_empty() {
            chosen = pick("*");
        }
        Rules {
            rules: chosen.iter().flat_map(|g| g.rules.clone()).collect(),
            crawl_delay: chosen.iter().find_map(|g| g.crawl_delay),
        }
    }

    /// Whether `target` (path and query) may be fetched.
    pub(crate) fn allows(&self, target: &str) -> bool {
        if target == "/robots.txt" {
            return true;
        }
        let mut best: Option<(usize, bool)> = None;
        for (allow, pattern) in &self.rules {
            if !matches(pattern, target) {
                continue;
            }
            let len = pattern.len();
            best = match best {
                Some((l, a)) if l > len || (l == len && a) => Some((l, a)),
                _ => Some((len, *allow)),
            };
        }
        best.is_none_or(|(_, allow)| allow)
    }

    /// The `Crawl-delay` of the applying groups, in seconds.
    pub(crate) fn crawl_delay(&self) -> Option<f64> {
        self.crawl_delay
    }
}

/// Whether `pattern` matches a prefix of `target` (the whole of it with `$`).
fn matches(pattern: &str, target: &str) -> bool {
    let (pattern, anchored) = match pattern.strip_suffix('$') {
        Some(p) => (p, true),
        None => (pattern, false),
    };
    fn go(p: &[u8], t: &[u8], anchored: bool) -> bool {
        match p.split_first() {
            None => !anchored || t.is_empty(),
            Some((b'*', rest)) => (0..=t.len()).any(|i| go(rest, &t[i..], anchored)),
            Some((&c, rest)) => t.first() == Some(&c) && go(rest, &t[1..], anchored),
        }
    }
    go(pattern.as_bytes(), target.as_bytes(), anchored)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_match_wins_and_allow_wins_ties() {
        let r = Rules::parse(
            "User-agent: *\nDisallow: /a/\nAllow: /a/b/\nDisallow: /a/b/c\nAllow: /x\nDisallow: /x\n",
            "bot",
        );
        assert!(!r.allows("/a/"));
        assert!(r.allows("/a/b/"));
        assert!(!r.allows("/a/b/cd"));
        assert!(r.allows("/x"), "Allow wins a tie");
        assert!(r.allows("/elsewhere"));
    }

    #[test]
    fn wildcards_and_end_anchors() {
        let r = Rules::parse(
            "User-agent: *\nDisallow: /*.bak$\nDisallow: /*?sort=\nDisallow: /archive/\nAllow: /archive/*/index.html$\n",
            "bot",
        );
        let table = [
            ("/files/notes.bak", false),
            ("/files/notes.bak.html", true),
            ("/list?sort=asc", false),
            ("/list?page=2", true),
            ("/archive/", false),
            ("/archive/2019/index.html", true),
            ("/archive/2019/notes.html", false),
            ("/archive/2019/index.html?print=1", false),
            ("/robots.txt", true),
        ];
        for (target, allowed) in table {
            assert_eq!(r.allows(target), allowed, "{target}");
        }
    }

    #[test]
    fn the_group_for_our_token_replaces_the_star_group() {
        let text = "User-agent: otherbot\nDisallow:\n\nUser-agent: *\nDisallow: /\n\n\
                    User-agent: somebot\nUser-agent: DemoBot\nAllow: /\nDisallow: /not-for-demobot/\nCrawl-delay: 2.5\n";
        let ours = Rules::parse(text, "demobot");
        assert!(ours.allows("/page.html"));
        assert!(!ours.allows("/not-for-demobot/x.html"));
        assert_eq!(ours.crawl_delay(), Some(2.5));
        let stranger = Rules::parse(text, "anybot");
        assert!(!stranger.allows("/page.html"));
        assert!(stranger.allows("/robots.txt"));
        assert_eq!(stranger.crawl_delay(), None);
        let other = Rules::parse(text, "otherbot");
        assert!(other.allows("/page.html"), "an empty Disallow allows all");
    }

    #[test]
    fn no_applicable_group_allows_everything() {
        let r = Rules::parse("User-agent: onlythem\nDisallow: /\n", "demobot");
        assert!(r.allows("/anything"));
        assert!(Rules::parse("", "demobot").allows("/"));
    }
}
