//! The readers against the fixtures in `tests/fixtures/sessions/` (one file of each form) and
//! against every error a user can cause.

use std::path::PathBuf;

use super::*;
use crate::generator::plan_error::PlanError;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/sessions")
        .join(name)
}

/// Writes `text` to a file of its own (tests run at once) and reads it.
pub(super) fn load_text(name: &str, text: &str) -> Result<SessionSet, PlanError> {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!(
        "loadgen-sessions-{}-{n}-{name}",
        std::process::id()
    ));
    std::fs::write(&path, text).unwrap();
    let read = load(&path);
    std::fs::remove_file(&path).unwrap();
    read
}

/// The message of the error `text` is refused for.
fn refused(text: &str) -> String {
    load_text("bad", text).unwrap_err().to_string()
}

#[test]
fn gatebench_lines_are_read() {
    let set = load(&fixture("gatebench.jsonl")).unwrap();
    assert_eq!(set.format, SessionFormat::Gatebench);
    let bytes = std::fs::read(fixture("gatebench.jsonl")).unwrap();
    assert_eq!(set.crc32, crc32fast::hash(&bytes));
    assert_eq!(set.sessions.len(), 3);
    assert_eq!(set.most_turns(), 2);
    let s = &set.sessions[0];
    assert_eq!(s.id, "support-1");
    assert_eq!(s.model.as_deref(), Some("gpt-4o"));
    assert_eq!(
        s.preamble,
        [
            Message {
                role: Role::System,
                content: "You are a support agent.".into()
            },
            Message {
                role: Role::System,
                content: "The user's plan is Pro.".into()
            },
        ]
    );
    assert_eq!(s.turns[0].user, "My invoice is wrong.");
    assert_eq!((s.turns[0].think_us, s.turns[0].max_tokens), (None, None));
    assert_eq!(
        (s.turns[1].think_us, s.turns[1].max_tokens),
        (Some(2_500_000), Some(64))
    );
    assert_eq!(s.turns[1].tool_rounds, 0);
    let agent = &set.sessions[1];
    assert_eq!(
        agent.tools.as_ref().unwrap()[0]["function"]["name"],
        "lookup"
    );
    assert_eq!(agent.preamble[0].content.len(), 400);
    let (t0, t1) = (&agent.turns[0], &agent.turns[1]);
    assert_eq!(
        (
            t0.user.len(),
            t0.think_us,
            t0.tool_rounds,
            t0.tool_result_tokens
        ),
        (200, Some(0), 2, 32)
    );
    assert_eq!(
        (t1.user.len(), t1.think_us, t1.tool_rounds),
        (80, Some(1_200_500), 0)
    );
    assert_ne!(t0.user[..80], t1.user);
    // system_tokens is one text for every session naming the same count: a shared prefix.
    let other = &set.sessions[2];
    assert_eq!(other.preamble[0], agent.preamble[0]);
    assert_eq!(other.preamble[1].content.len(), 160);
    assert!(other.preamble[1]
        .content
        .starts_with("Context of support-2."));
    assert_eq!(
        other.turns[0].tool_result_tokens,
        DEFAULT_TOOL_RESULT_TOKENS
    );
    // The same file reads the same.
    let again = load(&fixture("gatebench.jsonl")).unwrap();
    assert_eq!(again.sessions[1].turns[0].user, t0.user);
}

#[test]
fn aiperf_multi_turn_lines_are_read_as_they_are() {
    let set = load(&fixture("aiperf-multi-turn.jsonl")).unwrap();
    assert_eq!(set.format, SessionFormat::AiperfMultiTurn);
    let [s1, s2] = &set.sessions[..] else {
        panic!("two sessions")
    };
    assert_eq!(s1.id, "s1");
    assert!(s1.preamble.is_empty() && s1.tools.is_none() && s1.model.is_none());
    assert_eq!(s1.turns[0].think_us, Some(0));
    assert_eq!(s1.turns[1].think_us, Some(1_500_000));
    assert_eq!(s1.turns[1].user, "And how long does it keep an entry?");
    assert_eq!(s2.turns[0].user, "First part.\nSecond part.");
    assert_eq!(s2.turns[0].think_us, None);
    assert_eq!(s2.turns[1].user, "Follow-up.");
    assert_eq!(s2.turns[1].think_us, Some(250_250));
    assert_eq!(s2.turns[1].max_tokens, Some(20));
}

#[test]
fn vllm_conversations_are_read_without_their_answers() {
    let set = load(&fixture("vllm-conversations.json")).unwrap();
    assert_eq!(set.format, SessionFormat::VllmConversations);
    let s = &set.sessions[0];
    assert_eq!(s.id, "hiWPlMD");
    assert_eq!(
        s.preamble,
        [Message {
            role: Role::System,
            content: "Be brief.".into()
        }]
    );
    let users: Vec<&str> = s.turns.iter().map(|t| t.user.as_str()).collect();
    assert_eq!(users, ["Name a prime number.", "A larger one?"]);
    assert_eq!(set.sessions[1].turns.len(), 1);
    // The same conversations one a line.
    let lines = "{\"id\": \"a\", \"messages\": [{\"role\": \"user\", \"content\": \"Hi.\"}]}\n";
    let set = load_text("vllm-lines", lines).unwrap();
    assert_eq!(set.format, SessionFormat::VllmConversations);
    assert_eq!(set.sessions[0].turns[0].user, "Hi.");
}

