//! Synthetic corpora (`loadgen corpus`): seeded chat requests whose prompt and output lengths
//! follow a distribution, with a models mix and shares of streaming, tool-carrying and repeated
//! requests. The workloads follow published conversation-length statistics; the spreads are ours.

use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, LogNormal};
use rand_pcg::Pcg64Mcg;
use serde_json::{json, Value};

/// A distribution of token counts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Dist {
    Fixed(u64),
    /// Uniform over `lo..=hi`.
    Uniform(u64, u64),
    /// Log-normal with this median and log-space standard deviation.
    LogNormal {
        median: f64,
        sigma: f64,
    },
}

impl Dist {
    /// `fixed:N`, `uniform:LO-HI` or `lognormal:MEDIAN,SIGMA`.
    pub fn parse(text: &str) -> Option<Dist> {
        let (kind, args) = text.split_once(':')?;
        match kind {
            "fixed" => args.parse().ok().filter(|n| *n > 0).map(Dist::Fixed),
            "uniform" => {
                let (lo, hi) = args.split_once('-')?;
                let (lo, hi) = (lo.parse().ok()?, hi.parse().ok()?);
                (0 < lo && lo <= hi).then_some(Dist::Uniform(lo, hi))
            }
            "lognormal" => {
                let (median, sigma) = args.split_once(',')?;
                let (median, sigma): (f64, f64) = (median.parse().ok()?, sigma.parse().ok()?);
                (median >= 1.0 && (0.0..=4.0).contains(&sigma) && median.is_finite())
                    .then_some(Dist::LogNormal { median, sigma })
            }
            _ => None,
        }
    }

    /// One draw, at least 1.
    pub fn sample(&self, rng: &mut Pcg64Mcg) -> u64 {
        match *self {
            Dist::Fixed(n) => n,
            Dist::Uniform(lo, hi) => rng.random_range(lo..=hi),
            Dist::LogNormal { median, sigma } => {
                // Invariant: parse keeps sigma finite and non-negative.
                let d = LogNormal::new(median.ln(), sigma).expect("valid log-normal");
                d.sample(rng).round().max(1.0) as u64
            }
        }
    }
}

/// A named pair of prompt and output distributions, with where its figures come from.
#[derive(Debug, Clone, Copy)]
pub struct WorkloadShape {
    pub name: &'static str,
    pub prompt: Dist,
    pub output: Dist,
    pub source: &'static str,
}

/// The workloads. Medians and means are the sources'; the log-normal spreads are our choice.
pub const WORKLOADS: [WorkloadShape; 3] = [
    WorkloadShape {
        name: "sharegpt",
        // Log-normal with mean = median·e^(σ²/2): medians chosen so the means are the source's.
        prompt: Dist::LogNormal { median: 86.0, sigma: 1.12 },
        output: Dist::LogNormal { median: 220.0, sigma: 0.93 },
        source: "ShareGPT conversations as used by vLLM (Kwon et al., SOSP 2023): mean 161 prompt and 338 output tokens",
    },
    WorkloadShape {
        name: "azure-conversation",
        prompt: Dist::LogNormal { median: 1020.0, sigma: 1.0 },
        output: Dist::LogNormal { median: 129.0, sigma: 1.0 },
        source: "Azure LLM inference trace 2023, conversation (Patel et al., Splitwise, ISCA 2024): median 1020 prompt and 129 output tokens",
    },
    WorkloadShape {
        name: "azure-code",
        prompt: Dist::LogNormal { median: 1500.0, sigma: 1.0 },
        output: Dist::LogNormal { median: 13.0, sigma: 1.0 },
        source: "Azure LLM inference trace 2023, code (Patel et al., Splitwise, ISCA 2024): median 1500 prompt and 13 output tokens",
    },
];

/// What to generate.
#[derive(Debug, Clone)]
pub struct Spec {
    pub count: usize,
    pub seed: u64,
    pub prompt: Dist,
    pub output: Dist,
    /// Prompts are cut to this many tokens (bodies stay under about 4 bytes each).
    pub max_prompt_tokens: u64,
    pub max_output_tokens: u64,
    /// Model names with their shares.
    pub models: Vec<(String, f64)>,
    pub stream_share: f64,
    pub tools_share: f64,
    /// Share of lines that are new; the rest repeat an earlier line byte for byte (what an
    /// exact cache would hit).
    pub distinct: f64,
}

