//! A worker's connections to its target by HTTP version, and a request encoded for it.

use crate::generator::plan::Plan;
use crate::model::target::Target;
use crate::wire::clock::RunClock;
use crate::wire::exchange::Slot;
use crate::wire::http1::pool::Http1Pool;
use crate::wire::outcome::{ErrorKind, Exchange};
use crate::wire::target::RequestSpec;
use crate::wire::transport::Dials;
use crate::wire::{http1, http2};

/// A worker's connections to its target, by HTTP version.
#[derive(Debug)]
pub(super) enum Client {
    Http1(Http1Pool),
    Http2(http2::Http2Pool),
    /// A simulated target on simulated time, for tests.
    #[cfg(test)]
    Simulated(crate::wire::simulated::SimulatedTarget),
}

/// A request encoded for the run's HTTP version.
#[derive(Debug)]
pub(super) enum Template {
    Http1(http1::RequestTemplate),
    Http2(http2::RequestTemplate),
}

impl Template {
    pub(super) fn new(plan: &Plan, target: &Target, path: &str, request: &RequestSpec) -> Template {
        if plan.transport.http2 {
            Template::Http2(http2::RequestTemplate::post_to(target, path, request))
        } else {
            Template::Http1(http1::RequestTemplate::post_to(target, path, request))
        }
    }
}

impl Client {
    pub(super) fn new(target: &Target, plan: &Plan, cap: usize) -> Client {
        let transport = plan.transport.clone();
        if transport.http2 {
            Client::Http2(http2::Http2Pool::new(
                target.clone(),
                transport,
                cap,
                plan.timeout,
            ))
        } else {
            Client::Http1(Http1Pool::new(target.clone(), transport, cap, plan.timeout))
        }
    }

    pub(super) async fn preopen(&self, n: usize) -> Result<(), ErrorKind> {
        match self {
            Client::Http1(pool) => pool.preopen(n).await,
            Client::Http2(pool) => pool.preopen(n).await,
            #[cfg(test)]
            Client::Simulated(_) => Ok(()),
        }
    }

    pub(super) async fn exchange(
        &self,
        template: &Template,
        request: &RequestSpec,
        clock: &RunClock,
        slot: Slot,
    ) -> Result<Exchange, ErrorKind> {
        match (self, template) {
            (Client::Http1(pool), Template::Http1(t)) => {
                http1::exchange(pool, t, request, clock, slot).await
            }
            (Client::Http2(pool), Template::Http2(t)) => {
                http2::exchange(pool, t, request, clock, slot).await
            }
            #[cfg(test)]
            (Client::Simulated(model), _) => model.exchange(clock, slot, &request.body).await,
            // Invariant: a worker's templates and client follow the same plan.
            _ => unreachable!("templates are encoded for the client's HTTP version"),
        }
    }

    /// The first TLS failure's reason, if a connection failed its handshake.
    pub(super) fn tls_error(&self) -> Option<String> {
        match self {
            Client::Http1(pool) => pool.dials.borrow().tls_error.clone(),
            Client::Http2(pool) => pool.dials.borrow().tls_error.clone(),
            #[cfg(test)]
            Client::Simulated(_) => None,
        }
    }

    /// Connections opened, requests on a reused connection, and how long opening took.
    pub(super) fn counts(&self) -> (u64, u64, Dials) {
        match self {
            Client::Http1(pool) => (pool.opened.get(), pool.reused.get(), pool.dials.take()),
            Client::Http2(pool) => (pool.opened.get(), pool.reused.get(), pool.dials.take()),
            #[cfg(test)]
            Client::Simulated(_) => (0, 0, Dials::default()),
        }
    }
}
