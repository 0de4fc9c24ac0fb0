//! The gateway's CPU in its own (unprobed) runs' measured windows, for the modeled cost.

use std::time::Instant;

use crate::engine::run::Window;
use crate::engine::sampler;

/// The gateway's CPU in its own (unprobed) measured windows: seconds used over seconds elapsed.
pub struct GatewayCpu {
    pid: u32,
    open: Option<(Instant, f64)>,
    pub cpu_s: f64,
    pub wall_s: f64,
}

impl GatewayCpu {
    pub fn new(pid: u32) -> GatewayCpu {
        GatewayCpu {
            pid,
            open: None,
            cpu_s: 0.0,
            wall_s: 0.0,
        }
    }

    pub fn window(&mut self, w: Window) {
        let now = || sampler::read(&sampler::Source::Pid(self.pid)).map(|(cpu, _)| cpu);
        match w {
            Window::Opened => self.open = now().map(|cpu| (Instant::now(), cpu)),
            Window::Closed => {
                if let (Some((at, before)), Some(after)) = (self.open.take(), now()) {
                    self.cpu_s += after - before;
                    self.wall_s += at.elapsed().as_secs_f64();
                }
            }
            Window::Starting | Window::Finished => {}
        }
    }

    /// Mean cores over the windows; `None` before any.
    pub fn cores(&self) -> Option<f64> {
        (self.wall_s > 0.0).then(|| self.cpu_s / self.wall_s)
    }
}
