//! The name resolver: a per-name cache in front of a DNS stub resolver
//! (hickory-resolver, driven by one thread of its own).
//!
//! - names listed in `--hosts-file` ([`HostsMap`]) resolve to the addresses listed there
//!   (the file is read once, at start); literal addresses resolve to
//!   themselves; other names are asked of the name servers of
//!   `/etc/resolv.conf` (whose `/etc/hosts` is read once too), or of
//!   `--dns-server`;
//! - an answer is kept for its TTL, at most `--dns-cache-ttl`; "no such
//!   name" and "no address" are kept for their negative TTL, at most a
//!   tenth of that; a temporary failure is not kept (the requests waiting
//!   for that lookup all see it; the next one asks again);
//! - lookups run on the resolver's thread, at most `--dns-concurrency` at
//!   once; a worker that needs a name waits for its one lookup (however many
//!   workers need it), at most `--dns-timeout`;
//! - [`Dns::resolve_ahead`] queues names to look up before they are
//!   needed (the segment's hosts), behind the lookups workers wait for;
//! - a failure is [`DnsFailure`]: permanent (no such name, no address: the
//!   host is given up for the run) or temporary (no answer in time, a
//!   `SERVFAIL`: tried again later).

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use hickory_resolver::TokioResolver;
use hickory_resolver::config::{
    ConnectionConfig, LookupIpStrategy, NameServerConfig, ResolveHosts, ResolverConfig,
};
use hickory_resolver::net::runtime::TokioRuntimeProvider;
use hickory_resolver::net::{DnsError, NetError};

/// How long a temporary failure is kept: not at all (the requests that
/// waited for the lookup all see it; the next one asks again).
pub const TEMPORARY_KEPT: Duration = Duration::ZERO;

/// A static name → addresses map read from a file in /etc/hosts format.
#[derive(Debug, Clone, Default)]
pub struct HostsMap {
    names: HashMap<String, Vec<IpAddr>>,
}

impl HostsMap {
    /// Reads `IP NAME [NAME...]` lines; `#` starts a comment. A bad line is
    /// an error naming the file and line.
    pub fn load(path: &Path) -> Result<HostsMap, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        HostsMap::parse(&text).map_err(|(line, msg)| format!("{}:{line}: {msg}", path.display()))
    }

    /// Parses the text of a hosts file; errors give the 1-based line.
    pub fn parse(text: &str) -> Result<HostsMap, (usize, String)> {
        let mut names: HashMap<String, Vec<IpAddr>> = HashMap::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("");
            let mut fields = line.split_whitespace();
            let Some(ip) = fields.next() else { continue };
            let ip: IpAddr = ip
                .parse()
                .map_err(|_| (i + 1, format!("`{ip}` is not an IP address")))?;
            let mut any = false;
            for name in fields {
                any = true;
                let entry = names
                    .entry(name.trim_end_matches('.').to_ascii_lowercase())
                    .or_default();
                if !entry.contains(&ip) {
                    entry.push(ip);
                }
            }
            if !any {
                return Err((i + 1, format!("address {ip} without a name")));
            }
        }
        Ok(HostsMap { names })
    }

    /// The addresses of `name`, if listed.
    pub fn get(&self, name: &str) -> Option<&[IpAddr]> {
        self.names.get(name).map(Vec::as_slice)
    }
}

/// Settings of a [`Dns`].
#[derive(Debug, Clone)]
pub struct DnsConfig {
    /// The name server to ask instead of those of `/etc/resolv.conf`.
    pub server: Option<SocketAddr>,
    /// Longest wait for one name.
    pub timeout: Duration,
    /// Longest an answer is kept (a negative answer: a tenth of it).
    pub cache_ttl: Duration,
    /// Lookups in flight at most.
    pub concurrency: usize,
    /// Static names (`--hosts-file`).
    pub hosts: Option<HostsMap>,
}

