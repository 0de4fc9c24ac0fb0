//! Interim reader (replaced by the full readers).
use std::path::Path;

use super::*;
use crate::generator::plan_error::PlanError;

pub fn load(path: &Path) -> Result<SessionSet, PlanError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path)
        .map_err(|e| PlanError::File("--sessions", name.clone(), e.to_string()))?;
    let text = String::from_utf8_lossy(&bytes);
    let mut sessions = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let v: Value = serde_json::from_str(line)
            .map_err(|e| PlanError::File("--sessions", name.clone(), e.to_string()))?;
        let mut preamble = Vec::new();
        if let Some(s) = v.get("system").and_then(Value::as_str) {
            preamble.push(Message {
                role: Role::System,
                content: s.into(),
            });
        }
        let turns = v["turns"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| Turn {
                user: t["text"].as_str().unwrap_or("hi").into(),
                think_us: t
                    .get("delay")
                    .or(t.get("think_ms"))
                    .and_then(Value::as_f64)
                    .map(|ms| (ms * 1000.0) as u64),
                max_tokens: None,
                tool_rounds: t.get("tool_rounds").and_then(Value::as_u64).unwrap_or(0) as u32,
                tool_result_tokens: 16,
            })
            .collect();
        sessions.push(Session {
            id: v["session_id"].as_str().unwrap_or("").into(),
            preamble,
            tools: v.get("tools").cloned().map(Arc::new),
            model: None,
            turns,
        });
    }
    Ok(SessionSet {
        source: name,
        format: SessionFormat::Gatebench,
        sessions,
        crc32: crc32fast::hash(&bytes),
    })
}
