//! Observability: the counters and the emission error as Prometheus text, the ring of the last
//! arrivals, the container health probe.

pub(crate) mod healthcheck;
pub(crate) mod metrics;
pub(crate) mod record;
