//! `--fault`: error statuses and mid-stream breaks at seeded rates, per route or for all, as
//! settings (what the mock does with them is `crate::admission::faults`).

use gatebench_shared::seeded::{self, Stream};

use super::api::Api;

/// Statuses a fault may take.
pub const STATUSES: std::ops::RangeInclusive<u16> = 400..=599;

/// What a configured fault does: answer an error status, break a stream, or end the answer as
/// the provider's content filter does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    Status(u16),
    /// Streams only; a request that does not stream is unaffected.
    Stream(StreamFault),
    /// The answer ends with `finish_reason: "content_filter"` (Anthropic: `stop_reason:
    /// "refusal"`; Responses: `incomplete`, reason `content_filter`). Whole answers and
    /// streams of the text APIs; embeddings are unaffected.
    ContentFilter,
}

/// The name of [`FaultKind::ContentFilter`] in settings and headers.
pub const CONTENT_FILTER: &str = "content_filter";

/// One `--fault` setting.
#[derive(Debug, Clone, Copy, PartialEq)]
struct FaultRate {
    api: Option<Api>,
    kind: FaultKind,
    rate: f64,
}

impl FaultRate {
    fn applies(&self, api: Api, streaming: bool) -> bool {
        self.api.is_none_or(|a| a == api)
            && (streaming || !matches!(self.kind, FaultKind::Stream(_)))
    }
}

/// Configured fault rates: each fault with the share of requests that get it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FaultRates {
    entries: Vec<FaultRate>,
}

/// A `--fault` setting the mock cannot use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid --fault '{0}': expected [ROUTE:]FAULT:RATE like 429:2%, messages:529:1% or chat:reset@5:0.5%, where FAULT is a status from 400 to 599, content_filter, or a mid-stream fault (error, close, truncate, stall, reset)@EVENT, ROUTE one of chat, messages, responses, embeddings, completions, gemini, bedrock, and the rates of one route add up to at most 100%")]
pub struct FaultError(pub String);

impl FaultRates {
    /// Parses `[ROUTE:]FAULT:RATE` settings (`429:2%`, `messages:529:0.01`, `reset@3:1%`).
    pub fn parse(settings: &[String]) -> Result<FaultRates, FaultError> {
        let mut entries = Vec::new();
        for text in settings {
            let err = || FaultError(text.clone());
            let (head, rate) = text.rsplit_once(':').ok_or_else(err)?;
            let (api, kind) = match head.split_once(':') {
                Some((api, kind)) => (Some(Api::parse(api.trim()).ok_or_else(err)?), kind),
                None => (None, head),
            };
            let kind = kind.trim();
            let kind = if kind.contains('@') {
                FaultKind::Stream(kind.parse().map_err(|_| err())?)
            } else if kind == CONTENT_FILTER {
                FaultKind::ContentFilter
            } else {
                let status: u16 = kind.parse().map_err(|_| err())?;
                if !STATUSES.contains(&status) {
                    return Err(err());
                }
                FaultKind::Status(status)
            };
            let rate = rate.trim();
            let rate = match rate.strip_suffix('%') {
                Some(percent) => percent.trim().parse::<f64>().map_err(|_| err())? / 100.0,
                None => rate.parse::<f64>().map_err(|_| err())?,
            };
            if !(0.0..=1.0).contains(&rate) {
                return Err(err());
            }
            entries.push(FaultRate { api, kind, rate });
        }
        for api in Api::ALL {
            let total: f64 = entries
                .iter()
                .filter(|e| e.applies(api, true))
                .map(|e| e.rate)
                .sum();
            if total > 1.0 + 1e-9 {
                return Err(FaultError(settings.join(",")));
            }
        }
        Ok(FaultRates { entries })
    }

    /// The settings as written back (`429:2%`, `chat:reset@5:1%`).
    pub fn to_settings(&self) -> Vec<String> {
        self.entries
            .iter()
            .map(|e| {
                let kind = match e.kind {
                    FaultKind::Status(status) => status.to_string(),
                    FaultKind::Stream(fault) => fault.to_string(),
                    FaultKind::ContentFilter => CONTENT_FILTER.to_string(),
                };
                let rate = e.rate * 100.0;
                match e.api {
                    Some(api) => format!("{}:{kind}:{rate}%", api.name()),
                    None => format!("{kind}:{rate}%"),
                }
            })
            .collect()
    }

    /// The fault request `ordinal` on `api` gets, if any: a pure function of the seed and
    /// ordinal (and of whether it streams: stream faults skip a whole answer).
    pub fn pick(&self, seed: u64, ordinal: u64, api: Api, streaming: bool) -> Option<FaultKind> {
        if self.entries.is_empty() {
            return None;
        }
        let u = seeded::uniform(seed, Stream::Faults, ordinal);
        let mut edge = 0.0;
        for entry in self.entries.iter().filter(|e| e.applies(api, streaming)) {
            edge += entry.rate;
            if u < edge {
                return Some(entry.kind);
            }
        }
        None
    }
}