/// What was written.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Written {
    pub lines: usize,
    pub distinct: usize,
    pub streaming: usize,
    pub min_bytes: usize,
    pub max_bytes: usize,
    pub mean_prompt_tokens: f64,
    pub mean_output_tokens: f64,
}

/// The class of a prompt by its length: `short` (under 256 tokens), `medium` (under 2,048),
/// `long`.
pub fn class_of(prompt_tokens: u64) -> &'static str {
    match prompt_tokens {
        0..256 => "short",
        256..2048 => "medium",
        _ => "long",
    }
}

/// Writes `spec.count` lines of JSON, one request each, to `out`.
pub fn generate(spec: &Spec, out: &mut impl std::io::Write) -> std::io::Result<Written> {
    let mut rng = Pcg64Mcg::seed_from_u64(spec.seed);
    let total_share: f64 = spec.models.iter().map(|(_, s)| s).sum();
    let mut lines: Vec<String> = Vec::new();
    let mut written = Written {
        min_bytes: usize::MAX,
        ..Written::default()
    };
    let (mut prompt_sum, mut output_sum) = (0u64, 0u64);
    for i in 0..spec.count {
        let repeat = !lines.is_empty() && rng.random::<f64>() >= spec.distinct;
        let line = if repeat {
            lines[rng.random_range(0..lines.len())].clone()
        } else {
            let prompt = spec.prompt.sample(&mut rng).min(spec.max_prompt_tokens);
            let output = spec.output.sample(&mut rng).min(spec.max_output_tokens);
            let mut pick = rng.random::<f64>() * total_share;
            let model = spec
                .models
                .iter()
                .find(|(_, s)| {
                    pick -= s;
                    pick < 0.0
                })
                .or(spec.models.last())
                .map_or("gpt-4o-mini", |(m, _)| m.as_str());
            let stream = rng.random::<f64>() < spec.stream_share;
            let tools = rng.random::<f64>() < spec.tools_share;
            let body = chat_body(model, prompt, output, stream, tools, i as u64, &mut rng);
            let line = json!({"class": class_of(prompt), "body": body}).to_string();
            lines.push(line.clone());
            line
        };
        let value: Value = serde_json::from_str(&line).map_err(std::io::Error::other)?;
        let body = &value["body"];
        if body["stream"] == true {
            written.streaming += 1;
        }
        let bytes = body.to_string().len();
        written.min_bytes = written.min_bytes.min(bytes);
        written.max_bytes = written.max_bytes.max(bytes);
        if let Some(body) = body.as_object() {
            prompt_sum += u64::from(super::prompt_tokens(body));
            output_sum += super::max_tokens(body).unwrap_or(0);
        }
        out.write_all(line.as_bytes())?;
        out.write_all(b"\n")?;
        written.lines += 1;
    }
    written.distinct = lines.len();
    if written.lines > 0 {
        written.mean_prompt_tokens = prompt_sum as f64 / written.lines as f64;
        written.mean_output_tokens = output_sum as f64 / written.lines as f64;
    } else {
        written.min_bytes = 0;
    }
    Ok(written)
}

/// Three-letter words: each with its space is 4 bytes, one token by the estimate and about one
/// by OpenAI's BPE.
pub(crate) const WORDS: [&str; 32] = [
    "the", "one", "two", "map", "row", "key", "set", "log", "run", "bit", "net", "api", "low",
    "end", "far", "new", "old", "big", "red", "sky", "sea", "sun", "day", "way", "man", "cat",
    "dog", "car", "box", "pen", "cup", "hat",
];

/// A prompt of `tokens` tokens by the estimate (4 bytes each), made distinct by `id`.
pub fn prompt_text(tokens: u64, id: u64, rng: &mut Pcg64Mcg) -> String {
    let len = (tokens * 4) as usize;
    let mut text = format!("Request {id}. ");
    while text.len() < len {
        text.push_str(WORDS[rng.random_range(0..WORDS.len())]);
        text.push(' ');
    }
    text.truncate(len.max(1));
    text
}

