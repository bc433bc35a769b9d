//! The accept loop: one thread waits on every listener at once with
//! `poll(2)` (plus a socket pair that wakes it on shutdown) and starts a thread per
//! accepted connection.

use std::io::{self, Read, Write};
use std::net::TcpListener;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;

use super::{Shared, conn, lock};

/// Stack size of connection threads: handlers are small, and a benchmark may
/// keep hundreds of connections open.
const CONN_STACK: usize = 256 * 1024;

/// How long one `poll` waits before checking the stop flag again (the waker
/// normally ends the wait at once; this bounds it if a wake is ever lost).
const POLL_TIMEOUT_MS: libc::c_int = 200;

/// Wakes the accept loop so that it sees the stop flag.
pub(super) struct Waker(UnixStream);

impl Waker {
    pub(super) fn wake(mut self) {
        let _ = self.0.write_all(b"x");
    }
}

pub(super) fn spawn(
    listeners: Vec<TcpListener>,
    shared: Arc<Shared>,
) -> io::Result<(JoinHandle<()>, Waker)> {
    for l in &listeners {
        l.set_nonblocking(true)?;
    }
    let (reader, writer) = UnixStream::pair()?;
    let handle = std::thread::Builder::new()
        .name("testkit-accept".into())
        .spawn(move || accept_loop(listeners, reader, shared))?;
    Ok((handle, Waker(writer)))
}

fn accept_loop(listeners: Vec<TcpListener>, mut wake: UnixStream, shared: Arc<Shared>) {
    let mut fds: Vec<libc::pollfd> = listeners
        .iter()
        .map(|l| l.as_raw_fd())
        .chain(std::iter::once(wake.as_raw_fd()))
        .map(|fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    while !shared.stopping() {
        for p in &mut fds {
            p.revents = 0;
        }
        // SAFETY: `fds` is a valid, exclusively borrowed array of `pollfd`
        // whose length is passed alongside; every descriptor in it stays
        // open for the duration of the call (owned by `listeners`/`wake`).
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, POLL_TIMEOUT_MS) };
        if n < 0 {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            eprintln!("testkit::server: poll failed: {err}; no longer accepting");
            return;
        }
        if fds.last().is_some_and(|p| p.revents != 0) {
            let mut byte = [0u8; 1];
            let _ = wake.read(&mut byte);
            continue;
        }
        for (host, (listener, p)) in listeners.iter().zip(&fds).enumerate() {
            if p.revents == 0 {
                continue;
            }
            // Bounded: a listener's backlog is finite, and each accept takes one.
            for _ in 0..1024 {
                match listener.accept() {
                    Ok((stream, peer)) => start_connection(&shared, host, stream, peer),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        // EMFILE and the like: report, and let the next poll retry.
                        eprintln!(
                            "testkit::server: accept on {}: {e}",
                            shared.hosts[host].addr
                        );
                        std::thread::sleep(std::time::Duration::from_millis(10));
                        break;
                    }
                }
            }
        }
    }
}

fn start_connection(
    shared: &Arc<Shared>,
    host: usize,
    stream: std::net::TcpStream,
    peer: std::net::SocketAddr,
) {
    let id = shared.next_connection.fetch_add(1, Ordering::Relaxed);
    let registered = stream
        .set_nonblocking(false)
        .and_then(|()| stream.try_clone());
    let clone = match registered {
        Ok(c) => c,
        Err(e) => {
            eprintln!("testkit::server: connection from {peer}: {e}");
            return;
        }
    };
    lock(&shared.connections).insert(id, clone);
    *lock(&shared.live) += 1;
    let thread_shared = Arc::clone(shared);
    let spawned = std::thread::Builder::new()
        .name("testkit-conn".into())
        .stack_size(CONN_STACK)
        .spawn(move || {
            let _done = Finished(&thread_shared, id);
            conn::serve(&thread_shared, host, id, stream, peer);
        });
    if let Err(e) = spawned {
        eprintln!("testkit::server: cannot start a thread for {peer}: {e}");
        lock(&shared.connections).remove(&id);
        *lock(&shared.live) -= 1;
        shared.live_changed.notify_all();
    }
}

/// Unregisters a connection when its thread ends, even by a panic.
struct Finished<'a>(&'a Shared, u64);

impl Drop for Finished<'_> {
    fn drop(&mut self) {
        lock(&self.0.connections).remove(&self.1);
        *lock(&self.0.live) -= 1;
        self.0.live_changed.notify_all();
    }
}
