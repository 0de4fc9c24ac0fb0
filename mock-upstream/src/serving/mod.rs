//! Serving: worker threads and listeners, connections (the own HTTP/1.1 server, hyper for
//! HTTP/2 and TLS), answering a route, the control listener, the stamp on every answer.

pub(crate) mod connection;
pub(crate) mod control_listener;
pub(crate) mod h1;
pub(crate) mod handler;
pub(crate) mod server;
pub(crate) mod stamp;
pub(crate) mod tls;
