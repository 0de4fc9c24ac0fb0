use std::borrow::Cow;

use gatebench_shared::wire::openai::{ChatRequest, MessagesScan, StreamOptions};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use super::{read, read_seen};

/// serde's reading, the reference.
fn serde(body: &[u8]) -> Option<ChatRequest<'_>> {
    serde_json::from_slice(body).ok()
}

#[test]
fn a_benchmarks_body_is_read_as_serde_reads_it() {
    let body = br#"{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Say hello."}],"max_tokens":16}"#;
    let request = read(body).expect("a plain body is read");
    assert_eq!(request.model, Some(Cow::Borrowed("gpt-4o-mini")));
    assert_eq!(
        request.messages,
        Some(MessagesScan {
            count: 1,
            text_bytes: 10
        })
    );
    assert_eq!(request.max_tokens, Some(16));
    assert_eq!(Some(&request), serde(body).as_ref());

    let streamed = br#" { "model" : null , "stream": true, "stream_options": {"include_usage": true, "x": [1]},
        "messages": [ {"role":"system","content":"a\nb\u00e9"}, {"content":[{"type":"text","text":"hi"},{"text":null},{"text":123}]}, {"content":null}, {} ],
        "max_completion_tokens": 0, "n": 1, "temperature": 0.5e-1, "tools": [] } "#;
    let request = read(streamed).expect("read");
    assert_eq!(request.stream, Some(true));
    assert_eq!(
        request.stream_options,
        Some(StreamOptions {
            include_usage: Some(true)
        })
    );
    // "a\nb\u00e9" is 10 bytes as written; the parts count "hi" (2) and 123 (3 - 2).
    assert_eq!(
        request.messages,
        Some(MessagesScan {
            count: 4,
            text_bytes: 10 + 2 + 1
        })
    );
    assert_eq!(Some(&request), serde(streamed).as_ref());
}

#[test]
fn bodies_it_cannot_read_exactly_are_left_to_serde() {
    for body in [
        // serde reads these, with escapes read out or a number out of the reader's reach.
        r#"{"mod\u0065l":"m"}"#,
        r#"{"model":"a\"b"}"#,
        r#"{"max_tokens":18446744073709551615}"#,
        // serde refuses these: a field twice, a number not whole, a part not an object.
        r#"{"model":"a","model":"b"}"#,
        r#"{"stream_options":{"include_usage":true,"include_usage":false}}"#,
        r#"{"messages":[{"content":[{"text":"a","text":"b"}]}]}"#,
        r#"{"max_tokens":16.0}"#,
        r#"{"max_tokens":-1}"#,
        r#"{"n":016}"#,
        r#"{"messages":[{"content":["a"]}]}"#,
        r#"{"messages":["a"]}"#,
        r#"{"stream":"yes"}"#,
        r#"[1,2]"#,
        r#"{"model":"m"} x"#,
        r#"{"model":"m",}"#,
    ] {
        assert_eq!(read(body.as_bytes()), None, "{body}");
    }
    assert!(read(b"{\"model\":\"\xff\"}").is_none());
}

/// Nesting is read to 128 levels counted from the top-level object, the limit of serde's own
/// reading; deeper values are left to serde (which skips them without a limit).
#[test]
fn nesting_past_the_limit_is_left_to_serde() {
    // Top-level object, messages, a message, its content array, a part: 5 levels, then arrays.
    let deep = |arrays: usize| {
        format!(
            r#"{{"messages":[{{"content":[{{"text":{}{}}}]}}]}}"#,
            "[".repeat(arrays),
            "]".repeat(arrays)
        )
    };
    let most = deep(123);
    assert!(read(most.as_bytes()).is_some());
    assert_eq!(read(most.as_bytes()), serde(most.as_bytes()));
    assert_eq!(read(deep(124).as_bytes()), None);
}

/// Generated bodies, three in four damaged: whatever the reader takes, serde reads the same.
#[test]
fn reads_as_serde_does_on_generated_and_damaged_bodies() {
    let mut rng = Pcg64::seed_from_u64(50);
    let (mut taken, mut whole_taken, mut whole_read) = (0, 0, 0);
    for round in 0..20_000 {
        let mut body = String::new();
        top(&mut rng, &mut body);
        let mut bytes = body.into_bytes();
        let damaged = round % 4 != 0;
        if damaged {
            damage(&mut rng, &mut bytes);
        } else {
            whole_read += usize::from(serde(&bytes).is_some());
        }
        let Some(request) = read(&bytes) else {
            continue;
        };
        taken += 1;
        whole_taken += usize::from(!damaged);
        assert_eq!(
            Some(&request),
            serde(&bytes).as_ref(),
            "{}",
            String::from_utf8_lossy(&bytes)
        );
    }
    // The test means something only if the reader takes most of the undamaged bodies serde
    // reads (it leaves escaped keys to serde).
    assert!(
        whole_taken * 4 > whole_read * 3,
        "{whole_taken} of {whole_read} undamaged"
    );
    assert!(taken > whole_taken, "no damaged body was read at all");
}

