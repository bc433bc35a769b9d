//! The test binary's global allocator: the system's, watched. While a test
//! runs a closure through [`allocations`] or [`largest_allocation`], the
//! allocations made by that test's own thread are counted and the largest
//! is kept; other threads (other tests) are not watched, so tests running
//! in parallel do not disturb each other's figures.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Watching;

thread_local! {
    static ON: Cell<bool> = const { Cell::new(false) };
    static COUNT: Cell<usize> = const { Cell::new(0) };
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    // try_with: thread-local storage may already be gone at thread exit.
    let _ = ON.try_with(|on| {
        if on.get() {
            let _ = COUNT.try_with(|c| c.set(c.get() + 1));
            let _ = LARGEST.try_with(|l| l.set(l.get().max(size)));
        }
    });
}

// SAFETY: every call is forwarded unchanged to the system allocator; the
// bookkeeping touches only thread-local cells and never allocates.
unsafe impl GlobalAlloc for Watching {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Watching = Watching;

/// Runs `f` on this thread, watched: its result, the allocations (and
/// reallocations) it made, and the largest of them in bytes.
fn watched<T>(f: impl FnOnce() -> T) -> (T, usize, usize) {
    COUNT.with(|c| c.set(0));
    LARGEST.with(|l| l.set(0));
    ON.with(|on| on.set(true));
    let out = f();
    ON.with(|on| on.set(false));
    (out, COUNT.with(Cell::get), LARGEST.with(Cell::get))
}

/// Allocations (and reallocations) made by `f` on this thread (its result
/// is dropped after counting).
pub fn allocations<T>(f: impl FnOnce() -> T) -> usize {
    let (out, count, _) = watched(f);
    drop(out);
    count
}

/// Runs `f` and returns its result with the largest allocation it made.
pub fn largest_allocation<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let (out, _, largest) = watched(f);
    (out, largest)
}
