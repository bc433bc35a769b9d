//! `demo-web`: serves the project's demo web on loopback addresses, so that
//! a crawl can run on a machine without internet (the README's quick start)
//! and scripts can check politeness from the server's side.

use std::fs::OpenOptions;
use std::io::{self, BufWriter, Write};
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use clap::{Parser, Subcommand};
use testkit::demo::{Demo, DemoParams, Exclusion, FIRST_DEMO_ADDRESS, Limits, ServeOptions};
use testkit::rounds::{FIRST_ROUNDS_ADDRESS, RoundsParams, RoundsServeOptions, RoundsWeb};
use testkit::server::{ClockBase, Observer, Server, same_page_everywhere};
use testkit::serving::{Failure, Lifetime, fail};

/// Serve the crawler's demo web (58 hosts named NAME.demo.test, one
/// loopback address each) or describe it; serve the rounds benchmark's web or
/// a synthetic web for the fetcher's benchmark.
#[derive(Parser, Debug)]
#[command(name = "demo-web", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Serve the demo web until SIGTERM or SIGINT (Ctrl-C).
    ///
    /// Writes the seeds file and the hosts file, then the ready file once
    /// every host listens. A script can start it in the background and wait
    /// for the ready file:
    ///
    ///   demo-web serve --seed 1 --seeds-out seeds.txt --hosts-out hosts \
    ///     --ready-file ready &
    ///   for i in $(seq 100); do [ -e ready ] && break; sleep 0.1; done
    ///
    /// The request log (--request-log) gets one tab-separated line per
    /// request as it ends: host, path (with query), start and end in
    /// milliseconds since the Unix epoch, status (0 if none was sent). The
    /// start is when the request arrived, the end when the response was
    /// fully written, so the gap between one line's end and the next line's
    /// start on the same host is the crawler's politeness delay.
    #[command(verbatim_doc_comment)]
    Serve {
        #[command(flatten)]
        demo: DemoArgs,
        /// The port every host listens on [default: a free port].
        #[arg(long)]
        port: Option<u16>,
        /// The address of the first host; the others follow it.
        #[arg(long, default_value_t = FIRST_DEMO_ADDRESS)]
        first_address: Ipv4Addr,
        /// Where to write the seed URLs (one per line).
        #[arg(long, value_name = "FILE")]
        seeds_out: PathBuf,
        /// Where to write `IP NAME` lines for every host (the format of
        /// /etc/hosts, read by `fetcher --hosts-file`).
        #[arg(long, value_name = "FILE")]
        hosts_out: PathBuf,
        /// Append a line per request to FILE (see above).
        #[arg(long, value_name = "FILE")]
        request_log: Option<PathBuf>,
        /// Write FILE once every host listens (`port=`, `pid=` lines); it is
        /// removed first, and again on a clean stop.
        #[arg(long, value_name = "FILE")]
        ready_file: Option<PathBuf>,
    },
    /// Serve the rounds benchmark's web until SIGTERM or SIGINT.
    ///
    /// One large host, big.rounds.test, with --large-pages pages spread over
    /// link depths 1 to 6, and --small-hosts hosts s1.rounds.test, ... of 3
    /// to 10 pages each (6 levels deep at most); robots.txt 404 everywhere;
    /// every host's home page is a seed. No crawl can end before the large
    /// host has had all its requests one delay apart: the floor is
    /// largest_host_requests x delay (robots.txt included).
    ///
    /// --tail adds hole.rounds.test (accepts connections, never answers),
    /// broken.rounds.test (robots.txt 500), gone.rounds.test (nothing
    /// listens) and slow.rounds.test (10 pages, Crawl-delay --crawl-delay),
    /// each a seed and linked from the large host at every depth.
    ///
    /// Writes the seeds, the hosts file and the description (--describe-out,
    /// JSON: hosts, total_pages, total_requests, max_depth, largest_host,
    /// largest_host_pages, largest_host_requests, and per_host: name, role,
    /// address, pages, requests, depth, crawl_delay), then the ready file.
    /// The request log has the format of `serve`'s.
    #[command(verbatim_doc_comment)]
    RoundsWeb {
        /// Seed of the generator: the same seed gives the same web.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Pages of the large host, home page included.
        #[arg(long, default_value_t = 60)]
        large_pages: usize,
        /// Number of small hosts.
        #[arg(long, default_value_t = 200)]
        small_hosts: usize,
        /// Add the tail: a black hole, a robots.txt 500, a refused host and
        /// a Crawl-delay host.
        #[arg(long)]
        tail: bool,
        /// The Crawl-delay of slow.rounds.test (with --tail), in seconds.
        #[arg(long, default_value_t = 3.0)]
        crawl_delay: f64,
        /// The port every host listens on [default: a free port].
        #[arg(long)]
        port: Option<u16>,
        /// The address of the first host; the others follow it.
        #[arg(long, default_value_t = FIRST_ROUNDS_ADDRESS)]
        first_address: Ipv4Addr,
        /// Where to write the seed URLs (one per line).
        #[arg(long, value_name = "FILE")]
        seeds_out: PathBuf,
        /// Where to write `IP NAME` lines for every host.
        #[arg(long, value_name = "FILE")]
        hosts_out: PathBuf,
        /// Where to write the description (JSON, see above).
        #[arg(long, value_name = "FILE")]
        describe_out: Option<PathBuf>,
        /// Append a line per request to FILE (as `serve` does).
        #[arg(long, value_name = "FILE")]
        request_log: Option<PathBuf>,
        /// Write FILE once every host listens (`port=`, `pid=` lines).
        #[arg(long, value_name = "FILE")]
        ready_file: Option<PathBuf>,
    },
    /// Serve a synthetic web for benchmarks until SIGTERM or SIGINT.
    ///
    /// HOSTS hosts named h0.bench.test, h1.bench.test, ... on consecutive
    /// loopback addresses from --first-address, each answering any path
    /// with the same small HTML page (robots.txt: 404, so all is allowed).
    /// Writes the list of URLS-PER-HOST URLs per host (/p/0.html,
    /// /p/1.html, ...), the hosts file and the ready file as `serve` does.
    /// No request log is kept (it would only cost time and memory); the
    /// number of requests served is printed on exit.
    #[command(verbatim_doc_comment)]
    Synth {
        /// Number of hosts.
        #[arg(long, default_value_t = 200)]
        hosts: usize,
        /// URLs listed per host.
        #[arg(long, default_value_t = 100)]
        urls_per_host: usize,
        /// Size of the page every URL answers, in bytes.
        #[arg(long, default_value_t = 4096)]
        body_size: usize,
        /// The port every host listens on [default: a free port].
        #[arg(long)]
        port: Option<u16>,
        /// The address of the first host; the others follow it.
        #[arg(long, default_value_t = Ipv4Addr::new(127, 1, 0, 1))]
        first_address: Ipv4Addr,
        /// Where to write the URLs (one per line, grouped by host).
        #[arg(long, value_name = "FILE")]
        urls_out: PathBuf,
        /// Where to write `IP NAME` lines for every host.
        #[arg(long, value_name = "FILE")]
        hosts_out: PathBuf,
        /// Write FILE once every host listens (`port=`, `pid=` lines).
        #[arg(long, value_name = "FILE")]
        ready_file: Option<PathBuf>,
    },
    /// Print the hosts, the seeds and what a correct crawl fetches.
    ///
    /// With --json, one JSON document for scripts: seed, port, agent,
    /// seeds, hosts (name, role, crawl_delay in seconds or null, fetch: URLs
    /// a correct crawl fetches there, deepest: their most hops or null),
    /// fetch (url, status, hops of every URL to fetch), robots (robots.txt
    /// URLs requested), refused (URLs on the host refusing connections) and
    /// excluded (URLs left out, with the reason).
    #[command(verbatim_doc_comment)]
    Describe {
        #[command(flatten)]
        demo: DemoArgs,
        /// The port to show in URLs.
        #[arg(long, default_value_t = 80)]
        port: u16,
        /// One JSON document instead of text.
        #[arg(long)]
        json: bool,
    },
}

