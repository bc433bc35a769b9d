//! The politeness queue key (`--key`, `key` in `crawl.toml`): which URLs
//! share one queue, one delay and one request in flight. By host name (the
//! default), by registrable domain (`www.example.co.uk` → `example.co.uk`),
//! or by IP address, resolved the way requests resolve names (the
//! `--hosts-file` first, then the system resolver).

use std::collections::HashMap;
use std::net::{IpAddr, ToSocketAddrs};
use std::sync::{Arc, Mutex};

use crate::transport::HostsMap;

/// How URLs are grouped into politeness queues.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum KeyMode {
    /// One queue per host name.
    Host,
    /// One queue per registrable domain (www.example.co.uk → example.co.uk).
    Domain,
    /// One queue per IP address (names are resolved when the segment is loaded).
    Ip,
}

/// The queue key of a host name (host, registrable domain or address).
pub type KeyOf = Arc<dyn Fn(&str) -> String + Send + Sync>;

/// The queue key function of `mode`. Addresses for [`KeyMode::Ip`] are
/// resolved once per name and cached; the lookup runs outside the cache's
/// lock, so one slow name holds up no other thread. A name that does not
/// resolve is its own key.
pub fn key_function(mode: KeyMode, hosts_map: Option<HostsMap>) -> KeyOf {
    let cache: Mutex<HashMap<String, String>> = Mutex::new(HashMap::new());
    Arc::new(move |host: &str| match mode {
        KeyMode::Host => host.to_string(),
        KeyMode::Domain => common::urlnorm::registrable_domain(host).to_string(),
        KeyMode::Ip => {
            if let Some(key) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(host) {
                return key.clone();
            }
            let key = resolve(host, hosts_map.as_ref())
                .map_or_else(|| host.to_string(), |ip| ip.to_string());
            cache
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(host.to_string(), key.clone());
            key
        }
    })
}

/// Resolves a host name the way fetches do (hosts file first).
fn resolve(host: &str, hosts: Option<&HostsMap>) -> Option<IpAddr> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Some(ip);
    }
    if let Some(ip) = hosts.and_then(|h| h.get(host)).and_then(|a| a.first()) {
        return Some(*ip);
    }
    (host, 80u16)
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .map(|a| a.ip())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_of_each_mode() {
        let host = key_function(KeyMode::Host, None);
        assert_eq!(host("www.example.co.uk"), "www.example.co.uk");
        let domain = key_function(KeyMode::Domain, None);
        assert_eq!(domain("www.example.co.uk"), "example.co.uk");
        assert_eq!(domain("127.0.0.2"), "127.0.0.2");
        let hosts = HostsMap::parse("127.0.0.7 a.test b.test\n").unwrap();
        let ip = key_function(KeyMode::Ip, Some(hosts));
        assert_eq!(ip("a.test"), "127.0.0.7");
        assert_eq!(ip("b.test"), ip("a.test"), "one queue per address");
        assert_eq!(ip("127.0.0.3"), "127.0.0.3");
    }
}
