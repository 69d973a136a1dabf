//! Ctrl-C / SIGTERM handling: the handlers only set a flag (installed with `signal-hook`).
//!
//! Process runs poll [`flag`] and kill their process groups; the engine checks it between batches
//! and stops with [`ExitKind::Interrupted`](crate::error::ExitKind::Interrupted). Nothing else
//! happens in signal context.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static INSTALL: Once = Once::new();

/// Install the SIGINT and SIGTERM handlers (once per process; later calls do nothing).
pub fn install() -> anyhow::Result<()> {
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
pub fn flag() -> &'static AtomicBool {
    &INTERRUPTED
}

/// True once SIGINT or SIGTERM has been received.
pub fn requested() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}
