//! Go (placeholder: filled in with the runtime counters reader).
