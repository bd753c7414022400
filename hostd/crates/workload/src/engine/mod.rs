//! I/O engines as a table of operations (after fio's `ioengine_ops`): queue,
//! commit, reap. The job loop ([`crate::jobloop`]) drives any engine the same
//! way, so every workload runs on every engine.
//!
//! - `uring.rs`: io_uring (Linux), one ring per job, no extra threads.
//! - `iocp.rs`: overlapped I/O on an I/O completion port (Windows).
//! - `threads.rs`: portable; `queue_depth` worker threads doing pread/pwrite.

#[cfg(windows)]
mod iocp;
mod threads;
#[cfg(target_os = "linux")]
mod uring;

use serde::Serialize;
use std::io;
use std::time::Instant;

/// An open file as the engines take it: a descriptor on Unix.
#[cfg(unix)]
pub type RawFile = std::os::unix::io::RawFd;
/// An open file as the engines take it: a handle on Windows.
#[cfg(windows)]
pub type RawFile = std::os::windows::io::RawHandle;

/// No file: for engines in tests that never touch one.
#[cfg(all(test, unix))]
pub(crate) const NO_FILE: RawFile = -1;
/// No file: for engines in tests that never touch one.
#[cfg(all(test, windows))]
pub(crate) const NO_FILE: RawFile = std::ptr::null_mut();

/// The raw descriptor or handle of `file` (still owned by `file`).
pub fn raw_file(file: &std::fs::File) -> RawFile {
    #[cfg(unix)]
    return std::os::unix::io::AsRawFd::as_raw_fd(file);
    #[cfg(windows)]
    return std::os::windows::io::AsRawHandle::as_raw_handle(file);
}

/// One I/O to perform. The buffer belongs to the job loop's slot `slot` and
/// stays valid and untouched until its completion is reaped.
#[derive(Debug, Clone, Copy)]
pub struct IoRequest {
    /// Slot number, returned in the completion.
    pub slot: usize,
    /// Open file.
    pub fd: RawFile,
    /// Byte offset in the file.
    pub offset: u64,
    /// Buffer start.
    pub buf: *mut u8,
    /// Bytes.
    pub len: usize,
    /// Write (true) or read.
    pub write: bool,
}

// The pointer refers to a buffer the job loop keeps alive until completion.
unsafe impl Send for IoRequest {}

/// A finished I/O.
#[derive(Debug)]
pub struct IoCompletion {
    /// Slot of the request.
    pub slot: usize,
    /// Bytes transferred, or the error.
    pub result: io::Result<usize>,
    /// When the I/O finished, where the engine saw it finish before handing
    /// the completion over (a worker thread); `None`: when it was reaped.
    pub completed_at: Option<Instant>,
    /// When the I/O began, where the engine's own worker began it (just
    /// before its `pread`/`pwrite`: a worker may start it before the job
    /// loop's stamp after the hand-over); `None`: that stamp stands.
    pub issued_at: Option<Instant>,
}

/// The operations every engine provides.
pub trait IoEngine: Send {
    /// Engine name as recorded in the manifest (`io_uring`, `threads`).
    fn name(&self) -> &'static str;
    /// Queues one request (not yet submitted).
    fn queue(&mut self, req: IoRequest) -> io::Result<()>;
    /// Submits everything queued.
    fn commit(&mut self) -> io::Result<()>;
    /// Waits until at least `min` completions are available and appends them.
    fn reap(&mut self, min: usize, out: &mut Vec<IoCompletion>) -> io::Result<()>;
    /// Called before a job's first I/O with the file and the job's buffers
    /// (slot `i` owns `bufs[i]`, which stays allocated until [`IoEngine::end_job`]).
    /// Engines that can pre-register them with the kernel do, so that no
    /// I/O has to look up the file or pin the buffer's pages again.
    fn begin_job(&mut self, _fd: RawFile, _bufs: &[(*mut u8, usize)]) -> io::Result<()> {
        Ok(())
    }
    /// Called after a job's last completion has been reaped: undoes
    /// [`IoEngine::begin_job`]. Not called after an engine failure; the
    /// engine is then dropped instead.
    fn end_job(&mut self) {}
    /// How many of the requests queued so far the engine has not yet handed
    /// to the kernel or its workers (the newest ones): the job loop stamps an
    /// I/O's issue time when it leaves this count.
    fn unsubmitted(&self) -> usize;
    /// Whether a wait may ask for completions without sleeping before it
    /// sleeps (`--poll`; engines that never poll ignore it). Off, the
    /// default, a wait sleeps in the kernel at once, as fio's io_uring engine
    /// does by default, so that QD1 figures mean what fio's mean.
    fn set_polling(&mut self, _on: bool) {}
    /// How the engine's waits for completions have ended so far.
    fn wait_counts(&self) -> WaitCounts {
        WaitCounts::default()
    }
}

