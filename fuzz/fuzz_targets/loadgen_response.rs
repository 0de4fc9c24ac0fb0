//! Arbitrary bytes as a target's answer to loadgen: the response head, the body by its
//! framing (content-length, chunked, until close) split across two reads, the event-stream
//! reader and the completion check.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    loadgen::fuzzing::response(data);
});
