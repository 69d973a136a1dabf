//! Ctrl-C / SIGTERM handling: the handlers only set a flag (installed with `signal-hook`).
//!
//! Process runs poll [`flag`] and kill their process groups; the engine checks it between batches
//! and stops with [`ExitKind::Interrupted`](crate::error::ExitKind::Interrupted). Nothing else
//! happens in signal context.
//!
//! For end-to-end tests of that path, `MFPPR_TEST_STOP_AT_POLL=N` makes the `N`-th call of
//! [`requested`] stop the process (`SIGSTOP`) before it reads the flag: a test sends its signal
//! while the process is stopped, then `SIGCONT`, so the signal always lands at the same point of
//! the run (a signal raced against a fast run may arrive after it ended). Unset, nothing changes.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Once, OnceLock};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static INSTALL: Once = Once::new();

/// Install the SIGINT and SIGTERM handlers (once per process; later calls do nothing).
pub(crate) fn install() -> anyhow::Result<()> {
    let mut result = Ok(());
    INSTALL.call_once(|| {
        for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            if let Err(e) = signal_hook::flag::register(signal, &INTERRUPTED) {
                result = Err(anyhow::anyhow!(
                    "cannot install the handler for signal {signal}: {e}"
                ));
            }
        }
    });
    result
}

/// The process-wide "interrupted" flag, set by SIGINT / SIGTERM once [`install`] has run.
pub(crate) fn flag() -> &'static AtomicBool {
    &INTERRUPTED
}

/// True once SIGINT or SIGTERM has been received.
pub(crate) fn requested() -> bool {
    stop_at_test_poll();
    INTERRUPTED.load(Ordering::SeqCst)
}

/// The test hook of the module docs: stop at the `MFPPR_TEST_STOP_AT_POLL`-th poll.
fn stop_at_test_poll() {
    static STOP_AT: OnceLock<Option<usize>> = OnceLock::new();
    static POLLS: AtomicUsize = AtomicUsize::new(0);
    let stop_at = STOP_AT.get_or_init(|| {
        std::env::var("MFPPR_TEST_STOP_AT_POLL")
            .ok()
            .and_then(|n| n.parse().ok())
    });
    if let Some(n) = *stop_at {
        if POLLS.fetch_add(1, Ordering::SeqCst) + 1 == n {
            let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGSTOP);
            // The test's signal may be handled on another thread a moment after SIGCONT: give
            // it up to a second to land, so the poll below always sees it.
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
            while !INTERRUPTED.load(Ordering::SeqCst) && std::time::Instant::now() < deadline {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
    }
}
