//! One worker's accept loop, and the serving of each connection it accepts: HTTP/1.1 or
//! HTTP/2 (told apart by the h2 preface, so h2c with prior knowledge works on the same port),
//! in the clear or, with `--tls-names`, over TLS.

use std::io;
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::time::Duration;

use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_rustls::TlsAcceptor;

use crate::handler::handle;
use crate::state::State;

/// Counts a connection as open for as long as its task lives.
struct OpenConnection(Arc<State>);

impl Drop for OpenConnection {
    fn drop(&mut self) {
        self.0.metrics.connection_closed();
    }
}

/// The protocol settings every connection of a worker shares.
fn builder(state: &State) -> auto::Builder<TokioExecutor> {
    let mut http = auto::Builder::new(TokioExecutor::new());
    http.http1()
        .timer(TokioTimer::new())
        .header_read_timeout(state.config.header_timeout)
        .keep_alive(true)
        // One copy into hyper's write buffer beats a vectored write of a dozen small pieces:
        // measured 135k against 108k req/s for a ~350-byte completion (BENCHMARKS.md).
        .writev(false);
    http.http2()
        .timer(TokioTimer::new())
        // Many simultaneous streams on one connection is what a gateway's h2 pool does.
        .max_concurrent_streams(4096);
    http
}

/// Accepts and serves connections until `stop` turns true (or its sender is dropped), then
/// stops accepting and gives open connections the configured grace to finish.
pub async fn serve(
    listener: std::net::TcpListener,
    state: Arc<State>,
    tls: Option<TlsAcceptor>,
    mut stop: watch::Receiver<bool>,
) -> io::Result<()> {
    let listener = TcpListener::from_std(listener)?;
    let graceful = GracefulShutdown::new();
    let http = builder(&state);

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
                    match &tls {
                        None => serve_plain(&http, &graceful, stream, open),
                        Some(tls) => {
                            serve_tls(http.clone(), graceful.watcher(), tls.clone(), stream, open)
                        }
                    }
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

fn serve_plain(
    http: &auto::Builder<TokioExecutor>,
    graceful: &GracefulShutdown,
    stream: TcpStream,
    open: OpenConnection,
) {
    let socket = stream.as_raw_fd();
    let state = open.0.clone();
    let service = service_fn(move |req| handle(state.clone(), req, socket));
    let conn = graceful.watch(
        http.serve_connection(TokioIo::new(stream), service)
            .into_owned(),
    );
    tokio::spawn(async move {
        // A client that resets or times out ends its own connection; nothing else is
        // affected, so its error needs no handling here.
        let _ = conn.await;
        drop(open);
    });
}

fn serve_tls(
    http: auto::Builder<TokioExecutor>,
    graceful: Watcher,
    tls: TlsAcceptor,
    stream: TcpStream,
    open: OpenConnection,
) {
    let socket = stream.as_raw_fd();
    let timeout = open.0.config.header_timeout;
    tokio::spawn(async move {
        // A client that never finishes its handshake is dropped like one that never sends
        // its headers.
        let Ok(Ok(stream)) = tokio::time::timeout(timeout, tls.accept(stream)).await else {
            return;
        };
        let state = open.0.clone();
        let service = service_fn(move |req| handle(state.clone(), req, socket));
        let conn = graceful.watch(
            http.serve_connection(TokioIo::new(stream), service)
                .into_owned(),
        );
        let _ = conn.await;
        drop(open);
    });
}

fn accept_backoff(err: &io::Error) -> Duration {
    match err.raw_os_error() {
        Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM) => {
            Duration::from_millis(50)
        }
        _ => Duration::from_millis(1),
    }
}
