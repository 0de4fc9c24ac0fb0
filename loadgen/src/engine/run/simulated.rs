//! A run on simulated time against a simulated target, for tests: the plan's workers run as tasks
//! of one paused runtime, their clock is the simulation's, their client the model; what they
//! recorded is merged and summarised as a real run's is. Every run of it is the same run.

use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use gatebench_shared::sim::SimTime;
use tokio::task::LocalSet;

use super::summary::summarise;
use super::target::merged;
use super::watch::Bounds;
use crate::generator::plan::Plan;
use crate::generator::worker::{simulate, Progress, StartLine, WorkerSpec};
use crate::model::target::Target;
use crate::options::LoadArgs;
use crate::results::pacing::WakeReport;
use crate::results::run::TargetRun;
use crate::wire::clock::RunClock;
use crate::wire::simulated::SimulatedTarget;

/// How long after its now the simulation's run starts.
pub(crate) const LEAD: Duration = Duration::from_millis(10);

/// The plan of `loadgen run` with `flags`, against a loopback URL the model stands for.
pub(crate) fn plan(flags: &[&str]) -> Plan {
    let line = [
        "loadgen",
        "run",
        "--target",
        "http://127.0.0.1:9/v1/chat/completions",
    ];
    let parsed = RunLine::try_parse_from(line.iter().chain(flags)).expect("the flags parse");
    let RunOnly::Run(load) = parsed.command;
    own(load).plan().expect("the flags make a plan")
}

/// `loadgen run`'s command line, read as `run` reads it (the engine does not know the list of
/// commands above it).
#[derive(clap::Parser)]
#[command(name = "loadgen")]
struct RunLine {
    #[command(subcommand)]
    command: RunOnly,
}

#[derive(clap::Subcommand)]
enum RunOnly {
    Run(LoadArgs),
}

/// `args` as its flags alone say: what the environment added (`LOADGEN_PRESET`,
/// `LOADGEN_SHARD`) taken out, so a test's plan is the same in every shell.
pub(crate) fn own(mut args: crate::LoadArgs) -> crate::LoadArgs {
    args.preset = None;
    args.shard = None;
    args
}

/// Runs `body` on simulated `time` to its end, on a paused runtime of its own (tasks may be
/// spawned locally).
pub(crate) fn block_on<F: std::future::Future>(time: &Arc<SimTime>, body: F) -> F::Output {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .expect("a runtime");
    LocalSet::new().block_on(&runtime, time.run(body))
}

