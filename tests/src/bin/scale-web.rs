//! `scale-web`: serves the scale web (thousands of hosts whose pages and
//! links are computed from their URLs, `testkit::scale`) on loopback for
//! `scripts/bench-scale.sh`, and describes it: what a correct crawl
//! fetches, the whole link graph, its PageRank.

use std::io::{self, BufRead, BufWriter, Write};
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use testkit::scale::serve::{ScaleServer, ServeOptions, Tally};
use testkit::scale::{FIRST_SCALE_ADDRESS, Node, SCALE_AGENT, ScaleParams, ScaleWeb, pagerank};
use testkit::serving::{Failure, Lifetime, fail};

/// Serve or describe the scale web: HOSTS hosts hNNNNN.scale.test of PAGES
/// pages each, a few KB of HTML whose links are computed from the URL
/// (same-host and cross-host, skewed towards a few hubs, with a long tail;
/// redirects, 404s, robots.txt variants, slow hosts), discovered from a few
/// seeds round by round.
#[derive(Parser, Debug)]
#[command(name = "scale-web", version)]
enum Command {
    /// Serve the web until SIGTERM or SIGINT.
    ///
    /// One loopback address per host from --first-address, one shared
    /// port. Writes the seeds and the hosts file (with the out-of-scope
    /// names pointing where nothing listens, so a crawler asks no name
    /// server), then the ready file (`port=`, `pid=` lines).
    ///
    /// The server counts what a polite crawl that fetches every URL once
    /// never does: URLs asked twice, robots.txt asked twice on a host,
    /// requests robots.txt disallows, unknown targets, requests to a host
    /// while another is in flight there (overlaps) or sooner than
    /// --min-delay after the previous one ended (too_close); with the
    /// totals (requests, statuses, distinct URLs and hosts, bytes, first and
    /// last request). SIGUSR1 writes these counts to --tally-out (JSON,
    /// replaced atomically) and starts counting afresh, for the next crawl
    /// of the same web; the last counts are written there on exit too.
    ///
    ///   scale-web serve --hosts 10000 --pages 100 --seeds-out seeds \
    ///     --hosts-out hosts --ready-file ready --tally-out tally.json &
    ///   ... crawl ...
    ///   rm -f tally.json; kill -USR1 $!    # then wait for tally.json
    #[command(verbatim_doc_comment)]
    Serve {
        #[command(flatten)]
        web: WebArgs,
        /// The port every host listens on [default: a free port].
        #[arg(long)]
        port: Option<u16>,
        /// The address of the first host; the others follow it.
        #[arg(long, default_value_t = FIRST_SCALE_ADDRESS)]
        first_address: Ipv4Addr,
        /// The crawl's delay between two requests to a host, in seconds:
        /// requests closer than this are counted (0: only overlaps).
        #[arg(long, default_value_t = 0.0)]
        min_delay: f64,
        /// Where to write the seed URLs (one per line).
        #[arg(long, value_name = "FILE")]
        seeds_out: PathBuf,
        /// Where to write `IP NAME` lines for every host.
        #[arg(long, value_name = "FILE")]
        hosts_out: PathBuf,
        /// Write FILE once every host listens (`port=`, `pid=` lines); it is
        /// removed first, and again on a clean stop.
        #[arg(long, value_name = "FILE")]
        ready_file: Option<PathBuf>,
        /// Where SIGUSR1 and the exit write the server's counts (JSON).
        #[arg(long, value_name = "FILE")]
        tally_out: Option<PathBuf>,
    },
    /// Print what a correct crawl fetches: the totals (JSON), or every URL.
    ///
    /// The totals: the parameters, hosts by robots.txt kind, the seeds, the
    /// slow hosts, and what a crawl from the seeds that obeys robots.txt
    /// fetches (urls, pages, redirects, gone, hosts_contacted, max_hops).
    /// With --urls, one line per URL instead: URL, status, hops.
    #[command(verbatim_doc_comment)]
    Describe {
        #[command(flatten)]
        web: WebArgs,
        /// The port to show in URLs (80: none).
        #[arg(long, default_value_t = 80)]
        port: u16,
        /// Every URL a correct crawl fetches (URL, status, hops), sorted.
        #[arg(long)]
        urls: bool,
    },
    /// Print the link graph of what a correct crawl fetches.
    ///
    /// One line per URL: its number, status, hops from a seed, URL, and the
    /// numbers of the URLs it links (comma-separated; a redirect links its
    /// target; links to what is not fetched are left out), after a `#` line
    /// naming the columns. Enough to compute PageRank or any other measure.
    #[command(verbatim_doc_comment)]
    Graph {
        #[command(flatten)]
        web: WebArgs,
        /// The port to show in URLs (80: none).
        #[arg(long, default_value_t = 80)]
        port: u16,
    },
    /// Print the PageRank of what a correct crawl fetches.
    ///
    /// Without --fetched: URL and PageRank, highest first (--top N lines).
    /// With --fetched FILE (URLs one per line, any port; `-` for stdin):
    /// the share of the web's total PageRank those URLs hold, as
    /// `share URLS_MATCHED URLS_READ` (URLs not of the web are not counted).
    #[command(verbatim_doc_comment)]
    Pagerank {
        #[command(flatten)]
        web: WebArgs,
        /// The port to show in URLs (80: none).
        #[arg(long, default_value_t = 80)]
        port: u16,
        /// The chance of following a link rather than jumping anywhere.
        #[arg(long, default_value_t = 0.85)]
        damping: f64,
        /// Print only the N highest.
        #[arg(long, value_name = "N")]
        top: Option<usize>,
        /// The share of the PageRank held by the URLs in FILE.
        #[arg(long, value_name = "FILE")]
        fetched: Option<PathBuf>,
    },
}

