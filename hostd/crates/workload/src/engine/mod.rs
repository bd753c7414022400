//! I/O engines as a table of operations (after fio's `ioengine_ops`): queue,
//! commit, reap. The job loop ([`crate::jobloop`]) drives any engine the same
//! way, so every workload runs on every engine. Each engine is one file, declared below and
//! registered once in [`ENGINES`] (its names, the OS it runs on, how to open it):
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

/// Opens an engine for a queue depth.
pub type OpenFn = fn(usize) -> io::Result<Box<dyn IoEngine>>;

/// One I/O engine of this build: its names and how to open it. [`ENGINES`] lists them all;
/// `--engine`, its help, the automatic choice and [`open`] read that list.
#[derive(Debug)]
pub struct Engine {
    /// Its name on the command line (`--engine`).
    pub name: &'static str,
    /// Other names `--engine` takes for it (fio's, e.g. `psync`).
    pub aliases: &'static [&'static str],
    /// What the automatic choice calls it when it cannot open it ("io_uring unavailable").
    pub title: &'static str,
    /// The one OS it runs on, where the automatic choice prefers it; `None`: it runs
    /// everywhere and is the automatic choice's fallback.
    pub only_on: Option<&'static str>,
    /// Why it cannot open in a build for another OS.
    pub elsewhere: &'static str,
    /// Opens it for `queue_depth` I/Os in flight; `None` in a build for another OS.
    pub open: Option<OpenFn>,
}

/// Every I/O engine: the automatic choice takes the first native one (with an OS) that runs
/// on this OS and opens, else the last, which must run everywhere.
pub const ENGINES: &[Engine] = &[
    Engine {
        name: "io_uring",
        aliases: &["io-uring", "uring"],
        title: "io_uring",
        only_on: Some("Linux"),
        elsewhere: "io_uring exists only on Linux",
        #[cfg(target_os = "linux")]
        open: Some(|qd| Ok(Box::new(uring::Uring::new(qd)?))),
        #[cfg(not(target_os = "linux"))]
        open: None,
    },
    Engine {
        name: "iocp",
        aliases: &["windowsaio"],
        title: "I/O completion port",
        only_on: Some("Windows"),
        elsewhere: "I/O completion ports exist only on Windows",
        #[cfg(windows)]
        open: Some(|qd| Ok(Box::new(iocp::Iocp::new(qd)?))),
        #[cfg(not(windows))]
        open: None,
    },
    Engine {
        name: "threads",
        aliases: &["psync"],
        title: "threads",
        only_on: None,
        elsewhere: "",
        open: Some(|qd| Ok(Box::new(threads::Threads::new(qd)))),
    },
];

impl Engine {
    /// The engine named `name` (or one of its aliases).
    pub fn named(name: &str) -> Option<&'static Engine> {
        ENGINES
            .iter()
            .find(|e| e.name == name || e.aliases.contains(&name))
    }

    /// Opens it for `queue_depth` I/Os in flight (an error in a build for another OS).
    pub fn open(&self, queue_depth: usize) -> io::Result<Box<dyn IoEngine>> {
        match self.open {
            Some(open) => open(queue_depth),
            None => Err(io::Error::new(io::ErrorKind::Unsupported, self.elsewhere)),
        }
    }

    /// Whether this build has it (it runs on this OS).
    pub fn is_built(&self) -> bool {
        self.open.is_some()
    }
}

/// Which engine to use.
#[derive(Debug, Clone, Copy, Default)]
pub enum EngineChoice {
    /// The first engine of [`ENGINES`] for this OS that opens (io_uring on Linux, an I/O
    /// completion port on Windows), else the portable one.
    #[default]
    Auto,
    /// This engine only (an error if it does not open).
    Named(&'static Engine),
}

impl PartialEq for EngineChoice {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}

impl Eq for EngineChoice {}

impl EngineChoice {
    /// `auto` or the engine's name.
    pub fn name(&self) -> &'static str {
        match self {
            EngineChoice::Auto => "auto",
            EngineChoice::Named(e) => e.name,
        }
    }

    /// What `--engine` takes: "auto, io_uring, iocp, threads".
    pub fn names() -> String {
        let names: Vec<&str> = ENGINES.iter().map(|e| e.name).collect();
        format!("auto, {}", names.join(", "))
    }