/// Runs `plan` against `model` (standing for `target`) on `time`, from [`LEAD`] after its now, to the end of its drain;
/// the run summarised.
pub(crate) fn run_simulated(
    plan: Arc<Plan>,
    target: Target,
    time: &Arc<SimTime>,
    model: &SimulatedTarget,
) -> TargetRun {
    let bounds = Bounds::of(&plan);
    let clock = RunClock::simulated(time, LEAD);
    let progress = Arc::new(Progress::default());
    let workers = (0..plan.threads).map(|index| WorkerSpec {
        index,
        plan: plan.clone(),
        target: target.clone(),
        start: Arc::new(StartLine::new(0)),
        window_start_ns: bounds.start_ns,
        end_ns: bounds.end_ns,
        progress: progress.clone(),
        core: None,
    });
    let outputs = block_on(time, async {
        let tasks: Vec<_> = workers
            .map(|spec| tokio::task::spawn_local(simulate(spec, clock.clone(), model.clone())))
            .collect();
        let mut outputs = Vec::new();
        for task in tasks {
            outputs.push(task.await.ok());
        }
        outputs
    });
    let joined = merged(&plan, bounds, outputs.into_iter());
    let margins: Vec<_> = joined.pacers.iter().collect();
    let pacer = WakeReport::merged(&margins);
    let mut run = summarise(&plan, target, joined.recorder, joined.counts, None);
    run.pacer = pacer;
    run
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::simulated::{During, Service};

    const START: u64 = 1_000_000_000;

    fn at_ms(ms: f64) -> u64 {
        START + LEAD.as_nanos() as u64 + (ms * 1e6) as u64
    }

    #[test]
    fn every_slot_leaves_at_its_instant_and_takes_the_models_service_time() {
        for threads in ["1", "2"] {
            let time = SimTime::new(START);
            let model = SimulatedTarget::new(&time, 4, Service::Fixed(2_000_000), 1);
            let flags = ["--rate", "200", "--duration", "1s", "--threads", threads];
            let plan = Arc::new(plan(&flags));
            let run = run_simulated(plan.clone(), plan.targets[0].clone(), &time, &model);
            assert_eq!((run.requests, model.received()), (200, 200), "{threads}");
            let m = |name: &str| run.metrics[name];
            // On time to within one turn of the spin (1 µs), the simulation's grain.
            assert!(
                m("schedule_lag").max <= 1,
                "{threads}: {:?}",
                m("schedule_lag")
            );
            // The model's 2 ms, from the intended send.
            let response = m("response_time");
            assert!((2_000..=2_001).contains(&response.min), "{response:?}");
            assert!((2_000..=2_001).contains(&response.max), "{response:?}");
            assert!(run.validity.valid, "{threads}: {:?}", run.validity);
        }
    }

    #[test]
    fn a_stall_fills_max_pending_and_the_rest_is_counted_as_backlog() {
        // One server, 1 ms a request, every 5 ms; answers due from 300 ms are held to 702.5 ms.
        let time = SimTime::new(START);
        let model = SimulatedTarget::new(&time, 1, Service::Fixed(1_000_000), 1).stall(During {
            from_ns: at_ms(300.0),
            until_ns: at_ms(702.5),
        });
        let flags = ["--rate", "200", "--duration", "1s", "--max-pending", "20"];
        let plan = Arc::new(plan(&flags));
        let run = run_simulated(plan.clone(), plan.targets[0].clone(), &time, &model);
        // Slots 60-79 (300-395 ms) wait in the stall; 80-140 (400-700 ms) find 20 pending and
        // are counted, not sent; 141 on find the first answers in.
        assert_eq!(run.errors.get("backlog"), Some(&61), "{:?}", run.errors);
        assert_eq!((run.requests, model.received()), (200, 139));
        // Slot 60 is answered at the stall's end, 402.5 ms after it was due.
        let response = &run.metrics["response_time"];
        assert!(
            response.max >= 402_000 && response.max <= 403_000,
            "{response:?}"
        );
    }

    #[test]
    fn answers_in_an_error_window_are_counted_by_status_and_kept_out_of_the_latencies() {
        // Requests sent from 200 ms to 400 ms (slots 40-79) are answered 503.
        let time = SimTime::new(START);
        let model = SimulatedTarget::new(&time, 1, Service::Fixed(1_000_000), 1).fail(
            During {
                from_ns: at_ms(200.0),
                until_ns: at_ms(400.0),
            },
            503,
        );
        let flags = ["--rate", "200", "--duration", "1s"];
        let plan = Arc::new(plan(&flags));
        let run = run_simulated(plan.clone(), plan.targets[0].clone(), &time, &model);
        assert_eq!(run.errors.get("status_503"), Some(&40), "{:?}", run.errors);
        assert_eq!((run.requests, run.ok), (200, 160));
        assert_eq!(run.metrics["response_time"].count, 160);
    }

    /// A file of `text` that lives as long as it.
    struct Temp(std::path::PathBuf);

    impl Temp {
        fn new(name: &str, text: &str) -> Temp {
            let path =
                std::env::temp_dir().join(format!("gatebench-sim-{}-{name}", std::process::id()));
            std::fs::write(&path, text).unwrap();
            Temp(path)
        }
    }

    impl Drop for Temp {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    /// The model's arrivals, ms from the run's zero.
    fn arrivals_ms(model: &SimulatedTarget) -> Vec<f64> {
        let zero = at_ms(0.0);
        model
            .arrivals()
            .iter()
            .map(|&ns| (ns as i64 - zero as i64) as f64 / 1e6)
            .collect()
    }

    #[test]
    fn a_sessions_turn_is_due_at_the_previous_turns_end_plus_its_think_time() {
        // Two sessions a second for 1 s: at 0 and 500 ms. Each turn takes the model 2 ms; the
        // second turn thinks 100 ms after the first's end, the third 250 ms after the second's.
        let file = Temp::new(
            "sessions.jsonl",
            r#"{"session_id": "s", "turns": [{"text": "a"}, {"text": "b", "think_ms": 100}, {"text": "c", "think_ms": 250}]}"#,
        );
        let time = SimTime::new(START);
        let model = SimulatedTarget::new(&time, 4, Service::Fixed(2_000_000), 1);
        let path = file.0.to_str().unwrap();
        let flags = ["--sessions", path, "--rate", "2", "--duration", "1s"];
        let plan = Arc::new(plan(&flags));
        let run = run_simulated(plan.clone(), plan.targets[0].clone(), &time, &model);
        assert_eq!(
            arrivals_ms(&model),
            [0.0, 102.0, 354.0, 500.0, 602.0, 854.0],
            "{:?}",
            run.errors
        );
        assert_eq!((run.requests, run.ok), (6, 6));
    }

    #[test]
    fn a_tool_round_leaves_when_its_answer_ends_holding_the_calls_and_a_result_for_each() {
        // Sessions at 0 and 2.5 ms; every answer (2 ms) calls two tools; two rounds a turn,
        // then a second turn 1 ms after the first's end, opening with the last calls' results.
        let file = Temp::new(
            "agents.jsonl",
            r#"{"session_id": "s", "tools": [{"type": "function", "function": {"name": "look"}}], "tool_rounds": 2, "tool_result_tokens": 2, "turns": [{"text": "a"}, {"text": "b", "think_ms": 1}]}"#,
        );
        let time = SimTime::new(START);
        let model = SimulatedTarget::new(&time, 4, Service::Fixed(2_000_000), 1).calling_tools();
        let path = file.0.to_str().unwrap();
        let flags = ["--sessions", path, "--rate", "400", "--duration", "5ms"];
        let plan = Arc::new(plan(&flags));
        let run = run_simulated(plan.clone(), plan.targets[0].clone(), &time, &model);
        // Each round at its answer's end, ahead of the other session's turn due later.
        let (first, second) = (
            [0.0, 2.0, 4.0, 7.0, 9.0, 11.0],
            [2.5, 4.5, 6.5, 9.5, 11.5, 13.5],
        );
        let mut want: Vec<f64> = first.into_iter().chain(second).collect();
        want.sort_by(f64::total_cmp);
        assert_eq!(arrivals_ms(&model), want, "{:?}", run.errors);
        assert_eq!((run.requests, run.ok), (12, 12));
        // Built and sent at once: on simulated time no instant passes in either.
        assert_eq!(run.metrics["build_time"].count, 12);
        assert_eq!(run.metrics["build_time"].max, 1);
        assert_eq!(run.metrics["schedule_lag"].max, 1);
        // Requests 2, 3, 5 and 6 of each session are its rounds, apart in their rows. Each
        // session took 13 ms from its start to its last answer, 8 of them in its four rounds.
        let sessions = run.sessions.as_ref().unwrap();
        let tools: Vec<u64> = sessions.turns.iter().map(|t| t.tool.ok).collect();
        assert_eq!(tools, [0, 2, 2, 0, 2, 2]);
        assert_eq!(sessions.tool.ok, 8);
        let share = &sessions.tool_share;
        assert_eq!((share.count, share.min, share.max), (2, 615, 615));
        // The first session's requests: its first round (2 ms) and its second turn (7 ms).
        let bodies = model.bodies();
        let messages = |i: usize| {
            let body: serde_json::Value = serde_json::from_slice(&bodies[i]).unwrap();
            let messages = body["messages"].as_array().unwrap().clone();
            let said = |m: &serde_json::Value| match m["role"].as_str().unwrap() {
                "assistant" => {
                    let calls = m["tool_calls"].as_array().unwrap();
                    let ids: Vec<&str> = calls.iter().map(|c| c["id"].as_str().unwrap()).collect();
                    format!("calls {}", ids.join(" "))
                }
                "tool" => format!("result {}", m["tool_call_id"].as_str().unwrap()),
                role => format!("{role} {}", m["content"].as_str().unwrap()),
            };
            messages.iter().map(said).collect::<Vec<String>>()
        };
        assert_eq!(
            messages(1),
            [
                "user a",
                "calls call_a call_b",
                "result call_a",
                "result call_b"
            ]
        );
        assert_eq!(
            messages(6)[4..],
            [
                "calls call_a call_b",
                "result call_a",
                "result call_b",
                "calls call_a call_b",
                "result call_a",
                "result call_b",
                "user b"
            ]
        );
    }

    #[test]
    fn a_trace_is_replayed_at_its_instants() {
        // Rows out of order, the first at 10 s: replayed from the run's zero, in time order,
        // twice as fast with --speedup 2.
        let file = Temp::new(
            "trace.jsonl",
            "{\"timestamp\": 10.0, \"input_tokens\": 20, \"output_tokens\": 4}\n\
             {\"timestamp\": 10.5, \"input_tokens\": 20, \"output_tokens\": 4}\n\
             {\"timestamp\": 10.004, \"input_tokens\": 20, \"output_tokens\": 4}\n\
             {\"timestamp\": 11.25, \"input_tokens\": 20, \"output_tokens\": 4}\n",
        );
        let time = SimTime::new(START);
        let model = SimulatedTarget::new(&time, 4, Service::Fixed(2_000_000), 1);
        let path = file.0.to_str().unwrap();
        let flags = ["--trace", path, "--speedup", "2"];
        let plan = Arc::new(plan(&flags));
        let run = run_simulated(plan.clone(), plan.targets[0].clone(), &time, &model);
        assert_eq!(
            arrivals_ms(&model),
            [0.0, 2.0, 250.0, 625.0],
            "{:?}",
            run.errors
        );
        assert_eq!(run.ok, 4);
    }

    #[test]
    fn stages_send_at_each_stages_rate_from_its_start() {
        // 100 req/s for 500 ms, then a jump to 400 req/s for 500 ms.
        let time = SimTime::new(START);
        let model = SimulatedTarget::new(&time, 4, Service::Fixed(1_000_000), 1);
        let flags = ["--stages", "0s:100,500ms:100,0s:400,500ms:400"];
        let plan = Arc::new(plan(&flags));
        let run = run_simulated(plan.clone(), plan.targets[0].clone(), &time, &model);
        let expected: Vec<f64> = (0..50)
            .map(|k| k as f64 * 10.0)
            .chain((0..200).map(|k| 500.0 + k as f64 * 2.5))
            .collect();
        let got = arrivals_ms(&model);
        assert_eq!(got.len(), expected.len(), "{got:?}");
        for (got, expected) in got.iter().zip(&expected) {
            // To within one turn of the spin (1 µs), the simulation's grain.
            assert!((got - expected).abs() <= 0.001, "{got} against {expected}");
        }
        assert_eq!(run.ok, 250);
    }

    #[test]
    fn a_closed_loops_requests_go_in_its_lane_and_an_open_loops_in_none() {
        // Three loops, 10 ms a request on 4 servers: each loop sends at 0, 10, 20 ... ms.
        let time = SimTime::new(START);
        let model = SimulatedTarget::new(&time, 4, Service::Fixed(10_000_000), 1);
        let flags = ["--concurrency", "3", "--requests", "12"];
        let closed = Arc::new(plan(&flags));
        let run = run_simulated(closed.clone(), closed.targets[0].clone(), &time, &model);
        assert_eq!(run.ok, 12, "{:?}", run.errors);
        let lanes: Vec<_> = model.lanes().into_iter().flatten().collect();
        assert_eq!(lanes, [0, 1, 2].repeat(4), "{:?}", model.lanes());

        let time = SimTime::new(START);
        let model = SimulatedTarget::new(&time, 4, Service::Fixed(1_000_000), 1);
        let flags = ["--rate", "100", "--duration", "100ms"];
        let open = Arc::new(plan(&flags));
        run_simulated(open.clone(), open.targets[0].clone(), &time, &model);
        assert_eq!(model.lanes(), [None; 10]);
    }
}