/// Why a name did not resolve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DnsFailure {
    /// The name.
    pub host: String,
    /// True if asking again in this run would give the same answer (no such
    /// name, no address); false for a timeout or a server failure.
    pub permanent: bool,
    /// What happened.
    pub reason: String,
}

impl fmt::Display for DnsFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.permanent {
            "permanent"
        } else {
            "temporary"
        };
        write!(f, "{}: {} ({kind})", self.host, self.reason)
    }
}

impl std::error::Error for DnsFailure {}

/// The addresses of a name, or why there are none.
pub type Answer = Result<Arc<[IpAddr]>, DnsFailure>;

/// Counts of what the resolver did, for the run's log.
#[derive(Debug, Default)]
pub struct DnsCounts {
    /// Lookups sent to the name servers.
    pub lookups: AtomicU64,
    /// Answers found in the cache (or in a lookup already under way).
    pub cached: AtomicU64,
}

/// The resolver shared by every worker (cheap to clone).
#[derive(Clone)]
pub struct Dns {
    inner: Arc<Inner>,
}

impl fmt::Debug for Dns {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Dns")
            .field("timeout", &self.inner.timeout)
            .finish()
    }
}

enum Entry {
    /// A lookup is queued (`started` false) or under way.
    Pending { started: bool },
    /// An answer, kept until `until`.
    Done { answer: Answer, until: Instant },
}

#[derive(Default)]
struct Queue {
    /// Names a worker waits for.
    urgent: VecDeque<String>,
    /// Names looked up ahead.
    ahead: VecDeque<String>,
}

struct Inner {
    hosts: Option<HostsMap>,
    timeout: Duration,
    cache_ttl: Duration,
    cache: Mutex<HashMap<String, Entry>>,
    answered: Condvar,
    /// The same, for requests waiting on a tokio runtime.
    answered_async: tokio::sync::Notify,
    queue: Mutex<Queue>,
    wake: tokio::sync::Notify,
    counts: DnsCounts,
}

impl Dns {
    /// Starts the resolver thread. An unreadable `/etc/resolv.conf` is not
    /// an error here (a crawl of names in `--hosts-file` needs none): it is
    /// returned as a warning, and every lookup fails with it, temporarily.
    pub fn start(cfg: DnsConfig) -> Result<(Dns, Option<String>), String> {
        let inner = Arc::new(Inner {
            hosts: cfg.hosts,
            timeout: cfg.timeout,
            cache_ttl: cfg.cache_ttl,
            cache: Mutex::default(),
            answered: Condvar::new(),
            answered_async: tokio::sync::Notify::new(),
            queue: Mutex::default(),
            wake: tokio::sync::Notify::new(),
            counts: DnsCounts::default(),
        });
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the resolver: {e}"))?;
        let resolver = {
            let _guard = runtime.enter();
            build_resolver(cfg.server, cfg.timeout, cfg.cache_ttl)
        };
        let warning = resolver.as_ref().err().cloned();
        let thread_inner = inner.clone();
        let concurrency = cfg.concurrency.max(1);
        std::thread::Builder::new()
            .name("dns".into())
            .spawn(move || runtime.block_on(dispatch(thread_inner, resolver, concurrency)))
            .map_err(|e| format!("cannot start the resolver thread: {e}"))?;
        Ok((Dns { inner }, warning))
    }

    /// What the resolver did so far.
    pub fn counts(&self) -> &DnsCounts {
        &self.inner.counts
    }

