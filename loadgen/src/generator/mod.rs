//! The generator: turns a plan into timed requests and their histograms. The plan, what it is
//! refused for (`plan_error`) and its quantities (`quantity`: rates, durations); the schedule (when
//! each request is due), the rate of an open loop over time (`rate_curve`: steady, stages, a
//! trace), waiting for a due time precisely (`pacer`), a shard's part of the schedule and a start
//! by the wall clock, per-core workers and their connection pools, the recorder and its per-second
//! intervals and breakdowns by class and stage, the live counters a metrics endpoint serves (`live`), the histograms they start from, the request corpus, conversations (`sessions`),
//! the load options validated into a plan (`planner`), and what a result records of a plan and of a
//! run's connections (`record`).

pub(crate) mod alarm;
pub(crate) mod as_records;
pub(crate) mod breakdown;
pub(crate) mod clock_ref;
pub mod corpus;
pub mod histogram;
pub mod intervals;
pub(crate) mod live;
pub(crate) mod pacer;
pub(crate) mod plan;
pub(crate) mod plan_error;
pub(crate) mod planner;
pub(crate) mod quantity;
pub mod rate_curve;
pub mod recorder;
pub(crate) mod schedule;
pub mod sessions;
pub(crate) mod shard;
pub(crate) mod start_at;
pub(crate) mod worker;
