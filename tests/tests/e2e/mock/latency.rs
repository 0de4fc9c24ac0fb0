//! Latency accuracy: deadlines are absolute, never early, and late by at most a timer tick or
//! two. How late is the host's: the gate holds upper bounds to seconds, a precision run to tens
//! of milliseconds.

use std::time::Duration;

use gatebench_shared::LatencyModel;
use gatebench_tests::{chat_body, start_mock, Client};
use mock_upstream::Config;
use serde_json::json;

/// What a deadline may be late by: 40 ms in a precision run, seconds in the gate (a deadline
/// is never early on any host; how late it is, is the host's).
fn slack() -> Duration {
    gatebench_tests::upper_bound(Duration::from_millis(40), Duration::from_secs(5))
}

fn model(ttft: &str, itl: &str, tokens: &str) -> Config {
    Config {
        latency: LatencyModel {
            ttft: ttft.parse().unwrap(),
            itl: itl.parse().unwrap(),
            tokens: tokens.parse().unwrap(),
            ..LatencyModel::default()
        },
        ..Config::default()
    }
}

#[tokio::test]
async fn sixty_tokens_at_ten_ms_take_six_hundred_ms() {
    let mock = start_mock(model("10ms", "10ms", "60"));
    let mut client = Client::connect(mock.local_addr()).await;
    let r = client.chat(&chat_body(true, json!({})), &[]).await;
    // Headers come at once, before the first token.
    assert!(
        r.head_after < gatebench_tests::upper_bound(Duration::from_millis(10), slack()),
        "{:?}",
        r.head_after
    );
    let e2e = r.end_after();
    let expected = Duration::from_millis(10 + 59 * 10);
    assert!(e2e >= expected, "e2e {e2e:?} is early");
    assert!(
        e2e <= expected + slack(),
        "e2e {e2e:?} drifted past {expected:?}"
    );

    // Token k is never early: due at 10 ms + k × 10 ms.
    let mut k = 0u64;
    for (at, bytes) in &r.frames {
        let text = String::from_utf8_lossy(bytes);
        for event in text.split("\n\n").filter(|e| e.contains("\"content\":\"")) {
            if event.contains("\"content\":\"\"") {
                continue; // the role chunk
            }
            let due = Duration::from_millis(10 + 10 * k);
            assert!(*at >= due, "token {k} at {at:?}, due {due:?}");
            k += 1;
        }
    }
    assert_eq!(k, 60);
    assert!(mock.metrics().emission_error.count() >= 60);
}

#[tokio::test]
async fn time_to_first_token_is_the_configured_one() {
    let mock = start_mock(model("150ms", "0", "5"));
    let mut client = Client::connect(mock.local_addr()).await;
    let r = client.chat(&chat_body(true, json!({})), &[]).await;
    let first = r.frames.first().unwrap().0;
    assert!(first >= Duration::from_millis(150), "{first:?}");
    assert!(first <= Duration::from_millis(150) + slack(), "{first:?}");
    // With no inter-token gap, the rest leaves with the first token.
    let bound = gatebench_tests::upper_bound(Duration::from_millis(20), slack());
    assert!(r.end_after() - first < bound);
}

#[tokio::test]
async fn non_streaming_takes_the_stream_e2e_unless_latency_is_set() {
    let mock = start_mock(model("100ms", "10ms", "11"));
    let mut client = Client::connect(mock.local_addr()).await;
    let r = client.chat(&chat_body(false, json!({})), &[]).await;
    let expected = Duration::from_millis(200);
    assert!(r.head_after >= expected, "{:?}", r.head_after);
    assert!(r.head_after <= expected + slack(), "{:?}", r.head_after);
    assert_eq!(r.headers["openai-processing-ms"], "200");

    let mut config = model("100ms", "10ms", "11");
    config.latency.response = Some("30ms".parse().unwrap());
    let mock = start_mock(config);
    let mut client = Client::connect(mock.local_addr()).await;
    let r = client.chat(&chat_body(false, json!({})), &[]).await;
    assert!(
        r.head_after >= Duration::from_millis(30),
        "{:?}",
        r.head_after
    );
    assert!(r.head_after <= Duration::from_millis(30) + slack());
}

