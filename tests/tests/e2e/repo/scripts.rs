//! The bench scripts' own arithmetic, checked where it is written: the examples in the
//! docstrings of `scripts/lib/*.py` helpers that compute a printed figure.

use std::path::Path;

#[test]
fn the_median_interval_helper_gives_its_examples() {
    let helper = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/lib/median_interval.py");
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_string());
    let out = std::process::Command::new(&python)
        .args(["-m", "doctest"])
        .arg(&helper)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {python}: {e}"));
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
