use super::{is_completion, is_completion_seen, MOST_KEPT};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

/// The mock's chat completion, byte for byte.
const MOCK_CHAT: &str = r#"{"id":"chatcmpl-gatebench0000000000000000000","object":"chat.completion","created":1767225600,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Hello from the gatebench mock, a deterministic provider whose bytes are the same every run.","refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":7,"completion_tokens":16,"total_tokens":23},"system_fingerprint":"fp_gatebench"}"#;

#[test]
fn answers_of_every_api_are_completions() {
    for body in [
        MOCK_CHAT,
        r#"{"id":"msg_1","type":"message","content":[{"type":"text","text":"hi"}]}"#,
        r#"{"candidates":[{"content":{"parts":[{"text":"hi"}]}}]}"#,
        r#"{"object":"list","data":[{"embedding":[0.1,-2e-3,1E+2,0]}]}"#,
        " {} \n",
        r#"{"choices":null,"error":null}"#,
        r#"{"err\u006Fr":null,"\u00e9":"\ud800","a":"\"\\\/\b\f\n\r\t"}"#,
        "{\"text\":\"caf\u{e9} \u{1f600}\"}",
    ] {
        assert!(is_completion(body.as_bytes()), "{body}");
    }
}

#[test]
fn errors_and_what_is_not_json_are_not() {
    for body in [
        "",
        "   ",
        "[]",
        "null",
        r#"{"error":{"message":"overloaded","type":"server_error"}}"#,
        r#"{"error":"x","choices":[{}]}"#,
        r#"{"err\u006fr":1}"#,
        r#"{"choices":[]}"#,
        r#"{"choices":[{},1]}"#,
        r#"{"choices":{}}"#,
        r#"{"choices":[{}],"choices":[]}"#,
        r#"{"a":1}x"#,
        r#"{"a":1,}"#,
        r#"{"a":01}"#,
        r#"{"a":1.}"#,
        r#"{"a":1e}"#,
        r#"{"a":-}"#,
        r#"{"a":"\x"}"#,
        r#"{"a":"\u12g4"}"#,
        r#"{"a":tru}"#,
        r#"{"\ud800":1}"#,
        "{\"a\":\"\u{1}\"}",
        &MOCK_CHAT[..MOCK_CHAT.len() - 1],
    ] {
        assert!(!is_completion(body.as_bytes()), "{body}");
    }
    assert!(!is_completion(b"{\"a\":\"\xff\"}"), "not UTF-8");
    // The top-level object and 127 arrays are 128 levels, the most there may be.
    let deep = |arrays: usize| format!("{{\"a\":{}{}}}", "[".repeat(arrays), "]".repeat(arrays));
    assert!(is_completion(deep(127).as_bytes()), "128 levels");
    assert!(!is_completion(deep(128).as_bytes()), "129 levels");
}

#[test]
fn reads_as_serde_json_does_on_generated_and_damaged_bodies() {
    let mut rng = Pcg64::seed_from_u64(47);
    let (mut yes, mut no) = (0, 0);
    for case in 0..20_000 {
        let mut body = String::new();
        top(&mut rng, &mut body);
        let mut bytes = body.into_bytes();
        // Three in four are damaged: a byte replaced, one removed, or the body cut.
        match case % 4 {
            1 => {
                let at = rng.random_range(0..bytes.len());
                const BYTES: &[u8] = b"\"\\,:{}[] e-0.nx\x01\xff\xc3";
                bytes[at] = BYTES[rng.random_range(0..BYTES.len())];
            }
            2 => {
                bytes.remove(rng.random_range(0..bytes.len()));
            }
            3 => bytes.truncate(rng.random_range(0..bytes.len())),
            _ => {}
        }
        let expected = reference(&bytes);
        assert_eq!(
            is_completion(&bytes),
            expected,
            "case {case}: {}",
            String::from_utf8_lossy(&bytes)
        );
        if expected {
            yes += 1
        } else {
            no += 1
        }
    }
    // Both verdicts are well represented.
    assert!(yes > 4_000 && no > 4_000, "{yes} completions, {no} not");
}

