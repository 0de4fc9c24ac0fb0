//! The smallest hyper server: a static body for every request, the request body never read.
//! It is the baseline the mock is measured against in `scripts/bench-mock.sh` (throughput) and
//! in `tests/alloc.rs` (allocations per request).
//!
//! Usage: cargo run --release -p mock-upstream --example hyper_hello -- 127.0.0.1:8081 [BODY_FILE]

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

/// Serves `body` on every connection `listener` accepts, with the mock's own hyper settings
/// (one current-thread runtime, flattened writes, no Nagle).
pub async fn serve_hello(listener: TcpListener, body: Bytes) -> std::io::Result<()> {
    loop {
        let (stream, _) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        let body = body.clone();
        let service = service_fn(move |_req: Request<hyper::body::Incoming>| {
            let body = body.clone();
            async move { Ok::<_, Infallible>(Response::new(Full::new(body))) }
        });
        tokio::spawn(async move {
            let _ = http1::Builder::new()
                .writev(false)
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

#[allow(dead_code)] // the alloc bench includes this file for `serve_hello` alone
fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:8081".to_string());
    let body = match args.next() {
        Some(path) => Bytes::from(std::fs::read(path)?),
        None => Bytes::from_static(b"Hello, world!"),
    };
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(async move {
            let listener = TcpListener::bind(&addr).await?;
            eprintln!("hyper_hello listening on http://{}", listener.local_addr()?);
            serve_hello(listener, body).await
        })
}
