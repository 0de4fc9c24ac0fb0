//! One worker's accept loop, and the serving of each connection it accepts: HTTP/1.1 or
//! HTTP/2 (told apart by a peek at the h2 preface, so h2c with prior knowledge works on the
//! same port), in the clear or, with `--tls-names`, over TLS (HTTP/2 when ALPN chose it).
//! While the control listener steers the mock to refuse, the worker closes its listener (new
//! connections are refused by the kernel) and binds it again on the same address after.

use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;
use std::time::Duration;

use hyper::server::conn::{http1, http2};
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use socket2::{Domain, Protocol, Socket, Type};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio_rustls::TlsAcceptor;

use crate::config::Http1Server;
use crate::serving::h1::Served;
use crate::serving::handler::handle_for_hyper;
use crate::state::State;

/// A connection counted as open for as long as its task lives.
struct Open {
    state: Arc<State>,
    /// Accepted past `--max-connections`: its requests get 503.
    over_cap: bool,
}

impl Open {
    /// Counts the connection; it is past the cap when the count, with it, exceeds the cap.
    fn count(state: &Arc<State>) -> Open {
        let open = state.metrics.connection_opened();
        Open {
            state: state.clone(),
            over_cap: state
                .config
                .max_connections
                .is_some_and(|cap| open > cap as i64),
        }
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        self.state.metrics.connection_closed();
    }
}

/// The protocol settings every connection of a worker shares.
#[derive(Clone)]
struct Protocols {
    /// Clear-text HTTP/1.1 by the mock's own server (`--http1 own`).
    own_h1: bool,
    /// Turns true at shutdown, for connections the own server serves.
    stop: watch::Receiver<bool>,
    h1: http1::Builder,
    /// For connections past `--max-connections`: one answer, then the connection closes.
    h1_once: http1::Builder,
    h2: http2::Builder<TokioExecutor>,
}

impl Protocols {
    fn new(state: &State, stop: watch::Receiver<bool>) -> Protocols {
        let mut h1 = http1::Builder::new();
        h1.timer(TokioTimer::new())
            .header_read_timeout(state.config.header_timeout)
            .keep_alive(true)
            // A client may shut its sending side once its request is out; it still gets the
            // answer.
            .half_close(true)
            // One copy into hyper's write buffer beats a vectored write of a dozen small
            // pieces: measured 135k against 108k req/s for a ~350-byte completion
            // (BENCHMARKS.md).
            .writev(false);
        let mut h1_once = h1.clone();
        h1_once.keep_alive(false);
        let mut h2 = http2::Builder::new(TokioExecutor::new());
        h2.timer(TokioTimer::new())
            // Many simultaneous streams on one connection is what a gateway's h2 pool does.
            .max_concurrent_streams(4096);
        Protocols {
            own_h1: state.config.http1 == Http1Server::Own,
            stop,
            h1,
            h1_once,
            h2,
        }
    }

    /// Serves one connection with the protocol it speaks, until it ends or shutdown asks: the
    /// mock's routes, or for a connection past the cap a 503 to each request.
    async fn serve<I>(&self, io: I, h2: bool, watcher: Watcher, socket: RawFd, open: &Open)
    where
        I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let state = open.state.clone();
        let over_cap = open.over_cap.then(|| OverCap {
            cap: state.config.max_connections.unwrap_or(0),
            state: state.clone(),
        });
        // A client that resets or times out ends its own connection; nothing else is
        // affected, so its error needs no handling here.
        match (over_cap, h2) {
            (None, false) => {
                let service = service_fn(move |req| handle_for_hyper(state.clone(), req, socket));
                let _ = watcher
                    .watch(self.h1.serve_connection(TokioIo::new(io), service))
                    .await;
            }
            (None, true) => {
                let service = service_fn(move |req| handle_for_hyper(state.clone(), req, socket));
                let _ = watcher
                    .watch(self.h2.serve_connection(TokioIo::new(io), service))
                    .await;
            }
            (Some(cap), false) => {
                let service = service_fn(move |req| cap.clone().answer(req));
                let _ = watcher
                    .watch(self.h1_once.serve_connection(TokioIo::new(io), service))
                    .await;
            }
            (Some(cap), true) => {
                let service = service_fn(move |req| cap.clone().answer(req));
                let _ = watcher
                    .watch(self.h2.serve_connection(TokioIo::new(io), service))
                    .await;
            }
        }
    }
}

