//! Results broken down by group: per request class of a corpus, and per stage of a ramp (by
//! each request's intended start). Each group keeps its counts, its response times and TTFTs,
//! and the sizes of what it sent.

use hdrhistogram::Histogram;

use crate::generator::histogram::new_histogram;
use crate::results::metric::Summary;
use crate::wire::outcome::Exchange;
use crate::wire::outcome::Tag;

/// One group's record.
#[derive(Debug, Clone)]
pub struct Group {
    pub ok: u64,
    pub errors: u64,
    pub response_time: Histogram<u64>,
    pub ttft: Histogram<u64>,
    pub body_bytes: u64,
    pub prompt_tokens: u64,
    pub output_tokens: u64,
}

impl Default for Group {
    fn default() -> Group {
        // Two significant digits: a group's percentiles within 1%, at a tenth of the memory.
        Group {
            ok: 0,
            errors: 0,
            response_time: new_histogram(2),
            ttft: new_histogram(2),
            body_bytes: 0,
            prompt_tokens: 0,
            output_tokens: 0,
        }
    }
}

impl Group {
    pub(crate) fn sent(&mut self, tag: Tag) {
        self.body_bytes += u64::from(tag.body_bytes);
        self.prompt_tokens += u64::from(tag.prompt_tokens);
    }

    pub(crate) fn success(&mut self, x: &Exchange, response_us: u64) {
        self.ok += 1;
        self.sent(x.tag);
        self.response_time.saturating_record(response_us);
        if x.stream {
            if let Some(first) = x.first_output_ns {
                let ttft_us = first.saturating_sub(x.due_ns) / 1_000;
                self.ttft.saturating_record(ttft_us.max(1));
            }
            self.output_tokens += x.usage_tokens.unwrap_or(x.output_events);
        }
    }

    pub(crate) fn failure(&mut self, tag: Tag) {
        self.errors += 1;
        self.sent(tag);
    }

    pub(crate) fn merge(&mut self, other: &Group) {
        self.ok += other.ok;
        self.errors += other.errors;
        // Invariant: every group's histograms are made by `new_histogram(2)`.
        self.response_time
            .add(&other.response_time)
            .expect("same bounds");
        self.ttft.add(&other.ttft).expect("same bounds");
        self.body_bytes += other.body_bytes;
        self.prompt_tokens += other.prompt_tokens;
        self.output_tokens += other.output_tokens;
    }

    /// The group's summary, named `name`.
    pub fn summary(&self, name: &str) -> GroupSummary {
        let requests = self.ok + self.errors;
        let mean = |sum: u64| sum as f64 / requests.max(1) as f64;
        GroupSummary {
            name: name.to_string(),
            requests,
            ok: self.ok,
            errors: self.errors,
            response_time: Summary::of(&self.response_time),
            ttft: (!self.ttft.is_empty()).then(|| Summary::of(&self.ttft)),
            mean_body_bytes: mean(self.body_bytes),
            mean_prompt_tokens: mean(self.prompt_tokens),
            mean_output_tokens: self.output_tokens as f64 / self.ok.max(1) as f64,
            stage: None,
        }
    }
}

use crate::results::breakdown::GroupSummary;

/// Groups by class and by stage.
#[derive(Debug, Clone, Default)]
pub struct Breakdown {
    pub classes: Vec<Group>,
    pub stages: Vec<Group>,
    /// Each stage's end, ns from the start of the run.
    stage_ends_ns: Vec<u64>,
}

impl Breakdown {
    /// `classes` groups by class, and one group per stage ending at `stage_ends_ns`.
    pub fn new(classes: usize, stage_ends_ns: Vec<u64>) -> Breakdown {
        Breakdown {
            classes: vec![Group::default(); classes],
            stages: vec![Group::default(); stage_ends_ns.len()],
            stage_ends_ns,
        }
    }

    fn stage(&mut self, due_ns: u64) -> Option<&mut Group> {
        let at = self
            .stage_ends_ns
            .partition_point(|end| *end <= due_ns)
            .min(self.stages.len().checked_sub(1)?);
        self.stages.get_mut(at)
    }

    pub fn success(&mut self, x: &Exchange, response_us: u64) {
        if let Some(group) = self.classes.get_mut(usize::from(x.tag.class)) {
            group.success(x, response_us);
        }
        if let Some(group) = self.stage(x.due_ns) {
            group.success(x, response_us);
        }
    }

    pub fn failure(&mut self, tag: Tag, due_ns: u64) {
        if let Some(group) = self.classes.get_mut(usize::from(tag.class)) {
            group.failure(tag);
        }
        if let Some(group) = self.stage(due_ns) {
            group.failure(tag);
        }
    }

    pub fn merge(&mut self, other: &Breakdown) {
        for (mine, theirs) in self.classes.iter_mut().zip(&other.classes) {
            mine.merge(theirs);
        }
        for (mine, theirs) in self.stages.iter_mut().zip(&other.stages) {
            mine.merge(theirs);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn x(due_ms: u64, class: u16, stream: bool) -> Exchange {
        Exchange {
            due_ns: due_ms * 1_000_000,
            done_ns: (due_ms + 5) * 1_000_000,
            first_output_ns: stream.then_some((due_ms + 2) * 1_000_000),
            output_events: 4,
            stream,
            tag: Tag {
                class,
                body_bytes: 100,
                prompt_tokens: 20,
                ..Tag::default()
            },
            ..Exchange::default()
        }
    }

    #[test]
    fn requests_land_in_their_class_and_their_stage() {
        let mut b = Breakdown::new(2, vec![1_000_000_000, 3_000_000_000]);
        b.success(&x(10, 0, false), 5_000);
        b.success(&x(1_500, 1, true), 5_000);
        b.failure(
            Tag {
                class: 1,
                body_bytes: 300,
                prompt_tokens: 60,
                ..Tag::default()
            },
            2_999_000_000,
        );
        // Past the last stage's end: counted in the last.
        b.success(&x(9_000, 1, false), 5_000);
        let mut other = Breakdown::new(2, vec![1_000_000_000, 3_000_000_000]);
        other.success(&x(20, 0, false), 5_000);
        b.merge(&other);
        let (c0, c1) = (b.classes[0].summary("a"), b.classes[1].summary("b"));
        assert_eq!((c0.ok, c0.errors, c1.ok, c1.errors), (2, 0, 2, 1));
        assert_eq!(c1.mean_body_bytes, 500.0 / 3.0);
        assert!(c0.ttft.is_none());
        let ttft = c1.ttft.unwrap();
        assert!((1_990..=2_010).contains(&ttft.p50), "{}", ttft.p50);
        assert_eq!(c1.mean_output_tokens, 2.0);
        let (s0, s1) = (b.stages[0].summary("0"), b.stages[1].summary("1"));
        assert_eq!((s0.ok, s1.ok, s1.errors), (2, 2, 1));
    }
}
