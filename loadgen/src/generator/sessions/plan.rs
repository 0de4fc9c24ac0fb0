//! How a run sends its sessions: the set, the think time where a turn gives none, the bound on
//! active sessions, and the user-centric mode (a fixed number of users, one turn each per gap).

use std::sync::Arc;

use gatebench_shared::latency::Distribution;
use serde::Serialize;

use crate::generator::sessions::body::Shape;
use crate::generator::sessions::{SessionFormat, SessionSet};
use crate::results::sessions::SessionPlanRecord;

/// A run's sessions and how they are sent.
#[derive(Debug, Clone)]
pub struct SessionPlan {
    pub set: Arc<SessionSet>,
    /// Think time before a turn whose session gives none.
    pub think: Distribution,
    /// Most sessions active at once, per process.
    pub max_sessions: Option<usize>,
    /// A fixed number of users, each one turn per gap, instead of a session rate.
    pub users: Option<Users>,
    /// The API the bodies are written for (from the target's route) and their cache marks.
    pub shape: Shape,
    /// Text put before every session's first message, so one run's prompts share no prefix
    /// with another's: a comparison salts each trial of each target, so no run reads the
    /// prompt cache another warmed, whatever key a gateway swaps in.
    pub salt: Option<String>,
}

/// User-centric pacing: `count` users, each sending one turn every `gap_ns`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Users {
    pub count: usize,
    pub gap_ns: u64,
}

impl SessionPlan {
    /// These sessions salted for run `run` of trial `trial` (both from 0): the salts have one
    /// length, so every run's prompts are the same size.
    pub fn salted(&self, trial: usize, run: usize) -> SessionPlan {
        SessionPlan {
            salt: Some(format!("[run {:04}.{:03}] ", trial % 10_000, run % 1_000)),
            ..self.clone()
        }
    }

    /// The think time before turn `turn` (from 0) of session `session`: the session's own, else
    /// a draw of `--think` seeded by the run's seed, the session and the turn.
    pub fn think_us(&self, seed: u64, session: u64, turn: usize, given: Option<u64>) -> u64 {
        if let Some(us) = given {
            return us;
        }
        if self.think.is_zero() {
            return 0;
        }
        use rand::SeedableRng;
        let mixed = seed ^ session.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (turn as u64) << 48;
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(mixed);
        self.think.sample_us(&mut rng)
    }
}

impl SessionPlan {
    /// What a result says of these sessions.
    pub fn summary(&self) -> SessionPlanRecord {
        SessionPlanRecord {
            source: self.set.source.clone(),
            format: format_name(self.set.format).to_string(),
            sessions: self.set.sessions.len(),
            most_turns: self.set.most_turns(),
            crc32: self.set.crc32,
            think: self.think.to_string(),
            max_sessions: self.max_sessions,
            users: self.users.map(|u| u.count),
            turn_gap_us: self.users.map(|u| u.gap_ns / 1_000),
            cache_marks: self
                .shape
                .dialect
                .takes_marks()
                .then(|| self.shape.marks.to_string()),
        }
    }
}

fn format_name(format: SessionFormat) -> &'static str {
    match format {
        SessionFormat::Gatebench => "gatebench",
        SessionFormat::AiperfMultiTurn => "aiperf_multi_turn",
        SessionFormat::VllmConversations => "vllm_conversations",
    }
}

/// Serializes a plan's sessions as their summary.
pub fn as_summary<S: serde::Serializer>(
    plan: &Option<Arc<SessionPlan>>,
    s: S,
) -> Result<S::Ok, S::Error> {
    plan.as_ref().map(|p| p.summary()).serialize(s)
}
