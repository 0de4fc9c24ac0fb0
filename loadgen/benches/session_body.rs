//! What building a session's next request costs the client: the answer and the new message
//! (or a tool round's results) added to the history, then the next body and its prompt's size.
//! This is what a turn due at once (a tool round, or a turn with no think time) spends between
//! the answer's last byte and the request being ready to leave.
//!
//! For each API's shape, on a history of a system prompt and nine messages holding 1k, 4k and
//! 32k tokens in all (4 bytes a token), prints the median and p99 of 2,000 builds, each on a
//! fresh copy of that history after two untimed steps and bodies (as a running session's is).
//!
//! First, a streamed chat answer of 16, 60 and 256 chunks that arrived in one read: its events
//! classified as the wire reads them; classified with a session's answer kept in the same pass
//! (what a tool round does before it builds); and its raw events read back after the fact.
//!
//! `cargo bench -p loadgen --bench session_body`

use std::time::Instant;

use loadgen::generator::sessions::answer::{Answer, ToolCall};
use loadgen::generator::sessions::body::{Conversation, Dialect, Shape};
use loadgen::generator::sessions::{Message, Role, Session};

const SAMPLES: usize = 2_000;

/// Text of `tokens` tokens by the 4-bytes-a-token estimate.
fn text(tokens: usize) -> String {
    "word ".repeat(tokens * 4 / 5)
}

/// A conversation of a system prompt and nine messages, `tokens` tokens in all, its body
/// built once.
fn history(dialect: Dialect, tokens: usize) -> Conversation {
    let each = tokens / 10;
    let session = Session {
        id: "bench".into(),
        preamble: vec![Message {
            role: Role::System,
            content: text(each),
        }],
        tools: None,
        model: None,
        turns: Vec::new(),
        branches: Vec::new(),
    };
    let base = br#"{"model":"m","messages":[],"max_tokens":64,"stream":true}"#;
    let mut c = Conversation::new(Shape::of(dialect), base, &session, None);
    for k in 0..9 {
        if k % 2 == 0 {
            c.user(&text(each));
        } else {
            c.answered(&Answer {
                text: text(each),
                ..Answer::default()
            });
        }
    }
    std::hint::black_box(c.body(Some(64)));
    c
}

/// Times `step` then the next body on a fresh copy of `c`, `SAMPLES` times: median and p99 in µs.
fn time(c: &Conversation, step: impl Fn(&mut Conversation)) -> (f64, f64) {
    let mut times = Vec::with_capacity(SAMPLES);
    for _ in 0..SAMPLES {
        let mut c = c.clone();
        // Twice untimed, as a running session has: its buffers grown, its last body sent.
        for _ in 0..2 {
            step(&mut c);
            drop(c.body(Some(64)));
        }
        let start = Instant::now();
        step(&mut c);
        let body = c.body(Some(64));
        times.push(start.elapsed().as_secs_f64() * 1e6);
        std::hint::black_box(body);
    }
    times.sort_by(f64::total_cmp);
    (times[SAMPLES / 2], times[SAMPLES * 99 / 100])
}

/// A streamed chat answer of `tokens` chunks, as the mock sends it, ending in its usage.
fn stream(tokens: usize) -> Vec<u8> {
    let mut body = String::new();
    for _ in 0..tokens {
        body.push_str(r#"data: {"id":"chatcmpl-mock","object":"chat.completion.chunk","created":0,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"word "},"finish_reason":null}]}"#);
        body.push_str("\n\n");
    }
    body.push_str(r#"data: {"id":"chatcmpl-mock","object":"chat.completion.chunk","created":0,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":1000,"completion_tokens":60,"total_tokens":1060}}"#);
    body.push_str("\n\ndata: [DONE]\n\n");
    body.into_bytes()
}

/// Median and p99 of `SAMPLES` runs of `f`, µs.
fn timed(mut f: impl FnMut()) -> (f64, f64) {
    let mut times: Vec<f64> = (0..SAMPLES)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    times.sort_by(f64::total_cmp);
    (times[SAMPLES / 2], times[SAMPLES * 99 / 100])
}

fn main() {
    // A stream's events, classified as they are read off the connection.
    for tokens in [16, 60, 256] {
        let body = stream(tokens);
        let (median, p99) = timed(|| {
            let mut sse = loadgen::wire::sse::SseReader::new();
            let mut events = 0;
            sse.feed(&body, |_, _| events += 1);
            std::hint::black_box(events);
        });
        println!(
            "classify the events of a streamed chat answer of {tokens:>3} chunks: median {median:>7.2} / p99 {p99:>7.2} µs"
        );
    }
    // A session's kept stream: its chat chunks read into the answer in the pass that classifies
    // them, then the answer taken (what a tool round does now before it builds).
    for tokens in [16, 60, 256] {
        let body = stream(tokens);
        let (median, p99) = timed(|| {
            let mut sse = loadgen::wire::sse::SseReader::new();
            let mut kept = loadgen::wire::outcome::Kept::default();
            sse.feed(&body, |_, held| kept.keep(held));
            let answer = loadgen::generator::sessions::answer::read_kept(&mut kept, true);
            std::hint::black_box(answer);
        });
        println!(
            "classify and keep a streamed chat answer of {tokens:>3} chunks, then read it: median {median:>7.2} / p99 {p99:>7.2} µs"
        );
    }
    // Reading a raw streamed answer back (a whole body, or a stream another way kept) (a tool round reads it before building its next body).
    for tokens in [16, 60, 256] {
        let body = stream(tokens);
        let mut times: Vec<f64> = (0..SAMPLES)
            .map(|_| {
                let start = Instant::now();
                let answer = loadgen::generator::sessions::answer::read(&body, true);
                let took = start.elapsed().as_secs_f64() * 1e6;
                std::hint::black_box(answer);
                took
            })
            .collect();
        times.sort_by(f64::total_cmp);
        println!(
            "read a streamed chat answer of {tokens:>3} chunks: median {:>7.2} / p99 {:>7.2} µs",
            times[SAMPLES / 2],
            times[SAMPLES * 99 / 100]
        );
    }
    let answer = Answer {
        text: text(50),
        ..Answer::default()
    };
    let calls: Vec<ToolCall> = ["call_1", "call_2"]
        .map(|id| ToolCall {
            id: id.into(),
            name: "search".into(),
            arguments: r#"{"query":"weather"}"#.into(),
            ..ToolCall::default()
        })
        .to_vec();
    let calling = Answer {
        calls: calls.clone(),
        ..Answer::default()
    };
    println!("next body of a history: median / p99, µs");
    println!(
        "{:<10} {:>7} {:>18} {:>18}",
        "shape", "tokens", "turn", "tool round"
    );
    for dialect in [
        Dialect::Chat,
        Dialect::Responses,
        Dialect::Messages,
        Dialect::Gemini,
        Dialect::Bedrock,
    ] {
        for tokens in [1_000, 4_000, 32_000] {
            let c = history(dialect, tokens);
            let turn = time(&c, |c| {
                c.answered(&answer);
                c.user("And the next question?");
            });
            let round = time(&c, |c| {
                c.answered(&calling);
                c.tool_results(&calls, 100);
            });
            println!(
                "{:<10} {:>7} {:>8.2} / {:>7.2} {:>8.2} / {:>7.2}",
                format!("{dialect:?}"),
                tokens,
                turn.0,
                turn.1,
                round.0,
                round.1
            );
        }
    }
}
