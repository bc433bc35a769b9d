//! The rounds web: its shape, its floor, and what it answers.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use super::*;

fn web(small_hosts: usize, tail: bool) -> RoundsWeb {
    RoundsWeb::generate(RoundsParams {
        small_hosts,
        tail,
        ..RoundsParams::default()
    })
}

/// Pages reached from every host's home page by following links, with
/// their depth, on the hosts where pages may be fetched.
fn walk(web: &RoundsWeb) -> BTreeMap<(usize, String), u32> {
    let mut seen = BTreeMap::new();
    let mut queue: VecDeque<(usize, String, u32)> = (0..web.hosts().len())
        .map(|h| (h, "/".to_string(), 0))
        .collect();
    while let Some((h, t, d)) = queue.pop_front() {
        if web.hosts()[h].pages == 0 || seen.contains_key(&(h, t.clone())) {
            continue;
        }
        let links = web.links_of(h, &t).expect("every link leads to a page");
        seen.insert((h, t), d);
        for (to, target) in links {
            queue.push_back((to, target, d + 1));
        }
    }
    seen
}

#[test]
fn the_same_seed_gives_the_same_web() {
    let shape = |w: &RoundsWeb| -> Vec<(String, usize, u32)> {
        w.hosts()
            .iter()
            .map(|h| (h.name.clone(), h.pages, h.depth))
            .collect()
    };
    let a = web(50, true);
    let b = web(50, true);
    assert_eq!(shape(&a), shape(&b));
    for h in 0..a.hosts().len() {
        assert_eq!(a.pages_of(h), b.pages_of(h));
        for (t, _) in a.pages_of(h) {
            assert_eq!(a.links_of(h, &t), b.links_of(h, &t));
        }
    }
    let c = RoundsWeb::generate(RoundsParams {
        seed: 2,
        small_hosts: 50,
        ..RoundsParams::default()
    });
    assert_ne!(
        shape(&a)[1..50],
        shape(&c)[1..50],
        "another seed, another web"
    );
}

#[test]
fn the_large_host_spreads_over_every_depth_and_small_hosts_vary() {
    let w = web(200, false);
    assert_eq!(w.hosts().len(), 201);
    let big = w.largest();
    assert_eq!(
        (big.name.as_str(), big.pages, big.depth),
        ("big.rounds.test", 60, 6)
    );
    let mut per_depth = [0usize; 7];
    for (_, d) in w.pages_of(0) {
        per_depth[d as usize] += 1;
    }
    assert_eq!(per_depth[0], 1);
    for (d, n) in per_depth.iter().enumerate().skip(1) {
        assert!((9..=10).contains(n), "{n} pages at depth {d}");
    }
    let small: Vec<&RoundsHost> = w.hosts()[1..].iter().collect();
    assert!(small.iter().all(|h| h.role == RoundsRole::Small));
    assert!(small.iter().all(|h| (3..=10).contains(&h.pages)));
    assert!(small.iter().all(|h| (1..=6).contains(&h.depth)));
    let sizes: HashSet<usize> = small.iter().map(|h| h.pages).collect();
    let depths: HashSet<u32> = small.iter().map(|h| h.depth).collect();
    assert_eq!(sizes.len(), 8, "every size from 3 to 10: {sizes:?}");
    assert!(depths.len() >= 5, "{depths:?}");
    assert!(small.iter().all(|h| h.pages < big.pages / 5));
}

#[test]
fn the_floor_is_the_large_hosts_requests_times_the_delay() {
    let w = web(200, false);
    assert_eq!(w.largest().requests(), 61);
    assert_eq!(w.floor(1.0), 61.0);
    assert_eq!(w.floor(0.5), 30.5);
    // A slow host with a long enough Crawl-delay sets the floor instead.
    let slow = RoundsWeb::generate(RoundsParams {
        small_hosts: 3,
        tail: true,
        crawl_delay: 10.0,
        ..RoundsParams::default()
    });
    assert_eq!(slow.floor(1.0), 11.0 * 10.0);
    // A large host made smaller than a small one is not the largest.
    let tiny = RoundsWeb::generate(RoundsParams {
        large_pages: 2,
        small_hosts: 3,
        ..RoundsParams::default()
    });
    let most = tiny.hosts().iter().map(RoundsHost::requests).max().unwrap();
    assert!(most > 3);
    assert_eq!(tiny.largest().requests(), most);
    assert_eq!(tiny.floor(1.0), most as f64);
}

