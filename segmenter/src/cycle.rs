//! The crawl cycle's decisions: what a crawl does next, and why. A driver
//! (`scripts/crawl.sh`, or a cluster driver) asks [`decide`] between steps
//! (`segmenter next CRAWL --record`, [`crate::commands::next`]), carries out the step
//! it is given in its own process, and asks again:
//!
//! ```text
//! inject      no segment yet: inject the seeds (then `injected N`)
//! fetch ID    fetch the oldest waiting segment (`resume ID`: go on with a
//!             fetch that was cut)
//! segment     run the segmenter: a fetched run is not consumed yet (the
//!             round's own, or one a killed run left), or nothing waits to
//!             be fetched but the backlog or due refetches may fill a segment
//! round N     round N ended: its round line (and journal line) are written
//! wait S      every host left is held: wait S seconds, then fetch
//! stop CODE   stop, with the exit code the driver exits with
//! ```
//!
//! The rules, in the order they apply:
//!
//! 1. a step that failed stops the crawl: exit 3 for a segmenter step that
//!    found too little disk space, else 1 naming the step and its log; a
//!    fetch that ended at the free-disk floor (stop reason `disk`) stops it
//!    with exit 3 too; a fetch that could not upload to the WARC store
//!    (exit 4) stops it with exit 4. The round stays open: the next run
//!    goes on with it;
//! 2. the open round ends (`round N`) once its segment is fetched and the
//!    fetched run consumed (journal end `stop` if a signal or `STOP` cut
//!    its fetch, `done` otherwise);
//! 3. a `STOP` file stops the crawl (exit 0), except between a fetch this
//!    driver completed and its round's segmenter run; a round whose fetch
//!    was handed out but is not complete ends there (journal end `stop`);
//! 4. no segment at all: `inject`;
//! 5. a fetched run not consumed: `segment`;
//! 6. right after a round that got no page because every host left was
//!    held: wait for the first of them (at most [`MAX_HELD_WAITS`] rounds
//!    in a row, each wait at most the crawl's `max_retry_after`,
//!    [`Lookup::held_wait_limit`]), else stop; after a complete round that got no HTTP
//!    response at all, wrote no more URLs than it had, with an empty
//!    backlog: stop (`nothing fetchable left`; the next run tries again);
//! 7. a segment waits: `fetch` (or `resume`) it; unless the crawl has ended
//!    for now: the last round was complete, got no HTTP response and found
//!    nothing new, the backlog is empty, only what that round wrote waits,
//!    and nothing is due for a refetch: stop (exit 0), naming when the next
//!    refetch comes due, without a round;
//! 8. nothing waits: if the backlog or the fetch history may fill a
//!    segment, `segment` once; then (or else) stop, saying why and when the
//!    next refetch comes due.
//!
//! A round is numbered when it opens, from the round journal
//! (`rounds.v1.tsv`, [`common::rounds`]); the round in progress and the
//! step the driver was last given are kept in `round.json`
//! ([`DriverState`]). "This driver" is told by the time it started
//! (`--since`): steps and rounds since then are its own; a step recorded
//! before (by a run killed or stopped) is not timed and not trusted.
//!
//! [`decide`] reads nothing itself: [`Facts`] holds the crawl's state as
//! read from its files, and [`Lookup`] answers the few questions that cost a
//! read of a file (a segment's summary, the backlog), asked only when a
//! rule needs them. Both are filled from the crawl directory by
//! [`read::on_disk`], or from every shard of a sharded crawl by
//! [`sharded::on_shards`] (whose `segment` step is the reduce array).

pub mod read;
pub mod sharded;
#[cfg(test)]
mod tests;

use common::crawldir::CrawlDir;
use common::fetched::RunStatus;
use common::rounds::{End, Figures, Round};
use serde::{Deserialize, Serialize};

/// Rounds in a row that found every host held, each followed by a wait for
/// the first of them; after that the driver stops (the next run goes on).
pub const MAX_HELD_WAITS: usize = 5;
/// Version of `round.json` ([`DriverState`]).
pub const STATE_VERSION: u32 = 1;

