//! Rounds of `segmenter run` over fetched runs written with common's WARC
//! writer: dedup, hops, caps and backlog, segment size, partitions,
//! leftover and retry lists, filters.

use crate::support;

use std::collections::{BTreeMap, BTreeSet};

use common::segment::Via;
use support::*;

fn all_urls(crawl: &TempCrawl) -> Vec<String> {
    segments(crawl)
        .values()
        .flat_map(|recs| urls(recs))
        .collect()
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| s.to_string()).collect()
}

#[test]
fn dedup_across_three_rounds() {
    let crawl = TempCrawl::new("dedup");
    inject(&crawl, "http://a.test/\nhttp://b.test/\n", &[]);
    assert_eq!(
        urls(&segments(&crawl)["00001"]),
        ["http://a.test/", "http://b.test/"]
    );

    // Round 1: links to new pages, to each other, and back to the seeds.
    write_done(
        &crawl,
        "00001",
        &[
            Page::html(
                "http://a.test/",
                0,
                &["/1", "/2", "/3", "http://b.test/x", "http://b.test/"],
            ),
            Page::html(
                "http://b.test/",
                0,
                &["/x", "/y", "http://a.test/1", "http://a.test/"],
            ),
        ],
    );
    let report = run_round(&crawl, &[]);
    let seg = &segments(&crawl)["00002"];
    assert_eq!(
        urls(seg).into_iter().collect::<BTreeSet<_>>(),
        set(&[
            "http://a.test/1",
            "http://a.test/2",
            "http://a.test/3",
            "http://b.test/x",
            "http://b.test/y"
        ])
    );
    // Copies found twice this round carry two in-links and come first.
    assert_eq!(seg[0].url, "http://a.test/1");
    assert_eq!(seg[0].inlinks, 2);
    assert!(seg.iter().all(|r| r.hops == 1 && r.via == Via::Link));
    // The two seeds were seen before.
    assert_eq!(figure(&report, "dupes:"), 2, "{report}");
    assert_eq!(figure(&report, "new urls:"), 5, "{report}");

    // Round 2: mostly old links, two new ones. (Every URL of the segment
    // was fetched, as the fetcher accounts for each: the others have no
    // links.)
    write_done(
        &crawl,
        "00002",
        &[
            Page::html("http://a.test/1", 1, &["/1", "/2", "/4", "http://b.test/"]),
            Page::html("http://b.test/x", 1, &["/y", "/z", "http://a.test/3"]),
            Page::html("http://a.test/2", 1, &[]),
            Page::html("http://a.test/3", 1, &[]),
            Page::html("http://b.test/y", 1, &[]),
        ],
    );
    let report = run_round(&crawl, &[]);
    assert_eq!(
        urls(&segments(&crawl)["00003"]),
        ["http://a.test/4", "http://b.test/z"]
    );
    assert_eq!(figure(&report, "dupes:"), 5, "{report}");
    assert!(segments(&crawl)["00003"].iter().all(|r| r.hops == 2));

    // Round 3: one new link among everything seen so far.
    let everything: Vec<&str> = vec![
        "http://a.test/",
        "http://a.test/1",
        "http://a.test/2",
        "http://a.test/3",
        "http://a.test/4",
        "http://b.test/",
        "http://b.test/x",
        "http://b.test/y",
        "http://b.test/z",
        "http://a.test/5",
    ];
    write_done(
        &crawl,
        "00003",
        &[
            Page::html("http://a.test/4", 2, &everything),
            Page::html("http://b.test/z", 2, &[]),
        ],
    );
    let report = run_round(&crawl, &[]);
    assert_eq!(urls(&segments(&crawl)["00004"]), ["http://a.test/5"]);
    assert_eq!(figure(&report, "dupes:"), 9, "{report}");

    // Nothing was ever scheduled twice.
    let all = all_urls(&crawl);
    let distinct: BTreeSet<_> = all.iter().collect();
    assert_eq!(all.len(), distinct.len(), "{all:?}");
    assert_eq!(all.len(), 10);
    assert_eq!(
        list_entries(&crawl.dir.consumed_path()),
        "00001\n00002\n00003\n"
    );

    // A fourth run with nothing new fetched: nothing to do, nothing changes.
    mark_fetched_empty(&crawl, "00004");
    run_round(&crawl, &[]);
    let err = run_round(&crawl, &[]);
    assert!(err.contains("nothing to do"), "{err}");
    assert_eq!(segments(&crawl).len(), 4);
}

