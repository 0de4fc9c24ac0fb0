//! End-to-end tests, laid out as the code is: the mock's (`mock/`), loadgen's (`loadgen/`) and the
//! repository's own (`repo/`: docs, presets, schemas, packaging). The harness they share (the mock
//! on an ephemeral loopback port, clients, servers that misbehave on purpose, loadgen's options,
//! the schema checker) is the `gatebench_tests` library, `tests/src`.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

mod mock;
// `loadgen` would shadow the loadgen crate every test here uses, so its folder is named here.
#[path = "loadgen/mod.rs"]
mod of_loadgen;
mod repo;