    /// The addresses of `host` (a name or a literal address), waiting at
    /// most the DNS timeout for a lookup.
    pub fn lookup(&self, host: &str) -> Answer {
        let name = match self.listed(host) {
            Ok(answer) => return answer,
            Err(name) => name,
        };
        let inner = &self.inner;
        let deadline = inner.deadline();
        let mut cache = inner.cache.lock().unwrap_or_else(|e| e.into_inner());
        let mut asked = false;
        loop {
            if let Some(answer) = inner.step(&mut cache, &name, &mut asked) {
                return answer;
            }
            let Some(left) = deadline
                .checked_duration_since(Instant::now())
                .filter(|d| !d.is_zero())
            else {
                return Err(inner.no_answer(name));
            };
            cache = inner
                .answered
                .wait_timeout(cache, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// [`Dns::lookup`] for a task of a tokio runtime: it waits without
    /// holding its thread.
    pub async fn lookup_async(&self, host: &str) -> Answer {
        let name = match self.listed(host) {
            Ok(answer) => return answer,
            Err(name) => name,
        };
        let inner = &self.inner;
        let deadline = tokio::time::Instant::from_std(inner.deadline());
        let mut asked = false;
        loop {
            let notified = inner.answered_async.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let mut cache = inner.cache.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(answer) = inner.step(&mut cache, &name, &mut asked) {
                    return answer;
                }
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return Err(inner.no_answer(name));
            }
        }
    }

    /// The addresses of a literal address or a name of `--hosts-file`;
    /// else the name to look up (lower case).
    fn listed(&self, host: &str) -> Result<Answer, String> {
        let host = bare_host(host);
        if let Ok(ip) = host.parse::<IpAddr>() {
            return Ok(Ok(Arc::from([ip])));
        }
        let name = host.to_ascii_lowercase();
        match self.inner.hosts.as_ref().and_then(|h| h.get(&name)) {
            Some(ips) => Ok(Ok(Arc::from(ips))),
            None => Err(name),
        }
    }

    /// The first address of `host`, or why there is none.
    pub fn first(&self, host: &str) -> Result<IpAddr, DnsFailure> {
        self.lookup(host).map(|ips| ips[0])
    }

    /// Queues lookups of `hosts` that are neither cached, listed nor
    /// literal addresses, without waiting: they run behind the lookups a
    /// worker waits for, [`DnsConfig::concurrency`] at a time.
    pub fn resolve_ahead<'a>(&self, hosts: impl IntoIterator<Item = &'a str>) {
        let inner = &self.inner;
        let mut cache = inner.cache.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        let mut queued = Vec::new();
        for host in hosts {
            let name = host.trim_end_matches('.').to_ascii_lowercase();
            let bare = name.trim_start_matches('[').trim_end_matches(']');
            if bare.parse::<IpAddr>().is_ok()
                || inner.hosts.as_ref().is_some_and(|h| h.get(&name).is_some())
            {
                continue;
            }
            let fresh = match cache.get(&name) {
                Some(Entry::Pending { .. }) => true,
                Some(Entry::Done { until, .. }) => *until > now,
                None => false,
            };
            if !fresh {
                cache.insert(name.clone(), Entry::Pending { started: false });
                queued.push(name);
            }
        }
        drop(cache);
        if !queued.is_empty() {
            let mut q = inner.queue.lock().unwrap_or_else(|e| e.into_inner());
            q.ahead.extend(queued);
            drop(q);
            inner.wake.notify_one();
        }
    }
}

/// `host` without the brackets of an IPv6 address or a final dot.
fn bare_host(host: &str) -> &str {
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.')
}

impl Inner {
    /// When a lookup starting now gives up: room for the wait for a free
    /// lookup slot and the lookup itself.
    fn deadline(&self) -> Instant {
        Instant::now() + self.timeout * 2 + Duration::from_millis(500)
    }

    fn no_answer(&self, name: String) -> DnsFailure {
        DnsFailure {
            host: name,
            permanent: false,
            reason: format!("no answer within {:?}", self.timeout),
        }
    }

