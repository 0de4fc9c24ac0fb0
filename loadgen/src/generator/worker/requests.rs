//! What a worker sends: the plan's one request, or its corpus's, each encoded once for the run's
//! HTTP version with its tag for the breakdown; a slot's request is picked by index.

use std::sync::Arc;

use super::client::Template;
use crate::generator::plan::Plan;
use crate::model::target::Target;
use crate::wire::outcome::Tag;
use crate::wire::target::RequestSpec;

/// A request ready to send: its bytes, what it is, and its tag for the breakdown.
#[derive(Debug)]
pub(super) struct Sendable {
    pub(super) template: Template,
    pub(super) request: RequestSpec,
    pub(super) tag: Tag,
}

/// What a worker sends: the plan's one request, or one of its corpus's per slot.
#[derive(Debug)]
pub(super) struct Requests {
    sendables: Vec<Sendable>,
    corpus: Option<Arc<crate::generator::corpus::Corpus>>,
    seed: u64,
}

impl Requests {
    pub(super) fn new(target: &Target, plan: &Plan) -> Requests {
        let sendables = match &plan.corpus {
            Some(corpus) => corpus
                .entries
                .iter()
                .map(|e| Sendable {
                    template: Template::new(
                        plan,
                        target,
                        e.path.as_deref().unwrap_or(&target.path),
                        &e.request,
                    ),
                    request: e.request.clone(),
                    tag: Tag {
                        class: e.class,
                        body_bytes: u32::try_from(e.request.body.len()).unwrap_or(u32::MAX),
                        prompt_tokens: e.prompt_tokens,
                        ..Tag::default()
                    },
                })
                .collect(),
            None => vec![Sendable {
                template: Template::new(plan, target, &target.path, &plan.request),
                request: plan.request.clone(),
                tag: Tag {
                    body_bytes: u32::try_from(plan.request.body.len()).unwrap_or(u32::MAX),
                    prompt_tokens: serde_json::from_slice(&plan.request.body)
                        .map_or(0, |body| crate::generator::corpus::prompt_tokens(&body)),
                    ..Tag::default()
                },
            }],
        };
        Requests {
            sendables,
            corpus: plan.corpus.clone(),
            seed: plan.seed,
        }
    }

    /// The request of slot `index`.
    #[inline]
    pub(super) fn of(&self, index: u64) -> &Sendable {
        match &self.corpus {
            Some(corpus) => &self.sendables[corpus.pick(index, self.seed)],
            None => &self.sendables[0],
        }
    }
}