/// A fault in the middle of a stream, at event `at` (`x-mock-fault: KIND@K`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamFault {
    pub kind: StreamFaultKind,
    pub at: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamFaultKind {
    /// The provider's own in-stream error event, then the end of the body.
    Error,
    /// The body ends cleanly, without the stream's end marker.
    Close,
    /// Half of event K, then the end of the body.
    Truncate,
    /// Nothing more is sent; the connection stays open.
    Stall,
    /// The connection is reset (TCP RST) instead of sending event K; on HTTP/2, the stream.
    Reset,
}

impl StreamFaultKind {
    /// The name used in settings, headers and metrics.
    pub fn name(self) -> &'static str {
        match self {
            StreamFaultKind::Error => "error",
            StreamFaultKind::Close => "close",
            StreamFaultKind::Truncate => "truncate",
            StreamFaultKind::Stall => "stall",
            StreamFaultKind::Reset => "reset",
        }
    }

    pub const ALL: [StreamFaultKind; 5] = [
        StreamFaultKind::Error,
        StreamFaultKind::Close,
        StreamFaultKind::Truncate,
        StreamFaultKind::Stall,
        StreamFaultKind::Reset,
    ];
}

impl std::fmt::Display for StreamFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}@{}", self.kind.name(), self.at)
    }
}

impl std::str::FromStr for StreamFault {
    type Err = ();

    fn from_str(text: &str) -> Result<StreamFault, ()> {
        let (kind, at) = text.trim().split_once('@').ok_or(())?;
        let kind = StreamFaultKind::ALL
            .into_iter()
            .find(|k| k.name() == kind)
            .ok_or(())?;
        Ok(StreamFault {
            kind,
            at: at.parse().map_err(|_| ())?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse_and_are_drawn_at_their_share() {
        let settings = [
            "429:2%",
            "500:0.01",
            "messages:529:3%",
            "chat:reset@4:5%",
            "responses:content_filter:4%",
        ];
        let rates = FaultRates::parse(&settings.map(String::from)).unwrap();
        assert_eq!(
            rates.to_settings(),
            [
                "429:2%",
                "500:1%",
                "messages:529:3%",
                "chat:reset@4:5%",
                "responses:content_filter:4%"
            ]
        );
        let reset = FaultKind::Stream(StreamFault {
            kind: StreamFaultKind::Reset,
            at: 4,
        });
        let count = |api: Api, streaming: bool, kind: FaultKind| {
            (0..100_000)
                .filter(|o| rates.pick(7, *o, api, streaming) == Some(kind))
                .count()
        };
        let within = |n: usize, share: f64| (n as f64 - 100_000.0 * share).abs() < 300.0;
        assert!(within(count(Api::Chat, true, FaultKind::Status(429)), 0.02));
        assert!(within(
            count(Api::Chat, false, FaultKind::Status(500)),
            0.01
        ));
        assert!(within(count(Api::Chat, true, reset), 0.05));
        // A stream fault never touches a whole answer, nor a route it does not name.
        assert_eq!(count(Api::Chat, false, reset), 0);
        assert_eq!(count(Api::Responses, true, reset), 0);
        assert_eq!(count(Api::Chat, true, FaultKind::Status(529)), 0);
        assert!(within(
            count(Api::Messages, false, FaultKind::Status(529)),
            0.03
        ));
        // The content filter acts on whole answers and streams alike.
        let filter = FaultKind::ContentFilter;
        assert!(within(count(Api::Responses, false, filter), 0.04));
        assert!(within(count(Api::Responses, true, filter), 0.04));
        assert_eq!(count(Api::Chat, true, filter), 0);
        // The same seed and ordinal always give the same answer.
        assert_eq!(
            rates.pick(7, 41, Api::Chat, true),
            rates.pick(7, 41, Api::Chat, true)
        );
    }

    #[test]
    fn bad_rates_are_refused() {
        for bad in [
            "429",
            "200:1%",
            "429:150%",
            "x:1%",
            "429:-1%",
            "images:429:1%",
            "boom@3:1%",
            "reset@x:1%",
            "content_filter@2:1%",
        ] {
            assert!(FaultRates::parse(&[bad.into()]).is_err(), "{bad}");
        }
        assert!(FaultRates::parse(&["429:60%".into(), "500:50%".into()]).is_err());
        // Rates of different routes do not add up.
        assert!(FaultRates::parse(&["chat:429:60%".into(), "messages:529:60%".into()]).is_ok());
        assert_eq!(
            FaultRates::parse(&[]).unwrap().pick(0, 0, Api::Chat, true),
            None
        );
    }
}