#[derive(clap::Args, Debug)]
struct WebArgs {
    /// Seed of the generator: the same seed gives the same web.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Number of hosts.
    #[arg(long, default_value_t = 1000)]
    hosts: u32,
    /// Pages of each host, home page included.
    #[arg(long, default_value_t = 100)]
    pages: u32,
    /// Hosts whose home page is a seed.
    #[arg(long, default_value_t = 3)]
    seeds: u32,
    /// Hubs: the home pages of the first N hosts.
    #[arg(long, default_value_t = 10)]
    hubs: u32,
    /// Links of each page to the hubs.
    #[arg(long, default_value_t = 2)]
    hub_links: u32,
    /// Links of each page to pages of its own host (besides its home page
    /// and the two pages below it).
    #[arg(long, default_value_t = 6)]
    local_links: u32,
    /// Links of each page to pages of other hosts.
    #[arg(long, default_value_t = 8)]
    cross_links: u32,
    /// Bytes of HTML of a page, about.
    #[arg(long, default_value_t = 4000)]
    page_bytes: usize,
    /// Hosts answering every request late.
    #[arg(long, default_value_t = 1)]
    slow_hosts: u32,
    /// How late the slow hosts answer, in milliseconds.
    #[arg(long, default_value_t = 200)]
    slow_ms: u64,
    /// The product token the shut-out hosts' robots.txt names.
    #[arg(long, default_value = SCALE_AGENT)]
    agent: String,
}

impl WebArgs {
    fn web(&self) -> ScaleWeb {
        ScaleWeb::new(ScaleParams {
            seed: self.seed,
            hosts: self.hosts,
            pages: self.pages,
            seeds: self.seeds,
            hubs: self.hubs,
            hub_links: self.hub_links,
            local_links: self.local_links,
            cross_links: self.cross_links,
            page_bytes: self.page_bytes,
            slow_hosts: self.slow_hosts,
            slow_ms: self.slow_ms,
            agent: self.agent.clone(),
        })
    }
}

