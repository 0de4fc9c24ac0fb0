//! Request corpora (`--requests-file FILE.jsonl`): many distinct requests instead of one body,
//! every one pre-encoded at start-up, drawn per slot seeded and weighted or in file order.
//!
//! A line is a JSON object: either a request body itself, or an envelope with a `body` and
//! optional `route` (also `url`, as OpenAI's batch files name it), `headers`, `stream`,
//! `weight` and `class`. A request's class (lines that name none share one) breaks the
//! results down.

use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;
use hyper::header::{HeaderName, HeaderValue};
use serde_json::{Map, Value};

use crate::generator::plan_error::PlanError;
use crate::wire::target::RequestSpec;

pub mod synth;

/// One request of a corpus.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Body, headers (the run's, then the line's), whether it streams, its `max_tokens`.
    pub request: RequestSpec,
    /// The line's route, in place of the target's path.
    pub path: Option<String>,
    pub weight: f64,
    /// Index into the corpus's classes.
    pub class: u16,
    /// Prompt tokens by the 4-bytes-a-token estimate of the body's text.
    pub prompt_tokens: u32,
}

use crate::results::plan::{CorpusSummary, Order, Spread};

impl Order {
    pub fn parse(text: &str) -> Result<Order, PlanError> {
        match text {
            "random" => Ok(Order::Random),
            "sequential" => Ok(Order::Sequential),
            other => Err(PlanError::Named(
                "--requests-order",
                other.to_string(),
                "random or sequential",
            )),
        }
    }
}

/// Most distinct classes (each gets its own histograms).
pub const MAX_CLASSES: usize = 64;

/// Most lines a corpus may hold.
const MAX_ENTRIES: usize = 10_000_000;

/// The requests a run sends, ready to encode.
#[derive(Debug, Clone)]
pub struct Corpus {
    pub source: String,
    pub entries: Vec<Entry>,
    /// Class names; `""` for lines that name none.
    pub classes: Vec<String>,
    pub order: Order,
    /// Running sums of the weights, for weighted draws.
    cumulative: Vec<f64>,
    /// CRC-32 of the source bytes (shards of different corpora are not merged).
    crc32: u32,
}

impl Corpus {
    /// A corpus of `entries` (with `classes`) drawn in `order`.
    pub fn new(
        source: String,
        entries: Vec<Entry>,
        classes: Vec<String>,
        order: Order,
        crc32: u32,
    ) -> Corpus {
        let mut sum = 0.0;
        let cumulative = entries
            .iter()
            .map(|e| {
                sum += e.weight;
                sum
            })
            .collect();
        Corpus {
            source,
            entries,
            classes,
            order,
            cumulative,
            crc32,
        }
    }

