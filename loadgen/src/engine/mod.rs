//! The engine: what every command that measures targets shares. Running one target under a plan
//! (`run`: its windows, stop and exit handling, setup errors), reaching and naming the targets
//! (`gateways`), sampling a process's CPU and memory (`sampler`), what a result discloses about
//! its targets and host (`disclose`), the upstream's own count of requests (`upstream`), and the
//! demo's in-process mock (`embedded`), the twin loadgen starts when none is named (`twin`), and
//! the live Prometheus endpoint a run can serve (`metrics_endpoint`).
//! What every comparison is made of (its targets, twin, trials): `comparison`; one kept-alive
//! call at a time to each target, for paired rounds: `paired`. The profilers `loadgen profile`
//! runs, one driver per source (perf, bpftrace, Go's and V8's heap): `profiler`.

pub(crate) mod comparison;
pub(crate) mod disclose;
pub(crate) mod embedded;
pub(crate) mod gateways;
pub(crate) mod judge;
pub(crate) mod logged;
pub(crate) mod metrics_endpoint;
pub(crate) mod paired;
pub(crate) mod profiler;
pub mod run;
pub(crate) mod sampler;
pub(crate) mod steering;
pub(crate) mod twin;
pub(crate) mod upstream;
