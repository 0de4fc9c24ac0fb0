//! A simulated target, for tests on simulated time: a seeded queue in place of a socket. Requests
//! are served first come, first served by `servers` servers, each taking a service time drawn
//! from a seeded distribution; answers inside a stall wait for its end, and requests sent in an
//! error window are answered with its status. A request that loadgen abandons (a timeout, the
//! grace) still holds its server to the end, as a real target's backlog does.
//!
//! It is a function of the instants requests arrive at, so what the code decides on it (when
//! it sends, what it records, when a search steps) comes out the same on every host.

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::rc::Rc;
use std::sync::Arc;

use gatebench_shared::sim::SimTime;

use crate::wire::clock::RunClock;
use crate::wire::exchange::Slot;
use crate::wire::outcome::{ErrorKind, Exchange, Kept};

/// Every answer: a chat completion, whole.
const ANSWER: &[u8] = br#"{"id":"chatcmpl-model","object":"chat.completion","created":0,"model":"model","choices":[{"index":0,"message":{"role":"assistant","content":"Noted."},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}"#;

/// Every answer of a target that calls tools: two calls, no text.
const CALLING: &[u8] = br#"{"id":"chatcmpl-model","object":"chat.completion","created":0,"model":"model","choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_a","type":"function","function":{"name":"look","arguments":"{\"q\":1}"}},{"id":"call_b","type":"function","function":{"name":"look","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}"#;

/// How long serving one request takes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Service {
    /// Always `ns`.
    Fixed(u64),
    /// Uniform in `[lo_ns, hi_ns]`, seeded.
    Uniform { lo_ns: u64, hi_ns: u64 },
}

/// An interval of simulated time (`CLOCK_MONOTONIC` ns).
#[derive(Debug, Clone, Copy)]
pub(crate) struct During {
    pub from_ns: u64,
    pub until_ns: u64,
}

impl During {
    fn holds(&self, ns: u64) -> bool {
        (self.from_ns..self.until_ns).contains(&ns)
    }
}

/// A simulated target; clones share one queue.
#[derive(Debug, Clone)]
pub(crate) struct SimulatedTarget {
    time: Arc<SimTime>,
    state: Rc<RefCell<Queue>>,
}

#[derive(Debug)]
struct Queue {
    service: Service,
    /// When each server is next free.
    free_at: BinaryHeap<Reverse<u64>>,
    seed: u64,
    stalls: Vec<During>,
    errors: Vec<(During, u16)>,
    /// When each request arrived, in order.
    arrivals: Vec<u64>,
    /// Each request's body, in order.
    bodies: Vec<bytes::Bytes>,
    /// Each request's lane, in order.
    lanes: Vec<Option<usize>>,
    /// Every answer calls tools.
    calls_tools: bool,
}

impl SimulatedTarget {
    /// A target of `servers` servers on `time`, each request taking `service`, seeded.
    pub(crate) fn new(time: &Arc<SimTime>, servers: usize, service: Service, seed: u64) -> Self {
        SimulatedTarget {
            time: time.clone(),
            state: Rc::new(RefCell::new(Queue {
                service,
                free_at: (0..servers.max(1)).map(|_| Reverse(0)).collect(),
                seed: mixed(seed),
                stalls: Vec::new(),
                errors: Vec::new(),
                arrivals: Vec::new(),
                bodies: Vec::new(),
                lanes: Vec::new(),
                calls_tools: false,
            })),
        }
    }

    /// Answers due inside `during` wait for its end.
    pub(crate) fn stall(self, during: During) -> Self {
        self.state.borrow_mut().stalls.push(during);
        self
    }

    /// Requests sent inside `during` are answered with `status`.
    pub(crate) fn fail(self, during: During, status: u16) -> Self {
        self.state.borrow_mut().errors.push((during, status));
        self
    }

    /// Every answer calls two tools (`call_a`, `call_b`), as an agent's model does.
    pub(crate) fn calling_tools(self) -> Self {
        self.state.borrow_mut().calls_tools = true;
        self
    }

    /// Each request's body, in order.
    pub(crate) fn bodies(&self) -> Vec<bytes::Bytes> {
        self.state.borrow().bodies.clone()
    }

