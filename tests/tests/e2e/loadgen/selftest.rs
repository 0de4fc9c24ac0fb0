//! `loadgen selftest`: every figure measured and written as its schema says, and the exit code
//! and the sentences agreeing with the figures. Whether this machine meets the targets is the
//! machine's (the precision run judges it); what the gate checks is that selftest says so
//! truly either way.

use loadgen::commands::selftest::run_selftest;
use loadgen::options::SelftestArgs;

#[test]
fn selftest_measures_every_figure_and_says_which_missed() {
    let (result, code) = run_selftest(
        SelftestArgs {
            out: None,
            seconds: "300ms".into(),
            quiet: true,
        },
        vec!["loadgen".into(), "selftest".into()],
    )
    .unwrap();
    gatebench_tests::schema::assert_matches(&result, "selftest.schema.json");
    let names: Vec<&str> = result.figures.iter().map(|f| f.name.as_str()).collect();
    for wanted in [
        "kernel timer lateness p50 (1 ms sleeps)",
        "kernel timer lateness p99.9 (1 ms sleeps)",
        "loopback round trip p50",
        "schedule lag p50 at 200 req/s",
        "schedule lag p99 at 5000 req/s",
        "mock emission error p50 at 200us",
        "mock emission error p50 at 3ms",
        "identical mock's median",
        "a known 20 µs delay's median",
    ] {
        assert!(names.contains(&wanted), "{wanted} missing from {names:?}");
    }
    // The machine's own figures hold no target; a figure with one says whether it met it.
    for f in &result.figures {
        match &f.target {
            None => assert!(f.met && f.value.is_some(), "{f:?}"),
            Some(t) if t.starts_with("<= ") => {
                let limit: f64 = t[3..].parse().unwrap();
                assert_eq!(f.met, f.value.is_some_and(|v| v <= limit), "{f:?}");
            }
            Some(t) => {
                let said = f.said.as_deref().unwrap_or_default();
                assert_eq!(f.met, said.starts_with(t.as_str()), "{f:?}");
            }
        }
    }
    // One sentence for each miss, naming its figure; exit 0 only when none, else 3.
    let missed: Vec<_> = result.figures.iter().filter(|f| !f.met).collect();
    assert_eq!(result.misses.len(), missed.len(), "{:?}", result.misses);
    for (sentence, f) in result.misses.iter().zip(&missed) {
        assert!(sentence.starts_with(&f.name), "{sentence}");
    }
    assert_eq!(result.can_measure, missed.is_empty());
    assert_eq!(code, if result.can_measure { 0 } else { 3 });
    // A twin's resolution is measured; the report says it and the verdict.
    assert!(result.resolution_us.is_some_and(|r| r >= 0.0));
    let text = loadgen::report::selftest::terminal(&result);
    assert!(
        text.contains("smallest added latency this machine resolves now"),
        "{text}"
    );
    if gatebench_tests::precision_run() {
        assert_eq!(code, 0, "{text}");
    }
}

#[test]
fn a_bad_duration_is_refused_before_anything_runs() {
    let err = run_selftest(
        SelftestArgs {
            out: None,
            seconds: "forever".into(),
            quiet: true,
        },
        vec![],
    )
    .unwrap_err();
    assert!(err.to_string().contains("--seconds"), "{err}");
}