#[test]
fn bad_lines_are_refused_by_line_and_field() {
    let ok = "{\"session_id\": \"a\", \"turns\": [{\"text\": \"hi\"}]}\n";
    let cases: [(String, &str); 19] = [
        (format!("{ok}{{\"session_id\": \"b\", \"turns\": [{{\"text\": \"x\"}}\n"), "line 2: not JSON"),
        (format!("{ok}\n{{\"session_id\": \"b\", \"turns\": []}}"), "line 3, field turns: empty: a session needs at least one turn"),
        ("{\"session_id\": \"b\"}".into(), "line 1, field turns: missing"),
        ("{\"turns\": [{\"think_ms\": 5}]}".into(), "line 1, field turns[0].text: missing: a turn needs its text (text) or its length (tokens)"),
        ("{\"turns\": [{\"text\": \"\"}]}".into(), "field turns[0].text: empty text"),
        ("{\"turns\": [{\"text\": \"a\", \"tokens\": 3}]}".into(), "field turns[0].tokens: give one of text, texts and tokens"),
        ("{\"tools\": [{\"type\": \"function\"}], \"turns\": [{\"text\": \"a\", \"tool_rounds\": 65}]}".into(), "field turns[0].tool_rounds: 65: a tool loop needs a bound"),
        ("{\"tools\": [{\"type\": \"function\"}], \"tool_rounds\": \"unbounded\", \"turns\": [{\"text\": \"a\"}]}".into(), "field tool_rounds: \"unbounded\": a tool loop needs a bound"),
        ("{\"turns\": [{\"text\": \"a\", \"tool_rounds\": 1}]}".into(), "field turns[0].tool_rounds: tool rounds need tools"),
        ("{\"turns\": [{\"text\": \"a\", \"timestamp\": 1000}]}".into(), "field turns[0].timestamp: a timestamp fixes when a turn is sent"),
        ("{\"turns\": [{\"text\": \"a\", \"image\": \"x.png\"}]}".into(), "field turns[0].image: only text is sent"),
        ("{\"turns\": [{\"text\": \"a\", \"think\": 5}]}".into(), "field turns[0].think: unknown field; expected one of"),
        ("{\"turns\": [{\"text\": \"a\", \"delay\": -5}]}".into(), "field turns[0].delay: -5 is not a number of milliseconds"),
        ("{\"turns\": [{\"text\": \"a\", \"delay\": 5, \"think_ms\": 5}]}".into(), "field turns[0].delay: delay is another name for think_ms"),
        ("{\"turns\": [{\"text\": \"a\", \"role\": \"assistant\"}]}".into(), "field turns[0].role: \"assistant\": only user turns are sent"),
        ("{\"system\": \"s\", \"system_tokens\": 5, \"turns\": [{\"text\": \"a\"}]}".into(), "field system_tokens: give system (its text) or system_tokens (its length), not both"),
        (format!("{ok}{ok}"), "line 2: session id 'a' again"),
        ("[1, 2]".into(), "line 1: expected a conversation"),
        ("{\"type\": \"single_turn\", \"turns\": [{\"text\": \"a\"}]}".into(), "field type: \"single_turn\" is not multi_turn"),
    ];
    for (text, want) in cases {
        let got = refused(&text);
        assert!(got.starts_with("cannot use --sessions "), "{got}");
        assert!(got.contains(want), "{text}\n  gave: {got}\n  want: {want}");
    }
}

#[test]
fn bad_files_are_refused_whole() {
    assert!(refused("").contains("empty: expected one session a line"));
    assert!(refused(" \n\n").contains("empty"));
    assert!(refused("[]").contains("line 1: an empty array"));
    let pretty = "{\n  \"filetype\": \"generate_conversations\",\n  \"num_conversations\": 3\n}\n";
    assert!(
        refused(pretty).contains("field filetype: a vLLM generation config"),
        "{}",
        refused(pretty)
    );
    let one = "{\n  \"session_id\": \"a\",\n  \"turns\": [{\"text\": \"x\"}]\n}\n";
    assert!(refused(one).contains("one JSON object over several lines"));
    let sharegpt =
        "[{\"id\": \"x\", \"conversations\": [{\"from\": \"human\", \"value\": \"hi\"}]}]";
    assert!(refused(sharegpt).contains("field conversations: ShareGPT's form"));
    let array = "[\n {\"id\": \"x\", \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]},\n {\"id\": \"y\", \"messages\": [{\"role\": \"assistant\", \"content\": \"hi\"}]}\n]";
    let got = refused(array);
    assert!(
        got.contains("line 3, field messages: no user message"),
        "{got}"
    );
    let tool = "[{\"id\": \"x\", \"messages\": [{\"role\": \"tool\", \"content\": \"hi\"}]}]";
    assert!(refused(tool).contains("field messages[0].role: 'tool'"));
    let mixed = "{\"turns\": [{\"text\": \"a\"}]}\n{\"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}";
    assert!(refused(mixed)
        .contains("line 2, field messages: vLLM conversations and session lines mixed"));
    let missing = load(std::path::Path::new("/no/such/sessions.jsonl")).unwrap_err();
    assert!(missing
        .to_string()
        .starts_with("cannot use --sessions /no/such/sessions.jsonl"));
    let turns = format!(
        "{{\"turns\": [{}]}}",
        vec!["{\"tokens\": 1}"; MAX_TURNS + 1].join(",")
    );
    assert!(refused(&turns).contains("10001 turns, more than the 10000"));
}
