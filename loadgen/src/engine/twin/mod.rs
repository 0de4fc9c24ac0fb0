//! The twin loadgen chooses when `--twin` is not given. When the direct target is a gatebench
//! mock on loopback, a second mock process with the direct mock's own configuration (only its
//! address changed), so the twin's interval (the resolution of every verdict) carries the spread
//! between two processes of one binary; otherwise, or when no mock binary starts, the direct URL
//! again, said plainly in the twin's disclosure. `binary` finds the binary, `process` owns it.

pub(crate) mod binary;
mod process;

use std::time::Duration;

pub use process::MockProcess;

use crate::engine::run::SetupError;
use crate::model::target::{self as texts, Named};
use crate::wire::target::parse_target;

/// The longest wait for the started mock to listen.
const START_WAIT: Duration = Duration::from_secs(10);

/// What to do about the twin in `targets` (direct first, the twin second).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Choice {
    /// No twin by default: `--twin URL`, `--twin none`, or no twin at all.
    Keep,
    /// Start a second mock with the direct mock's configuration (`config`, its TOML).
    Start { config: String },
    /// The direct URL again, for this reason.
    SameUrl(&'static str),
}

/// The choice for `targets`, given the direct mock's configuration (`mock`: `None` when the
/// direct target is not a gatebench mock).
pub(crate) fn choose(targets: &[Named], mock: Option<&str>) -> Choice {
    let (Some(direct), Some(twin)) = (targets.first(), targets.get(1)) else {
        return Choice::Keep;
    };
    if !twin.name.is_twin() || twin.info.as_deref() != Some(texts::SAME_PROCESS) {
        return Choice::Keep;
    }
    if direct.target.tls {
        return Choice::SameUrl("the direct target is served over TLS");
    }
    if !direct.target.resolved.ip().is_loopback() {
        return Choice::SameUrl("the direct target is not on loopback");
    }
    let Some(mock) = mock else {
        return Choice::SameUrl("the direct target is not a gatebench mock");
    };
    if !listens_on(mock, direct.target.resolved.port()) {
        return Choice::SameUrl(
            "the direct target is in front of a gatebench mock, not the mock itself (its \
             configuration listens on another port)",
        );
    }
    match twin_config(mock) {
        Err(why) => Choice::SameUrl(why),
        Ok(config) => Choice::Start { config },
    }
}

/// Whether the mock configured by `mock` can be the one on `port`: it listens there, or on a
/// port chosen when it started (0: unknown here). A hop in front of a mock (a forwarder that
/// passes its configuration on) is not the mock: a second mock would not have the hop.
fn listens_on(mock: &str, port: u16) -> bool {
    let listen = mock.parse::<toml::Table>().ok().and_then(|t| {
        t.get("listen")?
            .as_str()?
            .rsplit_once(':')?
            .1
            .parse::<u16>()
            .ok()
    });
    matches!(listen, Some(p) if p == 0 || p == port)
}

/// The direct mock's configuration with its address changed to a free port on 127.0.0.1, and
/// no API key required (the served configuration redacts it); everything else (threads,
/// pinning, latency model, seed, timer) as it is.
pub(crate) fn twin_config(mock: &str) -> Result<String, &'static str> {
    let mut table: toml::Table = mock
        .parse()
        .map_err(|_| "the direct mock's configuration does not parse")?;
    table.insert("listen".into(), toml::Value::String("127.0.0.1:0".into()));
    table.remove("require_api_key");
    for key in ["tls_names", "tls_ca_file"] {
        if table.contains_key(key) {
            return Err("the direct mock serves TLS");
        }
    }
    toml::to_string(&table).map_err(|_| "the direct mock's configuration does not serialise")
}

/// Settles the default twin of `targets` after the direct mock's configuration (`mock`) was
/// read: a started mock in its place (returned: it runs until dropped), or the direct URL
/// again with the reason in its disclosure. Says on standard error which, either way.
pub fn settle(targets: &mut [Named], mock: Option<&str>) -> Option<MockProcess> {
    // A mock binary would help only where loadgen tried to start one.
    let (why, advice) = match choose(targets, mock) {
        Choice::Keep => return None,
        Choice::SameUrl(why) => (why.to_string(), texts::SAME_PROCESS_ADVICE_NOT_MOCK),
        Choice::Start { config } => match start(targets, &config) {
            Ok(process) => return Some(process),
            Err(why) => (why, texts::SAME_PROCESS_ADVICE),
        },
    };
    let info = format!("{}: {advice} ({why})", texts::SAME_PROCESS);
    gatebench_shared::say!("loadgen: twin: {info}");
    targets[1].info = Some(info);
    None
}