/// How the waits of [`IoEngine::reap`] ended, counted by the engine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct WaitCounts {
    /// Enough completions were there already: no wait.
    pub ready: u64,
    /// Ended by polling: a completion came while the engine asked without
    /// sleeping (only with polling on).
    pub spun: u64,
    /// Ended asleep in the kernel until a completion came (after a poll
    /// that found nothing, with polling on).
    pub slept: u64,
    /// Waits that polled at all (found something or not).
    pub polled: u64,
}

impl WaitCounts {
    /// The sum of two engines' counts.
    pub fn add(&mut self, o: WaitCounts) {
        self.ready += o.ready;
        self.spun += o.spun;
        self.slept += o.slept;
        self.polled += o.polled;
    }
}

/// Which engine to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum EngineChoice {
    /// io_uring where it works (Linux), an I/O completion port on Windows, else threads.
    #[default]
    Auto,
    /// io_uring only (error if unavailable).
    IoUring,
    /// Overlapped I/O on an I/O completion port (Windows only).
    Iocp,
    /// Portable threads.
    Threads,
}

impl std::str::FromStr for EngineChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(EngineChoice::Auto),
            "io_uring" | "io-uring" | "uring" => Ok(EngineChoice::IoUring),
            "threads" | "psync" => Ok(EngineChoice::Threads),
            "iocp" | "windowsaio" => Ok(EngineChoice::Iocp),
            other => Err(format!(
                "unknown engine `{other}` (auto, io_uring, iocp, threads)"
            )),
        }
    }
}

/// Opens an engine for `queue_depth` I/Os in flight. The string says why the
/// automatic choice fell back, if it did.
pub fn open(
    choice: EngineChoice,
    queue_depth: usize,
) -> io::Result<(Box<dyn IoEngine>, Option<String>)> {
    match choice {
        EngineChoice::Threads => Ok((Box::new(threads::Threads::new(queue_depth)), None)),
        EngineChoice::IoUring => open_uring(queue_depth).map(|e| (e, None)),
        EngineChoice::Iocp => open_iocp(queue_depth).map(|e| (e, None)),
        EngineChoice::Auto => {
            #[cfg(windows)]
            let (native, what) = (open_iocp(queue_depth), "I/O completion port");
            #[cfg(not(windows))]
            let (native, what) = (open_uring(queue_depth), "io_uring");
            match native {
                Ok(e) => Ok((e, None)),
                Err(err) => Ok((
                    Box::new(threads::Threads::new(queue_depth)),
                    Some(format!("{what} unavailable ({err}); using threads")),
                )),
            }
        }
    }
}

#[cfg(windows)]
fn open_iocp(queue_depth: usize) -> io::Result<Box<dyn IoEngine>> {
    Ok(Box::new(iocp::Iocp::new(queue_depth)?))
}

#[cfg(not(windows))]
fn open_iocp(_queue_depth: usize) -> io::Result<Box<dyn IoEngine>> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "I/O completion ports exist only on Windows",
    ))
}

#[cfg(target_os = "linux")]
fn open_uring(queue_depth: usize) -> io::Result<Box<dyn IoEngine>> {
    Ok(Box::new(uring::Uring::new(queue_depth)?))
}

#[cfg(not(target_os = "linux"))]
fn open_uring(_queue_depth: usize) -> io::Result<Box<dyn IoEngine>> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "io_uring exists only on Linux",
    ))
}

/// Checks once whether io_uring can be used here (kernel, seccomp, sysctl).
pub fn probe_io_uring() -> Result<(), String> {
    open_uring(1).map(|_| ()).map_err(|e| e.to_string())
}
