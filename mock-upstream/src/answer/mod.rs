//! The answer: the one body type, the stream on absolute deadlines, tool calls built per
//! request, and the watch on a stalled stream's client.

pub(crate) mod body;
pub(crate) mod peer;
pub(crate) mod sse;
pub(crate) mod tools;
