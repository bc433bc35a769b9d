//! This process's clock ([`Instant`]) and Unix milliseconds, the time that
//! `hosts.db` and the contacts journals keep.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// A moment of this process's clock as Unix milliseconds (rounded up, so
/// that a wait read back is never shorter).
pub fn unix_ms(at: Instant) -> i64 {
    let now = Instant::now();
    let base = now_ms();
    if at >= now {
        let ahead = at - now;
        base.saturating_add(i64::try_from(ahead.as_micros().div_ceil(1000)).unwrap_or(i64::MAX))
    } else {
        base.saturating_sub(i64::try_from((now - at).as_millis()).unwrap_or(i64::MAX))
    }
}

/// Unix milliseconds as a moment of this process's clock (a time already
/// past is now).
pub fn instant_of(ms: i64) -> Instant {
    let now = Instant::now();
    let ahead = ms.saturating_sub(now_ms());
    if ahead > 0 {
        now + Duration::from_millis(ahead as u64)
    } else {
        now
    }
}
