//! The official OpenAI and Anthropic Python SDKs judge the wire formats.
//!
//! Needs `python3` with the `openai` and `anthropic` packages, and Node.js with
//! `tests/sdk-node` installed (`scripts/test.sh` installs them). Set
//! `GATEBENCH_SKIP_SDK=1` to skip on a machine without them; otherwise a missing SDK fails.

use std::path::Path;
use std::process::Command;

use gatebench_tests::start_mock;
use mock_upstream::Config;

/// A mock on loopback from settings as a user would give them.
fn mock_with(settings: mock_upstream::RawSettings) -> mock_upstream::MockServer {
    start_mock(settings.validate().expect("valid settings"))
}

fn run_python(script: &str, base_url: &str, marker: &str) {
    run_python_with(script, &[base_url], marker);
}

fn run_python_with(script: &str, args: &[&str], marker: &str) {
    if std::env::var_os("GATEBENCH_SKIP_SDK").is_some() {
        eprintln!("GATEBENCH_SKIP_SDK is set: skipping {script}");
        return;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sdk")
        .join(script);
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_string());
    let output = Command::new(&python)
        .arg(&script)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {python}: {e} (set GATEBENCH_SKIP_SDK=1 to skip)"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "{} failed:\n{stdout}\n{stderr}",
        script.display()
    );
    assert!(stdout.contains(marker), "{stdout}");
}

#[test]
fn openai_python_sdk_parses_completions_and_streams() {
    let mock = start_mock(Config::default());
    run_python(
        "openai_chat.py",
        &format!("http://{}/v1", mock.local_addr()),
        "openai sdk: ok",
    );
}

#[test]
fn anthropic_python_sdk_parses_messages_and_streams() {
    let mock = start_mock(Config::default());
    run_python(
        "anthropic_messages.py",
        &format!("http://{}", mock.local_addr()),
        "anthropic sdk: ok",
    );
}

#[test]
fn openai_python_sdk_parses_responses_and_their_streams() {
    let mock = start_mock(Config {
        latency: gatebench_shared::LatencyModel {
            tokens: "32".parse().unwrap(),
            ..Default::default()
        },
        ..Config::default()
    });
    run_python(
        "openai_responses.py",
        &format!("http://{}/v1", mock.local_addr()),
        "openai responses: ok",
    );
}

#[test]
fn openai_python_sdk_retries_a_429_after_its_retry_after_ms() {
    let mock = mock_with(mock_upstream::RawSettings {
        fault: vec!["429:100%".into()],
        ..Default::default()
    });
    run_python(
        "openai_retries.py",
        &format!("http://{}/v1", mock.local_addr()),
        "openai retries: ok",
    );
}

#[test]
fn openai_python_sdk_reads_embeddings_as_floats_and_base64() {
    let mock = start_mock(Config::default());
    run_python(
        "openai_embeddings.py",
        &format!("http://{}/v1", mock.local_addr()),
        "openai embeddings: ok",
    );
}

#[test]
fn openai_python_sdk_parses_legacy_completions_and_streams() {
    let mock = start_mock(Config::default());
    run_python(
        "openai_completions.py",
        &format!("http://{}/v1", mock.local_addr()),
        "openai completions: ok",
    );
}

#[test]
fn both_python_sdks_parse_tool_calls_whole_and_streamed() {
    let mock = mock_with(mock_upstream::RawSettings {
        tool_calls: Some("100%".into()),
        ..Default::default()
    });
    run_python(
        "tool_calls.py",
        &format!("http://{}", mock.local_addr()),
        "tool calls: ok",
    );
}

#[test]
fn boto3_reads_bedrock_converse_answers_event_streams_and_errors() {
    let mock = mock_with(mock_upstream::RawSettings {
        require_api_key: Some("AKIDGATEBENCH".into()),
        ..Default::default()
    });
    run_python(
        "bedrock.py",
        &format!("http://{}", mock.local_addr()),
        "bedrock: ok",
    );
}

#[test]
fn googles_genai_sdk_reads_gemini_answers_streams_and_errors() {
    let mock = mock_with(mock_upstream::RawSettings {
        require_api_key: Some("g-key".into()),
        ..Default::default()
    });
    run_python(
        "gemini.py",
        &format!("http://{}", mock.local_addr()),
        "gemini: ok",
    );
}

#[test]
fn openai_python_sdks_azure_client_reads_the_azure_endpoints() {
    let mock = mock_with(mock_upstream::RawSettings {
        require_api_key: Some("az-key".into()),
        ..Default::default()
    });
    run_python(
        "azure_openai.py",
        &format!("http://{}", mock.local_addr()),
        "azure openai: ok",
    );
}

