//! `--print-config`: a command's options as a preset, after the preset file and the flags are
//! merged and every option left unset is replaced by the value the plan resolved it to (each
//! command's [`Command::preset`]). The text reads back with `--preset` into the same plan.

use super::Command;

/// The resolved options of `args`'s command as a preset, or an error when they make no valid
/// plan. Nothing is sent; targets are only parsed and resolved.
pub(crate) fn print<C: Command>(args: C) -> anyhow::Result<String> {
    let plan = args.merged()?.plan()?;
    Ok(text(&C::preset(&plan)?))
}

/// The text `--print-config` prints.
pub fn text(preset: &toml::Table) -> String {
    // Invariant: a table of strings, numbers, booleans and arrays of them serialises.
    toml::to_string(preset).expect("a preset serialises")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::{dispatch, Action, Outcome};
    use crate::options::LoadArgs;
    use clap::Parser;

    fn printed(command: crate::CommandArgs) -> anyhow::Result<String> {
        match dispatch(command, Action::PrintConfig, Vec::new())? {
            Outcome::Text(text) => Ok(text),
            Outcome::Code(_) => unreachable!("--print-config prints"),
        }
    }

    const DIRECT: &str = "http://127.0.0.1:9/v1/chat/completions";
    const GATEWAY: &str = "gw=http://127.0.0.1:9/v1/chat/completions";
    const RUN: &[&str] = &[
        "loadgen",
        "run",
        "--target",
        DIRECT,
        "--rate",
        "2k",
        "--arrival",
        "poisson",
        "--seed",
        "7",
        "--duration",
        "90s",
        "--pin",
        "0",
        "--header",
        "x-a: b",
    ];

    /// The printed preset, and the preset printed again from it (`--preset` + the same
    /// `--print-config`): the text must be a fixed point.
    fn twice(args: &[&str]) -> (String, String) {
        let cli = crate::Cli::try_parse_from(args).expect("the test's flags parse");
        let first = printed(cli.command).expect("a valid plan");
        static FILES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = FILES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!(
            "loadgen-print-config-{}-{n}.toml",
            std::process::id()
        ));
        std::fs::write(&path, &first).unwrap();
        let command = args[1];
        let again = crate::Cli::try_parse_from([
            "loadgen",
            command,
            "--preset",
            path.to_str().unwrap(),
            "--print-config",
        ])
        .unwrap();
        let second = printed(again.command).expect("the printed preset plans");
        std::fs::remove_file(&path).ok();
        (first, second)
    }

    #[test]
    fn every_command_prints_a_profile_that_reads_back_the_same() {
        let cases: [&[&str]; 7] = [
            RUN,
            &[
                "loadgen",
                "overhead",
                "--direct",
                DIRECT,
                "--gateway",
                GATEWAY,
                "--rounds",
                "20",
            ],
            &[
                "loadgen",
                "compare",
                "--direct",
                DIRECT,
                "--gateway",
                GATEWAY,
                "--concurrency",
                "8",
                "--duration",
                "5s",
                "--twin",
                "none",
            ],
            &[
                "loadgen",
                "sweep",
                "--direct",
                DIRECT,
                "--gateway",
                GATEWAY,
                "--levels",
                "1,4",
            ],
            &[
                "loadgen",
                "ladder",
                "--direct",
                DIRECT,
                "--gateway",
                GATEWAY,
                "--levels",
                "5,10",
            ],
            &[
                "loadgen",
                "capacity",
                "--direct",
                DIRECT,
                "--slo",
                "p99<50ms,errors<1%",
                "--start-rate",
                "500",
                "--duration",
                "3s",
            ],
            &[
                "loadgen",
                "run",
                "--target",
                "https://api.example.invalid/v1/chat/completions",
                "--connect-to",
                "api.example.invalid:443:127.0.0.1:9",
                "--insecure",
                "--http2",
            ],
        ];
        for args in cases {
            let (first, second) = twice(args);
            assert_eq!(first, second, "{args:?}");
        }
    }

    #[test]
    fn defaults_are_written_out_and_the_flags_kept() {
        let (text, _) = twice(RUN);
        let preset: toml::Table = toml::from_str(&text).unwrap();
        let get = |k: &str| preset.get(k).map(|v| v.to_string()).unwrap_or_default();
        assert_eq!(get("rate"), "\"2000\"");
        assert_eq!(get("arrival"), "\"poisson\"");
        assert_eq!(get("duration"), "\"90s\"");
        assert_eq!(get("connections"), "256");
        assert_eq!(get("timeout"), "\"30s\"");
        assert_eq!(get("model"), "\"gpt-4o-mini\"");
        assert_eq!(get("header"), "[\"x-a: b\"]");
        let (overhead, _) = twice(&[
            "loadgen",
            "overhead",
            "--direct",
            DIRECT,
            "--gateway",
            GATEWAY,
        ]);
        assert!(overhead.contains("trials = 10"), "{overhead}");
        assert!(
            overhead.contains("scenario = \"chat,chat-stream\""),
            "{overhead}"
        );
    }

    #[test]
    fn the_printed_profile_makes_the_same_plan() {
        let args = [
            "loadgen",
            "run",
            "--target",
            DIRECT,
            "--rate",
            "2.5k",
            "--arrival",
            "poisson",
            "--warmup",
            "1500ms",
            "--connections",
            "8",
            "--timeout",
            "2s",
            "--grace",
            "1s",
            "--scenario",
            "chat-stream",
            "--max-tokens",
            "40",
            "--model",
            "m",
        ];
        let crate::CommandArgs::Run(run) = crate::Cli::try_parse_from(args).unwrap().command else {
            unreachable!("a run")
        };
        let plan = run.clone().plan().unwrap();
        let printed = super::super::command::table(&run.resolved(&plan));
        let again: LoadArgs = toml::from_str(&text(&printed)).unwrap();
        let again = again.plan().unwrap();
        assert_eq!(
            serde_json::to_value(&plan).unwrap(),
            serde_json::to_value(&again).unwrap()
        );
    }

    #[test]
    fn an_invalid_plan_prints_nothing() {
        let cli = crate::Cli::try_parse_from(["loadgen", "run", "--rate", "0", "--print-config"])
            .unwrap();
        assert!(printed(cli.command).is_err());
    }
}