#[tokio::test]
async fn a_slow_stream_does_not_hold_up_other_requests() {
    let mock = start_mock(model("0", "250ms", "20"));
    let addr = mock.local_addr();
    let slow = tokio::spawn(async move {
        let mut client = Client::connect(addr).await;
        client
            .chat(&chat_body(true, json!({})), &[])
            .await
            .end_after()
    });
    let mut fast = Client::connect(addr).await;
    let mut config_body = chat_body(false, json!({}));
    config_body["max_tokens"] = json!(1);
    let r = fast.chat(&config_body, &[]).await;
    // The slow stream takes five seconds; the fast answer comes long before it ends.
    let bound =
        gatebench_tests::upper_bound(Duration::from_millis(200), Duration::from_millis(2_500));
    assert!(r.head_after < bound, "{:?}", r.head_after);
    assert!(slow.await.unwrap() >= Duration::from_millis(4_750));
}

/// A default mock (`--spin auto`) answers a 3 ms latency never early, and on time by its own
/// account: its emission error is a spin's, not the kernel's wake-up (tens of µs on a VM), and
/// `/metrics` shows the margin it learned and the wake-ups it learned from.
#[test]
fn a_default_mock_answers_on_time_by_its_own_account() {
    let mut config = model("0", "0", "4");
    config.latency.response = Some("3ms".parse().unwrap());
    let mock = start_mock(config);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let metrics = runtime.block_on(async {
        let mut client = Client::connect(mock.local_addr()).await;
        for _ in 0..40 {
            let r = client.chat(&chat_body(false, json!({})), &[]).await;
            assert_eq!(r.status, 200);
            assert!(
                r.head_after >= Duration::from_millis(3),
                "{:?}",
                r.head_after
            );
        }
        let config = client
            .send(hyper::Method::GET, "/v1/gatebench/config", &[], b"")
            .await
            .text();
        assert!(config.contains("spin = \"auto\""), "{config}");
        let get = hyper::Method::GET;
        client.send(get, "/metrics", &[], b"").await.text()
    });
    let timer = mock
        .metrics()
        .timer()
        .expect("the worker installed its timer");
    assert_eq!(timer.spin, "auto", "{timer:?}");
    // The calibration's 40 sleeps at least (then one kernel wake-up per answer, unless a
    // stalled thread found its deadline already past).
    assert!(timer.wakeups >= 40, "{timer:?}");
    let widest_us = gatebench_shared::wake::MAX_MARGIN_NS as f64 / 1e3;
    assert!(timer.margin_us <= widest_us, "{timer:?}");
    let emission = &mock.metrics().emission_error;
    assert!(emission.count() >= 40);
    if gatebench_tests::precision_run() {
        on_time_by_its_own_account(&timer, emission.quantile_us(0.5) as f64);
    }
    for series in [
        "mock_emission_error_seconds_count",
        "mock_timer_spin_info{spin=\"auto\"} 1",
        "mock_timer_margin_seconds",
        "mock_timer_wakeup_lateness_seconds{quantile=\"0.99\"}",
        "mock_timer_late_wakeups_total",
        "mock_timer_spun_seconds_total",
    ] {
        assert!(metrics.contains(series), "{series} missing:\n{metrics}");
    }
}

/// The margin covers a typical wake-up, the timer spun, and the emission error's median is
/// within 25 µs, or at most half the kernel's own wake-up lateness on a machine so loaded that
/// its wake-ups are later than that (a timer left to the kernel, `--spin 0`, is late by about
/// its wake-up's lateness, +40 µs on a VM, and fails both): a precision check.
fn on_time_by_its_own_account(timer: &gatebench_shared::wake::WakeReport, p50: f64) {
    assert!(timer.wakeups >= 80, "{timer:?}");
    assert!(
        timer.margin_us >= timer.lateness_p50_us && timer.margin_us <= 1_000.0,
        "the margin covers a typical wake-up: {timer:?}"
    );
    assert!(timer.spun_s > 0.0, "{timer:?}");
    assert!(
        p50 <= 25.0 || p50 * 2.0 <= timer.lateness_p50_us,
        "emission error p50 {p50} µs with a wake-up lateness p50 of {} µs: {timer:?}",
        timer.lateness_p50_us
    );
}