/// What the driver does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// `segmenter inject CRAWL SEEDS`.
    Inject,
    /// The injection is done (arg: the URLs injected); nothing to run.
    Injected,
    /// `fetcher fetch CRAWL ID` of a segment not fetched yet.
    Fetch,
    /// `fetcher fetch CRAWL ID` of a segment whose fetch was cut.
    Resume,
    /// `segmenter run CRAWL`.
    Segment,
    /// Sleep (arg: seconds), then ask again.
    Wait,
    /// A round ended (arg: its number; reason: its round line).
    Round,
    /// Stop (arg: the exit code).
    Stop,
}

impl Kind {
    /// The word of the answer line.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Inject => "inject",
            Kind::Injected => "injected",
            Kind::Fetch => "fetch",
            Kind::Resume => "resume",
            Kind::Segment => "segment",
            Kind::Wait => "wait",
            Kind::Round => "round",
            Kind::Stop => "stop",
        }
    }
}

/// A step handed to the driver.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    /// What it is.
    pub kind: Kind,
    /// Its argument (segment, seconds, exit code, ...).
    pub arg: Option<String>,
    /// The round whose log it writes to.
    pub round: Option<u64>,
    /// When it was handed out, Unix milliseconds.
    pub started_ms: i64,
}

/// The round in progress.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenRound {
    /// Its number.
    pub number: u64,
    /// When it opened, Unix milliseconds.
    pub started_ms: i64,
    /// The segment it fetches, once a fetch was handed out.
    pub segment: Option<String>,
    /// URLs in that segment then (`None`: unreadable).
    pub urls: Option<u64>,
    /// Time spent in its fetch steps, milliseconds.
    pub fetch_ms: u64,
    /// Time spent in its segmenter steps, milliseconds.
    pub segmenter_ms: u64,
    /// A segmenter run was tried with nothing waiting to be fetched.
    pub tried: bool,
}

/// `round.json`: the round in progress and the step last handed out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DriverState {
    /// [`STATE_VERSION`].
    pub version: u32,
    /// The round in progress.
    pub open: Option<OpenRound>,
    /// The step last handed out.
    pub step: Option<Step>,
}

/// The crawl's state, as read from its files.
#[derive(Debug, Clone)]
pub struct Facts {
    /// The crawl directory (for paths in messages).
    pub crawl: CrawlDir,
    /// Now, Unix milliseconds.
    pub now_ms: i64,
    /// When the driver started: steps and rounds since are its own
    /// (`i64::MAX`: none is).
    pub since_ms: i64,
    /// The exit code of the driver's last step (0 if it was not run).
    pub exit_code: i32,
    /// `CRAWL/STOP` exists.
    pub stop_file: bool,
    /// Every segment, oldest first.
    pub segments: Vec<String>,
    /// Segments not fetched to completion, oldest first.
    pub pending: Vec<String>,
    /// Complete fetched runs not consumed yet.
    pub unconsumed: Vec<String>,
    /// `round.json`.
    pub state: DriverState,
    /// The round journal.
    pub rounds: Vec<Round>,
    /// The number the next round gets.
    pub next_number: u64,
    /// A sharded crawl, seen as one ([`sharded`]): its steps are arrays
    /// of tasks (named so in messages).
    pub sharded: bool,
}

/// A segment's URLs, and how many have a not-before time (the earliest).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SegmentFacts {
    /// URLs in it.
    pub urls: u64,
    /// URLs with a not-before time.
    pub held_urls: u64,
    /// The earliest not-before time, Unix milliseconds.
    pub earliest_not_before_ms: Option<i64>,
}

/// What the fetch history holds for the cycle.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HistoryFacts {
    /// URLs in it.
    pub urls: u64,
    /// Of them, URLs due for a refetch now.
    pub due_now: u64,
    /// When the first URL not due now comes due, Unix milliseconds.
    pub next_due_ms: Option<i64>,
}

