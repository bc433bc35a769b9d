//! The round's selection: every URL out of the merge and every URL that
//! waits (the backlog, the refetches due), host by host, goes to the
//! segments or back to the backlog, as each host's cap and plan say
//! ([`crate::round::caps`]), with the links later rounds found to waiting
//! URLs added to their score. Three threads in a pipeline: this one merges
//! and caps, the next inserts the new URLs into `seen.bloom` in output
//! order, the last writes the segments and the backlog.

use std::sync::mpsc;

use common::bloom::BloomHash;
use common::config::segmenter::UrlOrder;
use common::filter::UrlFilter;
use common::segment::{SegmentRecord, Via};

use crate::error::Error;
use crate::progress::Progress;
use crate::round::backlog::{HostWaiting, Waiting};
use crate::round::candidates::{LastFetch, Meta, host_prefix, split_key};
use crate::round::caps::{Budget, Fate, HostCap, HostPlan, Pick};
use crate::round::counts::Counts;
use crate::round::output::{Output, Written, fill_record};
use crate::round::report::Selection;
use crate::round::score::WaitingLinks;
use crate::round::seen::Seen;
use crate::round::sort::Merger;

/// The hash of a URL already in `seen.bloom` (a backlog URL): not inserted
/// again. No URL hashes to it (the second half of a URL's hash is odd).
const ALREADY_SEEN: BloomHash = BloomHash(0, 0);

/// URLs handed from the selection to the writer thread at a time.
const BATCH: usize = 4096;

/// A batch of URLs for the writer thread; recycled with its strings.
struct Batch {
    recs: Vec<(Fate, SegmentRecord, BloomHash)>,
    len: usize,
}

impl Batch {
    fn push(&mut self, fate: Fate, host: &str, pick: &Pick, not_before: Option<i64>) {
        if self.len == self.recs.len() {
            self.recs.push((fate, SegmentRecord::default(), pick.hash));
        }
        let slot = &mut self.recs[self.len];
        slot.0 = fate;
        fill_record(&mut slot.1, host, pick, fate, not_before);
        slot.2 = pick.hash;
        self.len += 1;
    }
}

/// The selection's end of the channel to the writer thread.
struct Sink<'a> {
    batch: Batch,
    progress: &'a Progress,
    to_next: mpsc::SyncSender<Batch>,
    recycled: mpsc::Receiver<Batch>,
    /// False once the writer has stopped (its error comes out of `join`).
    alive: bool,
    /// The filters, applied again to a backlog URL a segment takes.
    filter: &'a UrlFilter,
    /// Where refusals are counted.
    counts: &'a mut Counts,
}

impl Sink<'_> {
    fn push(&mut self, fate: Fate, host: &HostNow, pick: &Pick, sel: &mut Selection) {
        let waited = matches!(
            pick.meta.via,
            Via::Backlog | Via::Recrawl | Via::SitemapFile
        );
        if fate == Fate::Segment && waited && !self.admits(pick) {
            return;
        }
        match fate {
            Fate::Segment => {
                sel.scheduled += 1;
                sel.refetches += u64::from(pick.meta.via == Via::Recrawl);
            }
            Fate::Backlog => sel.backlogged += 1,
            Fate::Fetched => sel.already_fetched += 1,
        }
        self.batch
            .push(fate, &host.name, pick, host.plan.not_before);
        if self.batch.len == BATCH {
            self.send();
        }
    }

    /// True if a backlog URL still passes the filters (the scope may have
    /// been narrowed since it went in); a refusal is counted.
    fn admits(&mut self, pick: &Pick) -> bool {
        match url::Url::parse(&pick.url) {
            Ok(u) => match self.filter.check(&u, pick.meta.hops) {
                Ok(()) => true,
                Err(reason) => {
                    self.counts.reject(reason);
                    false
                }
            },
            Err(_) => {
                self.counts.invalid_urls += 1;
                false
            }
        }
    }

    /// Counts the URLs read from the backlog and their bad lines.
    fn count_waiting(&mut self, waiting: &Waiting) {
        if let Some(b) = &waiting.backlog {
            self.counts.backlog_in = b.read;
            self.counts.bad_lines += b.bad_lines;
        }
    }

    fn send(&mut self) {
        let next = self.recycled.try_recv().unwrap_or(Batch {
            recs: Vec::new(),
            len: 0,
        });
        let full = std::mem::replace(&mut self.batch, next);
        self.progress.selected(full.len as u64);
        self.alive &= self.to_next.send(full).is_ok();
    }
}

/// The host whose URLs the selection is going through, its plan, and the
/// selection's counts when it started (what it sent where).
struct HostNow {
    name: String,
    plan: HostPlan,
    /// `backlogged` and `scheduled - refetches` when the host started.
    started: (u64, u64),
}

