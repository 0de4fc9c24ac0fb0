//! `loadgen selftest`'s result for a terminal: each figure beside its target, then whether
//! this machine can measure, and the smallest added latency it resolves.

use std::fmt::Write;

use crate::results::selftest::SelftestResult;

/// The figures as a table, the resolution and the verdict.
pub fn terminal(result: &SelftestResult) -> String {
    let mut out = String::new();
    let width = result
        .figures
        .iter()
        .map(|f| f.name.len())
        .max()
        .unwrap_or(0);
    for f in &result.figures {
        let value = f
            .value
            .map_or_else(|| "-".to_string(), |v| format!("{v:.1} {}", f.unit));
        let target = match &f.target {
            Some(t) if f.met => format!("target {t}: met"),
            Some(t) => format!("target {t}: MISSED"),
            None => "the machine's own".to_string(),
        };
        let said = f
            .said
            .as_deref()
            .map(|s| format!(" ({s})"))
            .unwrap_or_default();
        let _ = writeln!(out, "{:width$}  {value:>12}  {target}{said}", f.name);
    }
    match result.resolution_us {
        Some(r) => {
            let _ = writeln!(
                out,
                "smallest added latency this machine resolves now: ±{r:.1} us (an identical twin's)"
            );
        }
        None => {
            let _ = writeln!(
                out,
                "smallest added latency this machine resolves now: unknown"
            );
        }
    }
    if result.can_measure {
        out.push_str("this machine can measure at gatebench's targets now");
    } else {
        out.push_str("this machine cannot measure at gatebench's targets now:");
        for m in &result.misses {
            let _ = write!(out, "\n- {m}");
        }
    }
    out
}
