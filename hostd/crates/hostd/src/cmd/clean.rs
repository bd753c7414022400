//! `hostd clean RUN_DIR`: removes the test files a run left on its targets because it could
//! not remove them itself (killed, power lost) or was told to keep them (`--keep`).
//!
//! Only what the run made goes: in each target directory the manifest names, its test
//! directory (`throttlescope-<run id>[-N]`, which a run creates fresh and refuses to reuse)
//! and in it the files named as a run names them (`fNNNNN.dat`, the direct-I/O probe file).
//! Anything else in the test directory stays, and then so does the directory. Running it
//! again finds nothing more to do. A run still going (its run directory locked) is refused.

use anyhow::{bail, Context};
use hostd_records::TargetInfo;
use hostd_workload::backend::{is_test_file_name, test_dir_name};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `hostd clean`.
#[derive(clap::Args)]
pub struct CleanArgs {
    /// The run directory whose test files to remove (its manifest.json names them).
    pub run_dir: PathBuf,
}

/// What was done on one target.
#[derive(Debug, Default, PartialEq)]
struct Cleaned {
    removed: usize,
    left: Vec<String>,
    dir_removed: bool,
}

/// Runs `hostd clean`: exit 0 when every test file is gone, 1 when some could not go or
/// other files kept a test directory.
pub fn execute(args: CleanArgs) -> anyhow::Result<ExitCode> {
    let m = hostd_records::manifest::read(&args.run_dir)?;
    if hostd_store::rundir::is_in_use(&args.run_dir) {
        bail!(
            "{}: the run is still going (its run directory is in use); stop it first",
            args.run_dir.display()
        );
    }
    // A resumed certify session works in the test directories of the run it continues.
    let run_id = m.run_id.split("-resume-").next().unwrap_or(&m.run_id);
    let mut complete = true;
    for (i, t) in m.targets.iter().enumerate() {
        let Some(dir) = test_dir(t, run_id, i)? else {
            outln!(
                "target {}: no test directory ({} target): nothing to remove",
                t.label,
                t.scheme
            );
            continue;
        };
        let c = clean_dir(&dir)?;
        match (c.removed, c.dir_removed, c.left.is_empty()) {
            (_, false, true) if !dir.exists() && c.removed == 0 => outln!(
                "target {}: {} is already gone: nothing to remove",
                t.label,
                dir.display()
            ),
            (n, true, _) => outln!(
                "target {}: removed {n} test file(s) and {}",
                t.label,
                dir.display()
            ),
            (n, false, _) => {
                complete = false;
                outln!(
                    "target {}: removed {n} test file(s); kept {} because it holds files no run made: {}",
                    t.label,
                    dir.display(),
                    c.left.join(", ")
                );
            }
        }
    }
    Ok(if complete {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The test directory of target `t` (index `i`) of run `run_id`, checked against the name
/// a run gives it; `None` for a target without one (a raw device, a simulated target).
fn test_dir(t: &TargetInfo, run_id: &str, i: usize) -> anyhow::Result<Option<PathBuf>> {
    let Some(dir) = t.test_dir.as_deref() else {
        return Ok(None);
    };
    let dir = PathBuf::from(dir);
    let want = test_dir_name(run_id, i);
    let name_ok = dir.file_name().and_then(|n| n.to_str()) == Some(want.as_str());
    let parent_ok = dir.parent() == Some(Path::new(&t.path));
    if !name_ok || !parent_ok {
        bail!(
            "target {}: the manifest's test directory {} is not {}/{want}, the one this run \
             would have made; nothing removed",
            t.label,
            dir.display(),
            t.path
        );
    }
    if dir.is_relative() && !dir.exists() {
        bail!(
            "target {}: the manifest names the test directory {} relative to where the run \
             started; run hostd clean from there",
            t.label,
            dir.display()
        );
    }
    Ok(Some(dir))
}

/// Removes the test files in `dir`, then `dir` if that emptied it.
fn clean_dir(dir: &Path) -> anyhow::Result<Cleaned> {
    let mut c = Cleaned::default();
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(c),
        Err(e) => return Err(e).with_context(|| format!("cannot list {}", dir.display())),
    };
    for e in entries {
        let e = e.with_context(|| format!("cannot list {}", dir.display()))?;
        let name = e.file_name().to_string_lossy().into_owned();
        let is_file = e.file_type().map(|t| t.is_file()).unwrap_or(false);
        if is_file && is_test_file_name(&name) {
            match std::fs::remove_file(e.path()) {
                Ok(()) => c.removed += 1,
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => {
                    return Err(err)
                        .with_context(|| format!("cannot remove {}", e.path().display()))
                }
            }
        } else {
            c.left.push(name);
        }
    }
    c.left.sort();
    if c.left.is_empty() {
        std::fs::remove_dir(dir).with_context(|| format!("cannot remove {}", dir.display()))?;
        c.dir_removed = true;
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Test files go; a file someone else put beside them stays, and so does the directory.
    #[test]
    fn only_test_files_are_removed() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("throttlescope-R");
        std::fs::create_dir(&dir).unwrap();
        for n in ["f00000.dat", "f00001.dat", "notes.txt"] {
            std::fs::write(dir.join(n), n).unwrap();
        }
        let c = clean_dir(&dir).unwrap();
        assert_eq!(c.removed, 2);
        assert_eq!(c.left, vec!["notes.txt".to_string()]);
        assert!(!c.dir_removed);
        assert_eq!(std::fs::read(dir.join("notes.txt")).unwrap(), b"notes.txt");
        // Again: nothing more to remove; without the stranger the directory goes too.
        assert_eq!(clean_dir(&dir).unwrap().removed, 0);
        std::fs::remove_file(dir.join("notes.txt")).unwrap();
        assert!(clean_dir(&dir).unwrap().dir_removed);
        assert!(!dir.exists());
        assert_eq!(clean_dir(&dir).unwrap(), Cleaned::default());
    }

    /// A manifest whose test directory is not the one the run would make is refused.
    #[test]
    fn a_foreign_test_directory_is_refused() {
        let t = TargetInfo {
            label: "t".into(),
            scheme: "dir".into(),
            path: "/mnt/x".into(),
            test_dir: Some("/mnt/x/important".into()),
            ..serde_json::from_value(serde_json::json!({
                "label": "t", "scheme": "dir", "mode": "rw", "path": "/mnt/x",
                "direct_io": {"status": "direct"}, "engine": "io_uring"
            }))
            .unwrap()
        };
        let e = test_dir(&t, "R", 0).unwrap_err().to_string();
        assert!(e.contains("throttlescope-R"), "{e}");
        let ok = TargetInfo {
            test_dir: Some("/mnt/x/throttlescope-R-1".into()),
            ..t
        };
        assert_eq!(
            test_dir(&ok, "R", 1).unwrap(),
            Some(PathBuf::from("/mnt/x/throttlescope-R-1"))
        );
    }
}