    /// Reads a JSON-lines corpus; every line gets `headers` (a line's own header of the same
    /// name wins) and streams when its body, its envelope or a stream route (`stream_path`
    /// of the target or the line's route) says so.
    pub fn read(
        path: &Path,
        order: Order,
        headers: &[(HeaderName, HeaderValue)],
        stream_path: impl Fn(&str) -> bool,
    ) -> Result<Corpus, PlanError> {
        let name = path.display().to_string();
        let bytes = std::fs::read(path)
            .map_err(|e| PlanError::File("--requests-file", name.clone(), e.to_string()))?;
        let text = std::str::from_utf8(&bytes).map_err(|_| {
            PlanError::File("--requests-file", name.clone(), "not UTF-8 text".into())
        })?;
        let mut classes: Vec<String> = Vec::new();
        let mut entries = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let bad = |why: String| {
                PlanError::File(
                    "--requests-file",
                    name.clone(),
                    format!("line {}: {why}", n + 1),
                )
            };
            let (entry, class) = parse_line(line, headers, &stream_path).map_err(bad)?;
            let class = class_id(&mut classes, &class).ok_or_else(|| {
                bad(format!(
                    "more than {MAX_CLASSES} classes; results are broken down by class"
                ))
            })?;
            entries.push(Entry { class, ..entry });
            if entries.len() > MAX_ENTRIES {
                return Err(bad(format!("more than {MAX_ENTRIES} requests")));
            }
        }
        if entries.is_empty() {
            return Err(PlanError::File(
                "--requests-file",
                name,
                "no requests (one JSON object a line)".into(),
            ));
        }
        let crc32 = crc32fast::hash(&bytes);
        Ok(Corpus::new(name, entries, classes, order, crc32))
    }

    /// The line slot `index` sends: seeded by `seed` and the index alone, so every worker and
    /// every shard agrees on every slot.
    pub fn pick(&self, index: u64, seed: u64) -> usize {
        let n = self.entries.len();
        match self.order {
            Order::Sequential => (index % n as u64) as usize,
            Order::Random => {
                let total = self.cumulative.last().copied().unwrap_or(0.0);
                let u = unit(mix(seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15))) * total;
                self.cumulative.partition_point(|c| *c <= u).min(n - 1)
            }
        }
    }

    /// True when results are broken down by class (some line names one).
    pub fn has_classes(&self) -> bool {
        self.classes.len() > 1 || self.classes.first().is_some_and(|c| !c.is_empty())
    }

    /// True when some line streams.
    pub fn any_stream(&self) -> bool {
        self.entries.iter().any(|e| e.request.stream)
    }

    /// What the result says of the corpus.
    pub fn summary(&self) -> CorpusSummary {
        let bytes: Vec<u64> = self
            .entries
            .iter()
            .map(|e| e.request.body.len() as u64)
            .collect();
        let tokens: Vec<u64> = self
            .entries
            .iter()
            .map(|e| u64::from(e.prompt_tokens))
            .collect();
        CorpusSummary {
            source: self.source.clone(),
            requests: self.entries.len(),
            order: self.order,
            classes: self.classes.clone(),
            streaming: self.entries.iter().filter(|e| e.request.stream).count(),
            body_bytes: Spread::of(&bytes),
            prompt_tokens: Spread::of(&tokens),
            crc32: self.crc32,
        }
    }
}

impl Spread {
    fn of(values: &[u64]) -> Spread {
        if values.is_empty() {
            return Spread::default();
        }
        Spread {
            min: values.iter().copied().min().unwrap_or(0),
            mean: values.iter().sum::<u64>() as f64 / values.len() as f64,
            max: values.iter().copied().max().unwrap_or(0),
        }
    }
}

/// Serializes a plan's corpus as its summary.
pub(crate) fn as_summary<S: serde::Serializer>(
    corpus: &Option<Arc<Corpus>>,
    s: S,
) -> Result<S::Ok, S::Error> {
    match corpus {
        Some(c) => s.serialize_some(&c.summary()),
        None => s.serialize_none(),
    }
}

/// The index of class `name` in `classes`, added when new; `None` past [`MAX_CLASSES`].
pub(crate) fn class_id(classes: &mut Vec<String>, name: &str) -> Option<u16> {
    let at = match classes.iter().position(|c| c == name) {
        Some(at) => at,
        None if classes.len() < MAX_CLASSES => {
            classes.push(name.to_string());
            classes.len() - 1
        }
        None => return None,
    };
    u16::try_from(at).ok()
}