#[test]
fn links_and_redirects_are_one_hop_further() {
    let crawl = TempCrawl::new("hops");
    inject(&crawl, "http://a.test/\n", &[]);
    write_done(
        &crawl,
        "00001",
        &[
            Page::html("http://a.test/p", 2, &["/linked"]),
            Page::redirect("http://a.test/old", 2, "/moved"),
            Page::redirect("http://a.test/away", 4, "http://elsewhere.test/"),
        ],
    );
    let report = run_round(&crawl, &[]);
    let seg = &segments(&crawl)["00002"];
    let by_url: BTreeMap<_, _> = seg.iter().map(|r| (r.url.as_str(), r)).collect();
    assert_eq!(by_url["http://a.test/linked"].hops, 3);
    assert_eq!(by_url["http://a.test/linked"].via, Via::Link);
    assert_eq!(by_url["http://a.test/moved"].hops, 3);
    assert_eq!(by_url["http://a.test/moved"].via, Via::Redirect);
    assert_eq!(seg.len(), 2, "the off-scope redirect is filtered");
    assert_eq!(figure(&report, "redirects found:"), 2, "{report}");
    assert_eq!(figure(&report, "rejected scope:"), 1, "{report}");
}

#[test]
fn per_host_cap_sends_the_rest_to_the_backlog_and_loses_nothing() {
    let crawl = TempCrawl::new("cap");
    inject(&crawl, "http://big.test/\nhttp://small.test/\n", &[]);
    // 25 pages on big.test; page i is linked from i % 4 extra pages of
    // small.test, so in-links differ.
    let big: Vec<String> = (0..25).map(|i| format!("/p{i:02}")).collect();
    let big_refs: Vec<&str> = big.iter().map(String::as_str).collect();
    let mut pages = vec![Page::html("http://big.test/", 0, &big_refs)];
    for k in 1..4 {
        let links: Vec<String> = (0..25)
            .filter(|i| i % 4 >= k)
            .map(|i| format!("http://big.test/p{i:02}"))
            .collect();
        let refs: Vec<&str> = links.iter().map(String::as_str).collect();
        pages.push(Page::html(&format!("http://small.test/s{k}"), 0, &refs));
    }
    write_done(&crawl, "00001", &pages);
    let report = run_round(&crawl, &["--max-per-host", "10"]);
    let seg = &segments(&crawl)["00002"];
    let big_in_seg: Vec<_> = seg.iter().filter(|r| r.host == "big.test").collect();
    assert_eq!(big_in_seg.len(), 10);
    // Most in-links first: i % 4 == 3 (4 in-links), then == 2 (3 in-links).
    let inlinks: Vec<u32> = big_in_seg.iter().map(|r| r.inlinks).collect();
    assert_eq!(inlinks, [4, 4, 4, 4, 4, 4, 3, 3, 3, 3], "{report}");
    assert_eq!(figure(&report, "to backlog:"), 15, "{report}");
    assert_eq!(figure(&report, "capped hosts:"), 1, "{report}");
    assert_eq!(backlog(&crawl).len(), 15);
    assert!(backlog(&crawl).iter().all(|r| r.via == Via::Backlog));

    // Round 2: nothing new fetched except one link to a URL waiting in the
    // backlog; the backlog feeds the next segment without being refused
    // as seen, and the link does not make a second copy.
    let waiting = backlog(&crawl)[0].url.clone();
    write_done(
        &crawl,
        "00002",
        &[Page::html("http://small.test/s1", 1, &[waiting.as_str()])],
    );
    let report = run_round(&crawl, &["--max-per-host", "10"]);
    assert_eq!(segments(&crawl)["00003"].len(), 10, "{report}");
    assert_eq!(figure(&report, "backlog in:"), 15, "{report}");
    assert_eq!(figure(&report, "re-entered:"), 15, "{report}");
    assert_eq!(backlog(&crawl).len(), 5);

    // Round 3 empties the backlog.
    mark_fetched_empty(&crawl, "00003");
    run_round(&crawl, &["--max-per-host", "10"]);
    assert_eq!(segments(&crawl)["00004"].len(), 5);
    assert!(backlog(&crawl).is_empty());

    let got: Vec<String> = all_urls(&crawl)
        .into_iter()
        .filter(|u| u.starts_with("http://big.test/p"))
        .collect();
    let distinct: BTreeSet<_> = got.iter().cloned().collect();
    assert_eq!(got.len(), 25, "each big.test page exactly once: {got:?}");
    assert_eq!(distinct.len(), 25);
}

