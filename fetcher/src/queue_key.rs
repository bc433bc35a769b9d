//! The politeness queue key (`--key`, `key` in `crawl.toml`): which URLs
//! share one queue, one delay and one request in flight. By host name (the
//! default), by registrable domain (`www.example.co.uk` → `example.co.uk`),
//! or by IP address, resolved the way requests resolve names
//! ([`crate::dns`]: the `--hosts-file` first, then DNS). With `--key ip`,
//! [`resolve_segment_ahead`] queues every name of the segment before it is
//! read in, so that the lookups run side by side (`--dns-concurrency` at a
//! time) instead of one after another.

use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;

use common::segment::{SegmentReader, SegmentRecord};

use crate::dns::Dns;

pub use common::config::fetcher::KeyMode;

/// The queue key of a host name (host, registrable domain or address).
pub type KeyOf = Arc<dyn Fn(&str) -> String + Send + Sync>;

/// The queue key function of `mode`. For [`KeyMode::Ip`], the first
/// address of the name (looked up once, then from the resolver's cache); a
/// name that does not resolve is its own key (its requests then fail with
/// `dns` in their own queue).
pub fn key_function(mode: KeyMode, dns: Dns) -> KeyOf {
    Arc::new(move |host: &str| match mode {
        KeyMode::Host => host.to_string(),
        KeyMode::Domain => common::urlnorm::registrable_domain(host).to_string(),
        KeyMode::Ip => dns
            .first(host)
            .map_or_else(|_| host.to_string(), |ip| ip.to_string()),
    })
}

/// Queues lookups of every host name of the segment at `path`, in segment
/// order, without waiting for them; returns how many names there are. A
/// file that cannot be read is left for the loading that follows to report.
pub fn resolve_segment_ahead(dns: &Dns, path: &Path) -> usize {
    let Ok(mut reader) = SegmentReader::open(path) else {
        return 0;
    };
    let mut rec = SegmentRecord::default();
    let mut seen: HashSet<String> = HashSet::new();
    let mut batch: Vec<String> = Vec::new();
    loop {
        match reader.read_next(&mut rec) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) if e.is_fatal() => break,
            Err(_) => continue,
        }
        if !seen.contains(&rec.host) {
            seen.insert(rec.host.clone());
            batch.push(rec.host.clone());
            if batch.len() == 256 {
                dns.resolve_ahead(batch.iter().map(String::as_str));
                batch.clear();
            }
        }
    }
    dns.resolve_ahead(batch.iter().map(String::as_str));
    seen.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_of_each_mode() {
        let host = key_function(KeyMode::Host, dns_for_tests());
        assert_eq!(host("www.example.co.uk"), "www.example.co.uk");
        let domain = key_function(KeyMode::Domain, dns_for_tests());
        assert_eq!(domain("www.example.co.uk"), "example.co.uk");
        assert_eq!(domain("127.0.0.2"), "127.0.0.2");
        let (dns, _) = crate::dns::Dns::start(crate::dns::DnsConfig {
            // Nothing listens there: no query leaves this machine.
            server: Some("127.0.0.1:9".parse().unwrap()),
            timeout: std::time::Duration::from_millis(200),
            cache_ttl: std::time::Duration::from_secs(60),
            concurrency: 2,
            hosts: Some(crate::dns::HostsMap::parse("127.0.0.7 a.test b.test\n").unwrap()),
        })
        .unwrap();
        let ip = key_function(KeyMode::Ip, dns.clone());
        assert_eq!(ip("a.test"), "127.0.0.7");
        assert_eq!(ip("b.test"), ip("a.test"), "one queue per address");
        assert_eq!(ip("127.0.0.3"), "127.0.0.3");
        assert_eq!(
            ip("unknown.test"),
            "unknown.test",
            "no address: its own key"
        );
    }

    fn dns_for_tests() -> Dns {
        crate::dns::Dns::start(crate::dns::DnsConfig {
            server: Some("127.0.0.1:9".parse().unwrap()),
            timeout: std::time::Duration::from_millis(100),
            cache_ttl: std::time::Duration::from_secs(1),
            concurrency: 1,
            hosts: None,
        })
        .unwrap()
        .0
    }
}
