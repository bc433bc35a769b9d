//! What the programs that serve a web to scripts (`demo-web`, `scale-web`)
//! share: errors of one line that name what they concern, and a serving
//! run's life as a script sees it (a ready file, signals).

use std::io;
use std::path::Path;

/// An error worth one line: what it concerns and what happened.
#[derive(Debug)]
pub struct Failure {
    /// The file, address or part it concerns.
    pub subject: String,
    /// What happened.
    pub error: io::Error,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.subject, self.error)
    }
}

/// Turns an I/O error into a [`Failure`] about `subject`:
/// `.map_err(fail(path))?`.
pub fn fail(subject: impl AsRef<Path>) -> impl FnOnce(io::Error) -> Failure {
    let subject = subject.as_ref().display().to_string();
    move |error| Failure { subject, error }
}

/// A serving run's life as scripts see it: the ready file (`--ready-file`)
/// is cleared first, written with the port and pid once the hosts answer,
/// and removed when the run ends (drop the server before this).
pub struct Lifetime<'a> {
    ready_file: Option<&'a Path>,
    signals: signal_hook::iterator::Signals,
}

impl<'a> Lifetime<'a> {
    /// Clears a stale ready file and installs the handlers of SIGTERM,
    /// SIGINT and `more` signals before anything is served, so that a
    /// signal arriving while the hosts start up is not lost.
    pub fn begin(
        ready_file: Option<&'a Path>,
        more: &[libc::c_int],
    ) -> Result<Lifetime<'a>, Failure> {
        if let Some(ready) = ready_file {
            match std::fs::remove_file(ready) {
                Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(fail(ready)(e)),
                _ => {}
            }
        }
        let mut wanted = vec![signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT];
        wanted.extend_from_slice(more);
        let signals =
            signal_hook::iterator::Signals::new(wanted).map_err(fail("signal handlers"))?;
        Ok(Lifetime {
            ready_file,
            signals,
        })
    }

    /// Writes the ready file: the hosts answer on `port`.
    pub fn ready(&self, port: u16) -> Result<(), Failure> {
        if let Some(ready) = self.ready_file {
            let text = format!("port={port}\npid={}\n", std::process::id());
            common::atomic::write_atomic(ready, text.as_bytes()).map_err(fail(ready))?;
        }
        Ok(())
    }

    /// Blocks until a signal comes; returns it.
    pub fn next_signal(&mut self) -> libc::c_int {
        self.signals
            .forever()
            .next()
            .unwrap_or(signal_hook::consts::SIGTERM)
    }

    /// Blocks until SIGINT or SIGTERM; returns its name.
    pub fn wait_for_stop(&mut self) -> &'static str {
        loop {
            match self.next_signal() {
                signal_hook::consts::SIGINT => return "SIGINT",
                signal_hook::consts::SIGTERM => return "SIGTERM",
                _ => {}
            }
        }
    }
}

impl Drop for Lifetime<'_> {
    fn drop(&mut self) {
        if let Some(ready) = self.ready_file {
            let _ = std::fs::remove_file(ready);
        }
    }
}
