//! The live metrics endpoint (`--metrics-listen ADDR`): `GET /metrics` on a thread of its own
//! serves every run's live counters in Prometheus' text format while the process runs. The
//! listener is bound before any load, so a taken port is said at once; the thread and its
//! connections end when the endpoint is dropped.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::sync::oneshot;

use crate::engine::run::SetupError;
use crate::generator::live::Registry;

/// The content type of Prometheus' text exposition format.
const TEXT_FORMAT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// A running endpoint; dropping it stops it.
#[derive(Debug)]
pub struct MetricsEndpoint {
    /// Where it listens (the port filled in when 0 was asked for).
    pub addr: SocketAddr,
    registry: Arc<Registry>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl MetricsEndpoint {
    /// Binds `addr` and serves an empty registry from it.
    pub fn start(addr: SocketAddr) -> Result<MetricsEndpoint, SetupError> {
        let refused =
            |e: std::io::Error| SetupError::Other(format!("--metrics-listen {addr}: {e}"));
        let listener = std::net::TcpListener::bind(addr).map_err(refused)?;
        listener.set_nonblocking(true).map_err(refused)?;
        let addr = listener.local_addr().map_err(refused)?;
        let registry = Arc::new(Registry::default());
        let (stop, stopped) = oneshot::channel();
        let served = registry.clone();
        let thread = std::thread::Builder::new()
            .name("loadgen-metrics".into())
            .spawn(move || serve(listener, served, stopped))
            .map_err(refused)?;
        Ok(MetricsEndpoint {
            addr,
            registry,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The registry runs add their counters to.
    pub fn registry(&self) -> Arc<Registry> {
        self.registry.clone()
    }
}

impl Drop for MetricsEndpoint {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Accepts connections until `stopped`, each served on the thread's own runtime.
fn serve(listener: std::net::TcpListener, registry: Arc<Registry>, stopped: oneshot::Receiver<()>) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            gatebench_shared::say!("loadgen: the metrics endpoint cannot start: {err}");
            return;
        }
    };
    runtime.block_on(async move {
        let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
            return;
        };
        let mut stopped = std::pin::pin!(stopped);
        loop {
            let stream = tokio::select! {
                _ = &mut stopped => return,
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => stream,
                    // Out of file descriptors, most likely: wait rather than spin a core the
                    // run needs.
                    Err(_) => {
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                        continue;
                    }
                },
            };
            let registry = registry.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request| {
                    let page = answer(&request, &registry);
                    async move { Ok::<_, Infallible>(page) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
}

/// `GET /metrics`: the page; anything else: 404 or 405.
fn answer<B>(request: &Request<B>, registry: &Registry) -> Response<Full<Bytes>> {
    let (status, body) = match (request.method(), request.uri().path()) {
        (&Method::GET | &Method::HEAD, "/metrics") => (StatusCode::OK, registry.render()),
        (_, "/metrics") => (StatusCode::METHOD_NOT_ALLOWED, "only GET /metrics\n".into()),
        _ => (
            StatusCode::NOT_FOUND,
            "loadgen serves /metrics only\n".into(),
        ),
    };
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    if let Ok(value) = hyper::header::HeaderValue::from_str(TEXT_FORMAT) {
        response
            .headers_mut()
            .insert(hyper::header::CONTENT_TYPE, value);
    }
    response
}

/// Parses `--metrics-listen`: `HOST:PORT`, or `HOST:PORT+shard` for the port plus the shard's
/// index (shards on one host, each on a port of its own).
pub fn parse_listen(text: &str, shard_index: u64) -> Result<SocketAddr, SetupError> {
    let bad = || {
        SetupError::Other(format!(
            "invalid --metrics-listen '{text}': expected HOST:PORT like 127.0.0.1:9464, or \
             HOST:PORT+shard for the port plus the shard's index"
        ))
    };
    let (addr, by_shard) = match text.trim().strip_suffix("+shard") {
        Some(addr) => (addr, true),
        None => (text.trim(), false),
    };
    let mut addr: SocketAddr = addr.parse().map_err(|_| bad())?;
    if by_shard {
        let port = u64::from(addr.port()) + shard_index;
        addr.set_port(u16::try_from(port).map_err(|_| bad())?);
    }
    Ok(addr)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listen_address_may_add_the_shard_to_its_port() {
        let at = |text, shard| parse_listen(text, shard).map(|a| a.to_string()).ok();
        assert_eq!(at("127.0.0.1:9464", 3).as_deref(), Some("127.0.0.1:9464"));
        assert_eq!(
            at("127.0.0.1:9600+shard", 3).as_deref(),
            Some("127.0.0.1:9603")
        );
        assert_eq!(at("[::1]:9600+shard", 0).as_deref(), Some("[::1]:9600"));
        for bad in [
            "9464",
            "localhost:9464",
            "127.0.0.1:65535+shard",
            "127.0.0.1:x",
        ] {
            assert_eq!(at(bad, 1), None, "{bad}");
        }
    }

    #[test]
    fn the_endpoint_serves_the_page_and_nothing_else() {
        let endpoint = MetricsEndpoint::start("127.0.0.1:0".parse().unwrap()).unwrap();
        endpoint.registry().track("http://t", "chat", "0/1");
        let get = |path: &str| {
            use std::io::{Read, Write};
            let mut tcp = std::net::TcpStream::connect(endpoint.addr).unwrap();
            write!(
                tcp,
                "GET {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n"
            )
            .unwrap();
            let mut answer = String::new();
            tcp.read_to_string(&mut answer).unwrap();
            answer
        };
        let page = get("/metrics");
        assert!(page.starts_with("HTTP/1.1 200"), "{page}");
        assert!(
            page.contains("content-type: text/plain; version=0.0.4"),
            "{page}"
        );
        assert!(
            page.contains("loadgen_ok_total{target=\"http://t\""),
            "{page}"
        );
        assert!(get("/").starts_with("HTTP/1.1 404"));
        let addr = endpoint.addr;
        drop(endpoint);
        assert!(
            std::net::TcpStream::connect(addr).is_err(),
            "still listening"
        );
    }

    #[test]
    fn a_taken_port_is_said_at_start() {
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let err = MetricsEndpoint::start(taken.local_addr().unwrap()).unwrap_err();
        assert!(
            err.to_string().starts_with("--metrics-listen 127.0.0.1:"),
            "{err}"
        );
    }
}
