//! One worker's accept loop, and the serving of each connection it accepts.

use std::io;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::handler::handle;
use crate::state::State;

/// Counts a connection as open for as long as its task lives.
struct OpenConnection(Arc<State>);

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.metrics.connection_closed();
    }
}

/// Accepts and serves connections until `stop` turns true (or its sender is dropped), then
/// stops accepting and gives open connections the configured grace to finish.
pub async fn serve(
    listener: std::net::TcpListener,
    state: Arc<State>,
    mut stop: watch::Receiver<bool>,
) -> io::Result<()> {
    let listener = TcpListener::from_std(listener)?;
    let graceful = GracefulShutdown::new();
    let mut http = http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(state.config.header_timeout)
        .keep_alive(true)
        // One copy into hyper's write buffer beats a vectored write of a dozen small pieces:
        // measured 135k against 108k req/s for a ~350-byte completion (BENCHMARKS.md).
        .writev(false);

    loop {
        tokio::select! {
            biased;
            changed = stop.changed() => {
                if changed.is_err() || *stop.borrow() {
                    break;
                }
            }
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    // Small SSE events must not wait for Nagle.
                    let _ = stream.set_nodelay(true);
                    state.metrics.connection_opened();
                    let open = OpenConnection(state.clone());
                    let service_state = state.clone();
                    let socket = stream.as_raw_fd();
                    let service =
                        service_fn(move |req| handle(service_state.clone(), req, socket));
                    let conn = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
                    tokio::spawn(async move {
                        // A client that resets or times out ends its own connection; nothing
                        // else is affected, so its error needs no handling here.
                        let _ = conn.await;
                        drop(open);
                    });
                }
                Err(err) => {
                    state.metrics.accept_error();
                    // Out of descriptors (EMFILE/ENFILE) or memory: back off instead of
                    // spinning on an accept that will fail again at once.
                    tokio::time::sleep(accept_backoff(&err)).await;
                }
            }
        }
    }
    drop(listener);
    tokio::select! {
        _ = graceful.shutdown() => {}
        _ = tokio::time::sleep(state.config.shutdown_grace) => {}
    }
    Ok(())
}

fn accept_backoff(err: &io::Error) -> Duration {
    match err.raw_os_error() {
        Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM) => {
            Duration::from_millis(50)
        }
        _ => Duration::from_millis(1),
    }
}
