//! loadgen judged from outside: each command against the mock and against servers that
//! misbehave on purpose (every failure kind, every framing), its schedule, its sessions, its
//! comparisons and its verdicts.

mod behaviour;
mod capacity;
mod compare;
mod failures;
mod framing;
mod levels;
mod load;
mod memory;
mod omission;
mod overhead;
mod pacing;
mod profiling;
mod secure;
mod selftest;
mod sessions;
mod tool_rounds;
mod twin;
mod workloads;