/// SplitMix64's finaliser: a well-spread 64-bit value of `x`.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// A value in [0, 1) from 64 random bits.
fn unit(bits: u64) -> f64 {
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

/// One line: the entry (class unset) and its class name.
fn parse_line(
    line: &str,
    headers: &[(HeaderName, HeaderValue)],
    stream_path: &impl Fn(&str) -> bool,
) -> Result<(Entry, String), String> {
    let value: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    let Value::Object(object) = value else {
        return Err("not a JSON object".into());
    };
    let (body, envelope) = split_envelope(object);
    if let Some(method) = envelope.get("method").and_then(Value::as_str) {
        if !method.eq_ignore_ascii_case("POST") {
            return Err(format!("method {method}: only POST requests are sent"));
        }
    }
    let path = route(&envelope)?;
    let weight = weight(&envelope)?;
    let class = class(&envelope)?;
    let all = line_headers(&envelope, headers)?;
    let stream = match envelope.get("stream") {
        Some(Value::Bool(s)) => *s,
        Some(other) => return Err(format!("stream {other}: expected true or false")),
        None => {
            body.get("stream").and_then(Value::as_bool).unwrap_or(false)
                || path.as_deref().is_some_and(stream_path)
        }
    };
    let max_tokens = max_tokens(&body);
    let prompt_tokens = prompt_tokens(&body);
    let bytes = Bytes::from(Value::Object(body).to_string());
    let entry = Entry {
        request: RequestSpec {
            scenario: "corpus".into(),
            stream,
            body: bytes,
            max_tokens,
            headers: all,
        },
        path,
        weight,
        class: 0,
        prompt_tokens,
    };
    Ok((entry, class))
}

/// A line's body and its envelope: the object under `body` and the rest when `body` is an
/// object, else the whole line as the body and no envelope.
fn split_envelope(object: Map<String, Value>) -> (Map<String, Value>, Map<String, Value>) {
    if !matches!(object.get("body"), Some(Value::Object(_))) {
        return (object, Map::new());
    }
    let mut envelope = object;
    let Some(Value::Object(body)) = envelope.remove("body") else {
        unreachable!("checked above")
    };
    (body, envelope)
}

/// The envelope's `route` (or `url`): a path, or none for the target's own.
fn route(envelope: &Map<String, Value>) -> Result<Option<String>, String> {
    match envelope.get("route").or_else(|| envelope.get("url")) {
        None => Ok(None),
        Some(Value::String(p)) if p.starts_with('/') => Ok(Some(p.clone())),
        Some(other) => Err(format!("route {other}: expected a path like /v1/messages")),
    }
}

/// The envelope's `weight`, 1 when it has none.
fn weight(envelope: &Map<String, Value>) -> Result<f64, String> {
    match envelope.get("weight") {
        None => Ok(1.0),
        Some(w) => w
            .as_f64()
            .filter(|w| w.is_finite() && *w > 0.0)
            .ok_or_else(|| format!("weight {w}: expected a number above 0")),
    }
}

/// The envelope's `class`, empty when it has none.
fn class(envelope: &Map<String, Value>) -> Result<String, String> {
    match envelope.get("class") {
        None => Ok(String::new()),
        Some(Value::String(c)) if !c.is_empty() && c.len() <= 64 => Ok(c.clone()),
        Some(other) => Err(format!(
            "class {other}: expected a name of 1 to 64 characters"
        )),
    }
}

/// The plan's `headers` with the envelope's own `headers` over them (one of a name replaces
/// the plan's).
fn line_headers(
    envelope: &Map<String, Value>,
    headers: &[(HeaderName, HeaderValue)],
) -> Result<Vec<(HeaderName, HeaderValue)>, String> {
    let mut all = headers.to_vec();
    let Some(own) = envelope.get("headers") else {
        return Ok(all);
    };
    let own = own
        .as_object()
        .ok_or("headers: expected an object of names and values")?;
    for (name, value) in own {
        let bad = || format!("header {name}: expected a name and a text value");
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| bad())?;
        let value = value
            .as_str()
            .and_then(|v| HeaderValue::from_str(v).ok())
            .ok_or_else(bad)?;
        all.retain(|(n, _)| *n != name);
        all.push((name, value));
    }
    Ok(all)
}

/// The output tokens a body asks for, under any API's name for them.
pub(crate) fn max_tokens(body: &Map<String, Value>) -> Option<u64> {
    ["max_completion_tokens", "max_tokens", "max_output_tokens"]
        .iter()
        .find_map(|k| body.get(*k).and_then(Value::as_u64))
        .or_else(|| {
            body.get("generationConfig")
                .and_then(|g| g.get("maxOutputTokens"))
                .and_then(Value::as_u64)
        })
}

/// The body's fields that hold the prompt, under any API's name for them.
pub(crate) const PROMPT_FIELDS: [&str; 7] = [
    "messages",
    "input",
    "prompt",
    "contents",
    "system",
    "systemInstruction",
    "instructions",
];

/// The bytes of prompt text in `value`: every string but roles and part types.
pub(crate) fn text_bytes(value: &Value) -> usize {
    match value {
        Value::String(s) => s.len(),
        Value::Array(items) => items.iter().map(text_bytes).sum(),
        Value::Object(fields) => fields
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "role" | "type"))
            .map(|(_, v)| text_bytes(v))
            .sum(),
        _ => 0,
    }
}

/// Tokens of `bytes` of prompt text, by the 4-bytes-a-token estimate.
pub(crate) fn tokens_of_text(bytes: usize) -> u32 {
    u32::try_from(bytes.div_ceil(4)).unwrap_or(u32::MAX)
}

