//! A modeled cost (placeholder: filled in with `--price`).