/// Ends the current host: its best URLs to the segments, the rest to the
/// backlog, counted by why they wait. Returns the URLs not fetched before
/// that it scheduled (for its domain's page budget).
fn end_host(cap: &mut HostCap, host: &HostNow, sink: &mut Sink, sel: &mut Selection) -> u64 {
    let before = sel.scheduled;
    let (capped, limited) = cap
        .finish_host(&mut |p: &Pick, fate| {
            sink.push(fate, host, p, sel);
            Ok::<_, ()>(())
        })
        .unwrap_or((false, false));
    sel.hosts += u64::from(sel.scheduled > before);
    let waiting = sel.backlogged - host.started.0;
    // A page budget holds a host back only if it cut; the other holds take
    // every URL over what the host gets.
    let held = host.plan.held.filter(|h| {
        limited
            || !matches!(
                h,
                crate::round::caps::Hold::HostPages | crate::round::caps::Hold::DomainPages
            )
    });
    match held {
        Some(reason) if waiting > 0 => {
            sel.held
                .entry(reason.name())
                .or_default()
                .add(&host.name, waiting);
        }
        _ if capped => {
            sel.capped_urls += waiting;
            if host.plan.cap == 0 {
                sel.waiting_hosts += 1;
            } else if host.plan.by_time {
                sel.time_capped_hosts += 1;
            } else {
                sel.capped_hosts += 1;
            }
        }
        _ => {}
    }
    (sel.scheduled - sel.refetches) - host.started.1
}

/// What [`select`] did.
pub(super) struct Selected {
    pub(super) selection: Selection,
    /// The segments and the backlog written.
    pub(super) written: Written,
    /// The registrable domains met (when asked for).
    pub(super) domains: Vec<String>,
    /// Waiting URLs not kept to catch copies ([`HostWaiting`]), and the
    /// first host that had some, with how many.
    pub(super) unchecked: (u64, (String, u64)),
}

/// What the selection reads: the round's URLs out of the merge, the
/// backlog beside them, and the filters for the backlog's URLs.
pub(super) struct Inputs<'a> {
    pub(super) merger: Merger,
    /// The in-links the round found to URLs that wait.
    pub(super) links: WaitingLinks,
    /// The backlog and the URLs due again.
    pub(super) waiting: Waiting<'a>,
    /// The backlog goes into the new one as it is, none of it scheduled.
    pub(super) carry: bool,
    pub(super) filter: &'a UrlFilter,
    /// The share of a host's cap for refetches.
    pub(super) share: f64,
    /// Which of a host's URLs enter the segment first.
    pub(super) order: UrlOrder,
    /// Bytes for the waiting URLs of one host ([`HostWaiting`]).
    pub(super) memory: u64,
}

/// Every URL out of the merge, and every URL of the backlog, is scheduled:
/// the best of each host, as many as its [`Budget`] plans, into the
/// segments, the rest into the backlog. With `collect_domains`, the
/// registrable domains met are collected too (for `scope.seeds`). Three
/// threads in a pipeline: this one merges and caps; the next inserts into
/// `seen.bloom` (in output order, so that the file is the same on every
/// run); the last formats and compresses the segments and the backlog.
pub(super) fn select(
    inputs: Inputs<'_>,
    seen: &Seen,
    progress: &Progress,
    output: Output,
    budget: Budget,
    collect_domains: bool,
    counts: &mut Counts,
) -> Result<Selected, Error> {
    let Inputs {
        merger,
        links,
        mut waiting,
        carry,
        filter,
        share,
        order,
        memory,
    } = inputs;
    let mut unchecked = (0, (String::new(), 0));
    let mut selection = Selection::default();
    let mut domains = Vec::new();
    let (to_seen, from_select) = mpsc::sync_channel::<Batch>(4);
    let (to_writer, from_seen) = mpsc::sync_channel::<Batch>(4);
    let (recycle, recycled) = mpsc::sync_channel::<Batch>(12);
    let written = std::thread::scope(|s| {
        // Inserting into the Bloom filter is mostly waiting for memory: a
        // stage of its own, between the selection and the writer.
        std::thread::Builder::new()
            .name("seen".into())
            .spawn_scoped(s, move || insert_seen(seen, from_select, to_writer))
            .expect("the seen thread starts");
        let writer = std::thread::Builder::new()
            .name("write".into())
            .spawn_scoped(s, move || write_batches(output, from_seen, recycle))
            .expect("the writer thread starts");

        let mut chooser = Chooser {
            sink: Sink {
                batch: Batch {
                    recs: Vec::new(),
                    len: 0,
                },
                progress,
                to_next: to_seen,
                recycled,
                alive: true,
                filter,
                counts,
            },
            cap: {
                let mut cap = HostCap::new(0);
                cap.set_share(share);
                cap.set_order(order);
                cap
            },
            host: HostNow {
                name: String::new(),
                plan: HostPlan::none(),
                started: (0, 0),
            },
            current: Vec::new(),
            budget,
            sel: &mut selection,
            domains: collect_domains.then_some(&mut domains),
            carry,
            waiting_urls: HostWaiting::new(memory),
            links,
        };
        let result = chooser.choose(merger, &mut waiting);
        chooser.sel.waiting_links = chooser.links.added;
        unchecked = (
            chooser.waiting_urls.unchecked,
            std::mem::take(&mut chooser.waiting_urls.unchecked_host),
        );
        let mut sink = chooser.sink;
        sink.count_waiting(&waiting);
        if sink.batch.len > 0 {
            sink.send();
        }
        drop(sink);
        let written = writer.join().expect("the writer thread does not panic");
        result?;
        written
    })?;
    Ok(Selected {
        selection,
        written,
        domains,
        unchecked,
    })
}

