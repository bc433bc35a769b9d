use std::collections::{HashMap, HashSet};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use super::serve::{ScaleServer, ServeOptions};
use super::*;

fn small() -> ScaleWeb {
    ScaleWeb::new(ScaleParams {
        hosts: 200,
        pages: 30,
        ..ScaleParams::default()
    })
}

fn get(server: &ScaleServer, host: u32, target: &str) -> String {
    let mut c = TcpStream::connect((server.addrs()[host as usize], server.port())).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        c,
        "GET {target} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        server.web().host_name(host)
    )
    .unwrap();
    let mut answer = String::new();
    c.read_to_string(&mut answer).unwrap();
    answer
}

#[test]
fn every_node_has_one_number_and_one_target_and_odd_spellings_are_not_pages() {
    let web = small();
    for i in 0..web.node_count() {
        let node = web.node(i);
        assert_eq!(web.index(node), Some(i), "{node:?}");
        if node
            == (Node::Redirect {
                host: node.host(),
                page: 0,
            })
        {
            // (A number no URL has: page 0 is `/`, never redirected to.)
            continue;
        }
        let target = web.target(node);
        assert_eq!(web.node_of_target(node.host(), &target), Some(node));
        let url = web.url(node, 8080);
        assert_eq!(web.node_of_url(&url), Some(node), "{url}");
    }
    for odd in [
        "/p/07.html",
        "/p/0.html",
        "/p/30.html",
        "/r/0",
        "/gone/8.html",
        "/x",
        "",
    ] {
        assert_eq!(web.node_of_target(3, odd), None, "{odd}");
    }
    assert_eq!(web.host_of_name("h00200.scale.test"), None);
    assert_eq!(web.host_of_name("h0042.scale.test"), None);
    assert_eq!(web.host_of_name("h00042.scale.test"), Some(42));
    assert_eq!(web.node_of_url("http://www1.outside.test/"), None);
}

#[test]
fn links_are_computed_from_the_url_alone_and_skewed_towards_hubs() {
    let web = small();
    assert_eq!(web.links(7, 3), web.links(7, 3));
    assert_ne!(web.links(7, 3), web.links(7, 4));
    let p = web.params();
    let mut in_links: HashMap<Node, u64> = HashMap::new();
    let mut first_hub = 0;
    let mut homes = vec![0u32; p.hosts as usize];
    for h in 0..p.hosts {
        for page in 0..p.pages {
            let links = web.links(h, page);
            for child in [2 * page + 1, 2 * page + 2] {
                if child < p.pages {
                    assert!(links.contains(&Node::Page {
                        host: h,
                        page: child
                    }));
                }
            }
            if links.contains(&Node::Page { host: 0, page: 0 }) {
                first_hub += 1;
            }
            for to in links.into_iter().collect::<HashSet<_>>() {
                *in_links.entry(to).or_default() += 1;
                if let Node::Page { host, page: 0 } = to {
                    homes[host as usize] += 1;
                }
            }
        }
    }
    // Most pages link the first hub; every home page is linked from
    // other pages (the one-to-one map gives each `pages` links at least,
    // counting a page that links it twice once).
    let pages = web.total_pages();
    assert!(first_hub * 2 > pages, "{first_hub} of {pages}");
    assert!(homes.iter().all(|&n| n >= 1), "a home page nobody links");
    // A long tail: the 1 % most linked URLs hold a fifth of the links or
    // more, while the median page has less than half the mean in-links.
    let mut degrees: Vec<u64> = in_links.values().copied().collect();
    degrees.sort_unstable_by(|a, b| b.cmp(a));
    let total: u64 = degrees.iter().sum();
    let top: u64 = degrees[..degrees.len() / 100].iter().sum();
    assert!(top * 5 > total, "top 1 %: {top} of {total}");
    let pages_in: Vec<u64> = (0..pages)
        .map(|i| in_links.get(&web.node(i)).copied().unwrap_or(0))
        .collect();
    let mut sorted = pages_in.clone();
    sorted.sort_unstable();
    let (median, sum) = (sorted[sorted.len() / 2], pages_in.iter().sum::<u64>());
    assert!(
        median * 2 * pages < sum,
        "median {median}, mean {}",
        sum / pages
    );
}

#[test]
fn a_correct_crawl_reaches_every_page_robots_allows_and_nothing_else() {
    let web = small();
    let e = web.expected();
    let counts = e.counts();
    for seed in web.seeds() {
        assert_eq!(e.hops(seed), Some(0));
    }
    let p = web.params();
    let mut kinds = HashSet::new();
    for h in 0..p.hosts {
        let kind = web.robots_kind(h);
        kinds.insert(kind);
        for page in 0..p.pages {
            let reached = e.hops(Node::Page { host: h, page }).is_some();
            assert_eq!(reached, kind != RobotsKind::ShutOut, "host {h} page {page}");
        }
        for k in 0..PRIVATE_PER_HOST {
            assert_eq!(e.hops(Node::Private { host: h, k }), None);
        }
    }
    assert_eq!(kinds.len(), 4, "every robots.txt kind: {kinds:?}");
    let shut = (0..p.hosts)
        .filter(|&h| web.robots_kind(h) == RobotsKind::ShutOut)
        .count() as u64;
    assert_eq!(counts.pages, (p.hosts as u64 - shut) * p.pages as u64);
    assert!(counts.redirects > 0 && counts.gone > 0);
    assert_eq!(
        counts.urls,
        counts.pages + counts.redirects + counts.gone,
        "{counts:?}"
    );
    assert!(counts.max_hops >= 3, "a crawl of rounds: {counts:?}");
    // A redirect's target is one hop further than the redirect at most.
    for (node, hops) in e.fetched() {
        if let Node::Redirect { host, page } = node {
            assert!(e.hops(Node::Page { host, page }).unwrap() <= hops + 1);
        }
    }
}