/// The questions that cost a read of a file. An error says which file and
/// why; it stops the crawl with exit code 1.
pub trait Lookup {
    /// What fetching segment `id` did; `None` if it was never fetched.
    fn fetched(&self, id: &str) -> Result<Option<RunStatus>, String>;
    /// The URLs of segment `id`.
    fn segment(&self, id: &str) -> Result<SegmentFacts, String>;
    /// The figures of the `segmenter run` that consumed fetched run `id`.
    fn figures(&self, id: &str) -> Result<Figures, String>;
    /// URLs waiting in the backlog.
    fn backlog_urls(&self) -> Result<u64, String>;
    /// What the fetch history holds: its URLs, those due now, the next due.
    fn history(&self) -> Result<HistoryFacts, String>;
    /// The longest wait for held hosts: the crawl's `max_retry_after`
    /// (`[fetcher]` of `crawl.toml`, 10 minutes by default), the longest
    /// a `Retry-After` holds a host. A robots.txt to ask again or a
    /// `Retry-After` is waited out; a host held longer (backed off, parked
    /// for a day) is left to a later run, which cron starts anyway.
    fn held_wait_limit(&self) -> Result<std::time::Duration, String>;
}

/// The answer: the step, why, and what to record.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    /// The step.
    pub kind: Kind,
    /// Its argument.
    pub arg: Option<String>,
    /// The round whose log the step writes to.
    pub round: Option<u64>,
    /// Why (for `round`: the round line; for `stop` and `wait`: what the
    /// driver prints).
    pub reason: String,
    /// `round.json` after this step is handed out.
    pub state: DriverState,
    /// A round that ended: its journal line.
    pub ended: Option<Round>,
    /// A round that did nothing and is given up: its log is removed, its
    /// number taken again by the next round.
    pub discarded: Option<u64>,
}

impl Decision {
    /// The step's log: `logs/inject.log` or `logs/round-NNNNN.log`.
    pub fn log(&self, crawl: &CrawlDir) -> Option<std::path::PathBuf> {
        log_of(crawl, self.kind, self.round)
    }
}

fn log_of(crawl: &CrawlDir, kind: Kind, round: Option<u64>) -> Option<std::path::PathBuf> {
    match (kind, round) {
        (Kind::Inject, _) => Some(crawl.inject_log_path()),
        (_, Some(n)) => Some(crawl.round_log_path(n)),
        _ => None,
    }
}

/// What the crawl does next, by the rules above.
pub fn decide(facts: &Facts, look: &impl Lookup) -> Decision {
    let mut d = Decider::new(facts, look);
    match d.rules() {
        Ok(decision) => decision,
        Err(why) => d.stop(1, why),
    }
}

/// One decision being made.
struct Decider<'a, L> {
    f: &'a Facts,
    look: &'a L,
    /// The round in progress, with the time of the driver's last step.
    open: Option<OpenRound>,
    /// The driver's last step, if this driver was given it.
    own: Option<Step>,
}