/// An OpenAI chat request with a prompt of `prompt_tokens` asking for `max_tokens`.
pub fn chat_body(
    model: &str,
    prompt_tokens: u64,
    max_tokens: u64,
    stream: bool,
    tools: bool,
    id: u64,
    rng: &mut Pcg64Mcg,
) -> Value {
    let mut body = json!({
        "model": model,
        "messages": [{"role": "user", "content": prompt_text(prompt_tokens, id, rng)}],
        "max_tokens": max_tokens.max(1),
    });
    if stream {
        body["stream"] = true.into();
        body["stream_options"] = json!({"include_usage": true});
    }
    if tools {
        body["tools"] = json!([{
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "The weather in a city.",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"],
                },
            },
        }]);
    }
    body
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> Spec {
        Spec {
            count: 2_000,
            seed: 3,
            prompt: Dist::LogNormal {
                median: 200.0,
                sigma: 1.0,
            },
            output: Dist::Uniform(10, 20),
            max_prompt_tokens: 25_000,
            max_output_tokens: 4_096,
            models: vec![("a".into(), 3.0), ("b".into(), 1.0)],
            stream_share: 0.25,
            tools_share: 0.1,
            distinct: 0.8,
        }
    }

    #[test]
    fn a_corpus_follows_its_spec_and_its_seed() {
        let mut out = Vec::new();
        let w = generate(&spec(), &mut out).unwrap();
        assert_eq!(w.lines, 2_000);
        assert!((1_500..=1_700).contains(&w.distinct), "{}", w.distinct);
        let text = String::from_utf8(out.clone()).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let share = |f: &dyn Fn(&Value) -> bool| {
            lines.iter().filter(|l| f(l)).count() as f64 / lines.len() as f64
        };
        assert!((share(&|l| l["body"]["model"] == "a") - 0.75).abs() < 0.05);
        assert!((share(&|l| l["body"]["stream"] == true) - 0.25).abs() < 0.05);
        assert!((share(&|l| l["body"]["tools"].is_array()) - 0.1).abs() < 0.04);
        assert!(lines
            .iter()
            .all(|l| (10..=20).contains(&l["body"]["max_tokens"].as_u64().unwrap())));
        // The log-normal's median, by the estimate the mock makes.
        let mut tokens: Vec<u32> = lines
            .iter()
            .map(|l| super::super::prompt_tokens(l["body"].as_object().unwrap()))
            .collect();
        tokens.sort_unstable();
        let median = tokens[tokens.len() / 2];
        assert!((170..=235).contains(&median), "{median}");
        let classes: std::collections::BTreeSet<&str> =
            lines.iter().map(|l| l["class"].as_str().unwrap()).collect();
        assert_eq!(
            classes.into_iter().collect::<Vec<_>>(),
            ["long", "medium", "short"]
        );
        let mut again = Vec::new();
        generate(&spec(), &mut again).unwrap();
        assert_eq!(out, again);
        let mut other = Vec::new();
        generate(&Spec { seed: 4, ..spec() }, &mut other).unwrap();
        assert_ne!(out, other);
    }

    #[test]
    fn prompts_have_the_asked_length_by_the_estimate() {
        let mut rng = Pcg64Mcg::seed_from_u64(0);
        for tokens in [1, 25, 1_000, 25_000] {
            let body = chat_body("m", tokens, 5, false, false, 9, &mut rng);
            assert_eq!(
                u64::from(super::super::prompt_tokens(body.as_object().unwrap())),
                tokens
            );
        }
    }

    #[test]
    fn distributions_parse_or_refuse() {
        assert_eq!(Dist::parse("fixed:5"), Some(Dist::Fixed(5)));
        assert_eq!(Dist::parse("uniform:1-9"), Some(Dist::Uniform(1, 9)));
        assert!(Dist::parse("lognormal:100,0.8").is_some());
        for bad in ["fixed:0", "uniform:9-1", "lognormal:0,1", "normal:1", "5"] {
            assert_eq!(Dist::parse(bad), None, "{bad}");
        }
    }
}