/// What a connection past `--max-connections` is told: 503 in the provider's shape of the
/// path it asked for, with `retry-after`.
#[derive(Clone)]
struct OverCap {
    state: Arc<State>,
    cap: usize,
}

impl OverCap {
    async fn answer(
        self,
        req: hyper::Request<hyper::body::Incoming>,
    ) -> Result<hyper::Response<crate::answer::body::MockBody>, crate::control::Refused> {
        if self.state.control.refusing() {
            return Err(crate::control::Refused);
        }
        self.state.metrics.over_capacity();
        let rejection = crate::admission::rejection::Rejection::over_capacity(self.cap);
        let mut response = if req.uri().path() == "/v1/messages" {
            rejection.anthropic().into_response()
        } else {
            rejection.into_response()
        };
        crate::serving::stamp::Stamp::of(req.headers()).insert(&self.state, response.headers_mut());
        self.state.metrics.response(response.status().as_u16());
        Ok(response)
    }
}

/// HTTP/2 with prior knowledge opens with this preface; an HTTP/1 request never does.
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// True when the client opened with the HTTP/2 preface. Peeks, so the bytes stay for the
/// protocol (no wrapper on every read), and decides at the first byte that differs, which for
/// an HTTP/1 request is the second.
async fn opens_with_h2_preface(stream: &TcpStream) -> bool {
    let mut buf = [0u8; H2_PREFACE.len()];
    loop {
        let n = match stream.peek(&mut buf).await {
            Ok(0) | Err(_) => return false,
            Ok(n) => n,
        };
        if buf[..n] != H2_PREFACE[..n] {
            return false;
        }
        if n == H2_PREFACE.len() {
            return true;
        }
        // A preface cut short: the peek would return at once with the same bytes, so wait.
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// What a worker needs to close its listener and bind it again (`refuse` on the control
/// listener).
#[derive(Debug)]
pub struct Reopen {
    /// The address bound, with its real port.
    pub addr: SocketAddr,
    pub reuse_port: bool,
    /// False while the listener is to stay closed.
    pub listening: watch::Receiver<bool>,
}

/// Accepts on `listener`, or waits for ever while it is closed.
async fn accept(listener: &Option<TcpListener>) -> io::Result<(TcpStream, SocketAddr)> {
    match listener {
        Some(listener) => listener.accept().await,
        None => std::future::pending().await,
    }
}

/// Binds the worker's listener again, after a refusal; says why not (and is asked again
/// shortly) when the address is taken.
fn rebind(reopen: &Reopen) -> Option<TcpListener> {
    let bound = bind_one(reopen.addr, reopen.reuse_port).and_then(TcpListener::from_std);
    match bound {
        Ok(listener) => Some(listener),
        Err(err) => {
            gatebench_shared::say!(
                "mock-upstream: cannot listen on {} again: {err}; retrying",
                reopen.addr
            );
            None
        }
    }
}

/// Accepts and serves connections until `stop` turns true (or its sender is dropped), then
/// stops accepting and gives open connections the configured grace to finish. While
/// `reopen.listening` is false the listener is closed.
pub async fn serve(
    listener: std::net::TcpListener,
    mut reopen: Reopen,
    state: Arc<State>,
    tls: Option<TlsAcceptor>,
    mut stop: watch::Receiver<bool>,
) -> io::Result<()> {
    let mut listener = Some(TcpListener::from_std(listener)?);
    // Before any connection can take the last descriptor.
    crate::timing::timer::install(state.config.spin, Some(state.metrics.timers()))?;
    let graceful = GracefulShutdown::new();
    let protocols = Protocols::new(&state, stop.clone());
    let mut retry = false;
    // The sender lives in the state this loop holds, so the watch never closes; were it to,
    // its branch is left out rather than polled again at once.
    let mut watched = true;

    loop {
        tokio::select! {
            biased;
            changed = stop.changed() => {
                if changed.is_err() || *stop.borrow() {
                    break;
                }
            }
            changed = reopen.listening.changed(), if watched => {
                if changed.is_err() {
                    watched = false;
                    continue;
                }
                let open = *reopen.listening.borrow_and_update();
                if !open {
                    listener = None;
                } else if listener.is_none() {
                    listener = rebind(&reopen);
                    retry = listener.is_none();
                }
            }
            _ = tokio::time::sleep(Duration::from_millis(100)), if retry => {
                if *reopen.listening.borrow() && listener.is_none() {
                    listener = rebind(&reopen);
                }
                retry = listener.is_none() && *reopen.listening.borrow();
            }
            accepted = accept(&listener) => match accepted {
                Ok((stream, _)) => {
                    // Small SSE events must not wait for Nagle.
                    let _ = stream.set_nodelay(true);
                    // A client that stops reading (or vanishes) is dropped once what was sent
                    // to it stays unacknowledged this long, zero-window probes included.
                    let _ = socket2::SockRef::from(&stream)
                        .set_tcp_user_timeout(Some(state.config.send_timeout));
                    let open = Open::count(&state);
                    let protocols = protocols.clone();
                    let watcher = graceful.watcher();
                    let tls = tls.clone();
                    tokio::spawn(async move {
                        serve_connection(protocols, watcher, tls, stream, &open).await;
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

/// Serves one accepted connection: in the clear, HTTP/2 when it opens with the preface; over
/// TLS, HTTP/2 when ALPN chose it.
async fn serve_connection(
    protocols: Protocols,
    watcher: Watcher,
    tls: Option<TlsAcceptor>,
    stream: TcpStream,
    open: &Open,
) {
    let socket = stream.as_raw_fd();
    let timeout = open.state.config.header_timeout;
    match tls {
        None => {
            // A client that sends nothing is dropped like one that never sends its headers.
            let Ok(h2) = tokio::time::timeout(timeout, opens_with_h2_preface(&stream)).await else {
                return;
            };
            if h2 || !protocols.own_h1 || open.over_cap {
                protocols.serve(stream, h2, watcher, socket, open).await;
                return;
            }
            // The watcher is held, not watched: shutdown waits for it to drop, and the own
            // server hears of shutdown from `stop`.
            match crate::serving::h1::serve(stream, &open.state, protocols.stop.clone()).await {
                Served::Done => drop(watcher),
                Served::HandOff(replay) => {
                    protocols.serve(replay, false, watcher, socket, open).await;
                }
            }
        }
        Some(tls) => {
            let Ok(Ok(stream)) = tokio::time::timeout(timeout, tls.accept(stream)).await else {
                return;
            };
            let h2 = stream.get_ref().1.alpn_protocol() == Some(b"h2");
            protocols.serve(stream, h2, watcher, socket, open).await;
        }
    }
}

/// One listener on `addr` (with `SO_REUSEPORT` when the workers share the address).
pub fn bind_one(addr: SocketAddr, reuse_port: bool) -> io::Result<std::net::TcpListener> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    if reuse_port {
        socket.set_reuse_port(true)?;
    }
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    socket.listen(4096)?;
    Ok(socket.into())
}

fn accept_backoff(err: &io::Error) -> Duration {
    match err.raw_os_error() {
        Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM) => {
            Duration::from_millis(50)
        }
        _ => Duration::from_millis(1),
    }
}