/// The prompt's tokens by the 4-bytes-a-token estimate: the bytes of the text in the prompt's
/// fields (every string but roles and part types), 4 to a token.
pub(crate) fn prompt_tokens(body: &Map<String, Value>) -> u32 {
    let bytes: usize = PROMPT_FIELDS
        .iter()
        .filter_map(|k| body.get(*k))
        .map(text_bytes)
        .sum();
    tokens_of_text(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus(text: &str, order: Order) -> Result<Corpus, PlanError> {
        let path = std::env::temp_dir().join(format!(
            "gatebench-corpus-{}-{}",
            std::process::id(),
            crc32fast::hash(text.as_bytes())
        ));
        std::fs::write(&path, text).unwrap();
        let headers = [(
            HeaderName::from_static("authorization"),
            HeaderValue::from_static("Bearer run"),
        )];
        let corpus = Corpus::read(&path, order, &headers, |p| p.ends_with("-stream"));
        let _ = std::fs::remove_file(&path);
        corpus
    }

    #[test]
    fn bare_bodies_and_envelopes_are_both_lines() {
        let c = corpus(
            "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"12345678\"}],\"max_tokens\":7}\n\
             \n\
             {\"custom_id\":\"a\",\"method\":\"POST\",\"url\":\"/v1/messages\",\"class\":\"long\",\"weight\":3,\
              \"headers\":{\"authorization\":\"Bearer line\"},\"body\":{\"model\":\"c\",\"stream\":true,\"messages\":[]}}\n\
             {\"route\":\"/model/x/converse-stream\",\"body\":{\"messages\":[]}}\n",
            Order::Random,
        )
        .unwrap();
        assert_eq!(c.entries.len(), 3);
        let [a, b, d] = &c.entries[..] else { panic!() };
        assert_eq!(
            (a.request.max_tokens, a.prompt_tokens, a.path.as_deref()),
            (Some(7), 2, None)
        );
        assert!(!a.request.stream);
        assert_eq!(a.request.headers[0].1, "Bearer run");
        assert_eq!(b.path.as_deref(), Some("/v1/messages"));
        assert!(b.request.stream && d.request.stream);
        assert_eq!(b.request.headers.len(), 1);
        assert_eq!(b.request.headers[0].1, "Bearer line");
        assert_eq!(
            &b.request.body[..],
            b"{\"messages\":[],\"model\":\"c\",\"stream\":true}"
        );
        assert_eq!(c.classes, ["", "long"]);
        assert_eq!((a.class, b.class, d.class), (0, 1, 0));
        assert!(c.has_classes() && c.any_stream());
        let summary = c.summary();
        assert_eq!((summary.requests, summary.streaming), (3, 2));
    }

    #[test]
    fn draws_follow_the_weights_and_the_seed_alone() {
        let c = corpus(
            "{\"weight\":1,\"body\":{\"a\":1}}\n{\"weight\":3,\"body\":{\"b\":1}}\n",
            Order::Random,
        )
        .unwrap();
        let picks: Vec<usize> = (0..40_000).map(|i| c.pick(i, 7)).collect();
        let second = picks.iter().filter(|p| **p == 1).count() as f64 / 40_000.0;
        assert!((second - 0.75).abs() < 0.01, "{second}");
        assert_eq!(
            picks[..50],
            (0..50).map(|i| c.pick(i, 7)).collect::<Vec<_>>()[..]
        );
        assert_ne!(
            picks[..50],
            (0..50).map(|i| c.pick(i, 8)).collect::<Vec<_>>()[..]
        );
        let s = corpus("{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n", Order::Sequential).unwrap();
        assert_eq!(
            (0..7).map(|i| s.pick(i, 0)).collect::<Vec<_>>(),
            [0, 1, 2, 0, 1, 2, 0]
        );
    }

    #[test]
    fn bad_lines_name_their_line() {
        for (text, says) in [
            ("{\"a\":1}\n[1]\n", "line 2: not a JSON object"),
            ("nope\n", "line 1: not JSON"),
            ("{\"method\":\"GET\",\"body\":{}}\n", "only POST"),
            ("{\"weight\":0,\"body\":{}}\n", "weight 0"),
            ("{\"route\":\"v1\",\"body\":{}}\n", "expected a path"),
            ("{\"stream\":1,\"body\":{}}\n", "stream 1"),
            ("\n\n", "no requests"),
        ] {
            let err = corpus(text, Order::Random).unwrap_err().to_string();
            assert!(err.contains(says), "{text:?}: {err}");
        }
    }
}
