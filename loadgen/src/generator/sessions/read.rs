//! Reading a sessions file ([`load`]), its form told from its content: a JSON array is vLLM's
//! conversations; otherwise one JSON object a line, a session (gatebench's or AIPerf's
//! `multi_turn`) or a vLLM conversation. Every error names the line and the field, before any
//! load.

use std::collections::HashSet;
use std::path::Path;

use serde_json::{Map, Value};

use super::fields::Bad;
use super::{line, vllm, Session, SessionFormat, SessionSet, MAX_SESSIONS};
use crate::generator::plan_error::PlanError;

/// A line's number (from 1) and what is wrong there.
type LineBad = (usize, Bad);

/// Reads the sessions of the file at `path`.
pub fn load(path: &Path) -> Result<SessionSet, PlanError> {
    let name = path.display().to_string();
    let file = |why: String| PlanError::File("--sessions", name.clone(), why);
    let bytes = std::fs::read(path).map_err(|e| file(e.to_string()))?;
    let text = std::str::from_utf8(&bytes).map_err(|_| file("not UTF-8 text".into()))?;
    let body = text.trim_start();
    if body.is_empty() {
        return Err(file(
            "empty: expected one session a line (JSON lines), or a JSON array of vLLM \
             conversations"
                .into(),
        ));
    }
    let read = if body.starts_with('[') {
        read_array(text)
    } else {
        read_lines(text)
    };
    let (format, sessions) = read.map_err(|(line, bad)| PlanError::SessionLine {
        file: name.clone(),
        line,
        field: bad.field,
        reason: bad.reason,
    })?;
    Ok(SessionSet {
        source: name,
        format,
        sessions,
        crc32: crc32fast::hash(&bytes),
    })
}

/// Sessions gathered in file order, each id once, up to the bound.
#[derive(Default)]
struct Gather {
    sessions: Vec<Session>,
    ids: HashSet<String>,
}

impl Gather {
    fn push(&mut self, session: Session) -> Result<(), Bad> {
        if self.sessions.len() >= MAX_SESSIONS {
            return Err(Bad::new(
                "",
                format!("more than the {MAX_SESSIONS} sessions a file may hold"),
            ));
        }
        if !self.ids.insert(session.id.clone()) {
            return Err(Bad::new(
                "",
                format!(
                    "session id '{}' again: each session needs its own",
                    session.id
                ),
            ));
        }
        self.sessions.push(session);
        Ok(())
    }
}

/// One JSON object a line.
fn read_lines(text: &str) -> Result<(SessionFormat, Vec<Session>), LineBad> {
    let mut gather = Gather::default();
    let (mut vllm_lines, mut own) = (None, false);
    for (n, raw) in text.lines().enumerate() {
        let raw = raw.trim();
        if raw.is_empty() {
            continue;
        }
        let at = |bad: Bad| (n + 1, bad);
        let value: Value = serde_json::from_str(raw).map_err(|e| {
            if gather.sessions.is_empty() {
                if let Some(bad) = whole_object(text) {
                    return (n + 1, bad);
                }
            }
            at(Bad::new("", format!("not JSON: {e}")))
        })?;
        let obj = value
            .as_object()
            .ok_or_else(|| at(Bad::new("", "expected a JSON object (one session a line)")))?;
        if let Some(bad) = vllm::not_conversation(obj) {
            return Err(at(bad));
        }
        let is_vllm = obj.contains_key("messages");
        if *vllm_lines.get_or_insert(is_vllm) != is_vllm {
            return Err(at(Bad::new(
                if is_vllm { "messages" } else { "turns" },
                "vLLM conversations and session lines mixed: one form a file",
            )));
        }
        let index = gather.sessions.len();
        let session = if is_vllm {
            vllm::conversation(obj, index)
        } else {
            line::session(obj, index).map(|(s, o)| {
                own |= o;
                s
            })
        };
        gather.push(session.map_err(at)?).map_err(at)?;
    }
    let format = match (vllm_lines, own) {
        (Some(true), _) => SessionFormat::VllmConversations,
        (_, true) => SessionFormat::Gatebench,
        _ => SessionFormat::AiperfMultiTurn,
    };
    Ok((format, gather.sessions))
}

/// Why a file whose first line is not JSON is refused, when the whole file is one object.
fn whole_object(text: &str) -> Option<Bad> {
    let value: Value = serde_json::from_str(text).ok()?;
    let obj: &Map<String, Value> = value.as_object()?;
    Some(vllm::not_conversation(obj).unwrap_or_else(|| {
        Bad::new(
            "",
            "one JSON object over several lines: expected one session a line (JSON lines)",
        )
    }))
}

/// A JSON array of vLLM conversations.
fn read_array(text: &str) -> Result<(SessionFormat, Vec<Session>), LineBad> {
    let list: Vec<Value> = serde_json::from_str(text).map_err(|e| {
        let why = format!("not a JSON array of conversations: {e}");
        (e.line().max(1), Bad::new("", why))
    })?;
    let (mut line, mut from) = (1, 0);
    let lines: Vec<usize> = vllm::element_starts(text)
        .into_iter()
        .map(|at| {
            line += text[from..at].bytes().filter(|&b| b == b'\n').count();
            from = at;
            line
        })
        .collect();
    let line_of = |i: usize| lines.get(i).copied().unwrap_or(1);
    if list.is_empty() {
        return Err((1, Bad::new("", "an empty array: no conversations")));
    }
    let mut gather = Gather::default();
    for (i, value) in list.iter().enumerate() {
        let at = |bad: Bad| (line_of(i), bad);
        let obj = value
            .as_object()
            .ok_or_else(|| at(Bad::new("", "expected a conversation (a JSON object)")))?;
        if let Some(bad) = vllm::not_conversation(obj) {
            return Err(at(bad));
        }
        let session = vllm::conversation(obj, i).map_err(at)?;
        gather.push(session).map_err(at)?;
    }
    Ok((SessionFormat::VllmConversations, gather.sessions))
}
