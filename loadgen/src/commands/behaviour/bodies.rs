//! The bodies a behaviour measurement sends, changed from the request's own: prompt `d` of a
//! trial's set (its last user text suffixed), and the mark of the request's number written into
//! the body (`user`, or Anthropic's `metadata.user_id`). The plan checks them before any load;
//! the requests are built from them.

use crate::engine::steering::USER_MARK_PREFIX;
use crate::wire::http1::request::MARK_WIDTH;
use crate::wire::target::RequestSpec;

/// The body with prompt `d` of trial `set`: its last user text ends with
/// ` (prompt d of set SET)`.
pub fn prompt_body(spec: &RequestSpec, d: usize, set: &str) -> Result<Vec<u8>, String> {
    let mut value: serde_json::Value =
        serde_json::from_slice(&spec.body).map_err(|e| format!("the body: {e}"))?;
    let suffix = format!(" (prompt {d} of set {set})");
    let last_text = value
        .get_mut("messages")
        .and_then(|m| m.as_array_mut())
        .and_then(|m| m.last_mut())
        .and_then(|m| m.get_mut("content"));
    match last_text {
        Some(serde_json::Value::String(text)) => text.push_str(&suffix),
        _ => match value.get_mut("input") {
            Some(serde_json::Value::String(text)) => text.push_str(&suffix),
            _ => {
                return Err(
                    "cache varies the prompt of a body whose last message's content (or \
                     Responses input) is text; this body has none"
                        .into(),
                )
            }
        },
    }
    serde_json::to_vec(&value).map_err(|e| e.to_string())
}

/// The body with a mark of 20 zeros in its `user` field (or `metadata.user_id`), and the
/// offset of the digits.
pub fn marked_body(body: &[u8], anthropic: bool) -> Result<(Vec<u8>, usize), String> {
    let mut value: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| format!("the body: {e}"))?;
    let object = value
        .as_object_mut()
        .ok_or("the body is not a JSON object, so it cannot carry a mark")?;
    let mark = format!("{USER_MARK_PREFIX}{}", "0".repeat(MARK_WIDTH));
    if anthropic {
        let metadata = object
            .entry("metadata")
            .or_insert_with(|| serde_json::json!({}));
        match metadata.as_object_mut() {
            Some(m) => {
                m.insert("user_id".into(), mark.clone().into());
            }
            None => return Err("the body's metadata is not an object".into()),
        }
    } else {
        object.insert("user".into(), mark.clone().into());
    }
    let bytes = serde_json::to_vec(&value).map_err(|e| e.to_string())?;
    let needle = format!("\"{mark}\"");
    let at = bytes
        .windows(needle.len())
        .position(|w| w == needle.as_bytes())
        .ok_or("the mark is not in the body")?;
    Ok((bytes, at + 1 + USER_MARK_PREFIX.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mark_lands_in_user_or_metadata_and_its_digits_are_found() {
        let (body, at) = marked_body(br#"{"model":"m","messages":[]}"#, false).unwrap();
        assert_eq!(&body[at - 3..at], b"gb-");
        assert_eq!(
            &body[at..at + MARK_WIDTH],
            "0".repeat(MARK_WIDTH).as_bytes()
        );
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert!(v["user"].as_str().unwrap().starts_with("gb-"));
        let (body, _) = marked_body(br#"{"model":"m"}"#, true).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert!(v["metadata"]["user_id"]
            .as_str()
            .unwrap()
            .starts_with("gb-"));
        assert!(marked_body(b"[1]", false).is_err());
    }
}
