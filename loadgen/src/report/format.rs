//! The figures of every report written as text: microseconds in the unit that reads best
//! (`micros`), a difference with its sign (`signed`), a resolution (`resolution`) and how it was
//! obtained (`resolution_from`).

pub use gatebench_shared::latency::human_us as micros;

/// A resolution as a table shows it: `±4 µs`, or `-` when none was measured or given.
pub fn resolution(us: f64) -> String {
    if us > 0.0 {
        format!("±{}", micros(us))
    } else {
        "-".to_string()
    }
}

/// How a result's resolution was obtained, as every report says it: `source`, or for a result
/// written before it was recorded, the twin's disclosure.
pub fn resolution_from(
    source: &str,
    targets: &[crate::results::target::Named],
    twin: bool,
) -> String {
    let source = if source.is_empty() {
        crate::results::target::resolution_source(targets, twin, crate::results::target::NO_TWIN)
    } else {
        source.to_string()
    };
    format!("Resolution from: {source}.")
}

/// A difference with its sign: `+12 µs`, `-3 µs`.
pub fn signed(us: f64) -> String {
    if us >= 0.0 {
        format!("+{}", micros(us))
    } else {
        micros(us)
    }
}
