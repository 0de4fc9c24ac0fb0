//! loadgen's HTTP/1.1 client against the framings a server may choose: every one read to its
//! end, connections closed by the server replaced, a body cut short counted as truncated.

use gatebench_tests::faulty::{start_faulty, Fault};
use loadgen::commands::run::run;
use loadgen::LoadArgs;

use gatebench_tests::load_args::args;

fn run_against(fault: Fault) -> loadgen::results::run::TargetRun {
    run_paced(fault, "100", "1s", 4, 100)
}

/// `requests` requests at `rate` a second for `duration` on up to `connections` connections.
fn run_paced(
    fault: Fault,
    rate: &str,
    duration: &str,
    connections: usize,
    requests: u64,
) -> loadgen::results::run::TargetRun {
    let addr = start_faulty(fault);
    let (mut result, _) = run(
        LoadArgs {
            rate: Some(rate.into()),
            duration: Some(duration.into()),
            connections: Some(connections),
            request: loadgen::options::RequestFlags {
                timeout: Some("1s".into()),
                ..Default::default()
            },
            ..args(format!("http://{addr}/v1/chat/completions"))
        },
        vec![],
    )
    .unwrap();
    let run = result.runs.remove(0);
    assert_eq!(
        run.requests, requests,
        "every scheduled request is accounted for"
    );
    run
}

#[test]
fn connection_close_is_honoured_with_a_new_connection_each_time() {
    let run = run_against(Fault::CloseEach);
    assert_eq!((run.ok, run.failed), (100, 0), "{:?}", run.errors);
    assert!(run.connections_opened >= 100, "{}", run.connections_opened);
}

#[test]
fn connections_the_server_closed_while_idle_are_not_reused() {
    // The server's close follows its answer at once, but a server thread held up between the
    // two (on a loaded host) delays the close; a request sent on the connection meanwhile meets
    // it, a race no client can win. One connection a second apart leaves it idle for a second,
    // far longer than any such hold, and still under the 4 s past which loadgen would not have
    // reused it anyway: each request must find its predecessor's connection closed and open
    // another.
    let run = run_paced(Fault::CloseIdle, "1", "3s", 1, 3);
    assert_eq!((run.ok, run.failed), (3, 0), "{:?}", run.errors);
    assert_eq!(run.connections_opened, 3, "one connection a request");
}

#[test]
fn chunked_bodies_with_extensions_and_trailers_are_read() {
    let run = run_against(Fault::ChunkedTrailers);
    assert_eq!((run.ok, run.failed), (100, 0), "{:?}", run.errors);
    assert!(run.connections_opened <= 4, "{}", run.connections_opened);
}

#[test]
fn a_body_without_length_ends_at_the_close() {
    let run = run_against(Fault::UntilClose);
    assert_eq!((run.ok, run.failed), (100, 0), "{:?}", run.errors);
}

#[test]
fn a_body_shorter_than_its_length_counts_as_truncated() {
    let run = run_against(Fault::ShortBody);
    assert_eq!(run.errors.get("truncated"), Some(&100), "{:?}", run.errors);
}

#[test]
fn a_connection_idle_for_more_than_four_seconds_is_replaced_not_reused() {
    // Two requests 5 s apart on one connection slot: the first uses the connection opened
    // ahead; the second finds it idle too long (a server may be closing it) and opens another.
    let mock = gatebench_tests::start_mock(mock_upstream::Config::default());
    let (mut result, _) = loadgen::commands::run::run(
        LoadArgs {
            rate: Some("0.2".into()),
            duration: Some("6s".into()),
            connections: Some(1),
            ..gatebench_tests::load_args::args(gatebench_tests::load_args::url(&mock))
        },
        vec![],
    )
    .unwrap();
    let run = result.runs.remove(0);
    assert_eq!((run.requests, run.ok), (2, 2), "{:?}", run.errors);
    assert_eq!(run.connections_opened, 2);
    assert_eq!(run.connections_reused, 1);
}
