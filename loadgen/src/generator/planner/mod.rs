//! `loadgen run`'s options (the load options of every command) validated into one [`Plan`]:
//! the load and its durations (`load`), the limits and checks of a run (`limits`), the workload
//! beyond one body at one rate (`workload`), and the targets, requests and transport here; and
//! back: the options a plan resolved (`resolved`).

pub(crate) mod conversations;
mod limits;
mod load;
mod resolved;
mod workload;

use hyper::header::{HeaderName, HeaderValue};

use crate::generator::corpus::Corpus;
use crate::generator::plan::{Plan, DEFAULT_MAX_TOKENS, DEFAULT_MODEL};
use crate::generator::plan_error::PlanError;
use crate::generator::rate_curve::RateCurve;
use crate::model::load::Load;
use crate::model::target::Target;
use crate::options::LoadArgs;
use crate::wire::connect_to::ConnectTo;
use crate::wire::target::{
    parse_header, parse_metrics_url, parse_target, parse_target_via, request_spec, RequestSpec,
};
use crate::wire::transport::Transport;

impl LoadArgs {
    /// Validates every option, resolving targets and reading a body file.
    pub fn plan(self) -> Result<Plan, PlanError> {
        self.plan_at(None)
    }

    /// The HTTP version, the TLS settings and the `--connect-to` rules.
    pub fn transport(&self) -> Result<Transport, PlanError> {
        let rules = self
            .connect_to
            .iter()
            .map(|text| ConnectTo::parse(text))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Transport::new(
            self.http2,
            self.cacert.clone(),
            self.insecure,
            rules,
        ))
    }

    /// What each request of `scenario` carries (the body, when one is given, wins), with the
    /// options' model, output tokens and headers.
    pub fn request_spec(&self, scenario: Option<&str>) -> Result<RequestSpec, PlanError> {
        let urls: Vec<&str> = self.targets.iter().map(String::as_str).collect();
        request_spec(
            scenario,
            self.request.body.as_deref(),
            &self.request.headers,
            self.request.model.as_deref().unwrap_or(DEFAULT_MODEL),
            self.request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            &urls,
        )
        .map_err(PlanError::from)
    }

    /// [`LoadArgs::plan`], at `load` instead of the load the options name (a sweep's level, the
    /// demo's phases); the load is checked as the options' own would be.
    pub fn plan_at(self, load: Option<Load>) -> Result<Plan, PlanError> {
        let given = load.is_some();
        let timing = load::timing(&self, load)?;
        let limits = limits::limits(&self, &timing.load)?;
        let headers = self
            .request
            .headers
            .iter()
            .map(|h| parse_header(h))
            .collect::<Result<Vec<_>, _>>()?;
        let mut workload = workload::resolve(&self, &timing, given, &headers)?;
        let sessions = match conversations::resolve(&self, workload.load)? {
            Some((sessions, load)) => {
                workload.load = load;
                Some(sessions)
            }
            None => None,
        };
        let request = match &workload.corpus {
            Some(corpus) => corpus_request(corpus, &workload.pace, headers),
            None => self.request_spec(self.request.scenario.as_deref())?,
        };
        let (transport, targets) = self.targets()?;
        Ok(Plan {
            targets,
            load: workload.load,
            duration: workload.duration,
            requests: timing.requests,
            warmup: timing.warmup,
            connections: limits.connections,
            threads: limits.threads,
            cores: limits.cores,
            request,
            corpus: workload.corpus,
            sessions,
            pace: workload.pace,
            transport,
            timeout: timing.timeout,
            grace: timing.grace,
            max_pending: limits.max_pending,
            spin: limits.spin,
            spin_us: crate::generator::plan::spin_us(limits.spin),
            poll_budget: limits.poll_budget,
            seed: self.request.seed.unwrap_or(0),
            shard: limits.shard,
            start_at: limits.start_at,
            clock_ref: self.clock_ref.as_deref().map(parse_target).transpose()?,
            out: self.out,
            hgrm: self.hgrm,
            hdr_log: self.hdr_log,
            max_error_rate: self.max_error_rate,
            max_p99: limits.max_p99,
            quiet: self.quiet,
            upstream_metrics: self
                .upstream_metrics
                .as_deref()
                .map(parse_metrics_url)
                .transpose()?,
            live: None,
        })
    }

    /// The transport and every target reached through it; TLS checked when any target needs
    /// it (a bad --cacert, or no trusted certificates, is said before any load).
    fn targets(&self) -> Result<(Transport, Vec<Target>), PlanError> {
        let transport = self.transport()?;
        let targets: Vec<_> = self
            .targets
            .iter()
            .map(|t| parse_target_via(t, &transport.connect_to))
            .collect::<Result<_, _>>()?;
        if transport.cacert.is_some() || targets.iter().any(|t| t.tls) {
            transport.check_tls()?;
        }
        Ok((transport, targets))
    }
}

/// What the result says of the requests of a corpus (each request comes from the corpus).
fn corpus_request(
    corpus: &Corpus,
    pace: &RateCurve,
    headers: Vec<(HeaderName, HeaderValue)>,
) -> RequestSpec {
    RequestSpec {
        scenario: if matches!(pace, RateCurve::Trace(_)) {
            "trace".into()
        } else {
            "corpus".into()
        },
        stream: corpus.any_stream(),
        body: bytes::Bytes::new(),
        max_tokens: None,
        headers,
    }
}
