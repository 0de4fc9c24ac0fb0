//! Conversations (`--sessions`): against an upstream loadgen's authors did not write into
//! loadgen, every turn carries the exact history (the earlier answers byte for byte), leaves at
//! its intended time (the end of the last turn plus the think time), and a turn that could only
//! leave late is measured from when it was due.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use gatebench_tests::recording::{start_recording_answering, Seen};
use loadgen::commands::run::run;
use loadgen::options::SessionFlags;
use loadgen::LoadArgs;
use serde_json::{json, Value};

use gatebench_tests::load_args::args;

/// A chat completion whose text names the request it answers, with characters JSON escapes.
fn answer_to(seen: &Seen) -> String {
    let text = format!("answer to {} \"quoted\" é\n", seen.seq.unwrap_or(0));
    json!({"id": "r", "object": "chat.completion", "choices": [{"index": 0,
        "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}})
    .to_string()
}

/// A sessions file of `sessions` sessions of `turns` turns, `think_ms` before each.
fn sessions_file(name: &str, sessions: usize, turns: usize, think_ms: u64) -> PathBuf {
    let path = std::env::temp_dir().join(format!("gatebench-{name}-{}.jsonl", std::process::id()));
    let lines: Vec<String> = (0..sessions)
        .map(|s| {
            let turns: Vec<Value> = (0..turns)
                .map(|t| json!({"text": format!("s{s} t{t}"), "think_ms": think_ms}))
                .collect();
            json!({"session_id": format!("s{s}"), "system": "Be brief.", "turns": turns})
                .to_string()
        })
        .collect();
    std::fs::write(&path, lines.join("\n")).unwrap();
    path
}

/// One session a second for a second, from a file of `line` alone, to `addr`'s chat route.
fn one_session_line(
    addr: std::net::SocketAddr,
    name: &str,
    line: &Value,
) -> loadgen::results::run::RunResult {
    let path = std::env::temp_dir().join(format!("gatebench-{name}-{}.jsonl", std::process::id()));
    std::fs::write(&path, line.to_string()).unwrap();
    let args = LoadArgs {
        rate: Some("1".into()),
        ..session_args(
            format!("http://{addr}/v1/chat/completions"),
            path,
            SessionFlags::default(),
        )
    };
    run(args, vec![]).unwrap().0
}

fn session_args(url: String, file: PathBuf, flags: SessionFlags) -> LoadArgs {
    LoadArgs {
        duration: Some("1s".into()),
        conversations: SessionFlags {
            sessions: Some(file),
            ..flags
        },
        ..args(url)
    }
}

#[test]
fn every_turn_resends_the_exact_history_at_its_intended_time() {
    let (addr, log) = start_recording_answering(Arc::new(|s| (Duration::ZERO, answer_to(s))));
    let file = sessions_file("history", 3, 3, 150);
    let (result, _) = run(
        LoadArgs {
            rate: Some("2".into()),
            ..session_args(
                format!("http://{addr}/v1/chat/completions"),
                file,
                SessionFlags::default(),
            )
        },
        vec![],
    )
    .unwrap();
    let r = &result.runs[0];
    let sessions = r.sessions.as_ref().expect("a session table");
    assert_eq!(
        (sessions.started, sessions.completed),
        (2, 2),
        "{sessions:?}"
    );
    assert_eq!(sessions.turns.len(), 3);
    let mut seen = log.lock().unwrap().clone();
    // The check of the target before the run is not a session's.
    seen.retain(|s| String::from_utf8_lossy(&s.body).contains("Be brief."));
    assert_eq!(seen.len(), 6, "two sessions of three turns");
    // Each request's answer text, by its sequence number.
    let text_of = |s: &Seen| format!("answer to {} \"quoted\" é\n", s.seq.unwrap());
    for session in 0..2u64 {
        let mut turns: Vec<&Seen> = seen
            .iter()
            .filter(|s| s.seq.unwrap() >> 16 == session)
            .collect();
        turns.sort_by_key(|s| s.seq);
        assert_eq!(turns.len(), 3);
        for (k, turn) in turns.iter().enumerate() {
            let body: Value = serde_json::from_slice(&turn.body).unwrap();
            let messages = body["messages"].as_array().unwrap();
            assert_eq!(messages.len(), 2 + 2 * k, "turn {k}: {messages:?}");
            assert_eq!(
                messages[0],
                json!({"role": "system", "content": "Be brief."})
            );
            for j in 0..=k {
                let user = &messages[1 + 2 * j];
                assert_eq!(user["content"], format!("s{session} t{j}"));
                if j < k {
                    // The earlier answer, byte for byte as the upstream sent it.
                    assert_eq!(messages[2 + 2 * j]["role"], "assistant");
                    assert_eq!(messages[2 + 2 * j]["content"], text_of(turns[j]));
                }
            }
            if k > 0 {
                // Due 150 ms after the last answer ended (it answered at once).
                let gap = turn.at.duration_since(turns[k - 1].at);
                let bound = gatebench_tests::upper_bound(
                    Duration::from_millis(200),
                    Duration::from_secs(5),
                );
                assert!(
                    gap >= Duration::from_millis(149) && gap < bound,
                    "turn {k} left {gap:?} after the last"
                );
            }
        }
    }
}

#[test]
fn a_branch_runs_beside_its_session_and_its_last_exchange_joins_a_later_turn() {
    // The sub-agent's requests take 3 s each; the session's own are answered at once, and its
    // turns think 1 s: seconds apart, so their order is the code's on any host.
    let (addr, log) = start_recording_answering(Arc::new(|s| {
        let slow = String::from_utf8_lossy(&s.body).contains("Sub-agent.");
        let wait = Duration::from_millis(if slow { 3_000 } else { 0 });
        (wait, answer_to(s))
    }));
    let turns: Vec<Value> = (1..=4)
        .map(|t| json!({"text": format!("m{t}"), "think_ms": if t == 1 { 0 } else { 1_000 }}))
        .collect();
    let branch = json!({"after_turn": 1, "join_turn": 3, "system": "Sub-agent.",
        "turns": [{"text": "b1"}, {"text": "b2"}]});
    let line = json!({"session_id": "s", "system": "Be brief.", "turns": turns,
        "branches": [branch]});
    let result = one_session_line(addr, "branch", &line);
    let s = result.runs[0].sessions.as_ref().expect("a session table");
    assert_eq!((s.started, s.completed, s.branches), (1, 1, 1), "{s:?}");
    assert_eq!((s.turns.len(), s.branch_turns.len()), (4, 2));
    assert!(s.turns.iter().chain(&s.branch_turns).all(|t| t.all.ok == 1));
    let seen = log.lock().unwrap().clone();
    let by_user = |text: &str| -> Seen {
        seen.iter()
            .find(|r| {
                let body: Value = serde_json::from_slice(&r.body).unwrap_or_default();
                body["messages"]
                    .as_array()
                    .and_then(|m| m.last())
                    .map(|m| &m["content"])
                    == Some(&json!(text))
            })
            .unwrap_or_else(|| panic!("no request ends with {text}"))
            .clone()
    };
    let messages = |r: &Seen| -> Vec<Value> {
        let body: Value = serde_json::from_slice(&r.body).unwrap();
        body["messages"].as_array().unwrap().clone()
    };
    let (m1, m2, m3, b1, b2) = (
        by_user("m1"),
        by_user("m2"),
        by_user("m3"),
        by_user("b1"),
        by_user("b2"),
    );
    // The branch has a history of its own: its system prompt, none of the session's.
    assert_eq!(
        messages(&b1),
        [
            json!({"role": "system", "content": "Sub-agent."}),
            json!({"role": "user", "content": "b1"})
        ]
    );
    assert_eq!(messages(&b2).len(), 4, "its own history grows");
    // It forks when turn 1 is answered (before turn 2, due 1 s later), and runs beside turn 2
    // (sent while the branch's first answer is still two seconds away).
    let since = |a: &Seen, b: &Seen| b.at.duration_since(a.at);
    assert!(b1.at < m2.at, "{:?} {:?}", since(&m1, &b1), since(&m1, &m2));
    assert!(since(&m2, &b2) > Duration::ZERO && since(&b1, &m2) < Duration::from_millis(2_990));
    // Turn 3 waits for the branch (3 + 3 s), and carries its last exchange before its own.
    let wait = since(&m1, &m3);
    let bound = gatebench_tests::upper_bound(Duration::from_millis(6_200), Duration::from_secs(20));
    assert!(
        wait >= Duration::from_millis(5_995) && wait < bound,
        "{wait:?}"
    );
    let joined = messages(&m3);
    assert_eq!(joined.len(), 8, "{joined:?}");
    assert_eq!(joined[5], json!({"role": "user", "content": "b2"}));
    assert_eq!(
        joined[6],
        json!({"role": "assistant", "content": format!("answer to {} \"quoted\" é\n", b2.seq.unwrap())})
    );
    assert_eq!(joined[7]["content"], "m3");
    // And it stays in the history after.
    assert_eq!(messages(&by_user("m4"))[5..8], joined[5..8]);
}

#[test]
fn a_failed_branch_fails_its_session_and_the_turns_left_are_counted() {
    // The sub-agent's answers are not answers.
    let (addr, _log) = start_recording_answering(Arc::new(|s| {
        let bad = String::from_utf8_lossy(&s.body).contains("Sub-agent.");
        let body = if bad {
            "nope".to_string()
        } else {
            answer_to(s)
        };
        (Duration::ZERO, body)
    }));
    let turns: Vec<Value> = (1..=4).map(|t| json!({"text": format!("m{t}")})).collect();
    let branch = json!({"after_turn": 1, "join_turn": 3, "system": "Sub-agent.",
        "turns": [{"text": "b1"}, {"text": "b2"}]});
    let line = json!({"session_id": "s", "turns": turns, "branches": [branch]});
    let result = one_session_line(addr, "badbranch", &line);
    let s = result.runs[0].sessions.as_ref().expect("a session table");
    assert_eq!((s.started, s.completed, s.failed), (1, 0, 1), "{s:?}");
    assert_eq!(s.branch_turns[0].all.errors, 1);
    // Turns 3 and 4 of the session, and the branch's second.
    assert_eq!(
        s.not_sent.get("earlier_turn_failed"),
        Some(&3),
        "{:?}",
        s.not_sent
    );
}

#[test]
fn a_turn_sent_late_is_measured_from_when_it_was_due() {
    // Every first turn is answered in 300 ms; later turns at once.
    let (addr, _log) = start_recording_answering(Arc::new(|s| {
        let first = s.seq.unwrap_or(0) & 0xffff == 1;
        let delay = Duration::from_millis(if first { 300 } else { 0 });
        (delay, answer_to(s))
    }));
    let file = sessions_file("late", 1, 3, 0);
    // One user, one turn every 100 ms: turn 2 is due 100 ms after turn 1, which answers at
    // 300 ms, so turn 2 leaves about 200 ms late.
    let (result, _) = run(
        LoadArgs {
            duration: Some("250ms".into()),
            ..session_args(
                format!("http://{addr}/v1/chat/completions"),
                file,
                SessionFlags {
                    users: Some(1),
                    turn_gap: Some("100ms".into()),
                    ..SessionFlags::default()
                },
            )
        },
        vec![],
    )
    .unwrap();
    let s = result.runs[0].sessions.as_ref().expect("a session table");
    assert_eq!(s.turns.len(), 3, "{s:?}");
    let second = &s.turns[1].all.response_time;
    // Never less than the 200 ms it waited for its predecessor; near it, and a service time
    // that hides the wait, on a host with a timer to measure by.
    assert!(
        second.p50 >= 190_000,
        "turn 2 measured {} us from when it was due",
        second.p50
    );
    if gatebench_tests::precision_run() {
        assert!(second.p50 < 260_000, "turn 2: {} us", second.p50);
        let service = &result.runs[0].metrics["service_time"];
        assert!(service.p50 < 50_000, "{service:?}");
    }
}

#[test]
fn a_session_bound_makes_late_sessions_wait_and_counts_them() {
    let (addr, _log) =
        start_recording_answering(Arc::new(|s| (Duration::from_millis(200), answer_to(s))));
    let file = sessions_file("bound", 4, 1, 0);
    let (result, _) = run(
        LoadArgs {
            rate: Some("20".into()),
            duration: Some("200ms".into()),
            ..session_args(
                format!("http://{addr}/v1/chat/completions"),
                file,
                SessionFlags {
                    max_sessions: Some(1),
                    ..SessionFlags::default()
                },
            )
        },
        vec![],
    )
    .unwrap();
    let s = result.runs[0].sessions.as_ref().unwrap();
    assert_eq!((s.started, s.completed, s.waited), (4, 4, 3), "{s:?}");
    // The fourth waited for three answers of 200 ms from a start 150 ms in: about 450 ms.
    let rt = &s.turns[0].all.response_time;
    assert!(rt.max >= 400_000, "{rt:?}");
}

#[test]
fn session_options_without_sessions_or_with_what_they_exclude_are_refused() {
    let bare = LoadArgs {
        conversations: SessionFlags {
            think: Some("1s".into()),
            ..SessionFlags::default()
        },
        ..args("http://127.0.0.1:9/v1/chat/completions".into())
    };
    let err = run(bare, vec![]).unwrap_err().to_string();
    assert!(
        err.contains("--think") && err.contains("--sessions"),
        "{err}"
    );
    let file = sessions_file("refused", 1, 1, 0);
    let with_corpus = LoadArgs {
        requests_file: Some(file.clone()),
        ..session_args(
            "http://127.0.0.1:9/v1/chat/completions".into(),
            file.clone(),
            SessionFlags::default(),
        )
    };
    let err = run(with_corpus, vec![]).unwrap_err().to_string();
    assert!(err.contains("--requests-file"), "{err}");
    let gapless = session_args(
        "http://127.0.0.1:9/v1/chat/completions".into(),
        file.clone(),
        SessionFlags {
            users: Some(2),
            ..SessionFlags::default()
        },
    );
    let err = run(gapless, vec![]).unwrap_err().to_string();
    assert!(err.contains("--turn-gap"), "{err}");
    for (route, marks, needle) in [
        ("/v1/chat/completions", "history", "/v1/messages"),
        (
            "/v1beta/models/g:generateContent",
            "system",
            "Bedrock's /converse",
        ),
        ("/v1/messages", "everything", "none, system or history"),
        ("/model/m/converse", "none:1h", "none, system or history"),
    ] {
        let marked = session_args(
            format!("http://127.0.0.1:9{route}"),
            file.clone(),
            SessionFlags {
                cache_marks: Some(marks.into()),
                ..SessionFlags::default()
            },
        );
        let err = run(marked, vec![]).unwrap_err().to_string();
        assert!(
            err.contains("--cache-marks") && err.contains(needle),
            "{err}"
        );
    }
}

#[test]
fn overhead_pairs_each_turn_of_a_conversation_and_a_slow_hop_shows_on_every_turn() {
    let direct = gatebench_tests::start_mock(mock_upstream::Config::default());
    let slow = gatebench_tests::gateway::start_delay_gateway(
        direct.local_addr(),
        Duration::from_millis(2),
    );
    let file = sessions_file("overhead", 4, 3, 0);
    let url = |a: std::net::SocketAddr| format!("http://{a}/v1/chat/completions");
    let (result, _) = loadgen::commands::overhead::run_overhead(
        loadgen::options::OverheadArgs {
            judge: loadgen::options::JudgeFlags {
                trials: Some(3),
                ..Default::default()
            },
            rounds: Some(12),
            quiet: true,
            targets: loadgen::options::GatewayFlags {
                direct: Some(url(direct.local_addr())),
                gateways: vec![format!("slow={}", url(slow))],
                ..Default::default()
            },
            request: loadgen::options::RequestFlags {
                scenario: Some("chat".into()),
                ..Default::default()
            },
            conversations: SessionFlags {
                sessions: Some(file),
                ..SessionFlags::default()
            },
            ..Default::default()
        },
        vec![],
    )
    .unwrap();
    let scenarios: std::collections::BTreeSet<&str> = result
        .combined
        .iter()
        .map(|c| c.scenario.as_str())
        .collect();
    assert_eq!(
        scenarios.into_iter().collect::<Vec<_>>(),
        ["chat turn 1", "chat turn 2", "chat turn 3"]
    );
    for row in result.combined.iter().filter(|c| c.gateway == "slow") {
        let added = row.added_us;
        assert!(
            !gatebench_tests::precision_run()
                || (added.estimate > 1_500.0 && added.estimate < 6_000.0),
            "{}: {added:?}",
            row.scenario
        );
    }
}

#[test]
fn the_mocks_cache_hits_show_per_turn_on_every_apis_route() {
    let settings = mock_upstream::RawSettings {
        prompt_cache: Some("on".into()),
        ..Default::default()
    };
    let mock = gatebench_tests::start_mock(settings.validate().unwrap());
    // One session whose 2,000-token system prompt (past every API's minimum) every turn resends.
    let path = std::env::temp_dir().join(format!("gatebench-cache-{}.jsonl", std::process::id()));
    let turns: Vec<Value> = (0..3)
        .map(|t| json!({"text": format!("turn {t}")}))
        .collect();
    std::fs::write(
        &path,
        json!({"session_id": "s", "system": "rules ".repeat(1_400), "turns": turns}).to_string(),
    )
    .unwrap();
    let anthropic = vec!["anthropic-version: 2023-06-01".to_string()];
    let both = ["chat", "chat-stream"].as_slice();
    // Gemini's and Bedrock's routes say whether they stream, whatever the scenario; their
    // model is the route's.
    let gemini = "/v1beta/models/gemini-2.0-flash";
    let bedrock = "/model/anthropic.claude-3-5-sonnet-20240620-v1:0";
    for (route, model, headers, scenarios) in [
        (
            "/v1/chat/completions".to_string(),
            "gpt-4o-mini",
            vec![],
            both,
        ),
        ("/v1/responses".into(), "gpt-4o-mini", vec![], both),
        (
            "/v1/messages".into(),
            "claude-sonnet-4-5",
            anthropic.clone(),
            both,
        ),
        (format!("{gemini}:generateContent"), "", vec![], both),
        (
            format!("{gemini}:streamGenerateContent?alt=sse"),
            "",
            vec![],
            &["chat"],
        ),
        (format!("{bedrock}/converse"), "", vec![], both),
        (format!("{bedrock}/converse-stream"), "", vec![], &["chat"]),
    ] {
        for &stream in scenarios {
            let (result, _) = run(
                LoadArgs {
                    rate: Some("1".into()),
                    request: loadgen::options::RequestFlags {
                        scenario: Some(stream.into()),
                        model: (!model.is_empty()).then(|| model.into()),
                        headers: headers.clone(),
                        ..Default::default()
                    },
                    ..session_args(
                        format!("http://{}{route}", mock.local_addr()),
                        path.clone(),
                        SessionFlags::default(),
                    )
                },
                vec![],
            )
            .unwrap();
            let streams = match model {
                "" => route.contains("stream"),
                _ => stream == "chat-stream",
            };
            assert_eq!(result.plan.request.stream, streams, "{route} {stream}");
            let s = result.runs[0].sessions.as_ref().expect("a session table");
            assert_eq!(
                s.completed, 1,
                "{route} {stream}: {:?}",
                result.runs[0].errors
            );
            // Turn 1 of the first run on a route writes; later turns (and later runs) read.
            let later = &s.turns[2];
            assert_eq!(
                later.reported, 1,
                "{route} {stream}: the cache fields were read"
            );
            assert_eq!(later.hit_rate, Some(1.0), "{route} {stream}: {later:?}");
            assert!(
                later.cached_share.unwrap() > 0.5,
                "{route} {stream}: {later:?}"
            );
        }
    }
    // Without breakpoints Anthropic's and Bedrock's caches are never read or written: every
    // turn is a miss.
    for (route, model, headers) in [
        (
            "/v1/messages".to_string(),
            Some("claude-sonnet-4-5"),
            anthropic,
        ),
        (format!("{bedrock}/converse"), None, vec![]),
    ] {
        let (result, _) = run(
            LoadArgs {
                rate: Some("1".into()),
                request: loadgen::options::RequestFlags {
                    scenario: Some("chat".into()),
                    model: model.map(str::to_string),
                    headers,
                    ..Default::default()
                },
                ..session_args(
                    format!("http://{}{route}", mock.local_addr()),
                    path.clone(),
                    SessionFlags {
                        cache_marks: Some("none".into()),
                        ..Default::default()
                    },
                )
            },
            vec![],
        )
        .unwrap();
        let s = result.runs[0].sessions.as_ref().expect("a session table");
        assert_eq!(s.completed, 1, "{route}: {:?}", result.runs[0].errors);
        assert!(
            s.turns
                .iter()
                .all(|t| t.reported == 1 && t.hit_rate == Some(0.0)),
            "{route}: {:?}",
            s.turns
        );
        let plan = result.plan.sessions.as_ref().expect("the plan's sessions");
        assert_eq!(plan.cache_marks.as_deref(), Some("none"), "{route}");
    }
}

#[test]
fn a_gemini_tool_round_resends_the_call_and_its_function_response() {
    // A Gemini upstream that calls `lookup` (with no id, as Gemini may) when asked to find,
    // and answers text otherwise.
    let (addr, log) = start_recording_answering(Arc::new(|s| {
        let body: Value = serde_json::from_slice(&s.body).unwrap_or_default();
        let last = body["contents"].as_array().and_then(|c| c.last()).cloned();
        let asked = last.is_some_and(|c| c["parts"][0]["text"] == "find it");
        let part = if asked {
            json!({"functionCall": {"name": "lookup", "args": {"q": "x"}}})
        } else {
            json!({"text": format!("done {}", s.seq.unwrap_or(0))})
        };
        let answer = json!({"candidates": [{"content": {"role": "model", "parts": [part]},
            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 20, "candidatesTokenCount": 2, "totalTokenCount": 22}});
        (Duration::ZERO, answer.to_string())
    }));
    let path = std::env::temp_dir().join(format!("gatebench-gemini-{}.jsonl", std::process::id()));
    std::fs::write(
        &path,
        json!({"session_id": "g", "system": "Be brief.", "tool_rounds": 1, "tool_result_tokens": 2,
            "tools": [{"type": "function", "function": {"name": "lookup",
                "parameters": {"type": "object"}}}],
            "turns": [{"text": "find it"}, {"text": "thanks"}]})
        .to_string(),
    )
    .unwrap();
    let (result, _) = run(
        LoadArgs {
            rate: Some("1".into()),
            ..session_args(
                format!("http://{addr}/v1beta/models/gemini-2.0-flash:generateContent"),
                path,
                SessionFlags::default(),
            )
        },
        vec![],
    )
    .unwrap();
    let s = result.runs[0].sessions.as_ref().expect("a session table");
    assert_eq!(s.completed, 1, "{:?}", result.runs[0].errors);
    assert_eq!(s.turns[1].tool_requests, 1, "{:?}", s.turns);
    assert_eq!(
        (s.turns[1].tool.ok, s.tool.ok, s.turns[0].tool.requests),
        (1, 1, 0)
    );
    assert_eq!(s.tool_share.count, 1);
    assert!(s.tool_share.max <= 1_000, "{:?}", s.tool_share);
    let mut seen = log.lock().unwrap().clone();
    seen.retain(|s| String::from_utf8_lossy(&s.body).contains("Be brief."));
    seen.sort_by_key(|s| s.seq);
    assert_eq!(seen.len(), 3, "the call, its result, the next turn");
    let bodies: Vec<Value> = seen
        .iter()
        .map(|s| serde_json::from_slice(&s.body).unwrap())
        .collect();
    for body in &bodies {
        for key in ["model", "messages", "stream", "max_tokens"] {
            assert!(body.get(key).is_none(), "{key}: {body}");
        }
        assert_eq!(body["systemInstruction"]["parts"][0]["text"], "Be brief.");
        assert_eq!(
            body["tools"][0]["functionDeclarations"][0]["name"],
            "lookup"
        );
    }
    let contents = bodies[1]["contents"].as_array().unwrap();
    assert_eq!(
        contents[1],
        json!({"role": "model", "parts": [{"functionCall": {"name": "lookup", "args": {"q": "x"}}}]}),
        "the call as it came, no id made up"
    );
    assert_eq!(
        contents[2],
        json!({"role": "user", "parts": [{"functionResponse": {"name": "lookup",
            "response": {"output": "ok. ok."}}}]})
    );
    let contents = bodies[2]["contents"].as_array().unwrap();
    assert_eq!(contents.len(), 5);
    let answered = format!("done {}", seen[1].seq.unwrap());
    assert_eq!(
        contents[3],
        json!({"role": "model", "parts": [{"text": answered}]})
    );
    assert_eq!(
        contents[4],
        json!({"role": "user", "parts": [{"text": "thanks"}]})
    );
}