    /// Each request's lane ([`Slot::lane`]), in order.
    pub(crate) fn lanes(&self) -> Vec<Option<usize>> {
        self.state.borrow().lanes.clone()
    }

    /// Requests received so far.
    pub(crate) fn received(&self) -> u64 {
        self.state.borrow().arrivals.len() as u64
    }

    /// When each request arrived, in order (`CLOCK_MONOTONIC` ns).
    pub(crate) fn arrivals(&self) -> Vec<u64> {
        self.state.borrow().arrivals.clone()
    }

    /// One exchange of `body` sent now, timed on `clock` as the wire times a real one.
    pub(crate) async fn exchange(
        &self,
        clock: &RunClock,
        slot: Slot,
        body: &bytes::Bytes,
    ) -> Result<Exchange, ErrorKind> {
        let sent_mono = self.time.now_ns();
        let (done_mono, status) = self.state.borrow_mut().admit(sent_mono);
        self.state.borrow_mut().bodies.push(body.clone());
        self.state.borrow_mut().lanes.push(slot.lane);
        let answer = if self.state.borrow().calls_tools {
            CALLING
        } else {
            ANSWER
        };
        self.time.sleep_until(done_mono).await;
        if status != 200 {
            return Err(ErrorKind::Status(status));
        }
        let done_ns = clock.ns_of(done_mono);
        Ok(Exchange {
            due_ns: slot.due_ns,
            dispatched_ns: slot.dispatched_ns,
            sent_ns: clock.ns_of(sent_mono),
            done_ns,
            first_byte_ns: Some(done_ns),
            first_output_ns: Some(done_ns),
            output_events: 1,
            // A session's turn resends the answer.
            kept: slot.keep_answer.then(|| {
                Box::new(Kept {
                    answer: answer.to_vec(),
                    ..Kept::default()
                })
            }),
            ..Exchange::default()
        })
    }
}

/// `seed` spread over 64 bits (splitmix64), never 0 (xorshift's fixed point): nearby seeds
/// give unrelated draws.
fn mixed(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)).max(1)
}

impl Queue {
    /// Takes a request arriving at `at_ns`: when it is answered, and with which status.
    fn admit(&mut self, at_ns: u64) -> (u64, u16) {
        self.arrivals.push(at_ns);
        let Reverse(free_ns) = self.free_at.pop().unwrap_or(Reverse(0));
        let mut done_ns = at_ns.max(free_ns) + self.draw();
        while let Some(stall) = self.stalls.iter().find(|s| s.holds(done_ns)) {
            done_ns = stall.until_ns;
        }
        self.free_at.push(Reverse(done_ns));
        let status = self
            .errors
            .iter()
            .find(|(during, _)| during.holds(at_ns))
            .map_or(200, |(_, status)| *status);
        (done_ns, status)
    }

    /// One service time, ns.
    fn draw(&mut self) -> u64 {
        match self.service {
            Service::Fixed(ns) => ns,
            Service::Uniform { lo_ns, hi_ns } => {
                // xorshift64: enough for a spread of service times.
                self.seed ^= self.seed << 13;
                self.seed ^= self.seed >> 7;
                self.seed ^= self.seed << 17;
                lo_ns + self.seed % (hi_ns - lo_ns + 1)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_server_serves_in_turn_and_a_stall_holds_answers_to_its_end() {
        let time = SimTime::new(0);
        let model = SimulatedTarget::new(&time, 1, Service::Fixed(1_000), 7).stall(During {
            from_ns: 10_000,
            until_ns: 50_000,
        });
        let mut queue = model.state.borrow_mut();
        assert_eq!(queue.admit(0), (1_000, 200));
        // Arrived while the first is served: waits for it.
        assert_eq!(queue.admit(500), (2_000, 200));
        // Due inside the stall: answered at its end.
        assert_eq!(queue.admit(9_500), (50_000, 200));
        assert_eq!(queue.admit(50_000), (51_000, 200));
        assert_eq!(queue.arrivals, [0, 500, 9_500, 50_000]);
    }
}
