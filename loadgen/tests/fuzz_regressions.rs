//! Replays the seeds (`fuzz/corpus/loadgen_response/`) and every input that once crashed the
//! fuzz target (`fuzz/regressions/loadgen_response/`) through its entry point, so a fixed
//! crash stays fixed.

#![allow(clippy::unwrap_used)] // test code: a panic is the failure report

use std::path::PathBuf;

#[test]
fn response_inputs_parse_without_panicking() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
    let mut replayed = 0;
    for folder in ["corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(root.join(folder).join("loadgen_response")) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            let outcome = std::panic::catch_unwind(|| loadgen::fuzzing::response(&bytes));
            assert!(outcome.is_ok(), "{} panics", path.display());
            replayed += 1;
        }
    }
    assert!(replayed > 0, "the seeds are missing");
}