/// The same verdict read by serde_json: UTF-8, then the top-level object's keys in order, each
/// `error` and `choices` judged by its last value, everything else skipped. (`choices` is read
/// as a `Value`, which refuses a lone surrogate's escape, a number out of `f64`'s range and 128
/// levels of nesting, where the check and a skip allow them: the bodies generated have none.)
fn reference(body: &[u8]) -> bool {
    struct Top(bool);
    struct TopVisitor;
    impl<'de> Visitor<'de> for TopVisitor {
        type Value = Top;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Top, A::Error> {
            let (mut error, mut no_choice) = (false, false);
            while let Some(key) = map.next_key::<String>()? {
                match key.as_str() {
                    "error" => error = map.next_value::<Option<IgnoredAny>>()?.is_some(),
                    "choices" => {
                        no_choice = match map.next_value::<Value>()? {
                            Value::Null => false,
                            Value::Array(choices) => {
                                choices.is_empty() || !choices.iter().all(Value::is_object)
                            }
                            _ => true,
                        }
                    }
                    _ => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
            }
            Ok(Top(!error && !no_choice))
        }
    }
    impl<'de> Deserialize<'de> for Top {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Top, D::Error> {
            d.deserialize_map(TopVisitor)
        }
    }
    std::str::from_utf8(body).is_ok()
        && serde_json::from_slice::<Top>(body).is_ok_and(|Top(completion)| completion)
}

/// A top-level object of a few entries, `error` and `choices` among the keys drawn.
fn top(rng: &mut Pcg64, out: &mut String) {
    const KEYS: &[&str] = &[
        "id",
        "choices",
        "error",
        "usage",
        "err\\u006fr",
        "\\u00e9",
        "k",
    ];
    out.push_str(space(rng));
    out.push('{');
    for i in 0..rng.random_range(0..5) {
        if i > 0 {
            out.push(',');
        }
        let key = KEYS[rng.random_range(0..KEYS.len())];
        out.push_str(&format!("{}\"{key}\"{}:", space(rng), space(rng)));
        match key {
            "choices" => choices(rng, out),
            "error" if rng.random_bool(0.5) => out.push_str("null"),
            _ => value(rng, out, 0),
        }
    }
    out.push_str(space(rng));
    out.push('}');
    out.push_str(space(rng));
}

fn choices(rng: &mut Pcg64, out: &mut String) {
    match rng.random_range(0..6) {
        0 => out.push_str("null"),
        1 => out.push_str("[ ]"),
        2 => value(rng, out, 0),
        _ => {
            out.push('[');
            for i in 0..rng.random_range(1..3) {
                if i > 0 {
                    out.push(',');
                }
                if rng.random_bool(0.9) {
                    object(rng, out, 1);
                } else {
                    value(rng, out, 1);
                }
            }
            out.push(']');
        }
    }
}

fn value(rng: &mut Pcg64, out: &mut String, depth: u32) {
    const STRINGS: &[&str] = &[
        "\"\"",
        "\"hi\"",
        "\"caf\u{e9} \u{1f600}\"",
        "\"a\\\"b\\\\c\\/d\\n\\t\"",
        "\"\\u00e9\\u20ac\"",
    ];
    const NUMBERS: &[&str] = &["0", "-0", "7", "-12.5", "3e8", "1E-2", "6.02e+23", "0.0"];
    match rng.random_range(0..if depth < 4 { 8 } else { 6 }) {
        0 => out.push_str("null"),
        1 => out.push_str(if rng.random_bool(0.5) {
            "true"
        } else {
            "false"
        }),
        2 | 3 => out.push_str(NUMBERS[rng.random_range(0..NUMBERS.len())]),
        4 | 5 => out.push_str(STRINGS[rng.random_range(0..STRINGS.len())]),
        6 => object(rng, out, depth + 1),
        _ => {
            out.push('[');
            for i in 0..rng.random_range(0..3) {
                if i > 0 {
                    out.push_str(", ");
                }
                value(rng, out, depth + 1);
            }
            out.push(']');
        }
    }
}

fn object(rng: &mut Pcg64, out: &mut String, depth: u32) {
    out.push('{');
    for i in 0..rng.random_range(0..3) {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&format!("\"k{i}\" : "));
        value(rng, out, depth + 1);
    }
    out.push('}');
}

fn space(rng: &mut Pcg64) -> &'static str {
    [" ", "", "", "\n\t", "\r\n "][rng.random_range(0..5)]
}

#[test]
fn a_body_seen_before_gets_its_verdict_again() {
    let error = r#"{"error":{"message":"overloaded"}}"#;
    let truncated = &MOCK_CHAT[..MOCK_CHAT.len() - 1];
    // Repeats, changes, and bodies that share a prefix or differ only in length.
    for (body, want) in [
        (MOCK_CHAT, true),
        (MOCK_CHAT, true),
        (error, false),
        (error, false),
        (MOCK_CHAT, true),
        (truncated, false),
        (MOCK_CHAT, true),
        ("", false),
        ("", false),
        (" {} ", true),
    ] {
        assert_eq!(is_completion_seen(body.as_bytes()), want, "{body}");
    }
    // Past the largest kept body, every body is read in full, and the last kept verdict stands
    // for its own body only.
    let large = format!("{{\"a\":\"{}\"}}", "x".repeat(MOST_KEPT));
    let large_error = format!("{{\"error\":1,\"a\":\"{}\"}}", "x".repeat(MOST_KEPT));
    for _ in 0..2 {
        assert!(is_completion_seen(large.as_bytes()));
        assert!(!is_completion_seen(large_error.as_bytes()));
    }
    assert!(is_completion_seen(b" {} "));
}