#[derive(clap::Args, Debug)]
struct DemoArgs {
    /// Seed of the generator: the same seed gives the same web.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// A small web (3 content hosts of about 20 pages) for quick runs.
    #[arg(long)]
    small: bool,
    /// The product token that robots.txt files address.
    #[arg(long, default_value = testkit::demo::DEMO_AGENT)]
    agent: String,
    /// The Crawl-delay of slow.demo.test, in seconds.
    #[arg(long, default_value_t = 1.0)]
    crawl_delay: f64,
    /// The first year of the endless calendar [default: this year].
    #[arg(long)]
    calendar_year: Option<i64>,
}

impl DemoArgs {
    fn demo(&self) -> Demo {
        let mut params = if self.small {
            DemoParams::small(self.seed)
        } else {
            DemoParams::new(self.seed)
        };
        params.agent = self.agent.clone();
        params.crawl_delay = self.crawl_delay;
        if let Some(year) = self.calendar_year {
            params.calendar_year = year;
        }
        Demo::with_params(params)
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Serve {
            demo,
            port,
            first_address,
            seeds_out,
            hosts_out,
            request_log,
            ready_file,
        } => serve(
            &demo,
            port,
            first_address,
            &seeds_out,
            &hosts_out,
            request_log.as_deref(),
            ready_file.as_deref(),
        ),
        Command::Synth {
            hosts,
            urls_per_host,
            body_size,
            port,
            first_address,
            urls_out,
            hosts_out,
            ready_file,
        } => synth(
            &SynthArgs {
                hosts,
                urls_per_host,
                body_size,
                port,
                first_address,
            },
            &urls_out,
            &hosts_out,
            ready_file.as_deref(),
        ),
        Command::RoundsWeb {
            seed,
            large_pages,
            small_hosts,
            tail,
            crawl_delay,
            port,
            first_address,
            seeds_out,
            hosts_out,
            describe_out,
            request_log,
            ready_file,
        } => rounds_web(
            RoundsParams {
                seed,
                large_pages,
                small_hosts,
                tail,
                crawl_delay,
            },
            port,
            first_address,
            &Outputs {
                seeds: &seeds_out,
                hosts: &hosts_out,
                description: describe_out.as_deref(),
                request_log: request_log.as_deref(),
                ready: ready_file.as_deref(),
            },
        ),
        Command::Describe { demo, port, json } => {
            describe(&demo.demo(), port, json);
            Ok(())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("demo-web: {}: {}", f.subject, f.error);
            ExitCode::from(1)
        }
    }
}

