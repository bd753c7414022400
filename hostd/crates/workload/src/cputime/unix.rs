//! Unix: `getrusage(RUSAGE_SELF)`.

/// (user, system) CPU seconds of the process so far.
pub fn process_cpu_seconds() -> (f64, f64) {
    // SAFETY: getrusage fills a zeroed struct.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (tv(u.ru_utime), tv(u.ru_stime))
}