/// The `seen` stage of [`select`]: inserts each batch's new URLs into the
/// filter and passes the batch on to the writer.
fn insert_seen(
    seen: &Seen,
    from_select: mpsc::Receiver<Batch>,
    to_writer: mpsc::SyncSender<Batch>,
) {
    for batch in from_select {
        for (_, _, hash) in &batch.recs[..batch.len] {
            if *hash != ALREADY_SEEN {
                seen.insert(*hash);
            }
        }
        if to_writer.send(batch).is_err() {
            return;
        }
    }
}

/// The `write` stage of [`select`]: writes each batch to the segments or
/// the backlog and hands its buffers back; returns what was written.
fn write_batches(
    mut output: Output,
    from_seen: mpsc::Receiver<Batch>,
    recycle: mpsc::SyncSender<Batch>,
) -> Result<Written, Error> {
    for batch in from_seen {
        for (fate, rec, _) in &batch.recs[..batch.len] {
            output.write(*fate, rec)?;
        }
        let _ = recycle.try_send(Batch { len: 0, ..batch });
    }
    output.finish()
}

/// The selection, host by host: the current host's plan and cap, and where
/// its URLs go.
struct Chooser<'a, 's> {
    sink: Sink<'s>,
    cap: HostCap,
    host: HostNow,
    /// `domain TAB host TAB` of the current host.
    current: Vec<u8>,
    budget: Budget,
    sel: &'a mut Selection,
    /// The registrable domains met, when collected.
    domains: Option<&'a mut Vec<String>>,
    /// The backlog is carried into the new one, not scheduled (`inject`).
    carry: bool,
    /// The URLs of the current host that wait already.
    waiting_urls: HostWaiting,
    /// The in-links the round found to URLs that wait, added to theirs.
    links: WaitingLinks,
}

impl Chooser<'_, '_> {
    /// Takes every URL out of the merge, host by host, each host's waiting
    /// URLs with it, and the waiting hosts between; stops early when the
    /// writer has stopped.
    fn choose(&mut self, mut merger: Merger, waiting: &mut Waiting) -> Result<(), Error> {
        let mut key = Vec::new();
        let mut meta = Meta::decode(&[0; Meta::ENCODED_LEN]);
        let mut carried = Vec::new();
        // A refetch's last fetch, when the URL carries one (a leftover).
        let mut prior = SegmentRecord::default();
        while self.sink.alive && merger.next_into(&mut key, &mut meta, &mut carried)? {
            let Some(parts) = split_key(&key) else {
                continue;
            };
            let prefix = host_prefix(&key);
            if prefix != self.current.as_slice() {
                // The waiting hosts before this one, then this one
                // with its waiting URLs.
                self.backlog_before(waiting, Some(prefix))?;
                self.start(prefix, parts.domain, parts.host, waiting)?;
                if waiting.peek() == Some(prefix) {
                    self.backlog_host(waiting)?;
                }
            }
            if self.waiting_urls.holds(parts.hash) {
                // It waits already: that copy is the one handed out.
                self.sink.counts.waiting_copies += 1;
                continue;
            }
            self.sel.unique += 1;
            let prior = (!carried.is_empty()).then(|| {
                LastFetch::apply(&carried, &mut prior);
                &prior
            });
            // (A leftover copy of a URL may have gained links meanwhile.)
            self.links.add_to(parts.hash, &mut meta);
            self.add(parts.url, meta, parts.hash, prior);
        }
        self.backlog_before(waiting, None)?;
        self.end_host();
        Ok(())
    }

