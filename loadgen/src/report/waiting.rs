//! One line on how a run's workers waited: the pacer's margin and how late its timer woke, the
//! time it spun, and the time spent polling for due answers against the budget.

use crate::results::run::TargetRun;

/// The line, or `None` for a result that records neither (one from an older build).
pub fn waiting_line(run: &TargetRun) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(p) = &run.pacer {
        parts.push(format!(
            "pacer --spin {}: margin {:.0} µs (widest {:.0}), timer late p50 {:.0} p99 {:.0} max \
             {:.0} µs over {} wake-ups ({} past the margin), spun {:.3} s",
            p.spin,
            p.margin_us,
            p.widest_margin_us,
            p.lateness_p50_us,
            p.lateness_p99_us,
            p.lateness_max_us,
            p.wakeups,
            p.late_wakeups,
            p.spun_s
        ));
        if p.timer_set_the_tail() {
            parts.push(format!(
                "{:.1}% of the wake-ups came later than the margin, so about that share of sends left late by this machine's timer, not by the target: the schedule lag's tail is the timer's (`--spin 1s` sends on time at about one core)",
                p.late_share() * 100.0
            ));
        }
        if p.contended_blocks > 0 {
            parts.push(format!(
                "{} spins lost the CPU before their deadline, so the margin was held at 50 µs in {} blocks of 64 (a busy machine: spinning there only made sends later)",
                p.overshot_spins, p.contended_blocks
            ));
        }
    }
    if let Some(a) = &run.answer_poll {
        if a.budget_cores > 0.0 {
            parts.push(format!(
                "answers polled for {:.3} s ({:.3} cores of a {}-core budget{})",
                a.polled_s,
                a.polled_cores,
                a.budget_cores,
                if a.over_budget > 0 {
                    format!(", {} windows over it", a.over_budget)
                } else {
                    String::new()
                }
            ));
        } else {
            parts.push("answers not polled for (--poll-budget 0)".into());
        }
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::pacing::{AnswerPollReport, WakeReport};

    #[test]
    fn the_line_names_the_margin_the_lateness_and_the_polling() {
        let mut run: TargetRun = serde_json::from_value(serde_json::json!({
            "target": {"url": "http://127.0.0.1:1/", "resolved": "127.0.0.1:1"},
            "scenario": "chat", "stream": false, "duration_s": 1.0, "requests": 1, "ok": 1,
            "failed": 0, "success_rate": 1.0, "achieved_rate": 1.0, "throughput": 1.0,
            "metrics": {}, "validity": {"valid": true, "reasons": []}
        }))
        .unwrap();
        assert_eq!(waiting_line(&run), None, "an old result has neither");
        run.pacer = Some(WakeReport {
            spin: "auto".into(),
            margin_us: 61.0,
            widest_margin_us: 120.0,
            wakeups: 240,
            lateness_p50_us: 30.0,
            lateness_p99_us: 57.0,
            lateness_max_us: 116.0,
            late_wakeups: 2,
            spun_s: 0.012,
            overshot_spins: 0,
            contended_blocks: 0,
        });
        run.answer_poll = Some(AnswerPollReport {
            budget_cores: 1.0,
            polled_s: 0.02,
            polled_cores: 0.02,
            ..Default::default()
        });
        let line = waiting_line(&run).unwrap();
        for part in [
            "--spin auto",
            "margin 61 µs",
            "p99 57",
            "2 past",
            "polled for 0.020 s",
        ] {
            assert!(line.contains(part), "{part} in {line}");
        }
        assert!(
            line.contains("0.8% of the wake-ups"),
            "2 of 240 set a p99: {line}"
        );
        run.pacer.as_mut().unwrap().late_wakeups = 1;
        let line = waiting_line(&run).unwrap();
        assert!(
            !line.contains("timer's"),
            "1 of 240 is under the share: {line}"
        );
        run.pacer.as_mut().unwrap().late_wakeups = 11;
        let line = waiting_line(&run).unwrap();
        assert!(line.contains("4.6% of the wake-ups"), "{line}");
        run.answer_poll.as_mut().unwrap().budget_cores = 0.0;
        assert!(waiting_line(&run).unwrap().contains("--poll-budget 0"));
    }
}
