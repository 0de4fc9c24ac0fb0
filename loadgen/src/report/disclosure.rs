//! The disclosure section of every Markdown report, in one place: the host (with its open-file
//! limit), the targets as each resolved and what the user said of them, the build, the start
//! and the command line (quoted to paste back into a shell), the verdict, and the mock's
//! configuration when the direct upstream is a gatebench mock.

use gatebench_shared::host::HostFacts;

use crate::model::target::Named;
use crate::results::envelope::{Envelope, OpenFiles};

/// What a result discloses, borrowed from it. Each report fills the parts its result has.
#[derive(Debug)]
pub struct Disclosure<'a> {
    pub envelope: &'a Envelope,
    /// Lines after the host's, like the core the client was pinned to.
    pub setup: Vec<String>,
    /// The named targets, each with what it resolved to and what the user disclosed of it.
    pub targets: &'a [Named],
    /// Lines after the command line, like each run's target as it resolved.
    pub runs: Vec<String>,
    /// Whether the result is valid, and why not; `None`: the report says so elsewhere.
    pub verdict: Option<(bool, &'a [String])>,
    /// The direct upstream's configuration, when it is a gatebench mock.
    pub mock: Option<&'a str>,
}

impl<'a> Disclosure<'a> {
    /// The disclosure of a result with `envelope`, its other parts empty.
    pub fn of(envelope: &'a Envelope) -> Disclosure<'a> {
        Disclosure {
            envelope,
            setup: Vec::new(),
            targets: &[],
            runs: Vec::new(),
            verdict: None,
            mock: None,
        }
    }

    /// The section, from its `## Disclosure` heading.
    pub fn markdown(&self) -> String {
        let e = self.envelope;
        let mut out = format!(
            "\n## Disclosure\n\n- Host: {}\n",
            host_line(&e.host, e.open_files.as_ref())
        );
        for line in &self.setup {
            out.push_str(&format!("- {line}\n"));
        }
        for t in self.targets {
            out.push_str(&format!(
                "- `{}`: {} → {}{}\n",
                t.name,
                t.target.url,
                t.target.resolved,
                t.disclosure()
                    .map(|i| format!(" ({i})"))
                    .unwrap_or_default()
            ));
        }
        out.push_str(&format!(
            "- gatebench {}, started {}\n- Command: `{}`\n",
            e.gatebench_version,
            e.started_at,
            shell_line(&e.command)
        ));
        for line in &self.runs {
            out.push_str(&format!("- {line}\n"));
        }
        if let Some((valid, reasons)) = self.verdict {
            out.push_str(&format!(
                "- Verdict: {}\n",
                if valid {
                    "valid".to_string()
                } else {
                    format!("invalid ({})", reasons.join("; "))
                }
            ));
        }
        out.push_str(&mock_markdown(self.mock));
        out
    }
}

/// The host's line of a disclosure, with the open-file limit the run had (when known):
/// "Intel Xeon (2 cores), kernel 6.1, 24,000 MiB of memory, open-file limit 20000 (hard 20000)".
pub fn host_line(host: &HostFacts, open_files: Option<&OpenFiles>) -> String {
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

/// The Markdown lines that disclose the direct upstream's configuration when it is a gatebench
/// mock (empty otherwise).
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
