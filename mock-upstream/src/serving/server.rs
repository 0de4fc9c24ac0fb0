//! Starting and stopping a mock server: listeners, worker threads, shutdown.
//!
//! Each worker thread runs its own current-thread tokio runtime on its own `SO_REUSEPORT`
//! listener (the kernel spreads connections), optionally pinned to a core: no work stealing
//! and no cross-thread wake-ups on the hot path.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;

use tokio::sync::watch;
use tokio_rustls::TlsAcceptor;

use crate::config::Config;
use crate::observability::metrics::Metrics;
use crate::serving::connection::{bind_one, serve, Reopen};
use crate::state::State;

/// The server could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("cannot listen on {addr}: {source}")]
    Bind { addr: SocketAddr, source: io::Error },
    #[error("cannot start worker thread: {0}")]
    Thread(io::Error),
    #[error(transparent)]
    Tls(#[from] crate::serving::tls::TlsError),
}

/// A running mock server. Dropping it asks the workers to stop without waiting for them.
#[derive(Debug)]
pub struct MockServer {
    addr: SocketAddr,
    control: Option<SocketAddr>,
    state: Arc<State>,
    stop: watch::Sender<bool>,
    workers: Vec<JoinHandle<()>>,
}

impl MockServer {
    /// Binds the listeners and starts the worker threads; returns once each has its timer
    /// (calibrated, with `--spin auto`), so the first request does not wait for a calibration.
    pub fn start(config: Config) -> Result<MockServer, StartError> {
        let listeners = bind(config.listen, config.threads)?;
        let addr = listeners[0]
            .local_addr()
            .map_err(|source| StartError::Bind {
                addr: config.listen,
                source,
            })?;
        let control = match config.control {
            Some(addr) => {
                let listener = crate::serving::control_listener::bind(addr)
                    .map_err(|source| StartError::Bind { addr, source })?;
                let bound = listener
                    .local_addr()
                    .map_err(|source| StartError::Bind { addr, source })?;
                Some((listener, bound))
            }
            None => None,
        };
        let reuse_port = config.threads > 1;
        let cores = config.cores.clone();
        let tls = match &config.tls {
            Some(settings) => Some(crate::serving::tls::acceptor(settings)?),
            None => None,
        };
        let state = Arc::new(State::new(config));
        let (stop, stopped) = watch::channel(false);
        let (ready, timed) = std::sync::mpsc::channel();
        let mut workers = Vec::with_capacity(listeners.len());
        for (i, listener) in listeners.into_iter().enumerate() {
            let core = (!cores.is_empty()).then(|| cores[i % cores.len()]);
            let state = state.clone();
            let stopped = stopped.clone();
            let tls = tls.clone();
            let ready = ready.clone();
            let reopen = Reopen {
                addr,
                reuse_port,
                listening: state.control.listening(),
            };
            let worker = std::thread::Builder::new()
                .name(format!("mock-worker-{i}"))
                .spawn(move || run_worker(listener, reopen, state, tls, stopped, core, ready))
                .map_err(StartError::Thread)?;
            workers.push(worker);
        }
        drop(ready);
        let control_addr = control.as_ref().map(|(_, bound)| *bound);
        if let Some((listener, _)) = control {
            let state = state.clone();
            let stopped = stopped.clone();
            let thread = std::thread::Builder::new()
                .name("mock-control".to_string())
                .spawn(move || run_control(listener, state, stopped))
                .map_err(StartError::Thread)?;
            workers.push(thread);
        }
        // Ends early when every worker left has stopped before installing its timer (each
        // has said why).
        for _ in 0..workers.len() {
            if timed.recv().is_err() {
                break;
            }
        }
        Ok(MockServer {
            addr,
            control: control_addr,
            state,
            stop,
            workers,
        })
    }

    /// The address the server listens on (with the real port when the config asked for 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The address of the control listener (`--control`), with its real port.
    pub fn control_addr(&self) -> Option<SocketAddr> {
        self.control
    }

    /// The server's counters.
    pub fn metrics(&self) -> &Metrics {
        &self.state.metrics
    }

    /// Stops accepting, lets in-flight responses finish within the shutdown grace, and waits
    /// for every worker to end.
    pub fn shutdown(mut self) {
        let _ = self.stop.send(true);
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

/// The control listener's thread: a runtime of its own, so steering a busy mock does not wait
/// for the workers.
fn run_control(listener: std::net::TcpListener, state: Arc<State>, stopped: watch::Receiver<bool>) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build();
    match runtime {
        Ok(runtime) => {
            if let Err(err) = runtime.block_on(crate::serving::control_listener::serve(
                listener, state, stopped,
            )) {
                gatebench_shared::say!("mock-upstream: control listener stopped: {err}");
            }
        }
        Err(err) => gatebench_shared::say!("mock-upstream: cannot build runtime: {err}"),
    }
}

fn run_worker(
    listener: std::net::TcpListener,
    reopen: Reopen,
    state: Arc<State>,
    tls: Option<TlsAcceptor>,
    stopped: watch::Receiver<bool>,
    core: Option<usize>,
    ready: std::sync::mpsc::Sender<()>,
) {
    if let Some(id) = core {
        core_affinity::set_for_current(core_affinity::CoreId { id });
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build();
    match runtime {
        Ok(runtime) => {
            let served = runtime.block_on(async move {
                // Calibrated (`--spin auto`) before the server counts this worker as started.
                let installed =
                    crate::timing::timer::install(state.config.spin, Some(state.metrics.timers()));
                let _ = ready.send(());
                drop(ready);
                installed?;
                serve(listener, reopen, state, tls, stopped).await
            });
            if let Err(err) = served {
                gatebench_shared::say!("mock-upstream: worker stopped: {err}");
            }
        }
        Err(err) => gatebench_shared::say!("mock-upstream: cannot build runtime: {err}"),
    }
}

/// One listener per thread on the same address; the first picks the port when it is 0.
fn bind(addr: SocketAddr, threads: usize) -> Result<Vec<std::net::TcpListener>, StartError> {
    let mut listeners = Vec::with_capacity(threads);
    let mut addr = addr;
    for _ in 0..threads {
        let listener =
            bind_one(addr, threads > 1).map_err(|source| StartError::Bind { addr, source })?;
        if addr.port() == 0 {
            addr = listener
                .local_addr()
                .map_err(|source| StartError::Bind { addr, source })?;
        }
        listeners.push(listener);
    }
    Ok(listeners)
}