fn main() -> ExitCode {
    let result = match Command::parse() {
        Command::Serve {
            web,
            port,
            first_address,
            min_delay,
            seeds_out,
            hosts_out,
            ready_file,
            tally_out,
        } => {
            let options = ServeOptions {
                port,
                first_address,
                min_delay: Duration::from_secs_f64(min_delay.max(0.0)),
                ..ServeOptions::default()
            };
            let files = Files {
                seeds: &seeds_out,
                hosts: &hosts_out,
                ready: ready_file.as_deref(),
                tally: tally_out.as_deref(),
            };
            serve(web.web(), options, &files)
        }
        Command::Describe { web, port, urls } => describe(&web.web(), port, urls),
        Command::Graph { web, port } => graph(&web.web(), port),
        Command::Pagerank {
            web,
            port,
            damping,
            top,
            fetched,
        } => rank(&web.web(), port, damping, top, fetched.as_deref()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) if f.error.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("scale-web: {}: {}", f.subject, f.error);
            ExitCode::from(1)
        }
    }
}

/// The files a serving run writes.
struct Files<'a> {
    seeds: &'a Path,
    hosts: &'a Path,
    ready: Option<&'a Path>,
    tally: Option<&'a Path>,
}

fn serve(web: ScaleWeb, options: ServeOptions, files: &Files<'_>) -> Result<(), Failure> {
    use signal_hook::consts::{SIGINT, SIGUSR1};
    let mut run = Lifetime::begin(files.ready, &[SIGUSR1])?;
    let first = options.first_address;
    let server = ScaleServer::start(web, options).map_err(fail(format!("{first} and up")))?;
    common::atomic::write_atomic(files.seeds, server.seeds_file().as_bytes())
        .map_err(fail(files.seeds))?;
    common::atomic::write_atomic(files.hosts, server.hosts_file().as_bytes())
        .map_err(fail(files.hosts))?;
    run.ready(server.port())?;
    let p = server.web().params();
    eprintln!(
        "scale-web: serving {} hosts x {} pages (seed {}) from {first} port {}; seeds in {}; \
         stop with Ctrl-C or SIGTERM, counts with SIGUSR1",
        p.hosts,
        p.pages,
        p.seed,
        server.port(),
        files.seeds.display()
    );
    let stopped_by = loop {
        let signal = run.next_signal();
        write_tally(&server.tally(), files.tally)?;
        match signal {
            SIGUSR1 => continue,
            SIGINT => break "SIGINT",
            _ => break "SIGTERM",
        }
    };
    eprintln!("scale-web: stopping ({stopped_by})");
    drop(server);
    Ok(())
}

fn write_tally(tally: &Tally, path: Option<&Path>) -> Result<(), Failure> {
    let faults: Vec<String> = tally
        .faults()
        .iter()
        .map(|(name, n)| format!("{name} {n}"))
        .collect();
    eprintln!(
        "scale-web: {} requests, {} URLs, {} hosts; {}",
        tally.requests,
        tally.urls,
        tally.hosts,
        faults.join(", ")
    );
    if let Some(path) = path {
        let mut text = serde_json::to_string_pretty(&tally.to_json())
            .map_err(|e| fail(path)(io::Error::other(e)))?;
        text.push('\n');
        common::atomic::write_atomic(path, text.as_bytes()).map_err(fail(path))?;
    }
    Ok(())
}

/// The status a correct crawl gets for `node`.
fn status(node: Node) -> u16 {
    match node {
        Node::Page { .. } | Node::Private { .. } => 200,
        Node::Redirect { .. } => 301,
        Node::Gone { .. } | Node::Outside { .. } => 404,
    }
}

