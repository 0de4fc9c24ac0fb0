//! The reference pages against the binaries: every flag of every command of both binaries appears
//! in `docs/`, and every `loadgen` and `mock-upstream` command written in the docs, the README and
//! the presets' README parses with the binaries' own command line.

use std::path::{Path, PathBuf};

use clap::{CommandFactory, Parser};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Every page of `docs/`, by name and text.
fn docs() -> Vec<(String, String)> {
    let mut pages: Vec<(String, String)> = std::fs::read_dir(root().join("docs"))
        .expect("docs/ exists")
        .map(|e| e.expect("docs/ lists").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| {
            let text = std::fs::read_to_string(&p).expect("a page reads");
            (p.display().to_string(), text)
        })
        .collect();
    pages.sort();
    pages
}

/// Every long flag of `command` and its subcommands, as `(command path, --flag)`.
fn flags(command: &clap::Command, path: &str, out: &mut Vec<(String, String)>) {
    for arg in command.get_arguments() {
        if let Some(long) = arg.get_long() {
            if long != "help" && long != "version" {
                out.push((path.to_string(), format!("--{long}")));
            }
        }
    }
    for sub in command.get_subcommands() {
        flags(sub, &format!("{path} {}", sub.get_name()), out);
    }
}

#[test]
fn every_flag_of_both_binaries_is_in_the_docs() {
    let text: String = docs().into_iter().map(|(_, t)| t).collect();
    let mut all = Vec::new();
    flags(&loadgen::Cli::command(), "loadgen", &mut all);
    flags(&mock_upstream::Cli::command(), "mock-upstream", &mut all);
    assert!(all.len() > 100, "only {} flags found", all.len());
    let missing: Vec<String> = all
        .iter()
        .filter(|(_, flag)| {
            // A flag is documented when it appears whole (not as the prefix of a longer one).
            !text.match_indices(flag.as_str()).any(|(i, _)| {
                let next = text[i + flag.len()..].chars().next();
                !next.is_some_and(|c| c.is_ascii_alphanumeric() || c == '-')
            })
        })
        .map(|(command, flag)| format!("{command} {flag}"))
        .collect();
    assert!(missing.is_empty(), "flags not in docs/: {missing:?}");
}

/// Shell words of one command line, up to the first unquoted `|`, `;`, `&` or redirection;
/// `$(…)` stays one word.
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut depth = 0;
    let mut chars = line.chars().peekable();
    let mut started = false;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                started = true;
            }
            (None, '$') if chars.peek() == Some(&'(') => {
                depth += 1;
                word.push(c);
            }
            (None, ')') if depth > 0 => {
                depth -= 1;
                word.push(c);
            }
            (None, c) if depth > 0 => word.push(c),
            (None, '|' | ';' | '&' | '>' | '<') => {
                // A redirection written against a number (`2>err.txt`) names a descriptor.
                if matches!(c, '>' | '<')
                    && !word.is_empty()
                    && word.chars().all(|d| d.is_ascii_digit())
                {
                    word.clear();
                }
                break;
            }
            (None, c) if c.is_whitespace() => {
                if started || !word.is_empty() {
                    out.push(std::mem::take(&mut word));
                    started = false;
                }
            }
            (None, c) => word.push(c),
        }
    }
    if started || !word.is_empty() {
        out.push(word);
    }
    out
}

/// The command lines in the shell code blocks of `text` (```sh, ```bash), continuation lines
/// joined, comments dropped.
fn command_lines(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut in_code = false;
    let mut current = String::new();
    for line in text.lines() {
        if let Some(fence) = line.trim_start().strip_prefix("```") {
            in_code = !in_code && matches!(fence.trim(), "sh" | "bash" | "shell" | "console");
            current.clear();
            continue;
        }
        if !in_code {
            continue;
        }
        let trimmed = line.trim();
        if trimmed.starts_with('#') {
            continue;
        }
        // A comment after the command.
        let line = match line.find(" # ") {
            Some(i) => &line[..i],
            None => line,
        };
        match line.trim_end().strip_suffix('\\') {
            Some(part) => {
                current.push_str(part);
                current.push(' ');
            }
            None => {
                current.push_str(line);
                lines.push(std::mem::take(&mut current));
            }
        }
    }
    lines
}

/// The binary a command line runs and its arguments, if it is one of ours.
fn invocation(line: &str) -> Option<(&'static str, Vec<String>)> {
    let mut words = words(line);
    // Leading variable assignments (`MOCK_TTFT=200ms mock-upstream`).
    while words.first().is_some_and(|w| {
        w.split_once('=').is_some_and(|(name, _)| {
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    }) {
        words.remove(0);
    }
    let first = words.first()?.clone();
    if first == "cargo" {
        let dash = words.iter().position(|w| w == "--")?;
        let package = words
            .windows(2)
            .find(|w| w[0] == "-p")
            .map(|w| w[1].clone())?;
        let name = match package.as_str() {
            "loadgen" => "loadgen",
            "mock-upstream" => "mock-upstream",
            _ => return None,
        };
        return Some((name, words[dash + 1..].to_vec()));
    }
    let name = match first.rsplit('/').next()? {
        "loadgen" => "loadgen",
        "mock-upstream" => "mock-upstream",
        _ => return None,
    };
    Some((name, words[1..].to_vec()))
}

#[test]
fn every_command_in_the_docs_parses() {
    let mut pages = docs();
    for extra in ["README.md", "presets/README.md"] {
        let path = root().join(extra);
        let text = std::fs::read_to_string(&path).expect("reads");
        pages.push((path.display().to_string(), text));
    }
    let mut checked = 0;
    let mut failed = Vec::new();
    for (page, text) in &pages {
        for line in command_lines(text) {
            let Some((binary, args)) = invocation(&line) else {
                continue;
            };
            let argv = std::iter::once(binary.to_string()).chain(args);
            let parsed = match binary {
                "loadgen" => loadgen::Cli::try_parse_from(argv).map(|_| ()),
                _ => mock_upstream::Cli::try_parse_from(argv).map(|_| ()),
            };
            checked += 1;
            if let Err(e) = parsed {
                let first = e.to_string().lines().next().unwrap_or("").to_string();
                failed.push(format!("{page}: `{}`: {first}", line.trim()));
            }
        }
    }
    assert!(checked >= 20, "only {checked} commands found in the docs");
    assert!(
        failed.is_empty(),
        "commands that do not parse:\n{}",
        failed.join("\n")
    );
}

#[test]
fn words_split_as_the_shell_does() {
    assert_eq!(
        words("loadgen run --header 'x-a: b' --pid $(pgrep -n nginx) > out.txt"),
        [
            "loadgen",
            "run",
            "--header",
            "x-a: b",
            "--pid",
            "$(pgrep -n nginx)"
        ]
    );
    assert_eq!(
        words("mock-upstream --ttft 20ms 2>err &"),
        ["mock-upstream", "--ttft", "20ms"]
    );
    assert_eq!(
        invocation("MOCK_TTFT=2ms cargo run --release -p mock-upstream -- --tokens 4")
            .map(|(b, a)| (b, a.len())),
        Some(("mock-upstream", 2))
    );
    assert!(invocation("curl -s http://127.0.0.1:8080/health").is_none());
}
