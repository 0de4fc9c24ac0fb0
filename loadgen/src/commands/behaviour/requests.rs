//! The requests of a behaviour measurement, encoded once: the body marked with the request's
//! number (the `user` field, or Anthropic's `metadata.user_id`, as `gb-` and 20 digits) where
//! the scenario allows, one body per distinct prompt for a cache, one `authorization` per key
//! for rate limits; and which of them request `k` is.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::bodies::{marked_body, prompt_body};
use super::plan::{BehaviourPlan, Scenario};
use crate::model::target::Target;
use crate::wire::http1::RequestTemplate;
use crate::wire::target::RequestSpec;

/// The templates for `target`, and the choice of one for each request.
pub struct Requests {
    pub templates: Vec<RequestTemplate>,
    /// Template of each request of a trial.
    pub picks: Vec<usize>,
}

/// The key sent as template `k`'s credential under `limits` in trial `set`.
pub fn key_name(set: &str, k: usize) -> String {
    format!("gb-key-{set}-{k}")
}

impl Requests {
    /// The requests of one trial to `target`, `set` naming the trial apart from every other
    /// of any run: a cache's prompts and a limit's keys are new in every trial, so each trial
    /// starts cold whatever an earlier one left cached or counted.
    pub fn build(plan: &BehaviourPlan, target: &Target, set: &str) -> Result<Requests, String> {
        let n = plan.count();
        let mut specs = Vec::new();
        match plan.scenario {
            Scenario::Cache => {
                for d in 0..plan.distinct {
                    specs.push(with_body(&plan.spec, prompt_body(&plan.spec, d, set)?));
                }
            }
            Scenario::Limits => {
                for k in 0..plan.keys {
                    let mut spec = plan.spec.clone();
                    set_key(&mut spec, &key_name(set, k));
                    specs.push(spec);
                }
            }
            _ => specs.push(plan.spec.clone()),
        }
        let anthropic = target.path.ends_with("/messages");
        let mut templates = Vec::with_capacity(specs.len());
        for spec in &specs {
            let template = if plan.marks.body {
                let (body, at) = marked_body(&spec.body, anthropic)?;
                let spec = with_body(spec, body);
                RequestTemplate::post(target, &spec).marked_at(at)
            } else {
                RequestTemplate::post(target, spec)
            };
            templates.push(template);
        }
        let picks = match plan.scenario {
            Scenario::Cache => cache_order(n, plan.distinct, plan.seed),
            Scenario::Limits => (0..n).map(|k| (k % plan.keys as u64) as usize).collect(),
            _ => vec![0; n as usize],
        };
        Ok(Requests { templates, picks })
    }
}

fn with_body(spec: &RequestSpec, body: Vec<u8>) -> RequestSpec {
    let mut spec = spec.clone();
    spec.body = body.into();
    spec
}

/// Each prompt once in order, then a seeded draw among them: a perfect cache misses exactly
/// `distinct` times.
pub fn cache_order(n: u64, distinct: usize, seed: u64) -> Vec<usize> {
    let mut rng = Pcg64Mcg::seed_from_u64(seed ^ 0xcace);
    (0..n as usize)
        .map(|k| {
            if k < distinct {
                k
            } else {
                rng.random_range(0..distinct)
            }
        })
        .collect()
}

/// Replaces the request's credentials with `key` (as a bearer token and as `x-api-key`).
fn set_key(spec: &mut RequestSpec, key: &str) {
    use hyper::header::{HeaderName, HeaderValue, AUTHORIZATION};
    let api_key = HeaderName::from_static("x-api-key");
    spec.headers
        .retain(|(n, _)| *n != AUTHORIZATION && *n != api_key);
    if let Ok(v) = HeaderValue::from_str(&format!("Bearer {key}")) {
        spec.headers.push((AUTHORIZATION, v));
    }
    if let Ok(v) = HeaderValue::from_str(key) {
        spec.headers.push((api_key, v));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cache_sees_each_prompt_once_then_repeats_in_a_seeded_order() {
        let order = cache_order(100, 10, 3);
        assert_eq!(&order[..10], &(0..10).collect::<Vec<_>>()[..]);
        assert!(order.iter().all(|&d| d < 10));
        assert_eq!(order, cache_order(100, 10, 3));
        assert_ne!(order, cache_order(100, 10, 4));
    }
}
