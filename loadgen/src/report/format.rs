//! The figures of every report written as text: microseconds in the unit that reads best
//! (`micros`), a difference with its sign (`signed`), a resolution (`resolution`) and how it was
//! obtained (`resolution_from`).

pub use gatebench_shared::duration::human_us as micros;

/// A resolution as a table shows it: `±4 µs`, `±0.3 µs`, or `-` when none was measured or
/// given.
pub fn resolution(us: f64) -> String {
    if us > 0.0 {
        format!("±{}", gatebench_shared::duration::human_resolution_us(us))
    } else {
        "-".to_string()
    }
}

/// How a result's resolution was obtained, as every report says it: `source`, or for a result
/// written before it was recorded, the twin's disclosure.
pub fn resolution_from(
    source: &str,
    targets: &[crate::model::target::Named],
    twin: bool,
) -> String {
    let source = if source.is_empty() {
        crate::model::target::resolution_source(targets, twin, crate::model::target::NO_TWIN)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::role::Role;
    use crate::model::target::{Named, Target, NO_TWIN, SAME_PROCESS};

    fn twin(info: &str) -> Named {
        Named {
            name: Role::Twin,
            target: Target {
                url: "http://127.0.0.1:9/v1/chat/completions".into(),
                authority: "127.0.0.1:9".into(),
                path: "/v1/chat/completions".into(),
                resolved: "127.0.0.1:9".parse().unwrap(),
                tls: false,
            },
            info: Some(info.into()),
            recording: None,
        }
    }

    #[test]
    fn the_source_is_said_and_an_older_result_takes_its_twins() {
        let targets = [twin(SAME_PROCESS)];
        assert_eq!(
            resolution_from("--twin URL (x)", &targets, true),
            "Resolution from: --twin URL (x)."
        );
        assert_eq!(
            resolution_from("", &targets, true),
            format!("Resolution from: {SAME_PROCESS}.")
        );
        assert_eq!(
            resolution_from("", &targets, false),
            format!("Resolution from: {NO_TWIN}.")
        );
    }
}
