//! The process-wide stop: Ctrl-C or SIGTERM asks the run to stop sending, a second signal to
//! stop waiting for the requests in flight.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, OnceLock};

use crate::generator::worker::Progress;

static STOP: OnceLock<Arc<Progress>> = OnceLock::new();

/// The process-wide stop flag, set by Ctrl-C or SIGTERM (watched from a thread started once);
/// a second signal sets `abandon`, to stop waiting for the requests in flight.
pub(crate) fn stop_flag() -> Arc<Progress> {
    STOP.get_or_init(|| {
        let progress = Arc::new(Progress::default());
        let flag = progress.clone();
        // The signals are registered before this returns, so one sent at any moment after is
        // a stop, never the default action.
        let Ok(rt) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            return progress;
        };
        let signals = {
            use tokio::signal::unix::{signal, SignalKind};
            let _entered = rt.enter();
            (
                signal(SignalKind::interrupt()),
                signal(SignalKind::terminate()),
            )
        };
        let (Ok(mut int), Ok(mut term)) = signals else {
            return progress;
        };
        let _ = std::thread::Builder::new()
            .name("loadgen-signals".into())
            .spawn(move || {
                rt.block_on(async move {
                    for (flag, said) in [(&flag.stop, STOPPING), (&flag.abandon, ABANDONING)] {
                        tokio::select! {
                            _ = int.recv() => {}
                            _ = term.recv() => {}
                        }
                        flag.store(true, Relaxed);
                        eprintln!("{said}");
                    }
                });
            });
        progress
    })
    .clone()
}

/// Said on stderr when the first signal is taken.
pub const STOPPING: &str =
    "loadgen: stopping: no new requests; waiting for those in flight (again to stop waiting)";
/// Said on stderr when the second signal is taken.
pub const ABANDONING: &str = "loadgen: stopping now: no longer waiting for requests in flight";

/// Whether Ctrl-C or SIGTERM has asked the process to stop.
pub(crate) fn stop_requested() -> bool {
    STOP.get().is_some_and(|p| p.stop.load(Relaxed))
}