#[test]
fn the_backlog_is_merged_host_by_host_with_the_new_urls() {
    // Waiting URLs on three hosts; new links on one of them and on a host
    // between them in the domain order.
    let crawl = TempCrawl::new("backlog-merge");
    let mut seeds = String::new();
    for host in ["a.test", "c.test", "e.test"] {
        for i in 0..6 {
            seeds.push_str(&format!("http://{host}/w{i}\n"));
        }
    }
    inject(&crawl, &seeds, &["--max-per-host", "2", "--scope", "any"]);
    assert_eq!(backlog(&crawl).len(), 12);
    write_done(
        &crawl,
        "00001",
        &[Page::html(
            "http://a.test/w0",
            0,
            &["/n1", "http://d.test/n1", "http://d.test/n2"],
        )],
    );
    let report = run_round(&crawl, &["--max-per-host", "3", "--scope", "any"]);
    let seg = &segments(&crawl)["00002"];
    let hosts: Vec<&str> = seg.iter().map(|r| r.host.as_str()).collect();
    // Domain order kept; each host's waiting URLs (0 hops) before its new
    // link (1 hop); d.test, with nothing waiting, gets its new links.
    assert_eq!(
        hosts,
        [
            "a.test", "a.test", "a.test", "c.test", "c.test", "c.test", "d.test", "d.test",
            "e.test", "e.test", "e.test"
        ],
        "{report}"
    );
    assert!(seg[..3].iter().all(|r| r.via == Via::Backlog), "{seg:?}");
    assert_eq!(figure(&report, "backlog in:"), 12, "{report}");
    // a.test: 4 waiting + /n1 - 3 taken; c.test and e.test: 4 - 3 each.
    assert_eq!(backlog(&crawl).len(), 4, "{report}");
    assert!(
        backlog(&crawl).iter().any(|r| r.url == "http://a.test/n1"),
        "the new link waits behind the older ones"
    );

    // The scope narrowed since: the waiting URLs of e.test are dropped when
    // their turn comes, and counted.
    mark_fetched_empty(&crawl, "00002");
    let report = run_round(
        &crawl,
        &[
            "--max-per-host",
            "3",
            "--scope",
            "list",
            "--scope-hosts",
            "a.test,c.test",
        ],
    );
    let seg = &segments(&crawl)["00003"];
    assert!(seg.iter().all(|r| r.host != "e.test"), "{seg:?}");
    assert_eq!(figure(&report, "rejected scope:"), 1, "{report}");
}

#[test]
fn a_backlog_out_of_order_loses_nothing() {
    // A backlog in the wrong host order (written by hand, or by another
    // tool): the hosts out of order stay in the backlog, counted.
    let crawl = TempCrawl::new("backlog-order");
    inject(&crawl, "http://a.test/\n", &["--scope", "any"]);
    let mut w = common::segment::SegmentWriter::create(crawl.dir.backlog_path()).unwrap();
    for url in [
        "http://z.test/1",
        "http://b.test/1",
        "http://b.test/2",
        "http://z.test/2",
    ] {
        w.write(&rec(url, 1, Via::Backlog, 0)).unwrap();
    }
    w.finish().unwrap();
    mark_fetched_empty(&crawl, "00001");
    let report = run_round(&crawl, &["--scope", "any"]);
    let scheduled = urls(&segments(&crawl)["00002"]);
    let waiting = urls(&backlog(&crawl));
    assert_eq!(scheduled, ["http://z.test/1"], "{report}");
    assert_eq!(figure(&report, "backlog out of order:"), 3, "{report}");
    let mut all: Vec<String> = scheduled.into_iter().chain(waiting.clone()).collect();
    all.sort();
    assert_eq!(
        all,
        [
            "http://b.test/1",
            "http://b.test/2",
            "http://z.test/1",
            "http://z.test/2"
        ]
    );
    // The backlog was sorted again: the next round schedules them.
    let hosts: Vec<String> = backlog(&crawl).iter().map(|r| r.host.clone()).collect();
    assert_eq!(hosts, ["b.test", "b.test", "z.test"], "{waiting:?}");
    mark_fetched_empty(&crawl, "00002");
    let report = run_round(&crawl, &["--scope", "any"]);
    assert_eq!(
        urls(&segments(&crawl)["00003"]),
        ["http://b.test/1", "http://b.test/2", "http://z.test/2"],
        "{report}"
    );
    assert!(!report.contains("backlog out of order"), "{report}");
}

