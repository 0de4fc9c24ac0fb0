//! hyper's HTTP/2-only servers (prior knowledge) for loadgen's HTTP/2 client to meet: an accept
//! loop on loopback, on a thread and runtime of its own, handing each connection to the test.

use std::future::Future;
use std::net::SocketAddr;

use tokio::net::TcpStream;

/// The chat completion these servers answer with.
pub const ANSWER: &str = "{\"id\":\"r\",\"object\":\"chat.completion\",\"choices\":[{\"index\":0,\
    \"message\":{\"role\":\"assistant\",\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}";

/// Listens on `127.0.0.1:0` and runs `serve(stream)` as a task of its own for every connection
/// accepted, until the test process ends. Returns the address.
pub fn serve_connections<F, Fut>(mut serve: F) -> SocketAddr
where
    F: FnMut(TcpStream) -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let std_listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    std_listener
        .set_nonblocking(true)
        .expect("a non-blocking listener");
    let addr = std_listener.local_addr().expect("the listener's address");
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async move {
            let listener =
                tokio::net::TcpListener::from_std(std_listener).expect("a tokio listener");
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream));
            }
        });
    });
    addr
}
