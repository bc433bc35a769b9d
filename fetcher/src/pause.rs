//! Testing hook: with `FETCHER_PAUSE_AT=NAME` in the environment, the
//! fetcher prints `fetcher: paused at NAME` to stderr and sleeps (at most a
//! minute) when a worker reaches that point, so that a test can `kill -9`
//! it exactly there. Points: `robots-read` (a robots.txt response read,
//! before it is stored or its rules are used).

use std::time::Duration;

/// The variable that names the point.
const VARIABLE: &str = "FETCHER_PAUSE_AT";

/// Pauses at `name` when the testing hook asks for it.
pub fn pause_point(name: &str) {
    if std::env::var_os(VARIABLE).is_some_and(|v| v == name) {
        common::runlog::say(format_args!("paused at {name}"));
        std::thread::sleep(Duration::from_secs(60));
    }
}