fn describe(web: &ScaleWeb, port: u16, urls: bool) -> Result<(), Failure> {
    let e = web.expected();
    let mut out = BufWriter::new(io::stdout().lock());
    if urls {
        let mut lines: Vec<String> = e
            .fetched()
            .map(|(n, hops)| format!("{}\t{}\t{hops}\n", web.url(n, port), status(n)))
            .collect();
        lines.sort_unstable();
        for line in lines {
            out.write_all(line.as_bytes()).map_err(fail("stdout"))?;
        }
        return out.flush().map_err(fail("stdout"));
    }
    let p = web.params();
    let c = e.counts();
    let mut kinds = std::collections::BTreeMap::<&str, u32>::new();
    for h in 0..p.hosts {
        *kinds.entry(web.robots_kind(h).name()).or_default() += 1;
    }
    let seeds: Vec<String> = web.seeds().into_iter().map(|s| web.url(s, port)).collect();
    let slow: Vec<String> = web.slow_hosts().iter().map(|&h| web.host_name(h)).collect();
    let doc = serde_json::json!({
        "version": 1,
        "seed": p.seed,
        "hosts": p.hosts,
        "pages_per_host": p.pages,
        "total_pages": web.total_pages(),
        "hubs": p.hubs,
        "links": {"hubs": p.hub_links, "local": p.local_links, "cross": p.cross_links},
        "page_bytes": p.page_bytes,
        "agent": p.agent,
        "robots": kinds,
        "seeds": seeds,
        "slow_hosts": slow,
        "slow_ms": p.slow_ms,
        "expected": {
            "urls": c.urls,
            "pages": c.pages,
            "redirects": c.redirects,
            "gone": c.gone,
            "hosts_contacted": c.hosts_contacted,
            "max_hops": c.max_hops,
        },
    });
    serde_json::to_writer_pretty(&mut out, &doc).map_err(|e| fail("stdout")(e.into()))?;
    writeln!(out)
        .and_then(|()| out.flush())
        .map_err(fail("stdout"))
}

fn graph(web: &ScaleWeb, port: u16) -> Result<(), Failure> {
    let e = web.expected();
    let (nodes, g) = e.graph();
    let mut out = BufWriter::new(io::stdout().lock());
    let mut write = || -> io::Result<()> {
        writeln!(out, "# scale web graph v1: id\tstatus\thops\turl\tlinks")?;
        for (i, &node) in nodes.iter().enumerate() {
            let links: Vec<String> = g.links(i).iter().map(u32::to_string).collect();
            writeln!(
                out,
                "{i}\t{}\t{}\t{}\t{}",
                status(node),
                e.hops(node).unwrap_or(0),
                web.url(node, port),
                links.join(",")
            )?;
        }
        out.flush()
    };
    write().map_err(fail("stdout"))
}

fn rank(
    web: &ScaleWeb,
    port: u16,
    damping: f64,
    top: Option<usize>,
    fetched: Option<&Path>,
) -> Result<(), Failure> {
    let (nodes, g) = web.expected().graph();
    let ranks = pagerank(&g, damping);
    let mut out = BufWriter::new(io::stdout().lock());
    if let Some(path) = fetched {
        let by_node: std::collections::HashMap<Node, f64> =
            nodes.iter().copied().zip(ranks.iter().copied()).collect();
        let reader: Box<dyn BufRead> = if path == Path::new("-") {
            Box::new(io::stdin().lock())
        } else {
            Box::new(io::BufReader::new(
                std::fs::File::open(path).map_err(fail(path))?,
            ))
        };
        let (mut share, mut matched, mut read) = (0.0, 0u64, 0u64);
        let mut seen = std::collections::HashSet::new();
        for line in reader.lines() {
            let line = line.map_err(fail(path))?;
            read += 1;
            let node = web.node_of_url(line.trim());
            if let Some(r) = node.and_then(|n| by_node.get(&n))
                && seen.insert(node)
            {
                share += r;
                matched += 1;
            }
        }
        return writeln!(out, "{share:.6} {matched} {read}").map_err(fail("stdout"));
    }
    let mut order: Vec<usize> = (0..nodes.len()).collect();
    order.sort_by(|&a, &b| ranks[b].total_cmp(&ranks[a]));
    let mut write = || -> io::Result<()> {
        for &i in order.iter().take(top.unwrap_or(usize::MAX)) {
            writeln!(out, "{}\t{:.9}", web.url(nodes[i], port), ranks[i])?;
        }
        out.flush()
    };
    write().map_err(fail("stdout"))
}
