//! The Windows version for the manifest's `kernel` field, from
//! `RtlGetVersion` (which, unlike `GetVersionExW`, does not pretend to be
//! Windows 8 to programs without a compatibility manifest).

use windows_sys::Wdk::System::SystemServices::RtlGetVersion;
use windows_sys::Win32::System::SystemInformation::OSVERSIONINFOW;

/// `Windows NT major.minor build N`, or empty if Windows does not say.
pub(crate) fn uname() -> String {
    // SAFETY: a zeroed struct with its size filled in, as the call requires.
    let mut v: OSVERSIONINFOW = unsafe { std::mem::zeroed() };
    v.dwOSVersionInfoSize = std::mem::size_of::<OSVERSIONINFOW>() as u32;
    if unsafe { RtlGetVersion(&mut v) } != 0 {
        return String::new();
    }
    format!(
        "Windows NT {}.{} build {}",
        v.dwMajorVersion, v.dwMinorVersion, v.dwBuildNumber
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_a_windows_nt_version() {
        let k = super::uname();
        assert!(k.starts_with("Windows NT "), "{k}");
        assert!(k.split(' ').nth(2).is_some_and(|v| v.contains('.')), "{k}");
    }
}
