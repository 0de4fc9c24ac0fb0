//! loadgen's HTTP/1.1 client against the framings a server may choose: every one read to its
//! end, connections closed by the server replaced, a body cut short counted as truncated.

use gatebench_tests::faulty::{start_faulty, Fault};
use loadgen::commands::run::run;
use loadgen::RunArgs;

use crate::load::args;

fn run_against(fault: Fault) -> loadgen::results::run::TargetRun {
    let addr = start_faulty(fault);
    let (mut result, _) = run(
        RunArgs {
            rate: Some("100".into()),
            duration: Some("1s".into()),
            connections: Some(4),
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
        run.requests, 100,
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
    let run = run_against(Fault::CloseIdle);
    assert_eq!((run.ok, run.failed), (100, 0), "{:?}", run.errors);
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
        RunArgs {
            rate: Some("0.2".into()),
            duration: Some("6s".into()),
            connections: Some(1),
            ..crate::load::args(crate::load::url(&mock))
        },
        vec![],
    )
    .unwrap();
    let run = result.runs.remove(0);
    assert_eq!((run.requests, run.ok), (2, 2), "{:?}", run.errors);
    assert_eq!(run.connections_opened, 2);
    assert_eq!(run.connections_reused, 1);
}
