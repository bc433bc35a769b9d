//! Requests in flight: the slots that bound them (taken before a task is
//! asked of the frontier, given back when its end is handled), and the ends
//! of requests waiting for a worker to store them.
//!
//! The connection thread ([`crate::http`]) pushes each end here; a few
//! worker threads take them ([`Flight::next_end`]). A wake-up is a system
//! call, so none is made when nobody waits: while pages keep coming the
//! workers find ends waiting and never sleep.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard};

/// The slots and the ends of the requests in flight; `E` is an end.
pub struct Flight<E> {
    state: Mutex<State<E>>,
    /// Threads wait here for a free slot.
    room: Condvar,
    /// Threads wait here for an end.
    ended: Condvar,
}

struct State<E> {
    /// Most slots taken at once.
    limit: usize,
    /// Slots taken: tasks being started or in flight, and ends not yet handled.
    taken: usize,
    /// Ends waiting for a worker.
    ends: VecDeque<E>,
    /// No task starts any more: when every slot is back, it is over.
    closed: bool,
    waiting_for_room: usize,
    waiting_for_ends: usize,
}

impl<E> Flight<E> {
    /// Room for `limit` requests in flight (at least one).
    pub fn new(limit: usize) -> Flight<E> {
        Flight {
            state: Mutex::new(State {
                limit: limit.max(1),
                taken: 0,
                ends: VecDeque::new(),
                closed: false,
                waiting_for_room: 0,
                waiting_for_ends: 0,
            }),
            room: Condvar::new(),
            ended: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State<E>> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The most requests in flight at once.
    pub fn limit(&self) -> usize {
        self.lock().limit
    }

    /// Sets the most requests in flight (at least one).
    pub fn set_limit(&self, limit: usize) {
        self.lock().limit = limit.max(1);
        self.room.notify_all();
    }

    /// Takes up to `most` slots (at least one), waiting until one is
    /// free; returns how many were taken.
    pub fn take_slots(&self, most: usize) -> usize {
        let mut st = self.lock();
        while st.taken >= st.limit {
            st.waiting_for_room += 1;
            st = self.room.wait(st).unwrap_or_else(|e| e.into_inner());
            st.waiting_for_room -= 1;
        }
        let n = (st.limit - st.taken).min(most.max(1));
        st.taken += n;
        n
    }

    /// Gives `n` slots back: their tasks are over (handled, or not requests).
    /// A thread waiting for room is woken once a few slots are free (an
    /// eighth of them), so that it starts several requests per wake-up.
    pub fn give_back(&self, n: usize) {
        if n == 0 {
            return;
        }
        let mut st = self.lock();
        st.taken -= n;
        let free = st.limit.saturating_sub(st.taken);
        if st.waiting_for_room > 0 && (free >= (st.limit / 8).max(1) || st.taken == 0) {
            self.room.notify_one();
        }
        if st.closed && st.taken == 0 && st.waiting_for_ends > 0 {
            self.ended.notify_all();
        }
    }

    /// Hands the end of a request to the workers.
    pub fn push(&self, end: E) {
        let mut st = self.lock();
        st.ends.push_back(end);
        if st.waiting_for_ends > 0 {
            self.ended.notify_one();
        }
    }

    /// The next end to handle (then [`Flight::give_back`] its slot),
    /// waiting for one; `None` once closed with every slot back.
    pub fn next_end(&self) -> Option<E> {
        let mut st = self.lock();
        loop {
            if let Some(e) = st.ends.pop_front() {
                return Some(e);
            }
            if st.closed && st.taken == 0 {
                return None;
            }
            st.waiting_for_ends += 1;
            st = self.ended.wait(st).unwrap_or_else(|e| e.into_inner());
            st.waiting_for_ends -= 1;
        }
    }

    /// No task starts any more: [`Flight::next_end`] returns `None` once the
    /// requests in flight are handled.
    pub fn close(&self) {
        self.lock().closed = true;
        self.ended.notify_all();
    }

    /// Ends waiting for a worker now.
    pub fn ends_waiting(&self) -> usize {
        self.lock().ends.len()
    }

    /// Slots taken now (requests in flight and ends not yet handled).
    #[cfg(test)]
    fn taken(&self) -> usize {
        self.lock().taken
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn slots_bound_the_requests_and_ends_reach_the_workers() {
        let f: Arc<Flight<u32>> = Arc::new(Flight::new(2));
        assert_eq!(f.take_slots(5), 2, "as many as are free");
        let taker = {
            let f = f.clone();
            std::thread::spawn(move || {
                let n = f.take_slots(1);
                (n, f.taken())
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!taker.is_finished(), "no third slot while two are taken");
        f.push(7);
        assert_eq!(f.next_end(), Some(7));
        f.give_back(1);
        assert_eq!(taker.join().unwrap(), (1, 2));
        let worker = {
            let f = f.clone();
            std::thread::spawn(move || {
                let mut got = Vec::new();
                while let Some(e) = f.next_end() {
                    got.push(e);
                    f.give_back(1);
                }
                got
            })
        };
        f.push(8);
        f.close();
        f.push(9);
        let got = worker.join().unwrap();
        assert_eq!(got, [8, 9], "ends in flight are handled after the close");
        assert_eq!(f.taken(), 0);
    }
}