    /// One look at the cache for `name` on behalf of a waiting request:
    /// the answer, or `None` after asking for a lookup if none is under
    /// way (`asked` keeps whether this request already counted one).
    fn step(
        &self,
        cache: &mut HashMap<String, Entry>,
        name: &str,
        asked: &mut bool,
    ) -> Option<Answer> {
        match cache.get_mut(name) {
            Some(Entry::Done { answer, until }) if *until > Instant::now() || *asked => {
                if !*asked {
                    self.counts.cached.fetch_add(1, Ordering::Relaxed);
                }
                return Some(answer.clone());
            }
            Some(Entry::Pending { started }) => {
                if !*asked {
                    *asked = true;
                    self.counts.cached.fetch_add(1, Ordering::Relaxed);
                    if !*started {
                        // Looked up ahead but not yet begun: move it up.
                        self.push(name.to_string(), true);
                    }
                }
            }
            _ => {
                *asked = true;
                cache.insert(name.to_string(), Entry::Pending { started: false });
                self.push(name.to_string(), true);
            }
        }
        None
    }

    fn push(&self, name: String, urgent: bool) {
        let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        if urgent {
            q.urgent.push_back(name);
        } else {
            q.ahead.push_back(name);
        }
        drop(q);
        self.wake.notify_one();
    }

    /// The next name to look up: one a worker waits for first. A name
    /// already started (queued twice) is skipped.
    fn next_name(&self) -> Option<String> {
        loop {
            // One lock at a time: `lookup` takes the queue's under the cache's.
            let name = {
                let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
                q.urgent.pop_front().or_else(|| q.ahead.pop_front())?
            };
            let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(Entry::Pending { started }) = cache.get_mut(&name)
                && !*started
            {
                *started = true;
                return Some(name);
            }
        }
    }

    /// Records the answer for `name` and wakes whoever waits for it.
    fn answer(&self, name: String, answer: Answer, keep: Duration) {
        let until = Instant::now() + keep;
        self.cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name, Entry::Done { answer, until });
        self.answered.notify_all();
        self.answered_async.notify_waiters();
    }
}

/// The stub resolver: `server` only, or the system's configuration (its
/// `/etc/hosts` read now, once).
fn build_resolver(
    server: Option<SocketAddr>,
    timeout: Duration,
    cache_ttl: Duration,
) -> Result<TokioResolver, String> {
    let mut builder = match server {
        Some(addr) => {
            let mut udp = ConnectionConfig::udp();
            udp.port = addr.port();
            let mut tcp = ConnectionConfig::tcp();
            tcp.port = addr.port();
            let ns = NameServerConfig::new(addr.ip(), true, vec![udp, tcp]);
            let mut b = TokioResolver::builder_with_config(
                ResolverConfig::from_name_servers(vec![ns]),
                TokioRuntimeProvider::default(),
            );
            b.options_mut().use_hosts_file = ResolveHosts::Never;
            b
        }
        None => TokioResolver::builder_tokio().map_err(|e| {
            format!(
                "cannot read the system's DNS configuration (/etc/resolv.conf): {e}; names not \
                 in --hosts-file will not resolve (name a server with --dns-server IP:PORT)"
            )
        })?,
    };
    let o = builder.options_mut();
    // One try, given the whole timeout: a failure is tried again by the
    // fetcher's own rules (a robots.txt after --robots-retry-delay, a page
    // in a later run), which wait where an immediate retry would not.
    o.timeout = timeout;
    o.attempts = 1;
    // A crawler connects over IPv4 where it can; IPv6 only for names without A records.
    o.ip_strategy = LookupIpStrategy::Ipv4thenIpv6;
    o.positive_max_ttl = Some(cache_ttl);
    o.negative_max_ttl = Some(cache_ttl / 10);
    o.ndots = 0;
    builder
        .build()
        .map_err(|e| format!("cannot start the DNS resolver: {e}"))
}