    /// Ends the current host and starts `host` (of `domain`), planned,
    /// with the URLs of it that wait in a segment not yet fetched.
    fn start(
        &mut self,
        prefix: &[u8],
        domain: &str,
        host: &str,
        waiting: &mut Waiting,
    ) -> Result<(), Error> {
        if let Some(domains) = &mut self.domains
            && domains.last().is_none_or(|d| d != domain)
        {
            domains.push(domain.to_string());
        }
        self.end_host();
        self.current.clear();
        self.current.extend_from_slice(prefix);
        self.host.name.clear();
        self.host.name.push_str(host);
        self.host.plan = self.budget.plan(domain, host)?;
        self.host.started = (self.sel.backlogged, self.sel.scheduled - self.sel.refetches);
        self.cap.set_cap(self.host.plan.cap);
        self.cap.set_new_limit(self.host.plan.new_limit);
        self.links.start(prefix)?;
        let urls = &mut self.waiting_urls;
        urls.clear();
        waiting.pending_urls(prefix, |url| {
            urls.insert(host, BloomHash::of(url.as_bytes()));
        })?;
        Ok(())
    }

    fn end_host(&mut self) {
        let new = end_host(&mut self.cap, &self.host, &mut self.sink, self.sel);
        self.budget.took_new(new);
    }

    /// A URL of the current host out of the merge.
    fn add(
        &mut self,
        url: &str,
        meta: Meta,
        hash: common::bloom::BloomHash,
        prior: Option<&SegmentRecord>,
    ) {
        let Chooser {
            sink,
            cap,
            host,
            sel,
            ..
        } = self;
        if meta.fetched {
            let pick = Pick::new(url.to_string(), meta, hash);
            sink.push(Fate::Fetched, host, &pick, sel);
            return;
        }
        if meta.exempt {
            sel.reentered += 1;
        } else {
            sel.new += 1;
            sel.rescued += u64::from(meta.rescued);
        }
        cap.add(url, meta, hash, prior, &mut |p: &Pick, fate| {
            sink.push(fate, host, p, sel);
            Ok::<_, ()>(())
        })
        .unwrap_or(());
    }

    /// The backlog's hosts that come before `prefix` (all of them if
    /// `None`), each scheduled on its own.
    fn backlog_before(
        &mut self,
        backlog: &mut Waiting,
        prefix: Option<&[u8]>,
    ) -> Result<(), Error> {
        while let Some(next) = backlog.peek() {
            if prefix.is_some_and(|p| next >= p) {
                return Ok(());
            }
            let next = next.to_vec();
            let scheduled = !self.carry && !backlog.next_is_out_of_order();
            if scheduled && next != self.current {
                let (domain, host) = crate::round::backlog::split_host_key(&next);
                let (domain, host) = (domain.to_string(), host.to_string());
                self.start(&next, &domain, &host, backlog)?;
            }
            self.backlog_host(backlog)?;
        }
        Ok(())
    }

    /// The backlog's URLs of its next host (the current one, unless it is
    /// carried or out of order).
    fn backlog_host(&mut self, backlog: &mut Waiting) -> Result<(), Error> {
        backlog.take_host(|rec, out_of_order| {
            let fate = if out_of_order || self.carry {
                Fate::Backlog
            } else {
                Fate::Segment
            };
            self.waiting(rec, fate, out_of_order);
            Ok(())
        })
    }

    /// A URL of the backlog: to the current host's cap (`Fate::Segment`),
    /// or straight back to the backlog (carried, or `out_of_order`).
    fn waiting(&mut self, rec: &SegmentRecord, fate: Fate, out_of_order: bool) {
        let mut meta = Meta::of_backlog(rec);
        if fate == Fate::Segment {
            let url_hash = BloomHash::of(rec.url.as_bytes());
            if !self.waiting_urls.insert(&rec.host, url_hash) {
                // A second line of a URL that waits (or waits in a segment
                // not yet fetched): one is enough.
                self.sink.counts.waiting_copies += 1;
                return;
            }
            // The links later rounds found to it.
            self.links.add_to(url_hash, &mut meta);
        }
        // Its URL went into seen.bloom when it went into the backlog.
        let hash = ALREADY_SEEN;
        self.sel.unique += 1;
        if fate == Fate::Backlog {
            self.sel.out_of_order += u64::from(out_of_order);
            let pick = Pick {
                url: rec.url.clone(),
                meta,
                hash,
                etag: rec.etag.clone(),
                last_modified: rec.last_modified.clone(),
                digest: rec.digest.clone(),
                fetched: rec.fetched,
                record_id: rec.record_id.clone(),
            };
            let host = HostNow {
                name: rec.host.clone(),
                plan: self.host.plan,
                started: (0, 0),
            };
            self.sink.push(Fate::Backlog, &host, &pick, self.sel);
            return;
        }
        self.add(&rec.url, meta, hash, Some(rec));
    }
}