#[test]
fn more_seeds_keep_the_backlog_in_order() {
    // A second inject merges its own waiting URLs with those of the first,
    // host by host, instead of appending them.
    let crawl = TempCrawl::new("backlog-inject");
    inject(
        &crawl,
        "http://z.test/1\nhttp://z.test/2\n",
        &["--scope", "any", "--max-per-host", "1"],
    );
    inject(
        &crawl,
        "http://a.test/1\nhttp://a.test/2\n",
        &["--scope", "any", "--max-per-host", "1"],
    );
    let hosts: Vec<String> = backlog(&crawl).iter().map(|r| r.host.clone()).collect();
    assert_eq!(hosts, ["a.test", "z.test"]);
    mark_fetched_empty(&crawl, "00001");
    mark_fetched_empty(&crawl, "00002");
    let report = run_round(&crawl, &["--scope", "any"]);
    assert!(!report.contains("backlog out of order"), "{report}");
    assert_eq!(
        urls(&segments(&crawl)["00003"]),
        ["http://a.test/2", "http://z.test/2"]
    );
}

#[test]
fn a_large_round_becomes_consecutive_segments() {
    let crawl = TempCrawl::new("size");
    let mut seeds = String::new();
    for h in 0..5 {
        for p in 0..5 {
            seeds.push_str(&format!("http://h{h}.test/{p}\n"));
        }
    }
    let report = inject(&crawl, &seeds, &["--max-segment-size", "10"]);
    let segs = segments(&crawl);
    assert_eq!(
        segs.keys().collect::<Vec<_>>(),
        ["00001", "00002", "00003"],
        "{report}"
    );
    assert_eq!(segs.values().map(Vec::len).collect::<Vec<_>>(), [10, 10, 5]);
    // Together they are one domain-sorted list.
    let hosts: Vec<String> = segs
        .values()
        .flat_map(|r| r.iter().map(|r| r.host.clone()))
        .collect();
    let mut sorted = hosts.clone();
    sorted.sort();
    assert_eq!(hosts, sorted);
    assert_eq!(all_urls(&crawl).len(), 25);

    // The next round continues after the last ID.
    write_done(
        &crawl,
        "00001",
        &[Page::html("http://h0.test/0", 0, &["/new"])],
    );
    run_round(&crawl, &["--max-segment-size", "10"]);
    assert!(segments(&crawl).contains_key("00004"));
}

#[test]
fn partitions_keep_each_host_in_one_partition() {
    let crawl = TempCrawl::new("partitions");
    let mut seeds = String::new();
    for h in 0..40 {
        for p in 0..5 {
            seeds.push_str(&format!("http://host{h}.test/{p}\n"));
        }
    }
    inject(&crawl, &seeds, &["--partitions", "4"]);
    let segs = segments(&crawl);
    assert_eq!(
        segs.keys().collect::<Vec<_>>(),
        ["00001-p01", "00001-p02", "00001-p03", "00001-p04"]
    );
    let mut home: BTreeMap<String, String> = BTreeMap::new();
    for (id, recs) in &segs {
        for r in recs {
            let prev = home.insert(r.host.clone(), id.clone());
            assert!(
                prev.is_none() || prev.as_deref() == Some(id.as_str()),
                "{} in {prev:?} and {id}",
                r.host
            );
        }
    }
    assert_eq!(home.len(), 40);
    assert_eq!(all_urls(&crawl).len(), 200);

    // A later round puts each host in the same partition number again.
    let pages: Vec<Page> = (0..40)
        .map(|h| Page::html(&format!("http://host{h}.test/0"), 0, &["/next"]))
        .collect();
    write_done(&crawl, "00001-p01", &pages);
    run_round(&crawl, &["--partitions", "4"]);
    for (id, recs) in segments(&crawl) {
        if !id.starts_with("00002") {
            continue;
        }
        for r in recs {
            let first = &home[&r.host];
            assert_eq!(first[5..], id[5..], "{} moved partition", r.host);
        }
    }
}