#[test]
fn every_page_is_reached_from_the_seeds_at_its_depth() {
    for tail in [false, true] {
        let w = web(40, tail);
        let reached = walk(&w);
        assert_eq!(reached.len(), w.total_pages());
        for (h, host) in w.hosts().iter().enumerate() {
            for (t, d) in w.pages_of(h) {
                assert_eq!(reached.get(&(h, t.clone())), Some(&d), "{}{t}", host.name);
            }
        }
        assert!(reached.values().all(|&d| d <= MAX_DEPTH));
    }
}

#[test]
fn the_tail_is_met_in_every_round() {
    let w = web(10, true);
    let roles: Vec<RoundsRole> = w.hosts()[11..].iter().map(|h| h.role).collect();
    assert_eq!(
        roles,
        [
            RoundsRole::BlackHole,
            RoundsRole::RobotsError,
            RoundsRole::Refuses,
            RoundsRole::CrawlDelay
        ]
    );
    assert_eq!(w.hosts()[11..14].iter().map(|h| h.pages).sum::<usize>(), 0);
    let slow = &w.hosts()[14];
    assert_eq!(
        (slow.pages, slow.depth, slow.crawl_delay),
        (10, 6, Some(3.0))
    );
    // A page of the large host at each depth links each dead host.
    for d in 1..=6u32 {
        let links: Vec<(usize, String)> = w
            .pages_of(0)
            .into_iter()
            .filter(|(_, depth)| *depth == d)
            .flat_map(|(t, _)| w.links_of(0, &t).unwrap())
            .filter(|(h, _)| (11..14).contains(h))
            .collect();
        assert_eq!(links.len(), 3, "depth {d}: {links:?}");
    }
}

fn get(addr: SocketAddr, target: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

#[test]
fn served_it_answers_as_described() {
    let w = web(3, true);
    let served = w
        .serve(RoundsServeOptions {
            first_address: Ipv4Addr::new(127, 4, 3, 1),
            request_log: true,
            ..RoundsServeOptions::default()
        })
        .unwrap();
    let port = served.port();
    let at = |h: usize| SocketAddr::from((served.addrs()[h], port));
    let seeds = served.seeds_file();
    assert_eq!(seeds.lines().count(), 8);
    assert!(seeds.starts_with(&format!("http://big.rounds.test:{port}/\n")));
    assert!(
        served
            .hosts_file()
            .starts_with("127.4.3.1 big.rounds.test\n127.4.3.2 s1.rounds.test\n")
    );

    let home = get(at(0), "/");
    assert!(home.starts_with("HTTP/1.1 200 OK"), "{home}");
    assert!(home.contains("href=\"/d1/p1.html\""), "{home}");
    let first = get(at(0), "/d1/p1.html");
    assert!(first.contains(&format!("href=\"http://hole.rounds.test:{port}/d1.html\"")));
    assert!(get(at(0), "/robots.txt").starts_with("HTTP/1.1 404"));
    assert!(get(at(0), "/nowhere.html").starts_with("HTTP/1.1 404"));
    assert!(get(at(5), "/robots.txt").starts_with("HTTP/1.1 500"));
    let slow = get(at(7), "/robots.txt");
    assert!(
        slow.starts_with("HTTP/1.1 200") && slow.ends_with("Crawl-delay: 3\n"),
        "{slow}"
    );
    let refused = TcpStream::connect(at(6)).unwrap_err();
    assert_eq!(refused.kind(), std::io::ErrorKind::ConnectionRefused);

    // The black hole reads the request and never answers, until dropped.
    let mut hole = TcpStream::connect(at(4)).unwrap();
    hole.write_all(b"GET /robots.txt HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    hole.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut byte = [0u8; 1];
    assert!(hole.read(&mut byte).is_err(), "the black hole answered");

    let d = served.description();
    assert_eq!(d["hosts"], 8);
    assert_eq!(d["total_pages"], w.total_pages());
    assert_eq!(d["largest_host_requests"], 61);
    assert_eq!(d["per_host"][7]["crawl_delay"], 3.0);
    assert_eq!(d["per_host"][4]["role"], "black-hole");
    assert_eq!(d["per_host"][6]["address"], "127.4.3.7");

    let dropping = Instant::now();
    drop(served);
    assert!(dropping.elapsed() < Duration::from_secs(2), "drop hung");
    hole.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    assert_eq!(hole.read(&mut byte).unwrap_or(0), 0, "still held");
}