fn serve(
    args: &DemoArgs,
    port: Option<u16>,
    first_address: Ipv4Addr,
    seeds_out: &Path,
    hosts_out: &Path,
    request_log: Option<&Path>,
    ready_file: Option<&Path>,
) -> Result<(), Failure> {
    let mut run = Lifetime::begin(ready_file, &[])?;

    let demo = args.demo();
    let mut options = ServeOptions {
        port,
        first_address,
        // The log goes to the file; keeping it in memory too would only grow.
        request_log: false,
        on_request: None,
    };
    if let Some(path) = request_log {
        options.on_request = Some(request_logger(path)?);
    }
    let web = demo
        .serve_with(options)
        .map_err(fail(format!("{first_address} and up")))?;
    common::atomic::write_atomic(seeds_out, web.seeds_file().as_bytes())
        .map_err(fail(seeds_out))?;
    common::atomic::write_atomic(hosts_out, web.hosts_file().as_bytes())
        .map_err(fail(hosts_out))?;
    run.ready(web.port())?;
    let hosts = demo.hosts();
    eprintln!(
        "demo-web: serving {} hosts of the demo web (seed {}) on {}..{} port {}; \
         seeds in {}, hosts in {}; stop with Ctrl-C or SIGTERM",
        hosts.len(),
        args.seed,
        web.addr(&hosts[0].name).unwrap_or(first_address),
        web.addr(&hosts[hosts.len() - 1].name)
            .unwrap_or(first_address),
        web.port(),
        seeds_out.display(),
        hosts_out.display()
    );
    let signal = run.wait_for_stop();
    eprintln!(
        "demo-web: stopping ({signal} after {} requests)",
        web.server().requests_served()
    );
    drop(web);
    Ok(())
}

