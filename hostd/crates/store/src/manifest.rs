//! `manifest.json`: what was run, where, on what, with which parameters.

use hostd_records::manifest::HostInfo;

/// Reads the host's facts.
pub fn collect_host() -> HostInfo {
    HostInfo {
        hostname: hostname::get()
            .map(|h| h.to_string_lossy().into_owned())
            .unwrap_or_default(),
        os: std::env::consts::OS.to_string(),
        kernel: uname(),
        arch: std::env::consts::ARCH.to_string(),
        cpus: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
    }
}

#[cfg(windows)]
use crate::kernel_windows::uname;

#[cfg(unix)]
fn uname() -> String {
    // SAFETY: uname fills a zeroed struct.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut u) } != 0 {
        return String::new();
    }
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|c| **c != 0)
            .map(|c| *c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    format!(
        "{} {} {}",
        field(&u.sysname),
        field(&u.release),
        field(&u.version)
    )
}
