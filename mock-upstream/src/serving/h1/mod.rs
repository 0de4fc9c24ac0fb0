//! The mock's own HTTP/1.1 server, for clear-text HTTP/1.1 connections (the default;
//! `--http1 hyper` turns it off).
//!
//! hyper's HTTP/1.1 server costs more per request than the mock's own work on a
//! pre-encoded answer (BENCHMARKS.md), so the requests benchmarks send are served here: the
//! head parsed with `httparse` into the same `http::Request` the routes take from hyper, the
//! answer's head and body written with one `write` (a stream: its head, then each event as it
//! falls due, chunked). The first request it does not take (HTTP/1.0, a chunked or
//! `expect: 100-continue` body, an upgrade, a head too large or that does not parse, a body
//! over `--max-body`; see [`head`]) hands the connection, with the bytes already read, to
//! hyper for the rest of its life. HTTP/2, TLS and connections past `--max-connections` are
//! hyper's from the start.

mod conn;
mod encode;
mod head;
mod out;
mod replay;
mod target;

pub use conn::{serve, Served};
