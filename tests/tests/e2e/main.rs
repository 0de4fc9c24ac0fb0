//! End-to-end tests: the mock on an ephemeral loopback port, driven by real clients.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod chat;
mod errors;
mod latency;
mod lifecycle;
mod sdk;
mod stream;
