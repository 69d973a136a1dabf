//! Ctrl-C / SIGTERM handling: the handlers only set a flag.
//!
//! Oracles poll [`flag`] and kill their process groups; the engine checks it between batches and
//! stops with [`ExitKind::Interrupted`](crate::error::ExitKind::Interrupted). Nothing else happens
//! in signal context.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static INSTALL: Once = Once::new();

extern "C" fn on_signal(_signal: libc::c_int) {
    // Only async-signal-safe work here: one atomic store.
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Install the SIGINT and SIGTERM handlers (once per process; later calls do nothing).
pub fn install() -> anyhow::Result<()> {
    let mut result = Ok(());
    INSTALL.call_once(|| {
        for signal in [libc::SIGINT, libc::SIGTERM] {
            // SAFETY: `sigaction` is given a zeroed, then filled, struct and a handler that only
            // performs an atomic store, which is async-signal-safe.
            let rc = unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
                action.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(signal, &action, std::ptr::null_mut())
            };
            if rc != 0 {
                result = Err(anyhow::anyhow!(
                    "cannot install the signal handler for signal {signal}: {}",
                    std::io::Error::last_os_error()
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
