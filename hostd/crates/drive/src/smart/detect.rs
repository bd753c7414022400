//! How a drive answers smartctl, found once per target: directly (NVMe, SATA, the bridges
//! smartctl knows), then through each USB bridge type. The poller does this before its
//! first poll; a run that cannot start without a drive's temperature (a drive gate, a
//! steady-state temperature criterion) asks the same before anything is written
//! ([`check`]).

use super::parse::Answer;
use super::poll::PollerConfig;
use super::smartctl::{self, virtual_disk, BRIDGE_TYPES, NO_DEVICE_TYPE, NO_SMART};
use hostd_records::link::LinkInfo;
use hostd_records::TargetInfo;

/// How a drive answered detection.
#[derive(Debug, Clone, PartialEq)]
pub struct Detected {
    /// `-d` type that worked (None: smartctl's own choice).
    pub device_type: Option<String>,
    /// Field the temperature came from.
    pub field: String,
    /// The drive's model, when smartctl names it.
    pub model: Option<String>,
    /// The drive speaks ATA (its thermal record is the SCT status, asked with `-l scttemp`).
    pub ata: bool,
    /// An NVMe drive read by a smartctl whose JSON has no thermal management counters: they
    /// are read from its text output as well.
    pub tmt_text: bool,
}

/// Finds how `disk` answers: directly, then through each bridge type (asking `-i` too, for
/// the model). Ok(how), or what smartctl said when asked directly.
pub fn detect(config: &PollerConfig, disk: &str) -> Result<Detected, String> {
    let mut first: Option<String> = None;
    for t in std::iter::once(None).chain(BRIDGE_TYPES.iter().map(|t| Some(*t))) {
        let why = match smartctl::json(&config.smartctl, &["-i"], t, disk, config.timeout) {
            Err(e) if e.contains("not installed") => return Err(e),
            Err(e) => e,
            Ok(json) => {
                let answer = Answer::of(&json);
                match answer.temperature {
                    Some((_, field)) => {
                        return Ok(Detected {
                            device_type: t.map(str::to_string),
                            field: field.to_string(),
                            model: answer.model,
                            ata: answer.ata,
                            tmt_text: answer.tmt_only_in_text,
                        })
                    }
                    None => answer.messages.unwrap_or_else(|| {
                        format!(
                            "no temperature (smartctl exit status {})",
                            json["smartctl"]["exit_status"].as_i64().unwrap_or(-1)
                        )
                    }),
                }
            }
        };
        first.get_or_insert(why);
    }
    Err(format!(
        "{}; no -d bridge type answered",
        first.unwrap_or_default()
    ))
}

/// Why a drive gives no temperature, from what [`detect`] said of `disk`: the reason
/// (naming the disk), and the kind of virtual disk when that is why (a paravirtual disk has
/// no SMART to ask: said, not warned about).
pub fn why_not(disk: &str, why: String) -> (String, Option<&'static str>) {
    let why = if why.starts_with(disk) {
        why
    } else {
        format!("{disk}: {why}")
    };
    // smartctl finds no device type at all: the disk has no SMART interface.
    let by_design = virtual_disk(disk).filter(|_| why.contains(NO_DEVICE_TYPE));
    (why, by_design)
}

/// The note of a drive that gives no temperature, from [`why_not`].
pub fn note((why, by_design): (String, Option<&'static str>)) -> String {
    match by_design {
        Some(kind) => format!("{kind}, {NO_SMART}: {why}"),
        None => why,
    }
}

/// What a target that the poller does not ask gives instead of a reading.
pub fn not_polled(device: Option<&str>) -> String {
    format!(
        "target is not on a block device ({}); no SMART",
        device.unwrap_or("unknown")
    )
}

/// The drive the poller asks about for a target on `link`: None when the target is on no
/// physical link (a simulated drive, tmpfs), else its whole disk if it has one.
pub fn polled_disk(link: Option<&LinkInfo>) -> Option<Option<String>> {
    link.filter(|l| l.bus != "none")
        .map(|l| l.block.as_ref().map(|b| format!("/dev/{b}")))
}

/// Whether the run's poller will read a temperature from target `t`'s drive: its disk found
/// as the drive's part finds it, the drive asked as the poller first asks it. Ok, or why
/// not in words; for the checks a run makes before anything is written.
pub fn check(t: &TargetInfo, config: &PollerConfig) -> Result<(), String> {
    let link = t
        .link
        .clone()
        .or_else(|| crate::part::target_link(&t.scheme, &t.path));
    match polled_disk(link.as_ref()) {
        None => Err(not_polled(t.device.as_deref())),
        Some(None) => Err(crate::smart::poll::NO_BLOCK_DEVICE.into()),
        Some(Some(disk)) => detect(config, &disk)
            .map(|_| ())
            .map_err(|why| note(why_not(&disk, why))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_on_no_block_device_is_refused_in_words() {
        let sim = TargetInfo::simulated("t0", "write", "x5-thermal");
        let why = check(&sim, &PollerConfig::default()).unwrap_err();
        assert_eq!(why, "target is not on a block device (unknown); no SMART");
        // A directory on tmpfs: its link is "none", whatever its mount source says.
        let tmpfs = TargetInfo {
            scheme: "dir".into(),
            path: "/dev/shm".into(),
            device: Some("tmpfs".into()),
            ..sim
        };
        if cfg!(target_os = "linux") && std::path::Path::new("/dev/shm").is_dir() {
            let why = check(&tmpfs, &PollerConfig::default()).unwrap_err();
            assert_eq!(why, "target is not on a block device (tmpfs); no SMART");
        }
    }

    #[test]
    fn a_virtual_disk_without_smart_is_said_to_be_one() {
        let why = why_not(
            "/dev/vda",
            "Unable to detect device type; no -d bridge type answered".into(),
        );
        assert_eq!(why.1, Some("a virtio virtual disk"));
        assert_eq!(
            note(why),
            "a virtio virtual disk, which has no SMART: /dev/vda: Unable to detect device type; no -d bridge type answered"
        );
        let why = why_not("/dev/sdb", "/dev/sdb: Unknown USB bridge".into());
        assert_eq!(why.1, None);
        assert_eq!(note(why), "/dev/sdb: Unknown USB bridge");
    }
}