    /// What `--engine` takes, with what `auto` chooses: "auto (io_uring on Linux, iocp on
    /// Windows, else threads), io_uring, iocp, threads".
    pub fn described() -> String {
        let fallback = ENGINES.last().expect("an engine that runs everywhere");
        let auto: Vec<String> = ENGINES
            .iter()
            .filter_map(|e| Some(format!("{} on {}", e.name, e.only_on?)))
            .chain([format!("else {}", fallback.name)])
            .collect();
        let names: Vec<&str> = ENGINES.iter().map(|e| e.name).collect();
        format!("auto ({}), {}", auto.join(", "), names.join(", "))
    }
}

impl std::str::FromStr for EngineChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s == "auto" {
            return Ok(EngineChoice::Auto);
        }
        Engine::named(s)
            .map(EngineChoice::Named)
            .ok_or_else(|| format!("unknown engine `{s}` ({})", EngineChoice::names()))
    }
}

/// Opens an engine for `queue_depth` I/Os in flight. The string says why the
/// automatic choice fell back, if it did.
pub fn open(
    choice: EngineChoice,
    queue_depth: usize,
) -> io::Result<(Box<dyn IoEngine>, Option<String>)> {
    if let EngineChoice::Named(e) = choice {
        return e.open(queue_depth).map(|e| (e, None));
    }
    let fallback = ENGINES.last().expect("an engine that runs everywhere");
    let native: Vec<&Engine> = ENGINES.iter().filter(|e| e.only_on.is_some()).collect();
    let unavailable = |e: &Engine, err: &dyn std::fmt::Display| {
        format!("{} unavailable ({err}); using {}", e.title, fallback.name)
    };
    let mut why = None;
    for e in native.iter().filter(|e| e.is_built()) {
        match e.open(queue_depth) {
            Ok(engine) => return Ok((engine, None)),
            Err(err) => {
                why.get_or_insert_with(|| unavailable(e, &err));
            }
        }
    }
    // No native engine in this build (macOS): say which the choice would have taken.
    if !native.iter().any(|e| e.is_built()) {
        why = native.first().map(|e| unavailable(e, &e.elsewhere));
    }
    fallback.open(queue_depth).map(|e| (e, why))
}

/// Checks once whether io_uring can be used here (kernel, seccomp, sysctl).
pub fn probe_io_uring() -> Result<(), String> {
    let uring = Engine::named("io_uring").expect("registered");
    uring.open(1).map(|_| ()).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_engine_has_its_own_names_and_the_last_runs_everywhere() {
        let mut names: Vec<&str> = ENGINES
            .iter()
            .flat_map(|e| std::iter::once(e.name).chain(e.aliases.iter().copied()))
            .collect();
        let n = names.len();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), n, "a name taken twice: {names:?}");
        assert!(!names.contains(&"auto"));
        let last = ENGINES.last().unwrap();
        assert!(last.only_on.is_none() && last.is_built());
        assert!(ENGINES
            .iter()
            .all(|e| e.only_on.is_none() || !e.elsewhere.is_empty()));
    }

    #[test]
    fn engine_choices_parse_by_name_and_alias() {
        for e in ENGINES {
            for name in std::iter::once(e.name).chain(e.aliases.iter().copied()) {
                let c: EngineChoice = name.parse().unwrap();
                assert_eq!(c.name(), e.name);
            }
        }
        assert_eq!("auto".parse::<EngineChoice>(), Ok(EngineChoice::Auto));
        // Every registered engine is named, in order, with what `auto` takes where.
        let names: Vec<&str> = ENGINES.iter().map(|e| e.name).collect();
        let err = "fio".parse::<EngineChoice>().unwrap_err();
        assert_eq!(
            err,
            format!("unknown engine `fio` (auto, {})", names.join(", "))
        );
        let described = EngineChoice::described();
        assert!(
            described.starts_with("auto (io_uring on Linux, iocp on Windows, ")
                && described.ends_with(&format!("else threads), {}", names.join(", "))),
            "{described}"
        );
    }

    #[test]
    fn the_automatic_choice_opens_this_builds_native_engine_or_says_why_not() {
        let (engine, why) = open(EngineChoice::Auto, 2).unwrap();
        let native = ENGINES.iter().find(|e| e.only_on.is_some() && e.is_built());
        match why {
            None => assert_eq!(Some(engine.name()), native.map(|e| e.name)),
            Some(why) => {
                assert_eq!(engine.name(), "threads");
                assert!(why.ends_with("; using threads"), "{why}");
            }
        }
        #[cfg(target_os = "linux")]
        assert_eq!(
            open("iocp".parse().unwrap(), 1).err().unwrap().to_string(),
            "I/O completion ports exist only on Windows"
        );
    }
}