/// Starts the twin mock and puts it second in `targets`.
fn start(targets: &mut [Named], config: &str) -> Result<MockProcess, String> {
    let binary = binary::find()?;
    let process = MockProcess::start(&binary, config, START_WAIT)
        .map_err(|e| format!("{} did not start: {e}", binary.display()))?;
    let url = format!("http://{}{}", process.addr, targets[0].target.path);
    let target = parse_target(&url).map_err(|e| e.to_string())?;
    if crate::engine::disclose::mock_config(&target).is_none() {
        return Err(format!(
            "{} did not answer on {}",
            binary.display(),
            process.addr
        ));
    }
    let info = texts::started_mock(
        &process.binary.display().to_string(),
        &process.version,
        process.pid(),
        &process.addr.to_string(),
    );
    gatebench_shared::say!("loadgen: twin: {info}");
    targets[1].target = target;
    targets[1].info = Some(info);
    Ok(process)
}

/// [`crate::engine::gateways::reach`], then [`settle`]: the direct mock's configuration and the
/// twin process, if one was started (keep it until the command ends).
pub fn reach(
    targets: &mut [Named],
    timeout: Duration,
) -> Result<(Option<String>, Option<MockProcess>), SetupError> {
    let mock = crate::engine::gateways::reach(targets, timeout)?;
    let process = settle(targets, mock.as_deref());
    Ok((mock, process))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::gateways::with_twin;

    const MOCK: &str = "listen = \"0.0.0.0:8000\"\nthreads = 1\npin = \"1\"\nttft = \"0ms\"\n\
                        seed = 7\nrequire_api_key = \"<redacted>\"\n";

    fn targets(direct: &str, twin: Option<&str>) -> Vec<Named> {
        let mut t = crate::engine::gateways::named_targets(
            Some(direct),
            &["gw=http://127.0.0.1:9/v1/chat/completions".into()],
            Default::default(),
            &[],
        )
        .unwrap();
        with_twin(&mut t, twin, Some(direct), &[]).unwrap();
        t
    }

    #[test]
    fn a_local_mock_gets_a_second_process_with_its_configuration() {
        let t = targets("http://127.0.0.1:8000/v1/chat/completions", None);
        let Choice::Start { config } = choose(&t, Some(MOCK)) else {
            panic!("expected a start");
        };
        let table: toml::Table = config.parse().unwrap();
        assert_eq!(table["listen"].as_str(), Some("127.0.0.1:0"));
        assert_eq!(table["pin"].as_str(), Some("1"));
        assert_eq!(table["threads"].as_integer(), Some(1));
        assert_eq!(table["seed"].as_integer(), Some(7));
        assert!(!table.contains_key("require_api_key"));
    }

    #[test]
    fn anything_else_keeps_the_same_url_and_says_why() {
        let t = targets("http://127.0.0.1:8000/v1/chat/completions", None);
        assert_eq!(
            choose(&t, None),
            Choice::SameUrl("the direct target is not a gatebench mock")
        );
        let tls = format!("{MOCK}tls_names = \"localhost\"\n");
        assert_eq!(
            choose(&t, Some(&tls)),
            Choice::SameUrl("the direct mock serves TLS")
        );
        let fronted = MOCK.replace("0.0.0.0:8000", "127.0.0.1:8001");
        let Choice::SameUrl(why) = choose(&t, Some(&fronted)) else {
            panic!("a hop in front of the mock is not the mock");
        };
        assert!(why.contains("in front of a gatebench mock"), "{why}");
        let chosen = MOCK.replace("0.0.0.0:8000", "127.0.0.1:0");
        assert!(matches!(choose(&t, Some(&chosen)), Choice::Start { .. }));
        let t = targets("http://192.0.2.1:8000/v1/chat/completions", None);
        assert_eq!(
            choose(&t, Some(MOCK)),
            Choice::SameUrl("the direct target is not on loopback")
        );
    }

    #[test]
    fn a_named_twin_or_none_is_kept() {
        let direct = "http://127.0.0.1:8000/v1/chat/completions";
        let given = targets(direct, Some("http://127.0.0.1:8001/v1/chat/completions"));
        assert_eq!(choose(&given, Some(MOCK)), Choice::Keep);
        let none = targets(direct, Some("none"));
        assert_eq!(choose(&none, Some(MOCK)), Choice::Keep);
    }

    #[test]
    fn the_same_url_is_disclosed_with_its_reason() {
        let mut t = targets("http://127.0.0.1:8000/v1/chat/completions", None);
        assert!(settle(&mut t, None).is_none());
        let info = t[1].info.clone().unwrap();
        assert!(info.starts_with(texts::SAME_PROCESS), "{info}");
        assert!(info.contains("not a gatebench mock"), "{info}");
        assert!(info.contains("--twin URL"), "{info}");
    }
}