#[test]
fn a_page_holds_its_links_and_is_a_few_kilobytes() {
    let web = small();
    let html = web.render(5, 2, 8080);
    for to in web.links(5, 2) {
        let href = if to.host() == 5 && !matches!(to, Node::Outside { .. }) {
            web.target(to)
        } else {
            web.url(to, 8080)
        };
        assert!(html.contains(&format!("href=\"{href}\"")), "{href}");
    }
    assert!((4000..4400).contains(&html.len()), "{}", html.len());
    let redirect = web.answer(5, "/r/4", 8080);
    assert_eq!(redirect.status, 301);
    assert_eq!(
        redirect.location.as_deref(),
        Some("http://h00005.scale.test:8080/p/4.html")
    );
    assert_eq!(web.answer(5, "/gone/1.html", 8080).status, 404);
    let shut = (0..200)
        .find(|&h| web.robots_kind(h) == RobotsKind::ShutOut)
        .unwrap();
    let robots = web.robots_txt(shut).unwrap();
    assert!(
        robots.contains("User-agent: scalebot\nDisallow: /\n"),
        "{robots}"
    );
}

#[test]
fn pagerank_sums_to_one_and_favours_the_hubs() {
    let mut g = Graph::default();
    g.push_node([1, 1]);
    g.push_node([0]);
    assert_eq!(g.links(0), &[1]);
    let r = pagerank(&g, 0.85);
    assert!(
        (r[0] - 0.5).abs() < 1e-9 && (r[1] - 0.5).abs() < 1e-9,
        "{r:?}"
    );
    // A dangling node spreads its rank: 0 → 1, 1 nowhere.
    let mut g = Graph::default();
    g.push_node([1]);
    g.push_node([]);
    let r = pagerank(&g, 0.85);
    assert!((r.iter().sum::<f64>() - 1.0).abs() < 1e-9);
    assert!(r[1] > r[0]);

    let web = small();
    let (nodes, graph) = web.expected().graph();
    assert_eq!(nodes.len(), graph.len());
    let rank = pagerank(&graph, 0.85);
    assert!((rank.iter().sum::<f64>() - 1.0).abs() < 1e-6);
    let best = (0..rank.len())
        .max_by(|&a, &b| rank[a].total_cmp(&rank[b]))
        .unwrap();
    assert_eq!(nodes[best], Node::Page { host: 0, page: 0 });
}

#[test]
fn the_server_counts_what_a_polite_crawl_never_does() {
    let web = ScaleWeb::new(ScaleParams {
        hosts: 60,
        pages: 10,
        slow_ms: 300,
        ..ScaleParams::default()
    });
    let options = ServeOptions {
        min_delay: Duration::from_secs(5),
        ..ServeOptions::default()
    };
    let server = ScaleServer::start(web.clone(), options).unwrap();
    assert!(
        server
            .hosts_file()
            .lines()
            .any(|l| l.ends_with(" h00059.scale.test"))
    );
    assert_eq!(server.seeds_file().lines().count(), 3);
    let answer = get(&server, 1, "/p/3.html");
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    assert!(answer.contains(&web.render(1, 3, server.port())));
    get(&server, 1, "/p/3.html");
    get(&server, 2, "/robots.txt");
    get(&server, 2, "/robots.txt");
    get(&server, 2, "/nothing.html");
    let shut = (0..60)
        .find(|&h| web.robots_kind(h) == RobotsKind::ShutOut)
        .expect("a shut-out host among 60");
    get(&server, shut, "/");
    // Two requests at once to the slow host.
    let slow = web.slow_hosts()[0];
    let both = std::thread::scope(|s| {
        let a = s.spawn(|| get(&server, slow, "/p/1.html"));
        std::thread::sleep(Duration::from_millis(50));
        let b = get(&server, slow, "/p/2.html");
        (a.join().unwrap(), b)
    });
    assert!(both.0.starts_with("HTTP/1.1 200") && both.1.starts_with("HTTP/1.1 200"));
    let t = server.tally();
    assert_eq!(t.requests, 8);
    assert_eq!((t.urls_asked_twice, t.repeated_requests), (1, 1));
    assert_eq!(
        t.twice_examples,
        vec!["h00001.scale.test/p/3.html".to_string()]
    );
    assert_eq!((t.robots, t.robots_asked_twice), (2, 1));
    assert_eq!((t.unknown, t.disallowed, t.overlaps), (1, 1, 1));
    // Host 1's second request and host 2's second and third came sooner
    // than 5 s after the one before.
    assert_eq!(t.too_close, 3);
    assert_eq!((t.ok, t.not_found), (5, 3));
    assert_eq!(t.hosts, 4);
    let json = t.to_json();
    assert_eq!(json["urls_asked_twice"], 1);
    // Counting starts afresh.
    get(&server, 1, "/p/3.html");
    let t = server.tally();
    assert_eq!((t.requests, t.urls_asked_twice), (1, 0));
}
