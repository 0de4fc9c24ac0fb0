//! The prefill model (`--prefill-per-token`, `--prefill-slowdown`) and the bound on running
//! requests (`--max-running`, `--max-waiting`), as llm-d's inference simulator models a vLLM
//! server: time to first token = the drawn time + uncached prompt tokens × the per-token
//! time, that prefill time scaled from 1 (one request running) up to the slowdown factor (the
//! bound running) in proportion; requests past the bound wait in a queue for a slot, and past
//! the queue's bound get 429. A request takes its slot on arrival, before its body is read,
//! and runs to the end of its answer.
//! `vllm:num_requests_running`, `vllm:num_requests_waiting` and
//! `vllm:time_to_first_token_seconds` go on `/metrics`.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::config::PrefillSettings;

/// vLLM's bucket bounds of `vllm:time_to_first_token_seconds`, in seconds.
const TTFT_BOUNDS: [f64; 22] = [
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
    20.0, 40.0, 80.0, 160.0, 640.0, 2560.0,
];

/// The running requests of one server and their queue.
#[derive(Debug)]
pub struct Prefill {
    settings: PrefillSettings,
    slots: Option<Arc<Semaphore>>,
    running: Arc<AtomicU64>,
    waiting: AtomicU64,
    ttft_buckets: [AtomicU64; TTFT_BOUNDS.len() + 1],
    ttft_sum_us: AtomicU64,
}

/// A running request: its slot, freed when this drops (at the end of its answer).
#[derive(Debug)]
pub struct Running {
    running: Arc<AtomicU64>,
    _slot: Option<OwnedSemaphorePermit>,
    /// Requests running when this one was admitted, itself included.
    pub at_admission: u64,
    /// Time it waited in the queue, in µs.
    pub waited_us: u64,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.running.fetch_sub(1, Relaxed);
    }
}

/// The queue is full: the request is answered 429.
#[derive(Debug)]
pub struct QueueFull;

impl Prefill {
    /// The model of `settings`; `None` when it is off.
    pub fn new(settings: &PrefillSettings) -> Option<Prefill> {
        settings.is_on().then(|| Prefill {
            settings: *settings,
            slots: settings.max_running.map(|n| Arc::new(Semaphore::new(n))),
            running: Arc::default(),
            waiting: AtomicU64::new(0),
            ttft_buckets: Default::default(),
            ttft_sum_us: AtomicU64::new(0),
        })
    }

    /// A running slot: at once, after a wait in the queue, or [`QueueFull`].
    pub async fn run(&self) -> Result<Running, QueueFull> {
        let queued = gatebench_shared::clock::monotonic_ns();
        let slot = match &self.slots {
            None => None,
            Some(slots) => Some(match slots.clone().try_acquire_owned() {
                Ok(slot) => slot,
                Err(_) => self.queue(slots).await?,
            }),
        };
        let at_admission = self.running.fetch_add(1, Relaxed) + 1;
        Ok(Running {
            running: self.running.clone(),
            _slot: slot,
            at_admission,
            waited_us: (gatebench_shared::clock::monotonic_ns() - queued) / 1000,
        })
    }

    async fn queue(&self, slots: &Arc<Semaphore>) -> Result<OwnedSemaphorePermit, QueueFull> {
        let waiting = self.waiting.fetch_add(1, Relaxed);
        if self
            .settings
            .max_waiting
            .is_some_and(|bound| waiting >= bound as u64)
        {
            self.waiting.fetch_sub(1, Relaxed);
            return Err(QueueFull);
        }
        let slot = slots.clone().acquire_owned().await;
        self.waiting.fetch_sub(1, Relaxed);
        // Invariant: the semaphore is never closed.
        Ok(slot.expect("slots stay open"))
    }

    /// The prefill time of `uncached` prompt tokens with `running` requests running, in µs.
    pub fn prefill_us(&self, uncached: u64, running: u64) -> u64 {
        let base = self.settings.per_token.as_secs_f64() * 1e6 * uncached as f64;
        (base * self.slowdown(running)).round() as u64
    }

