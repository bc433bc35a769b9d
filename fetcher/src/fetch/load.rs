//! Step 1 of a run: what an interrupted earlier run of the segment did
//! ([`crate::resume`]), the segment less that into the work file, and the
//! resolver and TLS trust the run uses.

use std::sync::atomic::Ordering;
use std::time::Instant;

use common::crawldir::warc_prefix;
use common::runlog::RunLog;

use super::Run;
use crate::dns::{Dns, DnsConfig, HostsMap};
use crate::error::Error;
use crate::feed::{self, Admit, KeyRanges};
use crate::frontier::Job;
use crate::outcome::is_retryable;
use crate::queue_key::{KeyMode, KeyOf, key_function};
use crate::resume;
use crate::settings::Settings;
use crate::tls::Trust;

/// The segment, less what an interrupted earlier run already did, in the
/// work file.
pub(super) struct Segment {
    pub(super) loaded: feed::Loaded,
    pub(super) resumed: resume::Resumed,
    /// URLs an earlier run attempted.
    pub(super) already_done: u64,
    /// Its failed attempts, to retry, by queue key.
    pub(super) retries: Vec<(String, Job)>,
    pub(super) dns: Dns,
    /// TLS trust for https.
    pub(super) tls: Trust,
    pub(super) key_of: KeyOf,
}

/// Step 1: what an interrupted earlier run did, and the segment less that
/// into the work file.
pub(super) fn load(run: &Run) -> Result<Segment, Error> {
    let (s, crawl, id, log) = (run.s, run.crawl, run.id, run.log);
    let resumed = resume::scan(&run.out, &warc_prefix(id), &crawl.crawl_log_path(id))?;
    for warning in &resumed.warnings {
        log.warn(warning);
    }
    if !resumed.is_fresh() {
        log.info(resumed.describe());
    }

    let dns = start_dns(s, log)?;
    let key_of = key_function(s.options.key, dns.clone());
    let tls = load_trust(s, log)?;

    let segment_path = crawl.segment_path(id);
    let started = Instant::now();
    if s.options.key == KeyMode::Ip {
        // The queue keys are the addresses: every name is looked up before
        // the segment is read in, --dns-concurrency at a time.
        let names = crate::queue_key::resolve_segment_ahead(&dns, &segment_path);
        log.info(format!(
            "--key ip: looking up the {names} host names of the segment, {} at a time",
            s.options.dns_concurrency
        ));
    }
    let mut retries: Vec<(String, Job)> = Vec::new();
    let mut already_done = 0u64;
    let loaded = feed::load(
        &segment_path,
        &crawl.work_path(id),
        |r| key_of(&r.host),
        |r| match resumed.done.get(&r.url) {
            None => Admit::Queue,
            Some(status) => {
                already_done += 1;
                if is_retryable(*status) {
                    // A failed attempt before the crash counts as a try.
                    let job = Job::from_record(r).retry(true);
                    retries.push((key_of(&r.host), job));
                }
                Admit::Skip
            }
        },
        |e| log.warn(e),
    )?;
    if loaded.malformed > 0 {
        log.info(format!(
            "{}: {} malformed lines skipped (each is named above; fix or remove them and the \
             URLs on them can be fetched in a later segment)",
            segment_path.display(),
            loaded.malformed
        ));
    }
    if s.options.key == KeyMode::Ip {
        let c = dns.counts();
        log.info(format!(
            "--key ip: {} queues after {} DNS lookups in {:.2}s",
            loaded.keys.len(),
            c.lookups.load(Ordering::Relaxed),
            started.elapsed().as_secs_f64()
        ));
    } else {
        // Names are looked up before their hosts' turn, so that a worker
        // rarely waits for one.
        dns.resolve_ahead(loaded.keys.iter().flat_map(KeyRanges::hosts));
    }
    Ok(Segment {
        loaded,
        resumed,
        already_done,
        retries,
        dns,
        tls,
        key_of,
    })
}

/// The TLS trust of the run (an unreadable `--ca-file` is a usage error),
/// said in the run log; `--accept-invalid-certs` is warned about.
fn load_trust(s: &Settings, log: &RunLog) -> Result<Trust, Error> {
    let tls = Trust::load(s.options.ca_file.as_deref(), s.options.accept_invalid_certs)
        .map_err(Error::Usage)?;
    for e in &tls.summary.system_errors {
        log.warn(format!("TLS system store: {e} (the other roots are used)"));
    }
    if s.options.accept_invalid_certs {
        log.warn(
            "--accept-invalid-certs: https certificates are NOT checked (unknown issuers, \
             expired certificates and other hosts' names are accepted); this run's WARC files \
             say so in their warcinfo record. Use it for archival crawls only.",
        );
    } else {
        log.note(tls.summary.describe());
    }
    Ok(tls)
}

/// The resolver of the run, and the proxy said in the log.
fn start_dns(s: &Settings, log: &RunLog) -> Result<Dns, Error> {
    let hosts = match &s.options.hosts_file {
        Some(p) => Some(HostsMap::load(p).map_err(Error::Usage)?),
        None => None,
    };
    let (dns, warning) = Dns::start(DnsConfig {
        server: s.dns_server,
        timeout: s.options.dns_timeout,
        cache_ttl: s.options.dns_cache_ttl,
        concurrency: s.options.dns_concurrency,
        hosts,
    })
    .map_err(Error::Usage)?;
    if let Some(w) = warning {
        log.warn(w);
    }
    if let Some(server) = s.dns_server {
        log.info(format!("names not in --hosts-file are asked of {server}"));
    }
    if let Some(p) = &s.proxy {
        log.info(p.describe());
    }
    Ok(dns)
}