/// Appends one line per request to `path`: host, target, start and end in
/// milliseconds since the Unix epoch, status (see `serve --help`).
fn request_logger(path: &Path) -> Result<Observer, Failure> {
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(fail(path))?;
    let sink = Mutex::new(BufWriter::new(file));
    let clock = ClockBase::now();
    let path = path.to_path_buf();
    Ok(Box::new(move |e| {
        let mut out = sink.lock().unwrap_or_else(|p| p.into_inner());
        let line = format!(
            "{}\t{}\t{}\t{}\t{}\n",
            e.host,
            e.target,
            clock.unix_millis(e.start),
            clock.unix_millis(e.end),
            e.status
        );
        if let Err(err) = out.write_all(line.as_bytes()).and_then(|()| out.flush()) {
            eprintln!("demo-web: {}: {err}", path.display());
        }
    }))
}

/// The files a serving run writes.
struct Outputs<'a> {
    seeds: &'a Path,
    hosts: &'a Path,
    description: Option<&'a Path>,
    request_log: Option<&'a Path>,
    ready: Option<&'a Path>,
}

fn rounds_web(
    params: RoundsParams,
    port: Option<u16>,
    first_address: Ipv4Addr,
    out: &Outputs<'_>,
) -> Result<(), Failure> {
    let mut run = Lifetime::begin(out.ready, &[])?;
    let web = RoundsWeb::generate(params);
    let mut options = RoundsServeOptions {
        port,
        first_address,
        request_log: false,
        on_request: None,
    };
    if let Some(path) = out.request_log {
        options.on_request = Some(request_logger(path)?);
    }
    let served = web
        .serve(options)
        .map_err(fail(format!("{first_address} and up")))?;
    common::atomic::write_atomic(out.seeds, served.seeds_file().as_bytes())
        .map_err(fail(out.seeds))?;
    common::atomic::write_atomic(out.hosts, served.hosts_file().as_bytes())
        .map_err(fail(out.hosts))?;
    if let Some(path) = out.description {
        let mut text = serde_json::to_string_pretty(&served.description())
            .map_err(|e| fail(path)(io::Error::other(e)))?;
        text.push('\n');
        common::atomic::write_atomic(path, text.as_bytes()).map_err(fail(path))?;
    }
    run.ready(served.port())?;
    let largest = web.largest();
    eprintln!(
        "demo-web: serving the rounds web (seed {}): {} hosts from {first_address} port {}, \
         {} pages to fetch; the largest host {} has {} requests; seeds in {}",
        web.params().seed,
        web.hosts().len(),
        served.port(),
        web.total_pages(),
        largest.name,
        largest.requests(),
        out.seeds.display()
    );
    let signal = run.wait_for_stop();
    eprintln!(
        "demo-web: stopping ({signal} after {} requests)",
        served.server().requests_served()
    );
    drop(served);
    Ok(())
}

struct SynthArgs {
    hosts: usize,
    urls_per_host: usize,
    body_size: usize,
    port: Option<u16>,
    first_address: Ipv4Addr,
}