#[test]
fn openai_python_sdk_trusts_the_mocks_tls_through_its_ca_file() {
    let ca_file = std::env::temp_dir().join(format!("gatebench-sdk-ca-{}.pem", std::process::id()));
    let mock = mock_with(mock_upstream::RawSettings {
        tls_names: Some("localhost".into()),
        tls_ca_file: Some(ca_file.display().to_string()),
        ..Default::default()
    });
    let base = format!("https://localhost:{}/v1", mock.local_addr().port());
    run_python_with(
        "openai_tls.py",
        &[&base, &ca_file.display().to_string()],
        "openai tls: ok",
    );
    let _ = std::fs::remove_file(&ca_file);
}

#[test]
fn openai_npm_package_reads_a_stream_and_raises_its_own_errors() {
    if std::env::var_os("GATEBENCH_SKIP_SDK").is_some() {
        eprintln!("GATEBENCH_SKIP_SDK is set: skipping the npm check");
        return;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("sdk-node");
    assert!(
        dir.join("node_modules/openai").is_dir(),
        "run `npm ci --prefix tests/sdk-node` (scripts/test.sh does), or set GATEBENCH_SKIP_SDK=1"
    );
    let mock = start_mock(Config::default());
    let output = Command::new("node")
        .arg(dir.join("openai_stream.mjs"))
        .arg(format!("http://{}/v1", mock.local_addr()))
        .output()
        .unwrap_or_else(|e| panic!("cannot run node: {e} (set GATEBENCH_SKIP_SDK=1 to skip)"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("openai npm: ok"), "{stdout}");
}

#[test]
fn both_python_sdks_raise_their_own_error_classes() {
    let mock = mock_with(mock_upstream::RawSettings {
        require_api_key: Some("sk-good".into()),
        context_window: Some("small-gpt=20,small-claude=20".into()),
        ..Default::default()
    });
    run_python(
        "sdk_errors.py",
        &format!("http://{}", mock.local_addr()),
        "sdk errors: ok",
    );
}

#[test]
fn openai_python_sdk_waits_out_the_token_bucket_and_gets_through() {
    // One request refills every 6 s: the script's ten calls take far less on any host.
    let mock = mock_with(mock_upstream::RawSettings {
        rate_limit: Some("rpm=10".into()),
        ..Default::default()
    });
    run_python(
        "openai_rate_limit.py",
        &format!("http://{}/v1", mock.local_addr()),
        "openai rate limit: ok",
    );
}

#[test]
fn hdrhistograms_python_library_reads_the_interval_log_and_the_results_histograms() {
    if std::env::var_os("GATEBENCH_SKIP_SDK").is_some() {
        eprintln!("GATEBENCH_SKIP_SDK is set: skipping hdr_log.py");
        return;
    }
    let mock = start_mock(Config::default());
    let dir = std::env::temp_dir().join(format!("gatebench-hdr-log-{}", std::process::id()));
    let (result, _) = loadgen::commands::run::run(
        loadgen::LoadArgs {
            rate: Some("500".into()),
            duration: Some("2500ms".into()),
            hdr_log: Some(dir.clone()),
            ..gatebench_tests::load_args::args(gatebench_tests::load_args::url(&mock))
        },
        vec!["loadgen".into()],
    )
    .unwrap();
    loadgen::report::output::write_hdr_log(&result, &dir).unwrap();
    let run = &result.runs[0];
    let (_, ours) = run
        .histograms
        .iter()
        .find(|(m, _)| m.name() == "response_time")
        .unwrap();
    let log = dir.join("1-chat.response_time.hlog");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("sdk/hdr_log.py");
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_string());
    let output = Command::new(&python)
        .arg(&script)
        .arg(&log)
        .arg(loadgen::results::hdr_codec::encode(ours))
        .output()
        .unwrap_or_else(|e| panic!("cannot run {python}: {e} (set GATEBENCH_SKIP_SDK=1 to skip)"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("hdr log: ok"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let read: serde_json::Value = serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
    // Three seconds of completions (the last requests end after the window's 2.5 s).
    assert!(read["intervals"].as_u64().unwrap() >= 3, "{read}");
    for what in ["log", "result"] {
        let h = &read[what];
        assert_eq!(h["count"], ours.len(), "{what}: {read}");
        assert_eq!(h["max"], ours.max(), "{what}: {read}");
        for (key, q) in [("p50", 0.5), ("p99", 0.99)] {
            assert_eq!(h[key], ours.value_at_quantile(q), "{what} {key}: {read}");
        }
    }
}

#[test]
fn every_sdk_parses_every_prompt_cache_field_whole_and_streamed() {
    let mock = mock_with(mock_upstream::RawSettings {
        prompt_cache: Some("on".into()),
        ..Default::default()
    });
    run_python(
        "prompt_cache.py",
        &format!("http://{}", mock.local_addr()),
        "prompt cache sdks: ok",
    );
}