impl<'a, L: Lookup> Decider<'a, L> {
    fn new(f: &'a Facts, look: &'a L) -> Decider<'a, L> {
        let own = f.state.step.clone().filter(|s| s.started_ms >= f.since_ms);
        // A round already in the journal (a crash between the journal and
        // round.json) is not open any more.
        let journaled = f.rounds.last().map_or(0, |r| r.number);
        let mut open = f.state.open.clone().filter(|o| o.number > journaled);
        if let (Some(o), Some(step)) = (open.as_mut(), &own)
            && step.round == Some(o.number)
        {
            let took = u64::try_from(f.now_ms - step.started_ms).unwrap_or(0);
            match step.kind {
                Kind::Fetch | Kind::Resume => o.fetch_ms += took,
                Kind::Segment => o.segmenter_ms += took,
                _ => {}
            }
        }
        Decider { f, look, open, own }
    }

    fn rules(&mut self) -> Result<Decision, String> {
        if let Some(d) = self.failed_step() {
            return Ok(d);
        }
        if let Some(d) = self.disk_floor()? {
            return Ok(d);
        }
        if let Some(d) = self.round_end()? {
            return Ok(d);
        }
        if let Some(d) = self.stop_file()? {
            return Ok(d);
        }
        if let Some(d) = self.injection()? {
            return Ok(d);
        }
        if !self.f.unconsumed.is_empty() {
            return self.segment();
        }
        if let Some(d) = self.after_round()? {
            return Ok(d);
        }
        if let Some(d) = self.ended()? {
            return Ok(d);
        }
        match self.f.pending.first() {
            Some(id) => self.fetch(id),
            None => self.nothing_waits(),
        }
    }

    /// The driver's last step, if it is its own and has `kind`.
    fn own_is(&self, kinds: &[Kind]) -> Option<&Step> {
        self.own.as_ref().filter(|s| kinds.contains(&s.kind))
    }

    fn name(&self) -> String {
        self.f.crawl.root().display().to_string()
    }

    /// The answer `kind` (recorded as the driver's step).
    fn answer(
        &self,
        kind: Kind,
        arg: Option<String>,
        round: Option<u64>,
        reason: String,
    ) -> Decision {
        Decision {
            kind,
            arg: arg.clone(),
            round,
            reason,
            state: DriverState {
                version: STATE_VERSION,
                open: self.open.clone(),
                step: Some(Step {
                    kind,
                    arg,
                    round,
                    started_ms: self.f.now_ms,
                }),
            },
            ended: None,
            discarded: None,
        }
    }

    fn stop(&self, code: u8, reason: String) -> Decision {
        self.answer(Kind::Stop, Some(code.to_string()), None, reason)
    }

    /// The open round, opened now if there is none.
    fn open_round(&mut self) -> &mut OpenRound {
        let (number, now) = (self.f.next_number, self.f.now_ms);
        self.open.get_or_insert_with(|| OpenRound {
            number,
            started_ms: now,
            ..OpenRound::default()
        })
    }

    /// Rule 1: the driver's last step failed.
    fn failed_step(&self) -> Option<Decision> {
        let step = self.own.as_ref()?;
        let code = self.f.exit_code;
        if code == 0 {
            return None;
        }
        let name = step_name(step, self.f.sharded);
        let log = log_of(&self.f.crawl, step.kind, step.round)
            .map_or_else(|| "its output".to_string(), |p| p.display().to_string());
        if code == 3 && matches!(step.kind, Kind::Segment | Kind::Inject) {
            return Some(self.stop(
                3,
                format!(
                    "{name} did not start: too little free disk space for {}, nothing changed (see \
                     {log}); free space there, then run again: the crawl goes on where it \
                     stopped",
                    self.name()
                ),
            ));
        }
        if code == 4 && matches!(step.kind, Kind::Fetch | Kind::Resume) {
            return Some(self.stop(
                4,
                format!(
                    "{name} could not upload its WARC files to the WARC store (see {log}); they \
                     are kept in the run's directory and the round stays open: run again once \
                     the store answers, the fetch uploads them and the crawl goes on"
                ),
            ));
        }
        let mut how = format!("exit code {code}");
        if code > 128 {
            how.push_str(&format!(" (killed by signal {})", code - 128));
        }
        Some(self.stop(1, format!("{name} failed with {how}; see {log}")))
    }

    /// Rule 1, for a fetch that stopped at the free-disk floor (exit 3) or
    /// at the crawl's byte budget (exit 0: the crawl is done until the
    /// budget is raised).
    fn disk_floor(&self) -> Result<Option<Decision>, String> {
        let Some(id) = self
            .own_is(&[Kind::Fetch, Kind::Resume])
            .and_then(|s| s.arg.as_deref())
        else {
            return Ok(None);
        };
        let Some(run) = self.look.fetched(id)? else {
            return Ok(None);
        };
        if !run.done {
            return Ok(None);
        }
        let detail = match run.stop_detail.as_str() {
            "" => String::new(),
            d => format!(" ({d})"),
        };
        Ok(match run.stop_reason.as_str() {
            "disk" => Some(self.stop(
                3,
                format!(
                    "the fetch of segment {id} stopped at the free-disk floor{detail}: free \
                     space where {} is, then run again (the next run goes on with this round)",
                    self.name()
                ),
            )),
            "crawl-bytes" => Some(self.stop(
                0,
                format!("the crawl's byte budget is spent{detail}: raise max_crawl_bytes to go on"),
            )),
            _ => None,
        })
    }

    /// Rule 2: the open round's segment is fetched and consumed.
    fn round_end(&mut self) -> Result<Option<Decision>, String> {
        let Some(id) = self.open.as_ref().and_then(|o| o.segment.clone()) else {
            return Ok(None);
        };
        let Some(run) = self.look.fetched(&id)? else {
            return Ok(None);
        };
        if !run.done || self.f.unconsumed.contains(&id) {
            return Ok(None);
        }
        let figures = self.look.figures(&id)?;
        // A fetch that a signal stopped early (the driver passes STOP on as
        // one) ended the round there, though its run was segmented.
        let end = match run.stop_reason.as_str() {
            "signal" => End::Stop,
            _ => End::Done,
        };
        let round = self.close(end, &run, figures);
        let mut d = self.answer(
            Kind::Round,
            Some(round.number.to_string()),
            None,
            round.line(),
        );
        d.ended = Some(round);
        Ok(Some(d))
    }

    /// The open round as a journal line, ending now; no round is open after.
    fn close(&mut self, end: End, run: &RunStatus, figures: Figures) -> Round {
        let open = self.open.take().unwrap_or_default();
        Round {
            number: open.number,
            segment: open.segment,
            started_ms: open.started_ms,
            ended_ms: self.f.now_ms,
            end,
            urls: open.urls,
            pages: run.pages,
            figures,
            stop_reason: run.done.then(|| run.stop_reason.clone()),
            fetch_ms: open.fetch_ms,
            segmenter_ms: open.segmenter_ms,
        }
    }

    /// Rule 3: a STOP file.
    fn stop_file(&mut self) -> Result<Option<Decision>, String> {
        if !self.f.stop_file {
            return Ok(None);
        }
        let fetched = match self.open.as_ref().and_then(|o| o.segment.clone()) {
            Some(id) => self.look.fetched(&id)?,
            None => None,
        };
        let complete = fetched.as_ref().is_some_and(|r| r.done);
        if complete && self.own_is(&[Kind::Fetch, Kind::Resume]).is_some() {
            // The round finishes with its segmenter run first.
            return Ok(None);
        }
        let reason = format!(
            "{} exists; stopping (remove it to go on)",
            self.f.crawl.stop_path().display()
        );
        let has_segment = self.open.as_ref().is_some_and(|o| o.segment.is_some());
        if has_segment && !complete {
            let run = fetched.unwrap_or_default();
            let round = self.close(End::Stop, &run, Figures::default());
            let mut d = self.stop(0, reason);
            d.ended = Some(round);
            return Ok(Some(d));
        }
        Ok(Some(self.stop(0, reason)))
    }

    /// Rule 4: the first step of a crawl, and what it gave.
    fn injection(&self) -> Result<Option<Decision>, String> {
        let injected = self.own_is(&[Kind::Inject]).is_some();
        if self.f.segments.is_empty() {
            if injected {
                return Ok(Some(self.stop(
                    0,
                    format!(
                        "nothing left to fetch in {}: the seeds gave no URL to fetch (see {})",
                        self.name(),
                        self.f.crawl.inject_log_path().display()
                    ),
                )));
            }
            let reason = format!("{} has no segment yet: the seeds are injected", self.name());
            return Ok(Some(self.answer(Kind::Inject, None, None, reason)));
        }
        if !injected {
            return Ok(None);
        }
        let mut urls = 0;
        for id in &self.f.segments {
            urls += self.look.segment(id)?.urls;
        }
        let reason = format!("injected {urls} seed URLs");
        Ok(Some(self.answer(
            Kind::Injected,
            Some(urls.to_string()),
            None,
            reason,
        )))
    }

    /// Rule 5: a fetched run to consume.
    fn segment(&mut self) -> Result<Decision, String> {
        let runs = self.f.unconsumed.join(" ");
        if let Some(step) = self.own_is(&[Kind::Segment]) {
            return Ok(self.stop(
                1,
                format!(
                    "{} ended without consuming the fetched run(s) {runs}; see {}",
                    step_name(step, self.f.sharded),
                    log_of(&self.f.crawl, step.kind, step.round)
                        .map_or_else(String::new, |p| p.display().to_string())
                ),
            ));
        }
        let own_run = self
            .open
            .as_ref()
            .and_then(|o| o.segment.as_ref())
            .is_some_and(|id| self.f.unconsumed.contains(id));
        let reason = if own_run {
            format!("the fetched run {runs} is read for the next segment")
        } else {
            format!(
                "catching up: the fetched run(s) {runs} of an earlier round are not consumed yet"
            )
        };
        let round = self.open_round().number;
        Ok(self.answer(Kind::Segment, None, Some(round), reason))
    }

    /// Rule 6: right after a round of this driver.
    fn after_round(&self) -> Result<Option<Decision>, String> {
        let Some(step) = self.own_is(&[Kind::Round, Kind::Wait]) else {
            return Ok(None);
        };
        let own: Vec<&Round> = self
            .f
            .rounds
            .iter()
            .filter(|r| r.ended_ms >= self.f.since_ms)
            .collect();
        let Some(last) = own.last() else {
            return Ok(None);
        };
        let held = |r: &Round| {
            r.end == End::Done && r.pages == 0 && r.stop_reason.as_deref() == Some("held")
        };
        if held(last) {
            if step.kind == Kind::Wait {
                return Ok(None);
            }
            let streak = own.iter().rev().take_while(|r| held(r)).count();
            return self.held(last, streak).map(Some);
        }
        if step.kind == Kind::Round && self.fetched_nothing(last)? {
            let id = last.segment.as_deref().unwrap_or("-");
            return Ok(Some(self.stop(
                0,
                format!(
                    "nothing fetchable left in {}: no URL of segment {id} got an HTTP response \
                     (see {}); its {} URL(s) wait for the next run",
                    self.name(),
                    self.f.crawl.crawl_log_path(id).display(),
                    last.figures.new_urls
                ),
            )));
        }
        Ok(None)
    }

    /// Every host left was held: wait for the first, or stop.
    fn held(&self, last: &Round, streak: usize) -> Result<Decision, String> {
        let wait = match self.f.pending.first() {
            Some(next) => held_wait(&self.look.segment(next)?, self.f.now_ms),
            None => None,
        };
        // (`held_wait` counts one second past the first not-before time.)
        let limit = match wait {
            Some(_) => self.look.held_wait_limit()?.as_secs_f64().ceil() as u64,
            None => 0,
        };
        let why = match wait {
            Some(seconds) if streak <= MAX_HELD_WAITS && seconds <= limit + 1 => {
                return Ok(self.answer(
                    Kind::Wait,
                    Some(seconds.to_string()),
                    Some(last.number),
                    format!("every host left is held; waiting {seconds}s for the first of them"),
                ));
            }
            Some(_) if streak > MAX_HELD_WAITS => {
                format!(", after {streak} rounds in a row that fetched nothing")
            }
            Some(seconds) => format!(
                " for {seconds}s more, longer than a wait for held hosts lasts \
                 (max_retry_after, {limit}s)"
            ),
            None => String::new(),
        };
        Ok(self.stop(
            0,
            format!(
                "nothing fetchable now in {}: every host left in segment {} is held \
                 (robots.txt to ask again, Retry-After; see {}/){why}; the next run goes on",
                self.name(),
                last.segment.as_deref().unwrap_or("-"),
                self.f.crawl.logs_dir().display()
            ),
        ))
    }

    /// A round that went its course (complete, ended by its tail, its held
    /// hosts or its time limit: not cut by a signal, the disk or a budget)
    /// and got no HTTP response, after which no URL is new and none waits
    /// in the backlog: what is left waits on hosts that cannot be fetched
    /// now.
    fn fetched_nothing(&self, last: &Round) -> Result<bool, String> {
        let complete = matches!(
            last.stop_reason.as_deref(),
            Some("complete" | "tail" | "held" | "time-limit")
        );
        Ok(last.end == End::Done
            && last.pages == 0
            && last.figures.new_urls <= last.urls.unwrap_or(0)
            && complete
            && self.look.backlog_urls()? == 0)
    }

    /// Rule 7, before a fetch: the crawl has ended for now. The journal's
    /// last round (whichever driver ran it) was complete and got no HTTP
    /// response, wrote no URL it did not have, the backlog is empty, what
    /// waits is only what that round wrote (never fetched since), and
    /// nothing of the fetch history is due: another round would fetch
    /// nothing. Stop, saying when the next refetch comes due (a run after
    /// then fetches the URLs left too).
    fn ended(&self) -> Result<Option<Decision>, String> {
        let Some(last) = self.f.rounds.last() else {
            return Ok(None);
        };
        let fetch_handed_out = self.open.as_ref().is_some_and(|o| o.segment.is_some());
        // (A round whose hosts were held is fetched again: they may be
        // asked by now.)
        let held = last.stop_reason.as_deref() == Some("held");
        if self.f.pending.is_empty() || fetch_handed_out || held {
            return Ok(None);
        }
        let Some(number) = last.segment.as_deref().and_then(segment_number) else {
            return Ok(None);
        };
        // Segments the round's own run wrote: numbered after its segment.
        let written = number.saturating_add(last.figures.new_segments);
        let its_own = |id: &String| segment_number(id).is_some_and(|n| n > number && n <= written);
        if !self.f.pending.iter().all(its_own) || !self.fetched_nothing(last)? {
            return Ok(None);
        }
        let mut urls = 0;
        for id in &self.f.pending {
            if self.look.fetched(id)?.is_some() {
                // A fetch of it was started (and cut): it goes on.
                return Ok(None);
            }
            urls += self.look.segment(id)?.urls;
        }
        let h = self.look.history()?;
        if h.due_now > 0 {
            return Ok(None);
        }
        let reason = format!(
            "nothing left to fetch in {} now: the crawl has ended: round {} got no HTTP \
             response (see {}) and found nothing new; its {urls} URL(s) left wait in segment(s) \
             {} for hosts that did not answer, and {}",
            self.name(),
            last.number,
            self.f
                .crawl
                .crawl_log_path(last.segment.as_deref().unwrap_or("-"))
                .display(),
            self.f.pending.join(" "),
            next_refetch(
                &h,
                &format!(
                    "a run after then tries them again (`fetcher fetch {}` tries them now)",
                    self.name()
                )
            )
        );
        Ok(Some(self.stop(0, reason)))
    }

    /// Rule 7: fetch segment `id`.
    fn fetch(&mut self, id: &str) -> Result<Decision, String> {
        let run = self.look.fetched(id)?;
        if let Some(step) = self.own_is(&[Kind::Fetch, Kind::Resume])
            && step.arg.as_deref() == Some(id)
        {
            // The fetcher ended well without completing the run: asking
            // again would do the same.
            let (name, log) = (
                step_name(step, self.f.sharded),
                log_of(&self.f.crawl, step.kind, step.round)
                    .map_or_else(String::new, |p| p.display().to_string()),
            );
            let missing = if self.f.sharded {
                format!(
                    "in every shard that has it: fetched/{id}/DONE and fetched/{id}/mapped/DONE \
                     under {}/JJJ/",
                    self.f.crawl.root().join("shards").display()
                )
            } else {
                format!("no DONE in {}", self.f.crawl.fetched_dir(id).display())
            };
            return Ok(self.stop(
                1,
                format!("{name} ended without completing the run ({missing}); see {log}"),
            ));
        }
        let urls = self.look.segment(id).ok().map(|s| s.urls);
        let open = self.open_round();
        if open.segment.as_deref() != Some(id) {
            open.segment = Some(id.to_string());
            open.urls = urls;
        }
        let round = open.number;
        let (kind, reason) = match run {
            Some(_) => (
                Kind::Resume,
                format!("segment {id} was partly fetched: the fetch goes on where it stopped"),
            ),
            None => (Kind::Fetch, format!("segment {id} waits to be fetched")),
        };
        Ok(self.answer(kind, Some(id.to_string()), Some(round), reason))
    }

    /// Rule 8: nothing waits to be fetched.
    fn nothing_waits(&mut self) -> Result<Decision, String> {
        let tried =
            self.own_is(&[Kind::Segment]).is_some() && self.open.as_ref().is_some_and(|o| o.tried);
        let backlog = self.look.backlog_urls()?;
        let h = self.look.history()?;
        let due = h.due_now;
        if !tried && (backlog > 0 || due > 0) {
            let open = self.open_round();
            open.tried = true;
            let round = open.number;
            let reason = format!(
                "nothing waits to be fetched: {backlog} URL(s) in the backlog and {due} due for \
                 a refetch may fill a segment"
            );
            return Ok(self.answer(Kind::Segment, None, Some(round), reason));
        }
        let name = self.name();
        let reason = if backlog > 0 {
            format!(
                "nothing to fetch now in {name}: {backlog} URL(s) wait in the backlog for hosts \
                 that may not be asked yet, or held by a budget (the `held` and `left waiting` \
                 lines of the last round's log say which); a later run goes on"
            )
        } else if h.urls > 0 {
            format!(
                "nothing left to fetch in {name} now: the crawl has ended: no new URL, and {}",
                next_refetch(&h, "a run after then refetches them")
            )
        } else {
            format!("nothing left to fetch in {name}")
        };
        // A round that fetched nothing is given up; its number is taken
        // again, and its log (the segmenter's try) goes.
        let discarded = match self.open.take() {
            Some(o) if o.segment.is_none() => Some(o.number),
            kept => {
                self.open = kept;
                None
            }
        };
        let mut d = self.stop(0, reason);
        d.discarded = discarded.filter(|_| tried);
        Ok(d)
    }
}

