//! The JSON results match their committed schemas (`loadgen/*.schema.json`), by the checker in
//! `gatebench_tests::schema`.

use gatebench_tests::start_mock;
use loadgen::commands::run::run;
use loadgen::LoadArgs;
use mock_upstream::Config;
use serde_json::Value;

use gatebench_tests::load_args::{args, url};
use gatebench_tests::schema::{assert_matches, check, schema};

#[test]
fn results_of_both_scenarios_match_the_committed_schema() {
    let mock = start_mock(Config::default());
    for scenario in ["chat", "chat-stream"] {
        let (result, _) = run(
            LoadArgs {
                rate: Some("200".into()),
                duration: Some("500ms".into()),
                request: loadgen::options::RequestFlags {
                    scenario: Some(scenario.into()),
                    ..Default::default()
                },
                ..args(url(&mock))
            },
            vec!["loadgen".into(), "run".into()],
        )
        .unwrap();
        assert_matches(&result, "result.schema.json");
        let page = loadgen::report::html::run_page(&result);
        assert!(!page.contains("id=\"sessions\""), "no sessions, no section");
    }
}

#[test]
fn shard_results_and_their_merge_match_the_committed_schema() {
    let mock = start_mock(Config::default());
    let mut shards = Vec::new();
    for index in 0..2 {
        let (result, _) = run(
            LoadArgs {
                rate: Some("200".into()),
                duration: Some("500ms".into()),
                shard: Some(format!("{index}/2")),
                clock_ref: Some(url(&mock)),
                hdr_log: Some(std::env::temp_dir().join(format!(
                    "gatebench-schema-hlog-{}-{index}",
                    std::process::id()
                ))),
                ..args(url(&mock))
            },
            vec!["loadgen".into(), "run".into()],
        )
        .unwrap();
        assert_matches(&result, "result.schema.json");
        shards.push((
            format!("shard-{index}.json").into(),
            serde_json::to_value(&result).unwrap(),
        ));
    }
    let thresholds =
        loadgen::commands::merge::Thresholds::from_args(&loadgen::options::MergeArgs {
            inputs: Vec::new(),
            out: None,
            partial: false,
            absent: Vec::new(),
            max_p99: Some("10s".into()),
            max_error_rate: None,
            slo: Some("p99<10s,ttft_p99<1s,errors<1%".into()),
        })
        .unwrap();
    // One shard alone, merged with --partial: the other is listed with the runner's reason.
    let absent = loadgen::commands::merge::Absent::parse(&["1:task failed, exit 137".into()]);
    let partial = loadgen::commands::merge::merge_results(
        shards[..1].to_vec(),
        true,
        &Default::default(),
        &absent.unwrap(),
        vec!["loadgen".into()],
    )
    .unwrap();
    let partial: Value = serde_json::from_str(&partial.output).unwrap();
    assert_matches(&partial, "result.schema.json");
    assert_eq!(
        partial["shards"]["absent"],
        serde_json::json!([{"index": 1, "why": "task failed, exit 137"}])
    );
    assert_eq!(partial["valid"], false);
    let merged = loadgen::commands::merge::merge_results(
        shards,
        false,
        &thresholds,
        &Default::default(),
        vec!["loadgen".into()],
    )
    .unwrap();
    let value: Value = serde_json::from_str(&merged.output).unwrap();
    assert!(
        value["shards"]["merged"][0]["clock"]["reference"]["error_us"].is_i64(),
        "{}",
        value["shards"]
    );
    assert_matches(&value, "result.schema.json");
    assert_eq!(value["runs"][0]["requests"], 100);
    // A whole answer has no TTFT: that objective is not met, and its value is null.
    let judged = value["shards"]["thresholds"].as_array().unwrap();
    assert_eq!(judged.len(), 4, "{judged:?}");
    assert_eq!(judged[2]["met"], false, "{judged:?}");
    assert!(judged[2]["value"].is_null(), "{judged:?}");
    assert_eq!(merged.failed.len(), 1, "{:?}", merged.failed);
}

#[test]
fn a_result_with_sessions_matches_the_committed_schema() {
    let settings = mock_upstream::RawSettings {
        prompt_cache: Some("on".into()),
        ..Default::default()
    };
    let mock = start_mock(settings.validate().unwrap());
    let path = std::env::temp_dir().join(format!("gatebench-schema-{}.jsonl", std::process::id()));
    let system = "You are a careful assistant who answers briefly. ".repeat(60);
    let lines: Vec<String> = (0..4)
        .map(|s| {
            serde_json::json!({"session_id": format!("s{s}"), "system": system,
                "turns": [{"text": format!("s{s} first")}, {"text": "and then?"}],
                "branches": [{"after_turn": 1, "turns": [{"text": "look it up"}]}]})
            .to_string()
        })
        .collect();
    std::fs::write(&path, lines.join("\n")).unwrap();
    let (result, _) = run(
        LoadArgs {
            rate: Some("20".into()),
            duration: Some("500ms".into()),
            request: loadgen::options::RequestFlags {
                scenario: Some("chat-stream".into()),
                ..Default::default()
            },
            conversations: loadgen::options::SessionFlags {
                sessions: Some(path.clone()),
                think: Some("10ms".into()),
                max_sessions: Some(8),
                ..Default::default()
            },
            ..args(url(&mock))
        },
        vec!["loadgen".into(), "run".into()],
    )
    .unwrap();
    let _ = std::fs::remove_file(&path);
    let value = serde_json::to_value(&result).unwrap();
    assert!(value["plan"]["sessions"].is_object(), "{}", value["plan"]);
    let turns = &value["runs"][0]["sessions"]["turns"];
    assert!(
        turns.as_array().is_some_and(|t| !t.is_empty()),
        "{}",
        value["runs"][0]["sessions"]
    );
    assert!(value["runs"][0]["sessions"]["branch_turns"][0]["requests"].as_u64() > Some(0));
    assert_matches(&result, "result.schema.json");
    // Its page has the sessions section: the table and the TTFT, prompt, cache and timeline plots.
    let page = loadgen::report::html::run_page(&result);
    let section = &page[page
        .find("<h2 id=\"sessions\">Sessions</h2>")
        .expect("a section")..];
    for title in [
        "TTFT by turn",
        "Prompt size by turn",
        "Prompt cache by turn",
        "Session timeline",
        "Branches (sub-agents)",
    ] {
        assert!(section.contains(title), "{title} missing");
    }
    assert!(section.matches("<svg").count() >= 4 && section.contains("<table>"));
    // A field the schema does not know is caught inside the sessions too.
    let schema = schema();
    let mut wrong = value.clone();
    wrong["runs"][0]["sessions"]["turns"][0]["extra"] = 1.into();
    wrong["plan"]["sessions"]["users"] = "many".into();
    let mut errors = Vec::new();
    check(&wrong, &schema, &schema, "$", &mut errors);
    assert!(
        errors.iter().any(|e| e.contains("turns[0].extra")),
        "{errors:?}"
    );
    assert!(
        errors.iter().any(|e| e.contains("sessions.users")),
        "{errors:?}"
    );
}

#[test]
fn the_checker_catches_a_wrong_result() {
    let schema = schema();
    let mut errors = Vec::new();
    let wrong = serde_json::json!({"schema": "other", "valid": "yes", "extra": 1});
    check(&wrong, &schema, &schema, "$", &mut errors);
    assert!(errors.iter().any(|e| e.contains("missing runs")));
    assert!(errors.iter().any(|e| e.contains("$.valid")));
    assert!(errors.iter().any(|e| e.contains("$.extra")));
    assert!(errors.iter().any(|e| e.contains("$.schema")));
}