fn synth(
    args: &SynthArgs,
    urls_out: &Path,
    hosts_out: &Path,
    ready_file: Option<&Path>,
) -> Result<(), Failure> {
    let mut run = Lifetime::begin(ready_file, &[])?;
    let mut page = String::from("<!DOCTYPE html>\n<html><head><title>bench</title></head><body>\n");
    while page.len() + 20 < args.body_size {
        page.push_str("<p>benchmark page</p>\n");
    }
    page.push_str("</body></html>\n");
    let body: Arc<[u8]> = page.into_bytes().into();
    let handler = same_page_everywhere("text/html; charset=utf-8", body);
    let mut builder = Server::builder()
        .request_log(false)
        .first_address(args.first_address);
    if let Some(port) = args.port {
        builder = builder.port(port);
    }
    for i in 0..args.hosts {
        builder = builder.host_shared(format!("h{i}.bench.test"), None, Arc::clone(&handler));
    }
    let server = builder
        .start()
        .map_err(fail(format!("{} and up", args.first_address)))?;
    let port = server.port();
    let write_urls = || -> io::Result<()> {
        let file = common::atomic::AtomicFile::create(urls_out)?;
        let mut out = BufWriter::new(file);
        for name in server.host_names() {
            for n in 0..args.urls_per_host {
                writeln!(out, "http://{name}:{port}/p/{n}.html")?;
            }
        }
        out.into_inner().map_err(|e| e.into_error())?.commit()
    };
    write_urls().map_err(fail(urls_out))?;
    common::atomic::write_atomic(hosts_out, server.hosts_file().as_bytes())
        .map_err(fail(hosts_out))?;
    run.ready(port)?;
    eprintln!(
        "demo-web: serving {} synthetic hosts from {} port {port}; {} URLs in {}",
        args.hosts,
        args.first_address,
        args.hosts * args.urls_per_host,
        urls_out.display()
    );
    let signal = run.wait_for_stop();
    eprintln!(
        "demo-web: stopping ({signal} after {} requests)",
        server.requests_served()
    );
    drop(server);
    Ok(())
}

fn describe(demo: &Demo, port: u16, json: bool) {
    let mut out = io::stdout().lock();
    let _ = if json {
        write_json_description(&mut out, demo, port)
    } else {
        write_description(&mut out, demo, port)
    };
}

/// The limits a crawl of the demo with the default settings runs with.
fn default_limits(demo: &Demo) -> Limits {
    Limits {
        agent: demo.params().agent.clone(),
        ..Limits::default()
    }
}

/// The name of an exclusion in descriptions.
fn exclusion_name(x: &Exclusion) -> String {
    match x {
        Exclusion::Filter(r) => format!("filter: {}", r.name()),
        Exclusion::RobotsDisallowed => "robots.txt disallows".into(),
        Exclusion::RobotsUnavailable => "robots.txt unavailable (5xx or no answer)".into(),
        Exclusion::CrawlDelayTooHigh => "Crawl-delay too high".into(),
    }
}

/// The URL prefix of `host`'s pages served on `port`.
fn host_prefix(host: &str, port: u16) -> String {
    if port == 80 {
        format!("http://{host}/")
    } else {
        format!("http://{host}:{port}/")
    }
}

fn write_json_description(out: &mut impl Write, demo: &Demo, port: u16) -> io::Result<()> {
    use serde_json::json;
    let p = demo.params();
    let e = demo.expected(&default_limits(demo), port);
    let hosts: Vec<serde_json::Value> = demo
        .hosts()
        .iter()
        .map(|h| {
            let prefix = host_prefix(&h.name, port);
            let hops: Vec<u32> = e
                .fetch
                .range(prefix.clone()..)
                .take_while(|(u, _)| u.starts_with(&prefix))
                .map(|(_, f)| f.hops)
                .collect();
            json!({
                "name": h.name,
                "role": format!("{:?}", h.role),
                "crawl_delay": demo.crawl_delay(&h.name, &p.agent).map(|d| d.as_secs_f64()),
                "fetch": hops.len(),
                "deepest": hops.iter().max(),
            })
        })
        .collect();
    let fetch: Vec<serde_json::Value> = e
        .fetch
        .iter()
        .map(|(u, f)| json!({"url": u, "status": f.status, "hops": f.hops}))
        .collect();
    let excluded: serde_json::Map<String, serde_json::Value> = e
        .excluded
        .iter()
        .map(|(u, x)| (u.clone(), json!(exclusion_name(x))))
        .collect();
    let doc = json!({
        "seed": p.seed,
        "port": port,
        "agent": p.agent,
        "seeds": demo.seeds(port),
        "hosts": hosts,
        "fetch": fetch,
        "robots": e.robots,
        "refused": e.refused.keys().collect::<Vec<_>>(),
        "excluded": excluded,
    });
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}