/// The number at the start of a segment ID (`00012-p01` → 12).
fn segment_number(id: &str) -> Option<u64> {
    let digits = id.split('-').next()?;
    digits.parse().ok()
}

/// When the fetch history has something to refetch next, said for a stop
/// message: "none of its N URL(s) is due for a refetch before DATE: THEN",
/// or that none will come due.
fn next_refetch(h: &HistoryFacts, then: &str) -> String {
    match h.next_due_ms {
        Some(ms) => format!(
            "none of the {} URL(s) of the fetch history is due for a refetch before {}: {then}",
            h.urls,
            common::timefmt::iso_seconds(common::timefmt::from_unix_millis(ms))
        ),
        None if h.urls > 0 => format!(
            "none of the {} URL(s) of the fetch history will come due (each is retired)",
            h.urls
        ),
        None => "the fetch history is empty".to_string(),
    }
}

/// The step as the driver names it: `fetcher fetch 00003`, `segmenter
/// run`; for a sharded crawl, the array of tasks it is (`the fetch array
/// of 00003`, `the reduce array`).
pub fn step_name(step: &Step, sharded: bool) -> String {
    let id = step.arg.as_deref().unwrap_or("");
    match step.kind {
        Kind::Inject => "segmenter inject".into(),
        Kind::Fetch | Kind::Resume if sharded => format!("the fetch array of {id}"),
        Kind::Fetch | Kind::Resume => format!("fetcher fetch {id}"),
        Kind::Segment if sharded => "the reduce array".into(),
        Kind::Segment => "segmenter run".into(),
        Kind::Wait => "waiting for held hosts".into(),
        other => other.as_str().into(),
    }
}

/// Seconds until the first URL of a segment whose URLs all have a
/// not-before time may be fetched (0 if some URL has none; `None` for an
/// empty segment).
pub fn held_wait(segment: &SegmentFacts, now_ms: i64) -> Option<u64> {
    if segment.urls == 0 {
        return None;
    }
    if segment.held_urls < segment.urls {
        return Some(0);
    }
    let at = segment.earliest_not_before_ms?.div_euclid(1000);
    let now = now_ms.div_euclid(1000);
    Some(if at > now { (at - now + 1) as u64 } else { 1 })
}
