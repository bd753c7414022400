//! Windows: a console control handler (`SetConsoleCtrlHandler`) for Ctrl-C,
//! Ctrl-Break and the console window closing. Windows runs it on a thread of
//! its own, so it only flips the flags the run polls. On a close, Windows ends the process
//! as soon as the handler returns (and after about 5 s in any case), so the handler holds
//! on for those 5 s: the run stops and takes back its test files meanwhile, and the
//! process ends when it is done.

use anyhow::Context;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Once};
use windows_sys::Win32::Foundation::BOOL;
use windows_sys::Win32::System::Console::{
    SetConsoleCtrlHandler, CTRL_BREAK_EVENT, CTRL_CLOSE_EVENT, CTRL_C_EVENT,
};

/// The stop flags of everything waiting for Ctrl-C.
static FLAGS: Mutex<Vec<Arc<AtomicBool>>> = Mutex::new(Vec::new());

unsafe extern "system" fn handler(event: u32) -> BOOL {
    if !matches!(event, CTRL_C_EVENT | CTRL_BREAK_EVENT | CTRL_CLOSE_EVENT) {
        return 0;
    }
    let flags = FLAGS.lock().unwrap_or_else(|e| e.into_inner());
    // A second Ctrl-C while stopping terminates at once.
    if flags.iter().any(|f| f.load(Ordering::SeqCst)) {
        std::process::exit(130);
    }
    for f in flags.iter() {
        f.store(true, Ordering::SeqCst);
    }
    drop(flags);
    if event == CTRL_CLOSE_EVENT {
        std::thread::sleep(std::time::Duration::from_secs(5));
    }
    1
}

/// Sets `stop` on Ctrl-C; a second Ctrl-C while stopping exits with 130.
pub fn on_interrupt(stop: &Arc<AtomicBool>) -> anyhow::Result<()> {
    FLAGS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(stop.clone());
    static INSTALL: Once = Once::new();
    let mut result = Ok(());
    INSTALL.call_once(|| {
        // SAFETY: a handler with the signature Windows calls.
        if unsafe { SetConsoleCtrlHandler(Some(handler), 1) } == 0 {
            result = Err(std::io::Error::last_os_error());
        }
    });
    result.context("cannot install the Ctrl-C handler")
}
