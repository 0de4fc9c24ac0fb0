//! The figures of every report written as text: microseconds in the unit that reads best
//! (`micros`), a difference with its sign (`signed`), a resolution (`resolution`).

pub use gatebench_shared::latency::human_us as micros;

/// A resolution as a table shows it: `±4 µs`, or `-` when none was measured or given.
pub fn resolution(us: f64) -> String {
    if us > 0.0 {
        format!("±{}", micros(us))
    } else {
        "-".to_string()
    }
}

/// A difference with its sign: `+12 µs`, `-3 µs`.
pub fn signed(us: f64) -> String {
    if us >= 0.0 {
        format!("+{}", micros(us))
    } else {
        micros(us)
    }
}
