//! The JSON results checked against their committed schemas (`loadgen/*.schema.json`).
//!
//! A small checker of the JSON Schema keywords the files use: `type`, `enum`, `properties`,
//! `required`, `additionalProperties`, `items`, and `$ref` to `#/$defs/NAME` in the same file
//! or `FILE#/$defs/NAME` in another schema file beside it.

#![allow(clippy::unwrap_used)] // checks for tests: a panic is the failure report

use serde_json::Value;

/// Checks `value` against `schema` (whose file's root is `root`), each mismatch with its
/// JSON path (`$.plan.cores`) added to `errors`.
pub fn check(value: &Value, schema: &Value, root: &Value, path: &str, errors: &mut Vec<String>) {
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let (file, name) = reference.split_once("#/$defs/").unwrap();
        if file.is_empty() {
            return check(value, &root["$defs"][name], root, path, errors);
        }
        let other = load(file);
        return check(value, &other["$defs"][name], &other, path, errors);
    }
    if let Some(types) = schema.get("type") {
        let types: Vec<&str> = match types {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let actual = match value {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(n) if n.is_u64() || n.is_i64() => "integer",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        };
        let ok = types.contains(&actual) || (actual == "integer" && types.contains(&"number"));
        if !ok {
            errors.push(format!("{path}: {actual}, expected {types:?}"));
            return;
        }
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array) {
        if !allowed.contains(value) {
            errors.push(format!("{path}: {value} not in {allowed:?}"));
        }
    }
    if let Value::Object(map) = value {
        let properties = schema.get("properties").and_then(Value::as_object);
        for key in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let key = key.as_str().unwrap();
            if !map.contains_key(key) {
                errors.push(format!("{path}: missing {key}"));
            }
        }
        for (key, v) in map {
            let here = format!("{path}.{key}");
            match (
                properties.and_then(|p| p.get(key)),
                schema.get("additionalProperties"),
            ) {
                (Some(sub), _) => check(v, sub, root, &here, errors),
                (None, Some(Value::Bool(false))) => {
                    errors.push(format!("{here}: not in the schema"))
                }
                (None, Some(sub @ Value::Object(_))) => check(v, sub, root, &here, errors),
                _ => {}
            }
        }
    }
    if let (Value::Array(items), Some(sub)) = (value, schema.get("items")) {
        for (i, item) in items.iter().enumerate() {
            check(item, sub, root, &format!("{path}[{i}]"), errors);
        }
    }
}

/// A schema file of `loadgen/`.
/// The schema `loadgen/FILE`.
pub fn load(file: &str) -> Value {
    let path = format!("{}/../loadgen/{file}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The run result's schema (`loadgen/result.schema.json`).
pub fn schema() -> Value {
    load("result.schema.json")
}

/// Checks a result against `loadgen/FILE` and fails the test with every mismatch.
pub fn assert_matches(result: &impl serde::Serialize, file: &str) {
    let schema = load(file);
    let value = serde_json::to_value(result).unwrap();
    let mut errors = Vec::new();
    check(&value, &schema, &schema, "$", &mut errors);
    assert!(errors.is_empty(), "{file}: {errors:#?}");
}
