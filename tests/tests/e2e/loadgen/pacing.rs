//! How loadgen waits, against the mock: the pacer's learned margin (`--spin auto`, the default)
//! and the polling for due answers (`--poll-budget`) are recorded in the result, `0` turns each
//! off, and a wrong value is refused with a message naming what is expected.

use gatebench_tests::{precision_run, start_mock};
use loadgen::commands::run::run;
use loadgen::LoadArgs;
use mock_upstream::Config;

use gatebench_tests::load_args::{args, url};

#[test]
fn the_default_pacer_learns_its_margin_and_polls_for_answers() {
    let mock = start_mock(Config::default());
    let (result, _) = run(
        LoadArgs {
            rate: Some("200".into()),
            duration: Some("1s".into()),
            ..args(url(&mock))
        },
        vec![],
    )
    .unwrap();
    assert_eq!(result.plan.spin.as_deref(), Some("auto"));
    assert_eq!(result.plan.spin_us, None, "auto has no fixed margin");
    assert_eq!(result.plan.poll_budget_cores, Some(1.0));
    let r = &result.runs[0];
    assert_eq!(r.ok, 200, "{:?}", r.errors);
    let p = r.pacer.as_ref().expect("an open loop records its pacer");
    assert_eq!(p.spin, "auto");
    // The 40 sleeps of the calibration, then the run's own. The calibration's are counted on
    // any host; a worker that fell behind its schedule sleeps less after them.
    assert!(p.wakeups >= 40, "{p:?}");
    assert!(p.margin_us >= 6.0 && p.margin_us <= 2_048.0, "{p:?}");
    assert!(p.widest_margin_us >= p.margin_us, "{p:?}");
    assert!(p.lateness_p50_us <= p.lateness_p99_us, "{p:?}");
    assert!(p.lateness_p99_us <= p.lateness_max_us + 2.0, "{p:?}");
    let a = r.answer_poll.as_ref().expect("the answer poller's account");
    assert_eq!(a.budget_cores, 1.0);
    // It polls only in a window it opened.
    assert!(a.windows > 0 || a.polled_s == 0.0, "{a:?}");
    assert!(a.expected_from_us > 0.0, "{a:?}");
    assert!(a.expected_from_us <= a.expected_to_us, "{a:?}");
    // How long the waits spun and polled is the host's: a worker late for a send does not spin
    // for it, one that finds its answer already read does not poll for it, and a thread that
    // loses the CPU mid-spin or mid-poll counts the time it lost.
    if precision_run() {
        // 200 waits each end spinning at least the narrowest margin; none spins the whole
        // second.
        assert!(p.spun_s > 200.0 * 1e-6 && p.spun_s < 1.5, "{p:?}");
        // After its first answers the worker expects the next, and polls for them.
        assert!(a.windows > 0 && a.polled_s > 0.0, "{a:?}");
        assert!(a.polled_cores <= 1.05, "{a:?}");
    }
    // The report says it in one line.
    let line = loadgen::report::waiting::waiting_line(r).unwrap();
    assert!(
        line.contains("--spin auto") && line.contains("polled"),
        "{line}"
    );
}

#[test]
fn zero_turns_spinning_and_polling_off() {
    let mock = start_mock(Config::default());
    let (result, _) = run(
        LoadArgs {
            rate: Some("200".into()),
            duration: Some("500ms".into()),
            spin: Some("0".into()),
            poll_budget: Some("0".into()),
            ..args(url(&mock))
        },
        vec![],
    )
    .unwrap();
    assert_eq!(result.plan.spin_us, Some(0));
    assert_eq!(result.plan.spin.as_deref(), Some("0us"));
    let r = &result.runs[0];
    assert_eq!(r.ok, 100, "{:?}", r.errors);
    let p = r.pacer.as_ref().unwrap();
    assert_eq!((p.margin_us, p.widest_margin_us, p.spun_s), (0.0, 0.0, 0.0));
    // Still measured: every wait slept on the timer, after the calibration's 40 sleeps. A
    // worker late for a send has no wait to sleep, so only the calibration's count on any host.
    assert!(p.wakeups >= 40, "{p:?}");
    assert!(!precision_run() || p.wakeups >= 100, "{p:?}");
    let a = r.answer_poll.as_ref().unwrap();
    assert_eq!(
        (a.budget_cores, a.windows, a.polled_s),
        (0.0, 0, 0.0),
        "{a:?}"
    );
    // Nor does it keep the recent answers the poller would read.
    assert_eq!((a.expected_from_us, a.expected_to_us), (0.0, 0.0), "{a:?}");
}

#[test]
fn a_closed_loop_has_no_pacer_but_polls_for_its_answers() {
    let mock = start_mock(Config::default());
    let (result, _) = run(
        LoadArgs {
            concurrency: Some(1),
            duration: Some("300ms".into()),
            poll_budget: Some("0.5".into()),
            ..args(url(&mock))
        },
        vec![],
    )
    .unwrap();
    let r = &result.runs[0];
    // How many answers one loop gets in 300 ms is the host's pace; that it gets some is not.
    assert!(r.ok > 0, "{r:?}");
    assert!(r.pacer.is_none());
    let a = r.answer_poll.as_ref().unwrap();
    assert_eq!(a.budget_cores, 0.5);
    assert!(a.windows > 0 || a.polled_s == 0.0, "{a:?}");
    // Whether an answer was still due when the poller looked, and the time a stalled thread
    // counts as polled, are the host's.
    if precision_run() {
        assert!(r.ok > 20, "{r:?}");
        assert!(a.windows > 0, "{a:?}");
        // Within the budget, with a little slack for the last turn of each window.
        assert!(a.polled_cores <= 0.55, "{a:?}");
    }
}

#[test]
fn wrong_values_say_what_is_expected() {
    for (spin, budget, expected) in [
        (Some("soon"), None, "auto"),
        (Some("-5us"), None, "--spin"),
        (None, Some("lots"), "--poll-budget"),
        (None, Some("-1"), "number of cores"),
        (None, Some("NaN"), "number of cores"),
    ] {
        let bad = LoadArgs {
            spin: spin.map(Into::into),
            poll_budget: budget.map(Into::into),
            ..args("http://127.0.0.1:9/v1/chat/completions".into())
        };
        let err = bad.plan().unwrap_err().to_string();
        assert!(err.contains(expected), "{spin:?} {budget:?}: {err}");
    }
}
