//! How smartctl is asked: which program (`THROTTLESCOPE_SMARTCTL` or `smartctl` on PATH),
//! which USB bridge types to try, and one call with a time limit. What an answer says is [`super::parse`]'s.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// USB bridge types smartctl may need spelled out when it cannot tell (`-d TYPE`).
pub const BRIDGE_TYPES: [&str; 4] = ["sntjmicron", "sntrealtek", "sntasmedia", "sat"];

/// What smartctl says of a disk it has no way to ask (a paravirtual disk).
pub(crate) const NO_DEVICE_TYPE: &str = "Unable to detect device type";
/// How a note begins its reason when the disk has no SMART by design.
pub const NO_SMART: &str = "which has no SMART";

/// The smartctl to run: `THROTTLESCOPE_SMARTCTL` if set (another build, or a script that
/// replays recorded answers), else `smartctl` from PATH.
pub fn smartctl_program() -> PathBuf {
    std::env::var_os("THROTTLESCOPE_SMARTCTL")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("smartctl"))
}

/// What kind of virtual disk `disk` (a whole disk, `/dev/NAME`) is, when it is one: a
/// paravirtual block device (virtio-blk `vdX`, Xen `xvdX`) has no SMART to ask, so its
/// missing temperature is a fact of the machine, not something to fix.
pub fn virtual_disk(disk: &str) -> Option<&'static str> {
    let name = disk.strip_prefix("/dev/")?;
    let rest = |prefix: &str| {
        name.strip_prefix(prefix)
            .is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_lowercase()))
    };
    if rest("xvd") {
        Some("a Xen virtual disk")
    } else if rest("vd") {
        Some("a virtio virtual disk")
    } else {
        None
    }
}

/// One `smartctl --json -A [EXTRA…] [-d TYPE] DISK` call: the parsed JSON, or why there is
/// none (a missing smartctl says so in words that contain "not installed").
pub(crate) fn json(
    smartctl: &Path,
    extra: &[&str],
    device_type: Option<&str>,
    disk: &str,
    timeout: Duration,
) -> Result<Value, String> {
    let mut args = vec!["--json", "-A"];
    args.extend(extra);
    if let Some(t) = device_type {
        args.extend(["-d", t]);
    }
    args.push(disk);
    match run_with_timeout(smartctl, &args, timeout) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(format!(
            "{} is not installed (apt install smartmontools)",
            smartctl.display()
        )),
        Err(e) => Err(format!("smartctl failed: {e}")),
        Ok(out) => serde_json::from_slice::<Value>(&out)
            .map_err(|_| "smartctl printed no JSON".to_string()),
    }
}

/// One `smartctl -A [-d TYPE] DISK` call without `--json`: its text output, if it ran.
pub(crate) fn text(
    smartctl: &Path,
    device_type: Option<&str>,
    disk: &str,
    timeout: Duration,
) -> Option<String> {
    let mut args = vec!["-A"];
    if let Some(t) = device_type {
        args.extend(["-d", t]);
    }
    args.push(disk);
    let out = run_with_timeout(smartctl, &args, timeout).ok()?;
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// Runs `program` with `args` and returns its standard output; a program still running at
/// `timeout` is killed and the call fails.
fn run_with_timeout(program: &Path, args: &[&str], timeout: Duration) -> std::io::Result<Vec<u8>> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stdout, &mut buf);
        buf
    });
    let deadline = Instant::now() + timeout;
    loop {
        if child.try_wait()?.is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "smartctl timed out",
            ));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(reader.join().unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paravirtual_disks_are_told_from_real_ones_by_name() {
        assert_eq!(virtual_disk("/dev/vda"), Some("a virtio virtual disk"));
        assert_eq!(virtual_disk("/dev/xvdb"), Some("a Xen virtual disk"));
        for real in [
            "/dev/sda",
            "/dev/nvme0n1",
            "/dev/vd",
            "/dev/vda1",
            "vda",
            "/dev/loop0",
        ] {
            assert_eq!(virtual_disk(real), None, "{real}");
        }
    }
}
