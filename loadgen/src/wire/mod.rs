//! The wire, the ground floor: opening connections (TCP, TLS, `--connect-to` addresses), HTTP/1.1 and
//! HTTP/2 (clients of our own, which stamp every socket read), one timed and
//! validated exchange over either, and stream parsing (SSE, AWS event streams); in tests, a simulated
//! target in place of a socket.

pub mod clock;
pub(crate) mod completion;
pub mod connect_to;
pub(crate) mod exchange;
pub(crate) mod get;
pub(crate) mod http1;
pub(crate) mod http2;
pub mod outcome;
pub mod plain;
#[cfg(test)]
pub(crate) mod simulated;
pub mod sse;
pub mod target;
pub mod timeouts;
pub mod transport;
