//! Windows: `GetProcessTimes` (user and kernel time of all the process's
//! threads, in 100 ns units).

use windows_sys::Win32::Foundation::FILETIME;
use windows_sys::Win32::System::Threading::{GetCurrentProcess, GetProcessTimes};

/// (user, system) CPU seconds of the process so far; zeros if Windows does not say.
pub fn process_cpu_seconds() -> (f64, f64) {
    let zero = FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    let (mut created, mut exited, mut kernel, mut user) = (zero, zero, zero, zero);
    // SAFETY: the pseudo-handle of this process and four out pointers.
    let ok = unsafe {
        GetProcessTimes(
            GetCurrentProcess(),
            &mut created,
            &mut exited,
            &mut kernel,
            &mut user,
        )
    };
    if ok == 0 {
        return (0.0, 0.0);
    }
    let secs = |t: FILETIME| {
        ((u64::from(t.dwHighDateTime) << 32) | u64::from(t.dwLowDateTime)) as f64 / 1e7
    };
    (secs(user), secs(kernel))
}

#[cfg(test)]
mod tests {
    #[test]
    fn cpu_time_grows_with_work() {
        let (u0, s0) = super::process_cpu_seconds();
        let t = std::time::Instant::now();
        let mut x = 0u64;
        while t.elapsed() < std::time::Duration::from_millis(200) {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        let (u1, s1) = super::process_cpu_seconds();
        assert!(
            u1 + s1 > u0 + s0,
            "no CPU time counted for 200 ms of spinning"
        );
    }
}
