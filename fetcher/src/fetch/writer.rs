//! The writer thread of a run ([`crate::recorder`]) started on its WARC
//! files, crawl log and leftover, with what the `warcinfo` record says of
//! the run.

use common::crawldir::warc_prefix;
use common::warc::WarcWriterConfig;

use super::Run;
use crate::error::Error;
use crate::recorder::{Recorder, Spare};

/// Starts the writer thread on the run's WARC files, crawl log and leftover.
pub(super) fn start_recorder(
    run: &Run,
    first_serial: u32,
    workers: usize,
    spare: Spare,
) -> Result<Recorder, Error> {
    let (s, id) = (run.s, run.id);
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "localhost".into());
    Recorder::start(
        WarcWriterConfig {
            dir: run.out.clone(),
            prefix: warc_prefix(id),
            max_file_size: s.options.warc_max_size,
            first_serial,
            hostname: hostname.clone(),
            info: vec![
                (
                    "software".into(),
                    format!("fetcher/{}", env!("CARGO_PKG_VERSION")),
                ),
                ("hostname".into(), hostname.clone()),
                ("ip".into(), machine_ip()),
                ("operator".into(), s.agent_url.clone()),
                ("http-header-user-agent".into(), s.user_agent()),
                ("robots".into(), "obey".into()),
                (
                    "isPartOf".into(),
                    run.crawl
                        .top()
                        .canonicalize()
                        .ok()
                        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                        .unwrap_or_else(|| "crawl".into()),
                ),
                ("description".into(), format!("segment {id}")),
                (
                    common::warc::HTTP_RECORDS_FIELD.0.into(),
                    common::warc::HTTP_RECORDS_FIELD.1.into(),
                ),
            ]
            .into_iter()
            .chain(
                s.options
                    .from
                    .clone()
                    .map(|from| ("http-header-from".into(), from)),
            )
            .chain(s.options.accept_invalid_certs.then(|| {
                let (k, v) = crate::tls::INVALID_CERTS_FIELD;
                (k.to_string(), v.to_string())
            }))
            .collect(),
        },
        &run.crawl.crawl_log_path(id),
        &run.crawl.leftover_path(id),
        workers,
        run.closed_to.clone(),
        spare,
    )
    .map_err(Error::from)
}

/// The machine's address for the `warcinfo` record: the first address of
/// a network interface that is not loopback (IPv4 first), else 127.0.0.1.
/// Read from the interfaces, so no name is resolved.
fn machine_ip() -> String {
    let mut found: Vec<std::net::IpAddr> = Vec::new();
    // SAFETY: getifaddrs fills a list that we only read, then free once.
    unsafe {
        let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
        if libc::getifaddrs(&mut list) == 0 {
            let mut cur = list;
            while !cur.is_null() {
                let addr = (*cur).ifa_addr;
                if !addr.is_null() {
                    match i32::from((*addr).sa_family) {
                        libc::AF_INET => {
                            let a = &*(addr as *const libc::sockaddr_in);
                            found.push(
                                std::net::Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr)).into(),
                            );
                        }
                        libc::AF_INET6 => {
                            let a = &*(addr as *const libc::sockaddr_in6);
                            found.push(std::net::Ipv6Addr::from(a.sin6_addr.s6_addr).into());
                        }
                        _ => {}
                    }
                }
                cur = (*cur).ifa_next;
            }
            libc::freeifaddrs(list);
        }
    }
    found
        .iter()
        .filter(|ip| !ip.is_loopback())
        .min_by_key(|ip| ip.is_ipv6())
        .map_or_else(|| "127.0.0.1".to_string(), ToString::to_string)
}