#[test]
fn leftover_and_retries_come_back_without_being_refused_as_seen() {
    let crawl = TempCrawl::new("leftover");
    let seeds: String = (1..=6).map(|i| format!("http://a.test/{i}\n")).collect();
    inject(&crawl, &seeds, &[]);
    write_leftover(
        &crawl,
        "00001",
        &[
            rec("http://a.test/3", 0, Via::Leftover, 0),
            rec("http://a.test/4", 0, Via::Retry, 1),
            rec("http://a.test/5", 0, Via::Retry, 3),
            rec("http://a.test/6", 0, Via::Retry, 2),
        ],
    );
    // A page links to a leftover URL too: still one copy.
    write_done(
        &crawl,
        "00001",
        &[Page::html("http://a.test/1", 0, &["/3", "/2"])],
    );
    let report = run_round(&crawl, &["--max-tries", "3"]);
    let seg = &segments(&crawl)["00002"];
    let got: BTreeMap<_, _> = seg.iter().map(|r| (r.url.as_str(), r)).collect();
    assert_eq!(
        got.keys().copied().collect::<Vec<_>>(),
        ["http://a.test/3", "http://a.test/4", "http://a.test/6"],
        "{report}"
    );
    assert_eq!(got["http://a.test/3"].via, Via::Leftover);
    // The link to it was a copy of a URL already scheduled: dropped at the
    // seen-set, one copy still, but its in-link is added to the score of
    // the copy that waits.
    assert_eq!(got["http://a.test/3"].inlinks, 1);
    assert_eq!(got["http://a.test/4"].via, Via::Retry);
    assert_eq!(got["http://a.test/4"].tries, 1);
    assert_eq!(figure(&report, "leftover in:"), 1, "{report}");
    assert_eq!(figure(&report, "retries in:"), 3, "{report}");
    assert_eq!(figure(&report, "retries exhausted:"), 1, "{report}");
    // Both links point to URLs scheduled before (/2 a seed, /3 a seed now
    // in the leftover list).
    assert_eq!(figure(&report, "dupes:"), 2, "{report}");
    assert_eq!(figure(&report, "re-entered:"), 3, "{report}");
}

#[test]
fn scope_and_trap_filters_are_counted() {
    let crawl = TempCrawl::new("filters");
    inject(&crawl, "http://a.test/\n", &[]);
    let long = format!("/{}", "x".repeat(2100));
    let deep: String = (0..25).map(|i| format!("/d{i}")).collect();
    let params: String = (0..12).map(|i| format!("p{i}=1&")).collect();
    let params = format!("/q?{}", params.trim_end_matches('&'));
    let links = [
        "/good",
        "http://other.test/",
        "/x/x/x/",
        deep.as_str(),
        long.as_str(),
        params.as_str(),
        "mailto:someone@a.test",
        "javascript:void(0)",
    ];
    write_done(
        &crawl,
        "00001",
        &[
            Page::html("http://a.test/", 0, &links),
            Page::html("http://a.test/far", 10, &["/too-far"]),
        ],
    );
    let report = run_round(&crawl, &[]);
    assert_eq!(urls(&segments(&crawl)["00002"]), ["http://a.test/good"]);
    for key in [
        "rejected scope:",
        "rejected too-long:",
        "rejected repeated-segment:",
        "rejected too-many-segments:",
        "rejected too-many-hops:",
        "rejected too-many-params:",
    ] {
        assert_eq!(figure(&report, key), 1, "{key}\n{report}");
    }
    assert_eq!(figure(&report, "rejected scheme:"), 2, "{report}");

    // Flags move the limits.
    let crawl = TempCrawl::new("filters-flags");
    inject(&crawl, "http://a.test/\n", &[]);
    write_done(&crawl, "00001", &[Page::html("http://a.test/", 0, &links)]);
    let report = run_round(
        &crawl,
        &[
            "--scope",
            "any",
            "--max-path-segments",
            "30",
            "--max-hops",
            "0",
        ],
    );
    assert_eq!(figure(&report, "rejected scope:"), 0, "{report}");
    // /good, other.test, the deep path and the query: each one hop away.
    assert_eq!(figure(&report, "rejected too-many-hops:"), 4, "{report}");
}