/// The resolver thread: takes names from the queue, urgent ones first, and
/// looks them up, at most `concurrency` at once.
async fn dispatch(inner: Arc<Inner>, resolver: Result<TokioResolver, String>, concurrency: usize) {
    let slots = Arc::new(tokio::sync::Semaphore::new(concurrency));
    loop {
        let Ok(slot) = slots.clone().acquire_owned().await else {
            return;
        };
        let name = loop {
            let notified = inner.wake.notified();
            if let Some(name) = inner.next_name() {
                break name;
            }
            notified.await;
        };
        let inner = inner.clone();
        let resolver = resolver.clone();
        tokio::spawn(async move {
            let (answer, keep) = match resolver {
                Ok(r) => {
                    inner.counts.lookups.fetch_add(1, Ordering::Relaxed);
                    // Absolute: no search domain is ever appended to a crawled name.
                    let fqdn = format!("{name}.");
                    let got = tokio::time::timeout(inner.timeout, r.lookup_ip(fqdn)).await;
                    judge(&name, got, inner.cache_ttl)
                }
                Err(why) => (
                    Err(DnsFailure {
                        host: name.clone(),
                        permanent: false,
                        reason: why,
                    }),
                    TEMPORARY_KEPT,
                ),
            };
            inner.answer(name, answer, keep);
            drop(slot);
        });
    }
}