#[test]
fn a_kept_body_reads_every_body_as_a_full_read_does() {
    let mut rng = Pcg64::seed_from_u64(51);
    let mut bodies: Vec<Vec<u8>> = Vec::new();
    for round in 0..3_000 {
        let mut body = String::new();
        top(&mut rng, &mut body);
        let bytes = body.into_bytes();
        // Each body once or a few times in a row, and now and then a damaged copy right after
        // it (compared with it: the same length, or close).
        for _ in 0..rng.random_range(1..=3) {
            bodies.push(bytes.clone());
        }
        if round % 3 == 0 {
            let mut damaged = bytes.clone();
            damage(&mut rng, &mut damaged);
            bodies.push(damaged);
        }
    }
    // Then bodies that all differ (the kept reading backs off), and one body again and again:
    // seen again within a round.
    for i in 0..300 {
        bodies.push(format!(r#"{{"model":"m{i}","messages":[]}}"#).into_bytes());
    }
    let again = br#"{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi."}]}"#;
    bodies.extend(std::iter::repeat_n(again.to_vec(), 300));
    // Bodies that start with the kept one or are it cut short: compared with it, and not it.
    let longer = [again.as_slice(), b" x"].concat();
    let shorter = again[..again.len() - 1].to_vec();
    bodies.extend([longer, again.to_vec(), shorter]);
    bodies.extend(std::iter::repeat_n(again.to_vec(), 300));
    for (i, body) in bodies.iter().enumerate() {
        // A copy elsewhere: the model is read from this body's bytes, not the kept one's.
        let copy = body.clone();
        let want = read(&copy);
        let got = read_seen(&copy);
        assert_eq!(got, want, "body {i}: {}", String::from_utf8_lossy(body));
        if let Some(Cow::Borrowed(model)) = got.as_ref().and_then(|r| r.model.as_ref()) {
            let inside = copy.as_ptr_range().contains(&model.as_ptr());
            assert!(
                inside || model.is_empty(),
                "body {i}: model not read from it"
            );
        }
    }
    // The last bodies were served from the kept reading (a reading that never matched would
    // have given up comparing long before).
    let hit =
        super::seen::LAST.with_borrow_mut(|last| last.seen(|kept, _| kept == again).is_some());
    assert!(hit);
}

fn top(rng: &mut Pcg64, out: &mut String) {
    out.push_str(space(rng));
    out.push('{');
    let keys = rng.random_range(0..8);
    for i in 0..keys {
        if i > 0 {
            out.push(',');
        }
        out.push_str(space(rng));
        let key = match rng.random_range(0..12) {
            0 => "model",
            1 | 2 => "messages",
            3 => "stream",
            4 => "stream_options",
            5 => "max_tokens",
            6 => "max_completion_tokens",
            7 => "n",
            8 => "temperature",
            9 => "tools",
            10 => "mod\\u0065l",
            _ => "user",
        };
        out.push_str(&format!("\"{key}\"{}:{}", space(rng), space(rng)));
        match key {
            "messages" if rng.random_bool(0.9) => messages(rng, out),
            "stream_options" if rng.random_bool(0.8) => {
                out.push_str(r#"{"include_usage":"#);
                value(rng, out, 2);
                out.push('}');
            }
            "max_tokens" | "max_completion_tokens" | "n" if rng.random_bool(0.7) => {
                out.push_str(&rng.random_range(0..100_000u32).to_string());
            }
            "model" if rng.random_bool(0.7) => out.push_str(r#""gpt-4o-mini""#),
            "stream" if rng.random_bool(0.7) => out.push_str("true"),
            _ => value(rng, out, 1),
        }
        out.push_str(space(rng));
    }
    out.push('}');
    out.push_str(space(rng));
}

fn messages(rng: &mut Pcg64, out: &mut String) {
    out.push('[');
    for i in 0..rng.random_range(0..4) {
        if i > 0 {
            out.push(',');
        }
        out.push_str(r#"{"role":"user","content":"#);
        match rng.random_range(0..4) {
            0 | 1 => string(rng, out),
            2 => {
                out.push('[');
                for j in 0..rng.random_range(0..3) {
                    if j > 0 {
                        out.push(',');
                    }
                    out.push_str(r#"{"type":"text","text":"#);
                    value(rng, out, 3);
                    out.push('}');
                }
                out.push(']');
            }
            _ => value(rng, out, 2),
        }
        out.push('}');
    }
    out.push(']');
}

fn value(rng: &mut Pcg64, out: &mut String, depth: u32) {
    match rng.random_range(0..if depth < 4 { 9 } else { 7 }) {
        0 => out.push_str("null"),
        1 => out.push_str(["true", "false"][rng.random_range(0..2)]),
        2 => out.push_str(
            ["0", "16", "-3", "1.5", "2e9", "016", "18446744073709551616"][rng.random_range(0..7)],
        ),
        3 | 4 => string(rng, out),
        5 => out.push_str(r#"{"a":1}"#),
        6 => out.push_str("[]"),
        7 => {
            out.push('[');
            value(rng, out, depth + 1);
            out.push(',');
            value(rng, out, depth + 1);
            out.push(']');
        }
        _ => {
            out.push_str(r#"{"k":"#);
            value(rng, out, depth + 1);
            out.push('}');
        }
    }
}

fn string(rng: &mut Pcg64, out: &mut String) {
    out.push('"');
    for _ in 0..rng.random_range(0..12) {
        out.push_str(
            [
                "a",
                " ",
                "\\n",
                "\\\"",
                "\\u00e9",
                "\\ud800",
                "\u{e9}",
                "Say hello.",
            ][rng.random_range(0..8)],
        );
    }
    out.push('"');
}

fn space(rng: &mut Pcg64) -> &'static str {
    [" ", "", "", "\n\t"][rng.random_range(0..4)]
}

/// One to three bytes changed, inserted or removed, from a set that JSON's grammar turns on.
fn damage(rng: &mut Pcg64, bytes: &mut Vec<u8>) {
    const PICKS: &[u8] = b"{}[],:\"\\ntf0123456789.-eE \x01\xff";
    for _ in 0..rng.random_range(1..4) {
        if bytes.is_empty() {
            return;
        }
        let at = rng.random_range(0..bytes.len());
        let pick = PICKS[rng.random_range(0..PICKS.len())];
        match rng.random_range(0..3) {
            0 => bytes[at] = pick,
            1 => bytes.insert(at, pick),
            _ => {
                bytes.remove(at);
            }
        }
    }
}