#[test]
fn a_page_the_fetcher_reached_by_a_redirect_is_not_scheduled_again() {
    let crawl = TempCrawl::new("followed");
    inject(&crawl, "http://a.test/old\n", &[]);
    // The fetcher followed the redirect within its run: both the 301 and
    // the target's page are stored. Its robots.txt fetches (a redirect
    // too) are stored as well, and are not links.
    let robots = Page {
        via: "robots",
        ..Page::redirect("http://a.test/robots.txt", 0, "/robots-moved.txt")
    };
    let mut big = Page::html("http://a.test/big", 1, &[]);
    big.body.extend(vec![b' '; 200_000]);
    let robots_moved = Page {
        via: "robots",
        content_type: Some("text/plain".into()),
        ..Page::html("http://a.test/robots-moved.txt", 0, &[])
    };
    write_done(
        &crawl,
        "00001",
        &[
            robots,
            robots_moved,
            Page::redirect("http://a.test/old", 0, "/new"),
            Page::html("http://a.test/new", 1, &["/child", "/new"]),
            // Reached the same way, too large to read: fetched all the same.
            Page::redirect("http://a.test/old-big", 0, "/big"),
            big,
        ],
    );
    let report = run_round(&crawl, &["--max-page-size", "100KB"]);
    assert_eq!(urls(&segments(&crawl)["00002"]), ["http://a.test/child"]);
    // /new, /big, and /old-big (a redirect no segment listed either).
    assert_eq!(figure(&report, "already fetched:"), 3, "{report}");
    assert_eq!(figure(&report, "responses:"), 4, "{report}");
    assert_eq!(figure(&report, "redirects found:"), 2, "{report}");

    // Later links to it are copies of a URL seen before.
    write_done(
        &crawl,
        "00002",
        &[Page::html(
            "http://a.test/child",
            2,
            &["/new", "/big", "/other"],
        )],
    );
    let report = run_round(&crawl, &[]);
    assert_eq!(urls(&segments(&crawl)["00003"]), ["http://a.test/other"]);
    assert_eq!(figure(&report, "dupes:"), 2, "{report}");
}

#[test]
fn a_run_removed_from_consumed_txt_is_read_again() {
    // The account of re-reading a fetched run (docs/operations.md): its links are
    // checked against seen.bloom as usual, its leftover URLs are not.
    let crawl = TempCrawl::new("reread");
    inject(&crawl, "http://a.test/\nhttp://a.test/left\n", &[]);
    write_leftover(
        &crawl,
        "00001",
        &[rec("http://a.test/left", 0, Via::Leftover, 0)],
    );
    write_done(&crawl, "00001", &[Page::html("http://a.test/", 0, &["/x"])]);
    run_round(&crawl, &[]);
    // (Fewest hops first: the leftover seed, then the link.)
    assert_eq!(
        urls(&segments(&crawl)["00002"]),
        ["http://a.test/left", "http://a.test/x"]
    );
    write_done(
        &crawl,
        "00002",
        &[
            Page::html("http://a.test/left", 0, &[]),
            Page::html("http://a.test/x", 1, &[]),
        ],
    );
    run_round(&crawl, &[]);
    assert_eq!(list_entries(&crawl.dir.consumed_path()), "00001\n00002\n");

    // The operator removes 00001 from consumed.txt: the link is a copy of a
    // URL seen before, the leftover URL is scheduled a second time.
    std::fs::write(crawl.dir.consumed_path(), "00002\n").unwrap();
    let report = run_round(&crawl, &[]);
    assert_eq!(figure(&report, "dupes:"), 1, "{report}");
    assert_eq!(figure(&report, "leftover in:"), 1, "{report}");
    assert_eq!(urls(&segments(&crawl)["00003"]), ["http://a.test/left"]);

    // With the leftover list moved aside first, only the links are read again.
    std::fs::write(crawl.dir.consumed_path(), "00002\n").unwrap();
    let leftover = crawl.dir.leftover_path("00001");
    std::fs::rename(&leftover, crawl.side("leftover-moved-aside")).unwrap();
    let report = run_round(&crawl, &[]);
    assert_eq!(figure(&report, "dupes:"), 1, "{report}");
    assert_eq!(figure(&report, "leftover in:"), 0, "{report}");
    assert!(!segments(&crawl).contains_key("00004"), "{report}");
}
