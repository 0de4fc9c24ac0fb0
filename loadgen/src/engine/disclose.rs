//! What a result discloses: about the upstream, when the direct target is a gatebench mock, its
//! own resolved configuration (latency model, token counts, seed), read once before the load
//! from `GET /v1/gatebench/config`; and the command line, quoted to paste back into a shell.

use crate::wire::get::get;
use crate::wire::target::Target;

/// The path the mock serves its configuration on.
const CONFIG_PATH: &str = "/v1/gatebench/config";

/// The mock's configuration (TOML) behind `target`, or `None` when it is not a gatebench mock
/// (or does not answer within a second).
pub fn mock_config(target: &Target) -> Option<String> {
    let text = get(target, CONFIG_PATH)?;
    // A gatebench mock's configuration names its latency model.
    text.contains("ttft").then_some(text)
}

/// The Markdown lines that disclose the direct upstream's configuration when it is a gatebench
/// mock (empty otherwise).
/// The host's line of a disclosure, with the open-file limit the run had (when known):
/// "Intel Xeon (2 cores), kernel 6.1, 24,000 MiB of memory, open-file limit 20000 (hard 20000)".
pub fn host_line(
    host: &gatebench_shared::host::HostFacts,
    open_files: Option<&crate::results::run::OpenFiles>,
) -> String {
    let mut line = format!(
        "{} ({} cores), kernel {}, {} MiB of memory",
        host.cpu_model,
        host.cores,
        host.kernel,
        host.memory_bytes >> 20
    );
    if let Some(files) = open_files {
        line.push_str(&format!(
            ", open-file limit {} (hard {})",
            files.soft, files.hard
        ));
    }
    line
}

pub fn mock_markdown(mock: Option<&str>) -> String {
    match mock {
        Some(toml) => format!(
            "- The direct upstream is a gatebench mock, configured as:\n\n```toml\n{}\n```\n",
            toml.trim_end()
        ),
        None => String::new(),
    }
}

/// A command line as a shell reads it back: each argument that holds anything but letters,
/// digits and `-_./:=@%+,` single-quoted (a `'` inside as `'\''`), so a header like
/// `x-mock-ttft: 5ms` pastes back as one argument.
pub fn shell_line(args: &[String]) -> String {
    args.iter()
        .map(|arg| {
            let plain = !arg.is_empty()
                && arg
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./:=@%+,".contains(c));
            if plain {
                arg.clone()
            } else {
                format!("'{}'", arg.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod shell_line_tests {
    use super::shell_line;

    #[test]
    fn arguments_with_spaces_or_quotes_paste_back() {
        let args = [
            "loadgen",
            "run",
            "--header",
            "x-mock-ttft: 5ms",
            "--body",
            r#"{"a":"it's"}"#,
            "",
        ]
        .map(String::from);
        assert_eq!(
            shell_line(&args),
            r#"loadgen run --header 'x-mock-ttft: 5ms' --body '{"a":"it'\''s"}' ''"#
        );
    }
}