/// What a lookup's outcome means, and how long it is kept.
fn judge(
    name: &str,
    got: Result<
        Result<hickory_resolver::lookup_ip::LookupIp, NetError>,
        tokio::time::error::Elapsed,
    >,
    cache_ttl: Duration,
) -> (Answer, Duration) {
    let now = Instant::now();
    let fail = |permanent: bool, reason: String| DnsFailure {
        host: name.to_string(),
        permanent,
        reason,
    };
    let negative = |ttl: Option<u32>| {
        let cap = cache_ttl / 10;
        ttl.map_or(cap, |s| Duration::from_secs(u64::from(s)).min(cap))
    };
    match got {
        Err(_) => (
            Err(fail(false, "no answer in time (DNS timeout)".into())),
            TEMPORARY_KEPT,
        ),
        Ok(Ok(lookup)) => {
            let ips: Vec<IpAddr> = lookup.iter().take(16).collect();
            let keep = lookup
                .valid_until()
                .saturating_duration_since(now)
                .min(cache_ttl);
            if ips.is_empty() {
                (
                    Err(fail(true, "no address for this name".into())),
                    negative(None),
                )
            } else {
                (Ok(Arc::from(ips)), keep)
            }
        }
        Ok(Err(e)) => match &e {
            NetError::Dns(DnsError::NoRecordsFound(no)) if e.is_nx_domain() => (
                Err(fail(true, "no such name (NXDOMAIN)".into())),
                negative(no.negative_ttl),
            ),
            NetError::Dns(DnsError::NoRecordsFound(no)) => (
                Err(fail(
                    true,
                    "no address for this name (no A or AAAA record)".into(),
                )),
                negative(no.negative_ttl),
            ),
            NetError::Dns(DnsError::ResponseCode(code)) => (
                Err(fail(false, format!("the name server answered: {code}"))),
                TEMPORARY_KEPT,
            ),
            NetError::Timeout => (
                Err(fail(false, "no answer in time (DNS timeout)".into())),
                TEMPORARY_KEPT,
            ),
            other => (
                Err(fail(false, format!("lookup failed: {other}"))),
                TEMPORARY_KEPT,
            ),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dns_with(hosts: &str) -> Dns {
        // A server nothing listens on: no query leaves this machine.
        let (dns, _) = Dns::start(DnsConfig {
            server: Some("127.0.0.1:9".parse().unwrap()),
            timeout: Duration::from_millis(300),
            cache_ttl: Duration::from_secs(60),
            concurrency: 4,
            hosts: Some(HostsMap::parse(hosts).unwrap()),
        })
        .unwrap();
        dns
    }

    #[test]
    fn listed_names_and_literal_addresses_need_no_lookup() {
        let dns = dns_with("127.0.0.7 a.test\n");
        assert_eq!(
            &*dns.lookup("A.test.").unwrap(),
            &["127.0.0.7".parse::<IpAddr>().unwrap()]
        );
        assert_eq!(dns.first("10.1.2.3").unwrap().to_string(), "10.1.2.3");
        assert_eq!(dns.first("[::1]").unwrap().to_string(), "::1");
        assert_eq!(dns.counts().lookups.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn an_unanswered_lookup_is_a_temporary_failure_within_the_timeout() {
        let dns = dns_with("");
        let start = Instant::now();
        let e = dns.lookup("nowhere.test").unwrap_err();
        assert!(!e.permanent, "{e}");
        assert!(
            start.elapsed() < Duration::from_secs(3),
            "{:?}",
            start.elapsed()
        );
        assert!(e.to_string().starts_with("nowhere.test: "), "{e}");
    }
}

#[cfg(test)]
mod against_a_server {
    use super::*;
    use testkit::dns::{DnsAnswer, DnsServer};

    fn dns_at(server: &DnsServer, timeout_ms: u64) -> Dns {
        Dns::start(DnsConfig {
            server: Some(server.addr()),
            timeout: Duration::from_millis(timeout_ms),
            cache_ttl: Duration::from_secs(60),
            concurrency: 8,
            hosts: None,
        })
        .unwrap()
        .0
    }

    fn ip(s: &str) -> std::net::Ipv4Addr {
        s.parse().unwrap()
    }

    #[test]
    fn workers_waiting_for_one_name_share_one_lookup_and_its_answer_is_kept() {
        let server = DnsServer::builder()
            .name(
                "a.test",
                DnsAnswer::a(ip("127.0.0.5")).after(Duration::from_millis(200)),
            )
            .name("short.test", DnsAnswer::A(vec![ip("127.0.0.6")], 1))
            .start()
            .unwrap();
        let dns = dns_at(&server, 2000);
        let answers: Vec<Answer> = std::thread::scope(|s| {
            let waiting: Vec<_> = (0..8).map(|_| s.spawn(|| dns.lookup("a.test"))).collect();
            waiting.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for a in &answers {
            assert_eq!(a.as_ref().unwrap()[0].to_string(), "127.0.0.5");
        }
        assert_eq!(server.queries("a.test"), 1, "one lookup for eight workers");
        dns.lookup("A.test.").unwrap();
        assert_eq!(server.queries("a.test"), 1, "then the cache");

        dns.lookup("short.test").unwrap();
        dns.lookup("short.test").unwrap();
        assert_eq!(server.queries("short.test"), 1);
        std::thread::sleep(Duration::from_millis(1100));
        dns.lookup("short.test").unwrap();
        assert_eq!(
            server.queries("short.test"),
            2,
            "asked again once its TTL ran out"
        );
    }

    #[test]
    fn no_such_name_is_permanent_a_server_failure_and_a_timeout_are_not() {
        let server = DnsServer::builder()
            .name("failing.test", DnsAnswer::ServFail)
            .name(
                "slow.test",
                DnsAnswer::a(ip("127.0.0.5")).after(Duration::from_secs(3)),
            )
            .start()
            .unwrap();
        let dns = dns_at(&server, 300);
        let e = dns.lookup("gone.test").unwrap_err();
        assert!(e.permanent && e.reason.contains("NXDOMAIN"), "{e}");
        let asked = server.queries("gone.test");
        assert!(dns.lookup("gone.test").is_err());
        assert_eq!(
            server.queries("gone.test"),
            asked,
            "no such name is kept too"
        );

        let e = dns.lookup("failing.test").unwrap_err();
        assert!(!e.permanent, "{e}");
        let asked = server.queries("failing.test");
        assert!(dns.lookup("failing.test").is_err());
        assert!(
            server.queries("failing.test") > asked,
            "a temporary failure is not kept: the next lookup asks again"
        );

        let start = Instant::now();
        let e = dns.lookup("slow.test").unwrap_err();
        assert!(!e.permanent && e.reason.contains("timeout"), "{e}");
        assert!(
            start.elapsed() < Duration::from_secs(2),
            "given up at the DNS timeout, not at the answer: {:?}",
            start.elapsed()
        );
    }

    #[test]
    fn requests_waiting_for_a_lookup_on_one_connection_thread_leave_it_free() {
        let server = DnsServer::builder()
            .name(
                "slow.test",
                DnsAnswer::a(ip("127.0.0.5")).after(Duration::from_millis(300)),
            )
            .name("quick.test", DnsAnswer::a(ip("127.0.0.6")))
            .name(
                "silent.test",
                DnsAnswer::a(ip("127.0.0.7")).after(Duration::from_secs(3)),
            )
            .start()
            .unwrap();
        let dns = dns_at(&server, 1000);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let order = Mutex::new(Vec::new());
        let wait_for = |name: &'static str| {
            let (dns, order) = (&dns, &order);
            async move {
                let answer = dns.lookup_async(name).await;
                order.lock().unwrap().push(name);
                answer
            }
        };
        // Polled first on the only thread: had the slow lookups blocked it,
        // the quick name could not be answered before them.
        let (a, b, c, quick) = rt.block_on(async {
            tokio::join!(
                wait_for("slow.test"),
                wait_for("slow.test"),
                wait_for("slow.test"),
                wait_for("quick.test")
            )
        });
        for answer in [a, b, c] {
            assert_eq!(answer.unwrap()[0].to_string(), "127.0.0.5");
        }
        assert_eq!(quick.unwrap()[0].to_string(), "127.0.0.6");
        assert_eq!(order.lock().unwrap()[0], "quick.test");
        assert_eq!(server.queries("slow.test"), 1, "one lookup for three");

        let e = rt.block_on(dns.lookup_async("silent.test")).unwrap_err();
        assert!(!e.permanent && e.reason.contains("timeout"), "{e}");
        assert_eq!(
            rt.block_on(dns.lookup_async("Quick.Test."))
                .unwrap()
                .to_vec(),
            ["127.0.0.6".parse::<IpAddr>().unwrap()],
            "then the cache"
        );
        assert_eq!(server.queries("quick.test"), 1);
    }

    #[test]
    fn names_looked_up_ahead_are_answered_from_the_cache() {
        let server = DnsServer::builder()
            .name("a.test", DnsAnswer::a(ip("127.0.0.5")))
            .name("b.test", DnsAnswer::a(ip("127.0.0.6")))
            .start()
            .unwrap();
        let dns = dns_at(&server, 2000);
        dns.resolve_ahead(["a.test", "b.test", "a.test", "127.0.0.9", "[::1]"]);
        assert_eq!(dns.first("b.test").unwrap().to_string(), "127.0.0.6");
        assert_eq!(dns.first("a.test").unwrap().to_string(), "127.0.0.5");
        assert_eq!(server.queries("a.test"), 1);
        assert_eq!(server.queries("b.test"), 1);
        assert_eq!(dns.counts().lookups.load(Ordering::Relaxed), 2);
    }

    #[test]
    fn hosts_file_format() {
        let map = HostsMap::parse(
            "# demo\n127.0.0.2 news.demo.test www.demo.test # two names\n\n127.0.0.3\tShop.Demo.Test.\n",
        )
        .unwrap();
        assert_eq!(
            map.get("news.demo.test"),
            Some(&["127.0.0.2".parse().unwrap()][..])
        );
        assert_eq!(
            map.get("shop.demo.test"),
            Some(&["127.0.0.3".parse().unwrap()][..])
        );
        assert_eq!(map.get("other.test"), None);
        assert_eq!(HostsMap::parse("nonsense name\n").unwrap_err().0, 1);
        assert_eq!(HostsMap::parse("\n127.0.0.1\n").unwrap_err().0, 2);
    }
}
