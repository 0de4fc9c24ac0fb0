//! What a result records of the generator's own types: a plan (`PlanRecord::from(&plan)` keeps
//! what the plan says: the body as its CRC-32, the corpus as its summary, the pace without its
//! instants, the transport without its TLS client), and how a run's connections were opened.

use crate::generator::plan::Plan;
use crate::generator::rate_curve::RateCurve;
use crate::results::metric::Summary;
use crate::results::plan::{PaceRecord, PlanRecord, RequestRecord, StageRecord, TransportRecord};
use crate::results::run::ConnectFacts;
use crate::wire::target::RequestSpec;
use crate::wire::transport::{Dials, Transport};

impl From<&Plan> for PlanRecord {
    fn from(plan: &Plan) -> PlanRecord {
        let us = |d: std::time::Duration| d.as_micros() as u64;
        PlanRecord {
            targets: plan.targets.clone(),
            load: plan.load,
            duration_us: plan.duration.map(us),
            requests: plan.requests,
            warmup_us: us(plan.warmup),
            connections: plan.connections,
            threads: plan.threads,
            cores: plan.cores.clone(),
            request: RequestRecord::from(&plan.request),
            corpus: plan.corpus.as_ref().map(|c| c.summary()),
            sessions: plan.sessions.as_ref().map(|s| s.summary()),
            pace: PaceRecord::from(&plan.pace),
            transport: TransportRecord::from(&plan.transport),
            timeout_us: us(plan.timeout),
            grace_us: plan.grace.map(us),
            max_pending: plan.max_pending,
            spin_us: plan.spin_us,
            spin: Some(plan.spin.describe()),
            poll_budget_cores: Some(plan.poll_budget),
            seed: plan.seed,
            shard: plan.shard,
            start_at: plan.start_at.map(crate::generator::start_at::format),
            clock_ref: plan.clock_ref.clone(),
            max_error_rate: plan.max_error_rate,
            max_p99_us: plan.max_p99.map(us),
            upstream_metrics: plan.upstream_metrics.clone(),
            out: plan.out.clone(),
            hgrm: plan.hgrm.clone(),
            hdr_log: plan.hdr_log.clone(),
        }
    }
}

impl From<&RequestSpec> for RequestRecord {
    fn from(spec: &RequestSpec) -> RequestRecord {
        RequestRecord {
            scenario: spec.scenario.clone(),
            stream: spec.stream,
            body_crc32: crc32fast::hash(&spec.body),
            max_tokens: spec.max_tokens,
            headers: spec
                .headers
                .iter()
                .map(|(n, v)| format!("{n}: {}", v.to_str().unwrap_or("<binary>")))
                .collect(),
        }
    }
}

impl From<&RateCurve> for PaceRecord {
    fn from(pace: &RateCurve) -> PaceRecord {
        match pace {
            RateCurve::Steady => PaceRecord::Steady,
            RateCurve::Stages(s) => PaceRecord::Stages {
                start_rate: s.start_rate,
                stages: s
                    .stages
                    .iter()
                    .map(|stage| StageRecord {
                        duration_us: stage.duration.as_micros() as u64,
                        to_rate: stage.to_rate,
                    })
                    .collect(),
            },
            RateCurve::Trace(r) => PaceRecord::Trace {
                source: r.source.clone(),
                speedup: r.speedup,
                rows: r.rows,
                span_s: r.span_s,
            },
        }
    }
}

impl From<&Transport> for TransportRecord {
    fn from(t: &Transport) -> TransportRecord {
        TransportRecord {
            http2: t.http2,
            cacert: t.cacert.clone(),
            insecure: t.insecure,
            connect_to: t.connect_to.iter().map(|p| p.text.clone()).collect(),
        }
    }
}

impl ConnectFacts {
    /// The facts of connections opened with `transport` (`tls`: an `https://` target).
    pub fn of(transport: &Transport, tls: bool, dials: &Dials) -> Self {
        let summary = |h: &hdrhistogram::Histogram<u64>| (!h.is_empty()).then(|| Summary::of(h));
        ConnectFacts {
            protocol: transport.protocol().to_string(),
            tls,
            tcp_connect_us: summary(&dials.tcp_us),
            tls_handshake_us: summary(&dials.tls_us),
            // Both clients stamp a body's bytes as they come off the socket.
            body_timed_at: "socket_read".to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::options::{LoadArgs, RequestFlags};

    #[test]
    fn a_record_is_written_as_the_plan_was() {
        let plan = LoadArgs {
            stages: Some("1s:100,2s:200".into()),
            request: RequestFlags {
                headers: vec!["x-test: 1".into()],
                ..Default::default()
            },
            ..LoadArgs::default()
        }
        .plan()
        .unwrap();
        let record = PlanRecord::from(&plan);
        assert_eq!(
            serde_json::to_value(&record).unwrap(),
            serde_json::to_value(&plan).unwrap()
        );
        // Read back as itself (a rate of whole numbers, which JSON's text keeps exactly).
        let record = PlanRecord::from(&LoadArgs::default().plan().unwrap());
        let text = serde_json::to_string(&record).unwrap();
        assert_eq!(serde_json::from_str::<PlanRecord>(&text).unwrap(), record);
    }
}
