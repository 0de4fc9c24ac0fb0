//! Node.js (placeholder: filled in with the V8 sampling profile reader).