    /// 1 with one request running, the factor with the bound running, in proportion between
    /// (llm-d's `time-factor-under-load`).
    fn slowdown(&self, running: u64) -> f64 {
        match self.settings.max_running {
            Some(bound) if bound > 1 => {
                let share = (running.saturating_sub(1) as f64 / (bound - 1) as f64).min(1.0);
                1.0 + (self.settings.slowdown - 1.0) * share
            }
            _ => 1.0,
        }
    }

    /// Records a request's time to first token as planned.
    pub fn record_ttft(&self, us: u64) {
        let seconds = us as f64 / 1e6;
        let bucket = TTFT_BOUNDS
            .iter()
            .position(|b| seconds <= *b)
            .unwrap_or(TTFT_BOUNDS.len());
        self.ttft_buckets[bucket].fetch_add(1, Relaxed);
        self.ttft_sum_us.fetch_add(us, Relaxed);
    }

    /// The gauges and the histogram as Prometheus text, with vLLM's names.
    pub fn to_prometheus(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "# HELP vllm:num_requests_running Requests running.\n\
             # TYPE vllm:num_requests_running gauge\nvllm:num_requests_running {}\n\
             # HELP vllm:num_requests_waiting Requests waiting for a running slot.\n\
             # TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting {}",
            self.running.load(Relaxed),
            self.waiting.load(Relaxed)
        );
        out.push_str(
            "# HELP vllm:time_to_first_token_seconds Time to first token as planned, queue \
             wait included.\n# TYPE vllm:time_to_first_token_seconds histogram\n",
        );
        let mut count = 0;
        for (i, bucket) in self.ttft_buckets.iter().enumerate() {
            count += bucket.load(Relaxed);
            let le = TTFT_BOUNDS
                .get(i)
                .map_or("+Inf".to_string(), |b| b.to_string());
            let _ = writeln!(
                out,
                "vllm:time_to_first_token_seconds_bucket{{le=\"{le}\"}} {count}"
            );
        }
        let _ = writeln!(
            out,
            "vllm:time_to_first_token_seconds_sum {}\nvllm:time_to_first_token_seconds_count {count}",
            self.ttft_sum_us.load(Relaxed) as f64 / 1e6
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn model(max_running: Option<usize>, max_waiting: Option<usize>) -> Prefill {
        let settings = PrefillSettings {
            per_token: Duration::from_micros(10),
            slowdown: 3.0,
            max_running,
            max_waiting,
        };
        Prefill::new(&settings).unwrap()
    }

    #[test]
    fn prefill_grows_with_uncached_tokens_and_with_the_requests_running() {
        let p = model(Some(5), None);
        assert_eq!(p.prefill_us(1000, 1), 10_000);
        assert_eq!(p.prefill_us(0, 1), 0);
        // Half way to the bound: half the extra factor.
        assert_eq!(p.prefill_us(1000, 3), 20_000);
        assert_eq!(p.prefill_us(1000, 5), 30_000);
        assert_eq!(p.prefill_us(1000, 9), 30_000);
        assert_eq!(model(None, None).prefill_us(1000, 9), 10_000);
    }

    #[tokio::test]
    async fn past_the_bound_requests_wait_and_past_the_queue_they_are_refused() {
        let p = Arc::new(model(Some(1), Some(1)));
        let first = p.run().await.unwrap();
        assert_eq!(first.at_admission, 1);
        let waiter = {
            let p = p.clone();
            tokio::spawn(async move { p.run().await.map(|r| r.at_admission) })
        };
        while p.waiting.load(Relaxed) == 0 {
            tokio::task::yield_now().await;
        }
        assert!(p.run().await.is_err(), "the queue of one is full");
        drop(first);
        assert_eq!(waiter.await.unwrap().unwrap(), 1);
        assert_eq!(p.running.load(Relaxed), 0);
        let mut text = String::new();
        p.record_ttft(30_000);
        p.to_prometheus(&mut text);
        assert!(text.contains("vllm:num_requests_waiting 0\n"), "{text}");
        assert!(
            text.contains("vllm:time_to_first_token_seconds_bucket{le=\"0.04\"} 1\n"),
            "{text}"
        );
        assert!(
            text.contains("vllm:time_to_first_token_seconds_count 1\n"),
            "{text}"
        );
    }
}