fn write_description(out: &mut impl Write, demo: &Demo, port: u16) -> io::Result<()> {
    let p = demo.params();
    writeln!(
        out,
        "demo web, seed {}: {} hosts, {} pages with fixed addresses (agent `{}`)",
        p.seed,
        demo.hosts().len(),
        demo.pages(port).len(),
        p.agent
    )?;
    writeln!(out, "\nseeds:")?;
    for s in demo.seeds(port) {
        writeln!(out, "  {s}")?;
    }
    let limits = default_limits(demo);
    let e = demo.expected(&limits, port);
    writeln!(
        out,
        "\nhosts (URLs a correct crawl fetches, and the deepest hops):"
    )?;
    for h in demo.hosts() {
        let prefix = host_prefix(&h.name, port);
        let mine: Vec<u32> = e
            .fetch
            .range(prefix.clone()..)
            .take_while(|(u, _)| u.starts_with(&prefix))
            .map(|(_, f)| f.hops)
            .collect();
        let deepest = mine.iter().max().map_or("-".to_string(), |d| d.to_string());
        writeln!(
            out,
            "  {:<22} {:<18} {:>5} {:>3}",
            h.name,
            format!("{:?}", h.role),
            mine.len(),
            deepest
        )?;
    }
    let count = |lo: u16, hi: u16| {
        e.fetch
            .values()
            .filter(|f| (lo..hi).contains(&f.status))
            .count()
    };
    writeln!(
        out,
        "\na correct crawl with the default limits (year {}, {} hops at most):",
        limits.current_year, limits.filter.max_hops
    )?;
    writeln!(
        out,
        "  fetches {} URLs ({} 2xx, {} 3xx, {} 4xx), the deepest {} hops from a seed \
         ({} rounds), plus {} robots.txt URLs",
        e.fetch.len(),
        count(200, 300),
        count(300, 400),
        count(400, 500),
        e.max_hops(),
        e.max_hops() + 1,
        e.robots.len()
    )?;
    writeln!(
        out,
        "  cannot connect for {} URLs (gone.demo.test)",
        e.refused.len()
    )?;
    let mut reasons: Vec<(String, usize)> = Vec::new();
    for x in e.excluded.values() {
        let name = exclusion_name(x);
        match reasons.iter_mut().find(|(n, _)| *n == name) {
            Some((_, c)) => *c += 1,
            None => reasons.push((name, 1)),
        }
    }
    reasons.sort();
    writeln!(out, "  leaves out {} URLs it finds:", e.excluded.len())?;
    for (name, n) in reasons {
        writeln!(out, "    {n:>5}  {name}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_json_description_holds_what_a_correct_crawl_fetches() {
        let demo = Demo::with_params(DemoParams::small(3));
        let mut out = Vec::new();
        write_json_description(&mut out, &demo, 8080).unwrap();
        let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let e = demo.expected(&default_limits(&demo), 8080);
        assert_eq!(doc["fetch"].as_array().unwrap().len(), e.fetch.len());
        let hosts = doc["hosts"].as_array().unwrap();
        assert_eq!(hosts.len(), demo.hosts().len());
        let per_host: u64 = hosts.iter().map(|h| h["fetch"].as_u64().unwrap()).sum();
        assert_eq!(per_host as usize, e.fetch.len());
        let slow = hosts
            .iter()
            .find(|h| h["name"] == "slow.demo.test")
            .unwrap();
        assert_eq!(slow["crawl_delay"], 1.0);
        let hole = hosts
            .iter()
            .find(|h| h["name"] == "hole.demo.test")
            .unwrap();
        assert_eq!(
            (&hole["fetch"], &hole["deepest"]),
            (&0.into(), &serde_json::Value::Null)
        );
        assert_eq!(doc["seeds"][0], "http://news.demo.test:8080/");
        assert!(
            doc["robots"]
                .as_array()
                .unwrap()
                .contains(&"http://hole.demo.test:8080/robots.txt".into())
        );
    }
}
